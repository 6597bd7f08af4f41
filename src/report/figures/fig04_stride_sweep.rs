//! Figure 4: time per access vs step (`stride-sum`).
//! One figure of the report, built from records alone.

use super::{
    Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted, prov_sim,
    prov_timed,
};
use crate::report::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY, format_bytes,
};
use crate::report::data;
use crate::results::{PointRecord, ResultsDocument};

const ID: &str = "fig04-stride-sweep";
const TITLE: &str = "Time per access vs step";

/// Figure 4: time per access vs step (`stride-sum`).
pub const FIGURE: FigureDef = FigureDef {
    id: ID,
    title: TITLE,
    section: "stride",
    build: stride_sweep,
};

fn stride_sweep(doc: &ResultsDocument) -> Outcome {
    let recs: Vec<&PointRecord> = data::of_kernel(doc, "stride-sum")
        .filter(|r| data::int(r, "stride").is_some())
        .collect();
    if recs.iter().all(|r| data::ns_per_element(r).is_none()) {
        return omitted(
            ID,
            TITLE,
            "no timed `stride-sum` points in this results file",
        );
    }
    let levels = data::data_levels(doc);
    let bytes = |r: &PointRecord| data::int(r, "stride").unwrap_or(0) as f64 * 8.0;
    let mut timed: Vec<XY> = recs
        .iter()
        .filter_map(|r| {
            let e = data::ns_per_element(r)?;
            Some(XY::with_ci(bytes(r), e.value, e.ci()))
        })
        .collect();
    timed.sort_by(|a, b| a.x.total_cmp(&b.x));
    let mut sim_series = Vec::new();
    for (li, level) in levels.iter().enumerate().take(3) {
        let mut pts: Vec<XY> = recs
            .iter()
            .filter_map(|r| Some(XY::new(bytes(r), misses_per_access(r, li)?)))
            .collect();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        if !pts.is_empty() {
            sim_series.push(Series {
                name: format!("{} (sim)", level.name),
                colour: PALETTE[li + 1],
                kind: SeriesKind::Data,
                points: pts,
            });
        }
    }
    let line = levels.first().map(|l| f64::from(l.line)).unwrap_or(64.0);
    let xs: Vec<f64> = timed.iter().map(|p| p.x).collect();
    sim_series.push(Series {
        name: "model: min(1, step / line)".into(),
        colour: PALETTE[0],
        kind: SeriesKind::Model,
        points: xs
            .iter()
            .map(|&x| XY::new(x, (x / line).min(1.0)))
            .collect(),
    });
    let page = doc
        .info
        .get("page_size")
        .and_then(|v| v.as_u64())
        .unwrap_or(4096) as f64;
    let vlines = vec![
        RefLine {
            at: line,
            label: format!("line {}", format_bytes(line)),
        },
        RefLine {
            at: page,
            label: format!("page {}", format_bytes(page)),
        },
    ];
    let panels = vec![
        Panel::Lines(LinePanel {
            title: "time per element read (timed)".into(),
            x: Axis::log2_bytes("step (bytes, log2)"),
            y: Axis::linear("ns per element"),
            series: vec![Series {
                name: "stride-sum".into(),
                colour: PALETTE[0],
                kind: SeriesKind::Data,
                points: timed,
            }],
            vlines: vlines.clone(),
            hlines: Vec::new(),
        }),
        Panel::Lines(LinePanel {
            title: "misses per element (simulated)".into(),
            x: Axis::log2_bytes("step (bytes, log2)"),
            y: Axis::linear("misses per element read"),
            series: sim_series,
            vlines,
            hlines: Vec::new(),
        }),
    ];
    let mut sorted = recs.clone();
    sorted.sort_by_key(|r| data::int(r, "stride"));
    let rows = sorted
        .iter()
        .map(|r| {
            vec![
                format!("{} B", bytes(r)),
                data::int(r, "len")
                    .map(|l| format_bytes(l as f64 * 8.0))
                    .unwrap_or_else(|| "—".into()),
                est_cell(data::ns_per_element(r)),
                cell(data::gb_per_s(r).map(|e| e.value)),
                cell(misses_per_access(r, 0)),
                cell(misses_per_access(r, 1)),
            ]
        })
        .collect();
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Time per access vs step".into(),
            provenance: format!(
                "left: {}; right: {}; dashed: model",
                prov_timed(doc),
                prov_sim(doc)
            ),
            panels,
            panel_width: 600,
            panel_height: 380,
        },
        tables: vec![Table {
            caption: "stride-sum: one element every `step` bytes".into(),
            headers: [
                "step",
                "buffer",
                "ns/element (timed, CI)",
                "GB/s of useful data",
                "L1 misses/element (sim)",
                "L2 misses/element (sim)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: format!(
            "Below the {} line size, neighbouring elements share a line: cost grows with the \
             step. From one line per element on, every access is a miss and the curve flattens \
             — until page and TLB effects add another step.",
            format_bytes(line)
        ),
        notes: Vec::new(),
    }))
}
