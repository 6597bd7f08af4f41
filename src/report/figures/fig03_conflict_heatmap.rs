//! Figure 3: the conflict-probe heat map, stride (with ±1 controls) × K → ns per load.
//! One figure of the report, built from records alone.

use std::collections::BTreeSet;

use super::conflict::{Probe, predicted_cyclic_misses, probes};
use super::{Built, FigureDef, Outcome, Table, est_cell, omitted, prov_timed};
use crate::report::chart::{Figure, HeatPanel, Panel, format_number};
use crate::report::data;
use crate::results::ResultsDocument;

const ID: &str = "fig03-conflict-heatmap";
const TITLE: &str = "Conflict-probe heat map";

/// Figure 3: the conflict-probe heat map, stride (with ±1 controls) × K → ns per load.
pub const FIGURE: FigureDef = FigureDef {
    id: ID,
    title: TITLE,
    section: "conflict",
    build: conflict_heatmap,
};

fn conflict_heatmap(doc: &ResultsDocument) -> Outcome {
    let probes = probes(doc);
    let timed: Vec<&Probe> = probes.iter().filter(|p| p.ns.is_some()).collect();
    if timed.is_empty() {
        return omitted(
            ID,
            TITLE,
            "no timed `conflict` probe points in this results file",
        );
    }
    let levels = data::data_levels(doc);
    let strides: Vec<i64> = timed
        .iter()
        .map(|p| p.stride_bytes)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let ks: Vec<u64> = timed
        .iter()
        .map(|p| p.k)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let value = |s: i64, k: u64| {
        timed
            .iter()
            .find(|p| p.stride_bytes == s && p.k == k)
            .and_then(|p| p.ns.map(|e| e.value))
    };
    let values: Vec<Vec<Option<f64>>> = ks
        .iter()
        .map(|&k| strides.iter().map(|&s| value(s, k)).collect())
        .collect();
    let l1 = levels.first();
    let conflicting = |s: i64| l1.is_some_and(|l| s % l.set_span() as i64 == 0);
    // A cell the set model says fits the L1 (no predicted L1 miss) but that is at least twice
    // as slow as the typical fitting cell is slowed by something else — the data TLB when the
    // K loads sit on K different pages.
    let fits_l1 = |s: i64, k: u64| predicted_cyclic_misses(&probes, s, k).first() == Some(&0.0);
    let fitting: Vec<f64> = strides
        .iter()
        .flat_map(|&s| ks.iter().map(move |&k| (s, k)))
        .filter(|&(s, k)| fits_l1(s, k))
        .filter_map(|(s, k)| value(s, k))
        .collect();
    let typical = data::median(&fitting);
    let mut marks = Vec::new();
    for (c, &s) in strides.iter().enumerate() {
        for (r, &k) in ks.iter().enumerate() {
            if fits_l1(s, k)
                && let (Some(v), Some(t)) = (value(s, k), typical)
                && v >= 2.0 * t
            {
                marks.push((c, r, "not L1: TLB?".to_string()));
            }
        }
    }
    let divider = l1.and_then(|l| {
        ks.iter()
            .position(|&k| k > u64::from(l.ways))
            .map(|r| (r, format!("{} ways = {}", l.name, l.ways)))
    });
    let columns: Vec<String> = strides
        .iter()
        .map(|&s| {
            if conflicting(s) {
                format!("{s} B")
            } else {
                format!("{s} B (ctl)")
            }
        })
        .collect();
    let panel = HeatPanel {
        title: "ns per dependent load".into(),
        x_label: "stride (bytes); ctl = ±1-element control".into(),
        y_label: "K (loads in the cycle)".into(),
        columns,
        rows: ks.iter().map(|k| k.to_string()).collect(),
        values,
        value_label: "ns per load (timed)".into(),
        divider,
        marks: marks.clone(),
    };
    let mut rows = Vec::new();
    for &k in &ks {
        let mut row = vec![k.to_string()];
        for &s in &strides {
            row.push(est_cell(
                timed
                    .iter()
                    .find(|p| p.stride_bytes == s && p.k == k)
                    .and_then(|p| p.ns),
            ));
        }
        rows.push(row);
    }
    let mut headers = vec!["K".to_string()];
    headers.extend(strides.iter().map(|s| format!("{s} B")));
    let tlb_note = if marks.is_empty() {
        "No cell slowed down where the L1 model says the lines fit, so no TLB cliff shows at \
         these strides and K."
            .to_string()
    } else {
        format!(
            "{} cell(s) are ≥ 2× slower than the typical cell that fits the L1 ({} ns) although \
             the model says their lines fit the L1 sets (marked \"not L1: TLB?\"): the data TLB, \
             not the cache.",
            marks.len(),
            typical.map(format_number).unwrap_or_default()
        )
    };
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Conflict probes: stride × K".into(),
            provenance: format!(
                "{}; ways from the recorded geometry ({})",
                prov_timed(doc),
                data::geometry_summary(&levels[..levels.len().min(1)])
            ),
            panels: vec![Panel::Heat(panel)],
            panel_width: 1000,
            panel_height: 420,
        },
        tables: vec![Table {
            caption: "ns per load (timed, median and CI)".into(),
            headers,
            rows,
        }],
        look_for: format!(
            "Below the red line K fits the ways of one set; above it, power-of-two columns turn \
             dark while their controls stay light. {tlb_note}"
        ),
        notes: Vec::new(),
    }))
}
