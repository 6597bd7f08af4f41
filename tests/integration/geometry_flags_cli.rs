//! The geometry flags as the real binary reads them: one `--preset` as the base (this
//! machine's levels otherwise), `--cache` replacing or adding single levels on top, the
//! `caches:` line saying which level came from where, a doubtful level marked in `sim` and
//! `run` and recorded in the results, bad input refused with exit 2, and the flags' help,
//! man pages and completions telling the truth.
//!
//! "This machine" is the design-vm sysfs tree in `tests/fixtures/sysfs-design-vm` (its L3 is a
//! hypervisor's "480 MiB"), read through the hidden `--sysfs-root`, so no test depends on the
//! caches of the machine running it.

use crate::common;
use common::stridelab;

use serde_json::Value;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sysfs-design-vm"
);

fn stdout_of(args: &[&str]) -> String {
    let out = stridelab(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `sim row-sum 64 64` on the fixture's geometry with `extra` flags, as JSON.
fn sim_json(extra: &[&str]) -> Value {
    let mut args = vec![
        "sim",
        "row-sum",
        "64",
        "64",
        "--sysfs-root",
        FIXTURE,
        "--json",
    ];
    args.extend_from_slice(extra);
    serde_json::from_str(&stdout_of(&args)).expect("one JSON object")
}

/// (name, size, source) of each level in a JSON list of levels.
fn level_rows(list: &Value) -> Vec<(String, u64, String)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_string(),
                l["size"].as_u64().unwrap(),
                l["source"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// (name, size, source) of each simulated level of a `sim --json` object.
fn levels(sim: &Value) -> Vec<(String, u64, String)> {
    level_rows(&sim["levels"])
}

/// `run --kernel row-sum rows=64 cols=64` with `extra` flags, unsampled: its stderr and its
/// results document.
fn run_row_sum(extra: &[&str]) -> (String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    let mut args = vec!["run", "--kernel", "row-sum", "rows=64", "cols=64"];
    args.extend_from_slice(extra);
    args.extend(["--sampling-budget", "0", "--quiet", "--out"]);
    args.push(file.to_str().unwrap());
    let out = stridelab(&args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let doc = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    (err, doc)
}

fn row(name: &str, size: u64, source: &str) -> (String, u64, String) {
    (name.to_string(), size, source.to_string())
}

const K: u64 = 1 << 10;
const M: u64 = 1 << 20;

#[test]
fn cache_replaces_one_level_of_the_machine_and_keeps_the_others() {
    let sim = sim_json(&["--cache", "L2=1M,8,64"]);
    assert_eq!(
        levels(&sim),
        [
            row("L1d", 48 * K, "sysfs"),
            row("L2", M, "override"),
            row("L3", 480 * M, "sysfs"),
        ]
    );
    let source = sim["geometry_source"].as_str().unwrap();
    assert!(
        source.starts_with("L1d, L3 from the sysfs tree ")
            && source.ends_with("; L2 from --cache (replacing the tree's 2 MiB 16-way)"),
        "{source}"
    );
    // A level the machine lacks is added, innermost first.
    let sim = sim_json(&["--cache", "L4=256M,16,64"]);
    let names: Vec<String> = levels(&sim).into_iter().map(|l| l.0).collect();
    assert_eq!(names, ["L1d", "L2", "L3", "L4"]);
}

#[test]
fn cache_replaces_one_level_of_the_preset() {
    let sim = sim_json(&["--preset", "amd-zen4", "--cache", "L2=2M,16,64"]);
    assert_eq!(
        levels(&sim),
        [
            row("L1d", 32 * K, "preset"),
            row("L2", 2 * M, "override"),
            row("L3", 32 * M, "preset"),
        ]
    );
    assert_eq!(
        sim["geometry_source"],
        "L1d, L3 from preset amd-zen4; L2 from --cache (replacing the preset's 1 MiB 8-way)"
    );
    assert_eq!(sim["warnings"], serde_json::json!([]));
}

#[test]
fn sim_marks_the_implausible_l3_on_every_row_and_says_why() {
    let col_sum = |extra: &[&str]| {
        let mut args = vec![
            "sim",
            "col-sum",
            "rows=4096",
            "cols=64",
            "--sysfs-root",
            FIXTURE,
        ];
        args.extend_from_slice(extra);
        stdout_of(&args)
    };
    let text = col_sum(&[]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].starts_with("caches: L1d, L2, L3 from the sysfs tree "),
        "{text}"
    );
    assert!(
        lines[2].starts_with("warning: L3 480 MiB 16-way (sysfs): implausible: 480 MiB in one"),
        "{text}"
    );
    assert!(
        lines[3].contains("the rows marked ! simulate these levels as given"),
        "{text}"
    );
    let marked: Vec<&&str> = lines.iter().filter(|l| l.starts_with("L3!")).collect();
    assert_eq!(marked.len(), 3, "counts, 3C and model rows: {text}");
    assert!(
        marked[0].contains("480 MiB"),
        "still simulated at its size: {text}"
    );
    assert!(!text.contains("L1d!") && !text.contains("L2!"), "{text}");

    let sim = sim_json(&[]);
    let warnings = sim["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{sim}");
    assert!(warnings[0].as_str().unwrap().starts_with("L3 480 MiB"));
    let l3 = &sim["levels"][2];
    assert_eq!(
        (l3["name"].as_str(), l3["size"].as_u64()),
        (Some("L3"), Some(480 * M))
    );
    assert!(
        l3["warnings"][0].as_str().unwrap().contains("rule 2"),
        "{l3}"
    );

    // Replaced, the level and its warning are gone.
    let fixed = col_sum(&["--cache", "L3=8M,16,64"]);
    assert!(
        !fixed.contains("warning") && !fixed.contains("L3!"),
        "{fixed}"
    );
}

#[test]
fn a_second_preset_bad_presets_and_bad_levels_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--preset", "amd-zen4", "--preset", "intel-golden-cove"],
            "'--preset <NAME>' cannot be used multiple times",
        ),
        (&["--preset", "pentium4"], "known presets: design-vm,"),
        (
            &["--cache", "L2=1M,8"],
            "expected three comma-separated fields",
        ),
        (&["--cache", "L2=1M,7,64"], "not divisible by ways × line"),
        (&["--cache", "L9=1M,8,64"], "unknown cache level name `L9`"),
        (
            &["--cache", "L2=1M,8,64", "--cache", "l2=2M,16,64"],
            "--cache gives L2 twice",
        ),
        (&["--cache", "L1i=32K,8,64"], "instruction cache"),
    ];
    for (flags, needle) in cases {
        for command in [
            vec!["sim", "row-sum", "64", "64"],
            vec![
                "run", "--kernel", "row-sum", "rows=64", "cols=64", "--out", "-",
            ],
        ] {
            let mut args = command.clone();
            args.extend_from_slice(flags);
            let out = stridelab(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(needle), "{args:?}: `{err}` lacks `{needle}`");
            assert!(!err.contains("panicked"), "{err}");
            assert!(out.stdout.is_empty(), "{args:?}: nothing measured");
        }
    }
}

#[test]
fn run_records_the_geometry_its_misses_were_simulated_on() {
    let (err, doc) = run_row_sum(&["--preset", "amd-zen4", "--cache", "L1d=48K,12,64"]);
    assert!(
        err.contains(
            "simulated caches: L2, L3 from preset amd-zen4; L1d from --cache (replacing the \
             preset's 32 KiB 8-way)"
        ),
        "{err}"
    );
    let info = &doc["info"];
    assert_eq!(info["simulated_preset"], "amd-zen4");
    let expected = [
        row("L1d", 48 * K, "override"),
        row("L2", M, "preset"),
        row("L3", 32 * M, "preset"),
    ];
    assert_eq!(level_rows(&info["simulated_caches"]), expected);
    // The points' misses were counted on those levels (the records name no source).
    let simulated: Vec<(String, u64)> = level_rows(&doc["records"][0]["simulated"]["levels"])
        .into_iter()
        .map(|(name, size, _)| (name, size))
        .collect();
    let sizes: Vec<(String, u64)> = expected.iter().map(|(n, s, _)| (n.clone(), *s)).collect();
    assert_eq!(simulated, sizes);
}

#[test]
fn run_warns_of_a_doubtful_level_before_and_after_and_records_it() {
    let (err, doc) = run_row_sum(&["--sysfs-root", FIXTURE]);
    let warning = "warning: L3 480 MiB 16-way (sysfs): implausible";
    assert_eq!(
        err.matches(warning).count(),
        2,
        "at the start and the end: {err}"
    );
    // The machine's own geometry: recorded as detected, with the warning, no override.
    assert!(
        doc["info"].get("simulated_caches").is_none(),
        "{}",
        doc["info"]
    );
    let l3 = doc["info"]["caches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "L3")
        .unwrap();
    assert!(
        l3["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("implausible")
    );
    let levels = doc["records"][0]["simulated"]["levels"].as_array().unwrap();
    assert_eq!(
        levels[2]["size"].as_u64(),
        Some(480 * M),
        "simulated as given"
    );
}

#[test]
fn info_lists_the_hierarchy_the_flags_choose() {
    let text = stdout_of(&["info", "--sysfs-root", FIXTURE, "--cache", "L3=8M,16,64"]);
    assert!(
        text.contains(
            "note: without --cache or --preset, sim, run and the main job simulate L3 as given"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "Simulated hierarchy with these flags (sim, run): L1d, L2 from the sysfs tree"
        ),
        "{text}"
    );
    assert!(
        text.contains("; L3 from --cache (replacing the tree's 480 MiB 16-way)"),
        "{text}"
    );
}

#[test]
fn sim_list_is_run_list() {
    for args in [&["--list"][..], &["--list", "col-sum"]] {
        let sim = stdout_of(&[&["sim"][..], args].concat());
        let run = stdout_of(&[&["run"][..], args].concat());
        assert_eq!(sim, run, "{args:?}");
        assert!(sim.contains("col-sum"), "{sim}");
    }
    let out = stridelab(&["sim", "--list", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown kernel"));
    // Without --list the kernel is required.
    let out = stridelab(&["sim"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_man_page_names_only_pages_that_exist() {
    let main = stdout_of(&["man"]);
    let mut named: Vec<String> = main
        .split("stridelab\\-")
        .skip(1)
        .filter_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase())
                .collect();
            rest[name.len()..].starts_with("(1)").then_some(name)
        })
        .collect();
    named.sort();
    named.dedup();
    assert!(named.len() >= 9, "{named:?}");
    for name in &named {
        let page = stdout_of(&["man", name]);
        assert!(
            page.contains(&format!("\n.TH stridelab-{name} 1 ")),
            "{name}"
        );
    }
    assert!(!named.contains(&"help".to_string()), "{named:?}");
    assert!(main.contains("stridelab man SUBCOMMAND"), "{main}");
    assert_eq!(stridelab(&["man", "nope"]).status.code(), Some(2));
}

#[test]
fn bash_completion_offers_presets_and_kernels_and_no_hidden_flags() {
    let script = stdout_of(&["completions", "bash"]);
    let mut preset_cases = 0;
    for (i, _) in script.match_indices("--preset)") {
        let body = &script[i..i + 200];
        assert!(
            body.contains("compgen -W \"design-vm intel-golden-cove amd-zen4 apple-m1-firestorm\""),
            "{body}"
        );
        preset_cases += 1;
    }
    assert!(
        preset_cases >= 5,
        "sim, run, info, layout, gate, main: {preset_cases}"
    );
    for hidden in ["--sysfs-root", "--fixture-slowdown"] {
        assert!(!script.contains(hidden), "{hidden} is hidden");
    }
    let sim = script
        .split("stridelab__subcmd__sim)")
        .nth(1)
        .expect("a sim section");
    let opts = sim.lines().nth(1).unwrap();
    for kernel in ["row-sum", "col-sum", "conflict", "view-sum", "to-nhwc"] {
        assert!(opts.split(['"', ' ']).any(|w| w == kernel), "{opts}");
    }
    let run = script
        .split("stridelab__subcmd__run)")
        .nth(1)
        .expect("a run section");
    let kernel = run.split("--kernel)").nth(1).expect("a --kernel case");
    assert!(
        kernel
            .lines()
            .nth(1)
            .unwrap()
            .contains("compgen -W \"row-sum col-sum"),
        "{kernel}"
    );
}

#[test]
fn the_main_job_takes_the_geometry_flags_but_not_beside_a_subcommand() {
    let out = stridelab(&["--preset", "amd-zen4", "info"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be used with"), "{err}");
    let help = stdout_of(&["--help"]);
    assert!(help.contains("Main job options (no subcommand)"), "{help}");
    assert!(help.contains("--preset <NAME>") && help.contains("--cache <NAME=SIZE,WAYS,LINE>"));
}

#[test]
fn the_help_says_what_preset_and_cache_do() {
    for command in ["sim", "run", "info", "layout"] {
        let help = stdout_of(&[command, "--help"]);
        assert!(help.contains("At most one --preset"), "{command}: {help}");
        assert!(
            help.contains("It replaces that level of the base geometry"),
            "{command}: {help}"
        );
        assert!(!help.contains("Repeatable; levels are taken in the order given"));
    }
}
