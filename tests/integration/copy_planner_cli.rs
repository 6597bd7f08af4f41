//! The copy planner through the binary: a copy class is timed once and then read from the
//! wisdom file; a corrupt or foreign wisdom file is ignored with a warning and left as it was;
//! a named wisdom file in a missing directory is refused.

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::stridelab_command;

/// `run` of one 1024×1024 engine transpose (8 MiB: large enough to plan) with `wisdom`.
fn run_fast_transpose(wisdom: &Path, out: &Path) -> Output {
    stridelab_command()
        .args([
            "run",
            "--kernel",
            "transpose",
            "rows=1024",
            "cols=1024",
            "variant=fast",
        ])
        .args(["--quiet", "--sampling-budget", "0", "--out"])
        .arg(out)
        .arg("--wisdom")
        .arg(wisdom)
        .output()
        .expect("run stridelab")
}

/// The copy plans of the document's one record.
fn copy_plans(out: &Path) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&fs::read_to_string(out).unwrap()).unwrap();
    doc["records"][0]["copy_plans"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_class_is_planned_once_then_taken_from_the_wisdom_file() {
    let dir = tempfile::tempdir().unwrap();
    let wisdom = dir.path().join("cache").join("wisdom.json");
    let out = dir.path().join("r.json");
    // A named wisdom file's directory must exist: refused before anything runs.
    let refused = run_fast_transpose(&wisdom, &out);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    let cache = dir.path().join("cache");
    assert!(
        stderr.contains(&format!("the directory {} does not exist", cache.display())),
        "{stderr}"
    );
    assert!(!cache.exists() && !out.exists(), "something was written");
    fs::create_dir(&cache).unwrap();
    let first = run_fast_transpose(&wisdom, &out);
    assert!(first.status.success(), "{first:?}");
    let plans = copy_plans(&out);
    assert_eq!(plans.len(), 1, "{plans:?}");
    assert_eq!(plans[0]["source"], "measured");
    assert!(plans[0]["planning_s"].as_f64().unwrap() > 0.0);
    let trials = plans[0]["trials"].as_array().unwrap();
    assert!(trials.len() >= 2, "{trials:?}");
    // The chosen schedule is the fastest, or the analytic one kept within 3% of the fastest.
    let median = |t: &Value| t["median_ns"].as_u64().unwrap() as f64;
    let fastest = trials.iter().map(median).fold(f64::INFINITY, f64::min);
    let chosen = trials
        .iter()
        .find(|t| t["schedule"] == plans[0]["schedule"])
        .expect("the chosen schedule is one of the trials");
    assert!(median(chosen) <= fastest / 0.97, "{plans:?}");
    let saved: Value = serde_json::from_str(&fs::read_to_string(&wisdom).unwrap()).unwrap();
    assert_eq!(saved["plans"].as_array().unwrap().len(), 1);

    fs::remove_file(&out).unwrap();
    let second = run_fast_transpose(&wisdom, &out);
    assert!(second.status.success(), "{second:?}");
    let plans_again = copy_plans(&out);
    assert_eq!(plans_again.len(), 1);
    assert_eq!(plans_again[0]["source"], "wisdom");
    assert_eq!(plans_again[0]["planning_s"].as_f64(), Some(0.0));
    assert_eq!(plans_again[0]["schedule"], plans[0]["schedule"]);
}

#[test]
fn corrupt_and_foreign_wisdom_files_are_ignored_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = r#"{"format":"stridelab-wisdom","version":3,"machine":{"cpu_model":"Another CPU","l1d_bytes":32768,"l2_bytes":1048576,"llc_bytes":33554432},"plans":[]}"#;
    for (name, text, expected) in [
        ("corrupt.json", "{not json", "is not a wisdom file"),
        ("foreign.json", foreign, "planned on another machine"),
    ] {
        let wisdom = dir.path().join(name);
        fs::write(&wisdom, text).unwrap();
        let out = dir.path().join(format!("{name}.out.json"));
        let output = run_fast_transpose(&wisdom, &out);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{name}: {stderr}");
        assert!(
            stderr.contains("warning: wisdom ignored") && stderr.contains(expected),
            "{name}: {stderr}"
        );
        assert_eq!(
            fs::read_to_string(&wisdom).unwrap(),
            text,
            "{name} was rewritten"
        );
        // The copy was still planned, in memory.
        assert_eq!(copy_plans(&out)[0]["source"], "measured", "{name}");
    }
}

#[test]
fn prefilling_into_an_unreadable_wisdom_file_is_refused_and_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let wisdom = dir.path().join("wisdom.json");
    fs::write(&wisdom, "{not json").unwrap();
    let out = stridelab_command()
        .args(["wisdom", "--wisdom"])
        .arg(&wisdom)
        .output()
        .expect("run stridelab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot prefill") && stderr.contains("is not a wisdom file"),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&wisdom).unwrap(), "{not json");
}
