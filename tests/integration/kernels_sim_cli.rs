//! `stridelab sim` end to end: the README's example (a 512×512 column sum misses on every load,
//! mostly conflict; padding ld to 513 leaves about one miss per 8 loads), a column too long for
//! the cache modelled as capacity, JSON shape, human tables, exit code 2 on bad input, and
//! `--engine reference` printing the fast engine's bytes.

use crate::common;
use common::stridelab;

use serde_json::Value;
use stridelab::cache::sim::Policy;

fn sim_json(args: &[&str]) -> Value {
    let mut all = vec!["sim"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = stridelab(&all);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("{v} is not a count"))
}

#[test]
fn power_of_two_column_sum_misses_every_load_mostly_by_conflict() {
    // design-vm: a 48 KiB 12-way L1d and a 2 MiB L2.
    let out = sim_json(&["col-sum", "rows=512", "cols=512", "--preset", "design-vm"]);
    assert_eq!(out["kernel"], "col-sum");
    assert_eq!(out["params"]["ld"], 512);
    assert_eq!(u(&out["accesses"]), 512 * 512);
    let levels = out["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    let l1 = &levels[0];
    assert_eq!((l1["name"].as_str(), u(&l1["sets"])), (Some("L1d"), 64));
    assert_eq!(u(&l1["loads"]), 512 * 512);
    assert_eq!(u(&l1["load_misses"]), 512 * 512, "every load misses");
    assert_eq!(l1["miss_rate"].as_f64(), Some(1.0));
    let (compulsory, capacity, conflict) =
        (u(&l1["compulsory"]), u(&l1["capacity"]), u(&l1["conflict"]));
    assert_eq!(compulsory + capacity + conflict, u(&l1["misses"]));
    assert!(
        conflict > 3 * (compulsory + capacity),
        "mostly conflict: {l1}"
    );
    // The model agrees: one column's 512 lines share 1 set, and fit the cache's 768.
    assert_eq!(u(&l1["model"]["distinct_sets"]), 1);
    assert_eq!(l1["model"]["overflows"], true);
    assert_eq!(l1["model"]["repeat_misses"], "conflict");
}

#[test]
fn a_column_that_outnumbers_the_cache_is_modelled_as_capacity_not_conflict() {
    // 1024×1024 f64 on a 32 KiB 8-way L1d: each column's 1024 lines fall in one set, but
    // they also outnumber the cache's 512 lines, so the 3C split counts capacity misses and
    // the model must say so (the same words as the split).
    let args = [
        "col-sum",
        "rows=1024",
        "cols=1024",
        "--cache",
        "L1d=32K,8,64",
    ];
    let out = sim_json(&args);
    let l1 = &out["levels"][0];
    assert_eq!(u(&l1["conflict"]), 0, "{l1}");
    assert!(u(&l1["capacity"]) > u(&l1["compulsory"]), "{l1}");
    let model = &l1["model"];
    assert_eq!(model["repeat_misses"], "capacity", "{model}");
    assert_eq!(
        (u(&model["distinct_lines"]), u(&model["cache_lines"])),
        (1024, 512)
    );
    let mut all = vec!["sim"];
    all.extend_from_slice(&args);
    let text = String::from_utf8(stridelab(&all).stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("L1d   uses 1 of 64 sets"))
        .unwrap_or_else(|| panic!("no L1d model line in\n{text}"));
    assert!(
        line.contains(
            "its 1,024 lines outnumber the cache's 512, so a repeated pass misses by capacity"
        ),
        "{line}"
    );
    assert!(!line.contains("conflict"), "{line}");
}

#[test]
fn padding_one_element_leaves_about_one_miss_per_eight_loads() {
    let out = sim_json(&[
        "col-sum",
        "rows=512",
        "cols=512",
        "ld=513",
        "--preset",
        "design-vm",
    ]);
    let l1 = &out["levels"][0];
    let (loads, misses) = (u(&l1["loads"]), u(&l1["load_misses"]));
    assert_eq!(loads, 512 * 512);
    let per_eight = loads as f64 / 8.0;
    assert!(
        (misses as f64 - per_eight).abs() < 0.05 * per_eight,
        "{misses} misses for {loads} loads"
    );
    assert!(u(&l1["conflict"]) < misses / 20, "{l1}");
    assert_eq!(u(&l1["model"]["distinct_sets"]), 64);
}

#[test]
fn levels_follow_the_command_line_and_warm_runs_skip_compulsory_misses() {
    let out = sim_json(&[
        "row-sum",
        "64",
        "64",
        "--preset",
        "amd-zen4",
        "--cache",
        "L1d=48K,12,64",
        "--warm",
    ]);
    let names: Vec<_> = out["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["L1d", "L2", "L3"]);
    assert_eq!(
        u(&out["levels"][0]["size"]),
        48 * 1024,
        "--cache replaced the preset's L1d"
    );
    // 32 KiB fit in every level: a warm run hits everywhere.
    assert_eq!(u(&out["levels"][0]["misses"]), 0);
    assert_eq!(out["warm"], true);
    assert_eq!(out["source"], "simulated");
}

#[test]
fn copies_report_stores_and_chases_have_no_stride_model() {
    let out = sim_json(&[
        "transpose",
        "64",
        "64",
        "naive-read",
        "--preset",
        "amd-zen4",
    ]);
    assert_eq!(u(&out["levels"][0]["stores"]), 64 * 64);
    assert!(u(&out["levels"][0]["store_misses"]) > 0);
    let expr = "arange(64).view(8,8).diagonal(offset=1)";
    let out = sim_json(&["view-sum", expr, "--preset", "amd-zen4"]);
    assert_eq!(out["params"]["expr"], expr);
    assert_eq!(u(&out["accesses"]), 7);
    let out = sim_json(&["chase", "bytes=64K", "--preset", "amd-zen4"]);
    assert_eq!(out["pattern"], Value::Null);
    assert_eq!(u(&out["accesses"]), 1024);
}

#[test]
fn human_output_has_the_tables_and_the_model() {
    let out = stridelab(&["sim", "col-sum", "512", "512", "--preset", "design-vm"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "simulated",
        "load miss",
        "compulsory",
        "conflict",
        "model",
        "64/gcd(64, 64) = 1",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in\n{text}");
    }
}

#[test]
fn bad_input_exits_2_with_the_rule() {
    let cases: &[(&[&str], &str)] = &[
        (&["sim", "nope"], "unknown kernel"),
        (&["sim", "col-sum", "rows=0", "cols=4"], "zero"),
        (&["sim", "col-sum", "4", "4", "ld=3"], "ld"),
        (
            &["sim", "col-sum", "4", "4", "--cache", "L1d=48K,11,64"],
            "divisible",
        ),
        (
            &["sim", "col-sum", "4", "4", "--preset", "nope"],
            "known presets",
        ),
        (&["sim", "view-sum", "expr=arange(4).view(3)"], "expr"),
    ];
    for (args, needle) in cases {
        let out = stridelab(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: `{err}` lacks `{needle}`");
    }
}

#[test]
fn the_copy_engine_simulation_says_what_its_replay_leaves_out() {
    // 512×512 (2 MiB each): naive-write reads a column per destination row, which misses the
    // 48 KiB L1 on every load; the engine's 8×8 blocks use each source line whole (its stage
    // adds a few misses of its own).
    let args = |variant| {
        let mut all = vec!["transpose", "rows=512", "cols=512"];
        all.extend(["--preset", "design-vm"]);
        all.push(variant);
        all
    };
    let fast = sim_json(&args("variant=fast"));
    let note = fast["simulation_note"]
        .as_str()
        .expect("a note for the copy engine");
    assert!(note.contains("without the carried lines"), "{note}");
    let naive = sim_json(&args("variant=naive-write"));
    assert!(naive.get("simulation_note").is_none(), "{naive}");
    let l1_load_misses = |v: &Value| u(&v["levels"][0]["load_misses"]);
    let elements = 512 * 512;
    assert!(l1_load_misses(&naive) >= elements * 9 / 10, "{naive}");
    assert!(l1_load_misses(&fast) <= elements / 4, "{fast}");
    let out = stridelab(&[
        "sim",
        "transpose",
        "rows=64",
        "cols=64",
        "variant=fast",
        "--preset",
        "design-vm",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    // The header, where the caches came from, then the note.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "caches: L1d, L2 from preset design-vm", "{text}");
    assert!(lines[2].starts_with("note: the copy engine"), "{text}");
}

/// `sim` accepts every kernel `run --list` names, with the example its `--list KERNEL` detail
/// prints (so the listing's examples work as written).
#[test]
fn sim_takes_every_listed_kernel_with_its_example() {
    let list = stridelab(&["run", "--list"]);
    assert!(list.status.success());
    let text = String::from_utf8(list.stdout).unwrap();
    let names: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty() && !l.starts_with('`'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.len() >= 16, "{text}");
    for name in names {
        let detail = stridelab(&["run", "--list", name]);
        assert!(detail.status.success(), "{name}");
        let detail = String::from_utf8(detail.stdout).unwrap();
        let example = detail
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("stridelab sim {name} ")))
            .unwrap_or_else(|| panic!("{name}: no sim example in {detail}"));
        let mut args = vec!["sim", name];
        // The words as a shell would pass them: quotes removed.
        let words = crate::common::shell_words(example);
        args.extend(words.iter().map(String::as_str));
        args.extend(["--preset", "amd-zen4", "--json"]);
        let out = stridelab(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(u(&v["accesses"]) > 0, "{name}");
        // The reference engine takes about a second per few million accesses.
        if u(&v["accesses"]) <= 1 << 22 {
            assert_reference_prints(&args, &out);
        }
    }
}

/// Runs `args` again with `--engine reference` and checks that it prints `fast`'s bytes.
fn assert_reference_prints(args: &[&str], fast: &std::process::Output) {
    let mut args = args.to_vec();
    args.extend(["--engine", "reference"]);
    let reference = stridelab(&args);
    assert_eq!(
        String::from_utf8_lossy(&reference.stdout),
        String::from_utf8_lossy(&fast.stdout),
        "{args:?}: the reference engine prints otherwise"
    );
}

/// The reference engine prints what the fast one prints, byte for byte, tables and JSON:
/// column runs, a naive transpose's moves through two 3C levels, warm caches, and every policy
/// of `Policy::ALL`, each paired with one of these kernels in turn (a policy added to the list is
/// run here without a word of this test changing).
#[test]
fn both_engines_print_the_same_bytes() {
    // design-vm has exactly L1d and L2, so the two levels below are all there is on any machine;
    // their power-of-two ways suit every policy (tree-PLRU needs them).
    let two_levels = [
        "--preset",
        "design-vm",
        "--cache",
        "L1d=4K,4,64",
        "--cache",
        "L2=32K,8,64",
    ];
    let on_design_vm: &[&str] = &["col-sum", "rows=256", "cols=256", "--preset", "design-vm"];
    let kernels: [&[&str]; 5] = [
        &[
            "transpose",
            "rows=200",
            "cols=200",
            "variant=naive-write",
            "--warm",
        ],
        &["row-sum", "rows=64", "cols=65"],
        &["matmul", "n=24", "order=kji"],
        &["chase", "bytes=64K", "--seed", "7"],
        &["copy", "bytes=256K", "--warm"],
    ];
    let mut cases = vec![
        on_design_vm
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>(),
    ];
    for i in 0..kernels.len().max(Policy::ALL.len()) {
        let mut case: Vec<String> = kernels[i % kernels.len()]
            .iter()
            .chain(&two_levels)
            .map(|s| s.to_string())
            .collect();
        case.extend([
            "--policy".into(),
            Policy::ALL[i % Policy::ALL.len()].name().into(),
        ]);
        cases.push(case);
    }
    for case in &cases {
        for format in [&["--json"][..], &[]] {
            let mut args = vec!["sim"];
            args.extend(case.iter().map(String::as_str));
            args.extend(format);
            let fast = stridelab(&args);
            assert!(
                fast.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&fast.stderr)
            );
            assert_reference_prints(&args, &fast);
        }
    }
    let unknown = stridelab(&["sim", "row-sum", "rows=8", "cols=8", "--engine", "slow"]);
    assert_eq!(unknown.status.code(), Some(2));
}
