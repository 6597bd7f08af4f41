//! Simulator throughput: simulated accesses per second for an L1-only LRU hierarchy and for
//! L1+L2 with the 3C classification, on row- and column-order sums of a 512×512 f64 matrix
//! (the first hits L1 7 times in 8, the second misses L1 on every access — the worst case),
//! fed a load at a time through `dyn AccessSink` as most kernels feed it, and a row or column
//! per `load_run` as the sum kernels do (`*-runs`); and on a naive-write transpose of it (a
//! load down a column, a store along a row), a load or store at a time and a column per
//! `move_run` as the transpose kernels do (`transpose-moves`).
//!
//! Targets: ≥ 100 M accesses/s L1-only LRU, ≥ 30 M/s L1+L2 with 3C (figures in
//! `docs/simulator.md`). Geometry: the `design-vm` preset (L1d 48 KiB 12-way, L2 2 MiB 16-way).
//!
//! Two measurements: wall time (criterion's default) and the process's CPU time. The machines
//! this runs on are shared 2-vCPU VMs where other jobs steal the CPU; CPU time discounts the
//! time the threads were not running (cache interference from neighbours still shows). With
//! more than one level, the levels below the first run on a thread of their own: CPU time then
//! counts both threads (the work), wall time the overlap (what a caller waits).
//! Run: `cargo bench --bench simulator`.

use std::hint::black_box;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use stridelab::cache::geometry::Geometry;
use stridelab::cache::sim::{Hierarchy, Policy};
use stridelab::cache::{AccessSink, Walk};

const N: u64 = 512;
const BASE: u64 = 1 << 32;

/// The process's CPU time, every thread's, in nanoseconds (`CLOCK_PROCESS_CPUTIME_ID`).
struct ProcessCpuTime;

static WALL_FORMATTER: WallTime = WallTime;

fn process_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Measurement for ProcessCpuTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        process_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        process_cpu_ns() - start
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        // Nanoseconds, like wall time.
        WALL_FORMATTER.formatter()
    }
}

fn trace(column_order: bool) -> Vec<u64> {
    let mut addrs = Vec::with_capacity((N * N) as usize);
    for outer in 0..N {
        for inner in 0..N {
            let (i, j) = if column_order {
                (inner, outer)
            } else {
                (outer, inner)
            };
            addrs.push(BASE + (i * N + j) * 8);
        }
    }
    addrs
}

/// Through `dyn AccessSink`, as kernels feed the simulator.
fn feed(sink: &mut dyn AccessSink, addrs: &[u64]) {
    for &addr in addrs {
        sink.load(addr, 8);
    }
}

/// The same loads, a row or a column per `load_run`, as the row- and column-sum kernels feed
/// them (the simulator takes a column's whole-line steps as one run per level).
fn feed_runs(sink: &mut dyn AccessSink, column_order: bool) {
    for outer in 0..N {
        if column_order {
            sink.load_run(BASE + outer * 8, (N * 8) as i64, N, 8);
        } else {
            sink.load_run(BASE + outer * N * 8, 8, N, 8);
        }
    }
}

/// A naive-write transpose of the matrix into a second one, `dst[j][i] = src[i][j]` for j,
/// for i: a load down a column, then a store along a row, as `(address, is_store)`.
fn transpose_trace() -> Vec<(u64, bool)> {
    let dst = BASE + 2 * N * N * 8;
    let mut trace = Vec::with_capacity((2 * N * N) as usize);
    for j in 0..N {
        for i in 0..N {
            trace.push((BASE + (i * N + j) * 8, false));
            trace.push((dst + (j * N + i) * 8, true));
        }
    }
    trace
}

/// The transpose a load or store at a time through `dyn AccessSink`.
fn feed_transpose(sink: &mut dyn AccessSink, trace: &[(u64, bool)]) {
    for &(addr, is_store) in trace {
        if is_store {
            sink.store(addr, 8);
        } else {
            sink.load(addr, 8);
        }
    }
}

/// The same transpose, a column per `move_run`, as the transpose kernels feed it.
fn feed_transpose_moves(sink: &mut dyn AccessSink) {
    let dst = BASE + 2 * N * N * 8;
    for j in 0..N {
        let from = Walk {
            addr: BASE + j * 8,
            step: (N * 8) as i64,
        };
        let to = Walk {
            addr: dst + j * N * 8,
            step: 8,
        };
        sink.move_run(from, to, N, 8);
    }
}

fn bench_with<M: Measurement>(c: &mut Criterion<M>, clock: &str) {
    let design = Geometry::preset("design-vm").unwrap().data_levels();
    let mut group = c.benchmark_group(format!("simulator-{clock}"));
    group.throughput(Throughput::Elements(N * N));
    for (order, column) in [("row", false), ("column", true)] {
        let addrs = trace(column);
        let configs = [
            ("l1-lru", &design[..1], false),
            ("l1-l2-lru-3c", &design[..2], true),
        ];
        for (name, levels, classify) in configs {
            let mut sim = Hierarchy::new(levels, Policy::LRU, classify).unwrap();
            group.bench_function(format!("{name}/{order}"), |b| {
                b.iter(|| feed(&mut sim, black_box(&addrs)));
            });
            black_box(sim.stats());
            let mut sim = Hierarchy::new(levels, Policy::LRU, classify).unwrap();
            group.bench_function(format!("{name}/{order}-runs"), |b| {
                b.iter(|| feed_runs(&mut sim, black_box(column)));
            });
            black_box(sim.stats());
        }
    }
    group.throughput(Throughput::Elements(2 * N * N));
    let trace = transpose_trace();
    for (name, levels, classify) in [
        ("l1-lru", &design[..1], false),
        ("l1-l2-lru-3c", &design[..2], true),
    ] {
        let mut sim = Hierarchy::new(levels, Policy::LRU, classify).unwrap();
        group.bench_function(format!("{name}/transpose"), |b| {
            b.iter(|| feed_transpose(&mut sim, black_box(&trace)));
        });
        black_box(sim.stats());
        let mut sim = Hierarchy::new(levels, Policy::LRU, classify).unwrap();
        group.bench_function(format!("{name}/transpose-moves"), |b| {
            b.iter(|| feed_transpose_moves(&mut sim));
        });
        black_box(sim.stats());
    }
    group.finish();
}

fn wall(c: &mut Criterion) {
    bench_with(c, "wall");
}

fn cpu(c: &mut Criterion<ProcessCpuTime>) {
    bench_with(c, "cpu");
}

criterion_group! {
    name = wall_time;
    // Plots need system fonts these machines lack; the numbers are what matter.
    // Short windows keep the whole `cargo bench` under 10 minutes on 2 vCPUs; the figures in
    // `docs/simulator.md` use `-- --warm-up-time 1 --measurement-time 3 cpu` too.
    config = Criterion::default()
        .without_plots()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = wall
}

criterion_group! {
    name = cpu_time;
    config = Criterion::default()
        .without_plots()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3))
        .with_measurement(ProcessCpuTime);
    targets = cpu
}

criterion_main!(wall_time, cpu_time);
