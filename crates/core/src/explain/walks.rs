//! The walks `stridelab layout` passes a verdict on, simulated: the view's own order (logical
//! C order) from a cold cache and then again, and a walk along each dimension done twice
//! (what a loop repeating that walk, or walking a neighbouring column through the same lines,
//! does). Each walk carries the set model's expectation, the simulated passes, the verdict
//! those counts support (data; `explain::words` words it) and any disagreement between model
//! and simulator.
//!
//! Why a second pass: conflict misses are misses on a line that was already brought in, so a
//! walk that touches each line once (a cold pass over a column) can only show compulsory
//! misses. Repeating it is what shows whether its sets kept the lines.
//!
//! Each level is simulated alone (LRU, with the compulsory/capacity/conflict split), with
//! element k at byte `2^32 + k·itemsize`: the model's addresses moved by a whole number of
//! ways, so both see the same sets up to a rotation.

use serde::Serialize;

use crate::cache::AccessSink;
use crate::cache::geometry::CacheLevel;
use crate::cache::sim::{Hierarchy, Policy, SimError};
use crate::explain::cache::{LineCounts, LineGeometry, line_counts};
use crate::layout::Layout;

/// Accesses one simulated pass makes at most: a fraction of a second per walk.
pub const MAX_PASS_ACCESSES: u64 = 1 << 20;

/// Most memory one walk's simulated cache state may take up front.
const SIM_MEMORY: u64 = 1 << 30;

/// The counts of one pass of a walk through one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PassMisses {
    pub accesses: u64,
    pub misses: u64,
    pub compulsory: u64,
    pub capacity: u64,
    pub conflict: u64,
}

/// Which walk a verdict is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WalkKind {
    /// Every element in logical C order (last index fastest), twice from a cold cache.
    ViewOrder,
    /// Index `dim` from 0 to its size with every other index 0, twice from a cold cache.
    RepeatedDim { dim: usize },
}

/// What the set model says a second pass of a walk does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Expected {
    /// Exact counts: the walk visits lines in address order, each in one stretch, so under
    /// LRU a set keeps all its lines when it has at most `ways` of them and none otherwise.
    Exactly {
        misses: u64,
        capacity: u64,
        conflict: u64,
    },
    /// Only a bound: the walk returns to lines out of order; a set of x > ways lines must
    /// fetch at least x − ways of them again.
    AtLeast { misses: u64 },
}

/// The set model of one walk on one level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WalkModel {
    pub lines: u64,
    pub sets_touched: u64,
    pub max_lines_per_set: u64,
    /// Sets holding more lines than the level has ways.
    pub overfull_sets: u64,
    pub lines_in_overfull_sets: u64,
    /// Addresses never go back: each line is visited in one stretch, in order.
    pub in_address_order: bool,
    pub second_pass: Expected,
}

impl WalkModel {
    /// The model from the walk's per-set line counts on a level of `ways` ways and
    /// `cache_lines` lines.
    pub fn new(counts: &LineCounts, ways: u64, cache_lines: u64, in_address_order: bool) -> Self {
        let overfull: Vec<u64> = counts
            .set_lines
            .iter()
            .copied()
            .filter(|&x| x > ways)
            .collect();
        let in_overfull: u64 = overfull.iter().sum();
        let second_pass = if in_address_order || overfull.is_empty() {
            // Conflict when a fully associative cache of the same size would have kept the
            // lines; once they outnumber it, it misses them all too (capacity).
            let fits = counts.lines_touched <= cache_lines;
            Expected::Exactly {
                misses: in_overfull,
                capacity: if fits { 0 } else { in_overfull },
                conflict: if fits { in_overfull } else { 0 },
            }
        } else {
            Expected::AtLeast {
                misses: overfull.iter().map(|x| x - ways).sum(),
            }
        };
        WalkModel {
            lines: counts.lines_touched,
            sets_touched: counts.sets_touched,
            max_lines_per_set: counts.max_lines_per_set,
            overfull_sets: overfull.len() as u64,
            lines_in_overfull_sets: in_overfull,
            in_address_order,
            second_pass,
        }
    }
}

/// What the simulated counts of one pass support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PassVerdict {
    /// Pass 1: every miss is a first touch; `reuse_hits` accesses found their line there.
    FirstTouchesOnly { lines: u64, reuse_hits: u64 },
    /// Pass 1: some lines were fetched again within the pass.
    Refetched {
        first_touches: u64,
        conflict: u64,
        capacity: u64,
    },
    /// A repeated pass hits on every access.
    AllHit { accesses: u64 },
    /// Every access of a repeated pass is a conflict miss.
    EveryAccessConflict { accesses: u64 },
    /// A repeated pass misses on some accesses.
    Misses {
        accesses: u64,
        misses: u64,
        conflict: u64,
        capacity: u64,
    },
}

impl PassVerdict {
    /// The verdict on pass `pass` (1 = from a cold cache).
    pub fn of(pass: u32, counts: &PassMisses) -> PassVerdict {
        let c = *counts;
        if pass == 1 {
            return if c.misses == c.compulsory {
                PassVerdict::FirstTouchesOnly {
                    lines: c.compulsory,
                    reuse_hits: c.accesses - c.misses,
                }
            } else {
                PassVerdict::Refetched {
                    first_touches: c.compulsory,
                    conflict: c.conflict,
                    capacity: c.capacity,
                }
            };
        }
        if c.misses == 0 {
            PassVerdict::AllHit {
                accesses: c.accesses,
            }
        } else if c.conflict == c.accesses {
            PassVerdict::EveryAccessConflict {
                accesses: c.accesses,
            }
        } else {
            PassVerdict::Misses {
                accesses: c.accesses,
                misses: c.misses,
                conflict: c.conflict,
                capacity: c.capacity,
            }
        }
    }
}

/// A walk, its model, its simulated passes and what they support.
#[derive(Debug, Clone, Serialize)]
pub struct WalkReport {
    pub walk: WalkKind,
    /// The dimension the walk moves along when it is one (a repeated walk, or a view with a
    /// single dimension that moves the address).
    pub dim: Option<usize>,
    /// Accesses one pass makes.
    pub accesses: u64,
    /// More than [`MAX_PASS_ACCESSES`]: pass 1 (of the view's order) is simulated for its
    /// first that many accesses only, pass 2 not at all.
    pub capped: bool,
    /// `None` when the walk's lines are too many separate runs to count.
    pub model: Option<WalkModel>,
    /// The cold pass (shown for the view's order only).
    pub first_pass: Option<PassMisses>,
    pub second_pass: Option<PassMisses>,
    /// Why the walk was not simulated, else absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulated_note: Option<String>,
    /// The verdict per simulated pass shown, in pass order.
    pub verdict: Vec<PassVerdict>,
    /// Where the simulator's counts contradict the set model's expectation, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disagreement: Option<String>,
    /// Of a repeated walk along one dimension: another dimension whose next index lies in the
    /// same lines (its stride is under a line), so a loop over it repeats this walk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub neighbour_in_same_lines: Option<usize>,
}

/// Simulates `passes` passes of `layout`'s C-order walk through `level` alone (LRU, 3C), each
/// of at most `limit` accesses, and returns each pass's counts.
pub fn simulate_passes(
    layout: &Layout,
    itemsize: u64,
    level: &CacheLevel,
    passes: u32,
    limit: u64,
) -> Result<Vec<PassMisses>, SimError> {
    let mut hierarchy =
        Hierarchy::with_state_budget(std::slice::from_ref(level), Policy::LRU, true, SIM_MEMORY)?;
    let base = crate::cache::buffer_base(0);
    let len = u32::try_from(itemsize).unwrap_or(u32::MAX);
    let take = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut out = Vec::with_capacity(passes as usize);
    for _ in 0..passes {
        hierarchy.reset_stats();
        for offset in layout.offsets().take(take) {
            hierarchy.load(base + offset as u64 * itemsize, len);
        }
        let s = hierarchy.stats()[0];
        out.push(PassMisses {
            accesses: s.accesses(),
            misses: s.misses(),
            compulsory: s.compulsory,
            capacity: s.capacity,
            conflict: s.conflict,
        });
    }
    Ok(out)
}

/// Whether `layout`'s C-order walk never moves back to a lower address (or never forward):
/// all moving strides share a sign, and each covers everything the dimensions inside it span.
pub fn in_address_order(layout: &Layout) -> bool {
    let moving: Vec<(usize, isize)> = layout
        .shape()
        .iter()
        .zip(layout.strides())
        .filter(|&(&n, _)| n > 1)
        .map(|(&n, &s)| (n, s))
        .collect();
    let signs_agree = moving.iter().all(|&(_, s)| s >= 0) || moving.iter().all(|&(_, s)| s <= 0);
    if !signs_agree {
        return false;
    }
    // Condition 6 of the layout validator bounds every span by the storage: no overflow.
    let mut inner_span = 0usize;
    for &(n, s) in moving.iter().rev() {
        if s.unsigned_abs() < inner_span {
            return false;
        }
        inner_span += (n - 1) * s.unsigned_abs();
    }
    true
}

/// The walk along `dim` of `layout` with every other index 0, as a one-dimensional layout.
pub fn dim_walk(layout: &Layout, dim: usize) -> Layout {
    Layout::new(
        vec![layout.shape()[dim]],
        vec![layout.strides()[dim]],
        layout.offset(),
        layout.storage_len(),
    )
    // Condition 6 of the validator: a walk along one dimension from the first element is a
    // subset of the view's elements.
    .expect("a dimension's walk lies inside its view")
}

/// The dimensions a repeated walk is reported for: those that move the address, when more
/// than one does (with one, the view's own walk is that dimension's). An empty view has none:
/// its other dimensions' walks would read elements it does not have.
pub fn walk_dims(layout: &Layout) -> Vec<usize> {
    if layout.numel() == 0 {
        return Vec::new();
    }
    (0..layout.ndim())
        .filter(|&k| layout.shape()[k] > 1 && layout.strides()[k] != 0)
        .collect()
}

/// The walks of `layout` on `level`: the view's own order first, then a repeated walk along
/// each dimension that moves the address (when more than one does).
pub fn walks(
    layout: &Layout,
    itemsize: u64,
    level: &CacheLevel,
    view_counts: Option<&LineCounts>,
) -> Vec<WalkReport> {
    let geometry = LineGeometry::of(level, itemsize);
    let ways = u64::from(level.ways);
    let cache_lines = geometry.sets * ways;
    let moving = walk_dims(layout);
    let mut out = vec![walk_report(
        WalkKind::ViewOrder,
        layout,
        itemsize,
        level,
        view_counts.map(|c| WalkModel::new(c, ways, cache_lines, in_address_order(layout))),
    )];
    if let [only] = moving[..] {
        out[0].dim = Some(only);
    }
    if moving.len() > 1 {
        for &dim in &moving {
            let walk = dim_walk(layout, dim);
            let counts = line_counts(walk.shape(), walk.strides(), walk.offset(), &geometry).ok();
            let model = counts.map(|c| WalkModel::new(&c, ways, cache_lines, true));
            let mut report =
                walk_report(WalkKind::RepeatedDim { dim }, &walk, itemsize, level, model);
            report.neighbour_in_same_lines = neighbour_in_same_lines(layout, dim, &geometry);
            out.push(report);
        }
    }
    out
}

/// A dimension other than `dim` that moves the address by less than a line per index, if
/// any: the next index along it reads the same lines as the walk along `dim`.
fn neighbour_in_same_lines(layout: &Layout, dim: usize, g: &LineGeometry) -> Option<usize> {
    (0..layout.ndim()).find(|&j| {
        let bytes = u128::from(layout.strides()[j].unsigned_abs() as u64) * u128::from(g.itemsize);
        j != dim && layout.shape()[j] > 1 && bytes != 0 && bytes < u128::from(g.line)
    })
}

/// One walk simulated twice (the cold pass kept for the view's own order), its verdicts and
/// the check against the model.
fn walk_report(
    kind: WalkKind,
    walk: &Layout,
    itemsize: u64,
    level: &CacheLevel,
    model: Option<WalkModel>,
) -> WalkReport {
    let accesses = walk.numel() as u64;
    let capped = accesses > MAX_PASS_ACCESSES;
    let mut report = WalkReport {
        walk: kind,
        dim: match kind {
            WalkKind::RepeatedDim { dim } => Some(dim),
            WalkKind::ViewOrder => None,
        },
        accesses,
        capped,
        model,
        first_pass: None,
        second_pass: None,
        simulated_note: None,
        verdict: Vec::new(),
        disagreement: None,
        neighbour_in_same_lines: None,
    };
    let show_first = kind == WalkKind::ViewOrder;
    if capped && !show_first {
        return report;
    }
    let passes = if capped { 1 } else { 2 };
    let counts = match simulate_passes(walk, itemsize, level, passes, MAX_PASS_ACCESSES) {
        Ok(counts) => counts,
        Err(err) => {
            report.simulated_note = Some(format!("not simulated: {err}"));
            return report;
        }
    };
    if show_first {
        report.first_pass = Some(counts[0]);
        report.verdict.push(PassVerdict::of(1, &counts[0]));
    }
    if !capped {
        report.second_pass = Some(counts[1]);
        report.verdict.push(PassVerdict::of(2, &counts[1]));
    }
    let first = show_first.then_some(counts[0]).filter(|_| !capped);
    report.disagreement = report
        .model
        .as_ref()
        .and_then(|m| disagreement(m, first.as_ref(), report.second_pass.as_ref()));
    report
}

/// Where the simulated passes contradict the model, in words; `None` when they agree.
pub fn disagreement(
    model: &WalkModel,
    first: Option<&PassMisses>,
    second: Option<&PassMisses>,
) -> Option<String> {
    let mut found = Vec::new();
    if let Some(first) = first {
        if first.compulsory != model.lines {
            found.push(format!(
                "the model counts {} lines, the simulator {} first touches",
                model.lines, first.compulsory
            ));
        }
        if model.in_address_order && first.misses != first.compulsory {
            found.push(format!(
                "the walk is in address order, so the model expects no line fetched twice in \
                 pass 1; the simulator counts {} misses for {} first touches",
                first.misses, first.compulsory
            ));
        }
    }
    if let Some(second) = second {
        match model.second_pass {
            Expected::Exactly {
                misses,
                capacity,
                conflict,
            } if (misses, capacity, conflict)
                != (second.misses, second.capacity, second.conflict) =>
            {
                found.push(format!(
                    "the model expects pass 2 to miss {misses} times ({conflict} conflict, \
                     {capacity} capacity), the simulator counts {} ({} conflict, {} capacity)",
                    second.misses, second.conflict, second.capacity
                ));
            }
            Expected::AtLeast { misses } if second.misses < misses.max(1) => {
                found.push(format!(
                    "the model expects pass 2 to miss at least {} times, the simulator counts {}",
                    misses.max(1),
                    second.misses
                ));
            }
            _ => {}
        }
    }
    (!found.is_empty()).then(|| found.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::cache::tests::level;

    fn pass(accesses: u64, compulsory: u64, capacity: u64, conflict: u64) -> PassMisses {
        PassMisses {
            accesses,
            misses: compulsory + capacity + conflict,
            compulsory,
            capacity,
            conflict,
        }
    }

    #[test]
    fn verdict_rules() {
        use PassVerdict::*;
        // (pass, counts, expected verdict)
        let table = [
            (
                1,
                pass(65536, 8192, 0, 0),
                FirstTouchesOnly {
                    lines: 8192,
                    reuse_hits: 57344,
                },
            ),
            (
                1,
                pass(1024, 128, 0, 896),
                Refetched {
                    first_touches: 128,
                    conflict: 896,
                    capacity: 0,
                },
            ),
            (2, pass(256, 0, 0, 0), AllHit { accesses: 256 }),
            (
                2,
                pass(256, 0, 0, 256),
                EveryAccessConflict { accesses: 256 },
            ),
            (
                2,
                pass(1536, 0, 0, 192),
                Misses {
                    accesses: 1536,
                    misses: 192,
                    conflict: 192,
                    capacity: 0,
                },
            ),
            (
                2,
                pass(1024, 0, 1024, 0),
                Misses {
                    accesses: 1024,
                    misses: 1024,
                    conflict: 0,
                    capacity: 1024,
                },
            ),
        ];
        for (n, counts, expected) in table {
            assert_eq!(PassVerdict::of(n, &counts), expected, "{counts:?}");
        }
    }

    #[test]
    fn the_model_expects_exact_counts_for_walks_in_address_order() {
        // (per-set lines, ways, cache lines, in order, expected second pass)
        let table: [(&[u64], u64, u64, bool, Expected); 5] = [
            (
                &[4, 4],
                8,
                16,
                true,
                Expected::Exactly {
                    misses: 0,
                    capacity: 0,
                    conflict: 0,
                },
            ),
            (
                &[128, 128, 0],
                12,
                36,
                true,
                Expected::Exactly {
                    misses: 256,
                    capacity: 256,
                    conflict: 0,
                },
            ),
            (
                &[16, 3, 0, 0],
                12,
                48,
                true,
                Expected::Exactly {
                    misses: 16,
                    capacity: 0,
                    conflict: 16,
                },
            ),
            (
                &[16, 3, 0, 0],
                12,
                48,
                false,
                Expected::AtLeast { misses: 4 },
            ),
            (
                &[3, 3],
                12,
                24,
                false,
                Expected::Exactly {
                    misses: 0,
                    capacity: 0,
                    conflict: 0,
                },
            ),
        ];
        for (set_lines, ways, cache_lines, ordered, expected) in table {
            let counts = LineCounts {
                sets_touched: set_lines.iter().filter(|&&x| x > 0).count() as u64,
                lines_touched: set_lines.iter().sum(),
                max_lines_per_set: *set_lines.iter().max().unwrap(),
                set_lines: set_lines.to_vec(),
            };
            let model = WalkModel::new(&counts, ways, cache_lines, ordered);
            assert_eq!(model.second_pass, expected, "{set_lines:?}");
        }
    }

    #[test]
    fn address_order() {
        // (shape, strides, in address order)
        let table: [(&[usize], &[isize], bool); 7] = [
            (&[256, 256], &[256, 1], true),
            (&[16, 96], &[4096, 1], true),
            (&[256, 256], &[1, 256], false),
            (&[256], &[257], true),
            (&[4, 4], &[-4, -1], true),
            (&[4, 4], &[4, -1], false),
            (&[3, 4], &[0, 1], false),
        ];
        for (shape, strides, expected) in table {
            let low: isize = shape
                .iter()
                .zip(strides)
                .map(|(&n, &s)| (n as isize - 1) * s.min(0))
                .sum();
            let layout = Layout::new(
                shape.to_vec(),
                strides.to_vec(),
                low.unsigned_abs(),
                1 << 17,
            )
            .unwrap();
            assert_eq!(in_address_order(&layout), expected, "{shape:?} {strides:?}");
        }
    }

    #[test]
    fn a_contiguous_matrix_misses_once_per_line_and_its_column_conflicts_on_repeat() {
        let matrix = Layout::new(vec![256, 256], vec![256, 1], 0, 65536).unwrap();
        let l1 = level(48 << 10, 12, 64);
        let geometry = LineGeometry::of(&l1, 8);
        let counts = line_counts(matrix.shape(), matrix.strides(), 0, &geometry).unwrap();
        let reports = walks(&matrix, 8, &l1, Some(&counts));
        assert_eq!(reports.len(), 3);
        let view = &reports[0];
        assert_eq!(view.first_pass, Some(pass(65536, 8192, 0, 0)));
        assert_eq!(view.second_pass, Some(pass(65536, 0, 8192, 0)));
        assert_eq!(view.disagreement, None);
        let column = &reports[1];
        assert_eq!(column.walk, WalkKind::RepeatedDim { dim: 0 });
        assert_eq!(column.second_pass, Some(pass(256, 0, 0, 256)));
        assert_eq!(
            column.verdict,
            vec![PassVerdict::EveryAccessConflict { accesses: 256 }]
        );
        assert_eq!(column.disagreement, None);
        let row = &reports[2];
        assert_eq!(row.verdict, vec![PassVerdict::AllHit { accesses: 256 }]);
    }

    #[test]
    fn lines_smaller_than_an_element_are_a_disagreement_said_out_loud() {
        // 4 B lines under 8 B elements: each element spans two lines, the model counts the
        // first, so it sees 8 lines where the simulator fetches 16 into 8 one-way sets.
        let column = Layout::new(vec![8], vec![1], 0, 8).unwrap();
        let tiny = level(32, 1, 4);
        let geometry = LineGeometry::of(&tiny, 8);
        let counts = line_counts(&[8], &[1], 0, &geometry).unwrap();
        let report = &walks(&column, 8, &tiny, Some(&counts))[0];
        let text = report.disagreement.as_deref().unwrap();
        assert!(
            text.contains("the model expects pass 2 to miss 8 times (8 conflict, 0 capacity)"),
            "{text}"
        );
    }
}
