//! Fuzzing the binary's edges: random layout expressions, corrupted results documents and random
//! `sim` argument sets. Every case must end by itself within its limit with exit 0, 1 or 2 —
//! no panic, no abort, no hang — and leave no temporary file behind; no document corrupted on
//! purpose may pass the gate. Cases are drawn from a fixed seed, so a failure reproduces.

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use common::guarded::{Outcome, leftover_temp_files, run_guarded};
use serde_json::{Value, json};
use stridelab::cache::sim::Policy;
use stridelab::stats::SplitMix64;

/// Cases per fuzzed surface (the floors the suite promises).
const LAYOUT_CASES: usize = 10_000;
const DOCUMENT_CASES: usize = 1_000;
const SIM_CASES: usize = 1_000;

/// A case that takes longer than this has hung. The slowest honest case (a simulation just
/// under the default access limit) takes about 7 s on a loaded 2-vCPU machine.
const CASE_LIMIT: Duration = Duration::from_secs(90);

/// Cases running at once across all fuzz tests: one per CPU of our 2-vCPU machines, so the
/// three tests running side by side do not slow each other's cases towards the limit.
const PARALLEL_CASES: usize = 2;

/// A counting semaphore shared by the fuzz tests of this file.
static SLOTS: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

fn with_slot<T>(work: impl FnOnce() -> T) -> T {
    let (count, freed) = &SLOTS;
    let mut busy = count.lock().unwrap();
    while *busy >= PARALLEL_CASES {
        busy = freed.wait(busy).unwrap();
    }
    *busy += 1;
    drop(busy);
    let result = work();
    *count.lock().unwrap() -= 1;
    freed.notify_one();
    result
}

/// Runs `cases` on two worker threads (the machines have two CPUs) and collects failures.
fn run_cases<C: Sync>(cases: &[C], check: impl Fn(usize, &C) -> Result<(), String> + Sync) {
    let failures = Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    if let Err(message) = with_slot(|| check(i, case)) {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("case {i}: {message}"));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed; first ones:\n{}",
        failures.len(),
        cases.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Exit 0, 1 or 2, by itself, in time, without a panic or an abort.
fn clean_exit(out: &Outcome) -> Result<(), String> {
    if out.timed_out {
        return Err(format!("still running after {:?}", out.elapsed));
    }
    if out.stderr.contains("panicked at") || out.stderr.contains("memory allocation") {
        return Err(format!("panicked or aborted: {}", first_line(&out.stderr)));
    }
    match out.code {
        Some(0..=2) => Ok(()),
        other => Err(format!(
            "exit {other:?}; stderr: {}",
            first_line(&out.stderr)
        )),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

fn pick<'a, T>(rng: &mut SplitMix64, items: &'a [T]) -> &'a T {
    &items[rng.below(items.len())]
}

// ---------------------------------------------------------------------------------------------
// Layout expressions

/// Integers a careless or hostile user types: small, off by one, huge, overflowing.
fn wild_int(rng: &mut SplitMix64) -> String {
    const EDGES: &[&str] = &[
        "0",
        "1",
        "-1",
        "2",
        "3",
        "-2",
        "4",
        "65536",
        "3037000499",
        "4294967296",
        "9223372036854775807",
        "-9223372036854775808",
        "99999999999999999999999",
    ];
    if rng.below(3) == 0 {
        pick(rng, EDGES).to_string()
    } else {
        (rng.below(9) as i64 - 2).to_string()
    }
}

fn wild_ints(rng: &mut SplitMix64, max: usize) -> Vec<String> {
    (0..rng.below(max + 1)).map(|_| wild_int(rng)).collect()
}

fn slice_item(rng: &mut SplitMix64) -> String {
    let part = |rng: &mut SplitMix64| {
        if rng.below(2) == 0 {
            String::new()
        } else {
            wild_int(rng)
        }
    };
    match rng.below(6) {
        0 => wild_int(rng),
        1 => "None".into(),
        2 => "...".into(),
        3 => format!("{}:{}", part(rng), part(rng)),
        _ => format!("{}:{}:{}", part(rng), part(rng), part(rng)),
    }
}

/// One postfix step, mostly well-formed with wild arguments.
fn layout_step(rng: &mut SplitMix64) -> String {
    let ints = |rng: &mut SplitMix64, n: usize| wild_ints(rng, n).join(",");
    match rng.below(20) {
        0 => ".T".into(),
        1 => ".t()".into(),
        2 => format!(".transpose({},{})", wild_int(rng), wild_int(rng)),
        3 => format!(".permute({})", ints(rng, 4)),
        4 => format!(".select({},{})", wild_int(rng), wild_int(rng)),
        5 => format!(
            ".narrow({},{},{})",
            wild_int(rng),
            wild_int(rng),
            wild_int(rng)
        ),
        6 => format!(".diagonal({})", ints(rng, 3)),
        7 => format!(".squeeze({})", ints(rng, 1)),
        8 => format!(".unsqueeze({})", wild_int(rng)),
        9 => format!(".expand({})", ints(rng, 4)),
        10 => format!(".flip({})", ints(rng, 3)),
        11 => format!(
            ".as_strided(({}),({}),{})",
            ints(rng, 3),
            ints(rng, 3),
            wild_int(rng)
        ),
        12 | 13 => format!(".view({})", ints(rng, 4)),
        14 => format!(".reshape({})", ints(rng, 4)),
        15 => format!(".flatten({})", ints(rng, 2)),
        16 => ".contiguous()".into(),
        17 => ".clone()".into(),
        _ => {
            let items: Vec<String> = (0..1 + rng.below(3)).map(|_| slice_item(rng)).collect();
            format!("[{}]", items.join(","))
        }
    }
}

/// Damages a string the way a typo or a hostile user would.
fn mangle(rng: &mut SplitMix64, text: &str) -> String {
    const NOISE: &[&str] = &[
        "(", ")", "[", "]", ",", ".", ":", "-", "=", "é", " ", "\u{7f}", "x",
    ];
    let chars: Vec<char> = text.chars().collect();
    let at = rng.below(chars.len() + 1);
    let mut out: String = chars[..at].iter().collect();
    match rng.below(3) {
        0 => out.push_str(pick::<&str>(rng, NOISE)),
        1 => {}
        _ => {
            out.push_str(pick::<&str>(rng, NOISE));
            out.push_str(&chars[at..].iter().collect::<String>());
            return out;
        }
    }
    out.extend(chars.iter().skip(at + 1));
    out
}

fn layout_expression(rng: &mut SplitMix64) -> String {
    // The largest storage layout accepts (2^24 elements) takes about 1 s to walk, a
    // thousand times a small one: drawn in about 30 of the cases, it keeps its edge
    // covered without being most of the test's time.
    let storage = if rng.below(4) == 0 {
        wild_int(rng)
    } else if rng.below(256) == 0 {
        "16777216".to_string()
    } else {
        pick(rng, &["0", "1", "12", "24", "54", "120", "4096"]).to_string()
    };
    let mut expr = format!("arange({storage})");
    for _ in 0..rng.below(7) {
        expr.push_str(&layout_step(rng));
    }
    if rng.below(8) == 0 {
        expr = mangle(rng, &expr);
    }
    expr
}

/// Error kinds `layout --json` may report (the documented list).
const LAYOUT_ERROR_KINDS: &[&str] = &[
    "parse",
    "invalid_dim",
    "invalid_argument",
    "out_of_bounds",
    "view_incompatible",
    "shape_mismatch",
    "overflow",
    "too_large",
    "usage",
];

#[test]
fn random_layout_expressions_end_cleanly() {
    let mut rng = SplitMix64::new(0x1a70_u64);
    let cases: Vec<(String, bool)> = (0..LAYOUT_CASES)
        .map(|_| (layout_expression(&mut rng), rng.below(2) == 0))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    run_cases(&cases, |_, (expr, as_json)| {
        let mut args = vec!["layout"];
        if *as_json {
            args.push("--json");
        }
        args.push("--");
        args.push(expr);
        let out = run_guarded(dir.path(), &args, CASE_LIMIT);
        clean_exit(&out).map_err(|e| format!("layout {expr:?}: {e}"))?;
        if *as_json && out.code == Some(2) {
            let kind = serde_json::from_str::<Value>(&out.stdout)
                .ok()
                .and_then(|v| v["error"]["kind"].as_str().map(str::to_owned));
            match kind {
                Some(k) if LAYOUT_ERROR_KINDS.contains(&k.as_str()) => {}
                other => {
                    return Err(format!(
                        "layout --json {expr:?}: error kind {other:?} is not documented; stdout: {}",
                        first_line(&out.stdout)
                    ));
                }
            }
        }
        Ok(())
    });
    assert!(leftover_temp_files(dir.path()).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Corrupted documents

fn fixture(path: &str) -> Value {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    serde_json::from_str(&std::fs::read_to_string(&full).unwrap()).unwrap()
}

/// Every JSON path (as pointer segments) to a leaf or container of `value`.
fn all_pointers(value: &Value, prefix: &str, out: &mut Vec<String>) {
    out.push(prefix.to_string());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                all_pointers(v, &format!("{prefix}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                all_pointers(v, &format!("{prefix}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// A value that is wrong almost anywhere it lands.
fn wild_value(rng: &mut SplitMix64) -> Value {
    match rng.below(14) {
        0 => json!(0),
        1 => json!(-1),
        2 => json!(-5.0),
        3 => json!(1e308),
        4 => json!(-1e308),
        5 => json!(2_305_843_009_213_693_952_u64), // 2^61
        6 => json!(u64::MAX),
        7 => json!(4_294_967_295_u64),
        8 => json!(null),
        9 => json!("fast"),
        10 => json!([]),
        11 => json!({}),
        12 => json!(1_099_511_627_776_u64), // 2^40
        _ => json!([1e308, -1e308]),
    }
}

/// One way to damage a document. `Invalid` damage leaves no valid reading of the document, so
/// the gate must refuse it; `Wild` damage lands anywhere and may by chance stay valid.
enum Damage {
    Invalid(Value),
    Wild(Value),
    Text(String),
}

/// Timing and geometry damage that no honest document can carry.
fn invalid_damage(rng: &mut SplitMix64, base: &Value) -> Value {
    let mut doc = base.clone();
    let records = doc["records"].as_array().map_or(0, Vec::len);
    let with_timing: Vec<usize> = (0..records)
        .filter(|&i| doc["records"][i]["timing"].is_object())
        .collect();
    let r = *pick(rng, &with_timing);
    let timing = &mut doc["records"][r]["timing"];
    match rng.below(10) {
        0 => timing["samples_ns_per_run"] = json!([]),
        1 => timing["samples_ns_per_run"][0] = json!(0.0),
        2 => timing["samples_ns_per_run"][0] = json!(-3.0),
        3 => timing["ns_per_run"]["median"] = json!(-5.0),
        4 => {
            let median = timing["ns_per_run"]["median"].as_f64().unwrap_or(1.0);
            timing["ns_per_run"]["ci_low"] = json!(median * 2.0 + 1.0);
            timing["ns_per_run"]["ci_high"] = json!(median / 2.0);
        }
        5 => timing["ns_per_run"]["n"] = json!(0),
        6 => timing["runs_per_sample"] = json!(0),
        7 => timing["gb_per_s_ci"] = json!([1e308, -1e308]),
        8 => {
            let field = *pick(rng, &["sets", "ways", "line"]);
            if let Some(levels) = doc["info"]["caches"].as_array_mut() {
                for level in levels {
                    if level.get(field).is_some() {
                        level[field] = json!(0);
                    }
                }
            }
            for rec in doc["records"].as_array_mut().into_iter().flatten() {
                rec["simulated"] = Value::Null;
            }
        }
        _ => {
            let n = timing["samples_ns_per_run"].as_array().map_or(0, Vec::len);
            if n > 0 {
                timing["samples_ns_per_run"][rng.below(n)] = json!(-1e308);
            }
        }
    }
    doc
}

fn wild_damage(rng: &mut SplitMix64, base: &Value) -> Value {
    let mut doc = base.clone();
    let mut pointers = Vec::new();
    all_pointers(&doc, "", &mut pointers);
    for _ in 0..1 + rng.below(3) {
        let target = pick(rng, &pointers).clone();
        if target.is_empty() {
            continue;
        }
        if rng.below(5) == 0 {
            let (parent, key) = target.rsplit_once('/').unwrap();
            match doc.pointer_mut(parent) {
                Some(Value::Object(map)) => {
                    map.remove(key);
                }
                Some(Value::Array(items)) => {
                    if let Ok(i) = key.parse::<usize>()
                        && i < items.len()
                    {
                        items.remove(i);
                    }
                }
                _ => {}
            }
        } else if let Some(slot) = doc.pointer_mut(&target) {
            *slot = wild_value(rng);
        }
    }
    doc
}

fn truncated_text(rng: &mut SplitMix64, base: &Value) -> String {
    let text = serde_json::to_string_pretty(base).unwrap();
    let mut cut = rng.below(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text[..cut].to_string()
}

#[test]
fn corrupted_documents_never_crash_the_report_nor_pass_the_gate() {
    let baseline_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/baseline.json");
    let bases = [
        fixture("reports/baseline.json"),
        fixture("tests/fixtures/results_small.json"),
    ];
    let mut rng = SplitMix64::new(0xd0c5);
    let cases: Vec<(usize, Damage)> = (0..DOCUMENT_CASES)
        .map(|_| {
            let b = rng.below(bases.len());
            let damage = match rng.below(10) {
                0..=3 => Damage::Invalid(invalid_damage(&mut rng, &bases[b])),
                4..=8 => Damage::Wild(wild_damage(&mut rng, &bases[b])),
                _ => Damage::Text(truncated_text(&mut rng, &bases[b])),
            };
            (b, damage)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    run_cases(&cases, |i, (base, damage)| {
        let path: PathBuf = dir.path().join(format!("doc-{i}.json"));
        let text = match damage {
            Damage::Invalid(v) | Damage::Wild(v) => serde_json::to_string_pretty(v).unwrap(),
            Damage::Text(t) => t.clone(),
        };
        std::fs::write(&path, text).unwrap();
        let doc = path.to_str().unwrap();
        let out_dir = dir.path().join(format!("report-{i}"));
        let report = run_guarded(
            dir.path(),
            &["report", "--in", doc, "--out", out_dir.to_str().unwrap()],
            CASE_LIMIT,
        );
        clean_exit(&report).map_err(|e| format!("report --in {doc}: {e}"))?;
        // The gate compares against the committed baseline; only the gate-suite base fits it.
        if *base == 0 {
            let gate = run_guarded(
                dir.path(),
                &[
                    "gate",
                    "--baseline",
                    baseline_path.to_str().unwrap(),
                    "--current",
                    doc,
                    "--quiet",
                ],
                CASE_LIMIT,
            );
            clean_exit(&gate).map_err(|e| format!("gate --current {doc}: {e}"))?;
            let must_fail = !matches!(damage, Damage::Wild(_));
            if must_fail && gate.code == Some(0) {
                return Err(format!(
                    "gate passed a corrupt document {doc}: {}",
                    first_line(&gate.stdout)
                ));
            }
        }
        let _ = std::fs::remove_dir_all(&out_dir);
        let _ = std::fs::remove_file(&path);
        Ok(())
    });
    let left = leftover_temp_files(dir.path());
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
}

// ---------------------------------------------------------------------------------------------
// `sim` argument sets

fn wild_size(rng: &mut SplitMix64) -> String {
    pick(
        rng,
        &[
            "0",
            "1",
            "7",
            "64",
            "1K",
            "32K",
            "48K",
            "1M",
            "256M",
            "4G",
            "64G",
            "1T",
            "-1",
            "x",
            "18446744073709551615",
        ],
    )
    .to_string()
}

fn sim_param(rng: &mut SplitMix64, name: &str) -> String {
    let value = match name {
        "expr" => format!("expr={}", layout_expression(rng)),
        "variant" => format!(
            "variant={}",
            pick(
                rng,
                &["naive-read", "naive-write", "blocked", "fast", "bogus"]
            )
        ),
        "mode" => format!("mode={}", pick(rng, &["thr", "lat", "x"])),
        "order" => format!("order={}", pick(rng, &["row", "col", "tile", "?"])),
        _ => {
            let v = match rng.below(4) {
                0 => wild_int(rng),
                1 => wild_size(rng),
                _ => pick(
                    rng,
                    &[
                        "1", "8", "16", "32", "64", "100", "511", "512", "513", "1024",
                    ],
                )
                .to_string(),
            };
            format!("{name}={v}")
        }
    };
    if rng.below(25) == 0 {
        mangle(rng, &value)
    } else {
        value
    }
}

/// Kernels and their parameter names, as `stridelab run --list` shows them.
const SIM_KERNELS: &[(&str, &[&str])] = &[
    ("row-sum", &["rows", "cols", "ld"]),
    ("col-sum", &["rows", "cols", "ld"]),
    ("stride-sum", &["len", "stride"]),
    ("conflict", &["stride", "count", "reps", "mode", "seed"]),
    ("view-sum", &["expr"]),
    ("transpose", &["rows", "cols", "ld", "variant", "B"]),
    ("tiled-sum", &["n", "B", "order"]),
    ("to-tiles", &["n", "B"]),
    ("copy", &["bytes"]),
    ("read", &["bytes"]),
    ("chase", &["bytes", "seed", "line"]),
    ("no-such-kernel", &["x"]),
];

fn sim_arguments(rng: &mut SplitMix64) -> Vec<String> {
    let (kernel, params) = *pick(rng, SIM_KERNELS);
    let mut args = vec!["sim".to_string(), kernel.to_string()];
    for name in params.iter() {
        if rng.below(6) != 0 {
            args.push(sim_param(rng, name));
        }
    }
    for _ in 0..rng.below(3) {
        let level = pick(rng, &["L1d", "L2", "L3", "Lx", ""]);
        args.push("--cache".into());
        args.push(format!(
            "{level}={},{},{}",
            wild_size(rng),
            pick(rng, &["0", "1", "2", "8", "12", "16", "-3", "65536"]),
            pick(rng, &["0", "1", "2", "32", "64", "128", "96", "x"])
        ));
    }
    if rng.below(3) == 0 {
        args.push("--preset".into());
        args.push(
            pick(
                rng,
                &[
                    "design-vm",
                    "amd-zen4",
                    "intel-golden-cove",
                    "apple-m1-firestorm",
                    "nope",
                ],
            )
            .to_string(),
        );
    }
    if rng.below(4) == 0 {
        args.push("--policy".into());
        // Every policy the tool knows, and one it does not.
        let mut policies: Vec<&str> = Policy::ALL.iter().map(|policy| policy.name()).collect();
        policies.push("no-such-policy");
        args.push(pick(rng, &policies).to_string());
    }
    if rng.below(3) == 0 {
        args.push("--warm".into());
    }
    if rng.below(2) == 0 {
        args.push("--json".into());
    }
    args
}

#[test]
fn random_sim_arguments_end_cleanly() {
    let mut rng = SplitMix64::new(0x5171);
    let cases: Vec<Vec<String>> = (0..SIM_CASES).map(|_| sim_arguments(&mut rng)).collect();
    let dir = tempfile::tempdir().unwrap();
    run_cases(&cases, |_, args| {
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_guarded(dir.path(), &argv, CASE_LIMIT);
        clean_exit(&out).map_err(|e| format!("{}: {e}", args.join(" ")))
    });
    assert!(leftover_temp_files(dir.path()).is_empty());
}
