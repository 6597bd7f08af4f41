//! The accessor every kernel's access order is written against, and its two implementations:
//! [`RealMem`] (plain loads and stores on the instance's buffers, for timed runs) and
//! [`SimMem`] (the same loads and stores, each also reported to an [`AccessSink`]).
//!
//! A kernel's order is one generic function `fn order<M: Mem>(m: &mut M, ...)`; `Instance::run`
//! calls it with a `RealMem`, `Instance::simulate` with a `SimMem`. The simulating accessor reads
//! and writes the real data too, so pointer chases follow the real (seeded) values.
//!
//! Simulated placement: element `i` of buffer `b` is at byte address `(b+1)·2^32 + 8·i`
//! ([`sim_address`]); every access is 8 bytes. Buffers are capped at [`MAX_BUFFER_ELEMENTS`]
//! so no two buffers overlap in that address space.

use crate::cache::AccessSink;
use crate::kernels::copy::{CopyError, copy_into_contiguous};

/// Bytes per element: every kernel works on f64.
pub const ELEMENT_BYTES: u32 = 8;

/// The largest buffer a kernel may use (2^29 f64 = 4 GiB): the distance between two buffers in
/// the simulated address space.
pub const MAX_BUFFER_ELEMENTS: usize = 1 << 29;

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

/// Loads and stores of f64 elements by (buffer, index): the only way kernels touch memory.
///
/// Indices are validated by the kernel at prepare time; an out-of-range index is a bug in the
/// kernel and panics (it is never reachable from user input).
pub trait Mem {
    /// Reads element `index` of buffer `buffer`.
    fn load(&mut self, buffer: usize, index: usize) -> f64;
    /// Writes element `index` of buffer `buffer`.
    fn store(&mut self, buffer: usize, index: usize, value: f64);
    /// Copies `view` of buffer `src` into `dst[dst_start..]` in logical C order, through the
    /// copy engine on real memory. The simulated stream is the engine's reference order (for
    /// each element in C order: load the source element, store the destination element): the
    /// fast engine may block its loops differently, which this stream does not model.
    fn copy_view(&mut self, src: usize, view: &CopyView<'_>, dst: usize, dst_start: usize);
    /// Copies elements `0..len` of buffer `src` to `0..len` of buffer `dst` with the platform
    /// copy on real memory. Simulated stream: for k ascending, load src[k], store dst[k]
    /// (the platform copy moves whole vectors, which touches the same lines in the same order).
    fn copy_span(&mut self, src: usize, dst: usize, len: usize);
}

/// Plain accesses on `N` real buffers.
pub struct RealMem<'a, const N: usize> {
    buffers: [&'a mut [f64]; N],
}

impl<'a, const N: usize> RealMem<'a, N> {
    pub fn new(buffers: [&'a mut [f64]; N]) -> Self {
        Self { buffers }
    }

    /// Buffer `src` for reading and buffer `dst` for writing (they must differ).
    fn pair(&mut self, src: usize, dst: usize) -> (&[f64], &mut [f64]) {
        assert_ne!(src, dst, "a copy needs two distinct buffers");
        if src < dst {
            let (low, high) = self.buffers.split_at_mut(dst);
            (&*low[src], &mut *high[0])
        } else {
            let (low, high) = self.buffers.split_at_mut(src);
            (&*high[0], &mut *low[dst])
        }
    }
}

impl<const N: usize> Mem for RealMem<'_, N> {
    #[inline(always)]
    fn load(&mut self, buffer: usize, index: usize) -> f64 {
        self.buffers[buffer][index]
    }

    #[inline(always)]
    fn store(&mut self, buffer: usize, index: usize, value: f64) {
        self.buffers[buffer][index] = value;
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
        destination[..len].copy_from_slice(&source[..len]);
    }
}

/// The real accesses of [`RealMem`], each also reported to a sink at its simulated address.
pub struct SimMem<'a, 's, const N: usize> {
    real: RealMem<'a, N>,
    sink: &'s mut dyn AccessSink,
}

impl<'a, 's, const N: usize> SimMem<'a, 's, N> {
    pub fn new(buffers: [&'a mut [f64]; N], sink: &'s mut dyn AccessSink) -> Self {
        Self {
            real: RealMem::new(buffers),
            sink,
        }
    }
}

impl<const N: usize> Mem for SimMem<'_, '_, N> {
    #[inline]
    fn load(&mut self, buffer: usize, index: usize) -> f64 {
        let value = self.real.load(buffer, index);
        self.sink.load(sim_address(buffer, index), ELEMENT_BYTES);
        value
    }

    #[inline]
    fn store(&mut self, buffer: usize, index: usize, value: f64) {
        self.real.store(buffer, index, value);
        self.sink.store(sim_address(buffer, index), ELEMENT_BYTES);
    }

    fn copy_view(&mut self, src: usize, view: &CopyView<'_>, dst: usize, dst_start: usize) {
        let mut target = dst_start;
        for_each_view_index(view.shape, view.strides, view.offset, |index| {
            let value = self.load(src, index);
            self.store(dst, target, value);
            target += 1;
        });
    }

    fn copy_span(&mut self, src: usize, dst: usize, len: usize) {
        for index in 0..len {
            let value = self.load(src, index);
            self.store(dst, index, value);
        }
    }
}

/// Calls `visit` with the storage index of every element of a view, in logical C order (last
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
}
