//! `stridelab run` against the runs before it, end to end in a fresh directory: the first run
//! has nothing to compare with, the second cannot tell yet (one earlier run teaches no noise),
//! the third judges every point against the noise of the first two; named baselines are saved
//! and compared with, and a missing or malformed one stops the run before it measures.

use std::path::Path;
use std::process::Output;

use crate::common::stridelab_command;

/// A few milliseconds of sampling per point: the comparison, not the precision, is tested.
const KERNEL: &[&str] = &[
    "run",
    "--kernel",
    "col-sum",
    "rows=64",
    "cols=64",
    "ld=64,65",
    "--sampling-budget",
    "0.05",
];

fn run_in(dir: &Path, extra: &[&str]) -> Output {
    stridelab_command()
        .current_dir(dir)
        .args(KERNEL)
        .args(extra)
        .output()
        .expect("run stridelab")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_second_run_cannot_tell_yet_and_a_third_judges_against_the_noise_of_the_first_two() {
    let dir = tempfile::tempdir().unwrap();
    let first = stdout(&run_in(dir.path(), &[]));
    assert!(first.contains("no earlier run of these points"), "{first}");
    let second = stdout(&run_in(dir.path(), &[]));
    assert!(
        second.contains("against the previous run (reports/runs/"),
        "{second}"
    );
    assert!(second.contains("cannot tell yet"), "{second}");
    assert!(!second.contains("beyond the run-to-run noise"), "{second}");
    let third = stdout(&run_in(dir.path(), &[]));
    assert!(third.contains("beyond the run-to-run noise"), "{third}");
    assert!(
        third.contains("learnt from the 2 newest earlier runs"),
        "{third}"
    );
    // col-sum has a same-run read reference: it is judged on it, and says so.
    assert!(third.contains("time ÷ read"), "{third}");
    assert!(third.contains("ld=65"), "{third}");
}

#[test]
fn a_named_baseline_is_saved_then_compared_with() {
    let dir = tempfile::tempdir().unwrap();
    let saved = run_in(dir.path(), &["--save-baseline", "before"]);
    assert!(
        String::from_utf8_lossy(&saved.stderr).contains("baseline `before` saved"),
        "{}",
        String::from_utf8_lossy(&saved.stderr)
    );
    assert!(dir.path().join("reports/baselines/before.json").is_file());
    let against = stdout(&run_in(dir.path(), &["--baseline", "before"]));
    assert!(against.contains("against baseline `before`"), "{against}");
}

#[test]
fn a_missing_or_malformed_baseline_stops_the_run_before_it_measures() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--baseline", "nope"], "no baseline named `nope`"),
        (
            &["--save-baseline", "../escape"],
            "baseline name `../escape`",
        ),
        (&["--baseline", ""], "baseline name ``"),
    ];
    for (args, message) in cases {
        let out = run_in(dir.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(
            !dir.path().join("reports/runs").exists(),
            "{args:?} measured"
        );
    }
    // A file in the baselines' place that stridelab did not write is never replaced.
    std::fs::create_dir_all(dir.path().join("reports/baselines")).unwrap();
    std::fs::write(dir.path().join("reports/baselines/mine.json"), "notes").unwrap();
    let out = run_in(dir.path(), &["--save-baseline", "mine"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a stridelab results file"));
    let kept = std::fs::read_to_string(dir.path().join("reports/baselines/mine.json")).unwrap();
    assert_eq!(kept, "notes");
}
