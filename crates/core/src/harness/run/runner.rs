//! Measures one point: prepares one instance per pinned thread, warms up, calibrates the runs
//! per sample, then takes samples — the kernel and its references interleaved, all threads
//! running concurrently between two barriers — verifying the checksum after every run.
//!
//! The method, in order (the numbers refer to the steps in [`measure_point`]):
//! 1. every worker prepares its own instances on its own pinned CPU (first touch there);
//! 2. warm-up: batches of doubling size until `warmup` has passed; the last batch gives the
//!    per-run time thread 0 uses to calibrate `runs_per_sample` (a sample lasts ≥ `min_sample`);
//! 3. at least `samples` rounds; in each, the kernel and then every reference run
//!    `runs_per_sample` times on every thread between two barriers; thread 0 times each; more
//!    rounds (up to `max_samples`, within a time budget) while the median's CI is still wider
//!    than `target_relative_ci` — a noisy machine gets more samples, not a vaguer answer;
//! 4. counters (hardware when they open, software always) cover only the kernel's rounds;
//! 5. the samples' precision verdict (CI target met, outliers, drift: `harness::measure::precision`)
//!    goes into the timing, so a point that missed is marked rather than silent.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use crate::harness::measure::pin::PinnedPool;
use crate::harness::measure::precision::precision_of;
use crate::harness::measure::reference::{ReferenceInstance, ReferenceVariant};
use crate::harness::measure::{
    CounterKind, GroupReading, Measurement, PerfGroup, WallTime, group_report,
};
use crate::kernels::spec::{Instance, KernelError, Work};
use crate::results::{
    ChecksumOutcome, ChecksumStatus, CounterReport, PointError, Provenance, ReferenceComparison,
    Timing,
};
use crate::stats::{BootstrapSettings, StatsError, summarize};

/// How every point is measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MethodOptions {
    pub warmup: Duration,
    pub min_sample: Duration,
    /// Minimum number of samples per point.
    pub samples: usize,
    /// More samples are taken (up to this many) while the median's CI is wider than
    /// `target_relative_ci`, within `extra_sampling` time (see the next field).
    pub max_samples: usize,
    pub target_relative_ci: f64,
    pub extra_sampling: Duration,
    /// Cap the extra sampling at the time the minimum samples took (keeps a suite of many
    /// short points quick); off, `extra_sampling` alone bounds it.
    pub extra_sampling_scales_with_minimum: bool,
    pub bootstrap: BootstrapSettings,
    /// Measure the copy/read references interleaved with bandwidth kernels.
    pub references: bool,
    /// Also interleave a read/copy reference of the point's bytes with latency points (probes,
    /// strides, chases), so each of their samples has a paired reference too (the gate's
    /// timing track divides by it; reports show latency points per access instead).
    pub latency_references: bool,
    /// Open perf counter groups around the kernel's samples.
    pub counters: bool,
    pub huge_pages: bool,
}

impl Default for MethodOptions {
    fn default() -> Self {
        Self {
            warmup: Duration::from_millis(10),
            min_sample: Duration::from_millis(5),
            samples: 10,
            max_samples: 40,
            target_relative_ci: 0.02,
            extra_sampling: Duration::from_millis(150),
            extra_sampling_scales_with_minimum: true,
            bootstrap: BootstrapSettings::default(),
            references: true,
            latency_references: false,
            counters: true,
            huge_pages: false,
        }
    }
}

/// What a point's figure is, which decides what the runner derives from its times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// A bandwidth kernel: GB/s plus the same-run ratio to the copy/read reference.
    Bandwidth,
    /// A reference stream itself (copy, read): GB/s, no ratio.
    Reference,
    /// Time per access or element (probes, strides, views, chases): no GB/s.
    Latency,
}

/// Relative tolerance of checksum comparison: kernels sum in a fixed order, so a correct run
/// matches to the last bits; the slack only absorbs an expected value computed in another order.
const CHECKSUM_TOLERANCE: f64 = 1e-9;

pub(crate) fn checksum_ok(actual: f64, expected: f64) -> bool {
    actual == expected || (actual - expected).abs() <= CHECKSUM_TOLERANCE * expected.abs().max(1.0)
}

/// What measuring a point produced (the record is assembled by the caller).
pub struct PointMeasurement {
    pub work: Option<Work>,
    pub checksum: ChecksumStatus,
    pub timing: Option<Timing>,
    pub counters: Option<CounterReport>,
    pub reference: Option<ReferenceComparison>,
    pub error: Option<PointError>,
    /// Thread 0's kernel instance, kept for simulation.
    pub instance: Option<Box<dyn Instance>>,
    /// Set when the stop flag ended the point before its samples were complete.
    pub interrupted: bool,
}

/// A measurable thing on one thread: the kernel or one reference.
struct Subject {
    instance: Box<dyn Instance>,
    expected: f64,
}

impl Subject {
    fn new(instance: Box<dyn Instance>) -> Self {
        let expected = instance.expected_checksum();
        Self { instance, expected }
    }
}

/// State shared by the workers of one point.
struct Shared<'a> {
    /// The stop request (Ctrl-C), polled between single runs so a point stops within one run.
    stop: &'a AtomicBool,
    barrier: Barrier,
    /// Any worker failed to prepare: everyone returns after the first barrier.
    prepare_failed: AtomicBool,
    /// Set by thread 0 before a barrier: stop after it (Ctrl-C or a wrong checksum).
    cancel: AtomicBool,
    mismatch: Mutex<Option<(f64, f64)>>,
    errors: Mutex<Vec<(usize, KernelError)>>,
    /// Runs per sample per subject (kernel first), decided by thread 0 after warm-up.
    runs_per_sample: Vec<AtomicU64>,
    warmup_runs: AtomicU64,
    /// Thread 0's timings per subject: ns per run, one per sample.
    samples: Mutex<Vec<Vec<f64>>>,
    runs_checked: AtomicU64,
}

/// What one worker hands back.
struct WorkerResult {
    kernel: Option<Box<dyn Instance>>,
    hardware: Option<GroupReading>,
    software: Option<GroupReading>,
}

/// How a batch of runs ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Batch {
    Done,
    /// A checksum was wrong (recorded in `shared.mismatch`).
    Mismatch,
    /// The stop flag was seen between two runs: the batch is partial and must not be timed.
    Stopped,
}

/// Runs `subject` `runs` times, checking every checksum and the stop flag between runs.
fn run_checked(subject: &mut Subject, runs: u64, shared: &Shared) -> Batch {
    for done in 0..runs {
        if shared.stop.load(Ordering::Relaxed) {
            shared.runs_checked.fetch_add(done, Ordering::Relaxed);
            return Batch::Stopped;
        }
        let actual = subject.instance.run();
        if !checksum_ok(actual, subject.expected) {
            let mut slot = shared.mismatch.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert((subject.expected, actual));
            return Batch::Mismatch;
        }
    }
    shared.runs_checked.fetch_add(runs, Ordering::Relaxed);
    Batch::Done
}

/// Warm-up in doubling batches until `warmup` has passed; returns (runs, fastest ns per run of
/// a well-timed batch), or None on a checksum mismatch or a stop request.
fn warm_up(subject: &mut Subject, warmup: Duration, shared: &Shared) -> Option<(u64, f64)> {
    let started = Instant::now();
    let mut batch = 1u64;
    let mut total = 0u64;
    // The fastest per-run time of batches long enough to time well: a preempted batch must not
    // shrink the runs per sample below `min_sample` on a quiet machine.
    let mut best = f64::INFINITY;
    loop {
        let mut clock = WallTime;
        let t = clock.start();
        if run_checked(subject, batch, shared) != Batch::Done {
            return None;
        }
        let elapsed = clock.end(t);
        total += batch;
        let per_run = elapsed.as_nanos() as f64 / batch as f64;
        if elapsed >= Duration::from_micros(50) || best.is_infinite() {
            best = best.min(per_run);
        }
        if started.elapsed() >= warmup {
            return Some((total, best));
        }
        batch = batch.saturating_mul(2);
    }
}

/// Whether the kernel's samples already pin the median down to the target CI width (a quick
/// bootstrap; the reported CI is recomputed with the full settings).
fn precise_enough(samples: &[f64], method: &MethodOptions) -> bool {
    let quick = BootstrapSettings {
        resamples: 300,
        ..method.bootstrap
    };
    summarize(samples, quick).is_ok_and(|s| s.relative_ci_width() <= method.target_relative_ci)
}

/// Accumulates a region's reading into a running total.
fn accumulate(total: &mut Option<GroupReading>, reading: GroupReading) {
    match (total.as_mut(), reading) {
        (None, reading) => *total = Some(reading),
        (Some(Err(_)), _) => {}
        (Some(Ok(_)), Err(e)) => *total = Some(Err(e)),
        (Some(Ok(sum)), Ok(values)) => {
            for (name, delta) in values {
                sum.entry(name).or_default().merge(&delta);
            }
        }
    }
}

/// Measures one point on `pool` (one instance per worker). `prepare` is called once on every
/// worker; `stop` is polled between single runs.
pub fn measure_point(
    pool: &PinnedPool,
    prepare: &(dyn Fn() -> Result<Box<dyn Instance>, KernelError> + Sync),
    kind: PointKind,
    method: &MethodOptions,
    stop: &AtomicBool,
) -> PointMeasurement {
    let threads = pool.threads();
    let shared = Shared {
        stop,
        barrier: Barrier::new(threads),
        prepare_failed: AtomicBool::new(false),
        cancel: AtomicBool::new(false),
        mismatch: Mutex::new(None),
        errors: Mutex::new(Vec::new()),
        runs_per_sample: (0..3).map(|_| AtomicU64::new(1)).collect(),
        warmup_runs: AtomicU64::new(0),
        samples: Mutex::new(Vec::new()),
        runs_checked: AtomicU64::new(0),
    };
    let work_slot: Mutex<Option<Work>> = Mutex::new(None);

    let results: Vec<WorkerResult> = pool.broadcast(|thread| {
        // Step 1: prepare on this (pinned) worker.
        let mut subjects = prepare_subjects(thread, prepare, kind, method, &shared, &work_slot);
        let mut counters = WorkerCounters::open(method.counters);
        shared.barrier.wait();
        if shared.prepare_failed.load(Ordering::SeqCst) {
            return WorkerResult {
                kernel: None,
                hardware: None,
                software: None,
            };
        }
        // Step 2: warm-up and calibration.
        warm_up_subjects(thread, &mut subjects, method, &shared);
        // Steps 3 and 4: interleaved samples, counters around the kernel's.
        take_samples(thread, &mut subjects, method, &shared, &mut counters);
        WorkerResult {
            kernel: (thread == 0)
                .then(|| subjects.into_iter().next().map(|s| s.instance))
                .flatten(),
            hardware: counters.hw_total,
            software: counters.sw_total,
        }
    });

    let work = work_slot.into_inner().unwrap_or_else(|p| p.into_inner());
    assemble(shared, work, results, kind, method, threads)
}

/// Step 1 on one worker: its kernel instance and, when the point wants them, its reference
/// streams over the same bytes. Failures are recorded in `shared` (the point then stops).
fn prepare_subjects(
    thread: usize,
    prepare: &(dyn Fn() -> Result<Box<dyn Instance>, KernelError> + Sync),
    kind: PointKind,
    method: &MethodOptions,
    shared: &Shared,
    work_slot: &Mutex<Option<Work>>,
) -> Vec<Subject> {
    let fail = |e: KernelError| {
        shared
            .errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((thread, e));
        shared.prepare_failed.store(true, Ordering::SeqCst);
    };
    let mut subjects: Vec<Subject> = Vec::new();
    match prepare() {
        Ok(instance) => {
            let work = instance.work();
            if thread == 0 {
                *work_slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(work);
            }
            subjects.push(Subject::new(instance));
            let wants_reference = match kind {
                PointKind::Bandwidth => true,
                PointKind::Latency => method.latency_references,
                PointKind::Reference => false,
            };
            if wants_reference && method.references && work.bytes_read > 0 {
                let elements = (work.bytes_read as usize).div_ceil(size_of::<f64>());
                for &variant in ReferenceVariant::for_writing_kernel(work.bytes_written > 0) {
                    match ReferenceInstance::new(variant, elements, method.huge_pages) {
                        Ok(r) => subjects.push(Subject::new(Box::new(r))),
                        Err(e) => fail(e),
                    }
                }
            }
        }
        Err(e) => fail(e),
    }
    subjects
}

/// One worker's counter groups and the readings accumulated over the kernel's samples.
struct WorkerCounters {
    hardware: Option<PerfGroup>,
    software: Option<PerfGroup>,
    hw_total: Option<GroupReading>,
    sw_total: Option<GroupReading>,
}

impl WorkerCounters {
    fn open(counters: bool) -> Self {
        let (hardware, software) = if counters {
            (
                Some(PerfGroup::open(CounterKind::Hardware)),
                Some(PerfGroup::open(CounterKind::Software)),
            )
        } else {
            (None, None)
        };
        Self {
            hardware,
            software,
            hw_total: None,
            sw_total: None,
        }
    }
}

/// Step 2 on one worker: warms every subject up; thread 0 calibrates the runs per sample.
fn warm_up_subjects(
    thread: usize,
    subjects: &mut [Subject],
    method: &MethodOptions,
    shared: &Shared,
) {
    for (index, subject) in subjects.iter_mut().enumerate() {
        match warm_up(subject, method.warmup, shared) {
            Some((runs, ns_per_run)) if thread == 0 => {
                let target = method.min_sample.as_nanos() as f64;
                let runs_per_sample = (target / ns_per_run.max(1.0)).ceil().max(1.0) as u64;
                shared.runs_per_sample[index].store(runs_per_sample, Ordering::SeqCst);
                if index == 0 {
                    shared.warmup_runs.store(runs, Ordering::SeqCst);
                }
            }
            // A mismatch is already recorded, or a stop was requested: thread 0 cancels at
            // the first sample.
            _ => {}
        }
    }
    if thread == 0 {
        let mut samples = shared.samples.lock().unwrap_or_else(|p| p.into_inner());
        *samples = vec![Vec::with_capacity(method.samples); subjects.len()];
    }
}

/// Steps 3 and 4 on one worker: the interleaved sampling rounds, with counters around the
/// kernel's batches only.
fn take_samples(
    thread: usize,
    subjects: &mut [Subject],
    method: &MethodOptions,
    shared: &Shared,
    counters: &mut WorkerCounters,
) {
    let sampling_started = Instant::now();
    let mut minimum_took: Option<Duration> = None;
    for round in 0..method.max_samples.max(method.samples) {
        for (index, subject) in subjects.iter_mut().enumerate() {
            if thread == 0 {
                let cancel = round_cancels(
                    round,
                    index,
                    method,
                    shared,
                    sampling_started,
                    &mut minimum_took,
                );
                shared.cancel.store(cancel, Ordering::SeqCst);
            }
            shared.barrier.wait();
            if shared.cancel.load(Ordering::SeqCst) {
                return;
            }
            let runs = shared.runs_per_sample[index].load(Ordering::SeqCst);
            // Step 4: counters around the kernel only.
            let counting = index == 0;
            let hw_start = counters
                .hardware
                .as_mut()
                .filter(|_| counting)
                .map(|g| g.start());
            let sw_start = counters
                .software
                .as_mut()
                .filter(|_| counting)
                .map(|g| g.start());
            let mut clock = WallTime;
            let t = clock.start();
            let batch = run_checked(subject, runs, shared);
            if let (Some(g), Some(s)) = (counters.software.as_mut(), sw_start) {
                accumulate(&mut counters.sw_total, g.end(s));
            }
            if let (Some(g), Some(s)) = (counters.hardware.as_mut(), hw_start) {
                accumulate(&mut counters.hw_total, g.end(s));
            }
            shared.barrier.wait();
            // A batch cut short by a stop request is not a sample (the next round cancels).
            if thread == 0 && batch != Batch::Stopped {
                let elapsed = clock.end(t);
                let mut samples = shared.samples.lock().unwrap_or_else(|p| p.into_inner());
                samples[index].push(elapsed.as_nanos() as f64 / runs as f64);
            }
        }
    }
}

/// Thread 0's decision before a sample: stop on a mismatch or a stop request, and after the
/// minimum samples once the time budget is spent or the median is precise enough.
fn round_cancels(
    round: usize,
    index: usize,
    method: &MethodOptions,
    shared: &Shared,
    sampling_started: Instant,
    minimum_took: &mut Option<Duration>,
) -> bool {
    let mismatch = shared.mismatch.lock().map(|m| m.is_some()).unwrap_or(true);
    let mut cancel = mismatch || shared.stop.load(Ordering::SeqCst);
    if index == 0 && round >= method.samples {
        let took = *minimum_took.get_or_insert_with(|| sampling_started.elapsed());
        let budget = if method.extra_sampling_scales_with_minimum {
            method.extra_sampling.min(took)
        } else {
            method.extra_sampling
        };
        let samples = shared.samples.lock().unwrap_or_else(|p| p.into_inner());
        // The bootstrap costs O(n log n) per check: check every round
        // at first, then every 32nd (a few percent of the sampling time).
        let check = round < 64 || round.is_multiple_of(32);
        cancel |= sampling_started.elapsed() >= took + budget
            || (check && precise_enough(&samples[0], method));
    }
    cancel
}

/// A point that ended without a timing: `stage` says where, `message` why.
fn unfinished(
    work: Option<Work>,
    checksum: ChecksumStatus,
    stage: &str,
    message: String,
    instance: Option<Box<dyn Instance>>,
    interrupted: bool,
) -> PointMeasurement {
    PointMeasurement {
        work,
        checksum,
        timing: None,
        counters: None,
        reference: None,
        error: Some(PointError {
            stage: stage.into(),
            message,
        }),
        instance,
        interrupted,
    }
}

/// The record from the workers' results: an error at the first stage that failed (prepare,
/// checksum, interrupted, statistics), otherwise timing, references and counters.
fn assemble(
    shared: Shared,
    work: Option<Work>,
    mut results: Vec<WorkerResult>,
    kind: PointKind,
    method: &MethodOptions,
    threads: usize,
) -> PointMeasurement {
    let errors = shared
        .errors
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    let runs_checked = shared.runs_checked.load(Ordering::SeqCst);
    if let Some((thread, e)) = errors.into_iter().next() {
        let not_run = ChecksumStatus {
            status: ChecksumOutcome::NotRun,
            expected: None,
            actual: None,
            runs_checked: 0,
        };
        let message = format!("thread {thread}: {e}");
        return unfinished(work, not_run, "prepare", message, None, false);
    }
    let instance = results.first_mut().and_then(|r| r.kernel.take());
    let expected = instance.as_ref().map(|i| i.expected_checksum());

    if let Some((expected, actual)) = shared
        .mismatch
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
    {
        let mismatch = ChecksumStatus {
            status: ChecksumOutcome::Mismatch,
            expected: Some(expected),
            actual: Some(actual),
            runs_checked,
        };
        let message = format!("wrong result: expected checksum {expected}, got {actual}");
        return unfinished(work, mismatch, "checksum", message, instance, false);
    }

    let samples = shared
        .samples
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    let complete = samples
        .first()
        .is_some_and(|s| s.len() >= method.samples && method.samples > 0);
    let checksum = ChecksumStatus {
        status: ChecksumOutcome::Ok,
        expected,
        actual: expected,
        runs_checked,
    };
    if !complete {
        let message = "stopped before all samples were taken".into();
        return unfinished(work, checksum, "interrupted", message, instance, true);
    }

    let work_value = work.unwrap_or_default();
    let runs_per_sample = shared.runs_per_sample[0].load(Ordering::SeqCst);
    let timing = match timing_of(
        &samples[0],
        kind != PointKind::Latency,
        work_value,
        threads,
        method,
        shared.warmup_runs.load(Ordering::SeqCst),
        runs_per_sample,
    ) {
        Ok(t) => t,
        Err(e) => return unfinished(work, checksum, "statistics", e.to_string(), instance, false),
    };
    let reference = reference_of(&samples[1..], work_value, threads, method, &timing);
    let counters = method.counters.then(|| {
        let runs = runs_per_sample * samples[0].len() as u64;
        let hw: Vec<GroupReading> = results
            .iter_mut()
            .filter_map(|r| r.hardware.take())
            .collect();
        let sw: Vec<GroupReading> = results
            .iter_mut()
            .filter_map(|r| r.software.take())
            .collect();
        CounterReport {
            hardware: group_report(&hw, runs, threads),
            software: group_report(&sw, runs, threads),
        }
    });
    PointMeasurement {
        work,
        checksum,
        timing: Some(timing),
        counters,
        reference,
        error: None,
        instance,
        interrupted: false,
    }
}

/// GB/s (decimal) of `bytes` moved in `ns` nanoseconds.
fn gb_per_s(bytes: u64, ns: f64) -> f64 {
    bytes as f64 / ns
}

pub(crate) fn timing_of(
    samples: &[f64],
    report_bandwidth: bool,
    work: Work,
    threads: usize,
    method: &MethodOptions,
    warmup_runs: u64,
    runs_per_sample: u64,
) -> Result<Timing, StatsError> {
    let summary = summarize(samples, method.bootstrap)?;
    let bytes = if report_bandwidth {
        (work.bytes_read + work.bytes_written) * threads as u64
    } else {
        0
    };
    let elements = work.elements * threads as u64;
    let bandwidth = (bytes > 0).then(|| gb_per_s(bytes, summary.median));
    Ok(Timing {
        source: Provenance::Timed,
        warmup_runs,
        runs_per_sample,
        samples_ns_per_run: samples.to_vec(),
        ns_per_run: summary,
        ns_per_element: summary.median / elements.max(1) as f64,
        gb_per_s: bandwidth,
        gb_per_s_ci: (bytes > 0).then(|| {
            (
                gb_per_s(bytes, summary.ci_high),
                gb_per_s(bytes, summary.ci_low),
            )
        }),
        precision: Some(precision_of(samples, &summary, method.target_relative_ci)),
    })
}

fn reference_of(
    reference_samples: &[Vec<f64>],
    work: Work,
    threads: usize,
    method: &MethodOptions,
    timing: &Timing,
) -> Option<ReferenceComparison> {
    if reference_samples.is_empty() {
        return None;
    }
    let writes = work.bytes_written > 0;
    let variants = ReferenceVariant::for_writing_kernel(writes);
    let elements_bytes = work.bytes_read.div_ceil(8) * 8;
    let moved = elements_bytes * if writes { 2 } else { 1 } * threads as u64;
    let mut measured = std::collections::BTreeMap::new();
    let mut samples_of = std::collections::BTreeMap::new();
    for (variant, samples) in variants.iter().zip(reference_samples) {
        let summary = summarize(samples, method.bootstrap).ok()?;
        measured.insert(variant.name().to_string(), gb_per_s(moved, summary.median));
        samples_of.insert(variant.name().to_string(), samples);
    }
    let (best_variant, best) = measured
        .iter()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(k, v)| (k.clone(), *v))?;
    let best_samples = samples_of
        .get(&best_variant)
        .map_or_else(Vec::new, |s| s.to_vec());
    // A latency point reports no GB/s; its ratio is still the same bytes' time over its own.
    let kernel_gb_per_s = timing.gb_per_s.unwrap_or_else(|| {
        gb_per_s(
            (work.bytes_read + work.bytes_written) * threads as u64,
            timing.ns_per_run.median,
        )
    });
    Some(ReferenceComparison {
        reference: if writes { "copy" } else { "read" }.into(),
        bytes: elements_bytes,
        variants: measured,
        best_variant,
        reference_gb_per_s: best,
        ratio: kernel_gb_per_s / best,
        samples_ns_per_run: best_samples,
    })
}

#[cfg(test)]
pub(crate) mod tests;
