//! Running small C programs under valgrind's cachegrind and comparing its per-function miss
//! counts with the simulator fed the same address sequence.
//!
//! Reusable by any test: compile a fixture from `tests/fixtures/` ([`compile_fixture`]), run it
//! under cachegrind with a D1/LL geometry ([`run_cachegrind`]), read one function's counts
//! ([`Profile::function`]) and compare them with a two-level [`Hierarchy`] ([`compare`]).
//!
//! Why per function: cachegrind 3.19 measures the whole process (dynamic loader, libc start-up,
//! printf), so each kernel lives in its own `noinline` function and we read its counts from the
//! `cachegrind.out` file (the data cg_annotate prints). Buffers come from
//! `posix_memalign(2 MiB)`, so they map to the same sets as the simulator's placement of buffer
//! k at (k+1)·2^32 whenever sets × line ≤ 2 MiB.
//!
//! Residual differences are whole-process effects the simulator cannot see: instruction
//! fetches that miss I1 go to cachegrind's unified LL, and `call`/`ret` touch a stack line.
//! Each such foreign line costs at most one set's worth of extra misses (a set whose lines
//! are swept in LRU order misses on every line once one is evicted), hence
//! [`Tolerance`]'s absolute slack.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use stridelab::cache::geometry::CacheLevel;
use stridelab::cache::sim::{Hierarchy, LevelStats, Policy};

/// Whether valgrind can run here; a note when the caller should skip (see `tool_available`).
pub fn valgrind_available() -> bool {
    super::tool_available("valgrind", &["--version"], "the cachegrind comparison")
}

/// Whether gcc can compile here; a note when the caller should skip (see `tool_available`).
pub fn gcc_available() -> bool {
    super::tool_available("gcc", &["--version"], "the cachegrind comparison")
}

/// A compiled fixture; the binary lives as long as this value.
pub struct Compiled {
    pub binary: PathBuf,
    _dir: tempfile::TempDir,
}

/// Compiles `tests/fixtures/<name>` with gcc. The default flags keep one memory access per
/// source-level element access: `-O1 -fno-tree-vectorize` (no SIMD widening, no loop
/// interchange), `-g` so cachegrind can name functions and lines; `-std=gnu11` for
/// `posix_memalign`, `-Wall -Werror` so a sloppy fixture fails loudly.
pub fn compile_fixture(name: &str, extra_flags: &[&str]) -> Compiled {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let dir = tempfile::tempdir().expect("temp dir");
    let binary = dir.path().join(name.trim_end_matches(".c"));
    let output = Command::new("gcc")
        .args([
            "-O1",
            "-fno-tree-vectorize",
            "-g",
            "-std=gnu11",
            "-Wall",
            "-Werror",
        ])
        .args(extra_flags)
        .arg(&source)
        .arg("-o")
        .arg(&binary)
        .output()
        .expect("run gcc");
    assert!(
        output.status.success(),
        "gcc failed on {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    Compiled { binary, _dir: dir }
}

/// Cachegrind's counts for one function (the `events:` of a `cachegrind.out` file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FunctionCounts {
    pub ir: u64,
    /// Instruction fetches that missed the unified LL.
    pub ilmr: u64,
    pub dr: u64,
    pub d1mr: u64,
    pub dlmr: u64,
    pub dw: u64,
    pub d1mw: u64,
    pub dlmw: u64,
}

/// Per-function counts of one cachegrind run.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    pub functions: HashMap<String, FunctionCounts>,
    pub description: Vec<String>,
}

impl Profile {
    pub fn function(&self, name: &str) -> FunctionCounts {
        *self.functions.get(name).unwrap_or_else(|| {
            panic!(
                "cachegrind has no function `{name}` (has: {:?})",
                self.functions.keys().collect::<Vec<_>>()
            )
        })
    }
}

/// `--D1=size,ways,line` style argument for a level.
fn level_arg(flag: &str, level: &CacheLevel) -> String {
    format!("--{flag}={},{},{}", level.size, level.ways, level.line)
}

/// Runs `binary args` under cachegrind with the given D1 and LL (I1 fixed at 32 KiB 8-way so
/// cachegrind never auto-detects) and parses the per-function counts.
pub fn run_cachegrind(binary: &Path, args: &[&str], d1: &CacheLevel, ll: &CacheLevel) -> Profile {
    let dir = tempfile::tempdir().expect("temp dir");
    let out_file = dir.path().join("cachegrind.out");
    let output = Command::new("valgrind")
        .args(["--tool=cachegrind", "--cache-sim=yes", "--I1=32768,8,64"])
        .arg(level_arg("D1", d1))
        .arg(level_arg("LL", ll))
        .arg(format!("--cachegrind-out-file={}", out_file.display()))
        .arg(binary)
        .args(args)
        .output()
        .expect("run valgrind");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "cachegrind run failed:\n{stderr}");
    let text = std::fs::read_to_string(&out_file).expect("read cachegrind.out");
    let profile = parse_profile(&text);
    // Cachegrind replaces a geometry it cannot simulate (with a warning); its auto-detection
    // also warns before the command line applies. The `desc:` lines say what it simulated.
    for (name, level) in [("D1", d1), ("LL", ll)] {
        let expected = format!(
            "{name} cache:         {} B, {} B, {}-way associative",
            level.size, level.line, level.ways
        );
        assert!(
            profile.description.contains(&expected),
            "cachegrind did not simulate {expected:?}; it reports {:?}\n{stderr}",
            profile.description
        );
    }
    profile
}

/// Parses a `cachegrind.out` file: `events:` names the columns, `fn=` starts a function,
/// numeric lines are `line count count ...` (trailing zeros may be omitted).
pub fn parse_profile(text: &str) -> Profile {
    let mut profile = Profile::default();
    let mut events: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("events:") {
            events = rest.split_whitespace().map(str::to_string).collect();
        } else if let Some(rest) = line.strip_prefix("desc:") {
            profile.description.push(rest.trim().to_string());
        } else if let Some(name) = line.strip_prefix("fn=") {
            current = Some(name.to_string());
        } else if line.starts_with(|c: char| c.is_ascii_digit()) {
            let Some(name) = &current else { continue };
            let counts = profile.functions.entry(name.clone()).or_default();
            for (event, value) in events.iter().zip(line.split_whitespace().skip(1)) {
                let value: u64 = value.parse().expect("cachegrind count");
                match event.as_str() {
                    "Ir" => counts.ir += value,
                    "ILmr" => counts.ilmr += value,
                    "Dr" => counts.dr += value,
                    "D1mr" => counts.d1mr += value,
                    "DLmr" => counts.dlmr += value,
                    "Dw" => counts.dw += value,
                    "D1mw" => counts.d1mw += value,
                    "DLmw" => counts.dlmw += value,
                    _ => {}
                }
            }
        }
    }
    profile
}

/// A two-level LRU hierarchy like cachegrind's D1 + LL.
pub fn cachegrind_like(d1: &CacheLevel, ll: &CacheLevel) -> Hierarchy {
    Hierarchy::new(&[d1.clone(), ll.clone()], Policy::LRU, false).expect("hierarchy")
}

/// The catalogue kernel `kernel` with `k=v` parameter `words`, its stream fed through a cold
/// cachegrind-like D1 + LL: the simulator's side of every kernel comparison.
pub fn simulate_kernel(
    kernel: &str,
    words: &[(String, String)],
    d1: &CacheLevel,
    ll: &CacheLevel,
) -> (LevelStats, LevelStats) {
    use stridelab::kernels::spec::PrepareOptions;
    use stridelab::kernels::{find, resolve_params};
    let spec = find(kernel).unwrap();
    let params = resolve_params(spec, words).unwrap();
    let mut instance = (spec.prepare)(
        &params,
        &PrepareOptions::with_planner(crate::common::planner()),
    )
    .unwrap();
    let mut hierarchy = cachegrind_like(d1, ll);
    instance.simulate(&mut hierarchy);
    let stats = hierarchy.stats();
    (stats[0], stats[1])
}

/// `"rows=4 cols=5"` as `(key, value)` pairs.
pub fn words(params: &str) -> Vec<(String, String)> {
    params
        .split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("k=v");
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// cachegrind also counts a C function's own stack traffic (return address, saved registers,
/// spills), which always hits: it may count up to `relative` of the simulated accesses plus
/// `absolute` more, never fewer, since the element accesses themselves must all be there.
pub fn accesses_match(cachegrind: u64, simulated: u64, (relative, absolute): (f64, u64)) -> bool {
    cachegrind >= simulated
        && cachegrind - simulated <= (relative * simulated as f64) as u64 + absolute
}

/// One kernel's counts beside cachegrind's, a row per count, each printed as it is compared:
/// loads and stores must match within the stack `slack` ([`accesses_match`]), misses within
/// `tolerance`. Returns the rows that disagree.
pub fn kernel_rows_that_disagree(
    label: &str,
    cg: FunctionCounts,
    (d1, ll): (&LevelStats, &LevelStats),
    slack: (f64, u64),
    tolerance: Tolerance,
) -> Vec<String> {
    let accesses = [
        ("D1 loads (Dr)", cg.dr, d1.loads),
        ("D1 stores (Dw)", cg.dw, d1.stores),
    ];
    let misses = [
        ("D1 load misses", cg.d1mr, d1.load_misses),
        ("D1 store misses", cg.d1mw, d1.store_misses),
        ("LL load misses", cg.dlmr, ll.load_misses),
        ("LL store misses", cg.dlmw, ll.store_misses),
    ];
    let rows = accesses
        .map(|(what, cg, sim)| (what, cg, sim, accesses_match(cg, sim, slack)))
        .into_iter()
        .chain(misses.map(|(what, cg, sim)| (what, cg, sim, within(cg, sim, tolerance))));
    let mut failures = Vec::new();
    for (what, cachegrind, simulated, ok) in rows {
        let line =
            format!("{label:<32} {what:<16} cachegrind {cachegrind:>9} simulated {simulated:>9}");
        eprintln!("{line}");
        if !ok {
            failures.push(line);
        }
    }
    failures
}

/// How far simulator and cachegrind may differ: `relative` of the larger count plus
/// `absolute` (for the whole-process effects described in the module docs).
#[derive(Debug, Clone, Copy)]
pub struct Tolerance {
    pub relative: f64,
    pub absolute: u64,
}

/// Lines outside the kernel that cachegrind sees between two kernel functions: the callee's
/// code lines (I1 misses go to the unified LL), `main`'s code and the stack line of
/// `call`/`ret`. Measured: 4 extra LL sets cascading in `sum_cols` on a 2 MiB LL that the
/// 2 MiB matrix fills exactly.
pub const FOREIGN_LINES: u64 = 8;

/// The default: 0.5 % of the larger count, plus one set's worth of misses (`ways`) and the
/// line itself for each foreign line (see the module docs).
pub fn default_tolerance(ll: &CacheLevel) -> Tolerance {
    Tolerance {
        relative: 0.005,
        absolute: FOREIGN_LINES * (u64::from(ll.ways) + 1),
    }
}

/// Whether two counts agree within `tol`.
pub fn within(cachegrind: u64, simulated: u64, tol: Tolerance) -> bool {
    let allowed = (tol.relative * cachegrind.max(simulated) as f64) as u64 + tol.absolute;
    cachegrind.abs_diff(simulated) <= allowed
}

fn check(what: &str, cachegrind: u64, simulated: u64, tol: Tolerance, failures: &mut Vec<String>) {
    let diff = cachegrind.abs_diff(simulated);
    let allowed = (tol.relative * cachegrind.max(simulated) as f64) as u64 + tol.absolute;
    let line = format!(
        "{what:<22} cachegrind {cachegrind:>9}  simulated {simulated:>9}  diff {diff:>6} (allowed {allowed})"
    );
    eprintln!("  {line}");
    if diff > allowed {
        failures.push(line);
    }
}

/// Compares one function's cachegrind counts with the simulator's D1 and LL stats for the same
/// accesses; panics with a table if any count is out of tolerance. Access counts (Dr, Dw) get
/// only the absolute slack: they show the address sequence itself matches.
pub fn compare(label: &str, cg: FunctionCounts, d1: &LevelStats, ll: &LevelStats, tol: Tolerance) {
    eprintln!("{label}:");
    let mut failures = Vec::new();
    let exact = Tolerance {
        relative: 0.0,
        absolute: 4,
    };
    check("D1 reads (Dr)", cg.dr, d1.loads, exact, &mut failures);
    check("D1 writes (Dw)", cg.dw, d1.stores, exact, &mut failures);
    check(
        "D1 read misses",
        cg.d1mr,
        d1.load_misses,
        tol,
        &mut failures,
    );
    check(
        "D1 write misses",
        cg.d1mw,
        d1.store_misses,
        tol,
        &mut failures,
    );
    check(
        "LL read misses",
        cg.dlmr,
        ll.load_misses,
        tol,
        &mut failures,
    );
    check(
        "LL write misses",
        cg.dlmw,
        ll.store_misses,
        tol,
        &mut failures,
    );
    assert!(
        failures.is_empty(),
        "{label}: simulator and cachegrind disagree:\n{}",
        failures.join("\n")
    );
}
