//! Figure 6: row vs column order vs matrix size, at 2^k and 2^k+1.
//! One figure of the report, built from records alone.

use std::collections::BTreeSet;

use super::{
    Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted, prov_sim,
    prov_timed,
};
use crate::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY, format_number,
};
use crate::claims::{Claim, SAME_SPEED, Verdict, slower_or_faster};
use crate::{data, padding};
use stridelab_core::results::{CacheLevel, PointRecord, ResultsDocument};

/// Figure 6: row vs column order vs matrix size, at 2^k and 2^k+1.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig06-row-vs-column",
    title: "Row vs column order",
    section: "traverse",
    build: row_vs_column,
};

/// One square-matrix traversal point.
pub(super) struct Traversal<'a> {
    pub(super) order: &'a str,
    /// Columns (the row length): 2^k or 2^k+1.
    pub(super) n: u64,
    pub(super) rows: u64,
    pub(super) padded_ld: Option<u64>,
    pub(super) record: &'a PointRecord,
}

pub(super) fn traversals(doc: &ResultsDocument) -> Vec<Traversal<'_>> {
    doc.records
        .iter()
        .filter(|r| r.kernel == "row-sum" || r.kernel == "col-sum")
        .filter_map(|r| {
            let rows = data::int(r, "rows")?;
            let cols = data::int(r, "cols")?;
            let ld = data::int(r, "ld").unwrap_or(cols);
            Some(Traversal {
                order: if r.kernel == "row-sum" { "row" } else { "col" },
                n: cols,
                rows,
                padded_ld: (ld != cols).then_some(ld),
                record: r,
            })
        })
        .collect()
}

fn row_vs_column(doc: &ResultsDocument) -> Outcome {
    let trav = traversals(doc);
    let plain: Vec<&Traversal> = trav.iter().filter(|t| t.padded_ld.is_none()).collect();
    if let Some(reason) = unplottable(doc, &plain) {
        return omitted(&FIGURE, reason);
    }
    let levels = data::data_levels(doc);
    let groups = row_groups(&plain);
    let (mut time, mut ratio, mut sim) = (Vec::new(), Vec::new(), Vec::new());
    let mut has_model = false;
    for (gi, group) in groups.iter().enumerate() {
        time.extend(time_series(group, gi));
        let (r, s) = ratio_and_sim_series(group, gi);
        ratio.extend(r);
        sim.extend(s);
        let model = levels.first().and_then(|l1| model_series(group, l1, gi));
        has_model |= model.is_some();
        sim.extend(model);
    }
    let x = || Axis::log2("columns n (log2; 2^k+1 drawn at 2^k)");
    let mut notes = Vec::new();
    let mut panels = vec![Panel::Lines(LinePanel {
        title: "time per element (timed)".into(),
        x: x(),
        y: Axis::log10("ns per element (log)"),
        series: time,
        vlines: Vec::new(),
        hlines: Vec::new(),
    })];
    if ratio.iter().any(|s| !s.points.is_empty()) {
        panels.push(Panel::Lines(LinePanel {
            title: "column / row time (timed, same run)".into(),
            x: x(),
            y: Axis::linear("slowdown of column order (×)"),
            series: ratio,
            vlines: Vec::new(),
            hlines: vec![RefLine {
                at: 1.0,
                label: "no difference".into(),
                label_y: None,
            }],
        }));
    } else {
        notes.push(
            "No column/row ratio panel: no matrix size was timed in both row and column order."
                .to_string(),
        );
    }
    if sim.iter().any(|s| !s.points.is_empty()) {
        panels.push(Panel::Lines(LinePanel {
            title: format!(
                "{} misses per element, column order",
                levels.first().map(|l| l.name.as_str()).unwrap_or("L1")
            ),
            x: x(),
            y: Axis::linear("misses per element"),
            series: sim,
            vlines: Vec::new(),
            hlines: Vec::new(),
        }));
    } else {
        notes.push(
            "No misses panel: no unpadded column-order walk has simulated misses.".to_string(),
        );
    }
    let model_note = if has_model {
        format!(
            "dashed: {}",
            data::model_provenance(plain.first().map(|t| t.record))
        )
    } else {
        format!("no model overlay: {}", data::no_model_reason(doc))
    };
    let mut look_for = look_for(&groups);
    if padding::groups(doc).is_empty() {
        // No leading-dimension sweep, so no padding figure: the textbook's padding advice
        // that the col-sum explanation above gives is held against nothing here, and says so.
        look_for.push(padding::textbook_claim(&[]));
    }
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Row vs column order, at n = 2^k and 2^k+1".into(),
            provenance: format!(
                "{}; right: {}; {model_note}",
                prov_timed(doc),
                prov_sim(doc)
            ),
            panels,
            panel_width: 470,
            panel_height: 380,
        },
        tables: vec![traversal_table(&trav, levels.first())],
        look_for,
        notes,
    }))
}

/// Why the unpadded walks cannot be drawn against the row length: none timed, or one row
/// length only (one x is no curve).
fn unplottable(doc: &ResultsDocument, plain: &[&Traversal]) -> Option<String> {
    let timed_sizes: BTreeSet<u64> = plain
        .iter()
        .filter(|t| data::ns_per_element(t.record).is_some())
        .map(|t| t.n)
        .collect();
    if timed_sizes.is_empty() {
        return Some("no timed unpadded `row-sum`/`col-sum` points in this results file".into());
    }
    if timed_sizes.len() < 2 {
        // One size is one x: a curve against the size cannot be drawn from it.
        let n = timed_sizes.first().copied().unwrap_or(0);
        let elsewhere = if padding::groups(doc).is_empty() {
            "its numbers are in results.csv"
        } else {
            "its leading dimensions are drawn in the padding figure"
        };
        return Some(format!(
            "it draws the walks against the row length, and this file times unpadded walks at \
             one row length only (n = {n} columns); {elsewhere}"
        ));
    }
    None
}

/// The unpadded walks of one row count, or all of them when no row length was timed at two
/// row counts: a curve joins points of one group only, so that a rows × cols grid does not
/// zigzag between unlike matrices.
struct RowGroup<'t, 'a> {
    /// The row count every walk of the group has (`None`: one group for the whole file).
    rows: Option<u64>,
    walks: Vec<&'t Traversal<'a>>,
}

impl RowGroup<'_, '_> {
    /// `, rows = 512` for a series name, empty for the one group of a file.
    fn suffix(&self) -> String {
        self.rows
            .map(|r| format!(", rows = {r}"))
            .unwrap_or_default()
    }

    /// `n = 1024`, or `512×1024` where the row count tells groups apart.
    fn size(&self, n: u64) -> String {
        match self.rows {
            Some(r) => format!("{r}×{n}"),
            None => format!("n = {n}"),
        }
    }
}

fn row_groups<'t, 'a>(plain: &[&'t Traversal<'a>]) -> Vec<RowGroup<'t, 'a>> {
    let several_rows = plain.iter().any(|t| {
        plain
            .iter()
            .any(|u| u.order == t.order && u.n == t.n && u.rows != t.rows)
    });
    if !several_rows {
        return vec![RowGroup {
            rows: None,
            walks: plain.to_vec(),
        }];
    }
    let rows: BTreeSet<u64> = plain.iter().map(|t| t.rows).collect();
    rows.into_iter()
        .map(|r| RowGroup {
            rows: Some(r),
            walks: plain.iter().copied().filter(|t| t.rows == r).collect(),
        })
        .collect()
}

/// The timed ns per element of the unpadded `order` walk over `n` columns.
fn timed_ns(plain: &[&Traversal], order: &str, n: u64) -> Option<f64> {
    plain
        .iter()
        .find(|t| t.order == order && t.n == n)
        .and_then(|t| data::ns_per_element(t.record))
        .map(|e| e.value)
}

/// Column over row time per matrix size, and the textbook's 2^k-against-2^k+1 expectation.
fn look_for(groups: &[RowGroup]) -> Vec<Claim> {
    let mut per_size = Vec::new();
    let mut pairs: Vec<(String, f64, String, f64)> = Vec::new();
    for g in groups {
        let ns = |order: &str, n: u64| timed_ns(&g.walks, order, n);
        let ratio = |n: u64| Some(ns("col", n)? / ns("row", n)?);
        let sizes: BTreeSet<u64> = g.walks.iter().map(|t| t.n).collect();
        per_size.extend(sizes.iter().filter_map(|&n| {
            let (c, r) = (ns("col", n)?, ns("row", n)?);
            Some(format!("{}: {}", g.size(n), slower_or_faster(c, r)))
        }));
        pairs.extend(
            sizes
                .iter()
                .filter(|n| n.is_power_of_two())
                .filter_map(|&n| Some((g.size(n), ratio(n)?, g.size(n + 1), ratio(n + 1)?))),
        );
    }
    let mut claims = Vec::new();
    if !per_size.is_empty() {
        claims.push(Claim::derived(
            "traverse.ratios",
            format!(
                "Column order against row order (timed, same run): {}.",
                per_size.join("; ")
            ),
        ));
    }
    let worse = pairs.iter().filter(|p| p.1 > p.3 * SAME_SPEED).count();
    let verdict = Verdict::of_counts(pairs.len(), worse);
    let observed = if pairs.is_empty() {
        "no size was timed at both 2^k and 2^k+1".to_string()
    } else {
        pairs
            .iter()
            .map(|(at, a, at_plus, b)| {
                format!(
                    "column/row {}× at {at} against {}× at {at_plus}",
                    format_number(*a),
                    format_number(*b),
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    claims.push(Claim::textbook(
        "traverse.power-of-two",
        "at n = 2^k the lines of one column share few cache sets, so column order suffers more \
         than at n = 2^k+1.",
        verdict,
        format!("{observed} (timed)"),
    ));
    claims
}

/// Plot n = 2^k and 2^k+1 at the same x (2^k) so the pair sits side by side; any other n at
/// its own x.
fn base_of(n: u64) -> u64 {
    if kind_of(n) == "2^k+1" { n - 1 } else { n }
}

/// Which curve a size belongs to: a power of two, one more than one, or neither (a grid of
/// the user's own sizes).
fn kind_of(n: u64) -> &'static str {
    if n.is_power_of_two() {
        "2^k"
    } else if n > 2 && (n - 1).is_power_of_two() {
        "2^k+1"
    } else {
        "other n"
    }
}

/// The colour of palette slot `i` for row group `gi`: each group its own colours.
fn group_colour(i: usize, gi: usize) -> crate::chart::Colour {
    PALETTE[(i + 4 * gi) % PALETTE.len()]
}

/// Timed ns per element per order and kind of n, for one row group.
fn time_series(group: &RowGroup, gi: usize) -> Vec<Series> {
    let plain = &group.walks;
    let colours = [
        ("row", "2^k", group_colour(0, gi)),
        ("col", "2^k", group_colour(1, gi)),
        ("row", "2^k+1", group_colour(5, gi)),
        ("col", "2^k+1", group_colour(3, gi)),
        ("row", "other n", group_colour(2, gi)),
        ("col", "other n", group_colour(8, gi)),
    ];
    let mut time = Vec::new();
    for (order, kind, colour) in colours {
        let mut pts: Vec<XY> = plain
            .iter()
            .filter(|t| t.order == order && kind_of(t.n) == kind)
            .filter_map(|t| {
                let e = data::ns_per_element(t.record)?;
                Some(XY::with_ci(base_of(t.n) as f64, e.value, e.ci()))
            })
            .collect();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        if !pts.is_empty() {
            time.push(Series {
                name: format!("{order} order, n = {kind}{}", group.suffix()),
                colour,
                kind: SeriesKind::Data,
                points: pts,
            });
        }
    }
    time
}

/// The column/row time ratio and the simulated L1 misses of column order, per kind of n.
fn ratio_and_sim_series(group: &RowGroup, gi: usize) -> (Vec<Series>, Vec<Series>) {
    let plain = &group.walks;
    let ns = |order: &str, n: u64| timed_ns(plain, order, n);
    let ns_values: BTreeSet<u64> = plain.iter().map(|t| t.n).collect();
    let mut ratio = Vec::new();
    let mut sim = Vec::new();
    for (kind, colour) in [
        ("2^k", group_colour(1, gi)),
        ("2^k+1", group_colour(3, gi)),
        ("other n", group_colour(8, gi)),
    ] {
        let mut r_pts = Vec::new();
        let mut s_pts = Vec::new();
        for &n in ns_values.iter().filter(|&&n| kind_of(n) == kind) {
            if let (Some(c), Some(r)) = (ns("col", n), ns("row", n)) {
                r_pts.push(XY::new(base_of(n) as f64, c / r));
            }
            if let Some(t) = plain.iter().find(|t| t.order == "col" && t.n == n)
                && let Some(m) = misses_per_access(t.record, 0)
            {
                s_pts.push(XY::new(base_of(n) as f64, m));
            }
        }
        if !r_pts.is_empty() {
            ratio.push(Series {
                name: format!("col / row, n = {kind}{}", group.suffix()),
                colour,
                kind: SeriesKind::Data,
                points: r_pts,
            });
        }
        if !s_pts.is_empty() {
            sim.push(Series {
                name: format!("col order, n = {kind}{} (sim)", group.suffix()),
                colour,
                kind: SeriesKind::Data,
                points: s_pts,
            });
        }
    }
    (ratio, sim)
}

/// Model: one column is `rows` loads n·8 B apart; its lines are reused by the next columns
/// (8 f64 share a line) only if they all stay in the sets they map to — else every element
/// misses (by conflict or by capacity: the curve does not say which). Read from the set
/// overflow onset recorded with each column-order point (`conflict_onset` in the schema);
/// `None` when no point has one.
fn model_series(group: &RowGroup, l1: &CacheLevel, gi: usize) -> Option<Series> {
    let pts: Vec<XY> = group
        .walks
        .iter()
        .filter(|t| t.order == "col" && t.n.is_power_of_two())
        .filter_map(|t| {
            let onset = data::model_level(t.record, 0)?.conflict_onset;
            let fits = onset.is_none_or(|k| k > t.rows);
            let per_line = 8.0 / f64::from(l1.line);
            Some(XY::new(t.n as f64, if fits { per_line } else { 1.0 }))
        })
        .collect();
    (!pts.is_empty()).then(|| Series {
        name: format!(
            "model, n = 2^k{}: 1/8 if a column stays in its {} sets",
            group.suffix(),
            l1.name
        ),
        colour: if gi == 0 {
            PALETTE[6]
        } else {
            group_colour(6, gi)
        },
        kind: SeriesKind::Model,
        points: pts,
    })
}

/// Every traversal point: its shape, the recorded sets one pass uses, timing and misses.
fn traversal_table(trav: &[Traversal], l1: Option<&CacheLevel>) -> Table {
    let mut sorted: Vec<&Traversal> = trav.iter().collect();
    sorted.sort_by_key(|t| (t.n, t.padded_ld, t.order));
    let rows = sorted
        .iter()
        .map(|t| {
            vec![
                t.record.kernel.clone(),
                format!("{}×{}", t.rows, t.n),
                t.padded_ld.unwrap_or(t.n).to_string(),
                data::model_level(t.record, 0)
                    .filter(|_| l1.is_some())
                    .map(|m| format!("{} of {}", m.sets_used, m.sets))
                    .unwrap_or_else(|| "—".into()),
                est_cell(data::ns_per_element(t.record)),
                cell(misses_per_access(t.record, 0)),
                cell(misses_per_access(t.record, 1)),
            ]
        })
        .collect();
    Table {
        caption: "Square f64 matrices summed in row or column order (ld = leading dimension)"
            .into(),
        headers: [
            "kernel",
            "matrix",
            "ld",
            "L1 sets one pass uses (model)",
            "ns/element (timed, CI)",
            "L1 misses/element (sim)",
            "L2 misses/element (sim)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> ResultsDocument {
        serde_json::from_str(include_str!(
            "../../../../tests/fixtures/results_small.json"
        ))
        .unwrap()
    }

    #[test]
    fn a_grid_over_rows_and_columns_draws_one_curve_per_row_count() {
        // col-sum over rows × cols in {64, 512}²: two row counts at each row length.
        let mut doc = small();
        let template = doc
            .records
            .iter()
            .find(|r| r.kernel == "col-sum")
            .unwrap()
            .clone();
        doc.records.clear();
        for (rows, cols) in [(64, 64), (64, 512), (512, 64), (512, 512)] {
            let mut r = template.clone();
            r.index = doc.records.len();
            for (key, v) in [("rows", rows), ("cols", cols), ("ld", cols)] {
                r.params
                    .insert(key.into(), stridelab_core::vocab::ParamValue::Int(v));
            }
            doc.records.push(r);
        }
        let Outcome::Drawn(built) = row_vs_column(&doc) else {
            panic!("omitted");
        };
        let Panel::Lines(time) = &built.figure.panels[0] else {
            panic!("a line panel");
        };
        let names: Vec<&str> = time.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "col order, n = 2^k, rows = 64",
                "col order, n = 2^k, rows = 512"
            ]
        );
        for s in &time.series {
            let xs: BTreeSet<u64> = s.points.iter().map(|p| p.x as u64).collect();
            assert_eq!(xs.len(), s.points.len(), "{}: two points at one x", s.name);
        }
    }

    #[test]
    fn panels_without_data_are_left_out_with_a_note() {
        // (kernels kept, panels drawn, the note expected)
        let cases: &[(&[&str], usize, Option<&str>)] = &[
            (&["row-sum", "col-sum"], 3, None),
            (&["col-sum"], 2, Some("No column/row ratio panel")),
        ];
        for &(kernels, panels, note) in cases {
            let mut doc = small();
            doc.records.retain(|r| kernels.contains(&r.kernel.as_str()));
            let Outcome::Drawn(built) = row_vs_column(&doc) else {
                panic!("{kernels:?}: omitted");
            };
            assert_eq!(built.figure.panels.len(), panels, "{kernels:?}");
            for panel in &built.figure.panels {
                let Panel::Lines(p) = panel else { continue };
                assert!(
                    p.series.iter().all(|s| !s.points.is_empty()),
                    "{kernels:?}: an empty series in `{}`",
                    p.title
                );
            }
            match note {
                Some(n) => assert!(
                    built.notes.iter().any(|x| x.contains(n)),
                    "{:?}",
                    built.notes
                ),
                None => assert!(built.notes.is_empty(), "{:?}", built.notes),
            }
            // No padding in this file: the textbook's advice is said to be untested here.
            let padding = built.look_for.iter().find(|c| c.id == "padding.textbook");
            assert_eq!(padding.and_then(|c| c.verdict()), Some(Verdict::Untested));
        }
    }
}
