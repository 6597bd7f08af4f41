//! Figure 5: working-set latency of the pointer chase, with the cache sizes as vertical lines.
//! One figure of the report, built from records alone.

use super::{
    Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted, prov_timed,
};
use crate::report::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY, format_bytes,
};
use crate::report::data;
use crate::results::{PointRecord, ResultsDocument};

/// Figure 5: working-set latency of the pointer chase, with the cache sizes as vertical lines.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig05-working-set",
    title: "Working-set latency",
    section: "latency",
    build: working_set,
};

fn working_set(doc: &ResultsDocument) -> Outcome {
    let mut recs: Vec<&PointRecord> = data::of_kernel(doc, "chase")
        .filter(|r| data::int(r, "bytes").is_some() && data::ns_per_element(r).is_some())
        .collect();
    if recs.is_empty() {
        return omitted(&FIGURE, "no timed `chase` points in this results file");
    }
    recs.sort_by_key(|r| data::int(r, "bytes"));
    let levels = data::data_levels(doc);
    let points: Vec<XY> = recs
        .iter()
        .filter_map(|r| {
            let e = data::ns_per_element(r)?;
            Some(XY::with_ci(data::int(r, "bytes")? as f64, e.value, e.ci()))
        })
        .collect();
    let vlines = levels
        .iter()
        .map(|l| RefLine {
            at: l.size as f64,
            label: format!("{} {}", l.name, format_bytes(l.size as f64)),
            label_y: None,
        })
        .collect();
    let rows = recs
        .iter()
        .map(|r| {
            vec![
                format_bytes(data::int(r, "bytes").unwrap_or(0) as f64),
                est_cell(data::ns_per_element(r)),
                cell(misses_per_access(r, 0)),
                cell(misses_per_access(r, 1)),
                cell(misses_per_access(r, 2)),
            ]
        })
        .collect();
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Working-set latency (random pointer chase)".into(),
            provenance: format!(
                "{}; dashed lines: cache sizes from the recorded geometry",
                prov_timed(doc)
            ),
            panels: vec![Panel::Lines(LinePanel {
                title: "ns per dependent load vs working set".into(),
                x: Axis::log2_bytes("working set (bytes, log2)"),
                y: Axis::log10("ns per load (log)"),
                series: vec![Series {
                    name: "chase".into(),
                    colour: PALETTE[0],
                    kind: SeriesKind::Data,
                    points,
                }],
                vlines,
                hlines: Vec::new(),
            })],
            panel_width: 1000,
            panel_height: 420,
        },
        tables: vec![Table {
            caption: "Pointer chase: one dependent load per line, random order".into(),
            headers: [
                "working set",
                "ns/load (timed, CI)",
                "L1 misses/load (sim)",
                "L2 misses/load (sim)",
                "L3 misses/load (sim)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: "Plateaus where the working set fits a level, steps just after each dashed \
                   size. A step that lands far from a dashed line means the recorded geometry \
                   (or the VM's claim) is off."
            .into(),
        notes: Vec::new(),
    }))
}
