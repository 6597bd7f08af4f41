//! Trace throughput: records per second read, parsed and simulated by `stridelab sim --trace`'s
//! library path (`harness::simulate_trace`), from traces generated in memory so the disk is
//! not measured: 10 M plain records of a strided walk (`R ADDRESS 8`, a step of 24 bytes over
//! 64 MiB), and a lackey trace of 10 M records (instruction fetches between loads, stores and
//! modifies of the same walk, as valgrind writes them). `parse` streams the records to a
//! visitor that only counts them; `simulate` is the whole command's work: parse, the
//! `design-vm` caches (L1d 48 KiB 12-way, L2 2 MiB 16-way) with the 3C split, the busiest-set
//! and step tallies.
//!
//! Target: ≥ 20 M records/s parsed and simulated on a 2-vCPU machine (figures in
//! `docs/simulator.md`, "Traces"). Run: `cargo bench --bench trace`.

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Cursor;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use stridelab::cache::geometry::ChosenGeometry;
use stridelab::cache::sim::{Engine, Policy};
use stridelab::harness::{TraceRequest, simulate_trace};
use stridelab::trace::{TraceInput, TraceOptions, stream_records};

const RECORDS: u64 = 10_000_000;
const BASE: u64 = 1 << 32;

/// The walk's k-th address: 24-byte steps wrapping within 64 MiB.
fn walk(k: u64) -> u64 {
    BASE + (k * 24) % (64 << 20)
}

fn plain_trace() -> Arc<[u8]> {
    let mut text = String::with_capacity(RECORDS as usize * 16);
    for k in 0..RECORDS {
        let _ = writeln!(text, "R {:x} 8", walk(k));
    }
    text.into_bytes().into()
}

/// Lackey's shape: an instruction fetch, then a load, store or modify (every fourth record a
/// store, every eighth a modify), `RECORDS` lines in all.
fn lackey_trace() -> Arc<[u8]> {
    let mut text = String::with_capacity(RECORDS as usize * 16);
    text.push_str("==1== Lackey, an example Valgrind tool\n");
    for k in 0..RECORDS / 2 {
        let _ = writeln!(text, "I  {:08x},4", 0x0400_0000 + (k % 64) * 4);
        let kind = match k % 8 {
            3 | 7 => 'S',
            5 => 'M',
            _ => 'L',
        };
        let _ = writeln!(text, " {kind} {:08x},8", walk(k));
    }
    text.into_bytes().into()
}

fn bench(c: &mut Criterion) {
    let geometry = ChosenGeometry::preset("design-vm").unwrap();
    let mut group = c.benchmark_group("trace");
    group.throughput(Throughput::Elements(RECORDS));
    group.sample_size(10);
    for (name, bytes) in [("plain", plain_trace()), ("lackey", lackey_trace())] {
        group.bench_function(format!("{name}/parse"), |b| {
            b.iter(|| {
                let mut seen = 0u64;
                let summary = stream_records(
                    &mut Cursor::new(Arc::clone(&bytes)),
                    &TraceOptions::default(),
                    |record| seen = seen.wrapping_add(record.addr),
                )
                .unwrap();
                black_box((seen, summary))
            });
        });
        group.bench_function(format!("{name}/simulate"), |b| {
            b.iter(|| {
                let mut input =
                    TraceInput::from_reader(Cursor::new(Arc::clone(&bytes)), name).unwrap();
                let request = TraceRequest {
                    options: TraceOptions::default(),
                    geometry: &geometry,
                    policy: Policy::LRU,
                    engine: Engine::Fast,
                    max_sim_memory: 1 << 30,
                    top_sets: 8,
                    tlb: None,
                    prefetch: None,
                };
                black_box(simulate_trace(&mut input, &request).unwrap())
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = trace;
    // Plots need system fonts these machines lack; the numbers are what matter.
    config = Criterion::default()
        .without_plots()
        .warm_up_time(std::time::Duration::from_secs(2))
        .measurement_time(std::time::Duration::from_secs(12));
    targets = bench
}
criterion_main!(trace);
