//! `PrepareOptions::simulate_only`: kernels whose addresses do not depend on their data feed
//! the simulator from no buffers at all (`kernels::address_mem`). Their stream must be exactly
//! the real one (every load and store, address, width and order), for every kernel of the
//! catalogue at its example point and for the address-only families over random shapes.

use proptest::prelude::*;
use stridelab::cache::AccessSink;
use stridelab::kernels::spec::{Instance, PrepareOptions};
use stridelab::kernels::{catalogue, estimate_accesses, find, resolve_params};

/// One access: (is a store, address, bytes).
type Access = (bool, u64, u32);

#[derive(Default)]
struct Recorder(Vec<Access>);

impl AccessSink for Recorder {
    fn load(&mut self, addr: u64, len: u32) {
        self.0.push((false, addr, len));
    }
    fn store(&mut self, addr: u64, len: u32) {
        self.0.push((true, addr, len));
    }
}

fn prepared(kernel: &str, args: &[(String, String)], simulate_only: bool) -> Box<dyn Instance> {
    let spec = find(kernel).unwrap();
    let params = resolve_params(spec, args).unwrap();
    let options = PrepareOptions {
        huge_pages: false,
        simulate_only,
        ..PrepareOptions::with_planner(crate::common::planner())
    };
    (spec.prepare)(&params, &options).unwrap_or_else(|e| panic!("{kernel} {args:?}: {e}"))
}

fn stream(instance: &mut dyn Instance) -> Vec<Access> {
    let mut recorder = Recorder::default();
    instance.simulate(&mut recorder);
    recorder.0
}

/// The real stream and the simulate-only one of `kernel` at `args`.
fn both(kernel: &str, args: &[(&str, String)]) -> (Vec<Access>, Vec<Access>) {
    let args: Vec<(String, String)> = args
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let real = stream(prepared(kernel, &args, false).as_mut());
    let addresses = stream(prepared(kernel, &args, true).as_mut());
    (real, addresses)
}

/// The example words `key=value` of a catalogue entry, as a shell would pass them.
fn example_args(example: &str) -> Vec<(String, String)> {
    crate::common::shell_words(example)
        .into_iter()
        .map(|w| match w.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (String::new(), w),
        })
        .collect()
}

#[test]
fn every_kernel_feeds_its_real_stream_when_prepared_simulate_only() {
    let mut compared = 0;
    for spec in catalogue() {
        let args = example_args(spec.example);
        let params = resolve_params(spec, &args).unwrap();
        if estimate_accesses(spec, &params).unwrap() > 1 << 22 {
            continue;
        }
        let real = stream(prepared(spec.name, &args, false).as_mut());
        let addresses = stream(prepared(spec.name, &args, true).as_mut());
        assert!(!real.is_empty(), "{}", spec.name);
        assert!(real == addresses, "{}: the streams differ", spec.name);
        compared += 1;
        // The same over f32 elements, for every kernel that takes them.
        if spec.params.iter().any(|p| p.name == "dtype") {
            let mut args = args.clone();
            args.retain(|(k, _)| k != "dtype");
            args.push(("dtype".into(), "f32".into()));
            let real = stream(prepared(spec.name, &args, false).as_mut());
            let addresses = stream(prepared(spec.name, &args, true).as_mut());
            assert!(
                real == addresses,
                "{} dtype=f32: the streams differ",
                spec.name
            );
        }
    }
    assert!(compared >= 10, "only {compared} kernels compared");
}

#[test]
fn an_address_only_instance_cannot_pass_for_a_run() {
    for (kernel, words) in [
        ("row-sum", "rows=64 cols=64"),
        ("col-sum", "rows=64 cols=64"),
        ("transpose", "rows=64 cols=64 variant=naive-write"),
        ("stride-sum", "len=4096 stride=3 dtype=f32"),
        ("view-sum", "expr=arange(4096).view(64,64).T"),
    ] {
        let mut instance = prepared(kernel, &example_args(words), true);
        let checksum = instance.run();
        assert!(
            checksum != instance.expected_checksum(),
            "{kernel}: {checksum}"
        );
    }
}

fn shape() -> impl Strategy<Value = (usize, usize, usize)> {
    (1usize..70, 1usize..70, 0usize..9).prop_map(|(rows, cols, pad)| (rows, cols, cols + pad))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn sums_stream_the_same_addresses((rows, cols, ld) in shape()) {
        let dims = [("rows", rows.to_string()), ("cols", cols.to_string()), ("ld", ld.to_string())];
        let (real, addresses) = both("col-sum", &dims);
        prop_assert!(real == addresses);
        let (real, addresses) = both("row-sum", &dims);
        prop_assert!(real == addresses);
    }

    #[test]
    fn transposes_stream_the_same_addresses(
        (rows, cols, ld) in shape(),
        variant in 0usize..4,
        block in 1usize..20,
    ) {
        let name = ["naive-read", "naive-write", "blocked", "fast"][variant];
        let mut args = vec![
            ("rows", rows.to_string()),
            ("cols", cols.to_string()),
            ("ld", ld.to_string()),
            ("variant", name.to_string()),
        ];
        if name == "blocked" {
            args.push(("B", block.to_string()));
        }
        let (real, addresses) = both("transpose", &args);
        prop_assert!(!real.is_empty());
        prop_assert!(real == addresses);
    }
}
