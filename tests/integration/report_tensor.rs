//! End-to-end: a run of only the tensor-layout kernels renders figures 15 and 16 (nchw vs
//! nhwc, the conversion's fraction of a copy; jagged vs flat at row and column order), and no
//! other figure draws those records: every other figure is omitted for lack of its own data.

use crate::common;
use common::stridelab_command as stridelab;

use std::fs;

const SUITE: &str = r#"
name = "tensor-small"
description = "The tensor-layout kernels at small sizes."
threads = [1]

[[point]]
kernel = "channel-sum"
params = { n = 2, c = 16, h = 8, w = 8, layout = ["nchw", "nhwc"] }

[[point]]
kernel = "stencil3x3"
params = { n = 1, c = 8, h = 8, w = 8, layout = ["nchw", "nhwc"] }

[[point]]
kernel = "to-nhwc"
params = { n = 1, c = 16, h = 8, w = 8 }

[[point]]
kernel = "jagged"
params = { rows = 64, cols = 64, order = ["row", "col"], layout = ["flat", "jagged"] }

[[point]]
kernel = "jagged"
params = { rows = 64, cols = 64, order = ["row", "col"], shuffle = 1 }
"#;

#[test]
fn tensor_records_draw_figures_15_and_16_and_no_other() {
    let root = tempfile::tempdir().unwrap();
    let suite = root.path().join("tensor.toml");
    fs::write(&suite, SUITE).unwrap();
    let results = root.path().join("results.json");
    let run = stridelab()
        .args(["run", "--quiet", "--suite"])
        .arg(&suite)
        .arg("--out")
        .arg(&results)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = root.path().join("report");
    let report = stridelab()
        .arg("report")
        .arg("--in")
        .arg(&results)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    for figure in ["fig15-channels", "fig16-jagged"] {
        assert!(
            out.join(format!("{figure}.png")).is_file(),
            "{figure} not drawn"
        );
    }
    let drawn: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".png"))
        .collect();
    assert_eq!(
        drawn.len(),
        2,
        "other figures drew tensor records: {drawn:?}"
    );
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    for needle in [
        "Tensor layouts",
        "nhwc ÷ nchw",
        "fraction of same-run copy",
        "jagged, rows shuffled",
        "L2 misses per element",
    ] {
        assert!(html.contains(needle), "the page lacks `{needle}`");
    }
}
