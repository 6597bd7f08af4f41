//! Cross-check against NumPy: `scripts/numpy_check.py` generates thousands of random view
//! chains, runs them through `stridelab layout --batch` and compares shape, strides (in
//! elements), offset, values, storage sharing and contiguity with NumPy.
//!
//! Skipped, with a note, when `python3 -c 'import numpy'` fails (`.ci/run` installs numpy).

use crate::common;

use std::process::Command;

#[test]
fn random_view_chains_match_numpy() {
    if !common::tool_available("python3", &["-c", "import numpy"], "the NumPy cross-check") {
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/numpy_check.py");
    let out = Command::new("python3")
        .args([
            script,
            "--binary",
            env!("CARGO_BIN_EXE_stridelab"),
            "--count",
            "4000",
            "--seed",
            "2",
        ])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}");
    assert!(
        out.status.success(),
        "stridelab disagrees with NumPy:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("4000 agree"), "{stdout}");
}
