//! Your own kernel, timed and simulated as the lab's own kernels are: its access order written
//! once against the accessor ([`Mem`]), [`measure`] times it on a pinned thread (warm-up, runs
//! per sample calibrated to the sample length, a bootstrap interval on the median) and feeds the
//! very same order to the cache simulator, so the time and the misses belong to one piece of
//! code. To feed addresses of your own instead, drive [`crate::cache::sim::Hierarchy`] through
//! [`crate::cache::AccessSink`] directly.
//!
//! ```
//! use std::time::Duration;
//!
//! use stridelab_core::cache::geometry::Geometry;
//! use stridelab_core::harness::MethodOptions;
//! use stridelab_core::harness::custom::{Kernel, measure};
//! use stridelab_core::kernels::access::{Mem, Strided};
//! use stridelab_core::vocab::Work;
//!
//! /// Sums a `rows × cols` f64 matrix with leading dimension `ld`, a column at a time.
//! struct ColumnSum { rows: usize, cols: usize, ld: usize }
//!
//! impl Kernel for ColumnSum {
//!     type Elem = f64;
//!     fn buffers(&self) -> Vec<usize> {
//!         vec![self.rows * self.ld]
//!     }
//!     fn work(&self) -> Work {
//!         let elements = (self.rows * self.cols) as u64;
//!         Work { bytes_read: elements * 8, bytes_written: 0, elements }
//!     }
//!     fn run<M: Mem<Elem = f64>>(&self, m: &mut M) -> f64 {
//!         let mut acc = [0.0; stridelab_core::kernels::access::ACCUMULATORS];
//!         for j in 0..self.cols {
//!             let column = Strided::new(0, j, self.ld as isize);
//!             m.sum_run(column, self.rows, &mut acc);
//!         }
//!         acc.iter().sum()
//!     }
//! }
//!
//! let levels = Geometry::preset("design-vm")?.data_levels();
//! // A short measurement for the example; `MethodOptions::default()` is the lab's own.
//! let quick = MethodOptions {
//!     warmup: Duration::from_millis(1),
//!     min_sample: Duration::from_millis(1),
//!     samples: 3,
//!     max_samples: 3,
//!     references: false,
//!     counters: false,
//!     ..MethodOptions::default()
//! };
//! let kernel = ColumnSum { rows: 64, cols: 64, ld: 64 };
//! let measured = measure(kernel, &levels, &quick)?;
//! assert!(measured.timing.ns_per_run.median > 0.0);
//! // 64 columns of 64 rows: every f64 element loaded once.
//! assert_eq!(measured.simulated.levels[0].loads, 64 * 64);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use thiserror::Error;

use crate::cache::AccessSink;
use crate::cache::geometry::CacheLevel;
use crate::cache::sim::SimError;
use crate::harness::measure::pin::{PinError, PinnedPool};
use crate::harness::run::runner::{MethodOptions, PointKind, measure_point};
use crate::harness::sim::simulate::simulate_instance;
use crate::kernels::access::element_address;
use crate::kernels::access::{Element, MAX_BUFFER_ELEMENTS, Mem, Placement, RealMem, SimMem};
use crate::kernels::spec::{Instance, KernelError};
use crate::results::{ChecksumStatus, SimulatedMisses, Timing};
use crate::vocab::Work;

/// Buffers a kernel may ask for: the simulated address space keeps one slot per buffer below
/// the copy engine's staging buffer.
pub const MAX_BUFFERS: usize = crate::kernels::access::STAGE_BUFFER;

/// A kernel of yours: the buffers it works on and one run's access order.
///
/// The lab allocates the buffers (buffer `b` element `i` holds the small integer `i mod 1024`,
/// exact in every element type) and calls [`Kernel::run`] with a real accessor to time it and
/// with a simulating one to count its misses. A run returns a checksum of what it read; every
/// timed run must return the first run's (or [`Kernel::expected_checksum`]'s), so a run that
/// stores must leave the values its next run reads as they were.
pub trait Kernel: Send + Sync + 'static {
    /// The element type of every buffer (f64 or f32).
    type Elem: Element;
    /// The length, in elements, of each buffer the kernel uses (at most [`MAX_BUFFERS`]).
    fn buffers(&self) -> Vec<usize>;
    /// What one run reads, writes and visits: divides the time into per-element figures.
    fn work(&self) -> Work;
    /// One run, written against the accessor; returns a checksum of what it read.
    fn run<M: Mem<Elem = Self::Elem>>(&self, m: &mut M) -> f64;
    /// The checksum a correct run returns, if you know it; otherwise the first run's is held
    /// against every later one.
    fn expected_checksum(&self) -> Option<f64> {
        None
    }
    /// Whether runs are held to a checksum at all: a kernel that computes no values (a loop
    /// nest's accesses, say) says `false`, and its runs' results only keep the compiler from
    /// dropping its loads.
    fn checks_checksum(&self) -> bool {
        true
    }
    /// Each buffer's simulated byte address (default: buffer `b` at `(b+1)·2^32`, as the lab's
    /// kernels are placed), for a kernel whose misses must match another placement's.
    fn placement(&self) -> Option<Vec<u64>> {
        None
    }
}

/// A kernel's timing and its simulated misses, the same order behind both.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Timed on one pinned thread, after a warm-up.
    pub timing: Timing,
    /// Whether every timed run returned the expected checksum (`None`: the kernel checks none).
    pub checksum: Option<ChecksumStatus>,
    /// One cold run simulated on the levels given (LRU, with the 3C split).
    pub simulated: SimulatedMisses,
}

/// Why a kernel could not be measured.
#[derive(Debug, Error)]
pub enum CustomError {
    #[error("the kernel's buffers: {0}")]
    Buffers(String),
    #[error("pinning the timing thread")]
    Pin(#[from] PinError),
    #[error("timing the kernel: {0}")]
    Timing(String),
    #[error("simulating the kernel")]
    Simulation(#[from] SimError),
}

/// Accesses one simulated run may make before the simulation stops (the lab's own cap).
const SIMULATION_CAP: u64 = crate::harness::suite::DEFAULT_MAX_ACCESSES_PER_RUN;

/// Times `kernel` on one pinned thread with `method`, then simulates one cold run of it on
/// `levels` (innermost first). Buffers are checked before anything is allocated.
pub fn measure<K: Kernel>(
    kernel: K,
    levels: &[CacheLevel],
    method: &MethodOptions,
) -> Result<Measured, CustomError> {
    let lengths = kernel.buffers();
    check_buffers(&lengths)?;
    if let Some(bases) = kernel.placement()
        && bases.len() != lengths.len()
    {
        return Err(CustomError::Buffers(format!(
            "{} buffers but {} placed",
            lengths.len(),
            bases.len()
        )));
    }
    let checks = kernel.checks_checksum();
    let kernel = Arc::new(kernel);
    let pool = PinnedPool::new(1)?;
    let prepare = || -> Result<Box<dyn Instance>, KernelError> {
        Ok(Box::new(Own::new(Arc::clone(&kernel))))
    };
    let never_stopped = AtomicBool::new(false);
    let measurement = measure_point(&pool, &prepare, PointKind::Latency, method, &never_stopped);
    if let Some(error) = measurement.error {
        return Err(CustomError::Timing(error.message));
    }
    let (Some(timing), Some(mut instance)) = (measurement.timing, measurement.instance) else {
        return Err(CustomError::Timing("no sample was taken".into()));
    };
    let budget = Duration::from_secs(30);
    let simulated = simulate_instance(&mut *instance, levels, SIMULATION_CAP, budget, 1)?;
    Ok(Measured {
        timing,
        checksum: checks.then_some(measurement.checksum),
        simulated,
    })
}

/// At most [`MAX_BUFFERS`] buffers of at most [`MAX_BUFFER_ELEMENTS`] elements each.
fn check_buffers(lengths: &[usize]) -> Result<(), CustomError> {
    if lengths.len() > MAX_BUFFERS {
        return Err(CustomError::Buffers(format!(
            "{} buffers asked for; at most {MAX_BUFFERS}",
            lengths.len()
        )));
    }
    if let Some((b, n)) = lengths
        .iter()
        .enumerate()
        .find(|(_, n)| **n > MAX_BUFFER_ELEMENTS)
    {
        return Err(CustomError::Buffers(format!(
            "buffer {b} has {n} elements; at most {MAX_BUFFER_ELEMENTS}"
        )));
    }
    Ok(())
}

/// A user's kernel as the harness runs it: its buffers, where the simulator places them, and
/// the checksum every run is held to.
struct Own<K: Kernel> {
    kernel: Arc<K>,
    buffers: Vec<Box<[K::Elem]>>,
    placement: Placement,
    expected: f64,
    checked: bool,
}

impl<K: Kernel> Own<K> {
    fn new(kernel: Arc<K>) -> Self {
        let lengths = kernel.buffers();
        let mut buffers: Vec<Box<[K::Elem]>> = lengths
            .iter()
            .map(|&n| {
                (0..n)
                    .map(|i| K::Elem::from_f64((i % 1024) as f64))
                    .collect()
            })
            .collect();
        let bases = kernel.placement().unwrap_or_else(|| {
            (0..lengths.len())
                .map(|b| element_address::<K::Elem>(b, 0))
                .collect()
        });
        let placement = Placement { bases, table: None };
        let expected = match kernel.expected_checksum() {
            Some(expected) => expected,
            None => kernel.run(&mut RealMem::table(&mut buffers)),
        };
        Own {
            checked: kernel.checks_checksum(),
            kernel,
            buffers,
            placement,
            expected,
        }
    }
}

impl<K: Kernel> Instance for Own<K> {
    fn work(&self) -> Work {
        self.kernel.work()
    }

    fn run(&mut self) -> f64 {
        let value = self.kernel.run(&mut RealMem::table(&mut self.buffers));
        if self.checked {
            value
        } else {
            // Nothing to check: the value only has to be used, so its loads stay.
            std::hint::black_box(value);
            self.expected
        }
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let mut mem = SimMem::placed(&mut self.buffers, sink, &self.placement);
        self.kernel.run(&mut mem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_or_too_large_buffers_are_refused_before_allocating() {
        let many = vec![1; MAX_BUFFERS + 1];
        assert!(
            check_buffers(&many)
                .unwrap_err()
                .to_string()
                .contains("at most")
        );
        let huge = [8, MAX_BUFFER_ELEMENTS + 1];
        let err = check_buffers(&huge).unwrap_err().to_string();
        assert!(err.contains("buffer 1"), "{err}");
        assert!(check_buffers(&[8, MAX_BUFFER_ELEMENTS]).is_ok());
    }
}
