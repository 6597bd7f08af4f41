//! `stridelab run` end to end: the real binary on this (PMU-less) machine.

use crate::common;
use common::{stridelab, stridelab_command};

use std::process::Output;

use serde_json::Value;

fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON document")
}

#[test]
fn a_kernel_grid_runs_without_a_pmu_and_says_where_numbers_came_from() {
    let out = stridelab(&[
        "run", "--kernel", "col-sum", "rows=64", "cols=64", "ld=64,65", "--json", "--quiet",
    ]);
    let doc = json_of(&out);
    assert_eq!(doc["schema"], stridelab::results::SCHEMA_VERSION);
    assert_eq!(doc["status"], "complete");
    let records = doc["records"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    for r in records {
        assert_eq!(r["checksum"]["status"], "ok");
        assert_eq!(r["timing"]["source"], "timed");
        assert!(r["timing"]["ns_per_run"]["median"].as_f64().unwrap() > 0.0);
        assert!(r["timing"]["samples_ns_per_run"].as_array().unwrap().len() >= 10);
        let hw = &r["counters"]["hardware"];
        assert_eq!(hw["source"], "measured");
        // Either the PMU is there, or the record says why not.
        assert!(hw["available"] == true || hw["reason"].as_str().is_some_and(|s| !s.is_empty()));
        assert_eq!(r["simulated"]["source"], "simulated");
        assert!(!r["simulated"]["levels"].as_array().unwrap().is_empty());
        assert!(r["reference"]["ratio"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(records[1]["params"]["ld"], 65);
}

#[test]
fn bad_parameters_are_rejected_before_anything_runs() {
    for args in [
        &["run", "--kernel", "row-sum", "rows=0", "cols=4", "--quiet"][..],
        &["run", "--kernel", "no-such-kernel", "--quiet"][..],
        &[
            "run", "--kernel", "row-sum", "rows=4", "cols=8", "ld=4", "--quiet",
        ][..],
        &["run", "--suite", "no-such-suite", "--quiet"][..],
        &[
            "run",
            "--kernel",
            "copy",
            "bytes=1K",
            "--threads",
            "0",
            "--quiet",
        ][..],
        &[
            "run",
            "--kernel",
            "copy",
            "bytes=1K",
            "--target-ci",
            "0%",
            "--quiet",
        ][..],
        &[
            "run",
            "--kernel",
            "copy",
            "bytes=1K",
            "--target-ci",
            "x",
            "--quiet",
        ][..],
        &[
            "run",
            "--kernel",
            "copy",
            "bytes=1K",
            "--sampling-budget",
            "-1",
            "--quiet",
        ][..],
        &[
            "run",
            "--kernel",
            "copy",
            "bytes=1K",
            "--sampling-budget",
            "inf",
            "--quiet",
        ][..],
    ] {
        let out = stridelab(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("error:"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn misused_parameter_words_exit_2_naming_the_word_in_run_and_sim() {
    // (the words after the kernel name, what the message must name)
    let cases: &[(&[&str], &str)] = &[
        (
            &["rows=1024", "cols=1024,2048", "cols=4"],
            "`cols` is given twice (`cols=1024,2048`, then `cols=4`)",
        ),
        (&["=5", "cols=8"], "`=5` has no parameter name"),
        (&["rows=", "cols=8"], "`rows=` gives no value"),
        (&["rows=1,,2", "cols=8"], "`rows=1,,2` has an empty item"),
        (&["rows=8", "cols=8", "foo=3"], "no parameter `foo`"),
    ];
    for (words, needle) in cases {
        let run = [&["run", "--kernel", "row-sum"][..], words, &["--quiet"]].concat();
        let sim = [&["sim", "row-sum"][..], words].concat();
        for args in [run, sim] {
            let out = stridelab(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(stderr.contains(needle), "{args:?}: {stderr}");
            assert!(out.stdout.is_empty(), "{args:?} printed results");
        }
    }
}

#[test]
fn suite_file_errors_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(
        &path,
        "name = \"s\"\n\n[[point]]\nkernel = \"row-sum\"\nparams = { rows = 8, cols = 8 }\nthreds = [1]\n",
    )
    .unwrap();
    let out = stridelab(&["run", "--suite", path.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 6") && stderr.contains("threds"),
        "{stderr}"
    );

    std::fs::write(
        &path,
        "name = \"s\"\n\n[[point]]\nkernel = \"row-sum\"\nparams = { rows = 8 }\n",
    )
    .unwrap();
    let out = stridelab(&["run", "--suite", path.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 4") && stderr.contains("cols"),
        "{stderr}"
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_keeps_the_finished_points_in_a_valid_file() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("long.toml");
    // Many quick points: a few finish before the interrupt, most do not.
    std::fs::write(
        &suite,
        "name = \"long\"\n[[point]]\nkernel = \"conflict\"\nparams = { stride = [511, 512, 513], count = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], reps = [10, 11, 12, 13, 14] }\n",
    )
    .unwrap();
    let out_path = dir.path().join("r.json");
    let mut child = stridelab_command()
        .args([
            "run",
            "--suite",
            suite.to_str().unwrap(),
            "--quiet",
            "--out",
        ])
        .arg(&out_path)
        .arg("--export-csv")
        .arg(out_path.with_extension("csv"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id() as libc::pid_t;
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "run did not stop after Ctrl-C");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap();
    assert_eq!(doc["status"], "interrupted");
    let records = doc["records"].as_array().unwrap();
    assert!(!records.is_empty(), "some points finished in 1.5 s");
    assert!(records.len() < 300);
    assert!(records.iter().all(|r| r["checksum"]["status"] == "ok"));
    assert!(out_path.with_extension("csv").exists());
}

#[test]
fn the_conflict_probe_is_simulated_with_conflict_misses_only_where_the_geometry_predicts() {
    let out = stridelab(&[
        "run",
        "--kernel",
        "conflict",
        "stride=511,512,513",
        "count=16",
        "mode=lat",
        // The simulated counts are what this test checks; a short budget keeps it quick.
        "--sampling-budget",
        "0.5",
        "--json",
        "--quiet",
    ]);
    let doc = json_of(&out);
    for r in doc["records"].as_array().unwrap() {
        let stride_bytes = r["params"]["stride"].as_u64().unwrap() * 8;
        let l1 = &r["simulated"]["levels"][0];
        let (sets, line, ways) = (
            l1["sets"].as_u64().unwrap(),
            l1["line"].as_u64().unwrap(),
            l1["ways"].as_u64().unwrap(),
        );
        // All 16 slots share one set exactly when the stride is a multiple of the set span.
        let one_set = stride_bytes % (sets * line) == 0;
        let conflicts = l1["conflict"].as_u64().unwrap();
        assert_eq!(
            conflicts > 0,
            one_set && 16 > ways,
            "stride {stride_bytes} B: {l1}"
        );
        assert_eq!(l1["compulsory"], 16);
    }
}
