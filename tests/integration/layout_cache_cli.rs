//! `stridelab layout --cache/--preset/--dtype` run as a real binary: the cache section of the
//! explanation, the `--json` `caches` list and its fields, every data level of the chosen
//! geometry explained (a brief line where one adds nothing), the `--json` lists cut to their
//! first entries unless `--all`, and bad options exiting 2 (with `--json`, as one JSON object on
//! stdout).
//!
//! "This machine" is the design-vm sysfs tree in `tests/fixtures/sysfs-design-vm` where a test
//! needs one (L1d 48 KiB 12-way, L2 2 MiB 16-way and a hypervisor's "480 MiB" L3), read
//! through the hidden `--sysfs-root`.

use crate::common;

use std::process::Output;

use serde_json::Value;

fn run(args: &[&str]) -> Output {
    common::stridelab_command()
        .arg("layout")
        .args(args)
        .output()
        .expect("the stridelab binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// `layout --json ARGS`: exactly one JSON object on stdout, and the exit code.
fn json(args: &[&str]) -> (Value, i32) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = run(&all);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    let value = serde_json::from_str(&text).expect("stdout is one JSON object");
    (value, out.status.code().unwrap())
}

/// The first level's analysis of `layout --json ARGS`.
fn cache_json(args: &[&str]) -> Value {
    level_json(args, None)
}

/// The analysis of level `name` (else the first) of `layout --json ARGS`.
fn level_json(args: &[&str], name: Option<&str>) -> Value {
    let (value, code) = json(args);
    assert_eq!(code, 0, "{value}");
    let caches = value["caches"].as_array().expect("a caches list");
    match name {
        None => caches[0].clone(),
        Some(name) => caches
            .iter()
            .find(|c| c["level"] == name)
            .unwrap_or_else(|| panic!("no {name} in {value}"))
            .clone(),
    }
}

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sysfs-design-vm"
);

/// The text between `cache     NAME` and the next level's section.
fn section<'a>(text: &'a str, name: &str) -> &'a str {
    let start = text
        .find(&format!("cache     {name} "))
        .unwrap_or_else(|| panic!("no {name} section in\n{text}"));
    let rest = &text[start..];
    let end = rest[1..].find("\ncache     ").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

const COLUMNS: &str = "arange(1048576).view(1024,1024).T";

#[test]
fn a_preset_explains_each_walk_and_suggests_padding_where_a_level_conflicts() {
    let out = run(&["--preset", "design-vm", COLUMNS]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains("F-contiguous  yes"),
        "the layout part stays: {text}"
    );
    assert!(
        text.contains("L1d 48 KiB, 12-way, 64 sets of 64 B lines (768 lines); 8 B per element")
    );
    assert!(
        text.contains("strides   [8, 8192] bytes = [0.125, 128] lines"),
        "{text}"
    );
    assert!(
        text.contains("1024 elements 8 KiB = 128 lines apart: gcd(128, 64) = 64 → 64/64 = 1 set"),
        "{text}"
    );
    assert!(text.contains("walk 1    the view's own order (C order, i1 fastest)"));
    assert!(text.contains("walk 3    along a row (dim 1, i0 = 0), twice from a cold cache"));
    // In L1d a column's 1024 lines outnumber the cache's 768: capacity, and no padding there.
    let l1 = &text[text.find("cache     L1d").unwrap()..text.find("cache     L2").unwrap()];
    assert!(
        l1.contains("the walk's 1024 lines are more than the cache's 768"),
        "{l1}"
    );
    assert!(!l1.contains("padding"), "{l1}");
    // In L2 they fit but fall in 16 sets of 16 ways: conflict, and padding helps.
    let l2 = &text[text.find("cache     L2").unwrap()..];
    assert!(
        l2.contains("every access of pass 2 is a conflict miss: the walk's 1024 lines would fit"),
        "{l2}"
    );
    assert!(
        l2.contains("are 1024 elements (8 KiB = 128 lines) apart: its leading dimension"),
        "{l2}"
    );
    assert!(l2.contains("|@@@@"), "the set strip: {text}");
}

#[test]
fn a_cache_option_and_f32_elements() {
    let args = ["--cache", "L2=1M,8,64", "--dtype", "f32", COLUMNS];
    let cache = level_json(&args, Some("L2"));
    assert_eq!(
        (cache["sets"].as_u64(), cache["ways"].as_u64()),
        (Some(2048), Some(8))
    );
    assert_eq!(cache["itemsize"], 4);
    assert_eq!(cache["strides_bytes"], serde_json::json!([4, 4096]));
    assert_eq!(cache["dims"][1]["gcd_with_sets"], 64);
    assert_eq!(cache["dims"][0]["gcd_with_sets"], Value::Null);
    assert_eq!(cache["dims"][1]["sets_touched"], 32);
    assert_eq!(cache["lines_touched"], 1024 * 1024 * 4 / 64);
    assert_eq!(cache["fits"], false);
    // 1024 lines in 32 sets of 8 ways conflict; rows of 1040 f32 (65 lines) spread them.
    assert_eq!(cache["padding"]["outcome"], "pad", "{cache}");
    assert_eq!(cache["padding"]["padded_ld"], 1040, "{cache}");
    assert_eq!(cache["padding"]["walks"][0]["sets_touched"], 1024);
}

#[test]
fn the_json_cache_object_has_every_field() {
    let cache = cache_json(&["--preset", "amd-zen4", "arange(4096).view(64,64)[::2, 1:]"]);
    for key in [
        "level",
        "size",
        "ways",
        "sets",
        "line",
        "itemsize",
        "strides_bytes",
        "dims",
        "sets_touched",
        "lines_touched",
        "max_lines_per_set",
        "set_lines",
        "fits",
        "walks",
        "padding",
    ] {
        assert!(cache.get(key).is_some(), "missing {key}: {cache}");
    }
    for key in ["stride_bytes", "gcd_with_sets", "sets_touched"] {
        assert!(cache["dims"][0].get(key).is_some(), "dims lack {key}");
    }
    let set_lines = cache["set_lines"].as_array().unwrap();
    assert_eq!(set_lines.len(), 64);
    let total: u64 = set_lines.iter().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(Some(total), cache["lines_touched"].as_u64());
    assert_eq!(cache["padding"], Value::Null);
    let view = &cache["walks"][0];
    assert_eq!(view["walk"]["kind"], "view_order");
    assert_eq!(view["first_pass"]["accesses"], 32 * 63);
    // Every line is missed once on a cold walk that fits, and not again.
    assert_eq!(view["first_pass"]["misses"], cache["lines_touched"]);
    assert_eq!(view["second_pass"]["misses"], 0);
    assert_eq!(view["verdict"][0]["kind"], "first_touches_only");
    assert_eq!(view["verdict"][1]["kind"], "all_hit");
    assert_eq!(view["capped"], false);
    assert_eq!(cache["walks"][1]["walk"]["kind"], "repeated_dim");
    assert_eq!(cache["walks"][1]["walk"]["dim"], 0);
}

#[test]
fn every_level_given_is_explained() {
    let column = "arange(65536).view(256,256)[:, 0]";
    let out = run(&["--cache", "L1d=32K,8,64", "--cache", "L2=1M,8,64", column]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("cache     L1d 32 KiB, 8-way"), "{text}");
    assert!(
        text.contains("cache     L2 1 MiB, 8-way, 2048 sets"),
        "{text}"
    );
    let (value, _) = json(&["--preset", "amd-zen4", column]);
    let names: Vec<&str> = value["caches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["level"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["L1d", "L2", "L3"]);
}

#[test]
fn a_long_walk_is_simulated_up_to_the_cap_and_says_so() {
    let cache = cache_json(&["--preset", "design-vm", "arange(4194304)"]);
    let view = &cache["walks"][0];
    assert_eq!(view["capped"], true);
    assert_eq!(view["accesses"], 4194304);
    assert_eq!(view["first_pass"]["accesses"], 1 << 20);
    assert_eq!(view["second_pass"], Value::Null);
    assert_eq!(cache["lines_touched"], 4194304 / 8);
    let text = stdout(&run(&["--cache", "L1d=48K,12,64", "arange(4194304)"]));
    assert!(
        text.contains("pass 1  the first 1,048,576 of 4,194,304 accesses: 131,072 misses"),
        "{text}"
    );
    assert!(text.contains("pass 2 not simulated"), "{text}");
}

#[test]
fn bad_cache_and_dtype_exit_2_with_a_clear_message() {
    for (args, needle, kind) in [
        (
            vec!["--cache", "L1d=33K,8", "arange(4)"],
            "expected three comma-separated fields",
            "usage",
        ),
        (vec!["--cache", "L1d=32K,8,48", "arange(4)"], "48", "usage"),
        (
            vec!["--preset", "pentium", "arange(4)"],
            "known presets",
            "usage",
        ),
        (
            vec!["--cache", "L2=64G,1,64", "arange(4)"],
            "takes at most 1048576 sets",
            "too_large",
        ),
        (
            vec!["--dtype", "f99", "arange(4)"],
            "unknown dtype `f99`; known: f64, f32",
            "usage",
        ),
        (
            vec!["arange(12).as_strided((1,), (-9223372036854775807,), 11)"],
            "beyond the 64-bit byte addresses",
            "overflow",
        ),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(needle), "{args:?}: {err}");
        let (value, code) = json(&args);
        assert_eq!(code, 2, "{args:?}");
        assert_eq!(value["error"]["kind"], kind, "{args:?}: {value}");
        let message = value["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{args:?}: {message}");
        assert_eq!(value.as_object().unwrap().len(), 1, "{value}");
    }
}

#[test]
fn plain_layout_explains_every_data_level_and_says_in_a_line_where_one_adds_nothing() {
    // A 1024×1024 matrix on the design-vm tree: a column's 1024 lines outnumber the L1d's 768
    // (capacity), fall in 16 sets of the L2 (conflict: padding helps there), and fit the L3.
    let matrix = "arange(1048576).view(1024,1024)";
    let out = run(&["--sysfs-root", FIXTURE, matrix]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "caches    L1d, L2, L3 from the sysfs tree {FIXTURE}"
        )),
        "{text}"
    );
    let l1 = section(&text, "L1d");
    assert!(
        l1.contains("the walk's 1024 lines are more than the cache's 768"),
        "{l1}"
    );
    assert!(!l1.contains("padding"), "{l1}");
    let l2 = section(&text, "L2");
    assert!(
        l2.contains("every access of pass 2 is a conflict miss"),
        "{l2}"
    );
    assert!(
        l2.contains("padding   the storage's rows (made by `.view(1024,1024)`)"),
        "{l2}"
    );
    // The L3 fits every walk: a brief line, derived from its simulated passes, and the
    // hypervisor's size flagged and kept.
    let l3 = section(&text, "L3");
    assert!(
        l3.starts_with("cache     L3 480 MiB, 16-way, 491520 sets"),
        "{l3}"
    );
    assert!(l3.contains("warning   implausible: 480 MiB"), "{l3}");
    assert!(
        l3.contains("warning   L3 is explained as given; --cache L3=SIZE,WAYS,LINE replaces it"),
        "{l3}"
    );
    assert!(
        l3.contains(
            "walks     every walk fits: the view's 131,072 lines take at most 1 of a set's 16 \
             ways; pass 2 of each of its 3 walks hits on every access (simulated)"
        ),
        "{l3}"
    );
    assert!(!l3.contains("walk 1 "), "{l3}");

    let (value, code) = json(&["--sysfs-root", FIXTURE, matrix]);
    assert_eq!(code, 0);
    let caches = value["caches"].as_array().unwrap();
    let names: Vec<&str> = caches
        .iter()
        .map(|c| c["level"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["L1d", "L2", "L3"]);
    assert_eq!(caches[0]["brief"], Value::Null);
    assert_eq!(caches[1]["brief"], Value::Null);
    assert_eq!(caches[2]["brief"]["kind"], "all_fit");
    assert_eq!(
        caches[2]["walks"].as_array().unwrap().len(),
        3,
        "full data in JSON"
    );
    assert_eq!(caches[2]["source"], "sysfs");
    assert_eq!(caches[2]["warnings"].as_array().unwrap().len(), 1);
    let warnings = value["warnings"].as_array().unwrap();
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .starts_with("L3 480 MiB 16-way (sysfs): implausible"),
        "{value}"
    );
}

#[test]
fn a_cache_option_replaces_one_level_of_the_base_as_sim_does() {
    // `--cache L2=512K,8,64` on the design-vm tree: its L1d and L3 stay, for layout as for sim.
    let args = ["--sysfs-root", FIXTURE, "--cache", "L2=512K,8,64"];
    let mut layout_args = args.to_vec();
    layout_args.push("arange(1048576).view(1024,1024)[:, 0]");
    let (layout, code) = json(&layout_args);
    assert_eq!(code, 0, "{layout}");
    let mut sim_args = vec!["sim", "col-sum", "rows=64", "cols=64", "--json"];
    sim_args.extend_from_slice(&args);
    let sim: Value = serde_json::from_slice(&common::stridelab(&sim_args).stdout).unwrap();
    let rows = |list: &Value, name: &str| -> Vec<(String, u64, String)> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l[name].as_str().unwrap().to_string(),
                    l["size"].as_u64().unwrap(),
                    l["source"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    let expected = [
        ("L1d", 48 << 10, "sysfs"),
        ("L2", 512 << 10, "override"),
        ("L3", 480 << 20, "sysfs"),
    ]
    .map(|(n, s, src)| (n.to_string(), s, src.to_string()));
    assert_eq!(rows(&layout["caches"], "level"), expected);
    assert_eq!(rows(&sim["levels"], "name"), expected);
    assert_eq!(layout["geometry_source"], sim["geometry_source"]);
    assert!(
        layout["geometry_source"]
            .as_str()
            .unwrap()
            .ends_with("L2 from --cache (replacing the tree's 2 MiB 16-way)"),
        "{layout}"
    );
}

#[test]
fn json_lists_show_their_first_entries_unless_all_and_all_has_a_bound() {
    // A (32, 64, 56, 56) view: 6,422,528 values, cut to 4096 by default.
    let view = "arange(32*64*56*56).view(32,64,56,56)";
    let out = run(&["--json", "--sysfs-root", FIXTURE, view]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.len() < 1 << 20, "{} bytes", out.stdout.len());
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["shape"], serde_json::json!([32, 64, 56, 56]));
    assert_eq!(value["values"].as_array().unwrap().len(), 4096);
    assert_eq!(value["values"][4095], 4095);
    assert_eq!(value["values_total"], 6_422_528);
    assert_eq!(value["values_truncated"], true);
    // The L3's 491,520 per-set counts too; the L1d's 64 are all there.
    let l3 = &value["caches"][2];
    assert_eq!(l3["set_lines"].as_array().unwrap().len(), 4096);
    assert_eq!(
        (
            l3["set_lines_total"].as_u64(),
            l3["set_lines_truncated"].as_bool()
        ),
        (Some(491_520), Some(true))
    );
    let l1 = &value["caches"][0];
    assert_eq!(l1["set_lines"].as_array().unwrap().len(), 64);
    assert_eq!(l1["set_lines_truncated"], false);

    // --all lists everything...
    let (all, code) = json(&[
        "--all",
        "--preset",
        "design-vm",
        "arange(10000).view(100,100).T",
    ]);
    assert_eq!(code, 0);
    assert_eq!(all["values"].as_array().unwrap().len(), 10_000);
    assert_eq!(all["values"][1], 100);
    assert_eq!(all["values_truncated"], false);
    // ...unless that would print more than 64 MiB: 16 Mi values of up to 6 digits.
    let huge = "arange(1000000)[None].expand(16, 1000000)";
    let (refused, code) = json(&["--all", "--preset", "design-vm", huge]);
    assert_eq!(code, 2);
    assert_eq!(refused["error"]["kind"], "too_large");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("16000000 values"), "{message}");
    assert!(
        message.contains("more than the 64.0 MiB that --all allows"),
        "{message}"
    );
    // --all means nothing without --json.
    assert_eq!(run(&["--all", "arange(4)"]).status.code(), Some(2));
}
