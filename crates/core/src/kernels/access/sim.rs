//! [`SimMem`]: the accesses of [`RealMem`], each also reported to an [`AccessSink`] at its
//! simulated address, in the order of [`Mem`]'s provided methods; and the replay of the copy
//! engine's order that the simulating accessors share ([`replay_copy_view`]).
//!
//! Buffers behind a pointer table (a jagged array's rows, [`RealMem::table`]) are placed by
//! the kernel ([`Placement`]): reaching buffer `b` then reads its 16-byte table entry, which
//! `SimMem` reports as an 8-byte load at `table + 16·b` once per run and once per single load
//! or store, and buffer `b` starts at `bases[b]` (the kernel's model of where its allocator
//! put it).

#![forbid(unsafe_code)]

use stridelab_copy::order::{OrderSink, engine_order};
use stridelab_copy::{CopyError, Planner};

use super::{
    ACCUMULATORS, Buffers, CopyView, ELEMENT_BYTES, Element, Mem, RealMem, STAGE_BUFFER, Strided,
    element_address, sim_address,
};
use crate::cache::{AccessSink, Walk};

/// Where a kernel with many buffers placed them in the simulated address space: buffer `b`
/// starts at `bases[b]`; with a `table`, reaching buffer `b` reads its 16-byte entry at
/// `table + 16·b` first (see the module doc). Kernels without one use
/// [`super::element_address`].
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

impl<'a, 's, T: Element, const N: usize> SimMem<'s, [&'a mut [T]; N]> {
    pub fn new(buffers: [&'a mut [T]; N], sink: &'s mut dyn AccessSink) -> Self {
        Self {
            real: RealMem::new(buffers),
            sink,
            placement: None,
        }
    }
}

impl<'t, 's, T: Element> SimMem<'s, &'t mut [Box<[T]>]> {
    /// Separately allocated buffers reached through their table, at the kernel's own
    /// `placement` instead of [`super::element_address`].
    pub fn placed(
        buffers: &'t mut [Box<[T]>],
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

impl<B: Buffers> SimMem<'_, B> {
    /// The simulated address of element `index` of buffer `buffer`.
    #[inline]
    fn address(&self, buffer: usize, index: usize) -> u64 {
        match self.placement {
            None => element_address::<B::Elem>(buffer, index),
            Some(placement) => placement.bases[buffer] + index as u64 * u64::from(Self::BYTES),
        }
    }

    const BYTES: u32 = B::Elem::BYTES;

    /// Whether buffers are reached through a pointer table.
    fn has_table(&self) -> bool {
        self.placement.is_some_and(|p| p.table.is_some())
    }

    /// Reports the read of buffer `buffer`'s pointer-table entry, if it has one.
    #[inline]
    fn table_load(&mut self, buffer: usize) {
        if let Some(table) = self.placement.and_then(|p| p.table) {
            self.sink.load(table + 16 * buffer as u64, 8);
        }
    }

    /// Reports a load of element `index` (no table entry).
    #[inline]
    fn element_load(&mut self, buffer: usize, index: usize) -> B::Elem {
        let value = self.real.load(buffer, index);
        self.sink.load(self.address(buffer, index), Self::BYTES);
        value
    }
}

impl<B: Buffers> Mem for SimMem<'_, B> {
    type Elem = B::Elem;

    #[inline]
    fn load(&mut self, buffer: usize, index: usize) -> B::Elem {
        self.table_load(buffer);
        self.element_load(buffer, index)
    }

    #[inline]
    fn store(&mut self, buffer: usize, index: usize, value: B::Elem) {
        self.table_load(buffer);
        self.real.store(buffer, index, value);
        self.sink.store(self.address(buffer, index), Self::BYTES);
    }

    /// One table entry per run (as the real run reads it once), then the elements in order.
    #[inline]
    fn sum_run(&mut self, run: Strided, count: usize, acc: &mut [f64; ACCUMULATORS]) {
        self.table_load(run.buffer);
        for k in 0..count {
            acc[k % ACCUMULATORS] += self.element_load(run.buffer, run.at(k)).to_f64();
        }
    }

    /// The real moves, then the provided order as one call to the sink (element by element
    /// where pointer-table loads come between).
    #[inline]
    fn move_run(&mut self, from: Strided, to: Strided, count: usize) {
        if self.has_table() {
            for k in 0..count {
                let value = self.load(from.buffer, from.at(k));
                self.store(to.buffer, to.at(k), value);
            }
            return;
        }
        self.real.move_run(from, to, count);
        let walk = |side: Strided| Walk {
            addr: self.address(side.buffer, side.start),
            step: side.step as i64 * i64::from(Self::BYTES),
        };
        let (from, to) = (walk(from), walk(to));
        self.sink.move_run(from, to, count as u64, Self::BYTES);
    }

    fn copy_view(
        &mut self,
        planner: &Planner,
        src: usize,
        view: &CopyView<'_>,
        dst: usize,
        dst_start: usize,
    ) {
        let src_len = self.real.data(src).len();
        replay_copy_view(self, planner, (src, src_len), view, (dst, dst_start));
    }
}

/// A simulating accessor the copy engine's order can be replayed on ([`replay_copy_view`]).
pub(super) trait ReplayMem: Mem {
    /// The value a store of the engine moves from element `index` of `src`, read without a
    /// simulated access (it travels in registers or the stage).
    fn moved_value(&mut self, src: usize, index: usize) -> Self::Elem;
    /// Where the stage's accesses are reported.
    fn sink(&mut self) -> &mut dyn AccessSink;
}

impl<B: Buffers> ReplayMem for SimMem<'_, B> {
    fn moved_value(&mut self, src: usize, index: usize) -> B::Elem {
        self.real.load(src, index)
    }
    fn sink(&mut self) -> &mut dyn AccessSink {
        self.sink
    }
}

/// Replays the copy engine's order with `planner` for `view` of buffer `src` (`src_len`
/// elements) into `dst` from `dst_start` on `mem`: its plan, panels, tiles, 8×8 blocks and L1 stage (the stage at
/// simulated buffer [`STAGE_BUFFER`]), without the carried lines and prefetches.
pub(super) fn replay_copy_view<M: ReplayMem>(
    mem: &mut M,
    planner: &Planner,
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
    assert_eq!(
        M::Elem::BYTES,
        ELEMENT_BYTES,
        "the copy engine's order is modelled for 8-byte elements"
    );
    let mut replay = Replay { mem, src, dst };
    engine_order(
        planner,
        src_len,
        view.shape,
        view.strides,
        view.offset,
        dst_start,
        &mut replay,
    )
    .unwrap_or_else(|err: CopyError| panic!("copy view validated at prepare time: {err}"));
}
