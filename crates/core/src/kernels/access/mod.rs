//! The accessor every kernel's access order is written against: one trait, [`Mem`], generic
//! over the element type (`f64` or `f32`, [`Element`]), and its three implementations:
//! [`RealMem`] (plain loads and stores on the instance's buffers, for timed runs), [`SimMem`]
//! (the same loads and stores, each also reported to an [`crate::cache::AccessSink`]) and
//! [`AddressMem`] (the same reports without any data, for kernels whose addresses never depend
//! on the values they read, prepared `simulate_only`).
//!
//! A kernel's order is one generic function `fn order<M: Mem>(m: &mut M, ...)` (or
//! `M: Mem<Elem = f64>` where it needs f64 values); `Instance::run` calls it with a `RealMem`,
//! `Instance::simulate` with a `SimMem` or an `AddressMem`, so the timed and the simulated
//! orders cannot drift apart. The simulating accessor reads and writes the real data too, so
//! pointer chases follow the real (seeded) values.
//!
//! Besides single loads and stores, the accessor offers *runs*: a strided walk of `count`
//! elements on one or two [`Strided`] sides ([`Mem::sum_run`], [`Mem::move_run`],
//! [`Mem::dot_run`], [`Mem::axpy_run`]), because per-element bounds checks kept the compiler
//! from vectorising (the generic `row-sum` ran 2.4× slower than a hand-written loop, see
//! `benches/kernels_generic.rs`). Their order is defined once, by the trait's provided methods
//! in terms of `load`/`store` (what the simulating accessors report); `RealMem` overrides them
//! with check-free slice iterators over the same elements in the same order (bounds checked
//! once per run), and property tests show the two agree for every element type. No unsafe
//! code.
//!
//! Simulated placement: element `i` of buffer `b` is at byte address `(b+1)·2^32 + i·BYTES`
//! ([`element_address`]; [`sim_address`] for f64); every access is one element wide, so an f32
//! line holds 16 elements, not 8. Buffers are capped at [`MAX_BUFFER_ELEMENTS`] f64 so no two
//! buffers overlap in that address space.
//!
//! The copy engine (`stridelab_copy`) moves views through [`Mem::copy_view`], with the
//! planner the kernel was prepared with: on real memory the engine itself, simulated its own
//! order replayed (`sim.rs`). One extension serves the jagged kernels: many
//! separately allocated buffers behind a pointer table ([`Buffers`], [`Placement`], see
//! `real.rs` and `sim.rs`).

#![forbid(unsafe_code)]

mod address;
mod real;
mod sim;
#[cfg(test)]
mod tests;

use stridelab_copy::Planner;

pub use crate::kernels::element::{ACCUMULATORS, Element};
pub use address::AddressMem;
pub use real::{Buffers, RealMem};
pub use sim::{Placement, SimMem};

/// Bytes per f64 element: the default element type, and the only one the copy engine's
/// simulated order models.
pub const ELEMENT_BYTES: u32 = 8;

/// The largest buffer a kernel may use (2^29 f64 = 4 GiB): the distance between two buffers in
/// the simulated address space.
pub const MAX_BUFFER_ELEMENTS: usize = 1 << 29;

/// The simulated buffer of the copy engine's L1 stage (kernels use buffers from 0 up).
pub const STAGE_BUFFER: usize = 15;

/// The simulated byte address of element `index` of buffer `buffer` for element type `T`.
#[inline(always)]
pub fn element_address<T: Element>(buffer: usize, index: usize) -> u64 {
    crate::cache::buffer_base(buffer) + index as u64 * u64::from(T::BYTES)
}

/// The simulated byte address of f64 element `index` of buffer `buffer`.
#[inline(always)]
pub fn sim_address(buffer: usize, index: usize) -> u64 {
    element_address::<f64>(buffer, index)
}

/// One side of a run: elements `start, start + step, start + 2·step, …` of `buffer` (`step`
/// in elements; negative or zero only where a run says so). The run's length is given once,
/// beside its sides, so two sides cannot disagree on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strided {
    pub buffer: usize,
    pub start: usize,
    pub step: isize,
}

impl Strided {
    pub const fn new(buffer: usize, start: usize, step: isize) -> Self {
        Self {
            buffer,
            start,
            step,
        }
    }

    /// The index of element `k` of the side.
    #[inline(always)]
    pub fn at(self, k: usize) -> usize {
        (self.start as isize + k as isize * self.step) as usize
    }
}

/// A strided view to copy: element `(i0..in)` at `offset + Σ ik·sk` of the source buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyView<'a> {
    pub shape: &'a [usize],
    pub strides: &'a [isize],
    pub offset: usize,
}

/// Loads and stores of [`Mem::Elem`] elements by (buffer, index), and the runs kernels are
/// written in: the only way kernels touch memory. The provided methods define each run's
/// order; an implementation may override one only with the same accesses in the same order.
///
/// Indices are validated by the kernel at prepare time; an out-of-range index is a bug in the
/// kernel and panics (it is never reachable from user input).
pub trait Mem {
    /// The element type of every buffer.
    type Elem: Element;

    /// Reads element `index` of buffer `buffer`.
    fn load(&mut self, buffer: usize, index: usize) -> Self::Elem;
    /// Writes element `index` of buffer `buffer`.
    fn store(&mut self, buffer: usize, index: usize, value: Self::Elem);

    /// Reads `count` elements of `run` in order (its step may be negative or zero); the k-th,
    /// widened to f64, is added to `acc[k mod 8]`.
    ///
    /// This is the accumulator interleaving of every summing kernel: the address order is the
    /// run's order; only which accumulator receives an element depends on its place in the
    /// run (f64 sums of the small integers kernels store are exact for every element type).
    #[inline(always)]
    fn sum_run(&mut self, run: Strided, count: usize, acc: &mut [f64; ACCUMULATORS]) {
        for k in 0..count {
            acc[k % ACCUMULATORS] += self.load(run.buffer, run.at(k)).to_f64();
        }
    }

    /// Sums elements `0..len` of `buffer`, read in ascending order (the `read` reference): the
    /// order of [`Mem::sum_run`]; `RealMem` sums f64 with the copy engine's reference
    /// `read_sum` (16 accumulators), the same stream the harness normalises by.
    #[inline(always)]
    fn sum_span(&mut self, buffer: usize, len: usize) -> f64 {
        let mut acc = [0.0; ACCUMULATORS];
        self.sum_run(Strided::new(buffer, 0, 1), len, &mut acc);
        acc.iter().sum()
    }

    /// For k in 0..count: reads element k of `from`, then writes it to element k of `to`
    /// (different buffers, steps ≥ 1).
    #[inline(always)]
    fn move_run(&mut self, from: Strided, to: Strided, count: usize) {
        for k in 0..count {
            let value = self.load(from.buffer, from.at(k));
            self.store(to.buffer, to.at(k), value);
        }
    }

    /// The dot product of `count` elements of `a` and `b` (steps ≥ 1): for k ascending, loads
    /// `a`'s k-th element, then `b`'s; the k-th product goes to accumulator `k mod 8` (one
    /// dependent add chain would hide the memory behaviour), summed last in accumulator order.
    #[inline(always)]
    fn dot_run(&mut self, a: Strided, b: Strided, count: usize) -> Self::Elem {
        let mut acc = [Self::Elem::default(); ACCUMULATORS];
        for k in 0..count {
            let x = self.load(a.buffer, a.at(k));
            let y = self.load(b.buffer, b.at(k));
            acc[k % ACCUMULATORS] = acc[k % ACCUMULATORS] + x * y;
        }
        fold(acc)
    }

    /// `y += r · x` over `count` elements (different buffers, steps ≥ 1): for k ascending,
    /// loads `x`'s k-th element, loads `y`'s, stores `y`'s.
    #[inline(always)]
    fn axpy_run(&mut self, x: Strided, y: Strided, count: usize, r: Self::Elem) {
        for k in 0..count {
            let value = self.load(x.buffer, x.at(k));
            let old = self.load(y.buffer, y.at(k));
            self.store(y.buffer, y.at(k), old + r * value);
        }
    }

    /// Copies elements `0..len` of buffer `src` to `0..len` of buffer `dst`: for k ascending,
    /// load `src[k]`, store `dst[k]`. `RealMem` uses the copy engine's `plain_copy` (the
    /// platform `memcpy`), which moves whole vectors over the same lines in the same order.
    #[inline(always)]
    fn copy_span(&mut self, src: usize, dst: usize, len: usize) {
        self.move_run(Strided::new(src, 0, 1), Strided::new(dst, 0, 1), len);
    }

    /// Copies `view` of buffer `src` into `dst[dst_start..]` in logical C order, through the
    /// copy engine with `planner` on real memory. The simulated stream is the engine's own
    /// order with the same planner ([`stridelab_copy::order::engine_order`]: its plan, tuning,
    /// panels, 8×8 blocks and L1 stage, the stage at simulated buffer [`STAGE_BUFFER`]),
    /// without the carried lines of streamed panels and prefetches; non-temporal stores count
    /// as stores. That order is modelled for 8-byte elements: simulating an f32 copy is a
    /// kernel bug.
    fn copy_view(
        &mut self,
        planner: &Planner,
        src: usize,
        view: &CopyView<'_>,
        dst: usize,
        dst_start: usize,
    );
}

/// The accumulators' total, in accumulator order.
#[inline(always)]
pub(crate) fn fold<T: Element>(acc: [T; ACCUMULATORS]) -> T {
    acc.into_iter().fold(T::default(), |sum, x| sum + x)
}

/// One side of an N-d strided copy ([`copy_strided`]): element `(i0..in)` of the copy's shape
/// is element `offset + Σ ik·sk` of `buffer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Side<'a> {
    pub buffer: usize,
    pub strides: &'a [isize],
    pub offset: usize,
}

/// Copies every element of `shape` from side `from` to side `to`, one element at a time in
/// logical C order (last dimension fastest): for each index, load it from `from`, then store
/// it to `to`. An odometer over every dimension but the last, and along the last one run
/// ([`Mem::move_run`] when both inner strides are ≥ 1, else single loads and stores): a
/// framework's generic strided copy, with no blocking, the naive baseline the copy engine
/// ([`Mem::copy_view`]) is set beside. Both sides must have been validated against their
/// buffers, which must differ.
#[inline(always)]
pub fn copy_strided<M: Mem>(m: &mut M, shape: &[usize], from: Side<'_>, to: Side<'_>) {
    if shape.contains(&0) {
        return;
    }
    let Some((&inner, outer)) = shape.split_last() else {
        let value = m.load(from.buffer, from.offset);
        m.store(to.buffer, to.offset, value);
        return;
    };
    let last = outer.len();
    let (from_step, to_step) = (from.strides[last], to.strides[last]);
    let mut counters = vec![0usize; last];
    let (mut read, mut write) = (from.offset as isize, to.offset as isize);
    loop {
        let source = Strided::new(from.buffer, read as usize, from_step);
        let target = Strided::new(to.buffer, write as usize, to_step);
        if from_step >= 1 && to_step >= 1 {
            m.move_run(source, target, inner);
        } else {
            for k in 0..inner {
                let value = m.load(source.buffer, source.at(k));
                m.store(target.buffer, target.at(k), value);
            }
        }
        // Odometer increment over the outer dimensions, the last of them fastest.
        let mut dim = last;
        loop {
            if dim == 0 {
                return;
            }
            dim -= 1;
            counters[dim] += 1;
            read += from.strides[dim];
            write += to.strides[dim];
            if counters[dim] < shape[dim] {
                break;
            }
            read -= from.strides[dim] * shape[dim] as isize;
            write -= to.strides[dim] * shape[dim] as isize;
            counters[dim] = 0;
        }
    }
}

/// Calls `visit` with the storage index of every element of a view, in logical C order (last
/// dimension fastest). The view must have been validated against its storage.
///
/// Always inlined: `view-sum` hands it the closure of its whole run, and out of line (as the
/// compiler chose once six accessors instantiated it) the contiguous 8 MiB view ran slower.
#[inline(always)]
pub fn for_each_view_index(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    mut visit: impl FnMut(usize),
) {
    if shape.contains(&0) {
        return;
    }
    let mut counters = vec![0usize; shape.len()];
    let mut position = offset as isize;
    loop {
        visit(position as usize);
        // Odometer increment, last dimension fastest.
        let mut dim = shape.len();
        loop {
            if dim == 0 {
                return;
            }
            dim -= 1;
            counters[dim] += 1;
            position += strides[dim];
            if counters[dim] < shape[dim] {
                break;
            }
            position -= strides[dim] * shape[dim] as isize;
            counters[dim] = 0;
        }
    }
}
