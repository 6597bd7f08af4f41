//! Figure 17: the same strided walk over f64 and f32 elements (`stride-sum dtype=…`), against
//! the step in elements and against the step in bytes.
//!
//! The seeds count strides in elements; a cache sees bytes. Plotted by elements the two element
//! types part (an f32 walk reaches one line per access at 16 elements, an f64 walk at 8);
//! plotted by bytes they fall on one curve. The figure is drawn only when the results hold
//! both element types.

use super::{Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted};
use super::{prov_sim, prov_timed};
use crate::report::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY, format_bytes,
};
use crate::report::data;
use crate::results::{PointRecord, ResultsDocument};

/// Figure 17: strides in elements and in bytes, f64 beside f32.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig17-element-types",
    title: "The same walk over f64 and f32: strides in elements vs in bytes",
    section: "stride",
    build: element_types,
};

/// The element types drawn, with their colours.
const TYPES: [(&str, usize); 2] = [("f64", 0), ("f32", 3)];

fn element_types(doc: &ResultsDocument) -> Outcome {
    let recs: Vec<&PointRecord> = data::of_kernel(doc, "stride-sum")
        .filter(|r| data::int(r, "stride").is_some() && data::ns_per_element(r).is_some())
        .collect();
    let present = |name: &str| recs.iter().any(|r| data::element(r).0 == name);
    if !TYPES.iter().all(|(name, _)| present(name)) {
        return omitted(
            &FIGURE,
            "needs timed `stride-sum` points of both dtype=f64 and dtype=f32",
        );
    }
    let line = data::data_levels(doc)
        .first()
        .map(|l| f64::from(l.line))
        .unwrap_or(64.0);
    let line_mark = |per_element: f64, what: &str| RefLine {
        at: per_element,
        label: what.to_string(),
        label_y: None,
    };
    let by_elements = LinePanel {
        title: "ns per element against the step in elements (timed)".into(),
        x: Axis::log2("step (elements, log2)"),
        y: Axis::linear("ns per element"),
        series: series(&recs, |r| stride(r) as f64, Measure::Timed),
        vlines: vec![
            line_mark(line / 8.0, &format!("{} f64 = a line", line / 8.0)),
            line_mark(line / 4.0, &format!("{} f32 = a line", line / 4.0)),
        ],
        hlines: Vec::new(),
    };
    let by_bytes = LinePanel {
        title: "ns per element against the step in bytes (timed)".into(),
        x: Axis::log2_bytes("step (bytes, log2)"),
        y: Axis::linear("ns per element"),
        series: series(&recs, step_bytes, Measure::Timed),
        vlines: vec![line_mark(line, &format!("line {}", format_bytes(line)))],
        hlines: Vec::new(),
    };
    let mut simulated = series(&recs, step_bytes, Measure::L1Misses);
    // The two coincide: f32 as dots over f64's line, so both stay visible.
    if let Some(f32_series) = simulated.get_mut(1) {
        f32_series.kind = SeriesKind::Markers;
    }
    let misses = LinePanel {
        title: "L1 misses per element (simulated)".into(),
        x: Axis::log2_bytes("step (bytes, log2)"),
        y: Axis::linear("misses per element read"),
        series: simulated,
        vlines: vec![line_mark(line, &format!("line {}", format_bytes(line)))],
        hlines: Vec::new(),
    };
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: FIGURE.title.into(),
            provenance: format!(
                "left and middle: {}; right: {}",
                prov_timed(doc),
                prov_sim(doc)
            ),
            panels: vec![
                Panel::Lines(by_elements),
                Panel::Lines(by_bytes),
                Panel::Lines(misses),
            ],
            panel_width: 420,
            panel_height: 340,
        },
        tables: vec![table(&recs)],
        look_for: format!(
            "Left, by elements, the f32 walk reaches one {} line per element at twice the step \
             of the f64 walk. Middle and right, by bytes, the two walks fall on one curve (the \
             simulated misses coincide exactly: f32 dots on the f64 line). The cache sees \
             bytes, so a stride written in elements means twice as much to an f64 array as \
             to an f32 one.",
            format_bytes(line)
        ),
        notes: Vec::new(),
    }))
}

fn stride(r: &PointRecord) -> u64 {
    data::int(r, "stride").unwrap_or(0)
}

/// The step in bytes: the stride in elements times the element's bytes.
fn step_bytes(r: &PointRecord) -> f64 {
    stride(r) as f64 * f64::from(data::element(r).1)
}

/// What a panel plots per point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    /// Timed ns per element, with its CI.
    Timed,
    /// Simulated L1 misses per element.
    L1Misses,
}

/// One series per element type: `measure` at `x(record)`.
fn series(recs: &[&PointRecord], x: impl Fn(&PointRecord) -> f64, measure: Measure) -> Vec<Series> {
    TYPES
        .iter()
        .map(|&(name, colour)| {
            let mut points: Vec<XY> = recs
                .iter()
                .filter(|r| data::element(r).0 == name)
                .filter_map(|r| {
                    if measure == Measure::Timed {
                        let e = data::ns_per_element(r)?;
                        Some(XY::with_ci(x(r), e.value, e.ci()))
                    } else {
                        Some(XY::new(x(r), misses_per_access(r, 0)?))
                    }
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            Series {
                name: format!("stride-sum dtype={name}"),
                colour: PALETTE[colour],
                kind: SeriesKind::Data,
                points,
            }
        })
        .collect()
}

/// One row per point: the step in elements and in bytes, for each element type.
fn table(recs: &[&PointRecord]) -> Table {
    let mut sorted = recs.to_vec();
    sorted.sort_by_key(|r| (data::element(r).1, stride(r)));
    let rows = sorted
        .iter()
        .map(|r| {
            let (name, bytes) = data::element(r);
            vec![
                name.to_string(),
                stride(r).to_string(),
                format_bytes(step_bytes(r)),
                data::int(r, "len")
                    .map(|l| format_bytes(l as f64 * f64::from(bytes)))
                    .unwrap_or_else(|| "—".into()),
                est_cell(data::ns_per_element(r)),
                cell(misses_per_access(r, 0)),
            ]
        })
        .collect();
    Table {
        caption: "stride-sum over f64 and f32: each step in elements and in bytes".into(),
        headers: [
            "dtype",
            "step (elements)",
            "step (bytes)",
            "buffer",
            "ns/element (timed, CI)",
            "L1 misses/element (sim)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}
