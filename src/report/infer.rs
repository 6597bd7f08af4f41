//! The report's section for `stridelab infer`: the cache geometry inferred from timing alone,
//! held against what the system reports. Rendered from an `infer.json` (the output of
//! `stridelab infer --json`) stored beside the results file; the main job does not run infer.

use std::path::{Path, PathBuf};

use crate::cache::infer::{InferReport, Verdict};

use super::ReportError;
use super::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY, format_bytes,
    format_number,
};
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
    let text = std::fs::read_to_string(&path).map_err(|source| ReportError::Io {
        action: "read",
        path: path.clone(),
        source,
    })?;
    let report: InferReport = serde_json::from_str(&text).map_err(|e| ReportError::Infer {
        path: path.clone(),
        message: e.to_string(),
    })?;
    validate_infer(&report).map_err(|(field, message)| ReportError::Infer {
        path,
        message: format!("field `{field}` is invalid: {message}"),
    })?;
    Ok(Some(report))
}

/// Most curve points an infer report may carry (a default run measures a few hundred).
pub const MAX_INFER_POINTS: usize = 1 << 16;

/// The rules the infer section relies on, checked once on load: the schema this build reads,
/// finite non-negative times, confidences in [0, 1], curve points at a finite x > 0 (the axes
/// are logarithmic) with a finite time ≥ 0, and a bounded number of points.
pub fn validate_infer(report: &InferReport) -> Result<(), (String, String)> {
    let bad = |field: String, message: String| Err((field, message));
    if report.schema != crate::cache::infer::INFER_SCHEMA {
        return bad(
            "schema".into(),
            format!(
                "{}; this build reads {}",
                report.schema,
                crate::cache::infer::INFER_SCHEMA
            ),
        );
    }
    for (field, v) in [
        ("elapsed_s", report.elapsed_s),
        ("budget_s", report.budget_s),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return bad(field.into(), format!("{v} is not a finite number ≥ 0"));
        }
    }
    for (i, p) in report.parameters.iter().enumerate() {
        let at = format!("parameters[{i}]");
        if !(p.confidence.is_finite() && (0.0..=1.0).contains(&p.confidence)) {
            return bad(format!("{at}.confidence"), "must lie in [0, 1]".into());
        }
        for (name, v) in [("value", p.value), ("reported", p.reported)] {
            if let Some(v) = v
                && !(v.is_finite() && v >= 0.0)
            {
                return bad(
                    format!("{at}.{name}"),
                    format!("{v} is not a finite number ≥ 0"),
                );
            }
        }
    }
    let c = &report.curves;
    let mut curves: Vec<(String, &[crate::cache::infer::Point])> = vec![
        ("curves.capacity".into(), &c.capacity),
        ("curves.line_pairs".into(), &c.line_pairs),
        ("curves.tlb_spread".into(), &c.tlb_spread),
        ("curves.tlb_packed".into(), &c.tlb_packed),
    ];
    for (i, k) in c.conflict.iter().enumerate() {
        curves.push((format!("curves.conflict[{i}].probe"), &k.probe));
        curves.push((format!("curves.conflict[{i}].control"), &k.control));
    }
    let total: usize = curves.iter().map(|(_, pts)| pts.len()).sum();
    if total > MAX_INFER_POINTS {
        return bad(
            "curves".into(),
            format!("{total} points, more than the {MAX_INFER_POINTS} a report may have"),
        );
    }
    for (at, points) in curves {
        for (i, p) in points.iter().enumerate() {
            if !(p.x.is_finite() && p.x > 0.0) {
                return bad(
                    format!("{at}[{i}].x"),
                    format!("{} is not finite and > 0", p.x),
                );
            }
            if !(p.ns.is_finite() && p.ns >= 0.0) {
                return bad(
                    format!("{at}[{i}].ns"),
                    format!("{} is not finite and ≥ 0", p.ns),
                );
            }
        }
    }
    Ok(())
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
        Verdict::NotReported => "not reported",
        Verdict::NotInferred => "not inferred",
    }
}

fn series(
    name: String,
    colour: usize,
    kind: SeriesKind,
    pts: &[crate::cache::infer::Point],
) -> Series {
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

/// The inferred-geometry figure and table.
pub fn built(report: &InferReport, suffix: &str) -> Built {
    let c = &report.curves;
    let inferred_sizes: Vec<RefLine> = report
        .parameters
        .iter()
        .filter(|p| p.unit == "bytes" && p.key.ends_with("_size") && p.key != "line_size")
        .filter_map(|p| {
            Some(RefLine {
                at: p.value.filter(|v| v.is_finite() && *v > 0.0)?,
                label: format!("{} (inferred)", p.name),
            })
        })
        .collect();
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
        let mut s = Vec::new();
        // A few strides keep the panel readable: page multiples first (the L1 set span on
        // common parts), the full list is in infer.json.
        let mut chosen: Vec<_> = c
            .conflict
            .iter()
            .filter(|k| k.stride_bytes % 4096 == 0)
            .take(3)
            .collect();
        if chosen.is_empty() {
            chosen = c.conflict.iter().take(3).collect();
        }
        for (i, curve) in chosen.into_iter().enumerate() {
            s.push(series(
                format!("{} B", curve.stride_bytes),
                i * 2 + 1,
                SeriesKind::Data,
                &curve.probe,
            ));
            s.push(series(
                format!("{} B (control)", curve.control_stride_bytes),
                i * 2 + 2,
                SeriesKind::Data,
                &curve.control,
            ));
        }
        panels.push(Panel::Lines(LinePanel {
            title: "conflict probes vs ±1 controls".into(),
            x: Axis {
                from_zero: false,
                ..Axis::linear("K (lines at the stride)")
            },
            y: Axis::linear("ns per access"),
            series: s,
            vlines: Vec::new(),
            hlines: Vec::new(),
        }));
    }
    if !c.tlb_spread.is_empty() || !c.tlb_packed.is_empty() {
        panels.push(Panel::Lines(LinePanel {
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
        }));
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
                value_text(&p.unit, p.reported, false),
                verdict_text(&p.verdict).to_string(),
                format!("{:.0}%", p.confidence.clamp(0.0, 1.0) * 100.0),
                p.evidence.join("; "),
            ]
        })
        .collect();
    let disagreements: Vec<&str> = report
        .parameters
        .iter()
        .filter(|p| matches!(p.verdict, Verdict::Disagrees))
        .map(|p| p.name.as_str())
        .collect();
    Built {
        figure: Figure {
            id: format!("fig12-infer{suffix}"),
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
                "reported (sysfs/CPUID)",
                "verdict",
                "confidence",
                "evidence",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: if disagreements.is_empty() {
            "Every inferred parameter that the system reports agrees with it.".into()
        } else {
            format!(
                "Disagreements with the system's claim: {}. The timing is the machine's \
                 behaviour; a VM may report a geometry it does not have.",
                disagreements.join(", ")
            )
        },
        notes: report.conditions.clone(),
    }
}
