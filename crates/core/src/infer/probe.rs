//! Timing probes for `stridelab infer`: small dependent pointer chases whose latency per access
//! reveals the cache geometry. This module only times; [`super::analysis`] interprets.
//!
//! Every probe is a *dependent* chase: each load's address is the value the previous load
//! returned, so the time per access is the latency of wherever the line lives, not a bandwidth.
//! A chase node stores the element index of the next node as the bit pattern of an `f64` in an
//! [`AlignedBuffer`] (2 MiB aligned); reading it back with `to_bits` is a plain integer load, so
//! no conversion sits on the critical path and no unsafe code is needed.
//!
//! The probes (a later cleanup may merge them with the catalogue's `conflict`/`chase` kernels):
//! - [`CapacityProbe`]: one random single cycle over the 64 B nodes of a working set of W bytes,
//!   visited chunk by chunk (64 KiB chunks in random order, nodes in random order inside) so TLB
//!   misses are amortised; huge pages requested — latency vs W shows one plateau per level.
//! - [`LinePairProbe`]: pairs of loads `A → A+s` where A walks 2 KiB blocks of a region inside
//!   the L2 in random order; the second load is free while `s` is below the line, a miss from it.
//! - [`ConflictProbe`]: K slots `j·S` visited in a random cycle — when they all fall into one L1
//!   set, latency jumps once K exceeds the ways. The control at stride `S + line` (one line
//!   rather than one element, so the control's slots land in K different sets for every way
//!   count — at `S + 8 B` eight slots share a line's set and a 4-way L1 would jump anyway)
//!   keeps everything else equal, so a jump it shares is not an L1 set conflict.
//! - [`TlbProbe`]: one line in each of K distinct 4 KiB pages, staggered over the L1 sets so the
//!   cache never conflicts — latency jumps once K exceeds the L1 data TLB. The control packs the
//!   same number of lines into consecutive lines (few pages): the jump must vanish there. (Huge
//!   pages are no control under a hypervisor that backs the guest with small pages: the TLB
//!   then caches small translations whatever the guest maps — measured so on a 2-vCPU KVM
//!   guest on 2026-11-22.)
//!
//! Each point is measured `repeats` times, the rounds interleaved over all points (so a burst of
//! load from another process spreads over many points instead of bending one), and reduced to
//! the median ns/access; each sample is itself the median of [`WINDOWS`] timed windows.

use std::hint::black_box;
use std::time::{Duration, Instant};

use thiserror::Error;

use crate::mem::{AlignedBuffer, BufferError};
use crate::results::infer_doc::Point;

/// Spacing of capacity-chase nodes: at most one line on every mainstream CPU, so every line of
/// the working set is touched (two nodes share a line where lines are 128 B; harmless).
pub const NODE_BYTES: usize = 64;
const ELEMENT_BYTES: usize = size_of::<f64>();
/// Page size assumed for the TLB probe's "small page" layout.
pub const SMALL_PAGE_BYTES: usize = 4096;

#[derive(Debug, Error)]
pub enum ProbeError {
    #[error(transparent)]
    Buffer(#[from] BufferError),
    #[error("probe parameter out of range: {0}")]
    BadParameter(String),
}

pub use crate::stats::SplitMix64;

/// A random permutation of `0..n` that is one single cycle (Sattolo's algorithm): following it
/// from any node visits every node before returning.
pub fn single_cycle(n: usize, rng: &mut SplitMix64) -> Vec<u32> {
    let mut perm: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = rng.below_by_modulo(i);
        perm.swap(i, j);
    }
    perm
}

/// A pointer chase laid out in its own aligned buffer.
pub struct Chase {
    buffer: AlignedBuffer,
    start: usize,
    nodes: usize,
}

impl Chase {
    /// Builds a chase visiting the element indices `order` cyclically (`order` must be
    /// distinct indices below `elements`).
    pub fn from_order(
        elements: usize,
        order: &[usize],
        huge_pages: bool,
    ) -> Result<Self, ProbeError> {
        if order.is_empty() || order.iter().any(|&e| e >= elements) {
            return Err(ProbeError::BadParameter(format!(
                "chase of {} nodes over {elements} elements",
                order.len()
            )));
        }
        let mut buffer = AlignedBuffer::zeroed(elements, huge_pages)?;
        for (i, &from) in order.iter().enumerate() {
            let to = order[(i + 1) % order.len()];
            buffer[from] = f64::from_bits(to as u64);
        }
        Ok(Self {
            buffer,
            start: order[0],
            nodes: order.len(),
        })
    }

    /// Builds a chase over every `spacing`-byte node of a `bytes` working set, in one random
    /// cycle: the node at slot i points to the slot `cycle[i]`.
    pub fn random_cycle(
        bytes: usize,
        spacing: usize,
        huge_pages: bool,
        rng: &mut SplitMix64,
    ) -> Result<Self, ProbeError> {
        if spacing < ELEMENT_BYTES || !spacing.is_multiple_of(ELEMENT_BYTES) || bytes < spacing {
            return Err(ProbeError::BadParameter(format!(
                "{bytes} B working set at {spacing} B spacing"
            )));
        }
        let nodes = bytes / spacing;
        let per_node = spacing / ELEMENT_BYTES;
        let cycle = single_cycle(nodes, rng);
        let mut buffer = AlignedBuffer::zeroed(nodes * per_node, huge_pages)?;
        for (slot, &next) in cycle.iter().enumerate() {
            buffer[slot * per_node] = f64::from_bits(next as u64 * per_node as u64);
        }
        Ok(Self {
            buffer,
            start: 0,
            nodes,
        })
    }

    /// Like [`Chase::random_cycle`], but the cycle visits the working set chunk by chunk
    /// (chunks in random order, the nodes inside a chunk in random order). A chunk spans few
    /// enough pages to stay in the L1 data TLB, so TLB misses are paid once per chunk and the
    /// latency curve shows the caches, not the TLB; the order is still one fixed cycle over the
    /// whole set, so a set larger than a cache still misses it on every visit.
    pub fn chunked_cycle(
        bytes: usize,
        spacing: usize,
        chunk: usize,
        huge_pages: bool,
        rng: &mut SplitMix64,
    ) -> Result<Self, ProbeError> {
        if spacing < ELEMENT_BYTES
            || !spacing.is_multiple_of(ELEMENT_BYTES)
            || bytes < spacing
            || chunk < spacing
        {
            return Err(ProbeError::BadParameter(format!(
                "{bytes} B working set at {spacing} B spacing, {chunk} B chunks"
            )));
        }
        let nodes = bytes / spacing;
        let per_node = spacing / ELEMENT_BYTES;
        let per_chunk = (chunk / spacing).min(nodes);
        let chunks = nodes.div_ceil(per_chunk);
        let mut order = Vec::with_capacity(nodes);
        for c in single_cycle_order(chunks, rng) {
            let first = c * per_chunk;
            let count = per_chunk.min(nodes - first);
            order.extend(
                single_cycle_order(count, rng)
                    .into_iter()
                    .map(|i| (first + i) * per_node),
            );
        }
        Self::from_order(nodes * per_node, &order, huge_pages)
    }

    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// The buffer's start address (for the huge-page check).
    pub fn address(&self) -> usize {
        self.buffer.address()
    }

    pub fn bytes(&self) -> usize {
        self.buffer.len() * ELEMENT_BYTES
    }

    /// Follows `steps` links; returns where it stopped.
    #[cfg(test)]
    fn follow(&self, steps: usize) -> usize {
        let nodes: &[f64] = &self.buffer;
        let mut at = self.start;
        for _ in 0..steps {
            at = nodes[at].to_bits() as usize;
        }
        at
    }

    /// Warms the caches with `warm_steps` links, then times `steps` links: ns per access (the
    /// median of [`WINDOWS`] windows: a preempted window is dropped, not averaged in).
    pub fn time_ns(&self, warm_steps: usize, steps: usize) -> f64 {
        let mut at = self.start;
        let nodes: &[f64] = &self.buffer;
        let mut follow = |steps: usize| {
            for _ in 0..steps {
                at = nodes[at].to_bits() as usize;
            }
            black_box(at);
        };
        follow(warm_steps);
        windowed_ns(steps, follow)
    }
}

/// Windows per timed sample.
pub const WINDOWS: usize = 16;

/// Times `steps` accesses of `follow` as [`WINDOWS`] consecutive windows and returns the
/// median window's ns per access. A preemption costs more than its own length here: whoever
/// ran meanwhile evicted the working set, and the chase pays to refill it. Those windows are
/// outliers the median drops, where one long timing would absorb them.
fn windowed_ns(steps: usize, mut follow: impl FnMut(usize)) -> f64 {
    let per_window = (steps / WINDOWS).max(1);
    let mut windows = [0.0f64; WINDOWS];
    for window in &mut windows {
        let started = Instant::now();
        follow(per_window);
        *window = started.elapsed().as_nanos() as f64 / per_window as f64;
    }
    windows.sort_by(f64::total_cmp);
    crate::stats::median_of_sorted(&windows)
}

/// How hard each probe works and when it must stop.
#[derive(Debug, Clone, Copy)]
pub struct ProbeBudget {
    /// Interleaved rounds per probe (each point gets at most this many samples).
    pub repeats: usize,
    /// The probe stops starting new rounds after this instant (at least one round always runs).
    pub deadline: Instant,
}

impl ProbeBudget {
    pub fn new(repeats: usize, time: Duration) -> Self {
        Self {
            repeats: repeats.max(1),
            deadline: Instant::now() + time,
        }
    }
}

/// Runs `rounds` interleaved rounds of `measure(point_index)` over `count` points and reduces
/// each point's samples to a [`Point`] (x from `xs`). Within a round the order alternates
/// direction, so slow drifts do not line up with x.
fn interleaved(
    xs: &[f64],
    budget: ProbeBudget,
    mut measure: impl FnMut(usize) -> f64,
) -> Vec<Point> {
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); xs.len()];
    for round in 0..budget.repeats {
        if round > 0 && Instant::now() >= budget.deadline {
            break;
        }
        let indices: Vec<usize> = if round % 2 == 0 {
            (0..xs.len()).collect()
        } else {
            (0..xs.len()).rev().collect()
        };
        for i in indices {
            samples[i].push(measure(i));
        }
    }
    xs.iter()
        .zip(samples)
        .map(|(&x, s)| Point::from_samples(x, &s))
        .collect()
}

/// Latency of a random-order chase over working sets of the given sizes (bytes).
pub struct CapacityProbe {
    chases: Vec<Chase>,
    sizes: Vec<usize>,
}

impl CapacityProbe {
    /// Builds one chunked chase per size (see [`Chase::chunked_cycle`]; `chunk` bytes, a few
    /// small pages), all on huge-page buffers. Huge pages alone do not keep the TLB out of the
    /// curve: under a hypervisor that backs the guest with small pages, the TLB caches small
    /// translations whatever the guest maps.
    pub fn new(sizes: &[usize], chunk: usize, seed: u64) -> Result<Self, ProbeError> {
        let mut rng = SplitMix64::new(seed);
        let chases = sizes
            .iter()
            .map(|&bytes| Chase::chunked_cycle(bytes, NODE_BYTES, chunk, true, &mut rng))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            chases,
            sizes: sizes.to_vec(),
        })
    }

    /// The chases (for the huge-page report).
    pub fn chases(&self) -> &[Chase] {
        &self.chases
    }

    /// Each sample warms with one full cycle (capped at 2²⁰ nodes, 64 MiB: sets that large
    /// miss anyway unless the LLC is larger still) then times `steps` accesses.
    pub fn run(&self, budget: ProbeBudget, steps: usize) -> Vec<Point> {
        let xs: Vec<f64> = self.sizes.iter().map(|&s| s as f64).collect();
        interleaved(&xs, budget, |i| {
            let chase = &self.chases[i];
            chase.time_ns(chase.nodes().min(1 << 20), steps)
        })
    }
}

/// Adjacent-access pairs `A → A+s` over a region larger than the L1; one chase per `s`.
pub struct LinePairProbe {
    chases: Vec<Chase>,
    strides: Vec<usize>,
}

/// Block size of the pair walk: larger than any stride tried, so pairs never share a block.
pub const LINE_PAIR_BLOCK: usize = 2048;

impl LinePairProbe {
    /// `strides` in bytes, multiples of 8 and below [`LINE_PAIR_BLOCK`]; `region` bytes, best
    /// chosen inside the second level's plateau (above the L1, below the L2): every first
    /// access of a pair then costs one L2 hit, without the DRAM or TLB noise further out.
    pub fn new(strides: &[usize], region: usize, seed: u64) -> Result<Self, ProbeError> {
        let blocks = region / LINE_PAIR_BLOCK;
        if blocks < 2 {
            return Err(ProbeError::BadParameter(format!(
                "line-pair region {region} B"
            )));
        }
        let elements = blocks * LINE_PAIR_BLOCK / ELEMENT_BYTES;
        let mut rng = SplitMix64::new(seed);
        let mut chases = Vec::new();
        for &s in strides {
            if s == 0 || !s.is_multiple_of(ELEMENT_BYTES) || s >= LINE_PAIR_BLOCK {
                return Err(ProbeError::BadParameter(format!("line-pair stride {s} B")));
            }
            let cycle = single_cycle(blocks, &mut rng);
            let mut order = Vec::with_capacity(2 * blocks);
            // Follow the single cycle so the block order is random but every block is visited.
            let mut block = 0usize;
            for _ in 0..blocks {
                let a = block * LINE_PAIR_BLOCK / ELEMENT_BYTES;
                order.push(a);
                order.push(a + s / ELEMENT_BYTES);
                block = cycle[block] as usize;
            }
            chases.push(Chase::from_order(elements, &order, true)?);
        }
        Ok(Self {
            chases,
            strides: strides.to_vec(),
        })
    }

    pub fn run(&self, budget: ProbeBudget, steps: usize) -> Vec<Point> {
        let xs: Vec<f64> = self.strides.iter().map(|&s| s as f64).collect();
        interleaved(&xs, budget, |i| {
            let chase = &self.chases[i];
            chase.time_ns(2 * chase.nodes(), steps)
        })
    }
}

/// A buffer whose chase is re-linked before each timing: probes that time many small chases
/// over the same slots (K = 1, 2, …) share one buffer instead of allocating one per K.
pub struct SlotChases {
    buffer: AlignedBuffer,
    /// orders[i]: the element indices chase i visits, cyclically.
    orders: Vec<Vec<usize>>,
}

impl SlotChases {
    fn new(elements: usize, orders: Vec<Vec<usize>>, huge_pages: bool) -> Result<Self, ProbeError> {
        if orders
            .iter()
            .any(|o| o.is_empty() || o.iter().any(|&e| e >= elements))
        {
            return Err(ProbeError::BadParameter(format!(
                "slot chase outside its {elements} elements"
            )));
        }
        let buffer = AlignedBuffer::zeroed(elements, huge_pages)?;
        Ok(Self { buffer, orders })
    }

    /// Links chase `i` (a handful of stores), warms it twice round, times `steps` accesses.
    fn time(&mut self, i: usize, steps: usize) -> f64 {
        let order = &self.orders[i];
        for (n, &from) in order.iter().enumerate() {
            self.buffer[from] = f64::from_bits(order[(n + 1) % order.len()] as u64);
        }
        let nodes: &[f64] = &self.buffer;
        let mut at = order[0];
        let mut follow = |steps: usize| {
            for _ in 0..steps {
                at = nodes[at].to_bits() as usize;
            }
            black_box(at);
        };
        follow(2 * order.len() + 64);
        windowed_ns(steps, follow)
    }

    /// The buffer's start address and length in bytes (for the huge-page check).
    pub fn span(&self) -> (usize, usize) {
        (self.buffer.address(), self.buffer.len() * ELEMENT_BYTES)
    }

    #[cfg(test)]
    fn linked_walk(&mut self, i: usize) -> Vec<usize> {
        self.time(i, 0);
        let order = &self.orders[i];
        let mut at = order[0];
        let mut walk = Vec::new();
        for _ in 0..order.len() {
            walk.push(at);
            at = self.buffer[at].to_bits() as usize;
        }
        assert_eq!(at, order[0], "the chase closes its cycle");
        walk
    }
}

/// K slots `j·stride` (j < K) visited in a random cycle, for K = 1..=max_slots: the L1
/// set-conflict probe (and, at `stride + line`, its control).
pub struct ConflictProbe {
    slots: SlotChases,
}

impl ConflictProbe {
    /// `stride` in bytes (a multiple of 8). Huge pages keep the slots inside as few pages as
    /// possible, so the data TLB stays out of the way where the kernel grants them (the control
    /// tells if it did not).
    pub fn new(
        stride: usize,
        max_slots: usize,
        huge_pages: bool,
        seed: u64,
    ) -> Result<Self, ProbeError> {
        if stride == 0 || !stride.is_multiple_of(ELEMENT_BYTES) || max_slots == 0 {
            return Err(ProbeError::BadParameter(format!(
                "conflict stride {stride} B, {max_slots} slots"
            )));
        }
        let elements = (stride * max_slots).div_ceil(ELEMENT_BYTES) + 1;
        let mut rng = SplitMix64::new(seed);
        let orders = (1..=max_slots)
            .map(|k| {
                single_cycle_order(k, &mut rng)
                    .into_iter()
                    .map(|j| j * stride / ELEMENT_BYTES)
                    .collect()
            })
            .collect();
        Ok(Self {
            slots: SlotChases::new(elements, orders, huge_pages)?,
        })
    }

    pub fn max_slots(&self) -> usize {
        self.slots.orders.len()
    }

    pub fn span(&self) -> (usize, usize) {
        self.slots.span()
    }
}

/// The visiting order of a random single cycle over `0..k`, starting at 0.
fn single_cycle_order(k: usize, rng: &mut SplitMix64) -> Vec<usize> {
    let cycle = single_cycle(k, rng);
    let mut order = Vec::with_capacity(k);
    let mut at = 0usize;
    for _ in 0..k {
        order.push(at);
        at = cycle[at] as usize;
    }
    order
}

/// Measures a conflict probe and its control together, interleaved: `(probe, control)` curves
/// of ns/access vs K.
pub fn run_conflict_pair(
    probe: &mut ConflictProbe,
    control: &mut ConflictProbe,
    budget: ProbeBudget,
    steps: usize,
) -> (Vec<Point>, Vec<Point>) {
    let slots = probe.max_slots().min(control.max_slots());
    let xs: Vec<f64> = (1..=slots).map(|k| k as f64).collect();
    let mut both_xs = xs.clone();
    both_xs.extend(xs.iter().copied());
    let points = interleaved(&both_xs, budget, |i| {
        if i < slots {
            probe.slots.time(i, steps)
        } else {
            control.slots.time(i - slots, steps)
        }
    });
    let (p, c) = points.split_at(slots);
    (p.to_vec(), c.to_vec())
}

/// One line in each of K pages (page stride plus a line offset that walks the L1 sets), visited
/// in a random cycle: the data-TLB probe.
pub struct TlbProbe {
    slots: SlotChases,
    pages: Vec<usize>,
}

impl TlbProbe {
    /// `page_counts`: the K values; `line`: the line size (the per-page offset step);
    /// `sets_span`: sets × line of the L1 (the offsets cycle within it so slots never conflict).
    /// With `packed`, the same K lines (same L1 sets) are instead packed into consecutive lines,
    /// K·line bytes over a few pages: the control. A latency jump the spread layout shows and
    /// the packed one does not comes from the number of pages, i.e. the TLB.
    pub fn new(
        page_counts: &[usize],
        line: usize,
        sets_span: usize,
        packed: bool,
        seed: u64,
    ) -> Result<Self, ProbeError> {
        let max_pages = page_counts.iter().copied().max().unwrap_or(0);
        if max_pages == 0
            || line == 0
            || !line.is_multiple_of(ELEMENT_BYTES)
            || sets_span < line
            || sets_span > SMALL_PAGE_BYTES
        {
            return Err(ProbeError::BadParameter(format!(
                "TLB probe: {max_pages} pages, line {line} B, set span {sets_span} B"
            )));
        }
        let elements = max_pages * SMALL_PAGE_BYTES / ELEMENT_BYTES;
        let lines_per_span = sets_span / line;
        let mut rng = SplitMix64::new(seed);
        let orders = page_counts
            .iter()
            .map(|&k| {
                single_cycle_order(k, &mut rng)
                    .into_iter()
                    .map(|j| {
                        let byte = if packed {
                            j * line
                        } else {
                            j * SMALL_PAGE_BYTES + (j % lines_per_span) * line
                        };
                        byte / ELEMENT_BYTES
                    })
                    .collect()
            })
            .collect();
        // Small pages for both: the spread layout needs one page per slot.
        Ok(Self {
            slots: SlotChases::new(elements, orders, false)?,
            pages: page_counts.to_vec(),
        })
    }

    pub fn span(&self) -> (usize, usize) {
        self.slots.span()
    }
}

/// Measures the page-spread TLB probe and its packed control together, interleaved.
pub fn run_tlb_pair(
    small: &mut TlbProbe,
    huge: &mut TlbProbe,
    budget: ProbeBudget,
    steps: usize,
) -> (Vec<Point>, Vec<Point>) {
    let n = small.pages.len().min(huge.pages.len());
    let mut xs: Vec<f64> = small.pages[..n].iter().map(|&k| k as f64).collect();
    xs.extend(huge.pages[..n].iter().map(|&k| k as f64));
    let points = interleaved(&xs, budget, |i| {
        if i < n {
            small.slots.time(i, steps)
        } else {
            huge.slots.time(i - n, steps)
        }
    });
    let (s, h) = points.split_at(n);
    (s.to_vec(), h.to_vec())
}

/// Bytes backed by transparent huge pages in the mappings that overlap any of the `(address,
/// len)` ranges, from `/proc/self/smaps` (`AnonHugePages`, each mapping counted once; a mapping
/// may hold more than the ranges). `None` when smaps is unreadable (not Linux, restricted /proc).
pub fn huge_page_bytes(ranges: &[(usize, usize)]) -> Option<usize> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    Some(huge_bytes_in_smaps(&smaps, ranges))
}

/// The parsing half of [`huge_page_bytes`] (pure, tested).
pub fn huge_bytes_in_smaps(smaps: &str, ranges: &[(usize, usize)]) -> usize {
    let mut inside = false;
    let mut total = 0usize;
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if let Some((lo, hi)) = first.split_once('-')
            && let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        {
            inside = ranges
                .iter()
                .any(|&(address, len)| lo < address.saturating_add(len) && hi > address);
            continue;
        }
        if inside && first == "AnonHugePages:" {
            let kib: usize = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
            total += kib * 1024;
        }
    }
    total
}

/// Pins the calling thread to the last CPU the process may use, so its caches stay put. Returns
/// whether pinning worked (a failure is reported, not fatal).
pub fn pin_current_thread() -> bool {
    core_affinity::get_core_ids()
        .and_then(|ids| ids.last().copied())
        .is_some_and(core_affinity::set_for_current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sattolo_gives_one_cycle() {
        let mut rng = SplitMix64::new(7);
        for n in [1, 2, 3, 10, 1000] {
            let perm = single_cycle(n, &mut rng);
            let mut at = 0usize;
            let mut seen = vec![false; n];
            for _ in 0..n {
                assert!(!seen[at], "node {at} visited twice (n = {n})");
                seen[at] = true;
                at = perm[at] as usize;
            }
            assert_eq!(at, 0);
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn chases_visit_every_node_and_return() {
        let mut rng = SplitMix64::new(3);
        let chase = Chase::random_cycle(64 * 100, 64, false, &mut rng).unwrap();
        assert_eq!(chase.nodes(), 100);
        assert_eq!(chase.follow(100), chase.start);
        let mut probe = ConflictProbe::new(4096, 5, false, 1).unwrap();
        for k in 1..=5 {
            let walk = probe.slots.linked_walk(k - 1);
            assert_eq!(walk.len(), k);
            assert!(
                walk.iter()
                    .all(|&e| (e * ELEMENT_BYTES).is_multiple_of(4096)),
                "slots sit on the stride"
            );
        }
    }

    #[test]
    fn tlb_slots_use_distinct_pages_and_staggered_lines() {
        let mut probe = TlbProbe::new(&[8], 64, 4096, false, 1).unwrap();
        let walk = probe.slots.linked_walk(0);
        let pages: std::collections::BTreeSet<usize> =
            walk.iter().map(|e| e * ELEMENT_BYTES / 4096).collect();
        let offsets: std::collections::BTreeSet<usize> =
            walk.iter().map(|e| e * ELEMENT_BYTES % 4096).collect();
        assert_eq!(pages.len(), 8);
        assert_eq!(offsets.len(), 8);
    }

    #[test]
    fn smaps_huge_pages_are_summed_for_overlapping_mappings_only() {
        let smaps = "\
7f0000000000-7f0000400000 rw-p 00000000 00:00 0
Size:               4096 kB
AnonHugePages:      2048 kB
7f0000400000-7f0000800000 rw-p 00000000 00:00 0
AnonHugePages:      4096 kB
";
        assert_eq!(
            huge_bytes_in_smaps(smaps, &[(0x7f00_0000_0000, 0x1000)]),
            2048 * 1024
        );
        assert_eq!(
            huge_bytes_in_smaps(smaps, &[(0x7f00_0000_0000, 0x80_0000)]),
            6144 * 1024
        );
        let twice = [(0x7f00_0000_0000, 0x1000), (0x7f00_0000_2000, 0x1000)];
        assert_eq!(
            huge_bytes_in_smaps(smaps, &twice),
            2048 * 1024,
            "a mapping counts once"
        );
        assert_eq!(huge_bytes_in_smaps(smaps, &[(0x1000, 0x1000)]), 0);
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(ConflictProbe::new(0, 4, false, 1).is_err());
        assert!(LinePairProbe::new(&[4096], 1 << 20, 1).is_err());
        assert!(LinePairProbe::new(&[64], 2048, 1).is_err());
        assert!(TlbProbe::new(&[8], 64, 8192, false, 1).is_err());
    }
}
