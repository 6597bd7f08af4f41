//! Bounded work everywhere: `sim`, `run` and `layout` estimate what a request costs before they
//! allocate or walk anything, refuse what is too large with exit 2 and a message that gives the
//! estimate and the flag that raises the limit, and `run` stops within about a second of Ctrl-C.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::guarded::{Outcome, run_guarded};

/// Generous hang guard for commands that must answer at once.
const QUICK: Duration = Duration::from_secs(20);

fn guarded(args: &[&str]) -> Outcome {
    let dir = tempfile::tempdir().expect("temp dir");
    run_guarded(dir.path(), args, QUICK)
}

/// Fails unless the run exited 2 and its stderr names every one of `needles`.
#[track_caller]
fn assert_refused(args: &[&str], needles: &[&str]) {
    let outcome = guarded(args);
    outcome.assert_exits(&[2], &args.join(" "));
    for needle in needles {
        assert!(
            outcome.stderr.contains(needle),
            "{args:?}: stderr lacks `{needle}`:\n{}",
            outcome.stderr
        );
    }
}

#[test]
fn sim_refuses_cache_state_beyond_the_budget_before_allocating() {
    for cache in ["L1d=4G,1,2", "L2=64G,16,64", "L1d=256M,1,2"] {
        assert_refused(
            &[
                "sim",
                "stride-sum",
                "len=1024",
                "stride=1",
                "--cache",
                cache,
            ],
            &["GiB of state", "limit of 1.0 GiB", "--max-sim-memory"],
        );
    }
}

#[test]
fn sim_cache_state_budget_can_be_raised_and_lowered() {
    let args = [
        "sim",
        "stride-sum",
        "len=1024",
        "stride=1",
        "--preset",
        "design-vm",
    ];
    guarded(&args).assert_exits(&[0], "a 48 KiB L1d and a 2 MiB L2 fit the default budget");
    let lowered = [args.as_slice(), &["--max-sim-memory", "1K"]].concat();
    let outcome = guarded(&lowered);
    outcome.assert_exits(&[2], "a 1 KiB budget");
    assert!(outcome.stderr.contains("270.2 KiB"), "{}", outcome.stderr);
}

#[test]
fn sim_refuses_more_accesses_than_the_limit_with_the_estimate() {
    assert_refused(
        &["sim", "conflict", "stride=512", "count=64", "reps=1G"],
        &["68719476736 accesses", "--max-accesses"],
    );
    assert_refused(
        &["sim", "view-sum", "expr=arange(1).expand(65536,65536)"],
        &["4294967296 accesses", "--max-accesses"],
    );
    // --warm runs the kernel twice: the estimate doubles.
    assert_refused(
        &[
            "sim",
            "conflict",
            "stride=512",
            "count=64",
            "reps=1000",
            "--warm",
            "--max-accesses",
            "100000",
        ],
        &["128000 accesses", "twice with --warm"],
    );
}

#[test]
fn sim_reads_commas_inside_an_expression_as_part_of_it() {
    let outcome = guarded(&["sim", "view-sum", "expr=arange(12).view(3,4)", "--json"]);
    outcome.assert_exits(&[0], "view-sum over a 3×4 view");
    let doc: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("one JSON object");
    assert_eq!(doc["accesses"], 12);
    assert_eq!(doc["params"]["expr"], "arange(12).view(3,4)");
}

#[test]
fn sim_refuses_a_grid_with_a_pointer_to_run() {
    assert_refused(
        &["sim", "row-sum", "rows=1,2", "cols=4"],
        &["`rows=1,2` lists 2 values", "run --kernel"],
    );
}

#[test]
fn run_keeps_an_expression_with_commas_as_one_value() {
    let dir = tempfile::tempdir().expect("temp dir");
    let outcome = run_guarded(
        dir.path(),
        &[
            "run",
            "--kernel",
            "view-sum",
            "expr=arange(12).view(3,4)",
            "--json",
            "--quiet",
            "--sampling-budget",
            "0",
        ],
        Duration::from_secs(60),
    );
    outcome.assert_exits(&[0], "run view-sum over a 3×4 view");
    let doc: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("one JSON object");
    let records = doc["records"].as_array().expect("records");
    assert_eq!(records.len(), 1, "one point, not a grid");
    assert_eq!(records[0]["params"]["expr"], "arange(12).view(3,4)");
}

#[test]
fn run_refuses_a_point_whose_single_run_is_too_large() {
    assert_refused(
        &[
            "run",
            "--kernel",
            "conflict",
            "stride=512",
            "count=64",
            "reps=1G",
        ],
        &["68719476736 loads and stores", "--max-accesses"],
    );
    assert_refused(
        &[
            "run",
            "--kernel",
            "view-sum",
            "expr=arange(1).expand(65536,65536)",
        ],
        &["4294967296 loads and stores", "--max-accesses"],
    );
}

#[test]
fn run_checks_the_grid_size_before_building_it() {
    let values: Vec<String> = (1..=1000).map(|v| v.to_string()).collect();
    let list = values.join(",");
    let (rows, cols, ld) = (
        format!("rows={list}"),
        format!("cols={list}"),
        format!("ld={list}"),
    );
    assert_refused(
        &["run", "--kernel", "row-sum", &rows, &cols, &ld],
        &["1000000000 points", "limit of 10000"],
    );
}

#[test]
fn suite_files_have_their_grid_size_checked_before_expansion() {
    let dir = tempfile::tempdir().expect("temp dir");
    let list = (1..=1000)
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let text = format!(
        "name = \"big\"\n[[point]]\nkernel = \"row-sum\"\n\
         params = {{ rows = [{list}], cols = [{list}], ld = [{list}] }}\n"
    );
    let path = dir.path().join("big.toml");
    std::fs::write(&path, text).expect("write the suite");
    let outcome = run_guarded(
        dir.path(),
        &["run", "--suite", "big.toml"],
        Duration::from_secs(20),
    );
    outcome.assert_exits(&[2], "a 10^9-point suite file");
    assert!(
        outcome.stderr.contains("1000000000 points") && outcome.stderr.contains("line 3"),
        "{}",
        outcome.stderr
    );
}

#[test]
fn layout_prints_empty_views_with_huge_outer_dims_at_once() {
    for expr in [
        "arange(0).view(3037000499,3037000499,0)",
        "arange(0).expand(9223372036854775807,0)",
    ] {
        let outcome = guarded(&["layout", expr]);
        outcome.assert_exits(&[0], expr);
        assert!(
            outcome.stdout.contains("[] (no elements"),
            "{}",
            outcome.stdout
        );
    }
}

#[test]
fn layout_refuses_copy_work_beyond_its_budget() {
    let expr = format!("arange(16777216){}", ".clone()".repeat(200));
    let outcome = guarded(&["layout", "--json", &expr]);
    outcome.assert_exits(&[2], "200 clones of 16 Mi elements");
    let doc: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("one JSON object");
    assert_eq!(doc["error"]["kind"], "too_large");
    let message = doc["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("all copies"), "{message}");
    // A few copies stay within the budget.
    let few = "arange(4096).view(64,64).T.clone().contiguous().clone()";
    guarded(&["layout", "--json", few]).assert_exits(&[0], few);
}

#[test]
fn layout_help_lists_every_error_kind_the_json_mode_emits() {
    let help = guarded(&["layout", "--help"]);
    help.assert_exits(&[0], "layout --help");
    let cases = [
        ("parse", "arange(12).foo("),
        ("invalid_dim", "arange(12).view(3,4).transpose(0,5)"),
        ("invalid_argument", "arange(12)[::0]"),
        ("out_of_bounds", "arange(12).view(3,4)[5]"),
        ("view_incompatible", "arange(12).view(3,4).T.view(12)"),
        ("shape_mismatch", "arange(12).view(5,3)"),
        (
            "overflow",
            "arange(1).expand(9223372036854775807,9223372036854775807)",
        ),
        ("too_large", "arange(16777217)"),
    ];
    for (kind, expr) in cases {
        assert!(
            help.stdout.contains(&format!("  {kind} ")),
            "help lacks {kind}"
        );
        let outcome = guarded(&["layout", "--json", expr]);
        outcome.assert_exits(&[2], expr);
        let doc: serde_json::Value =
            serde_json::from_str(&outcome.stdout).expect("one JSON object");
        assert_eq!(doc["error"]["kind"], kind, "{expr}");
    }
}

#[test]
fn run_stops_within_seconds_of_ctrl_c_during_a_long_point() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The largest conflict probe a run allows by default: 64 · 4 Mi = 2^28 loads per run.
    let mut child = common::stridelab_command()
        .args([
            "run",
            "--kernel",
            "conflict",
            "stride=512",
            "count=64",
            "reps=4M",
            "--quiet",
            "--out",
            "out.json",
        ])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start stridelab");
    std::thread::sleep(Duration::from_millis(1200));
    let still_running = child.try_wait().expect("poll stridelab").is_none();
    assert!(still_running, "the point should take longer than a second");
    let sent = Instant::now();
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -INT failed");
    let exit = loop {
        if let Some(exit) = child.try_wait().expect("poll stridelab") {
            break exit;
        }
        if sent.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running 10 s after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = sent.elapsed();
    assert_eq!(exit.code(), Some(130), "an interrupted run exits 130");
    assert!(
        took < Duration::from_secs(3),
        "stopped {took:?} after Ctrl-C"
    );
    assert!(dir.path().join("out.json").exists(), "results are written");
}

#[test]
fn matmul_refuses_bad_sizes_and_cubic_work_before_allocating() {
    let run = |args: &[&'static str]| [&["run", "--kernel", "matmul"], args].concat();
    assert_refused(&run(&["n=0", "order=ijk"]), &["`n`", "zero leaves nothing"]);
    assert_refused(&run(&["n=64", "order=blocked", "B=0"]), &["`B`"]);
    assert_refused(&run(&["n=64", "order=ijk", "dtype=f16"]), &["f64, f32"]);
    assert_refused(&run(&["n=64", "order=ikjj"]), &["ijk, jik, ikj"]);
    // 2·16384³ + 16384² loads and stores: refused from the estimate, nothing allocated.
    assert_refused(
        &run(&["n=16384", "order=ijk"]),
        &["8796361457728 loads and stores", "--max-accesses"],
    );
    assert_refused(
        &["sim", "matmul", "n=4096", "order=jki"],
        &["206175207488 accesses", "--max-accesses"],
    );
}
