//! `sim --json` of another build of the lab against this one, point by point over a suite: a
//! change meant to keep behaviour (a refactoring) must leave every simulated count, verdict and
//! note byte for byte as it was. Run by `scripts/sim-identical.sh`, which names the other
//! build's binary in `STRIDELAB_COMPARE_BIN` (ignored otherwise: it needs that binary).
//!
//! Each distinct (kernel, `key=value` words) of the suite's plan is simulated once by each
//! binary (threads do not change a simulation). Twice, in fact: with the analytic copy
//! schedules (`--wisdom off`), and with a wisdom file the other build prefilled
//! (`stridelab wisdom`), so the copy engine's replay with a planner's measured schedules is
//! compared as well. Sweep points on a preset's geometry are simulated on this machine's like
//! the others: the comparison is between builds, not against the preset.

use std::path::Path;
use std::process::Command;

use stridelab::harness::Suite;
use stridelab::harness::suite::PlanLimits;

/// The `sim` words of every distinct point of `suite`, as its plan gives them.
fn suite_points(suite: &str) -> Vec<Vec<String>> {
    let plan = Suite::load(suite)
        .and_then(|s| {
            let levels = stridelab::cache::geometry::Geometry::detect().data_levels();
            s.plan_on(None, PlanLimits::default(), &levels)
        })
        .expect("the suite plans");
    let mut points: Vec<Vec<String>> = Vec::new();
    for point in &plan.points {
        let mut words = vec![point.spec.name.to_string()];
        // Positional values keep their place under the empty key.
        words.extend(point.args.iter().map(|(key, value)| match key.as_str() {
            "" => value.clone(),
            _ => format!("{key}={value}"),
        }));
        if !points.contains(&words) {
            points.push(words);
        }
    }
    points
}

/// `binary sim WORDS --json --wisdom WISDOM`: its exit code and stdout.
fn sim(binary: &Path, words: &[String], wisdom: &str) -> (Option<i32>, Vec<u8>) {
    let output = Command::new(binary)
        .arg("sim")
        .args(words)
        .args(["--json", "--wisdom", wisdom])
        .output()
        .unwrap_or_else(|err| panic!("{} cannot run: {err}", binary.display()));
    (output.status.code(), output.stdout)
}

#[test]
#[ignore = "compares with another build: scripts/sim-identical.sh BINARY"]
fn sim_output_is_byte_identical_to_the_other_build() {
    let other = std::env::var_os("STRIDELAB_COMPARE_BIN")
        .expect("STRIDELAB_COMPARE_BIN names the other build's binary");
    let other = Path::new(&other);
    let this = Path::new(env!("CARGO_BIN_EXE_stridelab"));
    let suite = std::env::var("STRIDELAB_COMPARE_SUITE").unwrap_or_else(|_| "quick".into());
    let dir = tempfile::tempdir().unwrap();
    let wisdom = dir.path().join("wisdom.json");
    let wisdom = wisdom.to_str().expect("a UTF-8 temp path");
    let prefill = Command::new(other)
        .args(["wisdom", "--suite", &suite, "--wisdom", wisdom])
        .output()
        .expect("the other build prefills a wisdom file");
    assert!(prefill.status.success(), "{prefill:?}");

    let points = suite_points(&suite);
    let mut differing = Vec::new();
    let mut compared = 0;
    for words in &points {
        for wisdom in ["off", wisdom] {
            let before = sim(other, words, wisdom);
            let after = sim(this, words, wisdom);
            compared += 1;
            if before != after {
                differing.push(format!("{} (--wisdom {wisdom})", words.join(" ")));
            }
        }
    }
    eprintln!(
        "{suite}: {} points, {compared} sim runs per binary, {} differing",
        points.len(),
        differing.len()
    );
    assert!(differing.is_empty(), "differing: {differing:#?}");
}
