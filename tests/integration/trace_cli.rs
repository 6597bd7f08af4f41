//! `stridelab sim --trace` through the real binary: a lackey trace of a small C program
//! (`tests/fixtures/trace_program.c`) against cachegrind's counts of the same program on the
//! same D1/LL geometry, every kind of bad input refused with exit 2 and a message naming the
//! problem, and the same trace read alike from a file, a gzip file and stdin.
//!
//! The lackey comparison skips with a note when valgrind or gcc is missing (it fails instead
//! under `STRIDELAB_REQUIRE_TOOLS`, as `tests/common` says).

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::cachegrind::{
    compile_fixture, gcc_available, run_cachegrind, valgrind_available,
};
use crate::common::{stridelab, stridelab_command};
use stridelab::cache::geometry::parse_cache_override;

/// The geometry of the comparison: cachegrind's D1 and LL, `sim`'s two levels.
const D1: &str = "L1d=32K,8,64";
const LL: &str = "L2=256K,8,64";

fn sim_json(args: &[&str]) -> Value {
    let out = stridelab(args);
    assert!(
        out.status.success(),
        "sim {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn count(value: &Value, path: &[&str]) -> u64 {
    let mut v = value;
    for key in path {
        v = &v[*key];
    }
    v.as_u64().unwrap_or_else(|| panic!("{path:?} in {value}"))
}

/// Lackey and cachegrind instrument the same program through the same valgrind core, so the
/// data accesses and D1 misses agree exactly (measured: 0 difference, docs/simulator.md,
/// "Traces"); the test allows 0.1% for a valgrind release that splits an access differently.
/// LL misses differ by cachegrind's instruction lines in its unified LL, which the data-only
/// trace cannot see: at most one displaced data line each, so the bound is cachegrind's LL
/// instruction misses (measured difference: 3 of 74,890, against 1,439 such lines).
#[test]
fn a_lackey_trace_counts_like_cachegrind() {
    if !valgrind_available() || !gcc_available() {
        return;
    }
    let program = compile_fixture("trace_program.c", &[]);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("lackey.txt");
    let lackey = Command::new("valgrind")
        .args(["--tool=lackey", "--trace-mem=yes"])
        .arg(format!("--log-file={}", log.display()))
        .arg(&program.binary)
        .output()
        .expect("run lackey");
    assert!(
        lackey.status.success(),
        "{}",
        String::from_utf8_lossy(&lackey.stderr)
    );
    let (d1, ll) = (
        parse_cache_override(D1).unwrap(),
        parse_cache_override(LL).unwrap(),
    );
    let profile = run_cachegrind(&program.binary, &[], &d1, &ll);
    // Lackey traces the whole process (loader, libc, printf): so does the sum of cachegrind's
    // functions.
    let cg = profile.functions.values().fold([0u64; 8], |mut sum, f| {
        let counts = [f.ir, f.ilmr, f.dr, f.dw, f.d1mr, f.d1mw, f.dlmr, f.dlmw];
        for (s, v) in sum.iter_mut().zip(counts) {
            *s += v;
        }
        sum
    });
    let [ir, ilmr, dr, dw, d1mr, d1mw, dlmr, dlmw] = cg;

    let log = log.to_str().unwrap();
    let report = sim_json(&[
        "sim",
        "--trace",
        log,
        "--preset",
        "design-vm",
        "--cache",
        D1,
        "--cache",
        LL,
        "--json",
    ]);
    let l1 = &report["levels"][0];
    let l2 = &report["levels"][1];
    let exact = |cachegrind: u64| cachegrind / 1000;
    let rows = [
        (
            "instruction fetches (Ir)",
            ir,
            count(&report, &["records", "instruction_fetches"]),
            exact(ir),
        ),
        ("D1 loads (Dr)", dr, count(l1, &["loads"]), exact(dr)),
        ("D1 stores (Dw)", dw, count(l1, &["stores"]), exact(dw)),
        (
            "D1 load misses",
            d1mr,
            count(l1, &["load_misses"]),
            exact(d1mr),
        ),
        (
            "D1 store misses",
            d1mw,
            count(l1, &["store_misses"]),
            exact(d1mw),
        ),
        ("LL load misses", dlmr, count(l2, &["load_misses"]), ilmr),
        ("LL store misses", dlmw, count(l2, &["store_misses"]), ilmr),
    ];
    let mut failures = Vec::new();
    for (what, cachegrind, simulated, allowed) in rows {
        let line = format!(
            "{what:<26} cachegrind {cachegrind:>9} sim --trace {simulated:>9} diff {:>5} (allowed {allowed})",
            cachegrind.abs_diff(simulated)
        );
        eprintln!("{line}");
        if cachegrind.abs_diff(simulated) > allowed {
            failures.push(line);
        }
    }
    assert!(
        failures.is_empty(),
        "lackey trace and cachegrind disagree:\n{}",
        failures.join("\n")
    );
    // The fixture's histogram is read-modify-writes: lackey's `M`, counted as loads.
    assert!(count(&report, &["records", "modifies"]) >= 256 * 256);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// What a bad input is, as the file `sim --trace` reads (None: the path names no file).
enum Input {
    Bytes(Vec<u8>),
    Missing,
    Directory,
}

/// Every bad input exits 2 with one `error:` line naming the problem (and its line). The
/// table of what each got is in docs/simulator.md, "Traces".
#[test]
fn bad_traces_exit_2_naming_the_problem() {
    let walk: String = (0..2000)
        .map(|k| format!("R {:x} 8\n", 4096 + k * 64))
        .collect();
    let packed = gzip(walk.as_bytes());
    let garbage: Vec<u8> = (0..3000u32)
        .map(|k| (k.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let cases: Vec<(&str, Input, &[&str], &str)> = vec![
        (
            "plain: bad address",
            Input::Bytes(b"R 10 8\nR zz 8\n".to_vec()),
            &[],
            "line 2 of the trace (plain format): the address is not hexadecimal: `R zz 8`",
        ),
        (
            "lackey: unknown kind",
            Input::Bytes(b"==1== Lackey\n L 10,4\n Q 10,4\n".to_vec()),
            &[],
            "line 3 of the trace (lackey format): it starts with none of I, L, S, M: ` Q 10,4`",
        ),
        (
            "lackey: no size",
            Input::Bytes(b" L 10,4\n S 20\n".to_vec()),
            &[],
            "line 2 of the trace (lackey format): no `,SIZE` after the address: ` S 20`",
        ),
        (
            "din: unknown label",
            Input::Bytes(b"0 10\n7 10\n".to_vec()),
            &[],
            "line 2 of the trace (din format): it starts with none of the din labels 0 to 4: `7 10`",
        ),
        (
            "din: text after the size",
            Input::Bytes(b"0 10 8 9\n".to_vec()),
            &[],
            "line 1 of the trace (din format): unexpected text after the access: `0 10 8 9`",
        ),
        (
            "named format that does not fit",
            Input::Bytes(walk.as_bytes().to_vec()),
            &["--trace-format", "din"],
            "line 1 of the trace (din format): it starts with none of the din labels 0 to 4: `R 1000 8`",
        ),
        (
            "huge size",
            Input::Bytes(b"R 10 8\nW 20 100000\n".to_vec()),
            &[],
            "line 2 of the trace (plain format): size 100000 is outside 1..=4096 bytes",
        ),
        (
            "size of 30 digits",
            Input::Bytes(b"R 10 999999999999999999999999999999\n".to_vec()),
            &[],
            "line 1 of the trace (plain format): the size does not fit in 64 bits",
        ),
        (
            "address over 64 bits",
            Input::Bytes(b"R 1ffffffffffffffff 8\n".to_vec()),
            &[],
            "line 1 of the trace (plain format): the address does not fit in 64 bits",
        ),
        (
            "access past 2^64",
            Input::Bytes(b"R fffffffffffffffc 8\n".to_vec()),
            &[],
            "line 1 of the trace (plain format): the access runs past the top of the 64-bit address space",
        ),
        (
            "truncated gzip",
            Input::Bytes(packed[..packed.len() / 2].to_vec()),
            &[],
            "the trace's gzip stream breaks off after line",
        ),
        (
            "binary garbage",
            Input::Bytes(garbage),
            &[],
            "cannot tell the trace's format from line 1, its first data line",
        ),
        (
            "a line of 10,000 bytes",
            Input::Bytes(vec![0xaa; 10_000]),
            &[],
            "line 1 of the trace is longer than 4096 bytes",
        ),
        (
            "binary first line",
            Input::Bytes(b"\x7fELF\x02\x01\x01\x00\nR 10\n".to_vec()),
            &[],
            "cannot tell the trace's format from line 1, its first data line: `\\u{7f}ELF",
        ),
        (
            "empty file",
            Input::Bytes(Vec::new()),
            &[],
            "the trace has no data accesses to simulate (0 lines",
        ),
        (
            "instruction fetches only",
            Input::Bytes(b"I  0400d7d4,8\nI  0400d7d8,4\n".to_vec()),
            &[],
            "the trace has no data accesses to simulate (2 lines: 2 instruction fetches",
        ),
        ("missing file", Input::Missing, &[], "cannot open the trace"),
        (
            "directory",
            Input::Directory,
            &[],
            "is a directory, not a file",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, (what, input, extra, expected)) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("case{i}.trace"));
        match input {
            Input::Bytes(bytes) => std::fs::write(&path, bytes).unwrap(),
            Input::Missing => {}
            Input::Directory => std::fs::create_dir(&path).unwrap(),
        }
        let mut args = vec![
            "sim",
            "--trace",
            path.to_str().unwrap(),
            "--preset",
            "design-vm",
        ];
        args.extend_from_slice(extra);
        let out = stridelab(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("{what:<32} exit {:?}: {}", out.status.code(), stderr.trim());
        if out.status.code() != Some(2) || !stderr.contains(expected) || stderr.contains("panicked")
        {
            failures.push(format!(
                "{what}: exit {:?}, wanted `{expected}` in:\n{stderr}",
                out.status.code()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn skipped_bad_lines_are_counted_and_the_top_byte_is_simulated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.trace");
    std::fs::write(
        &path,
        "R 10 8\nR zz 8\nW ffffffffffffffff 1\nR fffffffffffffff8 8\n",
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let report = sim_json(&[
        "sim",
        "--trace",
        path,
        "--skip-bad-lines",
        "--preset",
        "design-vm",
        "--json",
    ]);
    assert_eq!(count(&report, &["records", "bad_lines"]), 1);
    assert_eq!(count(&report, &["accesses"]), 3);
    assert_eq!(count(&report["levels"][0], &["misses"]), 2, "{report}");
    let text = stridelab(&[
        "sim",
        "--trace",
        path,
        "--skip-bad-lines",
        "--preset",
        "design-vm",
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("bad lines (skipped)                1"),
        "{text}"
    );
    assert!(text.contains("records read (counted)"), "{text}");
    assert!(text.contains("misses by cause (3C, simulated)"), "{text}");
}

/// The same trace from a file, a gzip file and stdin: the same counts.
#[test]
fn a_file_its_gzip_and_stdin_read_alike() {
    let walk: String = (0..50_000u64)
        .map(|k| format!("R {:x} 8\n", (1 << 32) + k * 4096 % (1 << 22)))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("walk.trace");
    let packed = dir.path().join("walk.trace.gz");
    std::fs::write(&plain, &walk).unwrap();
    std::fs::write(&packed, gzip(walk.as_bytes())).unwrap();
    let geometry = ["--preset", "design-vm", "--json"];
    let read = |path: &str| {
        let mut args = vec!["sim", "--trace", path];
        args.extend(geometry);
        let mut report = sim_json(&args);
        report["trace"] = Value::Null;
        report["compressed"] = Value::Null;
        report
    };
    let from_file = read(plain.to_str().unwrap());
    assert_eq!(from_file, read(packed.to_str().unwrap()));
    let mut child = stridelab_command()
        .args(["sim", "--trace", "-"])
        .args(geometry)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&gzip(walk.as_bytes()))
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let mut from_stdin: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(from_stdin["trace"], "stdin");
    from_stdin["trace"] = Value::Null;
    from_stdin["compressed"] = Value::Null;
    assert_eq!(from_file, from_stdin);
    assert_eq!(count(&from_file, &["records", "loads"]), 50_000);
}

#[test]
fn help_documents_the_trace_flags() {
    let alone = stridelab(&["sim", "col-sum", "rows=8", "cols=8", "--top-sets", "3"]);
    assert_eq!(alone.status.code(), Some(2), "--top-sets without --trace");
    let out = stridelab(&["sim", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--trace <FILE>",
        "--trace-format <FORMAT>",
        "--skip-bad-lines",
        "--top-sets <N>",
        "Streamed",
        "--max-sim-memory",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
}
