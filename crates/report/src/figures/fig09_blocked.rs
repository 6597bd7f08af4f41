//! Figure 9: tile-major (blocked) vs row-major layout, in row and column order.
//! One figure of the report, built from records alone.

use super::common::estimate_bars;
use super::fig06_row_vs_column::traversals;
use super::labels::point_label;
use super::{Built, FigureDef, Outcome, Table, cell, est_cell, omitted, prov_timed};
use crate::chart::{Axis, BarPanel, Figure, Panel, colour_for, format_number};
use crate::claims::{Claim, SAME_CURVE, Verdict, slower_or_faster};
use crate::data::{self, Estimate};
use stridelab_core::results::{PointRecord, ResultsDocument};

/// Figure 9: tile-major (blocked) vs row-major layout, in row and column order.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig09-blocked",
    title: "Blocked vs row-major",
    section: "blocked",
    build: blocked,
};

/// One tile-major configuration timed: matrix size `n` and tile size `b`, per order.
struct Tiling {
    n: u64,
    b: u64,
    by_order: Vec<Option<Estimate>>,
}

const ORDERS: [&str; 2] = ["row", "col"];

fn blocked(doc: &ResultsDocument) -> Outcome {
    let tiled: Vec<&PointRecord> = data::of_kernel(doc, "tiled-sum")
        .filter(|r| data::ns_per_element(r).is_some())
        .collect();
    if tiled.is_empty() {
        return omitted(&FIGURE, "no timed `tiled-sum` points in this results file");
    }
    // Every (n, B) the file timed, in record order: a grid over B draws each.
    let mut tilings: Vec<Tiling> = Vec::new();
    for r in &tiled {
        let (Some(n), Some(b)) = (data::int(r, "n"), data::int(r, "B")) else {
            continue;
        };
        if !tilings.iter().any(|t| t.n == n && t.b == b) {
            let by_order = ORDERS
                .iter()
                .map(|o| {
                    tiled
                        .iter()
                        .find(|x| {
                            data::int(x, "n") == Some(n)
                                && data::int(x, "B") == Some(b)
                                && data::text(x, "order") == Some(o)
                        })
                        .and_then(|x| data::ns_per_element(x))
                })
                .collect();
            tilings.push(Tiling { n, b, by_order });
        }
    }
    let trav = traversals(doc);
    let ns_major = |n: u64, o: &str| {
        trav.iter()
            .find(|t| t.order == o && t.n == n && t.rows == n && t.padded_ld.is_none())
            .and_then(|t| data::ns_per_element(t.record))
    };
    let sizes = super::common::distinct(tilings.iter().map(|t| t.n));
    let majors: Vec<(u64, Vec<Option<Estimate>>)> = sizes
        .iter()
        .map(|&n| (n, ORDERS.iter().map(|o| ns_major(n, o)).collect()))
        .collect();
    // An order neither storage was timed in has no bars: no category for it.
    let shown: Vec<usize> = (0..ORDERS.len())
        .filter(|&i| {
            tilings.iter().any(|t| t.by_order[i].is_some())
                || majors.iter().any(|m| m.1[i].is_some())
        })
        .collect();
    let pick = |v: &[Option<Estimate>]| shown.iter().map(|&i| v[i]).collect::<Vec<_>>();
    let categories: Vec<String> = shown
        .iter()
        .map(|&i| ["row order", "column order"][i].to_string())
        .collect();
    let mut series = Vec::new();
    for (n, major) in majors.iter().filter(|m| m.1.iter().any(Option::is_some)) {
        series.push(estimate_bars(
            format!("row-major {n}×{n}"),
            colour_for("row-major", 0),
            &pick(major),
        ));
    }
    for (i, t) in tilings.iter().enumerate() {
        let name = if sizes.len() > 1 {
            format!("tile-major {}×{}, {}×{} tiles", t.n, t.n, t.b, t.b)
        } else {
            format!("tile-major, {}×{} tiles", t.b, t.b)
        };
        let colour = if i == 0 {
            colour_for("tile-major", 2)
        } else {
            crate::chart::PALETTE[(i + 2) % crate::chart::PALETTE.len()]
        };
        series.push(estimate_bars(name, colour, &pick(&t.by_order)));
    }
    let mut tables: Vec<Table> = tilings
        .iter()
        .map(|t| {
            let major = majors
                .iter()
                .find(|m| m.0 == t.n)
                .map_or_else(|| vec![None; ORDERS.len()], |m| m.1.clone());
            comparison_table(&categories, &pick(&major), &pick(&t.by_order), t.n, t.b)
        })
        .collect();
    tables.extend(conversion_table(doc));
    let height = (categories.len() as u32 * (series.len() as u32 * 26 + 40) + 110).max(260);
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
            panel_height: height,
        },
        tables,
        look_for: look_for(&majors, &tilings),
        notes: Vec::new(),
    }))
}

/// Column order against row order in each storage, and the textbook's expectation that tiles
/// make the two orders cost about the same.
fn look_for(majors: &[(u64, Vec<Option<Estimate>>)], tilings: &[Tiling]) -> Vec<Claim> {
    let col_over_row = |v: &[Option<Estimate>]| match v {
        [Some(row), Some(col)] => Some((col.value, row.value)),
        _ => None,
    };
    let several = tilings.len() > 1;
    let mut claims = Vec::new();
    let major_words: Vec<String> = majors
        .iter()
        .filter_map(|(n, m)| {
            let (c, r) = col_over_row(m)?;
            Some(format!(
                "{}column order is {} than row order ({} vs {} ns per element, timed)",
                if majors.len() > 1 {
                    format!("at n = {n} ")
                } else {
                    String::new()
                },
                slower_or_faster(c, r),
                format_number(c),
                format_number(r)
            ))
        })
        .collect();
    if !major_words.is_empty() {
        claims.push(Claim::derived(
            "blocked.row-major",
            format!("Row-major storage: {}.", major_words.join("; ")),
        ));
    }
    let expectation = "in tile-major storage a column walk stays inside one contiguous tile for \
                       B rows, so column order costs about what row order costs.";
    let checked: Vec<(String, f64, f64)> = tilings
        .iter()
        .filter_map(|t| {
            let (c, r) = col_over_row(&t.by_order)?;
            let at = if several {
                format!("n = {}, B = {}: ", t.n, t.b)
            } else {
                String::new()
            };
            Some((at, c, r))
        })
        .collect();
    claims.push(if checked.is_empty() {
        Claim::textbook(
            "blocked.tile-major",
            expectation,
            Verdict::Untested,
            "the tile-major sum was not timed in both orders",
        )
    } else {
        let holding = checked
            .iter()
            .filter(|(_, c, r)| c / r <= SAME_CURVE)
            .count();
        Claim::textbook(
            "blocked.tile-major",
            expectation,
            Verdict::of_counts(checked.len(), holding),
            format!(
                "in tile-major storage {}",
                checked
                    .iter()
                    .map(|(at, c, r)| format!(
                        "{at}column order is {} than row order ({} vs {} ns per element, \
                         timed)",
                        slower_or_faster(*c, *r),
                        format_number(*c),
                        format_number(*r)
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        )
    });
    claims
}

/// Row-major against tile-major per traversal order, with their ratio.
fn comparison_table(
    categories: &[String],
    major: &[Option<Estimate>],
    tiles: &[Option<Estimate>],
    n: u64,
    b: u64,
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
            "Sum of an n = {n} matrix: row-major vs tile-major with {b}×{b} tiles (ns per \
             element, timed)"
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
