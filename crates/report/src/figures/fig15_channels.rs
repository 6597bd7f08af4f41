//! Figure 15: channels-first (NCHW) vs channels-last (NHWC) for the per-channel sum and the
//! 3×3 stencil, timed and simulated, with the cost of converting NCHW to NHWC (the copy engine
//! beside the naive copies, `conversion.rs`). One figure of the report, built from records
//! alone.

use super::conversion;
use super::{Built, FigureDef, Outcome, Table, cell, est_cell, omitted, prov_timed};
use crate::chart::{Axis, BarPanel, BarSeries, Figure, Panel, colour_for};
use crate::claims::{Claim, SAME_SPEED, Verdict, slower_or_faster};
use crate::data::{self, Estimate};
use crate::figures::common::estimate_bars;
use stridelab_core::results::{PointRecord, ResultsDocument};

/// Figure 15: channels-first vs channels-last.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig15-channels",
    title: "Channels-first vs channels-last",
    section: "tensor",
    build: channels,
};

/// The access patterns compared, in category order.
const PATTERNS: [&str; 2] = ["channel-sum", "stencil3x3"];

const LAYOUTS: [&str; 2] = ["nchw", "nhwc"];

/// Simulated first-level misses per element of the kernel's work.
pub(super) fn l1_misses_per_element(r: &PointRecord) -> Option<f64> {
    misses_per_element(r, 0)
}

/// Simulated misses at level `index` (0 = L1) per element of the kernel's work. A simulation of
/// a prefix of the run is scaled by the run's accesses over the simulated ones (misses per
/// access times accesses per element), so large points compare with small ones.
pub(super) fn misses_per_element(r: &PointRecord, index: usize) -> Option<f64> {
    let elements = r.work.as_ref()?.elements;
    let level = data::sim_level(r, index)?;
    let scope = &r.simulated.as_ref()?.scope;
    let run_accesses = match scope.run_accesses {
        Some(accesses) => accesses,
        None if scope.kind == "full" => scope.simulated_accesses,
        None => return None,
    };
    let per_access = level.misses as f64 / scope.simulated_accesses.max(1) as f64;
    (elements > 0).then(|| per_access * run_accesses as f64 / elements as f64)
}

/// A tensor point's (n, c, h, w) and element type.
type Shape<'r> = (
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<&'r str>,
);

/// The shape (n, c, h, w) and element type of a tensor point.
fn shape(r: &PointRecord) -> Shape<'_> {
    let dim = |name| data::int(r, name);
    (
        dim("n"),
        dim("c"),
        dim("h"),
        dim("w"),
        data::text(r, "dtype"),
    )
}

/// Every shape of `kernel` measured in both layouts, as (nchw, nhwc), in record order.
fn all_pairs<'d>(doc: &'d ResultsDocument, kernel: &'d str) -> Vec<[&'d PointRecord; 2]> {
    let recs: Vec<&PointRecord> = data::of_kernel(doc, kernel)
        .filter(|r| r.threads == 1)
        .collect();
    let of = |layout: &str, s: &Shape<'_>| {
        recs.iter()
            .copied()
            .find(|r| data::text(r, "layout") == Some(layout) && shape(r) == *s)
    };
    let mut pairs: Vec<[&PointRecord; 2]> = Vec::new();
    for r in &recs {
        let s = shape(r);
        if let (Some(a), Some(b)) = (of("nchw", &s), of("nhwc", &s))
            && !pairs.iter().any(|[x, _]| std::ptr::eq(*x, a))
        {
            pairs.push([a, b]);
        }
    }
    pairs
}

/// Per pattern, the nchw and nhwc points of the first shape measured in both layouts.
fn pairs(doc: &ResultsDocument) -> Vec<[Option<&PointRecord>; 2]> {
    PATTERNS
        .iter()
        .map(|kernel| match all_pairs(doc, kernel).first() {
            Some([a, b]) => [Some(*a), Some(*b)],
            None => [None, None],
        })
        .collect()
}

/// `kernel n×c×h×w` (and the element type where there is one).
fn pair_label(kernel: &str, r: &PointRecord) -> String {
    let (n, c, h, w, dtype) = shape(r);
    let d = |v: Option<u64>| v.unwrap_or(0);
    let label = format!("{kernel} {}×{}×{}×{}", d(n), d(c), d(h), d(w));
    match dtype {
        Some(dtype) => format!("{label} {dtype}"),
        None => label,
    }
}

fn channels(doc: &ResultsDocument) -> Outcome {
    let pairs = pairs(doc);
    let conversions = conversion::bars(doc);
    let has_pairs = pairs.iter().any(|p| p.iter().any(Option::is_some));
    if !has_pairs && conversions.is_none() {
        return omitted(
            &FIGURE,
            "no `channel-sum` or `stencil3x3` points measured in both layouts at one shape, \
             and no `to-nhwc` points",
        );
    }
    let mut panels = Vec::new();
    if has_pairs {
        panels.extend(layout_panels(&pairs));
    }
    if let Some((categories, series)) = conversions {
        panels.push(Panel::Bars(bar_panel(
            "to-nhwc ns per element (timed)",
            &categories,
            series,
        )));
    }
    let mut tables = Vec::new();
    if has_pairs {
        tables.push(comparison_table(doc));
    }
    tables.extend(conversion::table(doc, l1_misses_per_element));
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Channels-first (nchw) vs channels-last (nhwc)".into(),
            provenance: if has_pairs {
                format!("{}; simulated L1 misses per element", prov_timed(doc))
            } else {
                prov_timed(doc)
            },
            panels,
            panel_width: 560,
            panel_height: 240,
        },
        tables,
        look_for: look_for(doc),
        notes: Vec::new(),
    }))
}

/// The layouts' two panels: ns per element (timed) and L1 misses per element (simulated),
/// nchw beside nhwc for each pattern.
fn layout_panels(pairs: &[[Option<&PointRecord>; 2]]) -> [Panel; 2] {
    let categories: Vec<String> = pairs
        .iter()
        .zip(PATTERNS)
        .map(|(pair, kernel)| match pair[0] {
            Some(r) => pair_label(kernel, r),
            None => kernel.to_string(),
        })
        .collect();
    let timed = |i: usize| -> Vec<Option<Estimate>> {
        pairs
            .iter()
            .map(|p| p[i].and_then(data::ns_per_element))
            .collect()
    };
    let misses = |i: usize| -> Vec<Option<f64>> {
        pairs
            .iter()
            .map(|p| p[i].and_then(l1_misses_per_element))
            .collect()
    };
    let timed_series = LAYOUTS
        .iter()
        .enumerate()
        .map(|(i, layout)| estimate_bars(layout.to_string(), colour_for(layout, i), &timed(i)))
        .collect();
    let miss_series = LAYOUTS
        .iter()
        .enumerate()
        .map(|(i, layout)| BarSeries {
            name: layout.to_string(),
            colour: colour_for(layout, i),
            values: misses(i),
            ci: vec![None; PATTERNS.len()],
        })
        .collect();
    [
        Panel::Bars(bar_panel(
            "ns per element (timed)",
            &categories,
            timed_series,
        )),
        Panel::Bars(bar_panel(
            "L1 misses per element (simulated)",
            &categories,
            miss_series,
        )),
    ]
}

/// Per pattern and shape, nhwc against nchw (timed and simulated), the conversions' engine
/// against the naive copies, and the textbook's expectation for the per-channel sum.
fn look_for(doc: &ResultsDocument) -> Vec<Claim> {
    let mut claims = Vec::new();
    if PATTERNS.iter().any(|k| !all_pairs(doc, k).is_empty()) {
        claims.push(Claim::guide(
            "tensor.layouts",
            "A per-channel sum streams a plane in nchw and strides C elements in nhwc; the \
             stencil's 3 input rows are W elements apart in nchw and W·C in nhwc.",
        ));
    }
    let mut parts = Vec::new();
    let mut sums = Vec::new();
    for kernel in PATTERNS {
        for [nchw, nhwc] in all_pairs(doc, kernel) {
            let (Some(a), Some(b)) = (data::ns_per_element(nchw), data::ns_per_element(nhwc))
            else {
                continue;
            };
            let misses = match (l1_misses_per_element(nchw), l1_misses_per_element(nhwc)) {
                (Some(x), Some(y)) => format!(
                    ", L1 misses per element {} vs {} (simulated)",
                    cell(Some(y)),
                    cell(Some(x))
                ),
                _ => String::new(),
            };
            parts.push(format!(
                "{}: nhwc {} than nchw ({} vs {} ns per element, timed{misses})",
                pair_label(kernel, nchw),
                slower_or_faster(b.value, a.value),
                cell(Some(b.value)),
                cell(Some(a.value))
            ));
            if kernel == "channel-sum" {
                sums.push(b.value / a.value);
            }
        }
    }
    if !parts.is_empty() {
        claims.push(Claim::derived(
            "tensor.compared",
            format!("{}.", parts.join("; ")),
        ));
    }
    claims.extend(conversion::claim(doc));
    if !sums.is_empty() {
        let slower = sums.iter().filter(|r| **r >= SAME_SPEED).count();
        claims.push(Claim::textbook(
            "tensor.channels-last",
            "a per-channel sum over channels-last storage strides C elements, so it costs more \
             than over channels-first.",
            Verdict::of_counts(sums.len(), slower),
            format!(
                "nhwc over nchw: {} (timed)",
                sums.iter()
                    .map(|r| format!("{}×", cell(Some(*r))))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    claims
}

fn bar_panel(title: &str, categories: &[String], series: Vec<BarSeries>) -> BarPanel {
    BarPanel {
        title: title.into(),
        categories: categories.to_vec(),
        value_axis: Axis::linear(title),
        series,
        stacked: false,
        vlines: Vec::new(),
    }
}

/// Every shape of both patterns: both layouts timed and simulated, and nhwc ÷ nchw.
fn comparison_table(doc: &ResultsDocument) -> Table {
    let rows = PATTERNS
        .iter()
        .flat_map(|kernel| {
            all_pairs(doc, kernel).into_iter().map(move |[nchw, nhwc]| {
                let (a, b) = (data::ns_per_element(nchw), data::ns_per_element(nhwc));
                vec![
                    pair_label(kernel, nchw),
                    est_cell(a),
                    est_cell(b),
                    cell(a.zip(b).map(|(a, b)| b.value / a.value)),
                    cell(l1_misses_per_element(nchw)),
                    cell(l1_misses_per_element(nhwc)),
                ]
            })
        })
        .collect();
    Table {
        caption: "nchw vs nhwc at every shape measured in both (n×c×h×w): ns per element \
                  (timed, CI) and L1 misses per element (simulated)"
            .into(),
        headers: [
            "pattern",
            "nchw ns",
            "nhwc ns",
            "nhwc ÷ nchw",
            "nchw L1 misses",
            "nhwc L1 misses",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}
