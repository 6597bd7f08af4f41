//! Figure 17: the same strided walk over f64 and f32 elements (`stride-sum dtype=…`), against
//! the step in elements and against the step in bytes.
//!
//! The seeds count strides in elements; a cache sees bytes. Plotted by elements the two element
//! types part (an f32 walk reaches one line per access at 16 elements, an f64 walk at 8);
//! plotted by bytes the textbook has them on one curve, and the reading guide says at which
//! steps this run's times agree. The figure is drawn only when the results hold both types.

use super::fig04_stride_sweep::and_list;
use super::{Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted};
use super::{prov_sim, prov_timed};
use crate::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY, format_bytes,
    format_number, merge_coinciding,
};
use crate::claims::{Claim, CurveAgreement, SAME_CURVE, Verdict, compare_curves, slower_or_faster};
use crate::data;
use stridelab_core::results::{PointRecord, ResultsDocument};

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
    // Identical simulated misses are one line (with f32's extra steps), not two drawn over
    // each other.
    let (simulated, coinciding) =
        merge_coinciding(series(&recs, step_bytes, Measure::L1Misses), 1e-9);
    let misses = LinePanel {
        title: "L1 misses per element (simulated)".into(),
        x: Axis::log2_bytes("step (bytes, log2)"),
        y: Axis::linear("misses per element read"),
        series: simulated,
        vlines: vec![line_mark(line, &format!("line {}", format_bytes(line)))],
        hlines: Vec::new(),
    };
    let by_bytes_points = |name: &str| -> Vec<(f64, f64)> {
        let mut pts: Vec<(f64, f64)> = recs
            .iter()
            .filter(|r| data::element(r).0 == name)
            .filter_map(|r| Some((step_bytes(r), data::ns_per_element(r)?.value)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts
    };
    let agreement = compare_curves(&by_bytes_points("f32"), &by_bytes_points("f64"));
    let look_for = vec![
        Claim::derived(
            "elements.by-elements",
            format!(
                "Left: one {} line holds {} f64 or {} f32, so the f64 walk reaches one line per \
                 element at a step of {} elements and the f32 walk at {} (dashed marks).",
                format_bytes(line),
                line / 8.0,
                line / 4.0,
                line / 8.0,
                line / 4.0
            ),
        ),
        one_curve_claim(&agreement),
        Claim::derived(
            "elements.simulated",
            if coinciding.is_empty() {
                "Right: the simulated misses of the two walks differ at some shared step, so \
                 each is drawn."
                    .to_string()
            } else {
                "Right: the simulated misses of the two walks are identical at every step both \
                 have, so they are drawn as one line (with the f32 walk's extra steps)."
                    .to_string()
            },
        ),
    ];
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
        look_for,
        notes: Vec::new(),
    }))
}

/// "By bytes the two walks fall on one curve", held against the timed points at the byte
/// steps both element types have.
fn one_curve_claim(agreement: &CurveAgreement) -> Claim {
    let expectation = "a cache sees bytes, so plotted by the step in bytes the f64 and f32 \
                       walks fall on one curve.";
    let within = format!("{:.0}%", (agreement.within - 1.0) * 100.0);
    let apart: Vec<String> = agreement
        .apart
        .iter()
        .map(|&(x, f32_ns, f64_ns)| {
            format!(
                "{} (f32 {} ns, f64 {} ns: f32 {})",
                format_bytes(x),
                format_number(f32_ns),
                format_number(f64_ns),
                slower_or_faster(f32_ns, f64_ns)
            )
        })
        .collect();
    let n = agreement.shared;
    let observed = match agreement.verdict() {
        Verdict::Agrees => format!(
            "middle: both walks were timed at {n} byte steps, and at every one of them they \
             differ by at most {within} (timed)"
        ),
        Verdict::Partly => format!(
            "middle: both walks were timed at {n} byte steps; at {} of them they differ by at \
             most {within}, but at {} they differ by more than {:.0}%: {} (timed)",
            n - agreement.apart.len(),
            agreement.apart.len(),
            (SAME_CURVE - 1.0) * 100.0,
            and_list(&apart)
        ),
        Verdict::Disagrees => format!(
            "middle: both walks were timed at {n} byte steps, and at every one of them they \
             differ by more than {:.0}%: {} (timed)",
            (SAME_CURVE - 1.0) * 100.0,
            and_list(&apart)
        ),
        Verdict::Untested => "no byte step was timed in both element types".to_string(),
    };
    Claim::textbook(
        "elements.one-curve",
        expectation,
        agreement.verdict(),
        observed,
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_curve_claim_counts_the_steps_in_a_sentence() {
        let f64s = [(8.0, 0.30), (16.0, 0.70), (64.0, 2.20)];
        // (f32 walk, verdict, the words the observed part must read)
        type Case<'a> = (&'a [(f64, f64)], Verdict, &'a str);
        let cases: &[Case] = &[
            (
                &[(8.0, 0.31), (16.0, 0.72), (64.0, 2.25)],
                Verdict::Agrees,
                "both walks were timed at 3 byte steps, and at every one of them they differ \
                 by at most 3%",
            ),
            (
                &[(8.0, 0.90), (16.0, 0.72), (64.0, 2.25)],
                Verdict::Partly,
                "both walks were timed at 3 byte steps; at 2 of them they differ by at most \
                 3%, but at 1 they differ by more than 20%: 8 B (f32 0.900 ns, f64 0.300 ns: \
                 f32 3× slower)",
            ),
            (
                &[(8.0, 0.90), (16.0, 2.0), (64.0, 9.0)],
                Verdict::Disagrees,
                "both walks were timed at 3 byte steps, and at every one of them they differ \
                 by more than 20%",
            ),
        ];
        for &(f32s, verdict, words) in cases {
            let claim = one_curve_claim(&compare_curves(f32s, &f64s));
            assert_eq!(claim.verdict(), Some(verdict), "{}", claim.text());
            assert!(claim.text().contains(words), "{}", claim.text());
        }
    }
}
