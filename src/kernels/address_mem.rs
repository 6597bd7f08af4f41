//! [`AddressMem`]: the accessor of a simulation that needs only addresses. It reports every
//! load and store [`super::access::SimMem`] would report, at the same simulated addresses and
//! in the same order, but holds no data: loads return 0 and stores are dropped.
//!
//! Only kernels whose address stream does not depend on the values they read may use it (row
//! and column sums, transposes): a pointer chase follows its data and keeps `SimMem`. Such a
//! kernel, prepared with `PrepareOptions::simulate_only`, allocates no buffers at all, so a
//! simulation of a 128 MiB matrix neither fills nor faults in 128 MiB of host memory. The test
//! `tests/address_only.rs` holds every kernel's address-only stream to its real one.

use crate::cache::AccessSink;
use crate::kernels::access::{
    ACCUMULATORS, CopyView, ELEMENT_BYTES, Mem, STAGE_BUFFER, sim_address,
};
use crate::kernels::copy::CopyError;
use crate::kernels::copy::order::{OrderSink, engine_order};

/// Reports accesses at [`sim_address`] without touching memory; `lens[b]` is buffer `b`'s
/// length in elements (the copy engine plans from its source's length).
pub struct AddressMem<'s, const N: usize> {
    sink: &'s mut dyn AccessSink,
    lens: [usize; N],
}

impl<'s, const N: usize> AddressMem<'s, N> {
    pub fn new(lens: [usize; N], sink: &'s mut dyn AccessSink) -> Self {
        Self { sink, lens }
    }
}

impl<const N: usize> Mem for AddressMem<'_, N> {
    #[inline]
    fn load(&mut self, buffer: usize, index: usize) -> f64 {
        self.sink.load(sim_address(buffer, index), ELEMENT_BYTES);
        0.0
    }

    #[inline]
    fn store(&mut self, buffer: usize, index: usize, _value: f64) {
        self.sink.store(sim_address(buffer, index), ELEMENT_BYTES);
    }

    /// The provided order, without the accumulation (nothing is read).
    #[inline]
    fn sum_run(
        &mut self,
        buffer: usize,
        start: usize,
        step: isize,
        count: usize,
        _acc: &mut [f64; ACCUMULATORS],
    ) {
        // One call for the run: the simulator takes row-order runs line by line.
        let first = sim_address(buffer, 0) + start as u64 * u64::from(ELEMENT_BYTES);
        let step = step as i64 * i64::from(ELEMENT_BYTES);
        self.sink.load_run(first, step, count as u64, ELEMENT_BYTES);
    }

    #[inline]
    fn load_f32(&mut self, buffer: usize, index: usize) -> f32 {
        self.sink.load(sim_address(buffer, 0) + index as u64 * 4, 4);
        0.0
    }

    fn copy_view(&mut self, src: usize, view: &CopyView<'_>, dst: usize, dst_start: usize) {
        /// The engine's accesses, reported (`SimMem::copy_view`'s replay without the data).
        struct Replay<'m, 's, const N: usize> {
            mem: &'m mut AddressMem<'s, N>,
            src: usize,
            dst: usize,
        }
        impl<const N: usize> OrderSink for Replay<'_, '_, N> {
            fn load(&mut self, src: usize) {
                self.mem.load(self.src, src);
            }
            fn store(&mut self, dst: usize, _src: usize) {
                self.mem.store(self.dst, dst, 0.0);
            }
            fn stage_load(&mut self, index: usize) {
                let address = sim_address(STAGE_BUFFER, index);
                self.mem.sink.load(address, ELEMENT_BYTES);
            }
            fn stage_store(&mut self, index: usize) {
                let address = sim_address(STAGE_BUFFER, index);
                self.mem.sink.store(address, ELEMENT_BYTES);
            }
        }
        let src_len = self.lens[src];
        let mut replay = Replay {
            mem: self,
            src,
            dst,
        };
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

    fn copy_span(&mut self, src: usize, dst: usize, len: usize) {
        for index in 0..len {
            self.load(src, index);
            self.store(dst, index, 0.0);
        }
    }
}
