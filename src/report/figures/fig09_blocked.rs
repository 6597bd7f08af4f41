//! Figure 9: tile-major (blocked) vs row-major layout, in row and column order.
//! One figure of the report, built from records alone.

use super::common::estimate_bars;
use super::fig06_row_vs_column::traversals;
use super::labels::point_label;
use super::{Built, FigureDef, Outcome, Table, cell, est_cell, omitted, prov_timed};
use crate::report::chart::{Axis, BarPanel, Figure, Panel, colour_for, format_number};
use crate::report::claims::{Claim, SAME_CURVE, Verdict, slower_or_faster};
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
        look_for: look_for(&major, &tiles),
        notes: Vec::new(),
    }))
}

/// Column order against row order in each storage, and the textbook's expectation that tiles
/// make the two orders cost about the same.
fn look_for(major: &[Option<Estimate>], tiles: &[Option<Estimate>]) -> Vec<Claim> {
    let col_over_row = |v: &[Option<Estimate>]| match v {
        [Some(row), Some(col)] => Some((col.value, row.value)),
        _ => None,
    };
    let mut claims = Vec::new();
    if let Some((c, r)) = col_over_row(major) {
        claims.push(Claim::derived(
            "blocked.row-major",
            format!(
                "Row-major storage: column order is {} than row order ({} vs {} ns per \
                 element, timed).",
                slower_or_faster(c, r),
                format_number(c),
                format_number(r)
            ),
        ));
    }
    let expectation = "in tile-major storage a column walk stays inside one contiguous tile for \
                       B rows, so column order costs about what row order costs.";
    claims.push(match col_over_row(tiles) {
        Some((c, r)) => Claim::textbook(
            "blocked.tile-major",
            expectation,
            if c / r <= SAME_CURVE {
                Verdict::Agrees
            } else {
                Verdict::Disagrees
            },
            format!(
                "in tile-major storage column order is {} than row order ({} vs {} ns per \
                 element, timed)",
                slower_or_faster(c, r),
                format_number(c),
                format_number(r)
            ),
        ),
        None => Claim::textbook(
            "blocked.tile-major",
            expectation,
            Verdict::Untested,
            "the tile-major sum was not timed in both orders",
        ),
    });
    claims
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
