//! `stridelab sim … --prefetch on|off` through the real binary, on a preset so nothing depends
//! on this machine: off (the default) prints the same bytes as before the flag existed; on, a
//! tensor summed in storage order is one stream the model covers and its channels-last view
//! keeps 64 interleaved streams, more than the table's 32, that it does not; the reference
//! model agrees with the fast one; `--loop` and `--trace` get the same section; a bad value
//! exits 2.

use crate::common;
use common::stridelab;

use serde_json::Value;

const CONTIGUOUS: &str = "expr=arange(4*64*56*56).view(4,64,56,56)";
const CHANNELS_LAST: &str = "expr=arange(4*64*56*56).view(4,64,56,56).permute(0,2,3,1)";

fn sim(args: &[&str]) -> Vec<u8> {
    let out = stridelab(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn json(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    serde_json::from_slice(&sim(&args)).expect("one JSON object")
}

fn share(part: &Value, whole: &Value) -> f64 {
    part.as_u64().unwrap() as f64 / whole.as_u64().unwrap() as f64
}

#[test]
fn off_is_the_default_and_prints_what_sim_printed_without_it() {
    let base = [
        "sim",
        "view-sum",
        CHANNELS_LAST,
        "dtype=f32",
        "--preset",
        "design-vm",
    ];
    for extra in [&[][..], &["--json"][..]] {
        let plain = sim(&[&base[..], extra].concat());
        let off = sim(&[&base[..], extra, &["--prefetch", "off"][..]].concat());
        assert_eq!(plain, off);
        let text = String::from_utf8_lossy(&plain);
        assert!(!text.contains("prefetch"), "{text}");
    }
}

#[test]
fn one_stream_is_covered_and_64_interleaved_streams_are_not() {
    let on = ["dtype=f32", "--preset", "design-vm", "--prefetch", "on"];
    let contiguous = json(&[&["sim", "view-sum", CONTIGUOUS][..], &on[..]].concat());
    let channels_last = json(&[&["sim", "view-sum", CHANNELS_LAST][..], &on[..]].concat());
    // The simulator alone cannot tell them apart: the same misses at every level.
    for level in 0..2 {
        assert_eq!(
            contiguous["levels"][level]["misses"],
            channels_last["levels"][level]["misses"]
        );
    }
    let (c, p) = (&contiguous["prefetch"], &channels_last["prefetch"]);
    assert_eq!(c["source"], "simulated");
    assert_eq!(c["model"]["name"], "design-vm");
    assert_eq!(
        (&c["fill_level"], &c["stream_entries"]),
        (&Value::from("L2"), &Value::Null)
    );
    assert_eq!(c["model"]["stream_entries"], 32);
    // The model's L2 without prefetch is the simulator's L2 (LRU, no access straddles).
    assert_eq!(c["misses_without"], contiguous["levels"][1]["misses"]);
    assert_eq!(p["misses_without"], channels_last["levels"][1]["misses"]);
    assert_eq!(c["accesses"], contiguous["accesses"]);

    assert_eq!(
        (&c["streams"]["median"], &c["streams"]["max"]),
        (&1.into(), &1.into())
    );
    assert!(
        share(&c["covered_by_stream"], &c["misses_without"]) > 0.9,
        "{c}"
    );
    assert_eq!(p["streams"]["median"], 64);
    assert!(
        share(&p["streams"]["beyond_table"], &p["streams"]["returning"]) > 0.95,
        "{p}"
    );
    assert!(
        share(&p["covered_by_stream"], &p["misses_without"]) < 0.02,
        "{p}"
    );
    assert!(
        p["finding"]
            .as_str()
            .unwrap()
            .starts_with("the walk keeps 64 streams at the median"),
        "{p}"
    );
}

#[test]
fn the_text_section_names_its_parameters_and_the_reference_model_agrees() {
    let base = [
        "sim",
        "view-sum",
        CHANNELS_LAST,
        "dtype=f32",
        "--preset",
        "amd-zen4",
    ];
    let on = [&base[..], &["--prefetch", "on"][..]].concat();
    let text = String::from_utf8(sim(&on)).unwrap();
    for needle in [
        "prefetch model (amd-zen4's parameters) — simulated",
        "fed the misses of L1d",
        "source: AMD Software Optimization Guide",
        "assumed: 32 stream entries",
        "covered by the stream prefetcher",
        "finding: the walk keeps 64 streams at the median",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    let fast = json(&on);
    let reference = json(&[&on[..], &["--engine", "reference"][..]].concat());
    assert_eq!(fast["prefetch"], reference["prefetch"]);
}

#[test]
fn a_loop_and_a_trace_get_the_model_too() {
    let on = ["--preset", "design-vm", "--prefetch", "on"];
    let nest = json(
        &[
            &[
                "sim",
                "--loop",
                "for i in 0..256: for j in 0..512: s += a[i, j]",
            ][..],
            &["--array", "a = f64[256, 512]"][..],
            &on[..],
        ]
        .concat(),
    );
    let p = &nest["prefetch"];
    assert_eq!(p["accesses"], nest["accesses"]);
    assert_eq!(p["misses_without"], nest["levels"][1]["misses"]);
    assert!(
        share(&p["covered_by_stream"], &p["misses_without"]) > 0.9,
        "{p}"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("walk.txt");
    let lines: String = (0..4096u64)
        .map(|k| format!("R {:x} 8\n", (1 << 32) + 64 * k))
        .collect();
    std::fs::write(&path, lines).unwrap();
    let path = path.to_str().unwrap();
    let trace = json(&[&["sim", "--trace", path][..], &on[..]].concat());
    let p = &trace["prefetch"];
    assert_eq!(p["accesses"], 4096);
    assert_eq!(p["misses_without"], trace["levels"][1]["misses"]);
    assert!(share(&p["covered"], &p["misses_without"]) > 0.9, "{p}");
    let text = String::from_utf8(sim(&[&["sim", "--trace", path][..], &on[..]].concat())).unwrap();
    assert!(
        text.contains("prefetch model (design-vm's parameters)"),
        "{text}"
    );
}

#[test]
fn an_unknown_value_exits_2() {
    let out = stridelab(&["sim", "row-sum", "rows=8", "cols=8", "--prefetch", "maybe"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'maybe' for '--prefetch"),
        "{err}"
    );
}
