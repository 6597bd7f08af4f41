//! Documents read from disk are validated once, on load: a corrupted results file, baseline or
//! infer report makes `report` and `gate` exit 2 with an error naming the file and the JSON path
//! of the bad value — never a panic, a hang, a huge allocation, or a passing gate. Every
//! corrupted document is derived here from a committed one by a transformation.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::guarded::{Outcome, run_guarded};
use serde_json::{Value, json};

/// Far above what loading and rejecting a document takes; a hang fails the test instead.
const LIMIT: Duration = Duration::from_secs(20);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn load(relative: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join(relative)).unwrap()).unwrap()
}

fn baseline() -> Value {
    load("reports/baseline.json")
}

fn small() -> Value {
    load("tests/fixtures/results_small.json")
}

fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(value).unwrap()).unwrap();
    path
}

fn records(doc: &mut Value) -> &mut Vec<Value> {
    doc["records"].as_array_mut().unwrap()
}

fn first_of<'a>(doc: &'a mut Value, kernel: &str) -> &'a mut Value {
    records(doc)
        .iter_mut()
        .find(|r| r["kernel"] == kernel && !r["timing"].is_null())
        .unwrap_or_else(|| panic!("no timed `{kernel}` record"))
}

/// `gate --current` on `current` against the committed baseline.
fn gate(current: &Value) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "current.json", current);
    let baseline = root().join("reports/baseline.json");
    run_guarded(
        dir.path(),
        &[
            "gate",
            "--baseline",
            baseline.to_str().unwrap(),
            "--current",
            path.to_str().unwrap(),
            "--quiet",
        ],
        LIMIT,
    )
}

/// `report --in` on `doc`.
fn report(doc: &Value) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "results.json", doc);
    run_guarded(
        dir.path(),
        &["report", "--in", path.to_str().unwrap(), "--out", "out"],
        LIMIT,
    )
}

#[track_caller]
fn assert_rejected(out: &Outcome, field: &str, what: &str) {
    out.assert_exits(&[2], what);
    assert!(
        out.stderr.contains(&format!("`{field}")),
        "{what}: the error does not name `{field}`: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains(".json`"),
        "{what}: no file named: {}",
        out.stderr
    );
}

/// Applies `corrupt` to the second timed record of the baseline (index 1 of the timed ones).
fn corrupt_timing(corrupt: impl Fn(&mut Value)) -> Value {
    let mut doc = baseline();
    let timed = records(&mut doc)
        .iter_mut()
        .filter(|r| !r["timing"].is_null())
        .nth(1)
        .unwrap();
    corrupt(&mut timed["timing"]);
    doc
}

#[test]
fn the_committed_documents_still_load_and_the_baseline_passes_against_itself() {
    let out = gate(&baseline());
    out.assert_exits(&[0], "baseline against itself");
    let out = report(&small());
    out.assert_exits(&[0], "report of the small fixture");
}

#[test]
fn gate_refuses_a_current_document_with_emptied_samples() {
    let mut doc = baseline();
    for r in records(&mut doc) {
        if !r["timing"].is_null() {
            r["timing"]["samples_ns_per_run"] = json!([]);
        }
    }
    let out = gate(&doc);
    assert_ne!(out.code, Some(0), "emptied samples passed: {}", out.stderr);
    assert_rejected(
        &out,
        "records[0].timing.samples_ns_per_run",
        "empty samples",
    );
}

#[test]
fn gate_refuses_impossible_timing_summaries() {
    type Corrupt = fn(&mut Value);
    let cases: &[(&str, Corrupt, &str)] = &[
        (
            "zero sample",
            |t| t["samples_ns_per_run"][0] = json!(0.0),
            "timing.samples_ns_per_run[0]",
        ),
        (
            "negative sample",
            |t| t["samples_ns_per_run"][3] = json!(-7.5),
            "timing.samples_ns_per_run[3]",
        ),
        (
            "negative median",
            |t| t["ns_per_run"]["median"] = json!(-5.0),
            "timing.ns_per_run.median",
        ),
        (
            "inverted interval",
            |t| {
                let s = &mut t["ns_per_run"];
                let (low, high) = (s["ci_low"].clone(), s["ci_high"].clone());
                s["ci_low"] = high;
                s["ci_high"] = low;
            },
            "timing.ns_per_run.ci_low",
        ),
        (
            "n = 0",
            |t| t["ns_per_run"]["n"] = json!(0),
            "timing.ns_per_run.n",
        ),
        (
            "runs_per_sample = 0",
            |t| t["runs_per_sample"] = json!(0),
            "timing.runs_per_sample",
        ),
    ];
    for &(what, corrupt, field) in cases {
        let out = gate(&corrupt_timing(corrupt));
        assert_ne!(out.code, Some(0), "{what} passed the gate");
        assert_rejected(&out, &format!("records[1].{field}"), what);
    }
}

#[test]
fn gate_refuses_impossible_cache_geometry_in_the_manifest() {
    let mut doc = baseline();
    doc["info"]["caches"][1]["sets"] = json!(0);
    let out = gate(&doc);
    assert_ne!(out.code, Some(0));
    assert_rejected(&out, "info.caches[1]", "zero sets");
    let mut doc = baseline();
    doc["info"]["gate"]["preset"] = json!("no-such-machine");
    assert_rejected(&gate(&doc), "info.gate.preset", "unknown preset");
}

#[test]
fn a_free_text_note_does_not_switch_the_simulated_comparison_off() {
    let mut doc = baseline();
    for r in records(&mut doc) {
        if let Some(scope) = r["simulated"].get_mut("scope") {
            scope["note"] = json!("the model's time budget (0.1 s) ran out");
        }
    }
    // One more L1d miss on the first simulated point, kept consistent: a real regression.
    let l1 = &mut first_of(&mut doc, "row-sum")["simulated"]["levels"][0];
    for field in ["misses", "load_misses", "conflict"] {
        l1[field] = json!(l1[field].as_u64().unwrap() + 1);
    }
    let out = gate(&doc);
    out.assert_exits(&[1], "a miss regression behind a time-budget note");
    assert!(
        out.stderr.contains("L1d misses (simulated)"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_current_simulation_cut_by_a_time_budget_fails_the_gate() {
    let mut doc = baseline();
    let record = first_of(&mut doc, "row-sum");
    record["simulated"]["scope"]["cut"] = json!("time-budget");
    let out = gate(&doc);
    out.assert_exits(&[1], "a time-budget cut in the current run");
    // A typed cut that contradicts the counts is refused outright.
    let mut doc = baseline();
    first_of(&mut doc, "row-sum")["simulated"]["scope"]["cut"] = json!("access-cap");
    assert_rejected(
        &gate(&doc),
        "records[0].simulated.scope.cut",
        "a cap on a full run",
    );
}

#[test]
fn too_many_samples_per_point_are_refused_before_any_bootstrap() {
    let mut doc = baseline();
    for r in records(&mut doc) {
        if r["timing"].is_null() {
            continue;
        }
        let samples: Vec<f64> = (0..20_000).map(|i| 100.0 + (i % 97) as f64).collect();
        r["timing"]["samples_ns_per_run"] = json!(samples);
    }
    let out = gate(&doc);
    assert_ne!(out.code, Some(0));
    assert_rejected(
        &out,
        "records[0].timing.samples_ns_per_run",
        "20 000 samples",
    );
}

/// `small()` without simulations, so the report reads the manifest's geometry.
fn unsimulated() -> Value {
    let mut doc = small();
    for r in records(&mut doc) {
        r["simulated"] = Value::Null;
    }
    doc
}

#[test]
fn report_refuses_manifest_geometry_it_cannot_use() {
    for (field, value) in [
        ("sets", json!(0)),
        ("line", json!(0)),
        ("ways", json!(0)),
        ("sets", json!(4_294_967_295u64)),
    ] {
        let mut doc = unsimulated();
        doc["info"]["caches"][1][field] = value.clone();
        let what = format!("info.caches[1].{field} = {value}");
        assert_rejected(&report(&doc), "info.caches[1]", &what);
    }
    // A level as large as its sets claim: consistent, but beyond what a report enumerates.
    let mut doc = unsimulated();
    let l1 = &mut doc["info"]["caches"][1];
    l1["sets"] = json!(4_294_967_295u64);
    l1["size"] = json!(4_294_967_295u64 * 64 * 8);
    assert_rejected(&report(&doc), "info.caches[1]", "4 Gi sets");
}

#[test]
fn report_refuses_parameters_outside_the_catalogue_ranges() {
    for (kernel, param, value) in [
        ("conflict", "count", 1u64 << 61),
        ("conflict", "count", 1 << 40),
        ("col-sum", "rows", 1 << 40),
    ] {
        let mut doc = small();
        let at = records(&mut doc)
            .iter()
            .position(|r| r["kernel"] == kernel)
            .unwrap();
        records(&mut doc)[at]["params"][param] = json!(value);
        let what = format!("{kernel} {param}={value}");
        assert_rejected(&report(&doc), &format!("records[{at}].params"), &what);
    }
}

#[test]
fn report_refuses_a_bandwidth_interval_that_is_not_one() {
    let mut doc = small();
    let at = records(&mut doc)
        .iter()
        .position(|r| r["timing"]["gb_per_s"].is_number())
        .unwrap();
    records(&mut doc)[at]["timing"]["gb_per_s_ci"] = json!([1e308, -1e308]);
    let field = format!("records[{at}].timing.gb_per_s_ci");
    assert_rejected(&report(&doc), &field, "gb_per_s_ci = [1e308, -1e308]");
}

#[test]
fn report_refuses_inconsistent_simulated_counts() {
    type Corrupt = fn(&mut Value);
    let cases: &[(&str, Corrupt)] = &[
        ("misses", |l| {
            l["misses"] = json!(l["loads"].as_u64().unwrap() * 4 + 1)
        }),
        ("miss_rate", |l| l["miss_rate"] = json!(1.5)),
        ("misses", |l| {
            l["compulsory"] = json!(l["compulsory"].as_u64().unwrap() + 1)
        }),
    ];
    for &(field, corrupt) in cases {
        let mut doc = small();
        let at = records(&mut doc)
            .iter()
            .position(|r| !r["simulated"].is_null())
            .unwrap();
        corrupt(&mut records(&mut doc)[at]["simulated"]["levels"][0]);
        let path = format!("records[{at}].simulated.levels[0].{field}");
        assert_rejected(&report(&doc), &path, field);
    }
}

#[test]
fn report_refuses_a_corrupt_infer_document_beside_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let results = write(dir.path(), "results.json", &small());
    let mut infer = load("tests/fixtures/infer.json");
    infer["curves"]["capacity"][2]["x"] = json!(-4096.0);
    write(dir.path(), "infer.json", &infer);
    let out = run_guarded(
        dir.path(),
        &["report", "--in", results.to_str().unwrap(), "--out", "out"],
        LIMIT,
    );
    out.assert_exits(&[2], "corrupt infer.json");
    assert!(
        out.stderr.contains("curves.capacity[2].x") && out.stderr.contains("infer.json"),
        "{}",
        out.stderr
    );
}

#[test]
fn report_refuses_model_predictions_outside_the_recorded_geometry() {
    type Corrupt = fn(&mut Value);
    let cases: &[(&str, Corrupt, &str)] = &[
        (
            "more sets used than the level has",
            |m| m["pattern"]["levels"][0]["sets_used"] = json!(1u64 << 40),
            "model.pattern.levels[0].sets_used",
        ),
        (
            "a miss fraction above one",
            |m| m["pattern"]["levels"][1]["cyclic_misses_per_access"] = json!(2.5),
            "model.pattern.levels[1].cyclic_misses_per_access",
        ),
        (
            "an impossible geometry",
            |m| m["pattern"]["levels"][0]["line"] = json!(48),
            "model.pattern.levels[0]",
        ),
        (
            "a prediction claiming to be timed",
            |m| m["source"] = json!("timed"),
            "model.source",
        ),
    ];
    for (what, corrupt, field) in cases {
        let mut doc = small();
        let index = records(&mut doc)
            .iter()
            .position(|r| r["kernel"] == "conflict")
            .unwrap();
        corrupt(&mut records(&mut doc)[index]["model"]);
        let out = report(&doc);
        assert_rejected(&out, &format!("records[{index}].{field}"), what);
    }
}

#[test]
fn a_schema_1_baseline_gates_a_schema_2_run() {
    // A schema-1 baseline (the committed one as schema 1 wrote it: no `model` per record)
    // gates the committed schema-2 document: a record's `model` is optional, so the
    // comparison sees the same numbers.
    let current = baseline();
    assert_eq!(current["schema"], 2);
    let mut old = current.clone();
    old["schema"] = json!(1);
    for r in records(&mut old) {
        r.as_object_mut().unwrap().remove("model");
    }
    let dir = tempfile::tempdir().unwrap();
    let old_path = write(dir.path(), "baseline-schema-1.json", &old);
    let current_path = write(dir.path(), "current.json", &current);
    let out = run_guarded(
        dir.path(),
        &[
            "gate",
            "--baseline",
            old_path.to_str().unwrap(),
            "--current",
            current_path.to_str().unwrap(),
            "--quiet",
        ],
        LIMIT,
    );
    out.assert_exits(&[0], "schema-2 current against a schema-1 baseline");
}
