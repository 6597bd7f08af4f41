//! Figure 6: row vs column order vs matrix size, at 2^k and 2^k+1.
//! One figure of the report, built from records alone.

use std::collections::BTreeSet;

use super::{
    Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted, prov_sim,
    prov_timed,
};
use crate::report::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY, format_number,
};
use crate::report::claims::{Claim, SAME_SPEED, Verdict, slower_or_faster};
use crate::report::data;
use crate::results::{CacheLevel, PointRecord, ResultsDocument};

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
    if !plain
        .iter()
        .any(|t| data::ns_per_element(t.record).is_some())
    {
        return omitted(
            &FIGURE,
            "no timed `row-sum`/`col-sum` points in this results file",
        );
    }
    let levels = data::data_levels(doc);
    let (ratio, mut sim) = ratio_and_sim_series(&plain);
    let model = levels.first().and_then(|l1| model_series(&plain, l1));
    let has_model = model.is_some();
    sim.extend(model);
    let x = || Axis::log2("columns n (log2; 2^k+1 drawn at 2^k)");
    let panels = vec![
        Panel::Lines(LinePanel {
            title: "time per element (timed)".into(),
            x: x(),
            y: Axis::log10("ns per element (log)"),
            series: time_series(&plain),
            vlines: Vec::new(),
            hlines: Vec::new(),
        }),
        Panel::Lines(LinePanel {
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
        }),
        Panel::Lines(LinePanel {
            title: format!(
                "{} misses per element, column order",
                levels.first().map(|l| l.name.as_str()).unwrap_or("L1")
            ),
            x: x(),
            y: Axis::linear("misses per element"),
            series: sim,
            vlines: Vec::new(),
            hlines: Vec::new(),
        }),
    ];
    let model_note = if has_model {
        format!(
            "dashed: {}",
            data::model_provenance(plain.first().map(|t| t.record))
        )
    } else {
        format!("no model overlay: {}", data::no_model_reason(doc))
    };
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
        look_for: look_for(&plain),
        notes: Vec::new(),
    }))
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
fn look_for(plain: &[&Traversal]) -> Vec<Claim> {
    let ns = |order: &str, n: u64| timed_ns(plain, order, n);
    let ratio = |n: u64| Some(ns("col", n)? / ns("row", n)?);
    let sizes: BTreeSet<u64> = plain.iter().map(|t| t.n).collect();
    let per_size: Vec<String> = sizes
        .iter()
        .filter_map(|&n| {
            let (c, r) = (ns("col", n)?, ns("row", n)?);
            Some(format!("n = {n}: {}", slower_or_faster(c, r)))
        })
        .collect();
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
    let pairs: Vec<(u64, f64, f64)> = sizes
        .iter()
        .filter(|n| n.is_power_of_two())
        .filter_map(|&n| Some((n, ratio(n)?, ratio(n + 1)?)))
        .collect();
    let worse = pairs.iter().filter(|p| p.1 > p.2 * SAME_SPEED).count();
    let verdict = Verdict::of_counts(pairs.len(), worse);
    let observed = if pairs.is_empty() {
        "no size was timed at both 2^k and 2^k+1".to_string()
    } else {
        pairs
            .iter()
            .map(|(n, a, b)| {
                format!(
                    "column/row {}× at n = {n} against {}× at n = {}",
                    format_number(*a),
                    format_number(*b),
                    n + 1
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

/// Plot n = 2^k and 2^k+1 at the same x (2^k) so the pair sits side by side.
fn base_of(n: u64) -> u64 {
    if n.is_power_of_two() { n } else { n - 1 }
}

fn kind_of(n: u64) -> &'static str {
    if n.is_power_of_two() { "2^k" } else { "2^k+1" }
}

/// Timed ns per element per order and kind of n.
fn time_series(plain: &[&Traversal]) -> Vec<Series> {
    let colours = [
        ("row", "2^k", PALETTE[0]),
        ("col", "2^k", PALETTE[1]),
        ("row", "2^k+1", PALETTE[5]),
        ("col", "2^k+1", PALETTE[3]),
    ];
    let mut time = Vec::new();
    for (order, kind, colour) in colours {
        let mut pts: Vec<XY> = plain
            .iter()
            .filter(|t| {
                t.order == order
                    && kind_of(t.n) == kind
                    && (t.n.is_power_of_two() || (t.n - 1).is_power_of_two())
            })
            .filter_map(|t| {
                let e = data::ns_per_element(t.record)?;
                Some(XY::with_ci(base_of(t.n) as f64, e.value, e.ci()))
            })
            .collect();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        if !pts.is_empty() {
            time.push(Series {
                name: format!("{order} order, n = {kind}"),
                colour,
                kind: SeriesKind::Data,
                points: pts,
            });
        }
    }
    time
}

/// The column/row time ratio and the simulated L1 misses of column order, per kind of n.
fn ratio_and_sim_series(plain: &[&Traversal]) -> (Vec<Series>, Vec<Series>) {
    let ns = |order: &str, n: u64| timed_ns(plain, order, n);
    let ns_values: BTreeSet<u64> = plain.iter().map(|t| t.n).collect();
    let mut ratio = Vec::new();
    let mut sim = Vec::new();
    for (kind, colour) in [("2^k", PALETTE[1]), ("2^k+1", PALETTE[3])] {
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
        ratio.push(Series {
            name: format!("col / row, n = {kind}"),
            colour,
            kind: SeriesKind::Data,
            points: r_pts,
        });
        sim.push(Series {
            name: format!("col order, n = {kind} (sim)"),
            colour,
            kind: SeriesKind::Data,
            points: s_pts,
        });
    }
    (ratio, sim)
}

/// Model: one column is `rows` loads n·8 B apart; its lines are reused by the next columns
/// (8 f64 share a line) only if they all stay in the sets they map to — else every element
/// misses (by conflict or by capacity: the curve does not say which). Read from the set
/// overflow onset recorded with each column-order point (`conflict_onset` in the schema);
/// `None` when no point has one.
fn model_series(plain: &[&Traversal], l1: &CacheLevel) -> Option<Series> {
    let pts: Vec<XY> = plain
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
            "model, n = 2^k: 1/8 if a column stays in its {} sets",
            l1.name
        ),
        colour: PALETTE[6],
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
