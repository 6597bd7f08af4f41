//! Figure 12: the geometry sweep's misses per load against the stride, every whole-line stride
//! up to twice sets × line and a log-spaced tail, per swept level, with the recorded set
//! model over it; the timed subset's ns per load on a panel of its own.

use super::sweep::{
    SweepPoint, SweepSummary, SweptLevel, marker_series, points, preset_note, swept_levels,
};
use super::{Built, FigureDef, Outcome, Table, cell, est_cell, omitted, prov_sim, prov_timed};
use crate::chart::{Axis, Figure, LinePanel, Panel, RefLine, Series, SeriesKind, XY};
use crate::claims::Claim;
use stridelab_core::results::{CacheLevel, ResultsDocument};

/// Figure 12: miss rate against stride over the geometry sweep.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig12-sweep-miss-rate-vs-stride",
    title: "Miss rate vs stride, every whole-line stride",
    section: "conflict",
    build: sweep_vs_stride,
};

fn sweep_vs_stride(doc: &ResultsDocument) -> Outcome {
    let levels = swept_levels(doc);
    if levels.is_empty() {
        return omitted(&FIGURE, "no geometry sweep in this results file");
    }
    let mut panels = Vec::new();
    let mut tables = Vec::new();
    let mut look_for = Vec::new();
    for swept in &levels {
        let pts = points(doc, swept);
        panels.push(miss_panel(&pts, swept));
        panels.extend(timed_panel(&pts, &swept.level));
        tables.push(table(&pts, swept));
        look_for.push(level_claim(&pts, swept));
    }
    look_for.push(Claim::guide(
        "sweep.fig12-drawing",
        "Filled dots are simulated, rings the set model; only strides that miss are drawn as \
         dots and rings, and the grey rug along zero marks the strides where no K misses.",
    ));
    let figure = Figure {
        id: FIGURE.id.into(),
        title: "Misses per load vs stride: K lines s bytes apart, walked over and over".into(),
        provenance: format!(
            "{}; hollow: recorded model (sets used = sets / gcd(stride in lines, sets); a cyclic \
             LRU walk misses on every load once K > sets used × ways); {}{}",
            prov_sim(doc),
            prov_timed(doc),
            preset_note(&levels)
        ),
        panels,
        panel_width: 560,
        panel_height: 360,
    };
    Outcome::Drawn(Box::new(Built {
        figure,
        tables,
        look_for,
        notes: Vec::new(),
    }))
}

/// Misses per load after the first pass against the stride in lines (log scale).
fn miss_panel(pts: &[SweepPoint], swept: &SweptLevel) -> Panel {
    let x = |p: &SweepPoint| p.stride_lines as f64;
    let level = &swept.level;
    Panel::Lines(LinePanel {
        title: format!(
            "{}: {} sets × {} ways, {} B lines",
            swept.name(),
            level.sets,
            level.ways,
            level.line
        ),
        x: Axis::log2(&format!("stride (lines of {} B)", level.line)),
        y: Axis::fraction(&format!(
            "{} misses per load (after the first pass)",
            level.name
        )),
        series: marker_series(pts, x, true, true),
        vlines: vec![RefLine {
            at: f64::from(level.sets),
            label: format!("sets = {}", level.sets),
            label_y: Some(0.55),
        }],
        hlines: Vec::new(),
    })
}

/// ns per load of the timed strides, with their CIs; `None` when none of them was timed.
fn timed_panel(pts: &[SweepPoint], level: &CacheLevel) -> Option<Panel> {
    let ks = super::common::distinct(pts.iter().filter(|p| p.ns.is_some()).map(|p| p.k));
    if ks.is_empty() {
        return None;
    }
    let series = ks
        .iter()
        .map(|&k| Series {
            name: format!("K={k} (timed)"),
            colour: super::conflict::k_colour(&ks, k),
            kind: SeriesKind::Markers,
            points: pts
                .iter()
                .filter(|p| p.k == k)
                .filter_map(|p| {
                    let e = p.ns?;
                    Some(XY::with_ci(p.stride_lines as f64, e.value, e.ci()))
                })
                .collect(),
        })
        .collect();
    Some(Panel::Lines(LinePanel {
        title: format!("{} sweep, timed strides", level.name),
        x: Axis::log2(&format!("stride (lines of {} B)", level.line)),
        y: Axis::linear("time per load (ns)"),
        series,
        vlines: vec![RefLine {
            at: f64::from(level.sets),
            label: format!("sets = {}", level.sets),
            label_y: None,
        }],
        hlines: Vec::new(),
    }))
}

/// The strides of a level that miss once warm, and the timed ones: model, simulation and
/// time side by side (the harmless untimed strides are in the figure only).
fn table(pts: &[SweepPoint], swept: &SweptLevel) -> Table {
    let rows = pts
        .iter()
        .filter(|p| p.ns.is_some() || p.warm.is_some_and(|w| w > 0.0))
        .map(|p| {
            vec![
                p.stride_lines.to_string(),
                p.k.to_string(),
                p.gcd.to_string(),
                p.sets_used.to_string(),
                cell(p.warm),
                cell(p.model),
                est_cell(p.ns),
            ]
        })
        .collect();
    Table {
        caption: format!(
            "{} sweep: the strides that miss once warm, and the timed ones (every stride is \
             simulated; see the figure)",
            swept.name()
        ),
        headers: [
            "stride (lines)",
            "K",
            "gcd(stride, sets)",
            "sets / gcd (model)",
            "misses/load (sim)",
            "misses/load (model)",
            "ns/load (timed, CI)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// One level's sweep in numbers: per K, how many strides miss once warm and the smallest
/// gcd among them; and how often the simulation equals the model.
fn level_claim(pts: &[SweepPoint], swept: &SweptLevel) -> Claim {
    let summary = SweepSummary::of(pts);
    let sets = swept.level.sets;
    let per_k: Vec<String> = summary
        .missing
        .iter()
        .map(|(k, n, gcd)| match gcd {
            Some(g) => format!("K = {k} at {n} (gcd(stride, {sets}) ≥ {g})"),
            None => format!("K = {k} at none"),
        })
        .collect();
    Claim::derived(
        "sweep.by-stride",
        format!(
            "{}: of {} strides, {}; every other stride misses nothing once warm (simulated). \
             The simulation equals the model (within 0.01 misses per load) at {} of {} points.",
            swept.name(),
            summary.strides,
            per_k.join(", "),
            summary.equal_model,
            summary.with_model
        ),
    )
}
