//! Figure 10: bandwidth vs threads (pinned), with perfect scaling dashed.
//! One figure of the report, built from records alone.

use super::common::{distinct, records_or_omit};
use super::labels::point_label;
use super::{Built, FigureDef, Outcome, Table, est_cell, prov_timed};
use crate::chart::{
    Axis, Figure, LinePanel, Panel, Series, SeriesKind, XY, colour_for, format_number,
};
use crate::claims::Claim;
use crate::data;
use stridelab_core::results::{PointRecord, ResultsDocument};

/// Figure 10: bandwidth vs threads (pinned), with perfect scaling dashed.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig10-threads",
    title: "Bandwidth vs threads",
    section: "bandwidth",
    build: threads,
};

fn threads(doc: &ResultsDocument) -> Outcome {
    let keep =
        |r: &PointRecord| (r.kernel == "copy" || r.kernel == "read") && data::gb_per_s(r).is_some();
    let reason = "no timed `copy`/`read` points in this results file";
    let recs = match records_or_omit(&FIGURE, doc, keep, reason) {
        Ok(recs) => recs,
        Err(omitted) => return omitted,
    };
    let counts: Vec<usize> = distinct(recs.iter().map(|r| r.threads));
    let pos = |t: usize| counts.iter().position(|&c| c == t).unwrap_or(0) as f64;
    let mut series = Vec::new();
    let mut rows = Vec::new();
    for kernel in ["copy", "read"] {
        let mut ks: Vec<&&PointRecord> = recs.iter().filter(|r| r.kernel == kernel).collect();
        if ks.is_empty() {
            continue;
        }
        ks.sort_by_key(|r| r.threads);
        series.extend(kernel_series(kernel, &ks, &pos));
        rows.extend(ks.iter().map(|r| table_row(r)));
    }
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Bandwidth vs threads (one buffer per pinned thread)".into(),
            provenance: format!(
                "{}; dashed: one thread's bandwidth × threads",
                prov_timed(doc)
            ),
            panels: vec![Panel::Lines(LinePanel {
                title: "aggregate bandwidth".into(),
                x: Axis::categories("threads", counts.iter().map(|c| c.to_string()).collect()),
                y: Axis::linear("GB/s (all threads, read + written)"),
                series,
                vlines: Vec::new(),
                hlines: Vec::new(),
            })],
            panel_width: 900,
            panel_height: 380,
        },
        tables: vec![Table {
            caption: "Copy and read bandwidth per thread count".into(),
            headers: ["point", "threads", "pinned", "GB/s (timed, CI)"]
                .map(String::from)
                .to_vec(),
            rows,
        }],
        look_for: look_for(&recs),
        notes: Vec::new(),
    }))
}

/// Each thread count's bandwidth as a fraction of perfect scaling from one thread.
fn look_for(recs: &[&PointRecord]) -> Vec<Claim> {
    let mut parts = Vec::new();
    for kernel in ["copy", "read"] {
        let of = |t: usize| {
            recs.iter()
                .find(|r| r.kernel == kernel && r.threads == t)
                .and_then(|r| data::gb_per_s(r))
        };
        let Some(one) = of(1) else { continue };
        for t in distinct(
            recs.iter()
                .filter(|r| r.kernel == kernel)
                .map(|r| r.threads),
        ) {
            if let Some(e) = of(t).filter(|_| t > 1) {
                parts.push(format!(
                    "{kernel} with {t} threads {} GB/s, {} of {t} × one thread's {} GB/s",
                    format_number(e.value),
                    format_number(e.value / (one.value * t as f64)),
                    format_number(one.value)
                ));
            }
        }
    }
    let mut claims = vec![Claim::guide(
        "threads.reading",
        "The dashed line is one thread's bandwidth times the threads; where the solid line \
         falls below it, the threads share a limit (memory bandwidth, a shared cache or, in a \
         VM, the host).",
    )];
    if !parts.is_empty() {
        claims.push(Claim::derived(
            "threads.scaling",
            format!("Timed: {}.", parts.join("; ")),
        ));
    }
    claims
}

/// The timed bandwidth of `kernel` by thread count and, when one thread was timed, its
/// perfect scaling (dashed); `pos` places a thread count on the category axis.
fn kernel_series(kernel: &str, ks: &[&&PointRecord], pos: &dyn Fn(usize) -> f64) -> Vec<Series> {
    let colour = colour_for(kernel, 0);
    let mut series = vec![Series {
        name: format!("{kernel} (timed)"),
        colour,
        kind: SeriesKind::Data,
        points: ks
            .iter()
            .filter_map(|r| {
                let e = data::gb_per_s(r)?;
                Some(XY::with_ci(pos(r.threads), e.value, e.ci()))
            })
            .collect(),
    }];
    if let Some(one) = ks
        .iter()
        .find(|r| r.threads == 1)
        .and_then(|r| data::gb_per_s(r))
    {
        series.push(Series {
            name: format!("{kernel}: perfect scaling"),
            colour,
            kind: SeriesKind::Model,
            points: ks
                .iter()
                .map(|r| XY::new(pos(r.threads), one.value * r.threads as f64))
                .collect(),
        });
    }
    series
}

/// A point's table row: label, threads, how many were pinned, bandwidth.
fn table_row(r: &PointRecord) -> Vec<String> {
    let pinned = r.pinning.threads.iter().filter(|t| t.pinned).count();
    vec![
        point_label(r),
        r.threads.to_string(),
        format!("{pinned} of {}", r.pinning.threads.len()),
        est_cell(data::gb_per_s(r)),
    ]
}
