//! `stridelab gate` on recorded result files: the real binary with `--current`, no measuring.
//! `tests/fixtures/gate/recorded.json` is a real `stridelab gate --save-baseline` run on a
//! 2-vCPU KVM guest; every variant below is derived from it by a transformation, never
//! hand-written numbers.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gate/recorded.json")
}

fn recorded() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap()
}

fn gate(args: &[&str]) -> Output {
    common::stridelab_command()
        .arg("gate")
        .args(args)
        .output()
        .expect("run stridelab")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(value).unwrap()).unwrap();
    path
}

/// Compares `current` with the recorded baseline; returns the output and the JSON verdict.
fn compare_with_recorded(current: &Value, extra: &[&str]) -> (Output, Option<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let current = write(dir.path(), "current.json", current);
    let verdict = dir.path().join("verdict.json");
    let baseline = fixture();
    let mut args = vec![
        "--baseline",
        baseline.to_str().unwrap(),
        "--current",
        current.to_str().unwrap(),
        "--export-json",
        verdict.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = gate(&args);
    let verdict = std::fs::read_to_string(&verdict)
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    (out, verdict)
}

/// Every record of `kernel` as if it ran `factor` times slower: samples, their summary, the
/// per-element time, the bandwidth and the same-run ratio (its reference unchanged).
fn slow_down(doc: &mut Value, kernel: &str, factor: f64) -> usize {
    let mut changed = 0;
    for record in doc["records"].as_array_mut().unwrap() {
        if record["kernel"] != kernel {
            continue;
        }
        changed += 1;
        let timing = &mut record["timing"];
        for sample in timing["samples_ns_per_run"].as_array_mut().unwrap() {
            *sample = (sample.as_f64().unwrap() * factor).into();
        }
        for key in ["median", "min", "max", "mad", "ci_low", "ci_high"] {
            let v = timing["ns_per_run"][key].as_f64().unwrap();
            timing["ns_per_run"][key] = (v * factor).into();
        }
        let per_element = timing["ns_per_element"].as_f64().unwrap();
        timing["ns_per_element"] = (per_element * factor).into();
        if let Some(gbps) = timing["gb_per_s"].as_f64() {
            timing["gb_per_s"] = (gbps / factor).into();
        }
        if let Some(ci) = timing["gb_per_s_ci"].as_array_mut() {
            for v in ci {
                *v = (v.as_f64().unwrap() / factor).into();
            }
        }
        if let Some(ratio) = record["reference"]["ratio"].as_f64() {
            record["reference"]["ratio"] = (ratio / factor).into();
        }
    }
    changed
}

#[test]
fn identical_files_pass() {
    let (out, verdict) = compare_with_recorded(&recorded(), &["--all-rows"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let verdict = verdict.unwrap();
    assert_eq!(verdict["pass"], true);
    assert_eq!(verdict["regressed"].as_array().unwrap().len(), 0);
    let rows = verdict["rows"].as_array().unwrap();
    // Two simulated levels and one timing row per point.
    let points = recorded()["records"].as_array().unwrap().len();
    assert_eq!(rows.len(), 3 * points);
    for row in rows {
        if let Some(change) = row["change"].as_f64() {
            assert_eq!(change, 0.0, "{row}");
        }
    }
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("| kernel | params | metric | baseline | current | change | CI | own time: change [CI] | verdict |")
    );
    assert!(table.contains("## stridelab gate: PASS"));
}

/// `doc` as if recorded on another CPU model: the manifest says so.
fn on_another_machine(doc: &mut Value) {
    let model = doc["info"]["cpu_model"].as_str().unwrap().to_owned();
    doc["info"]["cpu_model"] = format!("{model} (another host)").into();
}

/// One more simulated L1d miss of the transpose point, kept consistent (the 3C split sums to
/// the misses), so it is a changed count, not a corrupt document.
fn one_more_miss(doc: &mut Value) {
    let record = doc["records"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["kernel"] == "transpose")
        .unwrap();
    let l1 = &mut record["simulated"]["levels"][0];
    let misses = l1["misses"].as_u64().unwrap();
    l1["misses"] = (misses + 1).into();
    l1["load_misses"] = (l1["load_misses"].as_u64().unwrap() + 1).into();
    l1["conflict"] = (l1["conflict"].as_u64().unwrap() + 1).into();
}

#[test]
fn a_baseline_from_another_cpu_model_passes_on_timing_alone_and_fails_on_one_miss() {
    // Every kernel 1.5× slower and the references too: on one machine a regression of
    // nothing; across CPU models timing is not compared at all.
    let mut current = recorded();
    on_another_machine(&mut current);
    let kernels: std::collections::BTreeSet<String> = current["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kernel"].as_str().unwrap().to_owned())
        .collect();
    for kernel in &kernels {
        slow_down(&mut current, kernel, 1.5);
    }
    let (out, verdict) = compare_with_recorded(&current, &[]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let verdict = verdict.unwrap();
    assert_eq!(verdict["timing_judged"], 0);
    assert!(verdict["simulated_judged"].as_u64().unwrap() > 0);
    let why = verdict["method"]["timing_not_comparable"].as_str().unwrap();
    assert!(why.contains("(another host)"), "{why}");
    let rows = verdict["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .filter(|r| r["track"] == "timing")
            .all(|r| r["verdict"] == "not-compared"),
        "{verdict:#}"
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("timing not judged (the baseline comes from another CPU model)"),
        "{table}"
    );
    assert!(table.contains("Timing track: not compared — the baseline was recorded on"));
    // The reason in full once, each row short, and how to judge timing here.
    assert_eq!(table.matches(why).count(), 1, "{table}");
    let timing_rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with('|') && l.contains("| time (timed) |"))
        .collect();
    assert!(!timing_rows.is_empty(), "{table}");
    for row in &timing_rows {
        assert!(
            row.ends_with("| not compared (another CPU model) |"),
            "{row}"
        );
    }
    for command in [
        "`stridelab gate --base origin/main`",
        "`stridelab gate --save-baseline FILE`",
    ] {
        assert!(table.contains(command), "{command}: {table}");
    }
    // The JSON keeps the full reason, what differs, the short notes and the advice.
    assert_eq!(verdict["method"]["timing_differs_in"], "cpu-model");
    for row in rows.iter().filter(|r| r["track"] == "timing") {
        assert_eq!(row["note"], "another CPU model", "{row:#}");
    }
    let advice = &verdict["advice"][0];
    assert_eq!(advice["kind"], "timing-not-comparable", "{verdict:#}");
    assert!(
        advice["try_next"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "stridelab gate --base origin/main"),
        "{advice:#}"
    );
    // The job summary (every row) says it once too.
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let (out, _) =
        compare_with_recorded(&current, &["--export-markdown", summary.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(text.matches(why).count(), 1, "{text}");
    assert!(
        text.contains("`stridelab gate --base origin/main`"),
        "{text}"
    );

    one_more_miss(&mut current);
    let (out, verdict) = compare_with_recorded(&current, &[]);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    let verdict = verdict.unwrap();
    assert_eq!(verdict["deterministic_regressions"], 1);
    assert_eq!(verdict["timing_regressions"], 0);
}

#[test]
fn a_baseline_without_same_run_references_is_refused_not_passed() {
    // A `run` of latency points alone: no interleaved references and no read/copy point, so
    // no timing row can be compared. Such a gate judged nothing on timing: exit 2, not PASS.
    let mut doc = recorded();
    let records = doc["records"].as_array_mut().unwrap();
    records.retain(|r| r["kernel"] != "read" && r["kernel"] != "copy");
    for (index, record) in records.iter_mut().enumerate() {
        record["index"] = index.into();
        record.as_object_mut().unwrap().remove("reference");
    }
    let points = records.len();
    doc["suite"]["points"] = points.into();
    let dir = tempfile::tempdir().unwrap();
    let baseline = write(dir.path(), "baseline.json", &doc);
    let out = gate(&[
        "--baseline",
        baseline.to_str().unwrap(),
        "--current",
        baseline.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "the timing track judged none of the {points} point(s)"
        )),
        "{err}"
    );
    assert!(err.contains("no same-run reference"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("PASS"));
}

#[test]
fn one_kernel_25_percent_slower_fails_naming_that_kernel() {
    let mut current = recorded();
    assert_eq!(slow_down(&mut current, "col-sum", 1.25), 3);
    let (out, verdict) = compare_with_recorded(&current, &[]);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    let verdict = verdict.unwrap();
    let regressed: Vec<&str> = verdict["regressed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!regressed.is_empty());
    assert!(
        regressed.iter().all(|id| id.starts_with("col-sum ")),
        "only col-sum may be named: {regressed:?}"
    );
    assert_eq!(verdict["deterministic_regressions"], 0);
    assert!(verdict["timing_regressions"].as_u64().unwrap() >= 1);
    assert!(stderr(&out).contains("regression: col-sum"));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("| col-sum |") && table.contains("**REGRESSION**"));
}

#[test]
fn a_25_percent_speedup_is_reported_as_an_improvement_and_passes() {
    let mut current = recorded();
    slow_down(&mut current, "col-sum", 0.75);
    let (out, verdict) = compare_with_recorded(&current, &[]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert!(verdict.unwrap()["improvements"].as_u64().unwrap() >= 1);
}

#[test]
fn a_changed_simulated_miss_count_fails() {
    let mut current = recorded();
    one_more_miss(&mut current);
    let (out, verdict) = compare_with_recorded(&current, &[]);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    let verdict = verdict.unwrap();
    assert_eq!(verdict["deterministic_regressions"], 1);
    let regressed = verdict["regressed"][0].as_str().unwrap();
    assert!(
        regressed.starts_with("transpose ") && regressed.ends_with("L1d misses (simulated)"),
        "{regressed}"
    );
    // A tolerance above the change accepts it.
    let (out, _) = compare_with_recorded(&current, &["--sim-tolerance", "1%"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
}

#[test]
fn a_corrupt_baseline_exits_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture()).unwrap();
    let truncated = dir.path().join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let mut wrong_type = recorded();
    wrong_type["records"][2]["timing"]["samples_ns_per_run"][0] = "fast".into();
    let wrong_type = write(dir.path(), "wrong-type.json", &wrong_type);
    let cases = [
        (truncated, "not valid JSON"),
        (wrong_type, "records[2].timing.samples_ns_per_run"),
    ];
    for (baseline, expected) in cases {
        let out = gate(&[
            "--baseline",
            baseline.to_str().unwrap(),
            "--current",
            fixture().to_str().unwrap(),
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("cannot use the baseline"), "{err}");
        assert!(err.contains(expected), "{err}");
        assert!(err.contains("stridelab gate --save-baseline"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn missing_baseline_schema_mismatch_and_changed_suite_exit_2_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.json");
    let out = gate(&[
        "--baseline",
        missing.to_str().unwrap(),
        "--current",
        fixture().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no baseline at"), "{}", stderr(&out));
    assert!(stderr(&out).contains("--save-baseline"));

    let mut future = recorded();
    let next = stridelab::results::SCHEMA_VERSION + 1;
    future["schema"] = next.into();
    let future = write(dir.path(), "future.json", &future);
    let out = gate(&[
        "--baseline",
        future.to_str().unwrap(),
        "--current",
        fixture().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("schema {next}")),
        "{}",
        stderr(&out)
    );

    let mut fewer = recorded();
    fewer["records"].as_array_mut().unwrap().remove(0);
    let (out, _) = compare_with_recorded(&fewer, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("the suite changed"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("--save-baseline reports/baseline.json"));

    let mut other_geometry = recorded();
    for record in other_geometry["records"].as_array_mut().unwrap() {
        // 48 KiB 8-way 64 B lines: 96 sets, a consistent other geometry.
        record["simulated"]["levels"][0]["ways"] = 8.into();
        record["simulated"]["levels"][0]["sets"] = 96.into();
    }
    let (out, _) = compare_with_recorded(&other_geometry, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("geometries differ"),
        "{}",
        stderr(&out)
    );

    let out = gate(&["--threshold", "ten"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_summary_is_appended_and_the_verdict_is_json() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let (out, verdict) = compare_with_recorded(
        &recorded(),
        &["--export-markdown", summary.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("earlier step\n## stridelab gate: PASS"),
        "{text}"
    );
    assert!(text.contains("preset design-vm"));
    let verdict = verdict.unwrap();
    assert_eq!(verdict["method"]["threshold"], 0.1);
    assert_eq!(verdict["sim_tolerance"], 0.0);
}
