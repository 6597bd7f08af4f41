//! The accessor every kernel's access order is written against, and its two implementations:
//! [`RealMem`] (plain loads and stores on the instance's buffers, for timed runs) and
//! [`SimMem`] (the same loads and stores, each also reported to an [`AccessSink`]).
//!
//! A kernel's order is one generic function `fn order<M: Mem>(m: &mut M, ...)`; `Instance::run`
//! calls it with a `RealMem`, `Instance::simulate` with a `SimMem`. The simulating accessor reads
//! and writes the real data too, so pointer chases follow the real (seeded) values; kernels
//! whose addresses never depend on their data may feed addresses only (`typed::AddressMem`).
//!
//! Besides single loads and stores, the accessor offers two *runs* — [`Mem::sum_run`] and
//! [`Mem::move_run`], a strided walk of `count` elements — because per-element bounds checks
//! kept the compiler from vectorising (the generic `row-sum` ran 2.4× slower than a hand-written
//! loop, see `benches/kernels_generic.rs`). Their order is defined once, by the trait's provided
//! methods in terms of `load`/`store` (what `SimMem` uses); `RealMem` overrides them with
//! check-free slice iterators over the same elements in the same order (bounds checked once
//! per run), and a property test shows the two agree. No unsafe code.
//!
//! Simulated placement: element `i` of buffer `b` is at byte address `(b+1)·2^32 + 8·i`
//! ([`sim_address`]); every access is 8 bytes. Buffers are capped at [`MAX_BUFFER_ELEMENTS`]
//! so no two buffers overlap in that address space.
//!
//! One extension serves the jagged kernels, and leaves every other stream unchanged:
//! - **Many buffers behind a pointer table** ([`Buffers`], [`Placement`]): a kernel may hand
//!   `RealMem` a slice of separately allocated buffers (`&mut [Box<[f64]>]`, a jagged array's
//!   rows). Reaching buffer `b` then reads its entry (pointer and length, 16 B) from that table,
//!   as the real code does; `SimMem` with a placement reports that 8-byte load at
//!   `table + 16·b` once per run and once per single load or store, and places buffer `b` at
//!   `bases[b]` (the kernel's model of where its allocator put it).

use crate::cache::{AccessSink, Walk};
use crate::kernels::copy::order::{OrderSink, engine_order};
use crate::kernels::copy::reference::{plain_copy, read_sum};
use crate::kernels::copy::{CopyError, copy_into_contiguous};
use crate::kernels::element::{move_slice_run, split_pair, sum_slice_run};

pub use crate::kernels::element::ACCUMULATORS;

/// Bytes per element: every kernel works on f64.
pub const ELEMENT_BYTES: u32 = 8;

/// The largest buffer a kernel may use (2^29 f64 = 4 GiB): the distance between two buffers in
/// the simulated address space.
pub const MAX_BUFFER_ELEMENTS: usize = 1 << 29;

/// The simulated buffer of the copy engine's L1 stage (kernels use buffers from 0 up).
pub const STAGE_BUFFER: usize = 15;

/// The simulated byte address of element `index` of buffer `buffer`.
#[inline(always)]
pub fn sim_address(buffer: usize, index: usize) -> u64 {
    ((buffer as u64 + 1) << 32) + index as u64 * u64::from(ELEMENT_BYTES)
}

/// A strided view to copy: element `(i0..in)` at `offset + Σ ik·sk` of the source buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyView<'a> {
    pub shape: &'a [usize],
    pub strides: &'a [isize],
    pub offset: usize,
}

/// [`Mem::move_run`] an element at a time: for k in 0..count, `dst` element
/// `dst.1 + k·dst.2` = `src` element `src.1 + k·src.2` (each a (buffer, start, step)).
#[inline(always)]
fn move_each<M: Mem + ?Sized>(
    m: &mut M,
    src: (usize, usize, usize),
    dst: (usize, usize, usize),
    count: usize,
) {
    for k in 0..count {
        let value = m.load(src.0, src.1 + k * src.2);
        m.store(dst.0, dst.1 + k * dst.2, value);
    }
}

/// Loads and stores of f64 elements by (buffer, index): the only way kernels touch memory.
///
/// Indices are validated by the kernel at prepare time; an out-of-range index is a bug in the
/// kernel and panics (it is never reachable from user input).
pub trait Mem {
    /// Reads element `index` of buffer `buffer`.
    fn load(&mut self, buffer: usize, index: usize) -> f64;
    /// Writes element `index` of buffer `buffer`.
    fn store(&mut self, buffer: usize, index: usize, value: f64);

    /// Reads `count` elements of `buffer` at `start, start+step, start+2·step, …` in that order
    /// (`step` may be negative); the k-th element of the run is added to `acc[k mod 8]`.
    ///
    /// This is the accumulator interleaving of every summing kernel: the address order is the
    /// run's order; only which accumulator receives an element depends on its place in the run.
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
            acc[k % ACCUMULATORS] += self.load(buffer, index as usize);
        }
    }

    /// Sums elements `0..len` of `buffer`, read in ascending order (the `read` reference). The
    /// provided order is [`Mem::sum_run`]'s; `RealMem` uses the copy engine's reference
    /// [`read_sum`] (16 accumulators), the same stream the harness normalises by.
    #[inline(always)]
    fn sum_span(&mut self, buffer: usize, len: usize) -> f64 {
        let mut acc = [0.0; ACCUMULATORS];
        self.sum_run(buffer, 0, 1, len, &mut acc);
        acc.iter().sum()
    }

    /// For k in 0..count: reads `src[src_start + k·src_step]`, then writes it to
    /// `dst[dst_start + k·dst_step]` (`src` and `dst` are different buffers).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn move_run(
        &mut self,
        src: usize,
        src_start: usize,
        src_step: usize,
        dst: usize,
        dst_start: usize,
        dst_step: usize,
        count: usize,
    ) {
        move_each(
            self,
            (src, src_start, src_step),
            (dst, dst_start, dst_step),
            count,
        );
    }
    /// Copies `view` of buffer `src` into `dst[dst_start..]` in logical C order, through the
    /// copy engine on real memory. The simulated stream is the engine's own order
    /// ([`engine_order`]: its plan, tuning, panels, 8×8 blocks and L1 stage, the stage at
    /// simulated buffer `STAGE_BUFFER`), without the carried lines of streamed panels and
    /// prefetches; non-temporal stores count as stores.
    fn copy_view(&mut self, src: usize, view: &CopyView<'_>, dst: usize, dst_start: usize);
    /// Copies elements `0..len` of buffer `src` to `0..len` of buffer `dst` with the copy
    /// engine's [`plain_copy`] (the platform `memcpy`) on real memory. Simulated stream: for k ascending, load `src[k]`, store `dst[k]`
    /// (the platform copy moves whole vectors, which touches the same lines in the same order).
    fn copy_span(&mut self, src: usize, dst: usize, len: usize);
}

/// The buffers a kernel's accessor works on, numbered from 0: a fixed array of slices (most
/// kernels) or a slice of separately allocated buffers (the table of a jagged array).
pub trait Buffers {
    type Buffer: std::ops::DerefMut<Target = [f64]>;
    fn slots(&self) -> &[Self::Buffer];
    fn slots_mut(&mut self) -> &mut [Self::Buffer];
}

impl<'a, const N: usize> Buffers for [&'a mut [f64]; N] {
    type Buffer = &'a mut [f64];
    #[inline(always)]
    fn slots(&self) -> &[Self::Buffer] {
        self
    }
    #[inline(always)]
    fn slots_mut(&mut self) -> &mut [Self::Buffer] {
        self
    }
}

impl Buffers for &mut [Box<[f64]>] {
    type Buffer = Box<[f64]>;
    #[inline(always)]
    fn slots(&self) -> &[Self::Buffer] {
        self
    }
    #[inline(always)]
    fn slots_mut(&mut self) -> &mut [Self::Buffer] {
        self
    }
}

/// Plain accesses on real buffers (`[&mut [f64]; N]` or a table of boxed buffers).
pub struct RealMem<B: Buffers> {
    buffers: B,
}

impl<'a, const N: usize> RealMem<[&'a mut [f64]; N]> {
    pub fn new(buffers: [&'a mut [f64]; N]) -> Self {
        Self { buffers }
    }
}

impl<'t> RealMem<&'t mut [Box<[f64]>]> {
    /// Separately allocated buffers, reached through their table (`buffers`).
    pub fn table(buffers: &'t mut [Box<[f64]>]) -> Self {
        Self { buffers }
    }
}

impl<B: Buffers> RealMem<B> {
    /// Buffer `src` for reading and buffer `dst` for writing (they must differ).
    fn pair(&mut self, src: usize, dst: usize) -> (&[f64], &mut [f64]) {
        split_pair(self.buffers.slots_mut(), src, dst)
    }

    #[inline(always)]
    fn data(&self, buffer: usize) -> &[f64] {
        &self.buffers.slots()[buffer]
    }
}

impl<B: Buffers> Mem for RealMem<B> {
    #[inline(always)]
    fn load(&mut self, buffer: usize, index: usize) -> f64 {
        self.data(buffer)[index]
    }

    #[inline(always)]
    fn store(&mut self, buffer: usize, index: usize, value: f64) {
        self.buffers.slots_mut()[buffer][index] = value;
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
        sum_slice_run(self.data(buffer), start, step, count, acc);
    }

    #[inline(always)]
    fn move_run(
        &mut self,
        src: usize,
        src_start: usize,
        src_step: usize,
        dst: usize,
        dst_start: usize,
        dst_step: usize,
        count: usize,
    ) {
        let (source, destination) = self.pair(src, dst);
        let (from, to) = ((src_start, src_step), (dst_start, dst_step));
        move_slice_run(source, from, destination, to, count);
    }

    fn copy_view(&mut self, src: usize, view: &CopyView<'_>, dst: usize, dst_start: usize) {
        let (source, destination) = self.pair(src, dst);
        let len = view.shape.iter().product::<usize>();
        copy_into_contiguous(
            source,
            view.shape,
            view.strides,
            view.offset,
            &mut destination[dst_start..dst_start + len],
        )
        .unwrap_or_else(|err: CopyError| panic!("copy view validated at prepare time: {err}"));
    }

    fn copy_span(&mut self, src: usize, dst: usize, len: usize) {
        let (source, destination) = self.pair(src, dst);
        plain_copy(&source[..len], &mut destination[..len]);
    }

    #[inline(always)]
    fn sum_span(&mut self, buffer: usize, len: usize) -> f64 {
        read_sum(&self.data(buffer)[..len])
    }
}

/// Where a kernel with many buffers placed them in the simulated address space: buffer `b`
/// starts at `bases[b]`; with a `table`, reaching buffer `b` reads its 16-byte entry at
/// `table + 16·b` first (see the module doc). Kernels without one use [`sim_address`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub bases: Vec<u64>,
    pub table: Option<u64>,
}

/// The real accesses of [`RealMem`], each also reported to a sink at its simulated address.
pub struct SimMem<'s, B: Buffers> {
    real: RealMem<B>,
    sink: &'s mut dyn AccessSink,
    placement: Option<&'s Placement>,
}

impl<'a, 's, const N: usize> SimMem<'s, [&'a mut [f64]; N]> {
    pub fn new(buffers: [&'a mut [f64]; N], sink: &'s mut dyn AccessSink) -> Self {
        Self {
            real: RealMem::new(buffers),
            sink,
            placement: None,
        }
    }
}

impl<'t, 's> SimMem<'s, &'t mut [Box<[f64]>]> {
    /// Separately allocated buffers reached through their table, at the kernel's own
    /// `placement` instead of [`sim_address`].
    pub fn placed(
        buffers: &'t mut [Box<[f64]>],
        sink: &'s mut dyn AccessSink,
        placement: &'s Placement,
    ) -> Self {
        Self {
            real: RealMem::table(buffers),
            sink,
            placement: Some(placement),
        }
    }
}

impl<'s, B: Buffers> SimMem<'s, B> {
    /// The simulated address of byte `offset` of buffer `buffer`.
    #[inline]
    fn address(&self, buffer: usize, offset: u64) -> u64 {
        match self.placement {
            None => sim_address(buffer, 0) + offset,
            Some(placement) => placement.bases[buffer] + offset,
        }
    }

    /// Reports the read of buffer `buffer`'s pointer-table entry, if it has one.
    #[inline]
    fn table_load(&mut self, buffer: usize) {
        if let Some(table) = self.placement.and_then(|p| p.table) {
            self.sink.load(table + 16 * buffer as u64, 8);
        }
    }

    /// Reports an 8-byte load of element `index` (no table entry).
    #[inline]
    fn element_load(&mut self, buffer: usize, index: usize) -> f64 {
        let value = self.real.load(buffer, index);
        let address = self.address(buffer, index as u64 * u64::from(ELEMENT_BYTES));
        self.sink.load(address, ELEMENT_BYTES);
        value
    }
}

impl<B: Buffers> Mem for SimMem<'_, B> {
    #[inline]
    fn load(&mut self, buffer: usize, index: usize) -> f64 {
        self.table_load(buffer);
        self.element_load(buffer, index)
    }

    #[inline]
    fn store(&mut self, buffer: usize, index: usize, value: f64) {
        self.table_load(buffer);
        self.real.store(buffer, index, value);
        let address = self.address(buffer, index as u64 * u64::from(ELEMENT_BYTES));
        self.sink.store(address, ELEMENT_BYTES);
    }

    /// One table entry per run (as the real run reads it once), then the elements in order.
    #[inline]
    fn sum_run(
        &mut self,
        buffer: usize,
        start: usize,
        step: isize,
        count: usize,
        acc: &mut [f64; ACCUMULATORS],
    ) {
        self.table_load(buffer);
        for k in 0..count {
            let index = start as isize + k as isize * step;
            acc[k % ACCUMULATORS] += self.element_load(buffer, index as usize);
        }
    }

    /// The real moves, then the provided order as one call to the sink (element by element
    /// where pointer-table loads come between).
    fn move_run(
        &mut self,
        src: usize,
        src_start: usize,
        src_step: usize,
        dst: usize,
        dst_start: usize,
        dst_step: usize,
        count: usize,
    ) {
        if self.placement.is_some_and(|p| p.table.is_some()) {
            return move_each(
                self,
                (src, src_start, src_step),
                (dst, dst_start, dst_step),
                count,
            );
        }
        let real = &mut self.real;
        real.move_run(src, src_start, src_step, dst, dst_start, dst_step, count);
        let bytes = u64::from(ELEMENT_BYTES);
        let walk = |buffer, start: usize, step: usize| Walk {
            addr: self.address(buffer, start as u64 * bytes),
            step: step as i64 * bytes as i64,
        };
        let (from, to) = (
            walk(src, src_start, src_step),
            walk(dst, dst_start, dst_step),
        );
        self.sink.move_run(from, to, count as u64, ELEMENT_BYTES);
    }

    fn copy_view(&mut self, src: usize, view: &CopyView<'_>, dst: usize, dst_start: usize) {
        let src_len = self.real.data(src).len();
        replay_copy_view(self, (src, src_len), view, (dst, dst_start));
    }

    fn copy_span(&mut self, src: usize, dst: usize, len: usize) {
        for index in 0..len {
            let value = self.load(src, index);
            self.store(dst, index, value);
        }
    }
}

/// Calls `visit` with the storage index of every element of a view, in logical C order (last
/// A simulating accessor the copy engine's order can be replayed on ([`replay_copy_view`]).
pub(crate) trait ReplayMem: Mem {
    /// The value a store of the engine moves from element `index` of `src`, read without a
    /// simulated access (it travels in registers or the stage).
    fn moved_value(&mut self, src: usize, index: usize) -> f64;
    /// Where the stage's accesses are reported.
    fn sink(&mut self) -> &mut dyn AccessSink;
}

impl<B: Buffers> ReplayMem for SimMem<'_, B> {
    fn moved_value(&mut self, src: usize, index: usize) -> f64 {
        self.real.load(src, index)
    }
    fn sink(&mut self) -> &mut dyn AccessSink {
        self.sink
    }
}

/// Replays the copy engine's order for `view` of buffer `src` (`src_len` elements) into `dst`
/// from `dst_start` on `mem`: its plan, panels, tiles, 8×8 blocks and L1 stage (the stage at
/// simulated buffer [`STAGE_BUFFER`]), without the carried lines and prefetches.
pub(crate) fn replay_copy_view<M: ReplayMem>(
    mem: &mut M,
    (src, src_len): (usize, usize),
    view: &CopyView<'_>,
    (dst, dst_start): (usize, usize),
) {
    /// The engine's accesses, replayed on `mem`.
    struct Replay<'m, M> {
        mem: &'m mut M,
        src: usize,
        dst: usize,
    }
    impl<M: ReplayMem> OrderSink for Replay<'_, M> {
        fn load(&mut self, src: usize) {
            self.mem.load(self.src, src);
        }
        fn store(&mut self, dst: usize, src: usize) {
            let value = self.mem.moved_value(self.src, src);
            self.mem.store(self.dst, dst, value);
        }
        fn stage_load(&mut self, index: usize) {
            let address = sim_address(STAGE_BUFFER, index);
            self.mem.sink().load(address, ELEMENT_BYTES);
        }
        fn stage_store(&mut self, index: usize) {
            let address = sim_address(STAGE_BUFFER, index);
            self.mem.sink().store(address, ELEMENT_BYTES);
        }
    }
    let mut replay = Replay { mem, src, dst };
    engine_order(
        src_len,
        view.shape,
        view.strides,
        view.offset,
        dst_start,
        &mut replay,
    )
    .unwrap_or_else(|err: CopyError| panic!("copy view validated at prepare time: {err}"));
}

/// dimension fastest). The view must have been validated against its storage.
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

    #[test]
    fn buffers_are_placed_4gib_apart() {
        assert_eq!(sim_address(0, 0), 1 << 32);
        assert_eq!(sim_address(1, 3), (2 << 32) + 24);
        assert_eq!(
            sim_address(0, MAX_BUFFER_ELEMENTS - 1) + 8,
            sim_address(1, 0)
        );
    }

    #[test]
    fn sim_mem_reads_and_writes_real_data_and_reports_every_access() {
        let mut a = vec![1.0, 2.0, 3.0];
        let mut b = vec![0.0; 3];
        let mut recorder = Recorder::default();
        {
            let mut m = SimMem::new([&mut a, &mut b], &mut recorder);
            let v = m.load(0, 2);
            m.store(1, 1, v);
        }
        assert_eq!(b, [0.0, 3.0, 0.0]);
        assert_eq!(
            recorder.0,
            [('L', (1 << 32) + 16, 8), ('S', (2 << 32) + 8, 8)]
        );
    }

    #[test]
    fn copy_view_is_the_same_on_both_accessors() {
        let shape = [3, 2];
        let strides = [1, 3];
        let view = CopyView {
            shape: &shape,
            strides: &strides,
            offset: 0,
        };
        let mut src: Vec<f64> = (0..6).map(f64::from).collect();
        let mut real_dst = vec![-1.0; 8];
        RealMem::new([&mut src, &mut real_dst]).copy_view(0, &view, 1, 1);
        let mut sim_dst = vec![-1.0; 8];
        let mut recorder = Recorder::default();
        SimMem::new([&mut src, &mut sim_dst], &mut recorder).copy_view(0, &view, 1, 1);
        assert_eq!(real_dst, [-1.0, 0.0, 3.0, 1.0, 4.0, 2.0, 5.0, -1.0]);
        assert_eq!(real_dst, sim_dst);
        assert_eq!(recorder.0.len(), 12);
        assert_eq!(recorder.0[2], ('L', (1 << 32) + 24, 8));
    }

    #[test]
    fn sum_span_is_an_ascending_read_on_both_accessors() {
        for len in [0, 1, 15, 16, 17, 100] {
            let mut data: Vec<f64> = (0..len + 3).map(|i| (i % 7) as f64).collect();
            let real = RealMem::new([&mut data]).sum_span(0, len);
            let mut recorder = Recorder::default();
            let simulated = SimMem::new([&mut data], &mut recorder).sum_span(0, len);
            assert_eq!(real, simulated);
            assert_eq!(real, data[..len].iter().sum::<f64>());
            let want: Vec<_> = (0..len).map(|k| ('L', sim_address(0, k), 8)).collect();
            assert_eq!(recorder.0, want);
        }
    }

    #[test]
    fn view_indices_follow_c_order_with_negative_strides() {
        let mut seen = Vec::new();
        for_each_view_index(&[2, 3], &[-3, 1], 3, |i| seen.push(i));
        assert_eq!(seen, [3, 4, 5, 0, 1, 2]);
        seen.clear();
        for_each_view_index(&[], &[], 7, |i| seen.push(i));
        assert_eq!(seen, [7]);
        seen.clear();
        for_each_view_index(&[4, 0], &[1, 1], 0, |i| seen.push(i));
        assert!(seen.is_empty());
    }

    #[test]
    fn placed_buffers_report_their_table_entry_once_per_run_and_per_single_access() {
        let mut rows: Vec<Box<[f64]>> = vec![vec![1.0, 2.0].into(), vec![3.0, 4.0, 5.0].into()];
        let placement = Placement {
            bases: vec![1000, 5000],
            table: Some(64),
        };
        let mut recorder = Recorder::default();
        let mut acc = [0.0; ACCUMULATORS];
        {
            let mut m = SimMem::placed(&mut rows, &mut recorder, &placement);
            m.sum_run(1, 0, 1, 3, &mut acc);
            assert_eq!(m.load(0, 1), 2.0);
        }
        assert_eq!(fold_sum(&acc), 12.0);
        let want = [
            ('L', 64 + 16, 8),
            ('L', 5000, 8),
            ('L', 5008, 8),
            ('L', 5016, 8),
            ('L', 64, 8),
            ('L', 1008, 8),
        ];
        assert_eq!(recorder.0, want);
        let mut real = [0.0; ACCUMULATORS];
        RealMem::table(&mut rows).sum_run(1, 0, 1, 3, &mut real);
        assert_eq!(real, acc);
    }

    fn fold_sum(acc: &[f64; ACCUMULATORS]) -> f64 {
        acc.iter().sum()
    }

    /// Data whose partial sums identify exactly which elements went to which accumulator.
    fn distinct_data(len: usize) -> Vec<f64> {
        (0..len)
            .map(|i| (1u64 << (i % 50)) as f64 + i as f64)
            .collect()
    }

    proptest! {
        #[test]
        fn real_sum_runs_equal_the_reference_order(
            len in 1usize..300,
            start_frac in 0.0f64..1.0,
            step in -9isize..=9,
            count_frac in 0.0f64..=1.0,
        ) {
            let start = ((len as f64 * start_frac) as usize).min(len - 1);
            // The longest run from `start` with this step that stays inside the buffer.
            let room = match step {
                0 => 40,
                s if s > 0 => (len - 1 - start) / s as usize + 1,
                s => start / s.unsigned_abs() + 1,
            };
            let count = (room as f64 * count_frac) as usize;
            let mut data = distinct_data(len);
            let mut real = [0.5; ACCUMULATORS];
            RealMem::new([&mut data]).sum_run(0, start, step, count, &mut real);
            let mut reference = [0.5; ACCUMULATORS];
            let mut recorder = Recorder::default();
            SimMem::new([&mut data], &mut recorder).sum_run(0, start, step, count, &mut reference);
            prop_assert_eq!(real, reference);
            let want: Vec<_> = (0..count)
                .map(|k| ('L', sim_address(0, (start as isize + k as isize * step) as usize), 8))
                .collect();
            prop_assert_eq!(recorder.0, want);
        }

        #[test]
        fn real_move_runs_equal_the_reference_order(
            src_step in 1usize..6,
            dst_step in 1usize..6,
            src_start in 0usize..20,
            dst_start in 0usize..20,
            count in 0usize..40,
        ) {
            let mut src = distinct_data(src_start + count * src_step + 1);
            let mut real = vec![-1.0; dst_start + count * dst_step + 1];
            let mut reference = real.clone();
            RealMem::new([&mut src, &mut real])
                .move_run(0, src_start, src_step, 1, dst_start, dst_step, count);
            let mut recorder = Recorder::default();
            SimMem::new([&mut src, &mut reference], &mut recorder)
                .move_run(0, src_start, src_step, 1, dst_start, dst_step, count);
            prop_assert_eq!(&real, &reference);
            let want: Vec<_> = (0..count)
                .flat_map(|k| {
                    [
                        ('L', sim_address(0, src_start + k * src_step), 8),
                        ('S', sim_address(1, dst_start + k * dst_step), 8),
                    ]
                })
                .collect();
            prop_assert_eq!(recorder.0, want);
        }
    }
}
