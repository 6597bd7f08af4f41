//! `chase bytes [seed] [line]`: the working-set latency pointer chase (lmbench's lat_mem_rd,
//! Drepper's "What every programmer should know about memory" curve).
//!
//! The buffer holds `bytes / line` slots, one element at the start of each cache line (slot s at
//! element `s · line/8`). The slots are linked into one random cycle,
//! [`crate::kernels::common::cyclic_permutation`]`(slots, seed)`; slot s's element holds the
//! element index of slot `next[s]` (as raw bits). The time per load is the latency of the level
//! the working set fits in.
//!
//! Runs: the cycle is cut into `K = ⌈slots / MAX_HOPS_PER_RUN⌉` consecutive segments of
//! ⌊slots/K⌋ or ⌈slots/K⌉ hops, and run r follows segment r mod K, so a run makes at most
//! [`MAX_HOPS_PER_RUN`] dependent loads (≈ 30 ms at a DRAM latency of 120 ns) whatever the working
//! set, and K consecutive runs visit every line once. Up to `MAX_HOPS_PER_RUN` lines (16 MiB of
//! 64 B lines) K = 1: one run is the whole cycle from slot 0. Checksum: the sum of the element
//! indices read, compared with the segment's (computed when the instance is prepared); a run
//! that read its segment right returns the whole cycle's sum, so every run's checksum is one
//! number.
//!
//! The buffer always asks for transparent huge pages: the chase measures cache latency, and on
//! 4 KiB pages every hop past the DTLB's reach would add a page walk (the report marks both
//! reaches).

use crate::cache::AccessSink;
use crate::kernels::access::{Mem, RealMem, SimMem};
use crate::kernels::common::{
    cell_to_link, checked_elements, cyclic_permutation, int_param, invalid, link_to_cell,
    size_param,
};
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::mem::AlignedBuffer;

const CHASE_PARAMS: [ParamSpec; 3] = [
    ParamSpec::int(
        "bytes",
        8,
        1 << 32,
        None,
        "working-set size in bytes (a multiple of line; K, M, G suffixes)",
    ),
    ParamSpec::int(
        "seed",
        0,
        u64::MAX,
        Some("1"),
        "seed of the random cyclic order (splitmix64 + Sattolo)",
    ),
    ParamSpec::int(
        "line",
        8,
        4096,
        Some("64"),
        "bytes between slots: the cache line size (a power of two)",
    ),
];

pub(crate) const CHASE: KernelSpec = KernelSpec {
    name: "chase",
    family: Family::Latency,
    params: &CHASE_PARAMS,
    summary: "A dependent pointer chase, one element per line of a working set: load latency against size.",
    example: "bytes=1M",
    explanation: "A dependent pointer chase through one element per cache line of a working \
                  set, in a random cyclic order so neither the prefetcher nor memory-level \
                  parallelism can help: each load waits for the previous one. The time per \
                  load steps up as the working set outgrows L1, L2 and the last-level cache \
                  — the latency of each level, read off the plateaus.",
    prepare,
    plan,
    pattern,
    simulation_note: None,
    accesses: None,
    simulate: SimStart::Warm,
};

/// Number of slots and the elements between them.
fn geometry(params: &Params) -> Result<(usize, usize), KernelError> {
    let bytes = size_param("chase", params, "bytes")?;
    let line = size_param("chase", params, "line")?;
    if !line.is_power_of_two() {
        return Err(invalid("line", format!("{line} is not a power of two")));
    }
    if bytes % line != 0 {
        return Err(invalid(
            "bytes",
            format!("{bytes} is not a multiple of the line size {line}"),
        ));
    }
    checked_elements("bytes", &[bytes / 8])?;
    Ok((bytes / line, line / 8))
}

fn plan(params: &Params) -> Result<Vec<usize>, KernelError> {
    let (slots, spacing) = geometry(params)?;
    Ok(vec![slots * spacing])
}

/// Most dependent loads one run makes (see the module doc): 2^18, a few tens of milliseconds
/// from DRAM, so the far points of the working-set curve cost no more than the near ones.
pub const MAX_HOPS_PER_RUN: usize = 1 << 18;

/// The chase order: from element `start`, `hops` dependent loads, each reading the next
/// element's index. Returns the sum of the indices read.
#[inline(always)]
pub fn chase<M: Mem<Elem = f64>>(m: &mut M, start: usize, hops: usize) -> u64 {
    let mut at = start;
    let mut total: u64 = 0;
    for _ in 0..hops {
        at = cell_to_link(m.load(0, at));
        total += at as u64;
    }
    total
}

/// One run's part of the cycle: where it starts, how many hops, the sum of the indices read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    start: usize,
    hops: usize,
    sum: u64,
}

/// Segments a cycle of `slots` is cut into: ⌈slots / MAX_HOPS_PER_RUN⌉.
fn segment_count(slots: usize) -> usize {
    slots.div_ceil(MAX_HOPS_PER_RUN).max(1)
}

struct Chase {
    slots: usize,
    x: AlignedBuffer,
    expected: f64,
    segments: Vec<Segment>,
    /// The segment the next run follows.
    next: usize,
}

fn prepare(params: &Params, options: &PrepareOptions) -> Prepared {
    let (slots, spacing) = geometry(params)?;
    let seed = int_param("chase", params, "seed")?;
    let mut x = AlignedBuffer::zeroed_shifted(slots * spacing, true, options.shift_of(0))?;
    for (slot, next) in cyclic_permutation(slots, seed).into_iter().enumerate() {
        x[slot * spacing] = link_to_cell(next * spacing);
    }
    // One full cycle reads every slot's index once: spacing · (0 + 1 + … + slots-1).
    let expected = (spacing as u64 * (slots as u64 * (slots as u64 - 1) / 2)) as f64;
    let count = segment_count(slots);
    let mut segments = Vec::with_capacity(count);
    let mut at = 0;
    for k in 0..count {
        let hops = (k + 1) * slots / count - k * slots / count;
        let start = at;
        let mut sum = 0u64;
        for _ in 0..hops {
            at = cell_to_link(x[at]);
            sum += at as u64;
        }
        segments.push(Segment { start, hops, sum });
    }
    Ok(Box::new(Chase {
        slots,
        x,
        expected,
        segments,
        next: 0,
    }))
}

impl Chase {
    /// The segment the next run follows (and moves on to the one after it).
    fn take_segment(&mut self) -> Segment {
        let segment = self.segments[self.next];
        self.next = (self.next + 1) % self.segments.len();
        segment
    }

    /// A run's checksum: the whole cycle's sum when the segment was read right.
    fn checksum(&self, segment: Segment, sum: u64) -> f64 {
        if sum == segment.sum {
            self.expected
        } else {
            sum as f64
        }
    }
}

impl Instance for Chase {
    fn work(&self) -> Work {
        // Segments differ by at most one hop: the mean is exact to 1 in 2^17.
        Work::reads_f64((self.slots / self.segments.len()) as u64)
    }

    fn run(&mut self) -> f64 {
        let segment = self.take_segment();
        let sum = chase(
            &mut RealMem::new([&mut self.x]),
            segment.start,
            segment.hops,
        );
        self.checksum(segment, sum)
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let segment = self.take_segment();
        chase(
            &mut SimMem::new([&mut self.x], sink),
            segment.start,
            segment.hops,
        );
    }

    /// Every segment once, from the next run's: the whole cycle, as the timed runs have walked
    /// it before any sample; the next run's segment stays the next.
    fn simulate_warm_up(&mut self, sink: &mut dyn AccessSink) {
        let mut mem = SimMem::new([&mut self.x], sink);
        for k in 0..self.segments.len() {
            let segment = self.segments[(self.next + k) % self.segments.len()];
            chase(&mut mem, segment.start, segment.hops);
        }
    }
}

/// A random cycle has no stride for the set model.
fn pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    geometry(params)?;
    Ok(None)
}
