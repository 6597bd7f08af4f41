//! End-to-end: a run of `stride-sum` over f64 and f32 draws figure 17 (the step in elements and
//! in bytes, one series per element type) beside figure 4, which keeps to the f64 walk; with
//! one element type only, figure 17 is omitted with its reason.

use crate::common;
use common::stridelab_command as stridelab;

use std::fs;
use std::path::Path;

fn suite(dtypes: &str) -> String {
    format!(
        "name = \"dtypes\"\nthreads = [1]\n\n[[point]]\nkernel = \"stride-sum\"\n\
         params = {{ len = 65536, stride = [1, 8, 16, 64], dtype = [{dtypes}] }}\n"
    )
}

/// Runs the suite and renders it; returns the report's page.
fn report(root: &Path, dtypes: &str) -> String {
    let suite_file = root.join("suite.toml");
    fs::write(&suite_file, suite(dtypes)).unwrap();
    let results = root.join("results.json");
    let run = stridelab()
        .args(["run", "--quiet", "--suite"])
        .arg(&suite_file)
        .arg("--out")
        .arg(&results)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = root.join("report");
    let rendered = stridelab()
        .arg("report")
        .arg("--in")
        .arg(&results)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        rendered.status.success(),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    fs::read_to_string(out.join("index.html")).unwrap()
}

#[test]
fn both_element_types_draw_figure_17_with_steps_in_elements_and_bytes() {
    let root = tempfile::tempdir().unwrap();
    let html = report(root.path(), "\"f64\", \"f32\"");
    assert!(root.path().join("report/fig17-element-types.png").is_file());
    assert!(root.path().join("report/fig04-stride-sweep.png").is_file());
    // The table gives each step in elements and in bytes: 16 f32 elements are 64 B, as are
    // 8 f64 elements.
    let caption = "stride-sum over f64 and f32: each step in elements and in bytes";
    for needle in ["step (elements)", "step (bytes)", caption, "64 B"] {
        assert!(html.contains(needle), "the page lacks `{needle}`");
    }
}

#[test]
fn one_element_type_omits_figure_17_and_says_why() {
    let root = tempfile::tempdir().unwrap();
    let html = report(root.path(), "\"f64\"");
    assert!(!root.path().join("report/fig17-element-types.png").exists());
    assert!(html.contains("needs timed `stride-sum` points of both dtype=f64 and dtype=f32"));
}
