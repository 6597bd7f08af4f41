//! `conflict stride count [reps] [mode=thr|lat] [seed]`: the power-of-two stride conflict probe.
//!
//! K = `count` slots at x[k·stride] (stride in elements). Orders:
//! - `thr`: for r in 0..reps, for k in 0..count: read x[k·stride]; the k-th read of each
//!   repetition goes to accumulator `k mod 8` (independent loads: throughput).
//! - `lat`: the slots are linked into one random cycle,
//!   [`crate::kernels::common::cyclic_permutation`]`(count, seed)`; slot k's element holds the
//!   element index of slot `next[k]` (raw bits). From slot 0, `reps·count` dependent loads,
//!   each reading the next index: a full cycle per repetition (latency).
//!
//! Once K exceeds the ways of a cache and every slot maps to the same few sets (a stride that
//! is a multiple of sets × line), the slots evict each other: conflict misses although the K
//! lines would fit easily. Sweeps pair each stride with stride ± 1, which moves the slots into
//! the next set every 8 slots (about K/8 sets: enough where a set has at least 8 ways) and
//! isolates the effect from TLB misses (which the ±1 controls share).

use crate::cache::AccessSink;
use crate::kernels::access::{Mem, RealMem, SimMem, Strided};
use crate::kernels::common::{
    ACCUMULATORS, cell_to_link, cell_value, checked_elements, cyclic_permutation, fold, int_param,
    invalid, link_to_cell, size_param, text_param,
};
use crate::kernels::spec::SimStart;
use crate::kernels::spec::{
    Family, Instance, KernelError, KernelSpec, ParamSpec, Params, PrepareOptions, Work,
};
use crate::kernels::spec::{Prepared, StridePattern};
use crate::mem::AlignedBuffer;

const PARAMS: [ParamSpec; 5] = [
    ParamSpec::int(
        "stride",
        1,
        1 << 26,
        None,
        "distance between slots in elements of 8 B (512 = 4 KiB)",
    )
    .in_elements(),
    ParamSpec::int("count", 1, 1 << 20, None, "number of slots K"),
    ParamSpec::int(
        "reps",
        1,
        1 << 30,
        Some("100"),
        "passes over the K slots per run",
    ),
    ParamSpec::choice(
        "mode",
        &["thr", "lat"],
        Some("thr"),
        "thr = independent loads, lat = dependent pointer chase",
    ),
    ParamSpec::int(
        "seed",
        0,
        u64::MAX,
        Some("1"),
        "seed of the chase's random cyclic order (lat only)",
    ),
];

pub(crate) const CONFLICT: KernelSpec = KernelSpec {
    name: "conflict",
    family: Family::Conflict,
    params: &PARAMS,
    summary: "Reads K slots `stride` elements apart over and over: conflict misses once they share too few sets.",
    example: "stride=512 count=16 mode=lat",
    explanation: "Reads K slots placed stride elements apart, over and over. When stride·8 \
                  bytes is a multiple of sets × line (4096 B on a 64-set, 64 B-line L1) every \
                  slot maps to the same set, so once K exceeds the ways the slots evict each \
                  other and every read misses — although K lines would fit in the cache many \
                  times over. A stride one element longer or shorter moves each slot 8 B \
                  further along its line, so the slots step into the next set every 8 slots: \
                  K slots use about K/8 sets, enough for their lines where a set has at \
                  least 8 ways. These ±1 controls show what is the cache and what is the \
                  TLB.",
    prepare,
    plan,
    pattern,
    simulation_note: None,
    accesses: Some(accesses),
    simulate: SimStart::Cold,
};

/// Loads per run at most (keeps every checksum an exact integer in f64).
const MAX_LOADS: usize = 1 << 36;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Throughput,
    Latency,
}

#[derive(Debug, Clone, Copy)]
struct Probe {
    stride: usize,
    count: usize,
    reps: usize,
    mode: Mode,
}

impl Probe {
    fn from_params(params: &Params) -> Result<Self, KernelError> {
        let stride = size_param("conflict", params, "stride")?;
        let count = size_param("conflict", params, "count")?;
        let reps = size_param("conflict", params, "reps")?;
        let mode = match text_param("conflict", params, "mode")? {
            "lat" => Mode::Latency,
            _ => Mode::Throughput,
        };
        let probe = Self {
            stride,
            count,
            reps,
            mode,
        };
        probe.buffer_len()?;
        if count
            .checked_mul(reps)
            .is_none_or(|loads| loads > MAX_LOADS)
        {
            return Err(invalid(
                "reps",
                format!("reps · count must be at most {MAX_LOADS} loads per run"),
            ));
        }
        Ok(probe)
    }

    /// (count - 1)·stride + 1 elements: the last slot ends the buffer.
    fn buffer_len(&self) -> Result<usize, KernelError> {
        let span = checked_elements("stride", &[self.count - 1, self.stride])?;
        checked_elements("stride", &[span + 1])
    }
}

fn plan(params: &Params) -> Result<Vec<usize>, KernelError> {
    Ok(vec![Probe::from_params(params)?.buffer_len()?])
}

/// Loads of one run: `reps · count` (checked in [`Probe::from_params`]).
fn accesses(params: &Params) -> Result<u64, KernelError> {
    let probe = Probe::from_params(params)?;
    Ok(probe.reps as u64 * probe.count as u64)
}

/// The `thr` order.
#[inline(always)]
pub fn conflict_throughput<M: Mem>(m: &mut M, stride: usize, count: usize, reps: usize) -> f64 {
    let mut acc = [0.0; ACCUMULATORS];
    let slots = Strided::new(0, 0, stride as isize);
    for _ in 0..reps {
        m.sum_run(slots, count, &mut acc);
    }
    fold(&acc)
}

/// The `lat` order: `loads` dependent loads from element 0; returns the sum of indices read.
#[inline(always)]
pub fn conflict_latency<M: Mem<Elem = f64>>(m: &mut M, loads: usize) -> f64 {
    let mut at = 0;
    let mut total: u64 = 0;
    for _ in 0..loads {
        at = cell_to_link(m.load(0, at));
        // Wrapping, as in the expected value: both are the same integer mod 2^64.
        total = total.wrapping_add(at as u64);
    }
    total as f64
}

struct Conflict {
    probe: Probe,
    x: AlignedBuffer,
    expected: f64,
}

fn prepare(params: &Params, options: &PrepareOptions) -> Prepared {
    let probe = Probe::from_params(params)?;
    let mut x = AlignedBuffer::zeroed_shifted(
        probe.buffer_len()?,
        options.huge_pages,
        options.shift_of(0),
    )?;
    let (stride, count, reps) = (probe.stride, probe.count, probe.reps as u64);
    let expected = match probe.mode {
        Mode::Throughput => {
            let mut per_pass = 0.0;
            for slot in 0..count {
                x[slot * stride] = cell_value(slot * stride);
                per_pass += x[slot * stride];
            }
            reps as f64 * per_pass
        }
        Mode::Latency => {
            let seed = int_param("conflict", params, "seed")?;
            for (slot, next) in cyclic_permutation(count, seed).into_iter().enumerate() {
                x[slot * stride] = link_to_cell(next * stride);
            }
            // Each pass reads every slot's index once: stride · (0 + 1 + … + count-1).
            let per_pass = stride as u64 * (count as u64 * (count as u64 - 1) / 2);
            reps.wrapping_mul(per_pass) as f64
        }
    };
    Ok(Box::new(Conflict { probe, x, expected }))
}

fn probe<M: Mem<Elem = f64>>(m: &mut M, probe: Probe) -> f64 {
    match probe.mode {
        Mode::Throughput => conflict_throughput(m, probe.stride, probe.count, probe.reps),
        Mode::Latency => conflict_latency(m, probe.reps * probe.count),
    }
}

impl Instance for Conflict {
    fn work(&self) -> Work {
        let loads = (self.probe.reps * self.probe.count) as u64;
        Work::reads_f64(loads)
    }

    fn run(&mut self) -> f64 {
        probe(&mut RealMem::new([&mut self.x]), self.probe)
    }

    fn expected_checksum(&self) -> f64 {
        self.expected
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        probe(&mut SimMem::new([&mut self.x], sink), self.probe);
    }
}

fn pattern(params: &Params) -> Result<Option<StridePattern>, KernelError> {
    let probe = Probe::from_params(params)?;
    let slots = StridePattern::elements(0, probe.stride as isize, probe.count, "the K slots");
    Ok(Some(slots))
}
