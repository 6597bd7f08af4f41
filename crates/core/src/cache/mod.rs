//! Cache geometry, the set-associative simulator and the analytic set/GCD model.
//!
//! - [`geometry`]: what each level looks like and where that came from (sysfs, CPUID,
//!   `--cache` overrides, presets of real machines), with plausibility warnings.
//! - [`sim`]: a hierarchy of set-associative levels with cachegrind's semantics, four
//!   replacement policies and a compulsory/capacity/conflict split, by a fast engine or a
//!   plain reference one; either is an [`AccessSink`].
//! - [`prefetch`]: a hardware-prefetch model beside the simulator (next-line and stream
//!   prefetchers filling one level, counted without and with prefetch).
//! - [`tee`]: one access stream fed to the simulator and a model beside it.
//! - [`tlb`]: the data TLB's levels (CPUID, presets) and a simulator of it beside the caches.
//! - [`cpu`]: the CPU's model name, which names the machine beside its geometry.
//! - `model`: how many sets a stride touches (`S / gcd(s/L, S)`) and when conflicts start.
#![forbid(unsafe_code)]

/// A consumer of memory accesses: the simulator implements it, kernels feed it.
///
/// Addresses are byte addresses in the simulated address space; `len` is the access size in
/// bytes (an access that straddles two lines touches both).
pub trait AccessSink {
    fn load(&mut self, addr: u64, len: u32);
    fn store(&mut self, addr: u64, len: u32);

    /// A read-modify-write of one location by one instruction (x86 `add [mem], reg`).
    /// cachegrind merges such a read and write into one "modify" event and counts it as a
    /// single data read, so the default does the same.
    fn modify(&mut self, addr: u64, len: u32) {
        self.load(addr, len);
    }

    /// `count` loads of `len` bytes at `addr`, `addr + step`, `addr + 2·step`, … in that
    /// order (`step` in bytes, negative for a descending run). The default is one
    /// [`AccessSink::load`] each; a sink may take the run faster, with the same result.
    fn load_run(&mut self, addr: u64, step: i64, count: u64, len: u32) {
        for k in 0..count {
            self.load(addr.wrapping_add((k as i64).wrapping_mul(step) as u64), len);
        }
    }

    /// `count` element moves of `len` bytes: for k ascending, a load at `from.at(k)`, then a
    /// store at `to.at(k)` (a copy or transpose loop). The default is a
    /// [`AccessSink::load`] and an [`AccessSink::store`] each; a sink may take the moves
    /// faster, with the same result.
    fn move_run(&mut self, from: Walk, to: Walk, count: u64, len: u32) {
        for k in 0..count {
            self.load(from.at(k), len);
            self.store(to.at(k), len);
        }
    }
}

/// Addresses `addr + k·step` (bytes; a negative step descends): one side of
/// [`AccessSink::move_run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walk {
    pub addr: u64,
    pub step: i64,
}

impl Walk {
    /// Address `k`, wrapping as the address arithmetic of a run does.
    #[inline]
    pub fn at(&self, k: u64) -> u64 {
        self.addr
            .wrapping_add((k as i64).wrapping_mul(self.step) as u64)
    }
}

/// Where the simulated address space places buffer `buffer`: 4 GiB apart, from 4 GiB up, so
/// every buffer starts on a boundary of every set period and no two buffers overlap. Kernels
/// simulated through the accessor and `layout`'s simulated walks both place buffers here.
pub const fn buffer_base(buffer: usize) -> u64 {
    (buffer as u64 + 1) << 32
}

pub mod cpu;
pub mod geometry;
pub mod model;
pub mod prefetch;
pub mod sim;
pub mod tee;
pub mod tlb;
