//! End-to-end: `matmul` points measured with `stridelab run` and rendered with `stridelab
//! report` give figure 14 (both panels, a row per point with the textbook prediction beside the
//! simulated misses), and no other figure draws them.

use crate::common;

fn stridelab(args: &[&str]) -> String {
    let output = common::stridelab(args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn figure_14_draws_matmul_points_and_no_other_figure_does() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.json");
    let report = dir.path().join("report");
    let (results, report) = (results.to_str().unwrap(), report.to_str().unwrap());
    stridelab(&[
        "run",
        "--quiet",
        "--kernel",
        "matmul",
        "n=40,41",
        "order=ijk,ikj,jki,blocked",
        "--sampling-budget",
        "0",
        "--out",
        results,
    ]);
    stridelab(&["report", "--in", results, "--out", report]);
    let html = std::fs::read_to_string(dir.path().join("report/index.html")).unwrap();
    assert!(dir.path().join("report/fig14-matmul.png").is_file());
    // Every other figure is left out: matmul records belong to figure 14 alone.
    let drawn: Vec<String> = std::fs::read_dir(dir.path().join("report"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("fig") && name.ends_with(".png"))
        .collect();
    assert_eq!(drawn, ["fig14-matmul.png"], "{drawn:?}");
    for id in [
        "fig01", "fig04", "fig06", "fig07", "fig08", "fig09", "fig11",
    ] {
        assert!(!html.contains(&format!("id=\"{id}")), "{id} is on the page");
    }
    // A row per point: n, order, time, simulated misses, textbook A, B, C, total.
    let rows: Vec<&str> = html.split("<tr>").filter(|r| r.contains("<td>4")).collect();
    let with = |order: &str, textbook: &str| {
        rows.iter()
            .filter(|r| r.contains(&format!("<td>{order}</td>")) && r.contains(textbook))
            .count()
    };
    assert_eq!(
        with("ijk", "<td>0.125</td><td>1</td><td>0</td><td>1.12</td>"),
        2
    );
    assert_eq!(
        with(
            "ikj",
            "<td>0</td><td>0.125</td><td>0.125</td><td>0.250</td>"
        ),
        2
    );
    assert_eq!(with("jki", "<td>1</td><td>0</td><td>1</td><td>2</td>"), 2);
    assert_eq!(with("blocked", "<td>—</td><td>—</td>"), 2);
}
