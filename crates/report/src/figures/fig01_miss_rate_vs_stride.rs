//! Figure 1: simulated misses per access vs stride, per level, one series per K, with the model's prediction as rings.
//! One figure of the report, built from records alone.

use std::collections::BTreeSet;

use super::conflict::{
    Probe, controls_claim, k_colour, multiples_claim, predicted_cyclic_misses, probes,
};
use super::{
    Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted, prov_sim,
};
use crate::chart::{Axis, Figure, LinePanel, PALETTE, Panel, Series, SeriesKind, XY, format_bytes};
use crate::claims::Claim;
use crate::data;
use stridelab_core::results::{CacheLevel, ResultsDocument};

/// Figure 1: simulated misses per access vs stride, per level, one series per K, with the
/// model's prediction as rings; markers only, since the strides are categories.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig01-miss-rate-vs-stride",
    title: "Miss rate vs stride",
    section: "conflict",
    build: miss_rate_vs_stride,
};

fn miss_rate_vs_stride(doc: &ResultsDocument) -> Outcome {
    let probes = probes(doc);
    if probes.is_empty() {
        return omitted(&FIGURE, "no `conflict` probe points in this results file");
    }
    if !probes.iter().any(|p| p.record.simulated.is_some()) {
        return omitted(&FIGURE, "the conflict probes have no simulated misses");
    }
    let levels = data::data_levels(doc);
    let ks: Vec<u64> = sorted_unique(probes.iter().map(|p| p.k));
    let strides: Vec<i64> = sorted_unique(probes.iter().map(|p| p.stride_bytes));
    // A level where no probe misses gets a note, not a panel of zeros.
    let (missing, quiet): (Vec<_>, Vec<_>) =
        levels.iter().enumerate().take(2).partition(|(li, _)| {
            probes
                .iter()
                .any(|p| data::sim_level(p.record, *li).is_some_and(|l| l.misses > l.compulsory))
        });
    if missing.is_empty() {
        return omitted(
            &FIGURE,
            format!(
                "no probe misses after the first pass at {} at these strides: every K fits the \
                 sets its stride uses, so there is no miss rate to draw",
                quiet
                    .iter()
                    .map(|(_, l)| l.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        );
    }
    let panels = missing
        .iter()
        .map(|(li, level)| level_panel(&probes, &ks, &strides, *li, level))
        .collect();
    let quiet_notes: Vec<String> = quiet
        .iter()
        .map(|(_, level)| {
            format!(
                "{}: no probe misses after the first pass at any of these strides (its {} sets \
                 hold every K), so it has no panel.",
                level.name, level.sets
            )
        })
        .collect();
    let has_model = probes.iter().any(|p| p.model(0).is_some());
    let l1 = levels.first();
    let figure = Figure {
        id: FIGURE.id.into(),
        title: "Miss rate vs stride: K loads at one stride, repeated".into(),
        provenance: if has_model {
            format!(
                "{}; rings: {} (lines in sets holding more than `ways` lines miss)",
                prov_sim(doc),
                data::model_provenance(probes.first().map(|p| p.record))
            )
        } else {
            format!(
                "{}; no model overlay: {}",
                prov_sim(doc),
                data::no_model_reason(doc)
            )
        },
        panels,
        panel_width: 640,
        panel_height: 380,
    };
    Outcome::Drawn(Box::new(Built {
        figure,
        tables: vec![probe_table(&probes, l1)],
        look_for: look_for(&probes, l1),
        notes: if has_model {
            quiet_notes
        } else {
            let mut notes = quiet_notes;
            notes.push(format!(
                "Model columns are empty: {}.",
                data::no_model_reason(doc)
            ));
            notes
        },
    }))
}

/// The distinct values of `values`, ascending.
fn sorted_unique<T: Ord>(values: impl Iterator<Item = T>) -> Vec<T> {
    values.collect::<BTreeSet<_>>().into_iter().collect()
}

/// One level's panel: simulated misses per load per K, and the recorded model dashed.
fn level_panel(
    probes: &[Probe],
    ks: &[u64],
    strides: &[i64],
    li: usize,
    level: &CacheLevel,
) -> Panel {
    // The probes cluster around a few power-of-two strides with ±1 controls: one category per
    // stride keeps 4088/4096/4104 B apart, which a log axis would draw on top of each other.
    let position = |s: i64| strides.iter().position(|&x| x == s).unwrap_or(0) as f64;
    let mut series = Vec::new();
    for (ki, &k) in ks.iter().enumerate() {
        let colour = k_colour(ks, k);
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
            kind: SeriesKind::Markers,
            points: pts,
        });
        let model_pts = strides
            .iter()
            .filter_map(|&s| {
                let predicted = predicted_cyclic_misses(probes, s, k).get(li).copied()?;
                Some(XY::new(position(s) + shift, predicted))
            })
            .collect();
        series.push(Series {
            name: String::new(),
            colour,
            kind: SeriesKind::ModelMarkers,
            points: model_pts,
        });
    }
    series.push(Series {
        name: "model (rings, colour = K)".into(),
        colour: PALETTE[6],
        kind: SeriesKind::ModelMarkers,
        points: Vec::new(),
    });
    Panel::Lines(LinePanel {
        title: format!(
            "{}: {} sets × {} ways, {} B lines",
            level.name, level.sets, level.ways, level.line
        ),
        x: Axis::categories(
            &format!(
                "stride (bytes); sets × line = {}",
                format_bytes(level.set_span() as f64)
            ),
            strides.iter().map(|s| format!("{s} B")).collect(),
        ),
        y: Axis::fraction(&format!("{} misses per load", level.name)),
        series,
        vlines: Vec::new(),
        hlines: Vec::new(),
    })
}

/// The table: per stride and K, the recorded model beside the simulation and the timing.
fn probe_table(probes: &[Probe], l1: Option<&CacheLevel>) -> Table {
    let mut sorted: Vec<&Probe> = probes.iter().collect();
    sorted.sort_by_key(|p| (p.stride_bytes, p.k));
    let rows = sorted
        .iter()
        .map(|p| {
            let model = p.model(0);
            let predicted = predicted_cyclic_misses(probes, p.stride_bytes, p.k);
            vec![
                format!("{} B", p.stride_bytes),
                p.k.to_string(),
                model
                    .filter(|_| l1.is_some())
                    .map(|m| format!("{} of {}", m.sets_used, m.sets))
                    .unwrap_or_else(|| "—".into()),
                model
                    .map(|m| m.conflict_onset.map(|k| k.to_string()))
                    .map(|onset| onset.unwrap_or_else(|| "none".into()))
                    .unwrap_or_else(|| "—".into()),
                cell(misses_per_access(p.record, 0)),
                cell(predicted.first().copied()),
                cell(misses_per_access(p.record, 1)),
                cell(predicted.get(1).copied()),
                est_cell(p.ns),
            ]
        })
        .collect();
    Table {
        caption: "Conflict probes: model, simulation and timing per stride and K".into(),
        headers: [
            "stride",
            "K",
            "L1 sets used (model)",
            "L1 set overflow from K (model)",
            "L1 misses/load (sim)",
            "L1 misses/load (model)",
            "L2 misses/load (sim)",
            "L2 misses/load (model)",
            "ns/load (timed, CI)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// The multiples and the controls in numbers (model sets, simulated misses), then how the
/// figure is drawn.
fn look_for(probes: &[Probe], l1: Option<&CacheLevel>) -> Vec<Claim> {
    let mut claims: Vec<Claim> = l1
        .into_iter()
        .flat_map(|l| [multiples_claim(probes, l), controls_claim(probes, l)])
        .flatten()
        .collect();
    claims.push(Claim::guide(
        "conflict.fig01-drawing",
        "Each K sits a little beside its stride so equal values stay visible; a ring is the \
         set model's prediction for that K.",
    ));
    claims
}
