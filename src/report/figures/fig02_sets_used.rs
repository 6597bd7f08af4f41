//! Figure 2: misses and time vs the number of L1 sets the stride really uses.
//! One figure of the report, built from records alone.

use std::collections::BTreeSet;

use super::conflict::{Probe, k_colour, probes};
use super::{
    Built, FigureDef, Outcome, SIM_BASE, Table, misses_per_access, omitted, prov_sim, prov_timed,
};
use crate::cache::model;
use crate::report::chart::{Axis, Figure, LinePanel, Panel, RefLine, Series, SeriesKind, XY};
use crate::report::data;
use crate::results::ResultsDocument;

const ID: &str = "fig02-sets-used";
const TITLE: &str = "Miss rate and time vs sets used";

/// Figure 2: misses and time vs the number of L1 sets the stride really uses.
pub const FIGURE: FigureDef = FigureDef {
    id: ID,
    title: TITLE,
    section: "conflict",
    build: sets_used,
};

fn sets_used(doc: &ResultsDocument) -> Outcome {
    let probes = probes(doc);
    let levels = data::data_levels(doc);
    let Some(l1) = levels.first() else {
        return omitted(ID, TITLE, "no cache geometry recorded");
    };
    if probes.is_empty() {
        return omitted(ID, TITLE, "no `conflict` probe points in this results file");
    }
    let ks: Vec<u64> = probes
        .iter()
        .map(|p| p.k)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let used = |p: &Probe| model::distinct_sets(SIM_BASE, p.stride_bytes, p.k, l1.line, l1.sets);
    let mut miss_series = Vec::new();
    let mut time_series = Vec::new();
    for &k in &ks {
        let colour = k_colour(&ks, k);
        let mut m: Vec<XY> = Vec::new();
        let mut t: Vec<XY> = Vec::new();
        for p in probes.iter().filter(|p| p.k == k) {
            let x = used(p) as f64;
            if let Some(v) = misses_per_access(p.record, 0) {
                m.push(XY::new(x, v));
            }
            if let Some(e) = p.ns {
                t.push(XY::with_ci(x, e.value, e.ci()));
            }
        }
        // Several strides can use the same number of sets: keep one point per x (the mean).
        for pts in [&mut m, &mut t] {
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
        miss_series.push(Series {
            name: format!("K={k}"),
            colour,
            kind: SeriesKind::Data,
            points: m,
        });
        time_series.push(Series {
            name: format!("K={k}"),
            colour,
            kind: SeriesKind::Data,
            points: t,
        });
    }
    let ways = u64::from(l1.ways);
    let needed: BTreeSet<u64> = ks.iter().map(|k| k.div_ceil(ways)).collect();
    let vlines: Vec<RefLine> = needed
        .iter()
        .map(|&s| RefLine {
            at: s as f64,
            label: format!(
                "{s} set{} {} lines",
                if s == 1 { " holds" } else { "s hold" },
                s * ways
            ),
        })
        .collect();
    let x_label = format!("{} sets the K loads use (model, of {})", l1.name, l1.sets);
    let mut time_vlines = vlines.clone();
    time_vlines.iter_mut().for_each(|v| v.label.clear());
    let panels = vec![
        Panel::Lines(LinePanel {
            title: format!("{} misses per load (simulated)", l1.name),
            x: Axis {
                from_zero: false,
                ticks: crate::report::chart::TickFormat::Integer,
                ..Axis::linear(&x_label)
            },
            y: Axis::fraction("misses per load"),
            series: miss_series,
            vlines,
            hlines: Vec::new(),
        }),
        Panel::Lines(LinePanel {
            title: "time per load (timed)".into(),
            x: Axis {
                from_zero: false,
                ticks: crate::report::chart::TickFormat::Integer,
                ..Axis::linear(&x_label)
            },
            y: Axis::linear("ns per load"),
            series: time_series,
            vlines: time_vlines,
            hlines: Vec::new(),
        }),
    ];
    let mut rows = Vec::new();
    let strides: BTreeSet<i64> = probes.iter().map(|p| p.stride_bytes).collect();
    let line = i64::from(l1.line);
    for s in strides {
        let lines = (s % line == 0).then_some(s / line);
        rows.push(vec![
            format!("{s} B"),
            lines
                .map(|l| l.to_string())
                .unwrap_or_else(|| "not a whole number of lines".into()),
            lines
                .map(|l| model::gcd(l.unsigned_abs(), u64::from(l1.sets)).to_string())
                .unwrap_or_else(|| "—".into()),
            model::closed_form_sets(s, l1.line, l1.sets)
                .map(|n| n.to_string())
                .unwrap_or_else(|| "—".into()),
            model::distinct_sets(SIM_BASE, s, 4096, l1.line, l1.sets).to_string(),
        ]);
    }
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Miss rate and time vs the number of sets a stride really uses".into(),
            provenance: format!(
                "x: model (distinct {} sets of K accesses); left: {}; right: {}",
                l1.name,
                prov_sim(doc),
                prov_timed(doc)
            ),
            panels,
            panel_width: 600,
            panel_height: 380,
        },
        tables: vec![Table {
            caption: format!(
                "The set/GCD model for {} ({} sets, {} B lines)",
                l1.name, l1.sets, l1.line
            ),
            headers: [
                "stride",
                "stride in lines",
                "gcd(lines, sets)",
                "sets / gcd (closed form)",
                "sets touched by 4096 accesses (enumerated)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: format!(
            "Left of a dashed line, K lines do not fit into the sets the stride uses \
             ({} ways each): misses and time jump. Right of it the same K loads fit.",
            l1.ways
        ),
        notes: Vec::new(),
    }))
}
