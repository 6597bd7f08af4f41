//! The copy engine: copies any valid strided view into a contiguous (C-order) destination.
//!
//! [`copy_into_contiguous`] is the copy; [`copy_into_contiguous_par`] is the same copy on a
//! rayon pool. Both take a [`Planner`]: the value that picks each copy's schedule from the
//! cache sizes its caller hands in ([`CacheSizes`]; the engine detects no machine) and, when
//! built with wisdom ([`Planner::new`]), measures the schedules of large copies, keeps them
//! in a wisdom file and reports the plans it used ([`Planner::take_events`]). The engine has
//! no global state: two planners share nothing. The [`reference`](mod@reference) module holds
//! plain, non-temporal and read-only streams to normalise bandwidth figures by; [`order`]
//! replays the engine's access order (the same plan, tuning and loop nests) for a cache
//! simulator.
//!
//! ```
//! use stridelab_copy::{CacheSizes, Planner, copy_into_contiguous};
//!
//! let caches = CacheSizes { l1d_bytes: 32 << 10, l2_bytes: 1 << 20, llc_bytes: 32 << 20 };
//! let planner = Planner::analytic(caches);
//! // The transpose of a 2×3 row-major matrix: shape (3, 2), strides (1, 3).
//! let src = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
//! let mut dst = [0.0; 6];
//! copy_into_contiguous(&planner, &src, &[3, 2], &[1, 3], 0, &mut dst).unwrap();
//! assert_eq!(dst, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
//! ```
//!
//! How a copy runs:
//! 1. `validate` checks, once and with 128-bit arithmetic, that every reachable source index
//!    lies inside `src` and that `dst` has the view's element count; an error is returned
//!    before any memory is touched. Everything after relies on these invariants.
//! 2. The plan drops size-1 dims, coalesces dims that are contiguous with each other and
//!    picks the inner kernel: a run along the destination-fast dim, or a 2-D transpose between
//!    the source-fast and destination-fast dims (plus a batch dim when the source rows
//!    continue across one, as in 4-D first/last-dim swaps: such a batch is read a few rows at
//!    a time along all its panels, as long prefetched streams).
//! 3. [`Tuning`] is derived analytically from the planner's cache sizes: destinations larger
//!    than an eighth of the last-level cache are written with non-temporal stores; run copies
//!    then read the source in address order. A planner with wisdom times the candidate
//!    schedules on the first copy of each class of 1 MiB or more, on that copy's own buffers,
//!    and keeps the fastest (`planner.rs`, `trials.rs`), in a wisdom file (`wisdom.rs`) later
//!    processes read.
//! 4. 8-byte plain-data elements (`f64`, `u64`, `i64`) go through the SIMD micro-kernels in
//!    `simd`: an in-register 8×8 transpose (AVX-512, AVX2 as four 4×4, or scalar), either
//!    streamed straight to the destination in whole lines — each block's columns joined with
//!    the previous block's when a destination row starts mid-line (e.g. 4097; one permute on
//!    AVX-512, a few shuffles of the two halves on AVX2),
//!    and swept in L2-sized tiles so destination rows receive runs of lines (a lean kernel
//!    without carry or permutes when every destination row starts a line, as for any N×N
//!    transpose with N a multiple of 8; the source is prefetched into L2 a tile ahead, or, on
//!    one thread beyond the last-level cache, 1 KiB ahead along the walk) — or, without
//!    streaming, staged through an L1-sized buffer so power-of-two leading dimensions cannot
//!    pile into one cache set. The instruction set is the CPU's own (`is_x86_feature_detected`).
//!    Every other element type runs the same loop nest in safe, element-by-element code
//!    (`loops.rs`).
//! 5. Work items (outer index × column panel × batch chunk) write disjoint destination
//!    elements; the parallel variant hands contiguous ranges of them to the pool's threads.
//!
//! All unsafe code is in `loops.rs` (the raw-pointer loop nests) and `simd` (the
//! micro-kernels); every `unsafe fn` has a `# Safety` section and every `unsafe` block a
//! `// SAFETY:` comment (the crate's clippy lints deny them missing).

mod loops;
pub mod order;
mod plan;
mod planner;
pub mod reference;
mod simd;
mod trials;
mod wisdom;

use std::any::TypeId;

use thiserror::Error;

use loops::copy_planned;
pub use plan::CacheSizes;
use plan::Plan;
#[doc(hidden)]
pub use plan::{KernelSet, Tuning};
pub use planner::{PlanEvent, PlanSource, Planner, WisdomChoice};
pub use wisdom::{BadPlan, Machine, Schedule, Trial, WisdomError};

/// Why a copy was refused. The engine checks bounds once, before touching memory.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CopyError {
    #[error("shape has {shape} dims but strides has {strides}")]
    RankMismatch { shape: usize, strides: usize },
    #[error("destination holds {dst} elements but the view has {needed}")]
    DestinationSize { dst: usize, needed: usize },
    #[error("the view reaches storage index {index}, outside a storage of {len} elements")]
    OutOfBounds { index: i128, len: usize },
    #[error("the view's element count overflows usize")]
    Overflow,
}

/// Copies the view `(shape, strides, offset)` of `src` into `dst` in logical C order.
///
/// Strides are in elements and may be negative or zero. `dst.len()` must equal the product of
/// `shape`. Every reachable index is checked against `src.len()` before anything is copied.
/// `f64`, `u64` and `i64` take the SIMD fast path (hence `'static`: the element type is
/// recognised by its `TypeId`); other types are copied correctly, element by element. The
/// schedule is `planner`'s: measured or from its wisdom when it has some and the copy is large,
/// else derived from its cache sizes.
pub fn copy_into_contiguous<T: Copy + 'static>(
    planner: &Planner,
    src: &[T],
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    dst: &mut [T],
) -> Result<(), CopyError> {
    copy_with_planned_tuning(planner, src, shape, strides, offset, dst, None)
}

/// [`copy_into_contiguous`] on the threads of `pool`, which the caller builds (and pins, if it
/// wants pinned threads): the copy runs inside `pool.scope`, split into a few contiguous ranges
/// of work items (transpose panels × batch chunks, or runs) per thread. Element types other
/// than `f64`/`u64`/`i64` are copied on the calling thread.
pub fn copy_into_contiguous_par<T: Copy + Send + Sync + 'static>(
    planner: &Planner,
    src: &[T],
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    dst: &mut [T],
    pool: &rayon::ThreadPool,
) -> Result<(), CopyError> {
    copy_with_planned_tuning(planner, src, shape, strides, offset, dst, Some(pool))
}

/// The body of [`copy_into_contiguous`] (no pool) and [`copy_into_contiguous_par`]: validate,
/// plan the loop nest, take the planner's (or the analytic) tuning, copy.
fn copy_with_planned_tuning<T: Copy + 'static>(
    planner: &Planner,
    src: &[T],
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    dst: &mut [T],
    pool: Option<&rayon::ThreadPool>,
) -> Result<(), CopyError> {
    let needed = validate(src.len(), shape, strides, offset, dst.len())?;
    if needed == 0 {
        return Ok(());
    }
    let plan = Plan::new(shape, strides);
    let tuning = planner.planned_tuning(src, &plan, offset, dst, pool);
    copy_planned(src, &plan, offset, dst, tuning, pool);
    Ok(())
}

/// [`copy_into_contiguous`] with explicit tuning knobs and no planner (for benchmarks and
/// tests that sweep them).
#[doc(hidden)]
pub fn copy_into_contiguous_tuned<T: Copy + Send + Sync + 'static>(
    src: &[T],
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    dst: &mut [T],
    tuning: Tuning,
    pool: Option<&rayon::ThreadPool>,
) -> Result<(), CopyError> {
    let needed = validate(src.len(), shape, strides, offset, dst.len())?;
    if needed == 0 {
        return Ok(());
    }
    let tuning = Tuning {
        panel: tuning.panel.max(8) / 8 * 8,
        tile_rows: tuning.tile_rows.max(8) / 8 * 8,
        batch_rows: tuning.batch_rows.max(8) / 8 * 8,
        ..tuning
    };
    copy_planned(src, &Plan::new(shape, strides), offset, dst, tuning, pool);
    Ok(())
}

/// Checks the view against both buffers and returns its element count.
///
/// Invariants established for the rest of the engine:
/// 1. `shape.len() == strides.len()`;
/// 2. the element count fits in `usize` and equals `dst_len`;
/// 3. if the view is non-empty, `offset + Σ i_k·s_k` lies in `0..src_len` for every index.
fn validate(
    src_len: usize,
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    dst_len: usize,
) -> Result<usize, CopyError> {
    if shape.len() != strides.len() {
        return Err(CopyError::RankMismatch {
            shape: shape.len(),
            strides: strides.len(),
        });
    }
    let needed = shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or(CopyError::Overflow)?;
    if dst_len != needed {
        return Err(CopyError::DestinationSize {
            dst: dst_len,
            needed,
        });
    }
    if needed == 0 {
        return Ok(0);
    }
    // Reachable range: offset plus the most negative and most positive stride contributions.
    // Each term fits in i128 (|n-1| < 2^64, |s| < 2^63); the sums are checked.
    let (mut lo, mut hi) = (offset as i128, offset as i128);
    for (&n, &s) in shape.iter().zip(strides) {
        let span = (n as i128 - 1)
            .checked_mul(s as i128)
            .ok_or(CopyError::Overflow)?;
        if span < 0 {
            lo = lo.checked_add(span).ok_or(CopyError::Overflow)?;
        } else {
            hi = hi.checked_add(span).ok_or(CopyError::Overflow)?;
        }
    }
    if lo < 0 {
        return Err(CopyError::OutOfBounds {
            index: lo,
            len: src_len,
        });
    }
    if hi >= src_len as i128 {
        return Err(CopyError::OutOfBounds {
            index: hi,
            len: src_len,
        });
    }
    Ok(needed)
}

/// True for the element types the SIMD path moves as 8-byte values: no padding, any bit
/// pattern valid.
fn is_plain_eight_byte<T: 'static>() -> bool {
    let id = TypeId::of::<T>();
    id == TypeId::of::<f64>() || id == TypeId::of::<u64>() || id == TypeId::of::<i64>()
}

/// A common x86 core's caches (32 KiB L1d, 1 MiB L2, 32 MiB L3), for unit tests whose
/// schedules need not be this machine's.
#[cfg(test)]
const TEST_CACHES: CacheSizes = CacheSizes {
    l1d_bytes: 32 << 10,
    l2_bytes: 1 << 20,
    llc_bytes: 32 << 20,
};

#[cfg(test)]
mod tests;
