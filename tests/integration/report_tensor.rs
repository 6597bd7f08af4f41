//! End-to-end: a run of only the tensor-layout kernels renders figures 15 and 16 (nchw vs
//! nhwc, the conversion's fraction of a copy with the copy engine beside the naive copies;
//! jagged vs flat at row and column order), and no other figure draws those records: every
//! other figure is omitted for lack of its own data. A run of conversions alone still draws
//! figure 15.

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
params = { n = 1, c = 16, h = 8, w = 8, variant = ["fast", "naive-write", "naive-read"] }

[[point]]
kernel = "to-nhwc"
params = { n = 1, c = 16, h = 8, w = 8, variant = "naive-write", dtype = "f32" }

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
    conversion_rows_sit_beside_the_engine(&html);
}

/// The conversion table's rows (shape, variant, …, time ÷ fast): every variant of the f64
/// shape, the engine's own ratio 1 and the f32 naive copy without an engine to compare with;
/// and the derived sentence naming both naive variants.
fn conversion_rows_sit_beside_the_engine(html: &str) {
    let rows: Vec<Vec<String>> = html
        .split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td>")
                .skip(1)
                .map(|cell| cell[..cell.find("</td>").unwrap_or(0)].to_string())
                .collect()
        })
        .filter(|cells: &Vec<String>| cells.first().is_some_and(|c| c.starts_with("1×16×8×8")))
        .collect();
    let variants: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    assert_eq!(
        variants,
        [
            ("1×16×8×8 f64", "fast"),
            ("1×16×8×8 f64", "naive-write"),
            ("1×16×8×8 f64", "naive-read"),
            ("1×16×8×8 f32", "naive-write"),
        ],
        "{rows:?}"
    );
    assert_eq!(rows[0][4], "1", "{rows:?}");
    assert!(rows[1][4].parse::<f64>().is_ok(), "{rows:?}");
    assert_eq!(rows[3][4], "—", "{rows:?}");
    let claim = html
        .split("data-claim=\"tensor.conversion\"")
        .nth(1)
        .expect("the conversion sentence");
    let sentence = &claim[..claim.find("</span>").unwrap_or(claim.len())];
    for needle in [
        "to-nhwc 1×16×8×8 f64: the copy engine",
        "than naive-write",
        "than naive-read",
    ] {
        assert!(sentence.contains(needle), "{sentence}");
    }
}

#[test]
fn conversions_alone_draw_figure_15() {
    let root = tempfile::tempdir().unwrap();
    let results = root.path().join("results.json");
    let run = stridelab()
        .args([
            "run", "--quiet", "--kernel", "to-nhwc", "n=1", "c=8", "h=4", "w=4",
        ])
        .arg("variant=fast,naive-write")
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
    assert!(out.join("fig15-channels.png").is_file(), "fig15 not drawn");
    let svg = fs::read_to_string(out.join("fig15-channels.svg")).unwrap();
    assert!(
        svg.contains("to-nhwc ns per element"),
        "no conversion panel"
    );
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        !html.contains("data-claim=\"tensor.layouts\""),
        "a guide to undrawn panels"
    );
}
