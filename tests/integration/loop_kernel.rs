//! The `loop` kernel through the real binary: `run --kernel loop` records the misses `sim --loop`
//! simulates for the same nest (and `sim loop` counts them too), bad nests exit 2 naming what is
//! wrong, the `loops` suite runs into a results document whose records read back, and a
//! corrupted loop record is refused on load.

use crate::common;

use std::path::Path;

use common::stridelab_command;
use serde_json::Value;

const PRESET: [&str; 2] = ["--preset", "design-vm"];

/// The counts of one level that must agree between two simulations of one stream.
const COUNTS: [&str; 6] = [
    "loads",
    "stores",
    "misses",
    "compulsory",
    "capacity",
    "conflict",
];

fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    stridelab_command()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run stridelab")
}

fn json_of(out: &std::process::Output, what: &str) -> Value {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn assert_same_counts(got: &Value, want: &Value, what: &str) {
    let (got, want) = (got.as_array().unwrap(), want.as_array().unwrap());
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        for key in COUNTS {
            assert_eq!(g[key], w[key], "{what}: {} {key}", w["name"]);
        }
    }
}

#[test]
fn run_kernel_loop_records_the_misses_sim_loop_simulates() {
    let cases: &[(&str, &[&str])] = &[
        (
            "for i in 0..96: for j in 0..96: a[j, i] += b[i, j]",
            &["a = f64[96, 96] ld=128", "b = f64[96, 96]"],
        ),
        (
            "for j in 0..64: for i in 0..64: s += a[i, j]",
            &["a = f32[64, 64]"],
        ),
        // Triangular, two statements.
        (
            "for i in 0..32: for j in i..32: a[i, j] = a[j, i]; c[i] += a[i, j]",
            &["a = f64[32, 32]", "c = f64[32]"],
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (k, (text, arrays)) in cases.iter().enumerate() {
        let mut sim = vec!["sim", "--loop", text, "--json"];
        for array in *arrays {
            sim.extend(["--array", array]);
        }
        sim.extend(PRESET);
        let want = json_of(&run_in(dir.path(), &sim), text);

        let nest = format!("nest={text}");
        let declared = format!("arrays={}", arrays.join("; "));
        let out = dir.path().join(format!("run{k}.json"));
        let mut run = vec!["run", "--kernel", "loop", &nest, &declared];
        run.extend(PRESET);
        let out_arg = out.to_str().unwrap();
        run.extend([
            "--out",
            out_arg,
            "--no-compare",
            "--quiet",
            "--sampling-budget",
            "0",
        ]);
        let status = run_in(dir.path(), &run);
        assert!(
            status.status.success(),
            "{text}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
        let doc = read_json(&out);
        let record = &doc["records"][0];
        assert_eq!(record["kernel"], "loop", "{text}");
        assert_eq!(record["family"], "loop", "{text}");
        assert_eq!(
            record["params"]["name"], *text,
            "the name defaults to the nest"
        );
        assert_eq!(record["checksum"]["status"], "ok", "{text}");
        assert_eq!(record["work"]["elements"], want["accesses"], "{text}");
        assert!(record["timing"]["ns_per_element"].as_f64().unwrap() > 0.0);
        assert_same_counts(&record["simulated"]["levels"], &want["levels"], text);

        // `sim loop` (the catalogue's simulation, no buffers allocated) counts the same.
        let mut catalogue = vec!["sim", "loop", &nest, &declared, "--json"];
        catalogue.extend(PRESET);
        let got = json_of(&run_in(dir.path(), &catalogue), text);
        assert_same_counts(&got["levels"], &want["levels"], text);
    }
}

#[test]
fn bad_nests_exit_2_naming_what_is_wrong() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &[
                "nest=for i in 0..8: a[i + 1] += b[i]",
                "arrays=a = f64[8]; b = f64[8]",
            ],
            &["parameter `nest`", "a[i + 1]", "leaves its array", "i = 7"],
        ),
        (
            &["nest=for i in 0..8 s += a[i]", "arrays=a = f64[8]"],
            &["parameter `nest`", "column 15", "^"],
        ),
        (
            &["nest=for i in 0..8: s += a[i]", "arrays=a = f64[8"],
            &["parameter `arrays`", "declaration #1", "column"],
        ),
        (
            &[
                "nest=for i in 0..8: a[i] = b[i]",
                "arrays=a = f64[8]; b = f32[8]",
            ],
            &["one element type"],
        ),
        (
            &["nest=for i in 0..8: s += a[i]", "arrays=a = i64[8]"],
            &["f64 or f32"],
        ),
        (
            &[
                "nest=for i in 0..4097: s += a[0]",
                "arrays=a = f64[8]",
                "--max-accesses",
                "4K",
            ],
            &["4097", "more than the limit of 4096"],
        ),
        (&["arrays=a = f64[8]"], &["needs parameter `nest`"]),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (args, needles) in cases {
        let mut all = vec!["run", "--kernel", "loop"];
        all.extend(*args);
        all.push("--quiet");
        let out = run_in(dir.path(), &all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        for needle in *needles {
            assert!(
                stderr.contains(needle),
                "{args:?} lacks `{needle}`: {stderr}"
            );
        }
    }
    // Nothing was measured, so nothing was written.
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn the_loops_suite_runs_into_records_that_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("loops.json");
    let mut args = vec!["run", "--suite", "loops", "--out", out.to_str().unwrap()];
    args.extend(PRESET);
    args.extend(["--no-compare", "--quiet"]);
    let started = std::time::Instant::now();
    let status = run_in(dir.path(), &args);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    let doc = read_json(&out);
    let records = doc["records"].as_array().unwrap();
    let names: Vec<&str> = records
        .iter()
        .map(|r| r["params"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "row-sum",
            "col-sum",
            "transpose-add lda=1024",
            "transpose-add lda=1025",
            "transpose-add lda=1032",
            "transpose-add lda=1040"
        ]
    );
    let level = |name: &str, level: usize, key: &str| {
        let r = records
            .iter()
            .find(|r| r["params"]["name"] == name)
            .unwrap();
        assert_eq!(r["checksum"]["status"], "ok", "{name}");
        assert!(
            r["timing"]["ns_per_element"].as_f64().unwrap() > 0.0,
            "{name}"
        );
        r["simulated"]["levels"][level][key].as_u64().unwrap()
    };
    // Simulated on design-vm: the row order misses once a line, the column order on every
    // access of the 48 KiB L1d; at lda = 1024 the transposed add's column walk conflicts in L2,
    // padded it does not (docs/loops.md).
    assert_eq!(level("row-sum", 0, "misses"), 1024 * 1024 / 8);
    assert_eq!(level("col-sum", 0, "misses"), 1024 * 1024);
    assert!(level("transpose-add lda=1024", 1, "conflict") > 0);
    for ld in [1025, 1032, 1040] {
        assert_eq!(level(&format!("transpose-add lda={ld}"), 1, "conflict"), 0);
    }

    // The document reads back: the report renders it, with a section for the nests whose
    // sentences name them.
    let report = run_in(
        dir.path(),
        &["report", "--in", "loops.json", "--out", "page"],
    );
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("page/index.html")).unwrap();
    assert!(page.contains("<section id=\"loops\">"), "no loops section");
    assert!(dir.path().join("page/fig20-loops.png").exists());
    for claim in [
        "loops.extremes",
        "loops.misses-follow-time",
        "loops.conflicts",
    ] {
        assert!(page.contains(&format!("data-claim=\"{claim}\"")), "{claim}");
    }
    assert!(
        page.contains("transpose-add lda=1024: 917,504 of its"),
        "conflicts unnamed"
    );

    // A loop record whose nest no longer parses, or that claims another family, is refused
    // on load, naming the record.
    type Corrupt = fn(&mut Value);
    let corruptions: &[(&str, Corrupt)] = &[
        ("nest", |r| {
            r["params"]["nest"] = "for i in 0..8 s += a[i]".into()
        }),
        ("arrays", |r| r["params"]["arrays"] = "a = f64[8]; ".into()),
        ("family", |r| r["family"] = "view".into()),
    ];
    for (what, corrupt) in corruptions {
        let mut bad = doc.clone();
        corrupt(&mut bad["records"][1]);
        let path = dir.path().join(format!("bad-{what}.json"));
        std::fs::write(&path, serde_json::to_string(&bad).unwrap()).unwrap();
        let out = run_in(
            dir.path(),
            &[
                "report",
                "--in",
                path.to_str().unwrap(),
                "--out",
                "bad-page",
            ],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        assert!(stderr.contains("records[1]"), "{what}: {stderr}");
    }
}

#[test]
fn a_report_without_loop_records_shows_nothing_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results_small.json");
    let out = run_in(
        dir.path(),
        &["report", "--in", fixture.to_str().unwrap(), "--out", "page"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("page/index.html")).unwrap();
    for absent in ["id=\"loops\"", "loop nests", "fig20"] {
        assert!(
            !page.contains(absent),
            "`{absent}` on a page without loop records"
        );
    }
}
