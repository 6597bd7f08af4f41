//! Figure 4: time per access vs step (`stride-sum`).
//! One figure of the report, built from records alone.

use super::{
    Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted, prov_sim,
    prov_timed,
};
use crate::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY, format_bytes,
    format_number, merge_coinciding,
};
use crate::claims::{
    Claim, LEVEL_SPREAD, SAME_SPEED, Verdict, levels_off_from, sequence, value_range,
};
use crate::data;
use stridelab_core::results::{PointRecord, ResultsDocument};

/// Figure 4: time per access vs step (`stride-sum`).
pub const FIGURE: FigureDef = FigureDef {
    id: "fig04-stride-sweep",
    title: "Time per access vs step",
    section: "stride",
    build: stride_sweep,
};

fn stride_sweep(doc: &ResultsDocument) -> Outcome {
    // f32 walks have a figure of their own (figure 17), which sets them beside these.
    let recs: Vec<&PointRecord> = data::of_kernel(doc, "stride-sum")
        .filter(|r| data::int(r, "stride").is_some() && data::element(r).1 == 8)
        .collect();
    if recs.iter().all(|r| data::ns_per_element(r).is_none()) {
        return omitted(&FIGURE, "no timed `stride-sum` points in this results file");
    }
    let levels = data::data_levels(doc);
    let line = levels.first().map(|l| f64::from(l.line)).unwrap_or(64.0);
    let timed = timed_points(&recs);
    let mut sim_series: Vec<Series> = (levels.iter().enumerate().take(3))
        .filter_map(|(li, level)| {
            let name = if data::implausible(level) {
                format!("{} (sim; implausible level)", level.name)
            } else {
                format!("{} (sim)", level.name)
            };
            simulated_series(&recs, li, &name)
        })
        .collect();
    sim_series.push(model_series(&timed, line));
    // Levels that miss alike (every miss is a new line at every level) are one line, not three
    // drawn over each other.
    let (sim_series, coinciding) = merge_coinciding(sim_series, 1e-9);
    let page = doc
        .info
        .get("page_size")
        .and_then(|v| v.as_u64())
        .unwrap_or(4096) as f64;
    let mut look_for = step_claims(&timed, line);
    look_for.extend(simulated_claim(&coinciding, &recs));
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "stride-sum: one f64 every `step` bytes".into(),
            provenance: format!(
                "left: {}; right: {}; model min(1, step / line), dashed where it differs from \
                 the simulation",
                prov_timed(doc),
                prov_sim(doc)
            ),
            panels: panels(timed, sim_series, ref_lines(line, page)),
            panel_width: 600,
            panel_height: 380,
        },
        tables: vec![table(&recs)],
        look_for,
        notes: Vec::new(),
    }))
}

/// The two textbook expectations of a strided walk held against the timed points (sorted by
/// step): the time grows with the step below a line, and levels off from one line on.
fn step_claims(timed: &[XY], line: f64) -> Vec<Claim> {
    let below: Vec<&XY> = timed.iter().filter(|p| p.x <= line).collect();
    let beyond: Vec<(f64, f64)> = timed
        .iter()
        .filter(|p| p.x >= line)
        .map(|p| (p.x, p.y))
        .collect();
    let line_text = format_bytes(line);
    let grows = "below one line per element, neighbouring elements share a line, so the time \
                 per element grows with the step.";
    let below_claim = match below.as_slice() {
        [first, .., last] => {
            let ys: Vec<f64> = below.iter().map(|p| p.y).collect();
            let monotone = ys.windows(2).all(|w| w[1] * SAME_SPEED >= w[0]);
            let growth = last.y / first.y;
            let verdict = if growth <= LEVEL_SPREAD {
                Verdict::Disagrees
            } else if monotone {
                Verdict::Agrees
            } else {
                Verdict::Partly
            };
            Claim::textbook(
                "stride.below-line",
                grows,
                verdict,
                format!(
                    "from {} to {line_text} it goes {} ({}×, timed)",
                    format_bytes(first.x),
                    sequence(&ys, "ns"),
                    format_number(growth)
                ),
            )
        }
        _ => Claim::textbook(
            "stride.below-line",
            grows,
            Verdict::Untested,
            format!("fewer than two steps up to {line_text} were timed"),
        ),
    };
    vec![below_claim, levels_off_claim(&beyond, line)]
}

/// "From one line per element on, the time per element levels off", held against the timed
/// points at and beyond the line.
pub(super) fn levels_off_claim(beyond: &[(f64, f64)], line: f64) -> Claim {
    let expectation = "from one line per element on, every access fetches a line of its own, \
                       so the time per element levels off.";
    let line_text = format_bytes(line);
    let ys: Vec<f64> = beyond.iter().map(|p| p.1).collect();
    let Some(last) = beyond.last().filter(|_| beyond.len() >= 2) else {
        return Claim::textbook(
            "stride.levels-off",
            expectation,
            Verdict::Untested,
            format!("fewer than two steps from {line_text} on were timed"),
        );
    };
    let until = format_bytes(last.0);
    let (verdict, observed) = match levels_off_from(beyond) {
        Some(x) if x <= beyond[0].0 => (
            Verdict::Agrees,
            format!(
                "from {line_text} to {until} it levels off within {} ns (timed)",
                value_range(&ys)
            ),
        ),
        Some(x) => {
            let to = beyond.iter().position(|p| p.0 == x).unwrap_or(0);
            let head: Vec<f64> = ys[..=to].to_vec();
            let tail = &ys[to..];
            let direction = if ys[to] > ys[0] { "rises" } else { "falls" };
            (
                Verdict::Disagrees,
                format!(
                    "the time per element still {direction} from {line_text} to {}: {} ({}×), \
                     and levels off only from {} on, within {} ns up to {until} (timed)",
                    format_bytes(x),
                    sequence(&head, "ns"),
                    format_number(ys[to] / ys[0]),
                    format_bytes(x),
                    value_range(tail)
                ),
            )
        }
        None => (
            Verdict::Disagrees,
            format!(
                "from {line_text} to {until} it does not level off: {} (timed)",
                sequence(&ys, "ns")
            ),
        ),
    };
    Claim::textbook("stride.levels-off", expectation, verdict, observed)
}

/// Which simulated levels (and the model) coincide and are drawn as one line; `None` when
/// every series differs (the legend names each).
fn simulated_claim(coinciding: &[Vec<String>], recs: &[&PointRecord]) -> Option<Claim> {
    if coinciding.is_empty() {
        return None;
    }
    let steps = recs
        .iter()
        .filter(|r| misses_per_access(r, 0).is_some())
        .count();
    let groups: Vec<String> = coinciding.iter().map(|g| and_list(g)).collect();
    Some(Claim::derived(
        "stride.simulated",
        format!(
            "Right: {} are equal at every one of the {steps} simulated steps, so they are drawn \
             as one line.",
            groups.join("; ")
        ),
    ))
}

/// `a, b and c`.
pub(super) fn and_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [head @ .., last] => format!("{} and {last}", head.join(", ")),
    }
}

/// The step of a point in bytes (elements are 8 bytes).
fn step_bytes(r: &PointRecord) -> f64 {
    data::int(r, "stride").unwrap_or(0) as f64 * 8.0
}

/// Timed ns per element by step, smallest step first.
fn timed_points(recs: &[&PointRecord]) -> Vec<XY> {
    let mut timed: Vec<XY> = recs
        .iter()
        .filter_map(|r| {
            let e = data::ns_per_element(r)?;
            Some(XY::with_ci(step_bytes(r), e.value, e.ci()))
        })
        .collect();
    timed.sort_by(|a, b| a.x.total_cmp(&b.x));
    timed
}

/// Simulated misses per element at level `li` by step; None when no point has them.
fn simulated_series(recs: &[&PointRecord], li: usize, name: &str) -> Option<Series> {
    let mut pts: Vec<XY> = recs
        .iter()
        .filter_map(|r| Some(XY::new(step_bytes(r), misses_per_access(r, li)?)))
        .collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    (!pts.is_empty()).then(|| Series {
        name: name.to_string(),
        colour: PALETTE[li + 1],
        kind: SeriesKind::Data,
        points: pts,
    })
}

/// The model: one miss per `line` bytes of step, at most one per element.
fn model_series(timed: &[XY], line: f64) -> Series {
    Series {
        name: "model: min(1, step / line)".into(),
        colour: PALETTE[0],
        kind: SeriesKind::Model,
        points: timed
            .iter()
            .map(|p| XY::new(p.x, (p.x / line).min(1.0)))
            .collect(),
    }
}

/// The line and page sizes as reference lines.
fn ref_lines(line: f64, page: f64) -> Vec<RefLine> {
    vec![
        RefLine {
            at: line,
            label: format!("line {}", format_bytes(line)),
            label_y: None,
        },
        RefLine {
            at: page,
            label: format!("page {}", format_bytes(page)),
            label_y: None,
        },
    ]
}

/// Left: the timed curve; right: the simulated misses with the model.
fn panels(timed: Vec<XY>, sim_series: Vec<Series>, vlines: Vec<RefLine>) -> Vec<Panel> {
    vec![
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
    ]
}

/// The bytes the kernel uses per second: one 8-byte element per `ns per element` (derived
/// from the timed median; the lines fetched around it are not counted, which is the point).
fn useful_gb_per_s(r: &PointRecord) -> Option<f64> {
    data::ns_per_element(r)
        .map(|e| 8.0 / e.value)
        .filter(|v| v.is_finite())
}

/// One row per point, smallest step first.
fn table(recs: &[&PointRecord]) -> Table {
    let mut sorted = recs.to_vec();
    sorted.sort_by_key(|r| data::int(r, "stride"));
    let rows = sorted
        .iter()
        .map(|r| {
            vec![
                format!("{} B", step_bytes(r)),
                data::int(r, "len")
                    .map(|l| format_bytes(l as f64 * 8.0))
                    .unwrap_or_else(|| "—".into()),
                est_cell(data::ns_per_element(r)),
                cell(useful_gb_per_s(r)),
                cell(misses_per_access(r, 0)),
                cell(misses_per_access(r, 1)),
            ]
        })
        .collect();
    Table {
        caption: "stride-sum: one element every `step` bytes".into(),
        headers: [
            "step",
            "buffer",
            "ns/element (timed, CI)",
            "useful GB/s (derived: 8 B / ns)",
            "L1 misses/element (sim)",
            "L2 misses/element (sim)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}
