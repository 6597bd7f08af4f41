//! `stridelab sim --loop … --array …` through the real binary: the example nest names the
//! column walk as the conflicting reference and a padded leading dimension removes its
//! conflicts; a loop form of col-sum misses like the kernel; bad input exits 2 with a message.

use crate::common;
use common::stridelab;

use serde_json::Value;

const EXAMPLE: &str = "for i in 0..1024: for j in 0..1024: a[j, i] += b[i, j]";

fn loop_json(loop_text: &str, arrays: &[&str], extra: &[&str]) -> Value {
    let mut args = vec!["sim", "--loop", loop_text];
    for array in arrays {
        args.extend(["--array", array]);
    }
    args.extend(extra);
    args.push("--json");
    let out = stridelab(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn conflict(report: &Value) -> u64 {
    report["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["conflict"].as_u64().unwrap())
        .sum()
}

#[test]
fn the_example_names_the_column_walk_and_a_padded_lda_removes_its_conflicts() {
    let preset = ["--preset", "design-vm"];
    let plain = loop_json(
        EXAMPLE,
        &["a = f64[1024, 1024]", "b = f64[1024, 1024]"],
        &preset,
    );
    assert_eq!(plain["source"], "simulated");
    assert_eq!(plain["accesses"], 3 * 1024 * 1024);
    let before = conflict(&plain);
    assert!(before > 100_000, "{before}");
    let findings: Vec<&str> = plain["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(
        findings
            .iter()
            .any(|f| f.contains("a[j, i] (statement 1) takes")),
        "{findings:?}"
    );
    let padding = &plain["padding"][0];
    assert_eq!(padding["array"], "a");
    let best = &padding["candidates"][padding["best"].as_u64().unwrap() as usize];
    assert!(
        padding["sentence"]
            .as_str()
            .unwrap()
            .contains("(simulated)")
    );

    let padded = loop_json(
        EXAMPLE,
        &["a = f64[1024, 1024] ld=1032", "b = f64[1024, 1024]"],
        &preset,
    );
    let after = conflict(&padded);
    assert!(
        after * 10 < before,
        "ld=1032: {after} conflict misses, ld=1024: {before}"
    );
    // The advice's counts are what a run with that leading dimension gives.
    let ld = best["ld"].as_u64().unwrap();
    let rerun = loop_json(
        EXAMPLE,
        &[
            &format!("a = f64[1024, 1024] ld={ld}"),
            "b = f64[1024, 1024]",
        ],
        &preset,
    );
    assert_eq!(
        conflict(&rerun),
        best["conflict"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum::<u64>()
    );

    let out = stridelab(&[
        "sim",
        "--loop",
        EXAMPLE,
        "--array",
        "a = f64[1024, 1024]",
        "--array",
        "b = f64[1024, 1024]",
        "--preset",
        "design-vm",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("a[j, i] walks a column: 8,192 B = 128 lines"),
        "{text}"
    );
    assert!(text.contains("per array reference (simulated"), "{text}");
}

#[test]
fn a_loop_col_sum_misses_like_the_kernel() {
    let geometry = ["--preset", "design-vm"];
    let nest = loop_json(
        "for j in 0..96: for i in 0..512: read a[i, j]",
        &["a = f64[512, 96] ld=128"],
        &geometry,
    );
    let out = stridelab(&[
        "sim",
        "col-sum",
        "rows=512",
        "cols=96",
        "ld=128",
        "--preset",
        "design-vm",
        "--json",
    ]);
    assert!(out.status.success());
    let kernel: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (ours, theirs) in nest["levels"]
        .as_array()
        .unwrap()
        .iter()
        .zip(kernel["levels"].as_array().unwrap())
    {
        for key in [
            "loads",
            "stores",
            "misses",
            "compulsory",
            "capacity",
            "conflict",
        ] {
            assert_eq!(ours[key], theirs[key], "{key} on {}", ours["name"]);
        }
    }
}

#[test]
fn bad_input_exits_2_with_a_useful_message() {
    let ab = ["a = f64[1024, 1024]", "b = f64[1024, 1024]"];
    // (loop, arrays, words the message must contain)
    let table: &[(&str, &[&str], &[&str])] = &[
        (
            "for i in 0..4 a[i, i] = 0",
            &ab,
            &["column 15", "expected ':'", "^"],
        ),
        (
            "for i in 0..4: c[i, i] = 0",
            &ab,
            &["unknown array 'c'", "declared: a, b"],
        ),
        (
            "for i in 0..4: a[i] = 0",
            &ab,
            &["2 dims", "indexed with 1"],
        ),
        (
            "for i in 0..4: for j in 0..4: a[i*j, 0] = 0",
            &ab,
            &["not affine"],
        ),
        (
            "for i in 0..4: a[i, k] = 0",
            &ab,
            &["unknown loop index 'k'"],
        ),
        (
            EXAMPLE.replace("a[j, i]", "a[j, i+1]").leak(),
            &ab,
            &[
                "statement 1",
                "a[j, i+1]",
                "i = 1023, j = 0 gives a[0, 1024]",
                "shape [1024, 1024]",
            ],
        ),
        (
            "for i in 0..100000000000: for j in 0..100000000000: read a[0, 0]",
            &ab,
            &["more than", "--max-accesses"],
        ),
        (
            "for i in 0..100000000000: for j in 0..0: read a[0, 0]",
            &ab,
            &["outer loops run more than"],
        ),
        (
            "for i in 0..4: read a[i, i]",
            &["a = f64[4, 4", "b = f64[2]"],
            &["--array #1", "expected ']'"],
        ),
        (
            "for i in 0..4: read a[i, i]",
            &["a = f64 arange(16).view(4, 5)"],
            &["array a"],
        ),
        (
            "for i in 0..4: read a[i, i]",
            &["a = f64[4, 4] ld=2"],
            &["ld=2 is smaller"],
        ),
    ];
    for &(text, arrays, words) in table {
        let mut args = vec!["sim", "--loop", text, "--preset", "design-vm"];
        for array in arrays {
            args.extend(["--array", array]);
        }
        let out = stridelab(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {stderr}");
        assert!(!stderr.contains("panicked"), "{text}: {stderr}");
        for word in words {
            assert!(stderr.contains(word), "{text}: {word:?} not in {stderr}");
        }
    }
    // --json answers errors with one object too.
    let out = stridelab(&[
        "sim",
        "--loop",
        "for i in 0..4: c[i] = 0",
        "--array",
        "a = f64[4]",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown array")
    );
}

/// The record `run --loop` writes for `loop_text` on design-vm's caches (the results document
/// on stdout, nothing written under `reports/`).
fn run_loop_record(loop_text: &str, arrays: &[&str]) -> Value {
    let mut args = vec![
        "run",
        "--loop",
        loop_text,
        "--preset",
        "design-vm",
        "--json",
        "--no-compare",
        "--quiet",
        "--sampling-budget",
        "0",
    ];
    for array in arrays {
        args.extend(["--array", array]);
    }
    let out = stridelab(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(doc["records"].as_array().unwrap().len(), 1);
    doc["records"][0].clone()
}

#[test]
fn run_loop_times_the_stream_sim_loop_simulates() {
    let cases: &[(&str, &[&str])] = &[
        (
            "for i in 0..96: for j in 0..96: a[j, i] += b[i, j]",
            &["a = f64[96, 96] ld=128", "b = f64[96, 96]"],
        ),
        (
            "for j in 0..64: for i in 0..64: s += a[i, j]",
            &["a = f32[64, 64]"],
        ),
        (
            "for i in 0..32: for j in i..32: a[i, j] = a[j, i]; c[i] += a[i, j]",
            &["a = f64[32, 32]", "c = f64[32]"],
        ),
    ];
    for (text, arrays) in cases {
        let timed = run_loop_record(text, arrays);
        let simulated = loop_json(text, arrays, &["--preset", "design-vm"]);
        assert!(
            timed["timing"]["ns_per_run"]["median"].as_f64().unwrap() > 0.0,
            "{text}"
        );
        assert_eq!(timed["kernel"], "loop", "{text}");
        assert_eq!(timed["params"]["nest"], *text, "{text}");
        assert_eq!(timed["work"]["elements"], simulated["accesses"], "{text}");
        let levels = timed["simulated"]["levels"].as_array().unwrap();
        let expected = simulated["levels"].as_array().unwrap();
        assert_eq!(levels.len(), expected.len(), "{text}");
        for (got, want) in levels.iter().zip(expected) {
            for key in [
                "loads",
                "stores",
                "misses",
                "compulsory",
                "capacity",
                "conflict",
            ] {
                assert_eq!(got[key], want[key], "{text}: {} {key}", want["name"]);
            }
        }
    }
}

#[test]
fn run_loop_refuses_bad_nests_with_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["for i in 0..8: a[i + 1] = 1", "--array", "a = f64[8]"],
            "leaves its array",
        ),
        (
            &["for i in 0..8 a[i] = 1", "--array", "a = f64[8]"],
            "column",
        ),
        (
            &[
                "for i in 0..8: a[i] = b[i]",
                "--array",
                "a = f64[8]",
                "--array",
                "b = i32[8]",
            ],
            "one element type",
        ),
        (
            &["for i in 0..8: s += a[i]", "--array", "a = i64[8]"],
            "f64 or f32",
        ),
        (
            &[
                "for i in 0..100000000000: s += a[0]",
                "--array",
                "a = f64[8]",
            ],
            "accesses",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["run", "--loop"];
        all.extend(*args);
        let out = stridelab(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}
