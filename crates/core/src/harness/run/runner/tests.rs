//! Unit tests of `runner.rs`, kept beside it so the module itself stays short.

use super::*;
use crate::cache::AccessSink;

/// A small in-memory kernel for tests: sums a vector; `corrupt_after` runs it lies.
pub(crate) struct SumInstance {
    pub data: Vec<f64>,
    pub runs: u64,
    pub corrupt_after: Option<u64>,
}

impl Instance for SumInstance {
    fn work(&self) -> Work {
        Work {
            bytes_read: 8 * self.data.len() as u64,
            bytes_written: 0,
            elements: self.data.len() as u64,
        }
    }
    fn run(&mut self) -> f64 {
        self.runs += 1;
        let s: f64 = self.data.iter().sum();
        match self.corrupt_after {
            Some(n) if self.runs > n => s + 1.0,
            _ => s,
        }
    }
    fn expected_checksum(&self) -> f64 {
        self.data.len() as f64
    }
    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        for i in 0..self.data.len() as u64 {
            sink.load((1 << 32) + 8 * i, 8);
        }
    }
}

pub(crate) fn fast_method() -> MethodOptions {
    MethodOptions {
        warmup: Duration::from_millis(1),
        min_sample: Duration::from_micros(200),
        samples: 10,
        ..MethodOptions::default()
    }
}

fn sum_kernel(
    corrupt_after: Option<u64>,
) -> impl Fn() -> Result<Box<dyn Instance>, KernelError> + Sync {
    move || {
        Ok(Box::new(SumInstance {
            data: vec![1.0; 4096],
            runs: 0,
            corrupt_after,
        }) as Box<dyn Instance>)
    }
}

#[test]
fn a_correct_kernel_gets_statistics_counters_and_a_same_run_ratio() {
    for threads in 1..=crate::harness::measure::pin::cpu_count().min(2) {
        let pool = PinnedPool::new(threads).unwrap();
        let stop = AtomicBool::new(false);
        let m = measure_point(
            &pool,
            &sum_kernel(None),
            PointKind::Bandwidth,
            &fast_method(),
            &stop,
        );
        assert!(m.error.is_none(), "{:?}", m.error);
        assert_eq!(m.checksum.status, ChecksumOutcome::Ok);
        let timing = m.timing.unwrap();
        assert!((10..=40).contains(&timing.samples_ns_per_run.len()));
        assert!(timing.ns_per_run.min <= timing.ns_per_run.median);
        assert!(timing.gb_per_s.unwrap() > 0.0);
        let reference = m.reference.unwrap();
        assert_eq!(reference.reference, "read");
        assert!(reference.ratio > 0.0);
        let counters = m.counters.unwrap();
        assert!(!counters.software.values.is_empty() || counters.software.reason.is_some());
        assert!(m.instance.is_some());
    }
}

#[test]
fn a_wrong_checksum_is_an_error_row_without_numbers() {
    let pool = PinnedPool::new(1).unwrap();
    let stop = AtomicBool::new(false);
    let m = measure_point(
        &pool,
        &sum_kernel(Some(3)),
        PointKind::Bandwidth,
        &fast_method(),
        &stop,
    );
    assert_eq!(m.checksum.status, ChecksumOutcome::Mismatch);
    assert_eq!(m.checksum.actual, Some(4097.0));
    assert!(m.timing.is_none());
    assert_eq!(m.error.unwrap().stage, "checksum");
}

#[test]
fn a_failing_prepare_is_an_error_row() {
    let pool = PinnedPool::new(1).unwrap();
    let stop = AtomicBool::new(false);
    let prepare = || -> Result<Box<dyn Instance>, KernelError> {
        Err(KernelError::InvalidParam {
            param: "rows".into(),
            message: "zero".into(),
        })
    };
    let m = measure_point(&pool, &prepare, PointKind::Bandwidth, &fast_method(), &stop);
    assert_eq!(m.checksum.status, ChecksumOutcome::NotRun);
    assert_eq!(m.error.unwrap().stage, "prepare");
}

#[test]
fn a_stop_request_ends_the_point_as_interrupted() {
    let pool = PinnedPool::new(1).unwrap();
    let stop = AtomicBool::new(true);
    let m = measure_point(
        &pool,
        &sum_kernel(None),
        PointKind::Bandwidth,
        &fast_method(),
        &stop,
    );
    assert!(m.interrupted);
    assert!(m.timing.is_none());
}
