//! Every sentence the report shows is held against the data beside it, on recorded runs of
//! both machine kinds: the Intel Xeon quick-suite run in `tests/fixtures/truth/` (its README
//! says where it came from) and the AMD EPYC runs in `tests/fixtures/results_small.json`
//! (schema 2, with model predictions) and `tests/fixtures/gate/recorded.json` (schema 1).
//!
//! The oracles here read the raw JSON with serde_json — not the report's code — and compute
//! what each claim must say: whether the stride sweep levels off from one line per element,
//! whether the f64 and f32 walks fall on one curve by bytes, how many sets the ±1 controls
//! use, and what kind of loads a conflict probe issues. The page renders every claim with its
//! id and verdict (`data-claim`, `data-verdict`); the tests find each one, compare its
//! verdict and words with the oracle, and check that no sentence outside a verdict-carrying
//! claim repeats the textbook phrases these runs contradict. Perturbed copies of the recorded
//! files (a flat sweep, identical f32 and f64 times, controls that use many sets, throughput
//! probes) show that the sentences follow the data.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The report's tolerance for "levels off" (its claims module states it): the slowest time
/// within this factor of the fastest.
const LEVEL_SPREAD: f64 = 1.35;
/// Two timed curves agree at a step where they differ by at most this factor.
const SAME_CURVE: f64 = 1.2;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

const INTEL: &str = "truth/intel-xeon-quick-2026-11-27.results.json";
const AMD_SMALL: &str = "results_small.json";
const AMD_GATE_V1: &str = "gate/recorded.json";

fn load(name: &str) -> Value {
    serde_json::from_str(&fs::read_to_string(fixture(name)).unwrap()).unwrap()
}

/// Renders `doc` (written to a fresh directory, so no infer.json sits beside it) with the real
/// binary and returns the page.
fn render(doc: &Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("results.json");
    fs::write(&input, serde_json::to_string(doc).unwrap()).unwrap();
    let out = dir.path().join("report");
    let output = Command::new(env!("CARGO_BIN_EXE_stridelab"))
        .arg("report")
        .arg("--in")
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "report failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    fs::read_to_string(out.join("index.html")).unwrap()
}

/// A claim as the page rendered it.
#[derive(Debug)]
struct Rendered {
    id: String,
    kind: String,
    verdict: String,
    text: String,
}

fn attr(tag: &str, name: &str) -> String {
    let needle = format!("{name}=\"");
    let start = tag.find(&needle).unwrap() + needle.len();
    tag[start..][..tag[start..].find('"').unwrap()].to_string()
}

/// Visible text of an HTML fragment: tags dropped, the entities maud writes decoded.
fn visible(fragment: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in fragment.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Every claim on the page, with the byte range it spans.
fn claims_with_spans(html: &str) -> Vec<(Rendered, std::ops::Range<usize>)> {
    let mut found = Vec::new();
    let open = "<span class=\"claim\"";
    let mut from = 0;
    while let Some(at) = html[from..].find(open) {
        let start = from + at;
        let tag_end = start + html[start..].find('>').unwrap() + 1;
        // The claim's span ends where its nested spans balance.
        let mut depth = 1;
        let mut i = tag_end;
        while depth > 0 {
            let next_open = html[i..].find("<span").map(|p| p + i);
            let next_close = html[i..].find("</span>").map(|p| p + i).unwrap();
            match next_open {
                Some(o) if o < next_close => {
                    depth += 1;
                    i = o + 5;
                }
                _ => {
                    depth -= 1;
                    i = next_close + 7;
                }
            }
        }
        let tag = &html[start..tag_end];
        found.push((
            Rendered {
                id: attr(tag, "data-claim"),
                kind: attr(tag, "data-kind"),
                verdict: attr(tag, "data-verdict"),
                text: visible(&html[tag_end..i - 7]),
            },
            start..i,
        ));
        from = i;
    }
    found
}

fn claims(html: &str) -> Vec<Rendered> {
    claims_with_spans(html).into_iter().map(|c| c.0).collect()
}

/// The claim `id` of a page (the first, where a figure per level repeats it).
fn claim(html: &str, id: &str) -> Rendered {
    claims(html)
        .into_iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no claim `{id}` on the page"))
}

/// The page's visible text with every textbook claim and every kernel description (both say
/// "textbook" and carry or face a verdict) left out: what remains must not assert a textbook
/// expectation as this machine's behaviour.
fn text_outside_textbook(html: &str) -> String {
    let mut kept = String::new();
    let mut last = 0;
    for (c, span) in claims_with_spans(html) {
        kept.push_str(&html[last..span.start]);
        if c.kind != "textbook" {
            kept.push_str(&html[span.clone()]);
        }
        last = span.end;
    }
    kept.push_str(&html[last..]);
    let without_descriptions: Vec<&str> = kept
        .split("<p class=\"explain\">")
        .enumerate()
        .map(|(i, part)| {
            if i == 0 || !part.contains("<em>textbook: </em>") {
                part
            } else {
                &part[part.find("</p>").unwrap_or(0)..]
            }
        })
        .collect();
    visible(&without_descriptions.join(""))
}

/// Textbook phrases these runs contradict: none may stand as a plain statement.
const UNQUALIFIED: &[&str] = &[
    "the curve flattens",
    "fall on one curve",
    "spread over many sets",
    "spreads the slots over all sets",
    "loads in flight",
];

fn assert_no_unqualified_textbook(html: &str, run: &str) {
    let text = text_outside_textbook(html);
    for phrase in UNQUALIFIED {
        assert!(
            !text.contains(phrase),
            "{run}: `{phrase}` stands as a plain statement:\n{}",
            &text[text.find(phrase).unwrap().saturating_sub(300)..][..400.min(text.len())]
        );
    }
}

// ---- Oracles: computed from the raw JSON, independently of the report's code. ----

/// (sets, ways, line) of the first-level data cache the run simulated (else the manifest's).
fn l1(doc: &Value) -> (u64, u64, u64) {
    let simulated = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|r| r["simulated"]["levels"].get(0).cloned());
    let level = simulated.unwrap_or_else(|| {
        doc["info"]["caches"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["kind"] == "data" && c["level"] == 1)
            .unwrap()
            .clone()
    });
    let get = |k: &str| level[k].as_u64().unwrap();
    (get("sets"), get("ways"), get("line"))
}

fn records<'a>(doc: &'a Value, kernel: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(move |r| r["kernel"] == kernel && r["sweep"].is_null())
}

/// (step bytes, ns per element) of the timed stride-sum walks over `dtype`, by step.
fn stride_walk(doc: &Value, dtype: &str) -> Vec<(u64, f64)> {
    let mut pts: Vec<(u64, f64)> = records(doc, "stride-sum")
        .filter(|r| r["params"]["dtype"].as_str().unwrap_or("f64") == dtype)
        .filter_map(|r| {
            let bytes = if dtype == "f32" { 4 } else { 8 };
            Some((
                r["params"]["stride"].as_u64()? * bytes,
                r["timing"]["ns_per_element"].as_f64()?,
            ))
        })
        .collect();
    pts.sort_by_key(|p| p.0);
    pts
}

/// Whether the f64 walk's time stays within LEVEL_SPREAD from one line per element on.
fn levels_off_from_the_line(doc: &Value) -> bool {
    let (_, _, line) = l1(doc);
    let beyond: Vec<f64> = stride_walk(doc, "f64")
        .into_iter()
        .filter(|p| p.0 >= line)
        .map(|p| p.1)
        .collect();
    assert!(
        beyond.len() >= 2,
        "the fixture needs two steps beyond the line"
    );
    let lo = beyond.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = beyond.iter().copied().fold(0.0, f64::max);
    hi / lo <= LEVEL_SPREAD
}

/// The byte steps where the f32 and f64 walks differ by more than SAME_CURVE, and how many
/// steps they share.
fn curves_apart(doc: &Value) -> (usize, Vec<u64>) {
    let f64s = stride_walk(doc, "f64");
    let mut shared = 0;
    let mut apart = Vec::new();
    for (bytes, ns32) in stride_walk(doc, "f32") {
        if let Some(&(_, ns64)) = f64s.iter().find(|p| p.0 == bytes) {
            shared += 1;
            if (ns32 / ns64).max(ns64 / ns32) > SAME_CURVE {
                apart.push(bytes);
            }
        }
    }
    (shared, apart)
}

/// The conflict probes the report draws: `lat` mode when the run has it, else the first mode.
fn probes(doc: &Value) -> Vec<&Value> {
    let all: Vec<&Value> = records(doc, "conflict").collect();
    let mode = if all.iter().any(|r| r["params"]["mode"] == "lat") {
        "lat".to_string()
    } else {
        all[0]["params"]["mode"]
            .as_str()
            .unwrap_or("thr")
            .to_string()
    };
    all.into_iter()
        .filter(|r| r["params"]["mode"].as_str().unwrap_or("thr") == mode)
        .collect()
}

/// The sets the recorded model says the ±1 controls use: (fewest, most), `None` without a
/// model (schema 1).
fn control_sets(doc: &Value) -> Option<(u64, u64)> {
    let (sets, _, line) = l1(doc);
    let span = sets * line;
    let used: Vec<u64> = probes(doc)
        .into_iter()
        .filter(|r| r["params"]["stride"].as_u64().unwrap() * 8 % span != 0)
        .filter_map(|r| r["model"]["pattern"]["levels"][0]["sets_used"].as_u64())
        .collect();
    Some((*used.iter().min()?, *used.iter().max()?))
}

// ---- The claims of each recorded run against the oracles. ----

fn check_flattening(doc: &Value, html: &str, run: &str) {
    let c = claim(html, "stride.levels-off");
    let (_, _, line) = l1(doc);
    if levels_off_from_the_line(doc) {
        assert_eq!(c.verdict, "agrees", "{run}: {}", c.text);
        assert!(c.text.contains("levels off within"), "{run}: {}", c.text);
    } else {
        assert_eq!(c.verdict, "disagrees", "{run}: {}", c.text);
        assert!(
            ["still rises", "still falls", "does not level off"]
                .iter()
                .any(|w| c.text.contains(w)),
            "{run}: {}",
            c.text
        );
        assert!(c.text.contains("does not agree"), "{run}: {}", c.text);
    }
    assert!(c.text.contains(&format!("{line} B")), "{run}: {}", c.text);
}

fn check_one_curve(doc: &Value, html: &str, run: &str) {
    let all = claims(html);
    let (shared, apart) = curves_apart(doc);
    if shared == 0 {
        assert!(
            all.iter().all(|c| c.id != "elements.one-curve"),
            "{run}: a one-curve claim without both element types"
        );
        assert!(!visible(html).contains("one curve"), "{run}");
        return;
    }
    let c = claim(html, "elements.one-curve");
    let want = match apart.len() {
        0 => "agrees",
        n if n < shared => "partly",
        _ => "disagrees",
    };
    assert_eq!(c.verdict, want, "{run}: {}", c.text);
    for &bytes in &apart {
        assert!(
            c.text.contains(&format!("{} (f32", bytes_text(bytes))),
            "{run}: the step {bytes} B where the walks part is not named: {}",
            c.text
        );
    }
}

/// A byte step as the page writes it (`8 B`, `1 KiB`).
fn bytes_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

fn check_control_sets(doc: &Value, html: &str, run: &str) {
    let c = claim(html, "conflict.controls");
    let (sets, _, _) = l1(doc);
    assert!(!c.text.contains("many"), "{run}: {}", c.text);
    match control_sets(doc) {
        Some((lo, hi)) => {
            let range = if lo == hi {
                format!("{lo} of the {sets}")
            } else {
                format!("{lo}–{hi} of the {sets}")
            };
            assert!(
                c.text.contains(&range),
                "{run}: wants `{range}`: {}",
                c.text
            );
        }
        None => {
            assert!(c.text.contains("no set model"), "{run}: {}", c.text);
            assert!(
                !c.text.contains(&format!("of the {sets}")),
                "{run}: {}",
                c.text
            );
        }
    }
}

fn check_loads(doc: &Value, html: &str, run: &str) {
    let c = claim(html, "finding.conflict");
    let p = probes(doc);
    let words = match p[0]["params"]["mode"].as_str().unwrap_or("thr") {
        "lat" => "dependent loads",
        _ => "independent loads",
    };
    assert!(c.text.contains(words), "{run}: wants `{words}`: {}", c.text);
    assert!(!c.text.contains("in flight"), "{run}: {}", c.text);
    let counts: Vec<String> = p
        .iter()
        .map(|r| format!("K = {} ", r["params"]["count"]))
        .collect();
    assert!(
        counts.iter().any(|k| c.text.contains(k.as_str())),
        "{run}: the probe's K is not named: {}",
        c.text
    );
}

/// Every verdict-carrying claim says its verdict in words, and no claim is empty.
fn check_shapes(html: &str, run: &str) {
    let all = claims(html);
    assert!(all.len() >= 8, "{run}: only {} claims", all.len());
    for c in &all {
        assert!(!c.text.trim().is_empty(), "{run}: empty claim {}", c.id);
        let words = match c.verdict.as_str() {
            "agrees" => "this run agrees.",
            "partly" => "this run agrees only in part.",
            "disagrees" => "this run does not agree.",
            "untested" => "this run cannot tell.",
            "" => {
                assert_ne!(c.kind, "textbook", "{run}: {} has no verdict", c.id);
                continue;
            }
            other => panic!("{run}: unknown verdict {other}"),
        };
        assert!(c.text.starts_with("Textbook: "), "{run}: {}", c.text);
        assert!(c.text.ends_with(words), "{run}: {} ≠ {words}", c.text);
    }
}

#[test]
fn the_intel_run_says_only_what_its_data_show() {
    let doc = load(INTEL);
    let html = render(&doc);
    // What this recorded run shows: the sweep rises past the line, the walks part at
    // 8 B, the controls use 1–4 sets, the probes are pointer chases.
    assert!(!levels_off_from_the_line(&doc));
    assert_eq!(curves_apart(&doc).1, vec![8]);
    assert_eq!(control_sets(&doc), Some((1, 4)));
    check_flattening(&doc, &html, "intel");
    check_one_curve(&doc, &html, "intel");
    check_control_sets(&doc, &html, "intel");
    check_loads(&doc, &html, "intel");
    check_shapes(&html, "intel");
    assert_no_unqualified_textbook(&html, "intel");
    // The implausible L3 is marked wherever a figure names it.
    let text = visible(&html);
    assert!(text.contains("L3 480 MiB (implausible)"), "L3 unmarked");
    assert!(
        !text.contains("L3 480 MiB 16-way"),
        "an unmarked L3 in a provenance line"
    );
}

#[test]
fn the_amd_runs_say_only_what_their_data_show() {
    let small = load(AMD_SMALL);
    let html = render(&small);
    check_flattening(&small, &html, "amd small");
    check_one_curve(&small, &html, "amd small");
    check_control_sets(&small, &html, "amd small");
    check_loads(&small, &html, "amd small");
    check_shapes(&html, "amd small");
    assert_no_unqualified_textbook(&html, "amd small");
    // Schema 1: no model, so no set counts may be claimed for the controls.
    let gate = load(AMD_GATE_V1);
    let html = render(&gate);
    check_control_sets(&gate, &html, "amd gate (schema 1)");
    check_loads(&gate, &html, "amd gate (schema 1)");
    check_shapes(&html, "amd gate (schema 1)");
    assert_no_unqualified_textbook(&html, "amd gate (schema 1)");
}

// ---- Perturbed data: the sentences change with it. ----

fn stride_records<'a>(
    doc: &'a mut Value,
    dtype: &'a str,
) -> impl Iterator<Item = &'a mut Value> + 'a {
    doc["records"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .filter(move |r| {
            r["kernel"] == "stride-sum" && r["params"]["dtype"].as_str().unwrap_or("f64") == dtype
        })
}

/// Sets a record's timed ns per element (its CI follows, as the report scales it by the
/// ratio of ns per element to the median ns per run).
fn set_ns(record: &mut Value, ns: f64) {
    record["timing"]["ns_per_element"] = ns.into();
}

#[test]
fn a_flat_sweep_turns_the_verdict_on_flattening() {
    for name in [INTEL, AMD_SMALL] {
        let mut doc = load(name);
        let (_, _, line) = l1(&doc);
        for r in stride_records(&mut doc, "f64") {
            let bytes = r["params"]["stride"].as_u64().unwrap() * 8;
            if bytes >= line {
                // Flat within 2%: every step from the line on costs about 2 ns.
                set_ns(r, 2.0 + (bytes % 3) as f64 * 0.02);
            }
        }
        assert!(levels_off_from_the_line(&doc));
        let html = render(&doc);
        check_flattening(&doc, &html, name);
        assert_eq!(claim(&html, "stride.levels-off").verdict, "agrees");
    }
}

#[test]
fn identical_walks_by_bytes_fall_on_one_curve_and_a_parted_one_is_named() {
    let mut doc = load(INTEL);
    let f64s = stride_walk(&doc, "f64");
    for r in stride_records(&mut doc, "f32") {
        let bytes = r["params"]["stride"].as_u64().unwrap() * 4;
        if let Some(&(_, ns)) = f64s.iter().find(|p| p.0 == bytes) {
            set_ns(r, ns);
        }
    }
    assert!(curves_apart(&doc).1.is_empty());
    let html = render(&doc);
    check_one_curve(&doc, &html, "intel, f32 = f64");
    let c = claim(&html, "elements.one-curve");
    assert_eq!(c.verdict, "agrees", "{}", c.text);
    // Now part them at 1 KiB as well.
    for r in stride_records(&mut doc, "f32") {
        if r["params"]["stride"] == 256 {
            set_ns(r, 40.0);
        }
    }
    assert_eq!(curves_apart(&doc).1, vec![1024]);
    let html = render(&doc);
    check_one_curve(&doc, &html, "intel, parted at 1 KiB");
    assert!(
        claim(&html, "elements.one-curve")
            .text
            .contains("1 KiB (f32")
    );
}

#[test]
fn the_controls_sentence_follows_the_sets_the_model_recorded() {
    let mut doc = load(INTEL);
    let (sets, _, line) = l1(&doc);
    for r in doc["records"].as_array_mut().unwrap() {
        let is_control = r["kernel"] == "conflict"
            && r["params"]["stride"].as_u64().unwrap() * 8 % (sets * line) != 0;
        if is_control {
            // Every line in a set of its own (the most a model may record for K accesses).
            let k = r["params"]["count"].clone();
            r["model"]["pattern"]["levels"][0]["sets_used"] = k;
        }
    }
    assert_eq!(control_sets(&doc), Some((4, 24)));
    let html = render(&doc);
    check_control_sets(&doc, &html, "intel, controls in K sets");
    let c = claim(&html, "conflict.controls");
    assert!(c.text.contains("4–24 of the 64"), "{}", c.text);
    assert!(
        !c.text.contains("only"),
        "up to 24 of 64 sets is not `only`: {}",
        c.text
    );
}

#[test]
fn throughput_probes_are_not_called_dependent() {
    let mut doc = load(AMD_SMALL);
    for r in doc["records"].as_array_mut().unwrap() {
        if r["kernel"] == "conflict" {
            r["params"]["mode"] = "thr".into();
        }
    }
    let html = render(&doc);
    check_loads(&doc, &html, "amd small, thr");
    let c = claim(&html, "finding.conflict");
    assert!(c.text.contains("independent loads"), "{}", c.text);
}
