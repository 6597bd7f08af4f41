//! Element types (`dtype=f64|f32`) and the accessor of kernels written for any of them:
//! [`TypedMem`] with its three implementations, [`TypedReal`] (plain loads and stores, for
//! timed runs), [`TypedSim`] (the same accesses, each also reported to an [`AccessSink`]) and
//! [`AddressMem`] (the same reports without any data, for kernels whose addresses do not depend
//! on the values they read, prepared `simulate_only`).
//!
//! As with [`crate::kernels::access::Mem`], a kernel's order is one generic function; the
//! simulated placement is the same (buffer `b` at `(b+1)·2^32`) with elements `T::BYTES` apart,
//! and every access is `T::BYTES` wide, so an f32 line holds 16 elements, not 8.
//!
//! Besides single loads and stores the accessor has two multiply runs, [`TypedMem::dot_run`]
//! and [`TypedMem::axpy_run`]: their order is defined once by the provided methods (what
//! `TypedSim` uses); `TypedReal` overrides them with check-free slice iterators over the same
//! elements in the same order, and a property test shows the two agree.

use std::marker::PhantomData;

use crate::cache::{AccessSink, Walk};
use crate::kernels::access::{
    Buffers, CopyView, Mem, RealMem, ReplayMem, SimMem, replay_copy_view,
};
pub use crate::kernels::element::Element;
use crate::kernels::element::{ACCUMULATORS, move_slice_run, split_pair, sum_slice_run};
use crate::kernels::spec::{KernelError, ParamSpec, Params, PrepareOptions};
use crate::mem::AlignedBuffer;

/// The element type of a kernel instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    F64,
    F32,
}

impl Dtype {
    /// Bytes per element.
    pub fn bytes(self) -> u32 {
        match self {
            Dtype::F64 => f64::BYTES,
            Dtype::F32 => f32::BYTES,
        }
    }

    /// The `dtype` parameter of resolved parameters (f64 when the kernel has none).
    pub fn from_params(params: &Params) -> Result<Self, KernelError> {
        match params.get("dtype").map(|v| v.to_string()).as_deref() {
            None | Some("f64") => Ok(Dtype::F64),
            Some("f32") => Ok(Dtype::F32),
            Some(other) => Err(KernelError::InvalidParam {
                param: "dtype".into(),
                message: format!("`{other}` is not one of: f64, f32"),
            }),
        }
    }
}

/// The `dtype` parameter: f64 by default, so records without it read as before.
pub const DTYPE_PARAM: ParamSpec = ParamSpec::choice(
    "dtype",
    &["f64", "f32"],
    Some("f64"),
    "element type: f64 (8 B) or f32 (4 B)",
);

/// The simulated byte address of element `index` of buffer `buffer` for `T`.
#[inline(always)]
pub fn typed_address<T: Element>(buffer: usize, index: usize) -> u64 {
    ((buffer as u64 + 1) << 32) + index as u64 * u64::from(T::BYTES)
}

/// Reports [`TypedMem::move_run`]'s loads and stores to `sink` as one move run, at the
/// simulated addresses of `T` elements.
fn report_moves<T: Element>(
    sink: &mut dyn AccessSink,
    (src, from): (usize, (usize, usize)),
    (dst, to): (usize, (usize, usize)),
    count: usize,
) {
    let walk = |buffer, (start, step): (usize, usize)| Walk {
        addr: typed_address::<T>(buffer, start),
        step: step as i64 * i64::from(T::BYTES),
    };
    sink.move_run(walk(src, from), walk(dst, to), count as u64, T::BYTES);
}

/// One side of a multiply run: elements `start, start + step, …` of `buffer` (`step` ≥ 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strided {
    pub buffer: usize,
    pub start: usize,
    pub step: usize,
}

impl Strided {
    /// Element `k` of the run.
    #[inline(always)]
    pub fn at(self, k: usize) -> usize {
        self.start + k * self.step
    }

    /// Element indices `start..=last` the run covers (validated by the kernel at prepare).
    #[inline(always)]
    fn span(self, count: usize) -> std::ops::RangeInclusive<usize> {
        self.start..=self.at(count - 1)
    }
}

/// Loads and stores of `T` elements by (buffer, index), and the runs kernels are written in.
pub trait TypedMem<T: Element> {
    fn load(&mut self, buffer: usize, index: usize) -> T;
    fn store(&mut self, buffer: usize, index: usize, value: T);

    /// Reads `count` elements of `buffer` at `start, start+step, …` in that order (`step` may
    /// be negative); the k-th, widened to f64, is added to `acc[k mod 8]` (the accumulator
    /// interleaving of every summing kernel; f64 sums of the small integers kernels store are
    /// exact for every element type).
    #[inline(always)]
    fn sum_run(
        &mut self,
        buffer: usize,
        start: usize,
        step: isize,
        count: usize,
        acc: &mut [f64; ACCUMULATORS],
    ) {
        for k in 0..count {
            let index = start as isize + k as isize * step;
            acc[k % ACCUMULATORS] += self.load(buffer, index as usize).to_f64();
        }
    }

    /// For k in 0..count: reads `src[from.0 + k·from.1]`, then writes it to
    /// `dst[to.0 + k·to.1]` (`src` and `dst` are different buffers, steps ≥ 1).
    #[inline(always)]
    fn move_run(
        &mut self,
        (src, from): (usize, (usize, usize)),
        (dst, to): (usize, (usize, usize)),
        count: usize,
    ) {
        for k in 0..count {
            let value = self.load(src, from.0 + k * from.1);
            self.store(dst, to.0 + k * to.1, value);
        }
    }

    /// The dot product of `count` elements of `a` and `b`: for k ascending, loads `a`'s k-th
    /// element, then `b`'s; the k-th product goes to accumulator `k mod 8` (one dependent add
    /// chain would hide the memory behaviour), summed last.
    #[inline(always)]
    fn dot_run(&mut self, a: Strided, b: Strided, count: usize) -> T {
        let mut acc = [T::default(); ACCUMULATORS];
        for k in 0..count {
            let x = self.load(a.buffer, a.at(k));
            let y = self.load(b.buffer, b.at(k));
            acc[k % ACCUMULATORS] = acc[k % ACCUMULATORS] + x * y;
        }
        fold(acc)
    }

    /// `y += r · x` over `count` elements: for k ascending, loads `x`'s k-th element, loads
    /// `y`'s, stores `y`'s (`x` and `y` are different buffers).
    #[inline(always)]
    fn axpy_run(&mut self, x: Strided, y: Strided, count: usize, r: T) {
        for k in 0..count {
            let value = self.load(x.buffer, x.at(k));
            let old = self.load(y.buffer, y.at(k));
            self.store(y.buffer, y.at(k), old + r * value);
        }
    }
}

/// The accumulators' total, in accumulator order.
#[inline(always)]
fn fold<T: Element>(acc: [T; ACCUMULATORS]) -> T {
    acc.into_iter().fold(T::default(), |sum, x| sum + x)
}

/// Plain accesses on `N` real buffers of `T`.
pub struct TypedReal<'a, T, const N: usize> {
    buffers: [&'a mut [T]; N],
}

impl<'a, T: Element, const N: usize> TypedReal<'a, T, N> {
    pub fn new(buffers: [&'a mut [T]; N]) -> Self {
        Self { buffers }
    }
}

impl<T: Element, const N: usize> TypedMem<T> for TypedReal<'_, T, N> {
    #[inline(always)]
    fn load(&mut self, buffer: usize, index: usize) -> T {
        self.buffers[buffer][index]
    }

    #[inline(always)]
    fn store(&mut self, buffer: usize, index: usize, value: T) {
        self.buffers[buffer][index] = value;
    }

    #[inline(always)]
    fn sum_run(
        &mut self,
        buffer: usize,
        start: usize,
        step: isize,
        count: usize,
        acc: &mut [f64; ACCUMULATORS],
    ) {
        sum_slice_run(self.buffers[buffer], start, step, count, acc);
    }

    #[inline(always)]
    fn move_run(
        &mut self,
        (src, from): (usize, (usize, usize)),
        (dst, to): (usize, (usize, usize)),
        count: usize,
    ) {
        let (source, destination) = split_pair(&mut self.buffers, src, dst);
        move_slice_run(source, from, destination, to, count);
    }

    #[inline(always)]
    fn dot_run(&mut self, a: Strided, b: Strided, count: usize) -> T {
        let mut acc = [T::default(); ACCUMULATORS];
        if count == 0 {
            return fold(acc);
        }
        let xs = &self.buffers[a.buffer][a.span(count)];
        let ys = &self.buffers[b.buffer][b.span(count)];
        let mut pairs = xs.iter().step_by(a.step).zip(ys.iter().step_by(b.step));
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
    fn axpy_run(&mut self, x: Strided, y: Strided, count: usize, r: T) {
        if count == 0 {
            return;
        }
        assert_ne!(x.buffer, y.buffer, "an axpy run needs two distinct buffers");
        let (xs, ys) = if x.buffer < y.buffer {
            let (low, high) = self.buffers.split_at_mut(y.buffer);
            (&*low[x.buffer], &mut *high[0])
        } else {
            let (low, high) = self.buffers.split_at_mut(x.buffer);
            (&*high[0], &mut *low[y.buffer])
        };
        let (xs, ys) = (&xs[x.span(count)], &mut ys[y.span(count)]);
        // Unit steps as plain slices, so the compiler vectorises the row-wise orders.
        if x.step == 1 && y.step == 1 {
            for (target, &value) in ys.iter_mut().zip(xs) {
                *target = *target + r * value;
            }
        } else {
            let pairs = ys.iter_mut().step_by(y.step).zip(xs.iter().step_by(x.step));
            for (target, &value) in pairs {
                *target = *target + r * value;
            }
        }
    }
}

/// The real accesses of [`TypedReal`], each also reported to a sink at its simulated address.
pub struct TypedSim<'a, 's, T, const N: usize> {
    real: TypedReal<'a, T, N>,
    sink: &'s mut dyn AccessSink,
}

impl<'a, 's, T: Element, const N: usize> TypedSim<'a, 's, T, N> {
    pub fn new(buffers: [&'a mut [T]; N], sink: &'s mut dyn AccessSink) -> Self {
        Self {
            real: TypedReal::new(buffers),
            sink,
        }
    }
}

impl<T: Element, const N: usize> TypedMem<T> for TypedSim<'_, '_, T, N> {
    #[inline]
    fn load(&mut self, buffer: usize, index: usize) -> T {
        let value = self.real.load(buffer, index);
        self.sink.load(typed_address::<T>(buffer, index), T::BYTES);
        value
    }

    #[inline]
    fn store(&mut self, buffer: usize, index: usize, value: T) {
        self.real.store(buffer, index, value);
        self.sink.store(typed_address::<T>(buffer, index), T::BYTES);
    }

    /// The real moves, then the provided order as one call to the sink.
    #[inline]
    fn move_run(
        &mut self,
        (src, from): (usize, (usize, usize)),
        (dst, to): (usize, (usize, usize)),
        count: usize,
    ) {
        self.real.move_run((src, from), (dst, to), count);
        report_moves::<T>(self.sink, (src, from), (dst, to), count);
    }
}

/// f64 kernels written against [`TypedMem`] run on [`RealMem`] and [`SimMem`] unchanged: the
/// same loops (and simulated stream) as kernels written against [`Mem`].
macro_rules! typed_f64_through_mem {
    ($($accessor:ty),*) => {$(
        impl<B: Buffers> TypedMem<f64> for $accessor {
            #[inline(always)]
            fn load(&mut self, buffer: usize, index: usize) -> f64 {
                Mem::load(self, buffer, index)
            }
            #[inline(always)]
            fn store(&mut self, buffer: usize, index: usize, value: f64) {
                Mem::store(self, buffer, index, value);
            }
            #[inline(always)]
            fn sum_run(&mut self, b: usize, start: usize, step: isize, n: usize, acc: &mut [f64; 8]) {
                Mem::sum_run(self, b, start, step, n, acc);
            }
            #[inline(always)]
            fn move_run(&mut self, src: (usize, (usize, usize)), dst: (usize, (usize, usize)), n: usize) {
                Mem::move_run(self, src.0, src.1.0, src.1.1, dst.0, dst.1.0, dst.1.1, n);
            }
        }
    )*};
}

typed_f64_through_mem!(RealMem<B>, SimMem<'_, B>);

/// A kernel's `N` buffers in the element type its `dtype` chose, or, prepared
/// `simulate_only`, only their lengths (no data: the simulation feeds addresses only).
pub enum Storage<const N: usize> {
    F64([AlignedBuffer<f64>; N]),
    F32([AlignedBuffer<f32>; N]),
    Addresses { dtype: Dtype, lens: [usize; N] },
}

impl<const N: usize> Storage<N> {
    /// `N` buffers of `lens[b]` elements; buffer `b` holds `value(index)` at every index when
    /// `filled[b]`, zeros otherwise.
    pub fn new(
        dtype: Dtype,
        lens: [usize; N],
        filled: [bool; N],
        value: fn(usize) -> f64,
        options: PrepareOptions,
    ) -> Result<Self, KernelError> {
        Ok(match dtype {
            _ if options.simulate_only => Storage::Addresses { dtype, lens },
            Dtype::F64 => Storage::F64(buffers(lens, filled, value, options)?),
            Dtype::F32 => Storage::F32(buffers(lens, filled, value, options)?),
        })
    }

    /// Whether the storage holds data (not prepared `simulate_only`): a reference checksum
    /// is computed only then.
    pub fn has_data(&self) -> bool {
        !matches!(self, Storage::Addresses { .. })
    }

    /// The element type.
    pub fn dtype(&self) -> Dtype {
        match self {
            Storage::F64(_) => Dtype::F64,
            Storage::F32(_) => Dtype::F32,
            Storage::Addresses { dtype, .. } => *dtype,
        }
    }

    /// Element `index` of buffer `buffer`, widened to f64 (for reference checksums; NaN
    /// without data, which no checksum matches).
    pub fn value(&self, buffer: usize, index: usize) -> f64 {
        match self {
            Storage::F64(b) => b[buffer][index],
            Storage::F32(b) => f64::from(b[buffer][index]),
            Storage::Addresses { .. } => f64::NAN,
        }
    }
}

fn buffers<T: Element, const N: usize>(
    lens: [usize; N],
    filled: [bool; N],
    value: fn(usize) -> f64,
    options: PrepareOptions,
) -> Result<[AlignedBuffer<T>; N], KernelError> {
    let mut made = Vec::with_capacity(N);
    for (len, fill) in lens.into_iter().zip(filled) {
        let mut buffer = AlignedBuffer::<T>::zeroed(len, options.huge_pages)?;
        if fill {
            for (index, cell) in buffer.iter_mut().enumerate() {
                *cell = T::from_f64(value(index));
            }
        }
        made.push(buffer);
    }
    Ok(made
        .try_into()
        .unwrap_or_else(|_| unreachable!("one buffer per length")))
}

/// Runs `$body` with `$m` bound to a real-memory accessor of `$storage`'s buffers: [`RealMem`]
/// for f64 (the loops the f64 kernels always ran), [`TypedReal`] otherwise.
macro_rules! with_real_mem {
    ($storage:expr, |$m:ident| $body:expr) => {
        match $storage {
            $crate::kernels::typed::Storage::F64(buffers) => {
                let $m = &mut $crate::kernels::access::RealMem::new(
                    buffers.each_mut().map(|b| &mut **b),
                );
                $body
            }
            $crate::kernels::typed::Storage::F32(buffers) => {
                let $m = &mut $crate::kernels::typed::TypedReal::new(
                    buffers.each_mut().map(|b| &mut **b),
                );
                $body
            }
            // Prepared `simulate_only`: nothing to run, and NaN matches no checksum.
            $crate::kernels::typed::Storage::Addresses { .. } => f64::NAN,
        }
    };
}

/// As [`with_real_mem`], with a simulating accessor reporting to `$sink`.
macro_rules! with_sim_mem {
    ($storage:expr, $sink:expr, |$m:ident| $body:expr) => {
        match $storage {
            $crate::kernels::typed::Storage::F64(buffers) => {
                let $m = &mut $crate::kernels::access::SimMem::new(
                    buffers.each_mut().map(|b| &mut **b),
                    $sink,
                );
                $body
            }
            $crate::kernels::typed::Storage::F32(buffers) => {
                let $m = &mut $crate::kernels::typed::TypedSim::new(
                    buffers.each_mut().map(|b| &mut **b),
                    $sink,
                );
                $body
            }
            $crate::kernels::typed::Storage::Addresses { dtype, lens } => match dtype {
                $crate::kernels::typed::Dtype::F64 => {
                    let $m = &mut $crate::kernels::typed::AddressMem::<f64, _>::new(*lens, $sink);
                    $body
                }
                $crate::kernels::typed::Dtype::F32 => {
                    let $m = &mut $crate::kernels::typed::AddressMem::<f32, _>::new(*lens, $sink);
                    $body
                }
            },
        }
    };
}

pub(crate) use {with_real_mem, with_sim_mem};

/// Reports every load and store [`TypedSim`] (or, for f64, [`SimMem`]) would report, at the
/// same simulated addresses and in the same order, but holds no data: loads return 0 and
/// stores are dropped. Only kernels whose address stream does not depend on the values they
/// read may use it (`tests/address_only.rs` holds each one's stream to its real one), so a
/// simulation of a 128 MiB matrix neither fills nor faults in 128 MiB of host memory.
pub struct AddressMem<'s, T, const N: usize> {
    sink: &'s mut dyn AccessSink,
    /// Buffer `b`'s length in elements (the copy engine plans from its source's length).
    lens: [usize; N],
    element: PhantomData<T>,
}

impl<'s, T: Element, const N: usize> AddressMem<'s, T, N> {
    pub fn new(lens: [usize; N], sink: &'s mut dyn AccessSink) -> Self {
        Self {
            sink,
            lens,
            element: PhantomData,
        }
    }
}

impl<T: Element, const N: usize> TypedMem<T> for AddressMem<'_, T, N> {
    #[inline]
    fn load(&mut self, buffer: usize, index: usize) -> T {
        self.sink.load(typed_address::<T>(buffer, index), T::BYTES);
        T::default()
    }

    #[inline]
    fn store(&mut self, buffer: usize, index: usize, _value: T) {
        self.sink.store(typed_address::<T>(buffer, index), T::BYTES);
    }

    /// The provided order as one call, without the accumulation (nothing is read): the
    /// simulator takes row-order runs line by line.
    #[inline]
    fn sum_run(
        &mut self,
        buffer: usize,
        start: usize,
        step: isize,
        count: usize,
        _acc: &mut [f64; ACCUMULATORS],
    ) {
        let first = typed_address::<T>(buffer, start);
        let step = step as i64 * i64::from(T::BYTES);
        self.sink.load_run(first, step, count as u64, T::BYTES);
    }

    /// The provided order as one call (nothing moves): the simulator takes it in one loop.
    #[inline]
    fn move_run(
        &mut self,
        (src, from): (usize, (usize, usize)),
        (dst, to): (usize, (usize, usize)),
        count: usize,
    ) {
        report_moves::<T>(self.sink, (src, from), (dst, to), count);
    }
}

/// The copy engine's order replayed without data: nothing moves.
impl<const N: usize> ReplayMem for AddressMem<'_, f64, N> {
    fn moved_value(&mut self, _: usize, _: usize) -> f64 {
        0.0
    }
    fn sink(&mut self) -> &mut dyn AccessSink {
        self.sink
    }
}

/// The f64 accessor's copies, replayed without data (as [`SimMem`] replays them).
impl<const N: usize> Mem for AddressMem<'_, f64, N> {
    #[inline]
    fn load(&mut self, buffer: usize, index: usize) -> f64 {
        TypedMem::load(self, buffer, index)
    }

    #[inline]
    fn store(&mut self, buffer: usize, index: usize, value: f64) {
        TypedMem::store(self, buffer, index, value);
    }

    #[inline]
    fn sum_run(&mut self, b: usize, start: usize, step: isize, n: usize, acc: &mut [f64; 8]) {
        TypedMem::sum_run(self, b, start, step, n, acc);
    }

    fn copy_view(&mut self, src: usize, view: &CopyView<'_>, dst: usize, dst_start: usize) {
        let src_len = self.lens[src];
        replay_copy_view(self, (src, src_len), view, (dst, dst_start));
    }

    fn copy_span(&mut self, src: usize, dst: usize, len: usize) {
        for index in 0..len {
            Mem::load(self, src, index);
            Mem::store(self, dst, index, 0.0);
        }
    }
}

/// The checksum of a copy: the sum of the sampled destination cells
/// ([`crate::kernels::common::check_indices`]), read after the copy (these few loads are part
/// of the run and of its simulated stream). It checks placement, not only the values.
pub fn sampled_sum<T: Element, M: TypedMem<T>>(m: &mut M, buffer: usize, len: usize) -> f64 {
    crate::kernels::common::check_indices(len)
        .map(|index| m.load(buffer, index).to_f64())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Default)]
    struct Recorder(Vec<(char, u64, u32)>);

    impl AccessSink for Recorder {
        fn load(&mut self, addr: u64, len: u32) {
            self.0.push(('L', addr, len));
        }
        fn store(&mut self, addr: u64, len: u32) {
            self.0.push(('S', addr, len));
        }
    }

    /// Data whose sums depend on which elements were combined, and in which order.
    fn distinct_data<T: Element>(len: usize) -> Vec<T> {
        (0..len)
            .map(|i| T::from_f64((1u64 << (i % 20)) as f64 + i as f64 * 0.37))
            .collect()
    }

    /// The fast runs equal the provided (reference) ones, value for value, and the simulated
    /// stream is the documented one.
    fn runs_agree<T: Element + std::fmt::Debug>(
        (a_step, b_step, a_start, b_start, count): (usize, usize, usize, usize, usize),
        r: f64,
    ) -> Result<(), TestCaseError> {
        let a = Strided {
            buffer: 0,
            start: a_start,
            step: a_step,
        };
        let b = Strided {
            buffer: 1,
            start: b_start,
            step: b_step,
        };
        let mut xs: Vec<T> = distinct_data(a_start + count * a_step + 1);
        let mut real: Vec<T> = distinct_data(b_start + count * b_step + 1);
        let mut reference = real.clone();
        let dot = TypedReal::new([&mut xs, &mut real]).dot_run(a, b, count);
        let mut recorder = Recorder::default();
        let want = TypedSim::new([&mut xs, &mut reference], &mut recorder).dot_run(a, b, count);
        prop_assert_eq!(dot, want);
        let w = T::BYTES;
        let loads = |k: usize| {
            let (x, y) = (
                typed_address::<T>(0, a.at(k)),
                typed_address::<T>(1, b.at(k)),
            );
            [('L', x, w), ('L', y, w)]
        };
        prop_assert_eq!(&recorder.0, &(0..count).flat_map(loads).collect::<Vec<_>>());
        let r = T::from_f64(r);
        TypedReal::new([&mut xs, &mut real]).axpy_run(a, b, count, r);
        let mut recorder = Recorder::default();
        TypedSim::new([&mut xs, &mut reference], &mut recorder).axpy_run(a, b, count, r);
        prop_assert_eq!(&real, &reference);
        let with_store = |k: usize| {
            let [x, y] = loads(k);
            [x, y, ('S', y.1, w)]
        };
        prop_assert_eq!(
            recorder.0,
            (0..count).flat_map(with_store).collect::<Vec<_>>()
        );
        Ok(())
    }

    proptest! {
        #[test]
        fn real_multiply_runs_equal_the_reference_order(
            shape in (1usize..6, 1usize..6, 0usize..20, 0usize..20, 0usize..40),
            r in -3.0f64..3.0,
        ) {
            runs_agree::<f64>(shape, r)?;
            runs_agree::<f32>(shape, r)?;
        }
    }

    /// The real sum and move runs equal the provided (reference) order, value for value, and
    /// the simulated stream is `T::BYTES` wide and `step · T::BYTES` apart.
    fn sum_and_move_runs_agree<T: Element>(
        len: usize,
        start: usize,
        step: isize,
        count: usize,
    ) -> Result<(), TestCaseError> {
        let mut data: Vec<T> = distinct_data(len);
        let mut real = [0.5; ACCUMULATORS];
        TypedReal::new([&mut data]).sum_run(0, start, step, count, &mut real);
        let mut reference = [0.5; ACCUMULATORS];
        let mut recorder = Recorder::default();
        TypedSim::new([&mut data], &mut recorder).sum_run(0, start, step, count, &mut reference);
        prop_assert_eq!(real, reference);
        let at = |k: usize| (start as isize + k as isize * step) as usize;
        let want: Vec<_> = (0..count)
            .map(|k| ('L', typed_address::<T>(0, at(k)), T::BYTES))
            .collect();
        prop_assert_eq!(recorder.0, want);
        if step > 0 {
            let (from, to) = ((start, step as usize), (1, 3));
            let mut dst = vec![T::default(); 1 + 3 * count];
            let mut want = dst.clone();
            TypedReal::new([&mut data, &mut dst]).move_run((0, from), (1, to), count);
            let mut recorder = Recorder::default();
            TypedSim::new([&mut data, &mut want], &mut recorder).move_run(
                (0, from),
                (1, to),
                count,
            );
            prop_assert_eq!(dst, want);
            prop_assert_eq!(recorder.0.len(), 2 * count);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn real_sum_and_move_runs_equal_the_reference_order(
            len in 1usize..300,
            start_frac in 0.0f64..1.0,
            step in -9isize..=9,
            count_frac in 0.0f64..=1.0,
        ) {
            let start = ((len as f64 * start_frac) as usize).min(len - 1);
            let room = match step {
                0 => 40,
                s if s > 0 => (len - 1 - start) / s as usize + 1,
                s => start / s.unsigned_abs() + 1,
            };
            let count = (room as f64 * count_frac) as usize;
            sum_and_move_runs_agree::<f32>(len, start, step, count)?;
            sum_and_move_runs_agree::<f64>(len, start, step, count)?;
        }
    }

    #[test]
    fn f32_elements_are_four_bytes_apart() {
        assert_eq!(typed_address::<f32>(1, 3) - typed_address::<f32>(1, 0), 12);
        assert_eq!(typed_address::<f64>(0, 1), (1 << 32) + 8);
        assert_eq!(Dtype::from_params(&Params::new()), Ok(Dtype::F64));
    }
}
