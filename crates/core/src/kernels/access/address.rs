//! [`AddressMem`]: the accesses [`super::SimMem`] reports, at the same simulated addresses and
//! in the same order, without any data: loads return 0 and stores are dropped. Only kernels
//! whose address stream does not depend on the values they read may use it
//! (`tests/integration/address_only.rs` holds each one's stream to its real one), so a simulation of a
//! 128 MiB matrix neither fills nor faults in 128 MiB of host memory.

#![forbid(unsafe_code)]

use std::marker::PhantomData;

use stridelab_copy::Planner;

use super::sim::{ReplayMem, replay_copy_view};
use super::{ACCUMULATORS, CopyView, Element, Mem, Strided, element_address};
use crate::cache::{AccessSink, Walk};

/// Reports the loads and stores of `N` buffers of `T` (their lengths only) to a sink.
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

    /// The simulated addresses of `side`, one element apart per step.
    fn walk(side: Strided) -> Walk {
        Walk {
            addr: element_address::<T>(side.buffer, side.start),
            step: side.step as i64 * i64::from(T::BYTES),
        }
    }
}

impl<T: Element, const N: usize> Mem for AddressMem<'_, T, N> {
    type Elem = T;

    #[inline]
    fn load(&mut self, buffer: usize, index: usize) -> T {
        self.sink
            .load(element_address::<T>(buffer, index), T::BYTES);
        T::default()
    }

    #[inline]
    fn store(&mut self, buffer: usize, index: usize, _value: T) {
        self.sink
            .store(element_address::<T>(buffer, index), T::BYTES);
    }

    /// The provided order as one call, without the accumulation (nothing is read): the
    /// simulator takes row-order runs line by line.
    #[inline]
    fn sum_run(&mut self, run: Strided, count: usize, _acc: &mut [f64; ACCUMULATORS]) {
        let walk = Self::walk(run);
        self.sink
            .load_run(walk.addr, walk.step, count as u64, T::BYTES);
    }

    /// The provided order as one call (nothing moves): the simulator takes it in one loop.
    #[inline]
    fn move_run(&mut self, from: Strided, to: Strided, count: usize) {
        let (from, to) = (Self::walk(from), Self::walk(to));
        self.sink.move_run(from, to, count as u64, T::BYTES);
    }

    fn copy_view(
        &mut self,
        planner: &Planner,
        src: usize,
        view: &CopyView<'_>,
        dst: usize,
        dst_start: usize,
    ) {
        let src_len = self.lens[src];
        replay_copy_view(self, planner, (src, src_len), view, (dst, dst_start));
    }
}

/// The copy engine's order replayed without data: nothing moves.
impl<T: Element, const N: usize> ReplayMem for AddressMem<'_, T, N> {
    fn moved_value(&mut self, _: usize, _: usize) -> T {
        T::default()
    }
    fn sink(&mut self) -> &mut dyn AccessSink {
        self.sink
    }
}
