//! Figure 2: misses and time vs the number of L1 sets the stride really uses.
//! One figure of the report, built from records alone.

use std::collections::BTreeSet;

use super::conflict::{Probe, k_colour, probes};
use super::{Built, FigureDef, Outcome, Table, misses_per_access, omitted, prov_sim, prov_timed};
use crate::report::chart::{Axis, Figure, LinePanel, Panel, RefLine, Series, SeriesKind, XY};
use crate::report::data;
use crate::results::model::LONG_RUN_ACCESSES;
use crate::results::{CacheLevel, ResultsDocument};

/// Figure 2: misses and time vs the number of L1 sets the stride really uses.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig02-sets-used",
    title: "Miss rate and time vs sets used",
    section: "conflict",
    build: sets_used,
};

fn sets_used(doc: &ResultsDocument) -> Outcome {
    let probes = probes(doc);
    let levels = data::data_levels(doc);
    let Some(l1) = levels.first() else {
        return omitted(&FIGURE, "no cache geometry recorded");
    };
    if probes.is_empty() {
        return omitted(&FIGURE, "no `conflict` probe points in this results file");
    }
    if !probes.iter().any(|p| p.model(0).is_some()) {
        return omitted(
            &FIGURE,
            format!(
                "its x axis is the set model's count of sets used, and {}",
                data::no_model_reason(doc)
            ),
        );
    }
    let ks: Vec<u64> = probes
        .iter()
        .map(|p| p.k)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let (miss_series, time_series) = series(&probes, &ks);
    let x_label = format!("{} sets the K loads use (model, of {})", l1.name, l1.sets);
    let vlines = ways_lines(&ks, u64::from(l1.ways));
    let mut time_vlines = vlines.clone();
    time_vlines.iter_mut().for_each(|v| v.label.clear());
    let x_axis = || Axis {
        from_zero: false,
        ticks: crate::report::chart::TickFormat::Integer,
        ..Axis::linear(&x_label)
    };
    let panels = vec![
        Panel::Lines(LinePanel {
            title: format!("{} misses per load (simulated)", l1.name),
            x: x_axis(),
            y: Axis::fraction("misses per load"),
            series: miss_series,
            vlines,
            hlines: Vec::new(),
        }),
        Panel::Lines(LinePanel {
            title: "time per load (timed)".into(),
            x: x_axis(),
            y: Axis::linear("ns per load"),
            series: time_series,
            vlines: time_vlines,
            hlines: Vec::new(),
        }),
    ];
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Miss rate and time vs the number of sets a stride really uses".into(),
            provenance: format!(
                "x: {} (distinct {} sets of K accesses); left: {}; right: {}",
                data::model_provenance(probes.first().map(|p| p.record)),
                l1.name,
                prov_sim(doc),
                prov_timed(doc)
            ),
            panels,
            panel_width: 600,
            panel_height: 380,
        },
        tables: vec![set_table(&probes, l1)],
        look_for: format!(
            "Left of a dashed line, K lines do not fit into the sets the stride uses \
             ({} ways each): misses and time jump. Right of it the same K loads fit. Each K \
             is drawn a little beside its whole number of sets, so equal values stay visible.",
            l1.ways
        ),
        notes: Vec::new(),
    }))
}

/// Per K: simulated misses and timed ns per load against the recorded sets used (one point
/// per x; several strides using as many sets are averaged). Sets used is a count, so the
/// points are markers, not a line, and each K sits a little beside the next (by
/// [`K_OFFSET`]) so that equal values stay visible side by side.
fn series(probes: &[Probe], ks: &[u64]) -> (Vec<Series>, Vec<Series>) {
    let mut miss_series = Vec::new();
    let mut time_series = Vec::new();
    let centre = (ks.len() as f64 - 1.0) / 2.0;
    for (index, &k) in ks.iter().enumerate() {
        let colour = k_colour(ks, k);
        let shift = (index as f64 - centre) * K_OFFSET;
        let mut m: Vec<XY> = Vec::new();
        let mut t: Vec<XY> = Vec::new();
        for p in probes.iter().filter(|p| p.k == k) {
            let Some(x) = p.model(0).map(|m| m.sets_used as f64 + shift) else {
                continue;
            };
            if let Some(v) = misses_per_access(p.record, 0) {
                m.push(XY::new(x, v));
            }
            if let Some(e) = p.ns {
                t.push(XY::with_ci(x, e.value, e.ci()));
            }
        }
        for pts in [&mut m, &mut t] {
            merge_equal_x(pts);
        }
        let named = |points| Series {
            name: format!("K={k}"),
            colour,
            kind: SeriesKind::Markers,
            points,
        };
        miss_series.push(named(m));
        time_series.push(named(t));
    }
    (miss_series, time_series)
}

/// How far apart neighbouring K are drawn around their whole number of sets.
const K_OFFSET: f64 = 0.06;

/// Sorts by x and keeps one point per x (the mean; its interval dropped).
fn merge_equal_x(pts: &mut Vec<XY>) {
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    let mut merged: Vec<XY> = Vec::new();
    for p in pts.iter() {
        match merged.last_mut() {
            Some(last) if last.x == p.x => {
                last.y = (last.y + p.y) / 2.0;
                last.ci = None;
            }
            _ => merged.push(*p),
        }
    }
    *pts = merged;
}

/// Where K lines just fit: `⌈K / ways⌉` sets hold them.
fn ways_lines(ks: &[u64], ways: u64) -> Vec<RefLine> {
    let needed: BTreeSet<u64> = ks.iter().map(|k| k.div_ceil(ways)).collect();
    needed
        .iter()
        .map(|&s| RefLine {
            at: s as f64,
            label: format!(
                "{s} set{} {} lines",
                if s == 1 { " holds" } else { "s hold" },
                s * ways
            ),
            // Mid-height, between the misses at 1 and at 0, where no marker sits.
            label_y: Some(0.55),
        })
        .collect()
}

/// The set/GCD model per stride, as recorded with a probe of that stride.
fn set_table(probes: &[Probe], l1: &CacheLevel) -> Table {
    let mut strides: Vec<(i64, Option<&Probe>)> = Vec::new();
    for s in probes
        .iter()
        .map(|p| p.stride_bytes)
        .collect::<BTreeSet<_>>()
    {
        let with_model = probes
            .iter()
            .find(|p| p.stride_bytes == s && p.model(0).is_some());
        strides.push((s, with_model));
    }
    let dash = || "—".to_string();
    let rows = strides
        .into_iter()
        .map(|(s, probe)| {
            let m = probe.and_then(|p| p.model(0));
            vec![
                format!("{s} B"),
                match m {
                    Some(m) => m
                        .stride_lines
                        .map(|l| l.to_string())
                        .unwrap_or_else(|| "not a whole number of lines".into()),
                    None => dash(),
                },
                m.and_then(|m| m.gcd)
                    .map(|g| g.to_string())
                    .unwrap_or_else(dash),
                m.and_then(|m| m.closed_form_sets)
                    .map(|n| n.to_string())
                    .unwrap_or_else(dash),
                m.map(|m| m.long_run_sets.to_string()).unwrap_or_else(dash),
            ]
        })
        .collect();
    Table {
        caption: format!(
            "The set/GCD model for {} ({} sets, {} B lines)",
            l1.name, l1.sets, l1.line
        ),
        headers: vec![
            "stride".into(),
            "stride in lines".into(),
            "gcd(lines, sets)".into(),
            "sets / gcd (closed form)".into(),
            format!("sets touched by {LONG_RUN_ACCESSES} accesses (enumerated)"),
        ],
        rows,
    }
}
