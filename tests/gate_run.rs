//! `stridelab gate` measuring for real (a tiny suite, seconds): a baseline is recorded, the
//! unchanged code and the de-optimised fixture are compared with it. Timing verdicts on a
//! shared machine are not asserted (that is the A/A experiment's job, `scripts/gate-aa.sh`);
//! what must hold is that the simulated track is reproducible run to run.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn gate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stridelab"))
        .arg("gate")
        .args(args)
        .output()
        .expect("run stridelab")
}

fn suite() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gate/tiny.toml")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_recorded_baseline_then_real_runs_with_and_without_the_slowdown_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.json");
    let baseline = baseline.to_str().unwrap();
    let suite = suite();
    let out = gate(&["--suite", &suite, "--quiet", "--save-baseline", baseline]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(baseline).unwrap()).unwrap();
    assert_eq!(recorded["info"]["gate"]["preset"], "design-vm");
    let levels = &recorded["records"][0]["simulated"]["levels"];
    assert_eq!(
        levels[0]["size"],
        48 * 1024,
        "simulated on the preset, not this machine"
    );

    for fixture in [false, true] {
        let verdict_path = dir.path().join(format!("verdict-{fixture}.json"));
        let mut args = vec![
            "--suite",
            &suite,
            "--baseline",
            baseline,
            "--quiet",
            "--export-json",
            verdict_path.to_str().unwrap(),
        ];
        if fixture {
            args.push("--fixture-slowdown");
        }
        let out = gate(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "fixture {fixture}: {err}"
        );
        let verdict: Value =
            serde_json::from_str(&std::fs::read_to_string(&verdict_path).unwrap()).unwrap();
        // Same code, same preset: the simulated misses repeat exactly. The fixture re-reads rows
        // that are still in L1, so its misses are unchanged too (only time grows).
        assert_eq!(verdict["deterministic_regressions"], 0, "{verdict:#}");
        assert_eq!(verdict["failures"], 0, "{verdict:#}");
        let rows = verdict["rows"].as_array().unwrap();
        let row_sum = rows
            .iter()
            .find(|r| r["kernel"] == "row-sum" && r["track"] == "timing")
            .unwrap();
        let expected = if fixture { "deopt=1" } else { "deopt=0" };
        assert!(
            row_sum["params"].as_str().unwrap().contains(expected),
            "{row_sum}"
        );
        assert!(row_sum["change"].as_f64().is_some(), "{row_sum}");
    }
}

#[test]
fn the_fixture_is_refused_when_recording_a_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("b.json");
    let suite = suite();
    let out = gate(&[
        "--suite",
        &suite,
        "--fixture-slowdown",
        "--save-baseline",
        baseline.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!baseline.exists());
}
