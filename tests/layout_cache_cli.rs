//! `stridelab layout --cache/--preset/--dtype` run as a real binary: the cache section of the
//! explanation, the `--json` `cache` object and its fields, and bad options exiting 2.

use std::process::{Command, Output};

use serde_json::Value;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stridelab"))
        .arg("layout")
        .args(args)
        .output()
        .expect("the stridelab binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn cache_json(args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let value: Value = serde_json::from_str(&stdout(&out)).unwrap();
    value["cache"].clone()
}

const COLUMNS: &str = "arange(1048576).view(1024,1024).T";

#[test]
fn a_preset_explains_the_column_walk_and_suggests_padding() {
    let out = run(&["--preset", "design-vm", COLUMNS]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains("F-contiguous  yes"),
        "the layout part stays: {text}"
    );
    assert!(text.contains("L1d 48 KiB, 12-way, 64 sets of 64 B lines; 8 B per element"));
    assert!(
        text.contains("strides   [8, 8192] bytes = [0.125, 128] lines"),
        "{text}"
    );
    assert!(text.contains("gcd(128, 64) = 64; the walk touches 1 of 64 sets, 1024 lines"));
    assert!(text.contains("a walk along a row touches 1 of 64 sets; 12 ways hold 12 of its"));
    assert!(
        text.contains("padding   a leading dimension of 1032 elements"),
        "{text}"
    );
    assert!(text.contains("simulated a C-order walk"), "{text}");
    assert!(text.contains("|@@@@"), "the set strip: {text}");
}

#[test]
fn a_cache_option_and_f32_elements() {
    let cache = cache_json(&["--cache", "L1d=32K,8,64", "--dtype", "f32", COLUMNS]);
    assert_eq!(cache["level"], "L1d");
    assert_eq!(
        (cache["sets"].as_u64(), cache["ways"].as_u64()),
        (Some(64), Some(8))
    );
    assert_eq!(cache["itemsize"], 4);
    assert_eq!(cache["strides_bytes"], serde_json::json!([4, 4096]));
    assert_eq!(cache["dims"][1]["gcd_with_sets"], 64);
    assert_eq!(cache["dims"][0]["gcd_with_sets"], Value::Null);
    assert_eq!(cache["dims"][1]["sets_touched"], 1);
    assert_eq!(cache["lines_touched"], 1024 * 1024 * 4 / 64);
    assert_eq!(cache["fits"], false);
    assert_eq!(cache["padding"]["ld"], 1040, "65 lines of 16 f32: {cache}");
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
        "padding",
        "simulated",
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
    let simulated = &cache["simulated"];
    assert_eq!(simulated["accesses"], 32 * 63);
    // Every line is missed once on a cold walk that fits.
    assert_eq!(simulated["misses"], cache["lines_touched"]);
    assert_eq!(simulated["capped"], false);
}

#[test]
fn a_long_walk_is_simulated_up_to_the_cap_and_says_so() {
    let cache = cache_json(&["--preset", "design-vm", "arange(4194304)"]);
    assert_eq!(cache["simulated"]["capped"], true);
    assert_eq!(cache["simulated"]["accesses"], cache["simulated"]["limit"]);
    assert_eq!(cache["lines_touched"], 4194304 / 8);
}

#[test]
fn bad_cache_and_dtype_exit_2_with_a_clear_message() {
    for (args, needle) in [
        (
            vec!["--cache", "L1d=33K,8", "arange(4)"],
            "expected three comma-separated fields",
        ),
        (vec!["--cache", "L1d=32K,8,48", "arange(4)"], "48"),
        (vec!["--preset", "pentium", "arange(4)"], "known presets"),
        (
            vec!["--cache", "L2=64G,1,64", "arange(4)"],
            "takes at most 1048576 sets",
        ),
        (
            vec!["--dtype", "f99", "arange(4)"],
            "unknown dtype `f99`; known: f64, f32",
        ),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
