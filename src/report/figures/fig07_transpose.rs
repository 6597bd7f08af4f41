//! Figure 7: transposes and copies — GB/s and the fraction of the same-run best copy.
//! One figure of the report, built from records alone.

use std::collections::BTreeSet;

use super::{
    Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted, prov_timed,
};
use crate::report::chart::{
    Axis, BarPanel, BarSeries, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY,
    colour_for,
};
use crate::report::data;
use crate::results::{PointRecord, ResultsDocument};

const ID: &str = "fig07-transpose";
const TITLE: &str = "Transpose and copies";

/// Figure 7: transposes and copies — GB/s and the fraction of the same-run best copy.
pub const FIGURE: FigureDef = FigureDef {
    id: ID,
    title: TITLE,
    section: "transpose",
    build: transposes,
};

/// Where the simulated stream of `r` differs from the one its timing measured (the
/// catalogue's note for the record's resolved parameters; none for unknown kernels).
fn simulation_note(r: &PointRecord) -> Option<&'static str> {
    let spec = crate::kernels::find(&r.kernel).ok()?;
    crate::kernels::simulation_note(spec, &r.params)
}

fn transposes(doc: &ResultsDocument) -> Outcome {
    let recs: Vec<&PointRecord> = data::of_kernel(doc, "transpose")
        .filter(|r| data::gb_per_s(r).is_some())
        .collect();
    if recs.is_empty() {
        return omitted(
            ID,
            TITLE,
            "no timed `transpose` points in this results file",
        );
    }
    let size = |r: &PointRecord| {
        format!(
            "{}×{}",
            data::int(r, "rows").unwrap_or(0),
            data::int(r, "cols").unwrap_or(0)
        )
    };
    let mut sizes: Vec<(u64, String)> = recs
        .iter()
        .map(|r| (data::int(r, "rows").unwrap_or(0), size(r)))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    sizes.dedup();
    let categories: Vec<String> = sizes.iter().map(|(_, s)| s.clone()).collect();
    let variants: Vec<String> = {
        let order = ["naive-read", "naive-write", "blocked", "fast"];
        let mut v: Vec<String> = recs
            .iter()
            .filter_map(|r| data::text(r, "variant").map(String::from))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        v.sort_by_key(|x| order.iter().position(|o| o == x).unwrap_or(order.len()));
        v
    };
    // The default block size only (a sweep over B gets its own panel).
    let default_b = |r: &PointRecord| data::int(r, "B");
    let b_values: BTreeSet<u64> = recs
        .iter()
        .filter(|r| data::text(r, "variant") == Some("blocked"))
        .filter_map(|r| default_b(r))
        .collect();
    let main_b = recs
        .iter()
        .filter(|r| data::text(r, "variant") == Some("blocked"))
        .filter_map(|r| default_b(r))
        .next();
    let pick = |variant: &str, cat: &str| {
        recs.iter().find(|r| {
            data::text(r, "variant") == Some(variant)
                && size(r) == cat
                && (variant != "blocked" || default_b(r) == main_b)
        })
    };
    let mut gbs = Vec::new();
    let mut frac = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        let colour = colour_for(v, i);
        let found: Vec<Option<&&PointRecord>> = categories.iter().map(|c| pick(v, c)).collect();
        gbs.push(BarSeries {
            name: v.clone(),
            colour,
            values: found
                .iter()
                .map(|r| r.and_then(|r| data::gb_per_s(r)).map(|e| e.value))
                .collect(),
            ci: found
                .iter()
                .map(|r| r.and_then(|r| data::gb_per_s(r)).and_then(|e| e.ci()))
                .collect(),
        });
        frac.push(BarSeries {
            name: v.clone(),
            colour,
            values: found
                .iter()
                .map(|r| r.and_then(|r| data::reference_ratio(r)))
                .collect(),
            ci: vec![None; categories.len()],
        });
    }
    let mut panels = vec![
        Panel::Bars(BarPanel {
            title: "bandwidth (timed)".into(),
            categories: categories.clone(),
            value_axis: Axis::linear("GB/s (bytes read + written)"),
            series: gbs,
            stacked: false,
            vlines: Vec::new(),
        }),
        Panel::Bars(BarPanel {
            title: "fraction of the same-run best copy".into(),
            categories: categories.clone(),
            value_axis: Axis::linear("transpose GB/s ÷ copy GB/s"),
            series: frac,
            stacked: false,
            vlines: vec![RefLine {
                at: 1.0,
                label: "copy".into(),
            }],
        }),
    ];
    let mut notes = Vec::new();
    if b_values.len() >= 2 {
        let mut series = Vec::new();
        for (i, (n, cat)) in sizes.iter().enumerate() {
            let mut pts: Vec<XY> = recs
                .iter()
                .filter(|r| data::text(r, "variant") == Some("blocked") && size(r) == *cat)
                .filter_map(|r| {
                    let e = data::gb_per_s(r)?;
                    Some(XY::with_ci(default_b(r)? as f64, e.value, e.ci()))
                })
                .collect();
            pts.sort_by(|a, b| a.x.total_cmp(&b.x));
            series.push(Series {
                name: format!("blocked, n = {n}"),
                colour: PALETTE[(i + 2) % PALETTE.len()],
                kind: SeriesKind::Data,
                points: pts,
            });
        }
        panels.push(Panel::Lines(LinePanel {
            title: "block-size sweep (timed)".into(),
            x: Axis::log2("block size B (elements, log2)"),
            y: Axis::linear("GB/s"),
            series,
            vlines: Vec::new(),
            hlines: Vec::new(),
        }));
    } else {
        notes.push(
            "Block-size sweep omitted: this results file has the blocked transpose at a single \
             block size (run a suite with several `B` values, e.g. the full suite)."
                .to_string(),
        );
    }
    let approximated: BTreeSet<(&str, &str)> = recs
        .iter()
        .filter_map(|r| Some((data::text(r, "variant")?, simulation_note(r)?)))
        .collect();
    for (variant, note) in approximated {
        notes.push(format!("Simulated misses of `{variant}`: {note}."));
    }
    let mut sorted = recs.clone();
    sorted.sort_by_key(|r| {
        (
            data::int(r, "rows"),
            data::text(r, "variant").map(String::from),
            data::int(r, "B"),
        )
    });
    let rows = sorted
        .iter()
        .map(|r| {
            let reference = r.reference.as_ref();
            let variant = data::text(r, "variant").unwrap_or("?");
            vec![
                variant.to_string(),
                size(r),
                // Only the blocked loops use B (the others carry the parameter's default).
                data::int(r, "B")
                    .filter(|_| variant == "blocked")
                    .map(|b| b.to_string())
                    .unwrap_or_else(|| "—".into()),
                est_cell(data::gb_per_s(r)),
                cell(reference.map(|c| c.reference_gb_per_s)),
                reference
                    .map(|c| c.best_variant.clone())
                    .unwrap_or_else(|| "—".into()),
                cell(data::reference_ratio(r)),
                cell(misses_per_access(r, 0)),
            ]
        })
        .collect();
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Transposes as copies: bandwidth and fraction of a plain copy".into(),
            provenance: format!(
                "{}; reference copy measured interleaved in the same run",
                prov_timed(doc)
            ),
            panels,
            panel_width: 470,
            panel_height: 360,
        },
        tables: vec![Table {
            caption: "Transpose variants (GB/s counts bytes read + written)".into(),
            headers: [
                "variant",
                "matrix",
                "B",
                "GB/s (timed, CI)",
                "same-run copy GB/s",
                "copy variant",
                "fraction of copy",
                "L1 misses/element (sim)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: "A transpose reads or writes one of its matrices by columns: the naive loops \
                   get a small fraction of a copy. Blocking keeps a tile of both matrices in \
                   cache; the fraction of copy is the number that survives a different machine."
            .into(),
        notes,
    }))
}
