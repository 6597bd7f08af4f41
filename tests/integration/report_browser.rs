//! The report in a real browser: headless Chromium opens the rendered page (through a check
//! page beside it that reads the page's images once it has loaded) and the test fails on an
//! image that did not load, on any console message (the page has no scripts, so any message is
//! a fault: a failed resource, a parse error), and on a page without figures. A second run with
//! one figure's file removed must report it broken, so the check can fail.
//!
//! Skips with a note when no Chromium is installed (`.ci/run` installs Debian's `chromium`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The check page: loads `index.html` in a frame and prints what its images did.
const CHECK_PAGE: &str = r#"<!doctype html><html><body>
<iframe id="page" src="index.html" style="width:1400px;height:900px"></iframe>
<script>
document.getElementById('page').addEventListener('load', () => {
  const images = [...document.getElementById('page').contentDocument.images];
  const broken = images
    .filter(i => !(i.complete && i.naturalWidth > 0))
    .map(i => i.getAttribute('src'));
  const out = document.createElement('pre');
  out.textContent = 'CHECKED ' + JSON.stringify({ images: images.length, broken });
  document.body.appendChild(out);
});
</script></body></html>
"#;

const CHECK_FILE: &str = "browser-check.html";

fn browser() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            let path = String::from_utf8(out.stdout).ok()?.trim().to_string();
            (out.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
        })
}

/// What the browser saw: the check page's verdict (images, broken ones) and every console line.
struct Seen {
    images: u64,
    broken: Vec<String>,
    console: Vec<String>,
}

fn open(browser: &Path, report: &Path) -> Seen {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", report.join(CHECK_FILE).display());
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--allow-file-access-from-files",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(&url)
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    let verdict = dom
        .lines()
        // `CHECKED {`: the printed verdict, not the script's own source line.
        .find_map(|l| l.split("CHECKED {").nth(1))
        .map(|rest| format!("{{{}", rest.split("</pre>").next().unwrap_or(rest)))
        .map(|json| json.replace("&quot;", "\""))
        .unwrap_or_else(|| {
            panic!(
                "the check page printed nothing: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let v: serde_json::Value =
        serde_json::from_str(&verdict).unwrap_or_else(|e| panic!("{e}: {verdict}"));
    Seen {
        images: v["images"].as_u64().unwrap(),
        broken: v["broken"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_str().unwrap_or("").to_string())
            .collect(),
        console: String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(String::from)
            .collect(),
    }
}

#[test]
fn the_report_loads_in_chromium_with_every_figure_and_no_console_message() {
    let Some(browser) = browser() else {
        common::tool_missing(
            "chromium",
            "the report in a real browser (Debian: `chromium`)",
        );
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let report = root.path().join("report");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results_small.json");
    let out = Command::new(env!("CARGO_BIN_EXE_stridelab"))
        .arg("report")
        .arg("--in")
        .arg(&fixture)
        .arg("--out")
        .arg(&report)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(report.join(CHECK_FILE), CHECK_PAGE).unwrap();

    let seen = open(&browser, &report);
    assert!(seen.images >= 5, "only {} images on the page", seen.images);
    assert!(
        seen.broken.is_empty(),
        "images that did not load: {:?}",
        seen.broken
    );
    assert!(
        seen.console.is_empty(),
        "console messages: {:#?}",
        seen.console
    );

    // The check fails when a figure's file is missing.
    let first_png = std::fs::read_dir(&report)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "png"))
        .expect("a PNG figure");
    std::fs::remove_file(&first_png).unwrap();
    let seen = open(&browser, &report);
    let name = first_png.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        seen.broken.contains(&name),
        "{name} not reported: {:?}",
        seen.broken
    );
}
