//! Figure 16: a jagged array (a table of separately allocated rows) vs one flat block, summed
//! in row and column order, timed and simulated.
//! One figure of the report, built from records alone.

use super::fig15_channels::{l1_misses_per_element, misses_per_element};
use super::{Built, FigureDef, Outcome, Table, cell, est_cell, omitted, prov_timed};
use crate::chart::{Axis, BarPanel, BarSeries, Figure, Panel, colour_for};
use crate::claims::{Claim, slower_or_faster};
use crate::data::{self, Estimate};
use crate::figures::common::estimate_bars;
use stridelab_core::results::{PointRecord, ResultsDocument};

/// Figure 16: jagged vs flat.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig16-jagged",
    title: "Jagged vs flat rows",
    section: "tensor",
    build: jagged,
};

/// The storage variants, in series order: (layout, shuffle, name).
const VARIANTS: [(&str, u64, &str); 3] = [
    ("flat", 0, "flat block"),
    ("jagged", 0, "jagged, rows in order"),
    ("jagged", 1, "jagged, rows shuffled"),
];

const ORDERS: [&str; 2] = ["row", "col"];

fn jagged(doc: &ResultsDocument) -> Outcome {
    let recs: Vec<&PointRecord> = data::of_kernel(doc, "jagged")
        .filter(|r| r.threads == 1)
        .collect();
    let Some(first) = recs.first() else {
        return omitted(&FIGURE, "no `jagged` points in this results file");
    };
    let (rows, cols) = (data::int(first, "rows"), data::int(first, "cols"));
    let grid = grid_at(&recs, rows, cols);
    let categories: Vec<String> = vec!["row order".into(), "column order".into()];
    let timed_series: Vec<BarSeries> = VARIANTS
        .iter()
        .zip(&grid)
        .enumerate()
        .map(|(i, ((_, _, name), cells))| {
            let ns: Vec<Option<Estimate>> = cells
                .iter()
                .map(|r| r.and_then(data::ns_per_element))
                .collect();
            estimate_bars(name.to_string(), colour_for(name, i + 2), &ns)
        })
        .collect();
    let miss_series: Vec<BarSeries> = VARIANTS
        .iter()
        .zip(&grid)
        .enumerate()
        .map(|(i, ((_, _, name), cells))| BarSeries {
            name: name.to_string(),
            colour: colour_for(name, i + 2),
            values: cells
                .iter()
                .map(|r| r.and_then(l1_misses_per_element))
                .collect(),
            ci: vec![None; ORDERS.len()],
        })
        .collect();
    let (r, c) = (rows.unwrap_or(0), cols.unwrap_or(0));
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: format!("Jagged vs flat rows ({r} rows × {c} f64)"),
            provenance: format!("{}; simulated L1 misses per element", prov_timed(doc)),
            panels: vec![
                Panel::Bars(panel("ns per element (timed)", &categories, timed_series)),
                Panel::Bars(panel(
                    "L1 misses per element (simulated)",
                    &categories,
                    miss_series,
                )),
            ],
            panel_width: 560,
            panel_height: 240,
        },
        tables: vec![table(&recs)],
        look_for: look_for(&grid),
        notes: Vec::new(),
    }))
}

/// Each jagged variant against the flat block, per order: time and simulated misses.
fn look_for(grid: &Grid) -> Vec<Claim> {
    let mut claims = vec![Claim::guide(
        "jagged.layout",
        "A jagged array loads a row pointer per row in row order and per element in column \
         order; its rows are separate allocations, so where their lines land in the sets \
         depends on the allocator.",
    )];
    let Some(flat) = grid.first() else {
        return claims;
    };
    let mut parts = Vec::new();
    for ((_, _, name), cells) in VARIANTS.iter().zip(grid).skip(1) {
        for (o, order) in ORDERS.iter().enumerate() {
            let (Some(base), Some(own)) = (flat[o], cells[o]) else {
                continue;
            };
            let (Some(b), Some(t)) = (data::ns_per_element(base), data::ns_per_element(own)) else {
                continue;
            };
            let level = |r: &PointRecord, i| cell(misses_per_element(r, i));
            parts.push(format!(
                "{name}, {order} order: {} than flat ({} vs {} ns per element, timed; L1 misses \
                 {} vs {}, L2 {} vs {}, simulated)",
                slower_or_faster(t.value, b.value),
                cell(Some(t.value)),
                cell(Some(b.value)),
                level(own, 0),
                level(base, 0),
                level(own, 1),
                level(base, 1)
            ));
        }
    }
    if !parts.is_empty() {
        claims.push(Claim::derived(
            "jagged.compared",
            format!("{}.", parts.join("; ")),
        ));
    }
    claims
}

/// Per variant, the row- and column-order points of one shape (`None` where not measured).
type Grid<'d> = Vec<Vec<Option<&'d PointRecord>>>;

fn grid_at<'d>(recs: &[&'d PointRecord], rows: Option<u64>, cols: Option<u64>) -> Grid<'d> {
    let find = |(layout, shuffle, _): (&str, u64, &str), order: &str| {
        recs.iter().copied().find(|r| {
            data::int(r, "rows") == rows
                && data::int(r, "cols") == cols
                && data::text(r, "layout") == Some(layout)
                && data::int(r, "shuffle") == Some(shuffle)
                && data::text(r, "order") == Some(order)
        })
    };
    VARIANTS
        .iter()
        .map(|&v| ORDERS.iter().map(|o| find(v, o)).collect())
        .collect()
}

fn panel(title: &str, categories: &[String], series: Vec<BarSeries>) -> BarPanel {
    BarPanel {
        title: title.into(),
        categories: categories.to_vec(),
        value_axis: Axis::linear(title),
        series,
        stacked: false,
        vlines: Vec::new(),
    }
}

/// Every measured shape (the bars show the first), each variant at row and column order.
fn table(recs: &[&PointRecord]) -> Table {
    let mut shapes: Vec<(Option<u64>, Option<u64>)> = Vec::new();
    for r in recs {
        let shape = (data::int(r, "rows"), data::int(r, "cols"));
        if !shapes.contains(&shape) {
            shapes.push(shape);
        }
    }
    let mut lines = Vec::new();
    for (rows, cols) in shapes {
        let grid = grid_at(recs, rows, cols);
        let shape = format!("{}×{}", rows.unwrap_or(0), cols.unwrap_or(0));
        for ((_, _, name), cells) in VARIANTS.iter().zip(&grid) {
            for (order, r) in ORDERS.iter().zip(cells) {
                let Some(r) = r else { continue };
                lines.push(vec![
                    shape.clone(),
                    name.to_string(),
                    order.to_string(),
                    est_cell(data::ns_per_element(r)),
                    cell(l1_misses_per_element(r)),
                    cell(misses_per_element(r, 1)),
                ]);
            }
        }
    }
    Table {
        caption: "Every shape (rows × cols of f64): ns per element (timed, CI) and L1 and L2 \
                  misses per element (simulated)"
            .into(),
        headers: [
            "rows × cols",
            "storage",
            "order",
            "ns per element",
            "L1 misses per element",
            "L2 misses per element",
        ]
        .map(String::from)
        .to_vec(),
        rows: lines,
    }
}
