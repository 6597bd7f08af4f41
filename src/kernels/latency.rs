//! `chase bytes [seed] [line]`: the working-set latency pointer chase (lmbench's lat_mem_rd,
//! Drepper's "What every programmer should know about memory" curve).
//!
//! The buffer holds `bytes / line` slots, one element at the start of each cache line (slot s at
//! element `s · line/8`). The slots are linked into one random cycle,
//! [`crate::kernels::common::cyclic_permutation`]`(slots, seed)`; slot s's element holds the
//! element index of slot `next[s]` (as raw bits). One run starts at slot 0 and follows the
//! chain for exactly `slots` dependent loads, visiting every line once; the time per load is the
//! latency of the level the working set fits in. Checksum: the sum of the element indices read.

use crate::cache::AccessSink;
use crate::kernels::access::{Mem, RealMem, SimMem};
use crate::kernels::common::{
    cell_to_link, checked_elements, cyclic_permutation, int_param, invalid, link_to_cell,
    size_param,
};
use crate::kernels::spec::{Entry, Prepared, StridePattern};
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
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

pub(crate) static CHASE: Entry = Entry {
    spec: KernelSpec {
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
    },
    plan,
    pattern,
    simulation_note: None,
    accesses: None,
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

/// The chase order: from element 0, `slots` dependent loads, each reading the next element's
/// index. Returns the sum of the indices read.
#[inline(always)]
pub fn chase<M: Mem>(m: &mut M, slots: usize) -> f64 {
    let mut at = 0;
    let mut total: u64 = 0;
    for _ in 0..slots {
        at = cell_to_link(m.load(0, at));
        total += at as u64;
    }
    total as f64
}

struct Chase {
    slots: usize,
    x: AlignedBuffer,
    expected: f64,
}

fn prepare(params: &Params, options: PrepareOptions) -> Prepared {
    let (slots, spacing) = geometry(params)?;
    let seed = int_param("chase", params, "seed")?;
    let mut x = AlignedBuffer::zeroed(slots * spacing, options.huge_pages)?;
    for (slot, next) in cyclic_permutation(slots, seed).into_iter().enumerate() {
        x[slot * spacing] = link_to_cell(next * spacing);
    }
    // One full cycle reads every slot's index once: spacing · (0 + 1 + … + slots-1).
    let expected = (spacing as u64 * (slots as u64 * (slots as u64 - 1) / 2)) as f64;
    Ok(Box::new(Chase { slots, x, expected }))
}

impl Instance for Chase {
    fn work(&self) -> Work {
        Work::reads_f64(self.slots as u64)
    }

    fn run(&mut self) -> f64 {
        chase(&mut RealMem::new([&mut self.x]), self.slots)
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        chase(&mut SimMem::new([&mut self.x], sink), self.slots);
    }
}

/// A random cycle has no stride for the set model.
fn pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    geometry(params)?;
    Ok(None)
}
