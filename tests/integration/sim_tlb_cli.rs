//! `stridelab sim … --tlb 4k|2m|off` through the real binary, on presets so the counts do not
//! depend on this machine: a column walk's TLB counts derived by hand at both page sizes, the
//! caches' numbers untouched by the TLB beside them, `--tlb off` byte-identical to no flag for
//! kernels, loops and traces, a trace's straddling access, and bad input exiting 2.

use crate::common;
use common::stridelab;

use serde_json::Value;

const COL_SUM: [&str; 5] = ["sim", "col-sum", "rows=1024", "cols=1024", "--preset"];
const LOOP: [&str; 7] = [
    "sim",
    "--loop",
    "for i in 0..1024: for j in 0..1024: a[j, i] += b[i, j]",
    "--array",
    "a = f64[1024, 1024]",
    "--array",
    "b = f64[1024, 1024]",
];

fn run(args: &[&str]) -> (String, String) {
    let out = stridelab(args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?}: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

fn json(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    serde_json::from_str(&run(&args).0).expect("one JSON object")
}

fn level(report: &Value, k: usize, key: &str) -> u64 {
    report["tlb"]["levels"][k][key].as_u64().unwrap()
}

fn with(base: &[&str], extra: &[&str]) -> Vec<String> {
    base.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn strs(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

#[test]
fn a_column_walk_misses_the_l1_dtlb_on_every_access_with_4k_pages_and_4_times_with_2m() {
    let small = with(&COL_SUM, &["design-vm", "--tlb", "4k"]);
    let report = json(&strs(&small));
    let m = 1024 * 1024;
    assert_eq!(report["tlb"]["source"], "simulated");
    assert_eq!(report["tlb"]["accesses"], m);
    // 8 KiB rows: every load on another 4 KiB page, 2048 pages in all (4 of 2 MiB); a
    // column's 1024 pages fall in 8 of the 64-entry 4-way L1 DTLB's 16 sets (128 pages to 4
    // ways): every load misses it; in the 2048-entry 16-way STLB, 16 pages per set fit, so
    // only first touches walk.
    assert_eq!(
        (level(&report, 0, "lookups"), level(&report, 0, "misses")),
        (m, m)
    );
    assert_eq!(
        (level(&report, 1, "lookups"), level(&report, 1, "misses")),
        (m, 2048)
    );
    assert_eq!(
        (
            report["tlb"]["pages"].as_u64(),
            report["tlb"]["other_pages"].as_u64()
        ),
        (Some(2048), Some(4))
    );
    assert_eq!(report["tlb"]["page_changes"], m);
    let huge = with(&COL_SUM, &["design-vm", "--tlb", "2m"]);
    let report_2m = json(&strs(&huge));
    assert_eq!(
        (
            level(&report_2m, 0, "misses"),
            level(&report_2m, 1, "misses")
        ),
        (4, 4)
    );
    assert_eq!(report_2m["tlb"]["levels"][0]["entries"], 32);
    // The caches' counts are the same with and without the TLB beside them.
    let plain = json(&strs(&with(&COL_SUM, &["design-vm"])));
    assert_eq!(report["levels"], plain["levels"]);
    assert!(plain.get("tlb").is_none());

    let (text, _) = run(&strs(&small));
    assert!(
        text.contains(
            "data TLB (simulated, 4 KiB pages, LRU; levels: the design-vm preset's TLB table)"
        ),
        "{text}"
    );
    assert!(text.contains("touches 2,048 pages in all, more than the L1 DTLB's 64 entries: with 2 MiB pages it would touch 4"), "{text}");
    assert!(
        text.contains("1,048,576 of 1,048,576 accesses miss the L1 DTLB (100.0%)"),
        "{text}"
    );
}

#[test]
fn tlb_off_prints_the_same_bytes_as_no_flag() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    std::fs::write(&trace, "R 1000 8\nR 1ffc 8\nW 1008 8\n").unwrap();
    let trace = trace.to_str().unwrap();
    let kernel = with(&COL_SUM, &["amd-zen4"]);
    let nest = with(&LOOP, &["--preset", "amd-zen4"]);
    let traced = with(&["sim", "--trace", trace, "--preset", "amd-zen4"], &[]);
    for base in [kernel, nest, traced] {
        for json_flag in [&[][..], &["--json"][..]] {
            let plain = with(&strs(&base), json_flag);
            let off = with(&strs(&plain), &["--tlb", "off"]);
            assert_eq!(run(&strs(&plain)).0, run(&strs(&off)).0, "{base:?}");
        }
    }
}

#[test]
fn loops_and_traces_get_the_tlb_too() {
    let nest = json(&strs(&with(
        &LOOP,
        &["--preset", "amd-zen4", "--tlb", "4k"],
    )));
    assert_eq!(nest["tlb"]["accesses"], 3 * 1024 * 1024);
    // Zen 4's fully associative 72-entry L1 DTLB: every column access of `a` (stride 8 KiB)
    // misses once the 1024 rows' pages exceed 72; the row walk of `b` misses once per page.
    assert_eq!(nest["tlb"]["levels"][0]["ways"], 72);
    assert!(level(&nest, 0, "misses") >= 1024 * 1024, "{}", nest["tlb"]);

    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.txt");
    // Page 1, then 8 bytes from 0x1ffc (pages 1 and 2: page 2 misses), then page 1 again.
    std::fs::write(&trace, "R 1000 8\nR 1ffc 8\nW 1008 8\n").unwrap();
    let args = [
        "sim",
        "--trace",
        trace.to_str().unwrap(),
        "--preset",
        "design-vm",
        "--tlb",
        "4k",
    ];
    let report = json(&args);
    assert_eq!(
        (level(&report, 0, "lookups"), level(&report, 0, "misses")),
        (3, 2)
    );
    assert_eq!(
        (level(&report, 1, "lookups"), level(&report, 1, "misses")),
        (2, 2)
    );
    assert_eq!(report["tlb"]["pages"], 2);
    let (text, _) = run(&args);
    assert!(text.contains("data TLB (simulated, 4 KiB pages"), "{text}");
}

#[test]
fn bad_tlb_input_exits_2_with_a_message() {
    for (args, says) in [
        (
            with(&COL_SUM, &["design-vm", "--tlb", "1g"]),
            "invalid value '1g'",
        ),
        (
            with(&COL_SUM, &["apple-m1-firestorm", "--tlb", "4k"]),
            "has no data TLB table: its pages are 16 KiB",
        ),
    ] {
        let out = stridelab(&strs(&args));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}
