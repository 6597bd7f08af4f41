//! `stridelab infer [--json] [--budget SECONDS]`: the cache geometry from timing alone.
//!
//! Parses the arguments, runs [`crate::infer::infer_geometry`] and prints the document: one
//! JSON object, or each parameter beside what the system reports (sysfs/CPUID), with a
//! verdict, a confidence and the points behind it. Every inferred number is *timed*.

use std::process::ExitCode;

use anyhow::bail;

use crate::infer::{self, MAX_BUDGET_S, MIN_BUDGET_S};
use crate::results::infer_doc::{DISAGREEMENT_BAR, InferReport, Parameter};
use crate::units::format_bytes as human_bytes;

#[derive(Debug, clap::Args)]
pub struct InferArgs {
    /// Print one JSON object (the InferReport) instead of the table; no progress on stderr.
    #[arg(long)]
    pub json: bool,
    /// Wall-clock budget in seconds for the whole inference (10..=600).
    #[arg(long, default_value_t = 60.0)]
    pub budget: f64,
}

pub fn run(args: InferArgs) -> anyhow::Result<ExitCode> {
    if !infer::budget_in_range(args.budget) {
        bail!(
            "--budget must be between {MIN_BUDGET_S} and {MAX_BUDGET_S} seconds (got {})",
            args.budget
        );
    }
    let report = infer::infer_geometry(args.budget, !args.json)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render_text(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn format_value(unit: &str, value: Option<f64>) -> String {
    match (unit, value) {
        (_, None) => "—".into(),
        ("bytes", Some(v)) => human_bytes(v),
        (unit, Some(v)) => format!("{v:.0} {unit}"),
    }
}

/// `[low, high]` as "low – high" ("< high" for an upper bound); "—" without an interval.
fn interval_text(p: &Parameter) -> String {
    match p.interval {
        Some([low, high]) if low > 0.0 => format!(
            "{} – {}",
            format_value(&p.unit, Some(low)),
            format_value(&p.unit, Some(high))
        ),
        Some([_, high]) => format!("< {}", format_value(&p.unit, Some(high))),
        None => "—".into(),
    }
}

/// The table, the evidence and the conditions, as printed without `--json`.
pub fn render_text(report: &InferReport) -> String {
    let mut out = String::new();
    out.push_str("stridelab infer — cache geometry from timing alone (every value TIMED: dependent pointer chases, median of interleaved rounds)\n\n");
    out.push_str(&format!(
        "{:<22} {:>12} {:>24} {:>12}  {:<13} {:>10}\n",
        "parameter", "inferred", "interval", "reported", "verdict", "confidence"
    ));
    for p in &report.parameters {
        out.push_str(&format!(
            "{:<22} {:>12} {:>24} {:>12}  {:<13} {:>10.2}\n",
            p.name,
            format!(
                "{}{}",
                if p.is_upper_bound { "< " } else { "" },
                format_value(&p.unit, p.value)
            ),
            interval_text(p),
            format_value(&p.unit, p.reported),
            p.verdict.label(),
            p.confidence
        ));
    }
    out.push_str(&format!("\nverdicts: {DISAGREEMENT_BAR}\n"));
    out.push_str("\nevidence (timed):\n");
    for p in &report.parameters {
        out.push_str(&format!(
            "  {}{}:\n",
            p.name,
            if p.is_tlb { " [TLB, not a cache]" } else { "" }
        ));
        for e in &p.evidence {
            out.push_str(&format!("    - {e}\n"));
        }
        if let Some(note) = &p.note {
            out.push_str(&format!("    note: {note}\n"));
        }
    }
    out.push_str("\nconditions:\n");
    for c in &report.conditions {
        out.push_str(&format!("  - {c}\n"));
    }
    out.push_str(&format!(
        "\ntook {:.1} s (budget {:.0} s)\n",
        report.elapsed_s, report.budget_s
    ));
    out
}
