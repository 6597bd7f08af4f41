//! Figure 1: simulated misses per access vs stride, per level, one series per K, with the model's prediction dashed.
//! One figure of the report, built from records alone.

use std::collections::BTreeSet;

use super::conflict::{Probe, k_colour, predicted_cyclic_misses, probes};
use super::{
    Built, FigureDef, Outcome, SIM_BASE, Table, cell, est_cell, misses_per_access, omitted,
    prov_sim,
};
use crate::cache::model;
use crate::report::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, Series, SeriesKind, XY, format_bytes,
};
use crate::report::data;
use crate::results::ResultsDocument;

const ID: &str = "fig01-miss-rate-vs-stride";
const TITLE: &str = "Miss rate vs stride";

/// Figure 1: simulated misses per access vs stride, per level, one series per K, with the
/// model's prediction dashed.
pub const FIGURE: FigureDef = FigureDef {
    id: ID,
    title: TITLE,
    section: "conflict",
    build: miss_rate_vs_stride,
};

fn miss_rate_vs_stride(doc: &ResultsDocument) -> Outcome {
    let probes = probes(doc);
    if probes.is_empty() {
        return omitted(ID, TITLE, "no `conflict` probe points in this results file");
    }
    if !probes.iter().any(|p| p.record.simulated.is_some()) {
        return omitted(ID, TITLE, "the conflict probes have no simulated misses");
    }
    let levels = data::data_levels(doc);
    let ks: Vec<u64> = probes
        .iter()
        .map(|p| p.k)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let strides: Vec<i64> = probes
        .iter()
        .map(|p| p.stride_bytes)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // The probes cluster around a few power-of-two strides with ±1 controls: one category per
    // stride keeps 4088/4096/4104 B apart, which a log axis would draw on top of each other.
    let position = |s: i64| strides.iter().position(|&x| x == s).unwrap_or(0) as f64;
    let stride_names: Vec<String> = strides.iter().map(|s| format!("{s} B")).collect();
    let mut panels = Vec::new();
    for (li, level) in levels.iter().enumerate().take(2) {
        let mut series = Vec::new();
        for (ki, &k) in ks.iter().enumerate() {
            let colour = k_colour(&ks, k);
            // Equal miss rates would hide each other: shift each K a little sideways.
            let shift = (ki as f64 - (ks.len() as f64 - 1.0) / 2.0) * 0.06;
            let mut pts: Vec<XY> = probes
                .iter()
                .filter(|p| p.k == k)
                .filter_map(|p| {
                    Some(XY::new(
                        position(p.stride_bytes) + shift,
                        misses_per_access(p.record, li)?,
                    ))
                })
                .collect();
            pts.sort_by(|a, b| a.x.total_cmp(&b.x));
            series.push(Series {
                name: format!("K={k}"),
                colour,
                kind: SeriesKind::Data,
                points: pts,
            });
            let model_pts = strides
                .iter()
                .map(|&s| {
                    XY::new(
                        position(s) + shift,
                        predicted_cyclic_misses(&levels, s, k)
                            .get(li)
                            .copied()
                            .unwrap_or(0.0),
                    )
                })
                .collect();
            series.push(Series {
                name: String::new(),
                colour,
                kind: SeriesKind::Model,
                points: model_pts,
            });
        }
        series.push(Series {
            name: "model (dashed, colour = K)".into(),
            colour: PALETTE[6],
            kind: SeriesKind::Model,
            points: Vec::new(),
        });
        panels.push(Panel::Lines(LinePanel {
            title: format!(
                "{}: {} sets × {} ways, {} B lines",
                level.name, level.sets, level.ways, level.line
            ),
            x: Axis::categories(
                &format!(
                    "stride (bytes); sets × line = {}",
                    format_bytes(level.set_span() as f64)
                ),
                stride_names.clone(),
            ),
            y: Axis::fraction(&format!("{} misses per load", level.name)),
            series,
            vlines: Vec::new(),
            hlines: Vec::new(),
        }));
    }
    let l1 = levels.first();
    let mut rows = Vec::new();
    let mut sorted: Vec<&Probe> = probes.iter().collect();
    sorted.sort_by_key(|p| (p.stride_bytes, p.k));
    for p in &sorted {
        let predicted = predicted_cyclic_misses(&levels, p.stride_bytes, p.k);
        let sets_used =
            l1.map(|l| model::distinct_sets(SIM_BASE, p.stride_bytes, p.k, l.line, l.sets));
        let onset = l1.and_then(|l| {
            model::conflict_onset(
                SIM_BASE,
                p.stride_bytes,
                l.line,
                l.sets,
                l.ways,
                l.lines() + 1,
            )
        });
        rows.push(vec![
            format!("{} B", p.stride_bytes),
            p.k.to_string(),
            sets_used
                .zip(l1)
                .map(|(u, l)| format!("{u} of {}", l.sets))
                .unwrap_or_else(|| "—".into()),
            onset
                .map(|k| k.to_string())
                .unwrap_or_else(|| "none".into()),
            cell(misses_per_access(p.record, 0)),
            cell(predicted.first().copied()),
            cell(misses_per_access(p.record, 1)),
            cell(predicted.get(1).copied()),
            est_cell(p.ns),
        ]);
    }
    let figure = Figure {
        id: ID.into(),
        title: "Miss rate vs stride: K loads at one stride, repeated".into(),
        provenance: format!(
            "{}; dashed: model (lines in sets holding more than `ways` lines miss)",
            prov_sim(doc)
        ),
        panels,
        panel_width: 640,
        panel_height: 380,
    };
    let look_for = match l1 {
        Some(l) => format!(
            "Strides that are a multiple of {} (sets × line of {}) put every load into one set: \
             as soon as K exceeds the {} ways, every load misses. The ±1-element controls spread \
             over many sets and keep missing nothing — same K, same bytes.",
            format_bytes(l.set_span() as f64),
            l.name,
            l.ways
        ),
        None => "Power-of-two strides pile into few sets; the ±1 controls do not.".into(),
    };
    Outcome::Drawn(Box::new(Built {
        figure,
        tables: vec![Table {
            caption: "Conflict probes: model, simulation and timing per stride and K".into(),
            headers: [
                "stride",
                "K",
                "L1 sets used (model)",
                "L1 conflict onset K (model)",
                "L1 misses/load (sim)",
                "L1 misses/load (model)",
                "L2 misses/load (sim)",
                "L2 misses/load (model)",
                "ns/load (timed, CI)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for,
        notes: Vec::new(),
    }))
}
