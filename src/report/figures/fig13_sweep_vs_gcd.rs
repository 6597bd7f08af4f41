//! Figure 13: the geometry sweep's misses per load against gcd(stride in lines, sets): every
//! stride of the sweep a point, all of them on the set model's step (sets used = sets / gcd).

use super::sweep::{SweepPoint, SweptLevel, marker_series, points, preset_note, swept_levels};
use super::{Built, FigureDef, Outcome, Table, cell, omitted, prov_sim};
use crate::report::chart::{Axis, Figure, LinePanel, Panel, RefLine};
use crate::results::{CacheLevel, ResultsDocument};

/// Figure 13: miss rate against the gcd of the stride in lines and the sets.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig13-sweep-miss-rate-vs-gcd",
    title: "Miss rate vs gcd(stride in lines, sets)",
    section: "conflict",
    build: sweep_vs_gcd,
};

/// The worked example the annotation names: a stride of this many lines.
const EXAMPLE_STRIDE_LINES: u64 = 16;

fn sweep_vs_gcd(doc: &ResultsDocument) -> Outcome {
    let levels = swept_levels(doc);
    if levels.is_empty() {
        return omitted(&FIGURE, "no geometry sweep in this results file");
    }
    let mut panels = Vec::new();
    let mut tables = Vec::new();
    let mut first = None;
    for swept in &levels {
        let pts = points(doc, swept);
        panels.push(gcd_panel(&pts, swept));
        tables.push(gcd_table(&pts, swept));
        first.get_or_insert(swept.level.clone());
    }
    let figure = Figure {
        id: FIGURE.id.into(),
        title: "Misses per load vs gcd(stride in lines, sets): every stride of the sweep".into(),
        provenance: format!(
            "{}; hollow: recorded model, misses on every load once K > (sets / gcd) × ways{}",
            prov_sim(doc),
            preset_note(&levels)
        ),
        panels,
        panel_width: 560,
        panel_height: 360,
    };
    Outcome::Drawn(Box::new(Built {
        figure,
        tables,
        look_for: look_for(first.as_ref()),
        notes: Vec::new(),
    }))
}

fn gcd_panel(pts: &[SweepPoint], swept: &SweptLevel) -> Panel {
    let level = &swept.level;
    let sets = u64::from(level.sets);
    let mut vlines = Vec::new();
    if sets % EXAMPLE_STRIDE_LINES == 0 {
        vlines.push(RefLine {
            at: EXAMPLE_STRIDE_LINES as f64,
            label: format!(
                "stride {EXAMPLE_STRIDE_LINES} lines → {} sets",
                sets / EXAMPLE_STRIDE_LINES
            ),
            label_y: Some(0.55),
        });
    }
    Panel::Lines(LinePanel {
        title: format!(
            "{}: {} sets × {} ways ({} strides)",
            swept.name(),
            level.sets,
            level.ways,
            super::common::distinct(pts.iter().map(|p| p.stride_lines)).len()
        ),
        x: Axis::log2("gcd(stride in lines, sets)"),
        y: Axis::fraction(&format!(
            "{} misses per load (after the first pass)",
            level.name
        )),
        series: marker_series(pts, |p| p.gcd as f64, true),
        vlines,
        hlines: Vec::new(),
    })
}

/// Per gcd and K: how many strides, the sets they use, and the range of simulated misses
/// beside the model (one value: the model depends on the gcd alone).
fn gcd_table(pts: &[SweepPoint], swept: &SweptLevel) -> Table {
    let mut rows = Vec::new();
    for g in super::common::distinct(pts.iter().map(|p| p.gcd)) {
        for k in super::common::distinct(pts.iter().map(|p| p.k)) {
            let of: Vec<&SweepPoint> = pts.iter().filter(|p| p.gcd == g && p.k == k).collect();
            let Some(first) = of.first() else { continue };
            let warm: Vec<f64> = of.iter().filter_map(|p| p.warm).collect();
            let lo = warm.iter().copied().reduce(f64::min);
            let hi = warm.iter().copied().reduce(f64::max);
            let models =
                super::common::distinct(of.iter().filter_map(|p| p.model.map(f64::to_bits)));
            rows.push(vec![
                g.to_string(),
                first.sets_used.to_string(),
                k.to_string(),
                of.len().to_string(),
                format!("{} – {}", cell(lo), cell(hi)),
                match models.as_slice() {
                    [one] => cell(Some(f64::from_bits(*one))),
                    [] => "—".into(),
                    _ => "varies".into(),
                },
            ]);
        }
    }
    Table {
        caption: format!(
            "{} sweep by gcd: every stride of a gcd class behaves alike",
            swept.name()
        ),
        headers: [
            "gcd(stride, sets)",
            "sets / gcd (model)",
            "K",
            "strides",
            "misses/load (sim, min – max)",
            "misses/load (model)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

fn look_for(level: Option<&CacheLevel>) -> String {
    match level {
        Some(l) => {
            let sets = u64::from(l.sets);
            let example = EXAMPLE_STRIDE_LINES.min(sets).max(1);
            format!(
                "Strides as different as 3 and 125 lines sit on one point: only gcd(stride in \
                 lines, {sets}) decides how many sets the walk uses ({sets} / gcd). With {sets} \
                 sets, a stride of {example} lines uses {} sets, which hold {} lines of {} ways \
                 each: K = 2 × and 4 × {ways} lines fit, K = 8 × {ways} do not, and then every \
                 load misses. Each larger K steps up one gcd earlier. A preset's panel shows the \
                 same step on another machine's sets.",
                sets / example,
                sets / example * u64::from(l.ways),
                l.ways,
                ways = l.ways
            )
        }
        None => String::new(),
    }
}
