//! The report's section for `stridelab infer`: the cache geometry inferred from timing alone,
//! held against what the system reports. Rendered from an `infer.json` (the output of
//! `stridelab infer --json`) stored beside the results file, or run by the main job. Its
//! headline names a disagreement only when the parameter's verdict cleared the bar it states.

use std::path::{Path, PathBuf};

use stridelab_core::results::infer_doc::{
    ConflictCurves, DISAGREEMENT_BAR, InferCurves, InferDocError, InferReport,
    MIN_VERDICT_CONFIDENCE, Parameter, Point, Verdict,
};

use super::ReportError;
use super::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY, format_bytes,
    format_number,
};
use super::claims::Claim;
use super::figures::{Built, Table};

/// The file name looked for beside a results file.
pub const INFER_FILE: &str = "infer.json";

/// Where an infer report for `results` would be.
pub fn path_beside(results: &Path) -> PathBuf {
    results
        .parent()
        .map(|d| d.join(INFER_FILE))
        .unwrap_or_else(|| PathBuf::from(INFER_FILE))
}

/// Reads the infer report beside `results`, if there is one; a corrupt one is an error.
pub fn read_beside(results: &Path) -> Result<Option<InferReport>, ReportError> {
    let path = path_beside(results);
    if !path.is_file() {
        return Ok(None);
    }
    InferReport::read(&path).map(Some).map_err(|e| match e {
        InferDocError::Io { path, cause } => ReportError::Io {
            action: "read",
            path,
            cause,
        },
        InferDocError::Parse { path, message } => ReportError::Infer { path, message },
        InferDocError::Invalid {
            path,
            field,
            message,
        } => ReportError::Infer {
            path,
            message: format!("field `{field}` is invalid: {message}"),
        },
    })
}

fn value_text(unit: &str, v: Option<f64>, upper: bool) -> String {
    let Some(v) = v.filter(|v| v.is_finite()) else {
        return "—".into();
    };
    let text = if unit == "bytes" {
        format_bytes(v)
    } else {
        format!("{} {unit}", format_number(v))
    };
    if upper { format!("< {text}") } else { text }
}

fn verdict_text(v: &Verdict) -> &'static str {
    match v {
        Verdict::Agrees => "agrees",
        Verdict::Disagrees => "disagrees",
        Verdict::Uncertain => "uncertain",
        Verdict::NotReported => "not reported",
        Verdict::NotInferred => "not inferred",
    }
}

fn series(name: String, colour: usize, kind: SeriesKind, pts: &[Point]) -> Series {
    Series {
        name,
        colour: PALETTE[colour % PALETTE.len()],
        kind,
        points: pts
            .iter()
            .filter(|p| p.ns.is_finite())
            .map(|p| XY::new(p.x, p.ns))
            .collect(),
    }
}

/// The conflict probes beside their controls, for a few strides: each probe a line of its
/// own, the controls (timed alike, within noise) as one line of their per-K median so that
/// six noisy lines do not hide each other; the inferred ways as a labelled mark.
fn conflict_panel(conflict: &[ConflictCurves], ways: Option<f64>) -> Panel {
    // A few strides keep the panel readable: page multiples first (the L1 set span on
    // common parts), the full list is in infer.json.
    let mut chosen: Vec<_> = conflict
        .iter()
        .filter(|k| k.stride_bytes % 4096 == 0)
        .take(3)
        .collect();
    if chosen.is_empty() {
        chosen = conflict.iter().take(3).collect();
    }
    let mut s: Vec<Series> = chosen
        .iter()
        .enumerate()
        .map(|(i, curve)| {
            series(
                format!("probe, stride {} B", curve.stride_bytes),
                i + 1,
                SeriesKind::Data,
                &curve.probe,
            )
        })
        .collect();
    let ks: Vec<f64> = {
        let mut ks: Vec<f64> = chosen
            .iter()
            .flat_map(|c| c.control.iter().map(|p| p.x))
            .collect();
        ks.sort_by(f64::total_cmp);
        ks.dedup();
        ks
    };
    let median_control: Vec<XY> = ks
        .iter()
        .filter_map(|&k| {
            let at: Vec<f64> = chosen
                .iter()
                .filter_map(|c| c.control.iter().find(|p| p.x == k).map(|p| p.ns))
                .collect();
            Some(XY::new(k, stridelab_core::stats::median_of_finite(&at)?))
        })
        .collect();
    let controls = chosen
        .iter()
        .map(|c| c.control_stride_bytes.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    s.push(Series {
        name: format!("controls {controls} B (median per K)"),
        colour: PALETTE[6],
        kind: SeriesKind::Data,
        points: median_control,
    });
    Panel::Lines(LinePanel {
        title: "conflict probes vs their controls".into(),
        x: Axis {
            from_zero: false,
            ..Axis::linear("K (lines at the stride)")
        },
        y: Axis::linear("ns per access"),
        series: s,
        vlines: ways
            .map(|w| RefLine {
                at: w,
                label: format!("{w} ways (inferred)"),
                label_y: None,
            })
            .into_iter()
            .collect(),
        hlines: Vec::new(),
    })
}

/// The page-spread chase beside its packed control.
fn tlb_panel(c: &InferCurves) -> Panel {
    Panel::Lines(LinePanel {
        title: "data TLB: one line per page vs packed".into(),
        x: Axis::log2("pages / lines touched (log2)"),
        y: Axis::linear("ns per access"),
        series: vec![
            series(
                "one line per page".into(),
                3,
                SeriesKind::Data,
                &c.tlb_spread,
            ),
            series(
                "lines packed in few pages".into(),
                2,
                SeriesKind::Data,
                &c.tlb_packed,
            ),
        ],
        vlines: Vec::new(),
        hlines: Vec::new(),
    })
}

/// A parameter's interval in words, when it has one ("between A and B", "below B").
fn interval_text(p: &Parameter) -> Option<String> {
    let [low, high] = p.interval?;
    Some(if low > 0.0 {
        format!(
            "between {} and {}",
            value_text(&p.unit, Some(low), false),
            value_text(&p.unit, Some(high), false)
        )
    } else {
        format!("below {}", value_text(&p.unit, Some(high), false))
    })
}

/// The headline: a disagreement is named only when its verdict cleared the bar (stated), an
/// uncertain parameter is named with its interval (and its confidence when that is what made
/// it uncertain), and agreement only when nothing else is.
pub fn headline(report: &InferReport) -> String {
    let with = |verdict: Verdict| -> Vec<String> {
        report
            .parameters
            .iter()
            .filter(|p| p.verdict == verdict)
            .map(|p| {
                let mut reported = value_text(&p.unit, p.reported, false);
                // A verdict held to the confidence floor says so beside the system's value.
                if p.confidence < MIN_VERDICT_CONFIDENCE {
                    reported.push_str(&format!("; confidence {:.2}", p.confidence));
                }
                match interval_text(p) {
                    Some(i) => format!("{} {i} (system: {reported})", p.name),
                    None => format!("{} (system: {reported})", p.name),
                }
            })
            .collect()
    };
    let (disagreeing, uncertain) = (with(Verdict::Disagrees), with(Verdict::Uncertain));
    let mut parts = Vec::new();
    if !disagreeing.is_empty() {
        parts.push(format!(
            "Disagreements with the system's claim: {}. The timing is the machine's behaviour; \
             a VM may report a geometry it does not have, and a neighbour may use part of a \
             shared cache.",
            disagreeing.join("; ")
        ));
    }
    if !uncertain.is_empty() {
        parts.push(format!(
            "Uncertain, neither confirmed nor refuted: {}.",
            uncertain.join("; ")
        ));
    }
    if parts.is_empty() {
        parts.push("Every inferred parameter that the system reports agrees with it.".into());
    }
    parts.push(format!("The bar: {DISAGREEMENT_BAR}."));
    parts.join(" ")
}

/// The inferred-geometry figure and table.
pub fn built(report: &InferReport, suffix: &str) -> Built {
    let c = &report.curves;
    let inferred_sizes: Vec<RefLine> = report
        .parameters
        .iter()
        .filter(|p| p.unit == "bytes" && p.key.ends_with("_size") && p.key != "line_size")
        .filter_map(|p| {
            let at = p.value.filter(|v| v.is_finite() && *v > 0.0)?;
            Some(RefLine {
                at,
                label: format!(
                    "{} {}{} (inferred)",
                    p.name.trim_end_matches(" size"),
                    if p.is_upper_bound { "< " } else { "" },
                    format_bytes(at)
                ),
                label_y: None,
            })
        })
        .collect();
    // Labels along the bottom, right of their lines: the latency curve only rises, so the
    // region right of a size and near the fastest time is empty (staggered upwards).
    let fastest = c
        .capacity
        .iter()
        .map(|p| p.ns)
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let mut inferred_sizes = inferred_sizes;
    if fastest.is_finite() {
        inferred_sizes.sort_by(|a, b| a.at.total_cmp(&b.at));
        for (i, line) in inferred_sizes.iter_mut().enumerate() {
            line.label_y = Some(fastest * 1.3f64.powi(i as i32 + 1));
        }
    }
    let mut panels = Vec::new();
    if !c.capacity.is_empty() {
        panels.push(Panel::Lines(LinePanel {
            title: "working-set latency".into(),
            x: Axis::log2_bytes("working set (bytes, log2)"),
            y: Axis::log10("ns per access (log)"),
            series: vec![series("timed".into(), 0, SeriesKind::Data, &c.capacity)],
            vlines: inferred_sizes,
            hlines: Vec::new(),
        }));
    }
    if !c.conflict.is_empty() {
        let ways = report
            .parameters
            .iter()
            .find(|p| p.key == "l1d_ways")
            .and_then(|p| p.value)
            .filter(|v| v.is_finite() && *v > 0.0);
        panels.push(conflict_panel(&c.conflict, ways));
    }
    if !c.tlb_spread.is_empty() || !c.tlb_packed.is_empty() {
        panels.push(tlb_panel(c));
    }
    let rows = report
        .parameters
        .iter()
        .map(|p| {
            vec![
                if p.is_tlb && !p.name.contains("TLB") {
                    format!("{} (TLB)", p.name)
                } else {
                    p.name.clone()
                },
                value_text(&p.unit, p.value, p.is_upper_bound),
                interval_text(p).unwrap_or_else(|| "—".into()),
                value_text(&p.unit, p.reported, false),
                verdict_text(&p.verdict).to_string(),
                format!("{:.0}%", p.confidence.clamp(0.0, 1.0) * 100.0),
                p.evidence.join("; "),
            ]
        })
        .collect();
    Built {
        figure: Figure {
            id: format!("fig18-infer{suffix}"),
            title: "Cache geometry inferred from timing alone".into(),
            provenance: format!(
                "timed: `stridelab infer` ({:.0} s of a {:.0} s budget); dashed: inferred sizes",
                report.elapsed_s, report.budget_s
            ),
            panels,
            panel_width: 470,
            panel_height: 360,
        },
        tables: vec![Table {
            caption: "Inferred parameters vs what the system reports".into(),
            headers: [
                "parameter",
                "inferred",
                "interval",
                "reported (sysfs/CPUID)",
                "verdict",
                "confidence",
                "evidence",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: vec![Claim::derived("infer.headline", headline(report))],
        notes: report.conditions.clone(),
    }
}
