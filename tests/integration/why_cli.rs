//! `stridelab why` end to end: one point beside its controls, the report's shape, and bad
//! input refused before anything is timed.

use crate::common;
use common::stridelab;

use serde_json::Value;

#[test]
fn a_point_is_timed_beside_its_controls_and_every_control_is_judged() {
    let out = stridelab(&[
        "why",
        "col-sum",
        "rows=64",
        "cols=64",
        "--rounds",
        "2",
        "--sampling-budget",
        "0",
        "--json",
        "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
    assert_eq!(report["rounds"], 2);
    assert!(report["base_ns_per_element"].as_f64().unwrap() > 0.0);
    assert!(report["noise"].as_f64().unwrap() >= 0.02 - 1e-9);
    let controls = report["controls"].as_array().unwrap();
    let changes: Vec<&str> = controls
        .iter()
        .map(|c| c["change"].as_str().unwrap())
        .collect();
    for expected in [
        "huge pages",
        "ld=65",
        "ld=72",
        "rows=32",
        "source +64 B",
        "source +4 KiB",
    ] {
        assert!(changes.contains(&expected), "{changes:?}");
    }
    for c in controls {
        assert_eq!(c["ratios"].as_array().unwrap().len(), 2, "{c}");
        assert!(
            ["faster", "slower", "unchanged", "unclear"].contains(&c["moved"].as_str().unwrap())
        );
        // The sentence quotes the median it judged.
        let median = format!("{:.2}×", c["median"].as_f64().unwrap());
        assert!(c["sentence"].as_str().unwrap().contains(&median), "{c}");
    }
    // The set controls were simulated: the model's call carries per-level misses.
    let padded = controls.iter().find(|c| c["change"] == "ld=65").unwrap();
    assert_eq!(padded["model"]["kind"], "simulated");
    // A shift is timed only, and says so.
    let shifted = controls
        .iter()
        .find(|c| c["change"] == "source +64 B")
        .unwrap();
    assert_eq!(shifted["factor"], "alignment");
    assert_eq!(shifted["model"]["kind"], "not-modelled");
    let verdict = report["verdict"].as_array().unwrap();
    assert!(
        !verdict
            .iter()
            .any(|l| l.as_str().unwrap().starts_with("Not run: alignment"))
    );
}

#[test]
fn bad_points_are_refused_before_anything_is_timed() {
    // (arguments, what the error names)
    let cases: [(&[&str], &str); 5] = [
        (
            &["why", "row-sum", "rows=64,128", "cols=64"],
            "expands to 2 points",
        ),
        (
            &["why", "row-sum", "rows=64", "cols=64", "--rounds", "1"],
            "--rounds 1",
        ),
        (
            &["why", "row-sum", "rows=64", "cols=64", "--rounds", "21"],
            "--rounds 21",
        ),
        (&["why", "nosuch"], "nosuch"),
        (&["why", "row-sum", "rows=0", "cols=64"], "rows"),
    ];
    for (args, names) in cases {
        let out = stridelab(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(names), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
