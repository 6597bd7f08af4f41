//! End-to-end: `stridelab report` renders the recorded small results file
//! (`tests/fixtures/results_small.json`, recorded with the command in
//! `tests/fixtures/small_suite.toml`) and the page holds up: every figure exists and decodes,
//! every image the HTML references exists, no table cell says NaN or inf, and the sections are
//! there. Bad input exits 2 with an error naming the field.

use crate::common;
use common::stridelab_command as stridelab;

use std::fs;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Renders `inputs` into a fresh directory; returns (tempdir guard, report dir, stdout).
fn render(inputs: &[&Path]) -> (tempfile::TempDir, PathBuf, String) {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("report");
    let mut cmd = stridelab();
    cmd.arg("report");
    for input in inputs {
        cmd.arg("--in").arg(input);
    }
    let output = cmd.arg("--out").arg(&out).output().unwrap();
    assert!(
        output.status.success(),
        "report failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (root, out, String::from_utf8(output.stdout).unwrap())
}

/// Every `src="…"` / `href="…"` value of the page.
fn references(html: &str, attr: &str) -> Vec<String> {
    let needle = format!("{attr}=\"");
    html.match_indices(&needle)
        .map(|(i, _)| {
            let rest = &html[i + needle.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

/// The text of every `<td>` cell.
fn cells(html: &str) -> Vec<String> {
    html.split("<td")
        .skip(1)
        .map(|rest| {
            let start = rest.find('>').unwrap() + 1;
            let end = rest.find("</td>").unwrap();
            rest[start..end].to_string()
        })
        .collect()
}

fn decode_png(path: &Path) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::BufReader::new(fs::File::open(path).unwrap()));
    let mut reader = decoder
        .read_info()
        .unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader
        .next_frame(&mut buf)
        .unwrap_or_else(|e| panic!("{path:?}: {e}"));
    // A figure that is all one colour was drawn empty.
    let distinct: std::collections::HashSet<&[u8]> = buf[..info.buffer_size()]
        .chunks(info.line_size / info.width as usize)
        .collect();
    assert!(distinct.len() > 8, "{path:?} looks empty");
    (info.width, info.height)
}

fn check_svg(path: &Path) {
    let text = fs::read_to_string(path).unwrap();
    let trimmed = text.trim();
    assert!(
        trimmed.starts_with("<svg"),
        "{path:?} does not start with <svg"
    );
    assert!(trimmed.ends_with("</svg>"), "{path:?} is not closed");
    assert!(
        text.contains("<text"),
        "{path:?} has no text (axes unlabelled?)"
    );
    assert!(
        text.matches("<polyline").count() + text.matches("<rect").count() > 3,
        "{path:?} draws almost nothing"
    );
}

#[test]
fn the_small_recorded_results_render_a_complete_page() {
    let (_guard, out, stdout) = render(&[&fixture("results_small.json")]);
    assert_eq!(stdout.trim(), out.join("index.html").display().to_string());
    let html = fs::read_to_string(out.join("index.html")).unwrap();

    // Every figure the page shows exists in both formats and decodes.
    let images = references(&html, "src");
    assert!(
        images.len() >= 11,
        "only {} images: {images:?}",
        images.len()
    );
    for image in &images {
        assert!(!image.contains("://"), "{image} needs the network");
        let png = out.join(image);
        assert!(png.is_file(), "{image} is referenced but missing");
        let (w, h) = decode_png(&png);
        assert!(w >= 600 && h >= 250, "{image} is {w}×{h}");
        // The page's figure column is 1366 px wide: a wider figure would be shrunk, and its
        // 13 px legend text below 11 px.
        assert!(w <= 1360, "{image} is {w} px wide");
        check_svg(&png.with_extension("svg"));
    }
    // Every local link (SVGs, JSON, CSV) exists.
    for link in references(&html, "href") {
        if link.starts_with('#') {
            continue;
        }
        assert!(!link.contains("://"), "{link} needs the network");
        assert!(out.join(&link).is_file(), "{link} is linked but missing");
    }
    for id in [
        "fig01-miss-rate-vs-stride",
        "fig02-sets-used",
        "fig03-conflict-heatmap",
        "fig04-stride-sweep",
        "fig05-working-set",
        "fig06-row-vs-column",
        "fig07-transpose",
        "fig08-views",
        "fig09-blocked",
        "fig10-threads",
        "fig11-3c",
        "fig18-infer",
    ] {
        assert!(
            images.contains(&format!("{id}.png")),
            "{id} not on the page"
        );
    }

    // No table cell says NaN or inf.
    let cells = cells(&html);
    assert!(cells.len() > 100, "only {} cells", cells.len());
    for cell in &cells {
        let bad = cell
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| matches!(word.to_lowercase().as_str(), "nan" | "inf" | "infinity"));
        assert!(!bad, "bad cell: {cell}");
    }

    // The sections.
    for section in [
        "id=\"summary\"",
        "id=\"conflict\"",
        "id=\"stride\"",
        "id=\"traverse\"",
        "id=\"latency\"",
        "id=\"transpose\"",
        "id=\"view\"",
        "id=\"blocked\"",
        "id=\"bandwidth\"",
        "id=\"three-c\"",
        "id=\"infer\"",
        "id=\"machine\"",
        "id=\"method\"",
        "id=\"data\"",
    ] {
        assert!(html.contains(section), "missing section {section}");
    }
    for phrase in ["What to look for", "Cache geometry", "bootstrap"] {
        assert!(html.contains(phrase), "page lacks {phrase:?}");
    }
    // The summary quotes numbers computed from this file (three findings).
    let summary =
        &html[html.find("id=\"summary\"").unwrap()..html.find("id=\"conflict\"").unwrap()];
    assert!(summary.matches("<li>").count() >= 3, "{summary}");
    assert!(summary.contains("×"), "findings carry ratios: {summary}");

    // The data files are there and the JSON re-reads.
    let copy = stridelab::results::ResultsDocument::read(
        &out.join("results.json"),
        &stridelab::kernels::CATALOGUE_RULES,
    )
    .unwrap();
    assert_eq!(copy.records.len(), 36);
    assert!(out.join("results.csv").is_file());
}

#[test]
fn two_results_files_render_side_by_side() {
    let (_guard, out, _) = render(&[
        &fixture("results_small.json"),
        &fixture("results_small.json"),
    ]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("2 runs side by side"));
    for name in [
        "fig06-row-vs-column-m1.png",
        "fig06-row-vs-column-m2.png",
        "results-m2.json",
    ] {
        assert!(out.join(name).is_file(), "{name} missing");
    }
    // One run twice: the titles still differ, every change is +0.0%, and with no earlier runs
    // to learn the run-to-run noise from, no point is judged.
    let labels = class_texts(&html, "machine-label");
    assert!(labels.iter().any(|l| l.ends_with("run 1")), "{labels:?}");
    assert!(labels.iter().any(|l| l.ends_with("run 2")), "{labels:?}");
    let comparison = section(&html, "comparison");
    assert!(
        comparison.contains("36 matched points — cannot tell yet"),
        "{comparison}"
    );
    assert_eq!(comparison.matches("<td>+0.0%</td>").count(), 36);
    assert_eq!(comparison.matches("<td>cannot tell yet</td>").count(), 36);
    assert!(!comparison.contains("beyond the run-to-run noise"));
}

/// The text of every element of `class`.
fn class_texts(html: &str, class: &str) -> Vec<String> {
    let open = format!("<div class=\"{class}\">");
    html.split(&open)
        .skip(1)
        .map(|rest| rest[..rest.find("</div>").unwrap()].to_string())
        .collect()
}

/// The HTML of section `id`.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html.find(&format!("<section id=\"{id}\"")).unwrap();
    &html[start..start + html[start..].find("</section>").unwrap()]
}

#[test]
fn runs_on_two_cpu_models_get_their_own_titles_and_no_ratio_between_them() {
    let (_guard, out, _) = render(&[
        &fixture("truth/intel-xeon-quick-2026-11-27.results.json"),
        &fixture("results_small.json"),
    ]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    let labels = class_texts(&html, "machine-label");
    assert!(
        labels[0].starts_with("Intel(R) Xeon(R) Processor, 2 CPUs · 2026-11-27"),
        "{labels:?}"
    );
    assert!(
        labels[1].starts_with("AMD EPYC, 2 CPUs · 2026-11-22"),
        "{labels:?}"
    );
    // Timings do not carry across CPU models: the runs stand side by side, and no ratio
    // between them is judged or even shown.
    let comparison = section(&html, "comparison");
    assert!(comparison.contains("are not compared"), "{comparison}");
    assert!(
        comparison.contains("do not carry across CPU models"),
        "{comparison}"
    );
    assert!(!comparison.contains("slower"), "{comparison}");
}

#[test]
fn a_three_point_file_renders_what_it_has_and_lists_the_rest_in_one_line() {
    let mut doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(fixture("results_small.json")).unwrap()).unwrap();
    let records = doc["records"].as_array_mut().unwrap();
    records.retain(|r| r["kernel"] == "stride-sum");
    records.truncate(3);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("three.json");
    fs::write(&input, serde_json::to_string(&doc).unwrap()).unwrap();
    let (_guard, out, _) = render(&[&input]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    let sections: Vec<&str> = html
        .split("<section id=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    assert_eq!(sections, ["summary", "stride", "machine", "method", "data"]);
    assert_eq!(html.matches("Not in this results file").count(), 1);
    assert!(html.contains("Power-of-two strides and cache sets (no conflict points)"));
    assert!(!html.contains(") omitted:"), "no omitted stubs");
    assert!(
        !html.contains("href=\"#conflict\""),
        "the navigation lists drawn sections only"
    );
}

#[test]
fn a_missing_or_corrupt_field_is_named_and_exits_2() {
    let text = fs::read_to_string(fixture("results_small.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // (edit, the field the error must name)
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| {
                v["records"][2].as_object_mut().unwrap().remove("checksum");
            }),
            "records[2].checksum",
        ),
        (
            Box::new(|v| v["records"][1]["timing"]["ns_per_run"]["median"] = "fast".into()),
            "records[1].timing.ns_per_run.median",
        ),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("method");
            }),
            "method",
        ),
    ];
    for (i, (edit, field)) in cases.iter().enumerate() {
        let original = value.clone();
        edit(&mut value);
        let path = dir.path().join(format!("bad{i}.json"));
        fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
        value = original;
        let out = dir.path().join(format!("out{i}"));
        let output = stridelab()
            .args(["report", "--in"])
            .arg(&path)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{field}: {stderr}");
        assert!(
            stderr.contains(field),
            "error does not name `{field}`: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!out.exists(), "a failed render left {out:?} behind");
    }
    // Not JSON at all, and a file that does not exist.
    let junk = dir.path().join("junk.json");
    fs::write(&junk, "not json").unwrap();
    for path in [junk, dir.path().join("absent.json")] {
        let output = stridelab()
            .args(["report", "--in"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&output.stderr).contains("error:"));
    }
}

#[test]
fn rendering_again_replaces_the_report_and_leaves_no_temporary_directory() {
    let (guard, out, _) = render(&[&fixture("results_small.json")]);
    fs::write(out.join("index.html"), "old").unwrap();
    let output = stridelab()
        .args(["report", "--in"])
        .arg(fixture("results_small.json"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success());
    let page = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("<html"), "old report not replaced");
    let entries: Vec<_> = fs::read_dir(guard.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        entries,
        vec![std::ffi::OsString::from("report")],
        "{entries:?}"
    );
}

#[test]
fn the_copy_engines_simulated_misses_come_with_what_the_replay_leaves_out() {
    // The recorded file with its first naive-read transpose relabelled as the copy engine (its
    // numbers stay naive-read's: only what the page says about them is checked).
    let mut doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(fixture("results_small.json")).unwrap()).unwrap();
    let record = doc["records"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["kernel"] == "transpose" && r["params"]["variant"] == "naive-read")
        .unwrap();
    record["params"]["variant"] = "fast".into();
    // The note the harness records for the copy engine's parameters.
    let spec = stridelab::kernels::find("transpose").unwrap();
    let params: stridelab::vocab::Params =
        serde_json::from_value(record["params"].clone()).unwrap();
    record["model"]["simulation_note"] = stridelab::kernels::simulation_note(spec, &params)
        .unwrap()
        .into();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("results.json");
    fs::write(&input, serde_json::to_string(&doc).unwrap()).unwrap();
    let (_guard, out, _) = render(&[&input]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    let section = &html[html.find("Transpose variants").unwrap()..];
    let table = &section[..section.find("</table>").unwrap()];
    let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
    let fast = rows.iter().find(|r| r.contains("<td>fast</td>")).unwrap();
    // B is the blocked loops' parameter only.
    assert!(fast.contains("<td>—</td>"), "{fast}");
    assert!(html.contains("Simulated misses of `fast`: the copy engine is replayed"));
    assert!(!html.contains("Simulated misses of `blocked`"));
}

#[test]
fn a_schema_1_file_renders_and_says_it_predates_recorded_model_predictions() {
    let v1 = fixture("results_small_v1.json");
    let doc: serde_json::Value = serde_json::from_str(&fs::read_to_string(&v1).unwrap()).unwrap();
    assert_eq!(doc["schema"], 1);
    assert!(
        doc["records"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r.get("model").is_none())
    );
    let (_guard, out, _) = render(&[&v1]);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    // The measured figures are drawn; the ones built on the model say why they are not.
    assert!(out.join("fig01-miss-rate-vs-stride.png").is_file());
    assert!(out.join("fig06-row-vs-column.png").is_file());
    assert!(!out.join("fig02-sets-used.png").exists());
    assert!(
        html.contains("predates recorded model predictions (schema 1)"),
        "no note on the missing predictions"
    );
    // The schema-2 recording of the same points draws the model where the schema-1 one cannot.
    let (_guard2, out2, _) = render(&[&fixture("results_small.json")]);
    let html2 = fs::read_to_string(out2.join("index.html")).unwrap();
    assert!(out2.join("fig02-sets-used.png").is_file());
    assert!(!html2.contains("predates recorded model predictions"));
}
