//! [`RealMem`]: the accessor of timed runs, plain loads and stores on real buffers, its runs
//! overridden with check-free slice iterators over the same elements in the same order as
//! [`Mem`]'s provided methods (bounds checked once per run, so the compiler vectorises the
//! unit-step cases), and its copies through the copy engine.
//!
//! The buffers are a fixed array of slices (most kernels) or a slice of separately allocated
//! buffers (`&mut [Box<[T]>]`, a jagged array's rows: reaching buffer `b` then reads its entry,
//! pointer and length, from that table, as the real code does).

#![forbid(unsafe_code)]

use std::ops::{DerefMut, RangeInclusive};

use stridelab_copy::reference::{plain_copy, read_sum};
use stridelab_copy::{CopyError, Planner, copy_into_contiguous};

use super::{ACCUMULATORS, CopyView, Element, Mem, Strided, fold};

/// The buffers an accessor works on, numbered from 0: a fixed array of slices or a table of
/// separately allocated buffers.
pub trait Buffers {
    type Elem: Element;
    type Buffer: DerefMut<Target = [Self::Elem]>;
    fn slots(&self) -> &[Self::Buffer];
    fn slots_mut(&mut self) -> &mut [Self::Buffer];
}

impl<'a, T: Element, const N: usize> Buffers for [&'a mut [T]; N] {
    type Elem = T;
    type Buffer = &'a mut [T];
    #[inline(always)]
    fn slots(&self) -> &[Self::Buffer] {
        self
    }
    #[inline(always)]
    fn slots_mut(&mut self) -> &mut [Self::Buffer] {
        self
    }
}

impl<T: Element> Buffers for &mut [Box<[T]>] {
    type Elem = T;
    type Buffer = Box<[T]>;
    #[inline(always)]
    fn slots(&self) -> &[Self::Buffer] {
        self
    }
    #[inline(always)]
    fn slots_mut(&mut self) -> &mut [Self::Buffer] {
        self
    }
}

/// Plain accesses on real buffers (`[&mut [T]; N]` or a table of boxed buffers).
pub struct RealMem<B: Buffers> {
    buffers: B,
}

impl<'a, T: Element, const N: usize> RealMem<[&'a mut [T]; N]> {
    pub fn new(buffers: [&'a mut [T]; N]) -> Self {
        Self { buffers }
    }
}

impl<'t, T: Element> RealMem<&'t mut [Box<[T]>]> {
    /// Separately allocated buffers, reached through their table (`buffers`).
    pub fn table(buffers: &'t mut [Box<[T]>]) -> Self {
        Self { buffers }
    }
}

impl<B: Buffers> RealMem<B> {
    /// Buffer `buffer`'s elements.
    #[inline(always)]
    pub(super) fn data(&self, buffer: usize) -> &[B::Elem] {
        &self.buffers.slots()[buffer]
    }

    /// Buffer `src` for reading and buffer `dst` for writing (they must differ).
    #[inline(always)]
    fn pair(&mut self, src: usize, dst: usize) -> (&[B::Elem], &mut [B::Elem]) {
        let slots = self.buffers.slots_mut();
        assert_ne!(src, dst, "a run that writes needs two distinct buffers");
        if src < dst {
            let (low, high) = slots.split_at_mut(dst);
            (&*low[src], &mut *high[0])
        } else {
            let (low, high) = slots.split_at_mut(src);
            (&*high[0], &mut *low[dst])
        }
    }
}

impl<B: Buffers> Mem for RealMem<B> {
    type Elem = B::Elem;

    #[inline(always)]
    fn load(&mut self, buffer: usize, index: usize) -> B::Elem {
        self.data(buffer)[index]
    }

    #[inline(always)]
    fn store(&mut self, buffer: usize, index: usize, value: B::Elem) {
        self.buffers.slots_mut()[buffer][index] = value;
    }

    #[inline(always)]
    fn sum_run(&mut self, run: Strided, count: usize, acc: &mut [f64; ACCUMULATORS]) {
        sum_slice_run(self.data(run.buffer), run, count, acc);
    }

    #[inline(always)]
    fn sum_span(&mut self, buffer: usize, len: usize) -> f64 {
        let data = &self.data(buffer)[..len];
        match B::Elem::as_f64s(data) {
            Some(f64s) => read_sum(f64s),
            None => {
                let mut acc = [0.0; ACCUMULATORS];
                sum_slice_run(data, Strided::new(buffer, 0, 1), len, &mut acc);
                acc.iter().sum()
            }
        }
    }

    #[inline(always)]
    fn move_run(&mut self, from: Strided, to: Strided, count: usize) {
        if count == 0 {
            return;
        }
        let (source, destination) = self.pair(from.buffer, to.buffer);
        let (reads, src_step) = forward(from, count);
        let (writes, dst_step) = forward(to, count);
        let (reads, writes) = (&source[reads], &mut destination[writes]);
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

    #[inline(always)]
    fn dot_run(&mut self, a: Strided, b: Strided, count: usize) -> B::Elem {
        let mut acc = [B::Elem::default(); ACCUMULATORS];
        if count == 0 {
            return fold(acc);
        }
        let ((xs, a_step), (ys, b_step)) = (forward(a, count), forward(b, count));
        let xs = &self.data(a.buffer)[xs];
        let ys = &self.data(b.buffer)[ys];
        let mut pairs = xs.iter().step_by(a_step).zip(ys.iter().step_by(b_step));
        'all: loop {
            for slot in acc.iter_mut() {
                match pairs.next() {
                    Some((&x, &y)) => *slot = *slot + x * y,
                    None => break 'all,
                }
            }
        }
        fold(acc)
    }

    #[inline(always)]
    fn axpy_run(&mut self, x: Strided, y: Strided, count: usize, r: B::Elem) {
        if count == 0 {
            return;
        }
        let (xs, ys) = self.pair(x.buffer, y.buffer);
        let ((x_span, x_step), (y_span, y_step)) = (forward(x, count), forward(y, count));
        let (xs, ys) = (&xs[x_span], &mut ys[y_span]);
        // Unit steps as plain slices, so the compiler vectorises the row-wise orders.
        if x_step == 1 && y_step == 1 {
            for (target, &value) in ys.iter_mut().zip(xs) {
                *target = *target + r * value;
            }
        } else {
            let pairs = ys.iter_mut().step_by(y_step).zip(xs.iter().step_by(x_step));
            for (target, &value) in pairs {
                *target = *target + r * value;
            }
        }
    }

    fn copy_span(&mut self, src: usize, dst: usize, len: usize) {
        let (source, destination) = self.pair(src, dst);
        plain_copy(&source[..len], &mut destination[..len]);
    }

    fn copy_view(
        &mut self,
        planner: &Planner,
        src: usize,
        view: &CopyView<'_>,
        dst: usize,
        dst_start: usize,
    ) {
        let (source, destination) = self.pair(src, dst);
        let len = view.shape.iter().product::<usize>();
        copy_into_contiguous(
            planner,
            source,
            view.shape,
            view.strides,
            view.offset,
            &mut destination[dst_start..dst_start + len],
        )
        .unwrap_or_else(|err: CopyError| panic!("copy view validated at prepare time: {err}"));
    }
}

/// The indices a forward run of `count` ≥ 1 elements covers, first to last, and its step; a
/// panic naming the kernel bug when it does not go forwards or overflows (runs are validated
/// at prepare).
#[inline(always)]
fn forward(side: Strided, count: usize) -> (RangeInclusive<usize>, usize) {
    let step = usize::try_from(side.step)
        .ok()
        .filter(|&step| step > 0)
        .expect("this run goes forwards");
    (side.start..=run_end(side.start, step, count), step)
}

/// The last index of a forward run, or a panic naming the kernel bug.
#[inline(always)]
fn run_end(start: usize, step: usize, count: usize) -> usize {
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

/// [`Mem::sum_run`] on real memory: `count` elements of `data` from `run.start` by `run.step`
/// (negative or zero too). Bounds are checked once per run, so the compiler vectorises the
/// unit-step case.
#[inline(always)]
fn sum_slice_run<T: Element>(
    data: &[T],
    run: Strided,
    count: usize,
    acc: &mut [f64; ACCUMULATORS],
) {
    if count == 0 {
        return;
    }
    let (start, step) = (run.start, run.step);
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
