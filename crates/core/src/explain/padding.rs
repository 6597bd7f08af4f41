//! Padding advice for a walk whose repeated pass has conflict misses: the leading dimension of
//! the storage's rows (the quantity a user sets when allocating) that spreads the walk over
//! enough sets, found by re-running the expression's steps on padded rows and counting the
//! walk's lines per set with the same model, then simulating the padded walk.
//!
//! The set pattern of a walk repeats when the leading dimension grows by
//! `line·sets / gcd(line·sets, itemsize)` elements (every row then moves by whole ways), so
//! searching one such period tries every pattern padding can give. Row pitches that keep rows
//! on line boundaries are tried first when the current one does.
//!
//! When no leading dimension helps (a step that moves many rows at once keeps its stride a
//! multiple of that many rows), or the rows do not reach the walk at all, the advice says so
//! and what a contiguous copy of the view would do instead.

use serde::Serialize;

use crate::cache::geometry::CacheLevel;
use crate::cache::model::gcd;
use crate::explain::cache::{LineGeometry, line_counts};
use crate::explain::walks::{MAX_PASS_ACCESSES, PassMisses, WalkReport, dim_walk, simulate_passes};
use crate::layout::Layout;
use crate::layout::expr::parse::Expr;
use crate::layout::expr::replay::{ReplayStop, RowsStep, padded_rows, replay_from, rows_step};
use crate::layout::expr::{MAX_LAYOUT_ONLY_ELEMENTS, StepResult, parse_bounded};

/// Lines the padding search may count in all (candidates × the walks' lengths): about a
/// tenth of a second.
const SEARCH_WORK: u64 = 1 << 24;

/// The expression a view came from: its text and evaluated steps.
#[derive(Debug, Clone, Copy)]
pub struct ViewChain<'a> {
    pub text: &'a str,
    pub steps: &'a [StepResult],
}

/// One walk under a changed layout: its model counts and simulated second pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PaddedWalk {
    /// Index of the walk in the level's list (0 is the view's own order).
    pub walk: usize,
    pub dim: Option<usize>,
    /// Storage rows one step of the walk moves (its stride is this many leading dimensions
    /// plus a fixed part).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows_per_step: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stride_bytes: Option<i64>,
    pub lines: u64,
    pub sets_touched: u64,
    pub max_lines_per_set: u64,
    pub second_pass: Option<PassMisses>,
    /// The walk's pass-2 misses as the view is now.
    pub misses_before: Option<u64>,
}

/// What padding the storage's rows would do for the walks with conflict misses.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PaddingAdvice {
    /// Rows `padded_ld` elements apart keep every target walk within the ways.
    Pad {
        rows_step: String,
        ld: u64,
        padded_ld: u64,
        /// The target walks, then the view's own order when its second pass had conflicts.
        walks: Vec<PaddedWalk>,
    },
    /// No step lays the storage out in rows: there is no leading dimension to pad.
    NoRows { alternative: Vec<PaddedWalk> },
    /// The rows' pitch does not reach the walk (why in words).
    Unreachable {
        rows_step: String,
        ld: u64,
        reason: String,
        alternative: Vec<PaddedWalk>,
    },
    /// No leading dimension tried keeps the walks within the ways.
    CannotHelp {
        rows_step: String,
        ld: u64,
        /// Leading dimensions tried: `ld + 1 ..= tried_to` (in the order the search takes).
        tried_to: u64,
        /// The range is a whole period of the set pattern: no leading dimension helps.
        exhaustive: bool,
        /// With one target walk: the most sets any leading dimension tried spreads it over.
        most_sets: Option<u64>,
        best_ld: u64,
        best: Vec<PaddedWalk>,
        /// The same walks over a contiguous copy of the view.
        alternative: Vec<PaddedWalk>,
    },
}

/// The walks padding should fix: those whose simulated second pass has conflict misses and
/// that move along one dimension. Their indices in `walks`.
pub fn targets(walks: &[WalkReport]) -> Vec<usize> {
    walks
        .iter()
        .enumerate()
        .filter(|(_, w)| w.dim.is_some() && w.second_pass.is_some_and(|p| p.conflict > 0))
        .map(|(k, _)| k)
        .collect()
}

/// Advice for the target walks of `layout` (from `chain`) on `level`, or `None` when no walk
/// needs it.
pub fn advise(
    chain: &ViewChain,
    layout: &Layout,
    itemsize: u64,
    level: &CacheLevel,
    walks: &[WalkReport],
) -> Option<PaddingAdvice> {
    let targets = targets(walks);
    if targets.is_empty() {
        return None;
    }
    let ctx = Search {
        itemsize,
        level,
        geometry: LineGeometry::of(level, itemsize),
        ways: u64::from(level.ways),
        walks,
        targets: &targets,
    };
    let copy = || ctx.contiguous_copy(layout);
    let Some(rows) = rows_step(chain.steps) else {
        return Some(PaddingAdvice::NoRows {
            alternative: copy(),
        });
    };
    let expr = parse_bounded(chain.text, MAX_LAYOUT_ONLY_ELEMENTS).ok()?;
    let padded = PaddedChain {
        expr: &expr,
        rows: &rows,
    };
    let unreachable = |reason: String| PaddingAdvice::Unreachable {
        rows_step: rows.text.clone(),
        ld: rows.ld as u64,
        reason,
        alternative: copy(),
    };
    let first = match padded.layout(rows.ld + 1) {
        Ok(l) => l,
        Err(stop) => return Some(unreachable(stop_reason(&stop))),
    };
    if ctx
        .targets
        .iter()
        .all(|&t| rows_per_step(layout, &first, walks[t].dim, 1) == Some(0))
    {
        return Some(unreachable(format!(
            "no step after `{}` carries the rows' pitch into the walk's stride",
            rows.text
        )));
    }
    Some(ctx.search(layout, &padded, copy))
}

/// The expression's steps after the rows step, run on padded rows.
struct PaddedChain<'a> {
    expr: &'a Expr,
    rows: &'a RowsStep,
}

impl PaddedChain<'_> {
    fn layout(&self, ld: usize) -> Result<Layout, ReplayStop> {
        let base = padded_rows(self.rows, ld).map_err(ReplayStop::Failed)?;
        replay_from(self.expr, self.rows.step, base)
    }
}

fn stop_reason(stop: &ReplayStop) -> String {
    match stop {
        ReplayStop::Failed(err) => format!("on padded rows {err}"),
        ReplayStop::Copied { step } => {
            format!("`{step}` would copy padded rows into a fresh storage")
        }
    }
}

/// Most lines in one set and the sets touched by a one-dimensional walk, from its lines
/// sorted by set: the search's inner loop, independent of the set count (a 32 768-set L3
/// would make a per-set table cost more than the walk).
fn spread(walk: &Layout, g: &LineGeometry) -> (u64, u64) {
    let mut lines: Vec<u64> = walk
        .offsets()
        .map(|k| k as u64 * g.itemsize / g.line)
        .collect();
    // A one-dimensional walk moves one way: equal lines are neighbours.
    lines.dedup();
    let mut sets: Vec<u64> = lines.iter().map(|l| l % g.sets).collect();
    sets.sort_unstable();
    let (mut most, mut touched, mut run) = (0, 0, 0);
    for (k, set) in sets.iter().enumerate() {
        run = if k > 0 && sets[k - 1] == *set {
            run + 1
        } else {
            1
        };
        touched += u64::from(run == 1);
        most = most.max(run);
    }
    (most, touched)
}

/// `(stride' − stride) / (ld' − ld)` along `dim`: how many rows one step moves.
fn rows_per_step(before: &Layout, after: &Layout, dim: Option<usize>, grown: i64) -> Option<i64> {
    let d = dim?;
    let delta = after.strides().get(d)? - before.strides().get(d)?;
    Some(delta as i64 / grown)
}

/// What the search needs at hand.
struct Search<'a> {
    itemsize: u64,
    level: &'a CacheLevel,
    geometry: LineGeometry,
    ways: u64,
    walks: &'a [WalkReport],
    targets: &'a [usize],
}

impl Search<'_> {
    /// The worst target's most lines in one set under `layout` and the sets that walk
    /// touches.
    fn worst(&self, layout: &Layout) -> Option<(u64, u64)> {
        self.targets.iter().try_fold((0, 0), |worst, &t| {
            let walk = dim_walk(layout, self.walks[t].dim?);
            Some(worst.max(spread(&walk, &self.geometry)))
        })
    }

    /// The candidate leading dimensions in search order, and whether they cover a period.
    fn candidates(&self, ld: u64, cost: u64) -> (Vec<u64>, bool) {
        let g = self.geometry;
        let span = g.line * g.sets;
        let period = span / gcd(span, g.itemsize);
        let step_aligned = g.line / gcd(g.line, g.itemsize);
        let most = (SEARCH_WORK / cost.max(1)).max(1);
        let exhaustive = period <= most;
        let count = period.min(most);
        let aligned_now = (ld * g.itemsize).is_multiple_of(g.line);
        let mut order: Vec<u64> = Vec::with_capacity(count as usize);
        if aligned_now {
            order.extend(
                (1..=count)
                    .filter(|j| j % step_aligned == 0)
                    .map(|j| ld + j),
            );
        }
        order.extend(
            (1..=count)
                .filter(|j| !aligned_now || j % step_aligned != 0)
                .map(|j| ld + j),
        );
        (order, exhaustive)
    }

    fn search(
        &self,
        layout: &Layout,
        padded: &PaddedChain,
        copy: impl Fn() -> Vec<PaddedWalk>,
    ) -> PaddingAdvice {
        let ld = padded.rows.ld as u64;
        let cost: u64 = self
            .targets
            .iter()
            .map(|&t| layout.shape()[self.walks[t].dim.unwrap_or(0)] as u64)
            .sum();
        let (order, exhaustive) = self.candidates(ld, cost);
        let mut best: Option<(u64, u64, Layout)> = None;
        let mut most_sets = 0;
        for &candidate in &order {
            let Ok(p) = padded.layout(candidate as usize) else {
                continue;
            };
            let Some((worst, sets)) = self.worst(&p) else {
                continue;
            };
            most_sets = most_sets.max(sets);
            if worst <= self.ways {
                return PaddingAdvice::Pad {
                    rows_step: padded.rows.text.clone(),
                    ld,
                    padded_ld: candidate,
                    walks: self.padded_walks(layout, &p, candidate as i64 - ld as i64, true),
                };
            }
            if best.as_ref().is_none_or(|b| worst < b.1) {
                best = Some((candidate, worst, p));
            }
        }
        let tried_to = order.iter().copied().max().unwrap_or(ld);
        match best {
            Some((best_ld, _, p)) => PaddingAdvice::CannotHelp {
                rows_step: padded.rows.text.clone(),
                ld,
                tried_to,
                exhaustive,
                most_sets: (self.targets.len() == 1).then_some(most_sets),
                best_ld,
                best: self.padded_walks(layout, &p, best_ld as i64 - ld as i64, false),
                alternative: copy(),
            },
            None => PaddingAdvice::Unreachable {
                rows_step: padded.rows.text.clone(),
                ld,
                reason: "no padded leading dimension gives a view the model can count".into(),
                alternative: copy(),
            },
        }
    }

    /// The target walks under `after` (and with `with_view`, the view's own order when its
    /// second pass had conflicts), modelled and simulated twice.
    fn padded_walks(
        &self,
        before: &Layout,
        after: &Layout,
        grown: i64,
        with_view: bool,
    ) -> Vec<PaddedWalk> {
        let mut out: Vec<PaddedWalk> = self
            .targets
            .iter()
            .filter_map(|&t| {
                let dim = self.walks[t].dim?;
                let mut walk = self.walk(t, &dim_walk(after, dim))?;
                walk.rows_per_step = rows_per_step(before, after, Some(dim), grown);
                walk.stride_bytes = Some(after.strides()[dim] as i64 * self.itemsize as i64);
                Some(walk)
            })
            .collect();
        let view = &self.walks[0];
        let view_conflicts = view.second_pass.is_some_and(|p| p.conflict > 0);
        if with_view && view_conflicts && !self.targets.contains(&0) {
            out.extend(self.walk(0, after));
        }
        out
    }

    /// Walk `index` as `layout`: counted and, when short enough, simulated twice.
    fn walk(&self, index: usize, layout: &Layout) -> Option<PaddedWalk> {
        let c = line_counts(
            layout.shape(),
            layout.strides(),
            layout.offset(),
            &self.geometry,
        )
        .ok()?;
        let second_pass = (layout.numel() as u64 <= MAX_PASS_ACCESSES)
            .then(|| simulate_passes(layout, self.itemsize, self.level, 2, MAX_PASS_ACCESSES))
            .and_then(|r| r.ok())
            .map(|passes| passes[1]);
        Some(PaddedWalk {
            walk: index,
            dim: self.walks[index].dim,
            rows_per_step: None,
            stride_bytes: None,
            lines: c.lines_touched,
            sets_touched: c.sets_touched,
            max_lines_per_set: c.max_lines_per_set,
            second_pass,
            misses_before: self.walks[index].second_pass.map(|p| p.misses),
        })
    }

    /// The target walks over a C-contiguous copy of the view.
    fn contiguous_copy(&self, layout: &Layout) -> Vec<PaddedWalk> {
        let Ok(copy) = Layout::contiguous(layout.shape()) else {
            return Vec::new();
        };
        self.targets
            .iter()
            .filter_map(|&t| {
                let dim = self.walks[t].dim?;
                let mut walk = self.walk(t, &dim_walk(&copy, dim))?;
                walk.stride_bytes = Some(copy.strides()[dim] as i64 * self.itemsize as i64);
                Some(walk)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::explain::cache::tests::{level, steps_of};
    use crate::explain::report::explain;

    /// The advice for `text` (f64 elements) on `level`.
    fn advice(text: &str, level: &CacheLevel) -> Option<PaddingAdvice> {
        let (steps, layout) = steps_of(text);
        let chain = ViewChain {
            text,
            steps: &steps,
        };
        explain(&layout, &chain, 8, level).unwrap().padding
    }

    /// Lines per set of `count` accesses `step` elements apart from element `start`.
    fn brute_sets(start: u64, step: u64, count: u64, line: u64, sets: u64) -> BTreeMap<u64, u64> {
        let mut lines: BTreeMap<u64, ()> = BTreeMap::new();
        for i in 0..count {
            lines.insert((start + i * step) * 8 / line, ());
        }
        let mut per_set = BTreeMap::new();
        for l in lines.keys() {
            *per_set.entry(l % sets).or_insert(0) += 1;
        }
        per_set
    }

    #[test]
    fn advice_names_the_leading_dimension_and_what_it_does() {
        let l1 = level(48 << 10, 12, 64);
        // (expression, padded ld, the target walk's index, its sets and most lines per set)
        let table: [(&str, u64, usize, u64, u64); 4] = [
            ("arange(65536).view(256,256)", 264, 1, 64, 4),
            ("arange(65536).view(256,256)[::16, :96]", 264, 1, 4, 4),
            ("arange(65536).view(256,256)[:, 0]", 264, 0, 64, 4),
            ("arange(65536).view(256,256).T", 264, 2, 64, 4),
        ];
        for (text, ld, walk, sets, most) in table {
            let Some(PaddingAdvice::Pad {
                ld: current,
                padded_ld,
                walks,
                ..
            }) = advice(text, &l1)
            else {
                panic!("{text}: no padding advice");
            };
            assert_eq!((current, padded_ld), (256, ld), "{text}");
            let w = &walks[0];
            assert_eq!(
                (w.walk, w.sets_touched, w.max_lines_per_set),
                (walk, sets, most),
                "{text}"
            );
            assert_eq!(w.second_pass.map(|p| p.misses), Some(0), "{text}");
        }
    }

    #[test]
    fn where_padding_cannot_help_the_advice_says_why_and_what_would() {
        let l1 = level(48 << 10, 12, 64);
        // A step of 64 rows is 8·ld lines: at most 8 of 64 sets for any ld, too few for 200.
        match advice("arange(3276800).view(12800,256)[::64, :96]", &l1) {
            Some(PaddingAdvice::CannotHelp {
                exhaustive,
                most_sets,
                best,
                alternative,
                ..
            }) => {
                assert!(exhaustive);
                assert_eq!(most_sets, Some(8));
                assert_eq!(best[0].rows_per_step, Some(64));
                assert_eq!(alternative[0].sets_touched, 16);
            }
            other => panic!("{other:?}"),
        }
        match advice("arange(65536)[::256]", &l1) {
            Some(PaddingAdvice::NoRows { alternative }) => {
                assert_eq!(alternative[0].second_pass.unwrap().misses, 0)
            }
            other => panic!("{other:?}"),
        }
        for text in [
            "arange(65536).view(256,256).as_strided((256,), (256,))",
            "arange(65536).view(256,256).view(65536)[::256]",
            "arange(65536).view(256,256).reshape(65536)[::256]",
        ] {
            assert!(
                matches!(advice(text, &l1), Some(PaddingAdvice::Unreachable { .. })),
                "{text}"
            );
        }
        // No conflict (a diagonal), or only capacity misses (1024 lines > 768): no advice.
        assert_eq!(advice("arange(65536).view(256,256).diagonal()", &l1), None);
        assert_eq!(advice("arange(1048576).view(1024,1024)[:, 3]", &l1), None);
    }

    proptest! {
        /// The search's spread of a walk is the model's count.
        #[test]
        fn spread_equals_the_line_counts(
            n in 1usize..300,
            stride in -700isize..700,
            itemsize in prop::sample::select(vec![1u64, 4, 8]),
            sets in 1u64..70,
        ) {
            let start = if stride < 0 { (n - 1) * stride.unsigned_abs() } else { 0 };
            let walk = Layout::new(vec![n], vec![stride], start, start + n * 700 + 1).unwrap();
            let g = LineGeometry { itemsize, line: 64, sets };
            let c = line_counts(walk.shape(), walk.strides(), walk.offset(), &g).unwrap();
            prop_assert_eq!(spread(&walk, &g), (c.max_lines_per_set, c.sets_touched));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// The sets and lines per set the advice claims for a padded column are those of the
        /// padded layout, counted element by element; a claimed fix holds in the simulator.
        #[test]
        fn claimed_sets_equal_a_brute_force_count(
            rows in 8usize..300,
            cols_lines in 1usize..40,
            step in 1usize..20,
            column in 0usize..8,
            sets_log in 2u32..7,
            ways in 1u64..5,
        ) {
            let cols = cols_lines * 8;
            let sets = 1u64 << sets_log;
            let cache = level(sets * ways * 64, ways, 64);
            let text = format!("arange({}).view({rows},{cols})[::{step}, {column}]", rows * cols);
            let count = rows.div_ceil(step) as u64;
            let (padded_ld, walks) = match advice(&text, &cache) {
                Some(PaddingAdvice::Pad { padded_ld, walks, .. }) => (padded_ld, walks),
                Some(PaddingAdvice::CannotHelp { exhaustive: true, .. }) => {
                    // Every leading dimension of one period leaves a set over the ways.
                    for ld in cols as u64 + 1..=cols as u64 + 8 * sets {
                        let per_set = brute_sets(column as u64, step as u64 * ld, count, 64, sets);
                        prop_assert!(*per_set.values().max().unwrap() > ways, "{} ld {}", text, ld);
                    }
                    return Ok(());
                }
                _ => return Ok(()),
            };
            let w = &walks[0];
            let per_set = brute_sets(column as u64, step as u64 * padded_ld, count, 64, sets);
            prop_assert_eq!(w.sets_touched, per_set.len() as u64, "{}", text);
            prop_assert_eq!(w.max_lines_per_set, *per_set.values().max().unwrap(), "{}", text);
            prop_assert!(w.max_lines_per_set <= ways);
            prop_assert_eq!(w.second_pass.map(|p| p.conflict), Some(0));
            prop_assert_eq!(w.rows_per_step, Some(step as i64));
        }
    }
}
