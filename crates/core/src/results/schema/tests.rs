//! Unit tests of `schema.rs`, kept beside it so the module itself stays short.

use super::*;
use crate::vocab::{ParamValue, RuleBreak};

/// Rules standing in for the catalogue in this module's tests: `row-sum` of the traverse
/// family with integers below 2^30 (the real catalogue's rules are pinned where it lives).
pub struct RowSumRules;

/// Largest integer parameter [`RowSumRules`] accepts.
pub const ROW_SUM_LIMIT: u64 = 1 << 30;

impl ParamRules for RowSumRules {
    fn check(&self, kernel: &str, family: Family, params: &Params) -> Result<(), RuleBreak> {
        if kernel != "row-sum" {
            return Err(RuleBreak::Kernel(format!("unknown kernel `{kernel}`")));
        }
        if family != Family::Traverse {
            return Err(RuleBreak::Family("`row-sum` belongs to Traverse".into()));
        }
        match params
            .iter()
            .find(|(_, v)| matches!(v, ParamValue::Int(i) if *i > ROW_SUM_LIMIT))
        {
            Some((name, _)) => Err(RuleBreak::Params(format!("`{name}` is out of range"))),
            None => Ok(()),
        }
    }
}

fn summary(m: f64) -> Summary {
    Summary {
        n: 3,
        median: m,
        min: m,
        max: m,
        mad: 0.0,
        ci_low: m,
        ci_high: m,
    }
}

pub fn sample_document() -> ResultsDocument {
    let mut params = Params::new();
    params.insert("rows".into(), ParamValue::Int(1024));
    ResultsDocument {
        schema: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "stridelab".into(),
            version: "0.1.0".into(),
        },
        started_unix_s: 1,
        wall_s: 2.0,
        status: RunStatus::Complete,
        info: serde_json::json!({"cpus": 2}),
        suite: SuiteSummary {
            name: "quick".into(),
            source: "builtin".into(),
            description: "d".into(),
            points: 1,
        },
        method: MethodSettings {
            warmup_ms: 1.0,
            min_sample_ms: 5.0,
            samples: 10,
            bootstrap_resamples: 1000,
            bootstrap_seed: 7,
            confidence: 0.95,
            huge_pages_requested: false,
            simulation_access_cap: 1 << 22,
        },
        records: vec![PointRecord {
            index: 0,
            kernel: "row-sum".into(),
            family: Family::Traverse,
            params,
            threads: 1,
            pinning: Pinning {
                threads: vec![PinnedThread {
                    thread: 0,
                    cpu: Some(0),
                    pinned: true,
                    error: None,
                }],
            },
            work: Some(Work {
                bytes_read: 8,
                bytes_written: 0,
                elements: 1,
            }),
            huge_pages: None,
            checksum: ChecksumStatus {
                status: ChecksumOutcome::Ok,
                expected: Some(1.0),
                actual: Some(1.0),
                runs_checked: 3,
            },
            timing: Some(Timing {
                source: Provenance::Timed,
                warmup_runs: 1,
                runs_per_sample: 1,
                samples_ns_per_run: vec![1.0, 1.0, 1.0],
                ns_per_run: summary(1.0),
                ns_per_element: 1.0,
                gb_per_s: Some(8.0),
                gb_per_s_ci: Some((8.0, 8.0)),
                precision: Some(Precision {
                    target_relative_ci: 0.02,
                    outliers: None,
                    drift: None,
                    warnings: Vec::new(),
                }),
            }),
            counters: None,
            simulated: None,
            reference: None,
            error: None,
            model: None,
            sweep: None,
            copy_plans: Vec::new(),
            time_model: None,
        }],
        time_model_probes: None,
    }
}

#[test]
fn round_trips_through_an_atomic_file() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("sub")).unwrap();
    let path = dir.path().join("sub/results.json");
    let mut doc = sample_document();
    for name in ["cols", "ld"] {
        let value = ParamValue::Int(1024);
        doc.records[0].params.insert(name.into(), value);
    }
    let deopt = ParamValue::Int(0);
    doc.records[0].params.insert("deopt".into(), deopt);
    // A missing directory is not created: the error names it.
    let elsewhere = dir.path().join("gone/results.json");
    let err = doc.write_atomic(&elsewhere).unwrap_err().to_string();
    assert!(
        err.contains(&dir.path().join("gone").display().to_string()),
        "{err}"
    );
    assert!(!dir.path().join("gone").exists());
    doc.write_atomic(&path).unwrap();
    assert_eq!(ResultsDocument::read(&path, &RowSumRules).unwrap(), doc);
    let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "temporary file left behind: {leftovers:?}"
    );
}

#[test]
fn a_timing_from_an_older_build_loads_without_a_precision_verdict() {
    let mut value = serde_json::to_value(sample_document()).unwrap();
    let timing = value["records"][0]["timing"].as_object_mut().unwrap();
    assert!(timing.remove("precision").is_some());
    let text = serde_json::to_string_pretty(&value).unwrap();
    let doc = ResultsDocument::from_json(&text, Path::new("old.json"), &RowSumRules).unwrap();
    assert_eq!(doc.records[0].timing.as_ref().unwrap().precision, None);
}

#[test]
fn a_missing_field_is_named_with_its_path() {
    let mut value = serde_json::to_value(sample_document()).unwrap();
    value["records"][0]
        .as_object_mut()
        .unwrap()
        .remove("checksum");
    let text = serde_json::to_string_pretty(&value).unwrap();
    match ResultsDocument::from_json(&text, Path::new("r.json"), &RowSumRules) {
        Err(ResultsError::MissingField { field, .. }) => {
            assert_eq!(field, "records[0].checksum")
        }
        other => panic!("expected MissingField, got {other:?}"),
    }
}

#[test]
fn a_corrupt_field_is_named_with_its_path() {
    let mut value = serde_json::to_value(sample_document()).unwrap();
    value["records"][0]["timing"]["ns_per_run"]["median"] = serde_json::json!("fast");
    let text = serde_json::to_string_pretty(&value).unwrap();
    match ResultsDocument::from_json(&text, Path::new("r.json"), &RowSumRules) {
        Err(ResultsError::CorruptField { field, .. }) => {
            assert_eq!(field, "records[0].timing.ns_per_run.median")
        }
        other => panic!("expected CorruptField, got {other:?}"),
    }
}

#[test]
fn other_schema_versions_and_bad_json_are_typed_errors() {
    let mut value = serde_json::to_value(sample_document()).unwrap();
    value["schema"] = serde_json::json!(SCHEMA_VERSION + 1);
    let text = serde_json::to_string(&value).unwrap();
    assert!(matches!(
        ResultsDocument::from_json(&text, Path::new("r.json"), &RowSumRules),
        Err(ResultsError::UnsupportedSchema { .. })
    ));
    assert!(matches!(
        ResultsDocument::from_json("{\"schema\": 1,", Path::new("r.json"), &RowSumRules),
        Err(ResultsError::Syntax { .. })
    ));
    assert!(matches!(
        ResultsDocument::from_json("{}", Path::new("r.json"), &RowSumRules),
        Err(ResultsError::MissingField { ref field, .. }) if field == "schema"
    ));
}
