//! Figure 11: the 3C split (compulsory / capacity / conflict) of L1 misses per kernel.
//! One figure of the report, built from records alone.

use super::common::records_or_omit;
use super::labels::short_label;
use super::{Built, FigureDef, Outcome, Table, prov_sim};
use crate::chart::{Axis, BarPanel, BarSeries, Figure, Panel, colour_for};
use crate::claims::Claim;
use crate::data;
use stridelab_core::results::{PointRecord, ResultsDocument, SimulatedLevel};

/// Figure 11: the 3C split (compulsory / capacity / conflict) of L1 misses per kernel.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig11-3c",
    title: "3C breakdown",
    section: "three-c",
    build: three_c,
};

fn three_c(doc: &ResultsDocument) -> Outcome {
    use stridelab_core::vocab::Family;
    let keep = |r: &PointRecord| {
        matches!(
            r.family,
            Family::Traverse | Family::Transpose | Family::Blocked | Family::View
        ) && data::sim_level(r, 0).is_some_and(|l| data::accesses(l) > 0)
    };
    let reason = "no simulated misses for traversal, transpose, view or blocked kernels";
    let recs = match records_or_omit(&FIGURE, doc, keep, reason) {
        Ok(recs) => recs,
        Err(omitted) => return omitted,
    };
    let categories: Vec<String> = recs.iter().map(|r| short_label(r)).collect();
    let series = cause_series(&recs);
    let level_name = recs
        .first()
        .and_then(|r| l1(r))
        .map(|l| l.name.clone())
        .unwrap_or_else(|| "L1".into());
    let rows = (recs.iter().zip(&categories))
        .map(|(r, c)| cause_row(r, c))
        .collect();
    let height = (recs.len() as u32 * 24 + 110).max(300);
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: format!("Where the {level_name} misses come from: the 3C split"),
            provenance: format!(
                "{}; compulsory = first touch, capacity = a fully associative LRU cache of the same size misses too, conflict = the rest",
                prov_sim(doc)
            ),
            panels: vec![Panel::Bars(BarPanel {
                title: format!("{level_name} misses per access, stacked"),
                categories,
                value_axis: Axis::linear("misses per access"),
                series,
                stacked: true,
                vlines: Vec::new(),
            })],
            panel_width: 1100,
            panel_height: height,
        },
        tables: vec![Table {
            caption: format!("{level_name} misses by cause (simulated counts)"),
            headers: [
                "point",
                "accesses",
                "misses",
                "compulsory",
                "capacity",
                "conflict",
                "scope",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: look_for(&recs, &level_name),
        notes: Vec::new(),
    }))
}

/// Which points' misses are mostly conflict or mostly capacity, from the simulated split.
fn look_for(recs: &[&PointRecord], level: &str) -> Vec<Claim> {
    let mostly = |part: fn(&SimulatedLevel) -> u64| -> Vec<String> {
        recs.iter()
            .filter(|r| l1(r).is_some_and(|l| l.misses > 0 && 2 * part(l) > l.misses))
            .map(|r| short_label(r))
            .collect()
    };
    const SHOWN: usize = 8;
    let list = |names: Vec<String>| match names.len() {
        0 => "none".to_string(),
        n if n <= SHOWN => names.join(", "),
        n => format!("{} and {} more", names[..SHOWN].join(", "), n - SHOWN),
    };
    vec![
        Claim::guide(
            "three-c.reading",
            "Compulsory misses are first touches; capacity misses are those a fully \
             associative cache of the same size would have too (a smaller working set or \
             blocking removes them); conflict misses are the rest, lines crowding too few \
             sets, which a layout spreading them over more sets removes from the simulation. \
             Whether such a layout is faster is a question for the timer: the padding figure \
             (Row vs column order) shows what this run timed, where it timed several leading \
             dimensions.",
        ),
        Claim::derived(
            "three-c.mostly",
            format!(
                "More than half of the {level} misses are conflict misses at: {}; capacity \
                 misses at: {} (simulated).",
                list(mostly(|l| l.conflict)),
                list(mostly(|l| l.capacity))
            ),
        ),
    ]
}

/// The simulated first level of a point.
fn l1(r: &PointRecord) -> Option<&SimulatedLevel> {
    data::sim_level(r, 0)
}

/// One stacked series per cause: its misses per access at the first level, per point.
fn cause_series(recs: &[&PointRecord]) -> Vec<BarSeries> {
    let per = |r: &PointRecord, f: fn(&SimulatedLevel) -> u64| {
        l1(r).map(|l| f(l) as f64 / data::accesses(l) as f64)
    };
    type Part = (&'static str, fn(&SimulatedLevel) -> u64);
    let parts: [Part; 3] = [
        ("compulsory", |l| l.compulsory),
        ("capacity", |l| l.capacity),
        ("conflict", |l| l.conflict),
    ];
    parts
        .iter()
        .enumerate()
        .map(|(i, (name, f))| BarSeries {
            name: (*name).into(),
            colour: colour_for(name, i),
            values: recs.iter().map(|r| per(r, *f)).collect(),
            ci: vec![None; recs.len()],
        })
        .collect()
}

/// A point's table row: its label `category`, the first level's counts and the scope.
fn cause_row(r: &PointRecord, category: &str) -> Vec<String> {
    let l = l1(r);
    vec![
        category.to_string(),
        l.map(|l| data::accesses(l).to_string()).unwrap_or_default(),
        l.map(|l| l.misses.to_string()).unwrap_or_default(),
        l.map(|l| l.compulsory.to_string()).unwrap_or_default(),
        l.map(|l| l.capacity.to_string()).unwrap_or_default(),
        l.map(|l| l.conflict.to_string()).unwrap_or_default(),
        r.simulated
            .as_ref()
            .map(|s| format!("{} ({})", s.scope.kind, s.start))
            .unwrap_or_default(),
    ]
}
