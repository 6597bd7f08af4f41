//! Figure 9: tile-major (blocked) vs row-major layout, in row and column order.
//! One figure of the report, built from records alone.

use super::common::estimate_bars;
use super::fig06_row_vs_column::traversals;
use super::labels::point_label;
use super::{Built, FigureDef, Outcome, Table, cell, est_cell, omitted, prov_timed};
use crate::report::chart::{Axis, BarPanel, Figure, Panel, colour_for};
use crate::report::data::{self, Estimate};
use crate::results::{PointRecord, ResultsDocument};

/// Figure 9: tile-major (blocked) vs row-major layout, in row and column order.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig09-blocked",
    title: "Blocked vs row-major",
    section: "blocked",
    build: blocked,
};

fn blocked(doc: &ResultsDocument) -> Outcome {
    let tiled: Vec<&PointRecord> = data::of_kernel(doc, "tiled-sum")
        .filter(|r| data::ns_per_element(r).is_some())
        .collect();
    if tiled.is_empty() {
        return omitted(&FIGURE, "no timed `tiled-sum` points in this results file");
    }
    let trav = traversals(doc);
    let orders = ["row", "col"];
    let categories: Vec<String> = vec!["row order".into(), "column order".into()];
    let ns_tiled = |o: &str| {
        tiled
            .iter()
            .find(|r| data::text(r, "order") == Some(o))
            .and_then(|r| data::ns_per_element(r))
    };
    let n = data::int(tiled[0], "n");
    let b = data::int(tiled[0], "B");
    let ns_major = |o: &str| {
        trav.iter()
            .find(|t| t.order == o && Some(t.n) == n && Some(t.rows) == n && t.padded_ld.is_none())
            .and_then(|t| data::ns_per_element(t.record))
    };
    let major: Vec<_> = orders.iter().map(|o| ns_major(o)).collect();
    let tiles: Vec<_> = orders.iter().map(|o| ns_tiled(o)).collect();
    let (n_name, b_name) = (n.unwrap_or(0), b.unwrap_or(0));
    let series = vec![
        estimate_bars(
            format!("row-major {n_name}×{n_name}"),
            colour_for("row-major", 0),
            &major,
        ),
        estimate_bars(
            format!("tile-major, {b_name}×{b_name} tiles"),
            colour_for("tile-major", 2),
            &tiles,
        ),
    ];
    let mut tables = vec![comparison_table(
        &categories,
        &major,
        &tiles,
        n.unwrap_or(0),
    )];
    tables.extend(conversion_table(doc));
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Blocked (tile-major) vs row-major layout".into(),
            provenance: prov_timed(doc),
            panels: vec![Panel::Bars(BarPanel {
                title: "ns per element (timed)".into(),
                categories,
                value_axis: Axis::linear("ns per element"),
                series,
                stacked: false,
                vlines: Vec::new(),
            })],
            panel_width: 1000,
            panel_height: 260,
        },
        tables,
        look_for: "In tile-major storage a tile is contiguous, so walking the tiles in column \
                   order stays nearly as fast as row order; in row-major storage column order \
                   pays a line per element."
            .into(),
        notes: Vec::new(),
    }))
}

/// Row-major against tile-major per traversal order, with their ratio.
fn comparison_table(
    categories: &[String],
    major: &[Option<Estimate>],
    tiles: &[Option<Estimate>],
    n: u64,
) -> Table {
    let rows = (categories.iter().zip(major.iter().zip(tiles)))
        .map(|(name, (m, t))| {
            vec![
                name.clone(),
                est_cell(*m),
                est_cell(*t),
                cell(m.zip(*t).map(|(a, t)| a.value / t.value)),
            ]
        })
        .collect();
    Table {
        caption: format!(
            "Sum of an n = {n} matrix: row-major vs tile-major (ns per element, timed)"
        ),
        headers: ["order", "row-major", "tile-major", "row-major ÷ tile-major"]
            .map(String::from)
            .to_vec(),
        rows,
    }
}

/// The row-major to tile-major conversions (a strided copy), if the results hold any.
fn conversion_table(doc: &ResultsDocument) -> Option<Table> {
    let conversions: Vec<&PointRecord> = data::of_kernel(doc, "to-tiles").collect();
    (!conversions.is_empty()).then(|| Table {
        caption: "Converting row-major to tile-major (a strided copy)".into(),
        headers: ["point", "GB/s (timed, CI)", "fraction of same-run copy"]
            .map(String::from)
            .to_vec(),
        rows: conversions
            .iter()
            .map(|r| {
                vec![
                    point_label(r),
                    est_cell(data::gb_per_s(r)),
                    cell(data::reference_ratio(r)),
                ]
            })
            .collect(),
    })
}
