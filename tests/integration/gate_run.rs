//! `stridelab gate` measuring for real against a stored baseline (a tiny suite, seconds): a
//! baseline is recorded and the unchanged code compared with it. Timing verdicts on a shared
//! machine are not asserted (the calibration's job, `scripts/gate-calibrate.sh`); what must
//! hold is that the simulated track repeats exactly run to run, and that timing is judged at
//! all on the machine that recorded the baseline.

use crate::common;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

fn gate(args: &[&str]) -> Output {
    common::stridelab_command()
        .arg("gate")
        .args(args)
        .env_remove("STRIDELAB_INJECT_SLOWDOWN")
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
fn a_recorded_baseline_then_a_real_run_repeats_its_simulated_misses() {
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
    assert_eq!(recorded["info"]["gate"]["injected_slowdown"], Value::Null);
    let levels = &recorded["records"][0]["simulated"]["levels"];
    assert_eq!(
        levels[0]["size"],
        48 * 1024,
        "simulated on the preset, not this machine"
    );

    let verdict_path = dir.path().join("verdict.json");
    let results_path = dir.path().join("results.json");
    let out = gate(&[
        "--suite",
        &suite,
        "--baseline",
        baseline,
        "--quiet",
        "--export-json",
        verdict_path.to_str().unwrap(),
        // `--output` is the older name of `--out`.
        "--output",
        results_path.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{err}");
    assert!(results_path.is_file(), "{err}");
    let verdict: Value =
        serde_json::from_str(&std::fs::read_to_string(&verdict_path).unwrap()).unwrap();
    // Same code, same preset: the simulated misses repeat exactly.
    assert_eq!(verdict["deterministic_regressions"], 0, "{verdict:#}");
    assert_eq!(verdict["failures"], 0, "{verdict:#}");
    // Same machine: timing is judged (the probe and the kernel; the reference is shown).
    assert_eq!(verdict["timing_judged"], 2, "{verdict:#}");
    assert_eq!(verdict["method"]["kind"], "stored-baseline");
    assert_eq!(verdict["method"]["timing_not_comparable"], Value::Null);
}
