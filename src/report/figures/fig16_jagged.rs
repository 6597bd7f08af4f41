//! Figure 16: a jagged array (a table of separately allocated rows) vs one flat block, summed
//! in row and column order, timed and simulated.
//! One figure of the report, built from records alone.

use super::fig15_channels::{l1_misses_per_element, misses_per_element};
use super::{Built, FigureDef, Outcome, Table, cell, est_cell, omitted, prov_timed};
use crate::report::chart::{Axis, BarPanel, BarSeries, Figure, Panel, colour_for};
use crate::report::data::{self, Estimate};
use crate::report::figures::common::estimate_bars;
use crate::results::{PointRecord, ResultsDocument};

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
    // Every cell of the figure at the first point's shape.
    let find = |(layout, shuffle, _): (&str, u64, &str), order: &str| {
        recs.iter().copied().find(|r| {
            data::int(r, "rows") == rows
                && data::int(r, "cols") == cols
                && data::text(r, "layout") == Some(layout)
                && data::int(r, "shuffle") == Some(shuffle)
                && data::text(r, "order") == Some(order)
        })
    };
    let grid: Vec<Vec<Option<&PointRecord>>> = VARIANTS
        .iter()
        .map(|&v| ORDERS.iter().map(|o| find(v, o)).collect())
        .collect();
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
        tables: vec![table(&grid, r, c)],
        look_for: "Row order costs the jagged array one pointer load per row, next to nothing. \
                   Column order loads a row pointer per element and touches one line per row; \
                   once the rows' lines outgrow L1 both layouts miss about once per element \
                   there, and the difference is further down (the table's L2 column): a flat \
                   block with a power-of-two row length maps a column into a few sets, rows an \
                   allocator header apart spread over them."
            .into(),
        notes: Vec::new(),
    }))
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

fn table(grid: &[Vec<Option<&PointRecord>>], rows: u64, cols: u64) -> Table {
    let lines = VARIANTS
        .iter()
        .zip(grid)
        .flat_map(|((_, _, name), cells)| {
            ORDERS.iter().zip(cells).map(move |(order, r)| {
                vec![
                    name.to_string(),
                    order.to_string(),
                    est_cell(r.and_then(data::ns_per_element)),
                    cell(r.and_then(l1_misses_per_element)),
                    cell(r.and_then(|r| misses_per_element(r, 1))),
                ]
            })
        })
        .collect();
    Table {
        caption: format!(
            "{rows} rows × {cols} f64: ns per element (timed, CI) and L1 and L2 misses per \
             element (simulated)"
        ),
        headers: [
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
