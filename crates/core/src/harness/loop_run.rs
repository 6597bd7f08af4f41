//! A user's loop nest (the LOOP language, [`crate::layout::loops`]) as a kernel the harness
//! times and simulates ([`super::custom`]): its innermost runs ([`walk_runs`], the order
//! `sim --loop` simulates) executed through the lab's accessor over real buffers placed where
//! `sim --loop` places them, so the timed stream and the simulated one are the same stream.
//!
//! A one-statement body runs as the accessor's strided runs (`s += a[…]` a sum, `t = x` a
//! move, `t += x` an update, `s += a[…] * b[…]` a dot product), the loops a compiler would
//! vectorise; any other body runs access by access, in the slots' order. The language computes
//! no values: an update stores the value it loaded (an update by zero), an assignment the first
//! value its right side read, so the runs are held to their accesses, not to a checksum.

#![forbid(unsafe_code)]

use serde::Serialize;
use thiserror::Error;

use crate::cache::geometry::CacheLevel;
use crate::harness::custom::{CustomError, Kernel, measure};
use crate::harness::run::runner::MethodOptions;
use crate::kernels::access::{Element, Mem};
use crate::kernels::families::nest_order::NestOrder;
use crate::layout::loops::{LoopError, LoopNest, NestFacts, check};
use crate::results::{SimulatedMisses, Timing};
use crate::vocab::Work;

/// Most bytes the arrays of a timed nest may take together: they are allocated for real.
pub const MAX_NEST_BYTES: u64 = 2 << 30;

/// Why a nest could not be timed.
#[derive(Debug, Error)]
pub enum LoopRunError {
    #[error(transparent)]
    Loop(#[from] LoopError),
    #[error("a timed nest runs f64 or f32 arrays; {array} is {dtype}")]
    Dtype { array: String, dtype: String },
    #[error(
        "the arrays take {bytes} bytes together; a timed nest allocates at most {MAX_NEST_BYTES}"
    )]
    TooLarge { bytes: u64 },
    #[error(transparent)]
    Measure(#[from] CustomError),
}

/// A nest timed and simulated: the same stream behind both numbers.
#[derive(Debug, Clone, Serialize)]
pub struct LoopRunReport {
    /// The loop text and the array declarations, as given.
    pub nest: String,
    pub arrays: Vec<String>,
    /// Each array's first byte in the simulated address space (`sim --loop`'s placement).
    pub bases: Vec<u64>,
    /// Loads and stores of one run (counted).
    pub accesses: u64,
    /// One pinned thread (measured).
    pub timing: Timing,
    /// Median nanoseconds per access (derived).
    pub ns_per_access: f64,
    /// One cold run (simulated, LRU, 3C): the counts `sim --loop` gives for the whole nest.
    pub simulated: SimulatedMisses,
}

/// Checks `nest` (at most `max_accesses` per run, every index in bounds), refuses arrays it
/// cannot allocate before allocating them, then times it with `method` and simulates one run on
/// `levels`.
pub fn run_nest(
    nest: LoopNest,
    levels: &[CacheLevel],
    method: &MethodOptions,
    max_accesses: u64,
) -> Result<LoopRunReport, LoopRunError> {
    let facts = check(&nest, max_accesses)?;
    let bytes = nest
        .arrays
        .iter()
        .map(|a| a.bytes())
        .fold(0u64, u64::saturating_add);
    if bytes > MAX_NEST_BYTES {
        return Err(LoopRunError::TooLarge { bytes });
    }
    let text = nest.text.clone();
    let arrays = nest.arrays.iter().map(|a| a.text.clone()).collect();
    let dtype = nest.arrays.first().map_or("f64", |a| a.dtype);
    let (bases, measured) = match dtype {
        "f64" => timed::<f64>(nest, facts, levels, method)?,
        "f32" => timed::<f32>(nest, facts, levels, method)?,
        other => {
            return Err(LoopRunError::Dtype {
                array: nest.arrays[0].name.clone(),
                dtype: other.to_string(),
            });
        }
    };
    Ok(LoopRunReport {
        nest: text,
        arrays,
        bases,
        accesses: facts.accesses,
        ns_per_access: measured.timing.ns_per_run.median / facts.accesses.max(1) as f64,
        timing: measured.timing,
        simulated: measured.simulated,
    })
}

fn timed<T: Element>(
    nest: LoopNest,
    facts: NestFacts,
    levels: &[CacheLevel],
    method: &MethodOptions,
) -> Result<(Vec<u64>, crate::harness::custom::Measured), LoopRunError> {
    let kernel = NestKernel::<T>::new(nest, facts)?;
    let bases = kernel.0.bases().to_vec();
    Ok((bases, measure(kernel, levels, method)?))
}

/// A checked nest as the harness's own-kernel type: the order is the `loop` kernel's
/// ([`NestOrder`]), its buffers placed where `sim --loop` places them.
#[derive(Debug, Clone)]
pub struct NestKernel<T>(NestOrder<T>);

impl<T: Element> NestKernel<T> {
    /// `nest` (already checked: `facts` are [`crate::layout::loops::check()`]'s) over `T`.
    pub fn new(nest: LoopNest, facts: NestFacts) -> Result<Self, LoopError> {
        NestOrder::new(nest, facts).map(NestKernel)
    }
}

impl<T: Element> Kernel for NestKernel<T> {
    type Elem = T;

    fn buffers(&self) -> Vec<usize> {
        self.0.buffers()
    }

    fn work(&self) -> Work {
        self.0.work()
    }

    fn run<M: Mem<Elem = T>>(&self, m: &mut M) -> f64 {
        self.0.run(m)
    }

    fn checks_checksum(&self) -> bool {
        false
    }

    fn placement(&self) -> Option<Vec<u64>> {
        Some(self.0.bases().to_vec())
    }
}
