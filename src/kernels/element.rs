//! Element types and the two inner loops every accessor shares on real memory: the
//! multi-accumulator sum run and the strided move run, written once for any [`Element`].
//!
//! [`crate::kernels::access::RealMem`] (f64, with the copy engine and buffer tables) and
//! [`crate::kernels::typed::TypedReal`] (any element type) both call these, so an f64 kernel
//! and its f32 twin run the same loop, and the f64 loop is the one the gate's baselines timed.

use std::ops::{Add, Mul};

use crate::mem::Plain;

/// Independent accumulators of every summing kernel: enough to keep two FP add pipes with a
/// 3–4 cycle latency busy, so sums are limited by memory, not by one dependent chain.
pub const ACCUMULATORS: usize = 8;

/// A number type kernels can be instantiated with.
pub trait Element:
    Plain + PartialEq + Add<Output = Self> + Mul<Output = Self> + std::fmt::Debug
{
    /// Bytes per element (the simulated access width).
    const BYTES: u32;
    /// The `dtype` word.
    const NAME: &'static str;
    /// `value`, which callers keep small enough to be exact.
    fn from_f64(value: f64) -> Self;
    fn to_f64(self) -> f64;
    /// The elements as f64 when they are f64 (the copy engine moves f64 only).
    fn as_f64s(elements: &mut [Self]) -> Option<&mut [f64]>;
}

impl Element for f64 {
    const BYTES: u32 = 8;
    const NAME: &'static str = "f64";
    fn from_f64(value: f64) -> Self {
        value
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn as_f64s(elements: &mut [Self]) -> Option<&mut [f64]> {
        Some(elements)
    }
}

impl Element for f32 {
    const BYTES: u32 = 4;
    const NAME: &'static str = "f32";
    fn from_f64(value: f64) -> Self {
        value as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn as_f64s(_: &mut [Self]) -> Option<&mut [f64]> {
        None
    }
}

/// The last index of a run, or a panic naming the kernel bug (runs are validated at prepare).
#[inline(always)]
pub(crate) fn run_end(start: usize, step: usize, count: usize) -> usize {
    (count - 1)
        .checked_mul(step)
        .and_then(|span| span.checked_add(start))
        .expect("run validated at prepare time")
}

/// Adds the k-th value of `values`, widened to f64, to `acc[k mod 8]`.
#[inline(always)]
fn accumulate<'v, T: Element>(
    mut values: impl Iterator<Item = &'v T>,
    acc: &mut [f64; ACCUMULATORS],
) {
    loop {
        for slot in acc.iter_mut() {
            match values.next() {
                Some(value) => *slot += value.to_f64(),
                None => return,
            }
        }
    }
}

/// The sum run on real memory: `count` elements of `data` at `start, start+step, …` (`step`
/// may be negative or zero), the k-th added to `acc[k mod 8]`. Bounds are checked once per
/// run, so the compiler vectorises the unit-step case.
#[inline(always)]
pub(crate) fn sum_slice_run<T: Element>(
    data: &[T],
    start: usize,
    step: isize,
    count: usize,
    acc: &mut [f64; ACCUMULATORS],
) {
    if count == 0 {
        return;
    }
    let stride = step.unsigned_abs();
    if step == 1 {
        // Contiguous: whole chunks of 8 lanes, which the compiler vectorises.
        let mut chunks = data[start..start + count].chunks_exact(ACCUMULATORS);
        for chunk in &mut chunks {
            for (slot, value) in acc.iter_mut().zip(chunk) {
                *slot += value.to_f64();
            }
        }
        for (slot, value) in acc.iter_mut().zip(chunks.remainder()) {
            *slot += value.to_f64();
        }
    } else if step > 0 {
        let last = run_end(start, stride, count);
        accumulate(data[start..=last].iter().step_by(stride), acc);
    } else if step < 0 {
        let first = start
            .checked_sub((count - 1) * stride)
            .expect("run validated at prepare time");
        accumulate(data[first..=start].iter().rev().step_by(stride), acc);
    } else {
        accumulate(std::iter::repeat_n(&data[start], count), acc);
    }
}

/// The move run on real memory: for k in 0..count, `destination[dst_start + k·dst_step] =
/// source[src_start + k·src_step]` (both steps ≥ 1).
#[inline(always)]
pub(crate) fn move_slice_run<T: Element>(
    source: &[T],
    (src_start, src_step): (usize, usize),
    destination: &mut [T],
    (dst_start, dst_step): (usize, usize),
    count: usize,
) {
    if count == 0 {
        return;
    }
    assert!(src_step > 0 && dst_step > 0, "move runs go forwards");
    let reads = &source[src_start..=run_end(src_start, src_step, count)];
    let writes = &mut destination[dst_start..=run_end(dst_start, dst_step, count)];
    // The unit-step side as a plain slice iterator: StepBy's bookkeeping is not free.
    if src_step == 1 {
        for (target, value) in writes.iter_mut().step_by(dst_step).zip(reads) {
            *target = *value;
        }
    } else if dst_step == 1 {
        for (target, value) in writes.iter_mut().zip(reads.iter().step_by(src_step)) {
            *target = *value;
        }
    } else {
        let pairs = writes
            .iter_mut()
            .step_by(dst_step)
            .zip(reads.iter().step_by(src_step));
        for (target, value) in pairs {
            *target = *value;
        }
    }
}

/// Buffer `src` for reading and buffer `dst` for writing out of `slots` (they must differ).
pub(crate) fn split_pair<S: std::ops::DerefMut<Target = [T]>, T>(
    slots: &mut [S],
    src: usize,
    dst: usize,
) -> (&[T], &mut [T]) {
    assert_ne!(src, dst, "a copy needs two distinct buffers");
    if src < dst {
        let (low, high) = slots.split_at_mut(dst);
        (&*low[src], &mut *high[0])
    } else {
        let (low, high) = slots.split_at_mut(src);
        (&*high[0], &mut *low[dst])
    }
}
