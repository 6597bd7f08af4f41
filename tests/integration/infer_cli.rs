//! `stridelab infer` end to end: argument errors exit 2; a short real run prints a complete,
//! timed report within its budget.

use crate::common;
use common::stridelab_command as stridelab;

use std::time::Instant;

#[test]
fn a_budget_out_of_range_is_a_usage_error() {
    for budget in ["0", "3", "-1", "NaN", "100000", "soon"] {
        let out = stridelab()
            .args(["infer", &format!("--budget={budget}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--budget {budget}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("budget"),
            "--budget {budget}"
        );
    }
}

#[test]
fn a_short_run_reports_every_parameter_timed_within_budget() {
    let started = Instant::now();
    let out = stridelab()
        .args(["infer", "--json", "--budget", "10"])
        .output()
        .unwrap();
    let wall = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "--json prints no progress: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The budget is kept by deadlines between rounds; a round in progress may overrun a little.
    assert!(wall <= 13.0, "took {wall:.1} s for a 10 s budget");
    let report: stridelab::results::infer_doc::InferReport =
        serde_json::from_slice(&out.stdout).unwrap();
    let keys: Vec<&str> = report.parameters.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "line_size",
            "l1d_size",
            "l1d_ways",
            "l1d_sets",
            "l2_size",
            "llc_size",
            "l1_dtlb_reach"
        ]
    );
    for p in &report.parameters {
        assert_eq!(p.source, "timed");
        assert!(
            (0.0..=1.0).contains(&p.confidence),
            "{}: {}",
            p.key,
            p.confidence
        );
        assert!(!p.evidence.is_empty(), "{} has no evidence", p.key);
    }
    let tlb = report
        .parameters
        .iter()
        .find(|p| p.key == "l1_dtlb_reach")
        .unwrap();
    assert!(tlb.is_tlb);
    let line = report.parameters[0].value.expect("a line size");
    assert!(
        line >= 16.0 && (line as u64).is_power_of_two(),
        "line {line}"
    );
    assert!(!report.curves.capacity.is_empty() && report.curves.conflict.len() >= 10);
}
