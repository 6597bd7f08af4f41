//! Figure 7: transposes and copies — GB/s and the fraction of the same-run best copy.
//! One figure of the report, built from records alone.

use std::collections::BTreeSet;

use super::{
    Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted, prov_timed,
};
use crate::chart::format_number;
use crate::chart::{
    Axis, BarPanel, BarSeries, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY,
    colour_for,
};
use crate::claims::{Claim, SAME_SPEED, Verdict};
use crate::data;
use stridelab_core::results::{PointRecord, ResultsDocument};

/// Figure 7: transposes and copies — GB/s and the fraction of the same-run best copy.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig07-transpose",
    title: "Transpose and copies",
    section: "transpose",
    build: transposes,
};

/// `rows×cols` of a transpose point.
fn size(r: &PointRecord) -> String {
    format!(
        "{}×{}",
        data::int(r, "rows").unwrap_or(0),
        data::int(r, "cols").unwrap_or(0)
    )
}

fn variant(r: &PointRecord) -> Option<&str> {
    data::text(r, "variant")
}

fn transposes(doc: &ResultsDocument) -> Outcome {
    let recs: Vec<&PointRecord> = data::of_kernel(doc, "transpose")
        .filter(|r| data::gb_per_s(r).is_some())
        .collect();
    if recs.is_empty() {
        return omitted(&FIGURE, "no timed `transpose` points in this results file");
    }
    let mut sizes: Vec<(u64, String)> = recs
        .iter()
        .map(|r| (data::int(r, "rows").unwrap_or(0), size(r)))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    sizes.dedup();
    let categories: Vec<String> = sizes.iter().map(|(_, s)| s.clone()).collect();
    let mut panels = bar_panels(&recs, &categories);
    let mut notes = Vec::new();
    match block_sweep(&recs, &sizes) {
        Some(panel) => panels.push(panel),
        None => notes.push(
            "Block-size sweep omitted: this results file has the blocked transpose at a single \
             block size (run a suite with several `B` values, e.g. the full suite)."
                .to_string(),
        ),
    }
    notes.extend(simulation_notes(doc, &recs));
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Transposes as copies: bandwidth and fraction of a plain copy".into(),
            provenance: format!(
                "{}; reference copy measured interleaved in the same run",
                prov_timed(doc)
            ),
            panels,
            panel_width: 470,
            panel_height: 360,
        },
        tables: vec![variant_table(&recs)],
        look_for: look_for(&recs, &sizes),
        notes,
    }))
}

/// Each size's fractions of the same-run copy, and whether blocking beat the naive loops.
fn look_for(recs: &[&PointRecord], sizes: &[(u64, String)]) -> Vec<Claim> {
    let fraction = |v: &str, cat: &str| {
        recs.iter()
            .filter(|r| variant(r) == Some(v) && size(r) == cat)
            .filter_map(|r| data::reference_ratio(r))
            .reduce(f64::max)
    };
    let variants = variants_of(recs);
    let mut per_size = Vec::new();
    let mut checked = Vec::new();
    for (_, cat) in sizes {
        let parts: Vec<String> = variants
            .iter()
            .filter_map(|v| Some(format!("{v} {}", format_number(fraction(v, cat)?))))
            .collect();
        if !parts.is_empty() {
            per_size.push(format!("{cat}: {}", parts.join(", ")));
        }
        let naive = ["naive-read", "naive-write"]
            .iter()
            .filter_map(|v| fraction(v, cat))
            .reduce(f64::max);
        if let (Some(b), Some(n)) = (fraction("blocked", cat), naive) {
            checked.push((cat.clone(), b, n));
        }
    }
    let mut claims = vec![Claim::derived(
        "transpose.fractions",
        format!(
            "Fraction of a copy timed in the same run (1 = as fast as the copy; the best blocked \
             block size where several were timed): {}.",
            per_size.join("; ")
        ),
    )];
    let better = checked.iter().filter(|c| c.1 > c.2 * SAME_SPEED).count();
    let verdict = Verdict::of_counts(checked.len(), better);
    claims.push(Claim::textbook(
        "transpose.blocking",
        "the naive loops walk one matrix by columns; blocking keeps a tile of both matrices \
         in cache, so the blocked transpose beats the naive loops.",
        verdict,
        if checked.is_empty() {
            "no size has both a blocked and a naive transpose timed".to_string()
        } else {
            checked
                .iter()
                .map(|(cat, b, n)| {
                    format!(
                        "{cat}: blocked {} against the better naive loop's {}",
                        format_number(*b),
                        format_number(*n)
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        },
    ));
    claims
}

/// The variants present, in the order naive-read, naive-write, blocked, fast, others.
fn variants_of(recs: &[&PointRecord]) -> Vec<String> {
    let order = ["naive-read", "naive-write", "blocked", "fast"];
    let mut v: Vec<String> = recs
        .iter()
        .filter_map(|r| variant(r).map(String::from))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    v.sort_by_key(|x| order.iter().position(|o| o == x).unwrap_or(order.len()));
    v
}

/// Bandwidth and fraction-of-copy bars, one series per variant over the matrix sizes (the
/// blocked variant at its first block size; a sweep over B gets its own panel).
fn bar_panels(recs: &[&PointRecord], categories: &[String]) -> Vec<Panel> {
    let main_b = recs
        .iter()
        .filter(|r| variant(r) == Some("blocked"))
        .find_map(|r| data::int(r, "B"));
    let pick = |v: &str, cat: &str| {
        recs.iter().copied().find(|r| {
            variant(r) == Some(v)
                && size(r) == cat
                && (v != "blocked" || data::int(r, "B") == main_b)
        })
    };
    let mut gbs = Vec::new();
    let mut frac = Vec::new();
    for (i, v) in variants_of(recs).iter().enumerate() {
        let colour = colour_for(v, i);
        let found: Vec<Option<&PointRecord>> = categories.iter().map(|c| pick(v, c)).collect();
        let gb = |r: &Option<&PointRecord>| r.and_then(data::gb_per_s);
        gbs.push(BarSeries {
            name: v.clone(),
            colour,
            values: found.iter().map(|r| gb(r).map(|e| e.value)).collect(),
            ci: found.iter().map(|r| gb(r).and_then(|e| e.ci())).collect(),
        });
        frac.push(BarSeries {
            name: v.clone(),
            colour,
            values: found
                .iter()
                .map(|r| r.and_then(data::reference_ratio))
                .collect(),
            ci: vec![None; categories.len()],
        });
    }
    vec![
        Panel::Bars(BarPanel {
            title: "bandwidth (timed)".into(),
            categories: categories.to_vec(),
            value_axis: Axis::linear("GB/s (bytes read + written)"),
            series: gbs,
            stacked: false,
            vlines: Vec::new(),
        }),
        Panel::Bars(BarPanel {
            title: "fraction of the same-run best copy".into(),
            categories: categories.to_vec(),
            value_axis: Axis::linear("transpose GB/s ÷ copy GB/s"),
            series: frac,
            stacked: false,
            vlines: vec![RefLine {
                at: 1.0,
                label: "copy".into(),
                label_y: None,
            }],
        }),
    ]
}

/// GB/s of the blocked transpose against its block size, one series per matrix size; `None`
/// with fewer than two block sizes.
fn block_sweep(recs: &[&PointRecord], sizes: &[(u64, String)]) -> Option<Panel> {
    let blocked = || recs.iter().filter(|r| variant(r) == Some("blocked"));
    let b_values: BTreeSet<u64> = blocked().filter_map(|r| data::int(r, "B")).collect();
    if b_values.len() < 2 {
        return None;
    }
    let mut series = Vec::new();
    for (i, (n, cat)) in sizes.iter().enumerate() {
        let mut pts: Vec<XY> = blocked()
            .filter(|r| size(r) == *cat)
            .filter_map(|r| {
                let e = data::gb_per_s(r)?;
                Some(XY::with_ci(data::int(r, "B")? as f64, e.value, e.ci()))
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
    Some(Panel::Lines(LinePanel {
        title: "block-size sweep (timed)".into(),
        x: Axis::log2("block size B (elements, log2)"),
        y: Axis::linear("GB/s"),
        series,
        vlines: Vec::new(),
        hlines: Vec::new(),
    }))
}

/// Where the simulated streams differ from the timed ones, as recorded with the points.
fn simulation_notes(doc: &ResultsDocument, recs: &[&PointRecord]) -> Vec<String> {
    if recs.iter().all(|r| r.model.is_none()) {
        return vec![format!(
            "Where a variant's simulated stream differs from its timed one is not shown: {}.",
            data::no_model_reason(doc)
        )];
    }
    let approximated: BTreeSet<(&str, &str)> = recs
        .iter()
        .filter_map(|r| Some((variant(r)?, data::simulation_note(r)?)))
        .collect();
    approximated
        .into_iter()
        .map(|(variant, note)| format!("Simulated misses of `{variant}`: {note}."))
        .collect()
}

/// One row per transpose point: variant, size, B, timing, the same-run copy and misses.
fn variant_table(recs: &[&PointRecord]) -> Table {
    let mut sorted = recs.to_vec();
    sorted.sort_by_key(|r| {
        (
            data::int(r, "rows"),
            variant(r).map(String::from),
            data::int(r, "B"),
        )
    });
    let rows = sorted
        .iter()
        .map(|r| {
            let reference = r.reference.as_ref();
            let variant = variant(r).unwrap_or("?");
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
    Table {
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
    }
}
