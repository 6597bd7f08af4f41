//! `stridelab layout --cache/--preset/--dtype` run as a real binary: the cache section of the
//! explanation, the `--json` `caches` list and its fields, every level given explained, and bad
//! options exiting 2 (with `--json`, as one JSON object on stdout).

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
    let (value, code) = json(args);
    assert_eq!(code, 0, "{value}");
    value["caches"][0].clone()
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
    let cache = cache_json(&["--cache", "L2=1M,8,64", "--dtype", "f32", COLUMNS]);
    assert_eq!(cache["level"], "L2");
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
