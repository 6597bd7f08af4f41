//! The set-associative cache simulator: a hierarchy of levels fed through [`AccessSink`],
//! with cachegrind's semantics and an optional 3C (compulsory / capacity / conflict) split.
//! Two engines implement it ([`Engine`], one [`Simulator`] type over both): the fast
//! [`Hierarchy`], and a plain reference (`sim/reference.rs`), the executable specification
//! the fast one is checked against (`stridelab sim --engine reference`). docs/simulator.md is
//! the design in prose. Each replacement policy lives in a file of its own under `sim/policy/`
//! and is listed in [`Policy::ALL`], which the command line, both engines and the tests read.
//!
//! Semantics (chosen to match valgrind's cachegrind, `cg_sim.c`, so the two can be compared):
//!
//! 1. Each level is `sets × ways × line`; a line's set is `line number mod sets` (sets need not
//!    be a power of two). Tags are whole line numbers.
//! 2. Write-allocate: a store that misses brings the line in, exactly like a load.
//! 3. An access counts once per level it reaches. If it straddles lines, every line is looked up
//!    (replacement state updated for each) and the access is one miss if any line missed.
//! 4. A miss at one level sends the *whole* access to the next level (cachegrind looks up both
//!    lines of a straddling access in LL even if only one missed in D1).
//! 5. No back-invalidation (levels are neither inclusive nor exclusive by construction) and
//!    write-backs of dirty lines are not counted as accesses.
//! 6. A read-modify-write instruction is one load ([`AccessSink::modify`]).
//!
//! 3C classification of a miss at a level (Hill's definitions):
//! compulsory = the first time this level ever sees the line; capacity = not compulsory, and a
//! fully-associative LRU cache with the same number of lines would also have missed;
//! conflict = the rest (a fully-associative cache would have hit). A straddling access that
//! misses is classified by its worst line (compulsory before capacity before conflict), so
//! `compulsory + capacity + conflict == misses` always holds. Every path classifies through
//! one function, `classified` (`sim/counts.rs`), and counts through `Counts`' operations.
//!
//! How it is fast (each piece is checked against the reference engine, `reference.rs`, by
//! proptests over every policy and random geometries):
//!
//! - An access confined to the line the first level looked up last only bumps a counter
//!   (`Hierarchy::access` says why nothing else can change): 7 of 8 row-order f64 accesses.
//!   A run fed through [`AccessSink::load_run`] counts those hits a line at a time, in one
//!   addition (`load_run` on [`Hierarchy`]).
//! - A run whose step is a line or more goes down the levels as one run: an LRU level looks
//!   up only its first ways × (sets it reaches) accesses, counts the rest as the misses they
//!   must be and writes the sets it reached once; the 3C shadow holds what runs leave as
//!   progressions of lines (`sim/level/runs.rs`, `sim/shadow.rs` say why this is exact).
//! - Element moves fed through [`AccessSink::move_run`] (a load, then a store, pair after
//!   pair: a transpose's columns) go through the first level in one loop, a side's return to
//!   its last line costing at most a swap of two ways; the 3C shadow takes a long move run
//!   that meets nothing it holds whole, so a set miss costs it a seen-bit
//!   (`sim/level/moves.rs`, `sim/shadow/moves.rs` say why this is exact). Where loads and
//!   stores meet in no set, the first level takes a side at a time and its misses go down
//!   marked, a bit per pair and side; a lower LRU level takes them a side at a time too
//!   (`sim/level/moves_apart.rs`, `sim/level/moves_missed.rs`).
//! - A one-line access to an LRU first level without 3C (the default) is looked up at once,
//!   in `Hierarchy::access`: a batch buys such a level nothing.
//! - Every other access is queued, and a full batch (`BATCH`) goes through the first level;
//!   its misses, in order, go to the levels below in chunks, each level's misses being the
//!   next one's batch — on a thread of their own when the machine has a second CPU
//!   (`sim/pipeline.rs`). Exact, because a level's state depends only on the accesses that
//!   reach it, in order (rule 5). A batch loop keeps its counts in locals. For moves' misses
//!   the second level instead stays on the first level's thread and its 3C shadow gets one of
//!   its own, fed the level's hits (`sim/detached.rs`).
//! - LRU and FIFO sets are rings with a moving head, so a miss is O(1) instead of shifting the
//!   whole set, and an LRU hit moves O(min(p, ways − 1 − p)) tags. The LRU lookup checks the
//!   most and the least recent way first (cyclic traces hit the latter: O(1)), then scans the
//!   set once; a hit deeper in the ring is finished out of line. The LRU batch loop has
//!   copies of its own for 8-, 12- and 16-way sets (the scan unrolls into compares against
//!   memory) and with the 3C shadow compiled in or out.
//! - `Counts` (`sim/counts.rs`) index loads and stores by `is_store` and causes by the
//!   outcome, so counting an access branches on neither.
//! - The 3C shadow is a sparse hash table of the lines it holds, its slots the nodes of a
//!   recency list, plus a bit per line ever seen (`sim/shadow.rs` says why, with figures).
//! - Set indexing masks for power-of-two set counts and divides otherwise.
//! - A way holds its line's complement, so empty tags are zero bytes: a large level's tag
//!   array is memory the allocator hands over untouched, and only the sets a trace reaches
//!   cost anything.

mod budget;
mod counts;
mod detached;
mod engine;
mod hits;
mod level;
mod moves;
#[cfg(test)]
mod moves_tests;
mod pipeline;
mod policy;
mod reference;
#[cfg(test)]
mod run_tests;
mod shadow;
mod stream;

use budget::size_text;
pub use budget::{DEFAULT_STATE_BUDGET, state_bytes};
use counts::Counts;
pub use engine::{Engine, Simulator};
use level::{LevelSim, NO_LINE};
use pipeline::{Below, CHUNK, run_levels};
pub use policy::Policy;
use shadow::{FullyAssociativeLru, MAX_CAPACITY as MAX_SHADOW_LINES};
use stream::{Access, Run, Stream};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::cache::geometry::CacheLevel;
use crate::cache::{AccessSink, Walk};

/// Why a hierarchy cannot be built.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimError {
    #[error("a hierarchy needs at least one cache level")]
    NoLevels,
    #[error("{name}: {policy} needs {needs}, not {ways}")]
    WaysRefused {
        name: String,
        policy: &'static str,
        needs: &'static str,
        ways: u32,
    },
    #[error("{name}: {sets} sets × {ways} ways, or the line size, is not usable")]
    BadGeometry { name: String, sets: u32, ways: u32 },
    #[error("{name}: {lines} lines is too many to classify misses (3C); the limit is 2^32 - 3")]
    TooLargeToClassify { name: String, lines: u64 },
    #[error(
        "the simulated caches need {} of state before the first access (tags and \
         replacement state of every set), more than the limit of {}; `--max-sim-memory SIZE` \
         raises it",
        size_text(*bytes),
        size_text(*budget)
    )]
    StateTooLarge { bytes: u64, budget: u64 },
}

/// Counts for one level since construction or the last [`Hierarchy::reset_stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LevelStats {
    pub loads: u64,
    pub stores: u64,
    pub load_misses: u64,
    pub store_misses: u64,
    /// Valid lines replaced (dirty or not; write-backs are not simulated).
    pub evictions: u64,
    /// Zero unless the hierarchy classifies misses (3C).
    pub compulsory: u64,
    pub capacity: u64,
    pub conflict: u64,
}

impl LevelStats {
    pub fn accesses(&self) -> u64 {
        self.loads + self.stores
    }

    pub fn misses(&self) -> u64 {
        self.load_misses + self.store_misses
    }

    /// Misses per access (0 when there were no accesses).
    pub fn miss_ratio(&self) -> f64 {
        let accesses = self.accesses();
        if accesses == 0 {
            0.0
        } else {
            self.misses() as f64 / accesses as f64
        }
    }
}

/// One level's name and counts, as a record embeds them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelReport {
    pub name: String,
    pub stats: LevelStats,
}

/// A cache hierarchy, innermost level first. Implements [`AccessSink`].
#[derive(Debug)]
pub struct Hierarchy {
    /// Every level's geometry, innermost first.
    geometry: Vec<CacheLevel>,
    /// The levels' state: all of them, or only the first while `lower` has the others.
    levels: Vec<LevelSim>,
    policy: Policy,
    classify: bool,
    /// The first level's line shift and the line it looked up last (`NO_LINE` before any).
    first_line_shift: u32,
    first_level_last_line: u64,
    /// Loads and stores confined to `first_level_last_line` (hits), counted here instead of
    /// in the first level's counts (added back when reporting): see [`Hierarchy::access`].
    repeated: Counts,
    /// Accesses not yet simulated, in order (at most [`BATCH`]); readers of the state run them
    /// first ([`Hierarchy::flush`]).
    pending: Vec<Access>,
    /// The first level's misses not yet passed to the levels below: passed on once they weigh
    /// `chunk` accesses (a run counts as many as it has).
    outgoing: Stream,
    /// The first level is LRU without 3C: its one-line accesses are looked up at once, in
    /// `access` (a batch buys such a level nothing, and costs a store and a load per access).
    first_level_plain_lru: bool,
    /// First-level misses passed down at a time: [`CHUNK`] when the levels below run on a
    /// thread of their own ([`Below`]), [`BATCH`] when they run here.
    chunk: usize,
    /// Whether the levels below may run on a thread of their own (more than one level, and
    /// more than one CPU to run on).
    pipelined: bool,
    /// The levels below the first, on their own threads, between a full chunk and a flush.
    lower: Option<Below>,
    /// Reused by the levels below when they run here.
    buffers: [Stream; 2],
    /// Tests: the second level's shadow gets a thread of its own whatever the chunk holds.
    #[cfg(test)]
    always_detach: bool,
}

/// Refuses, before anything is allocated, what no engine simulates: no levels, more
/// up-front state than `budget` ([`state_bytes`]), and level by level a 3C shadow too large
/// to hold (when classifying) or an unusable geometry. Both engines check the same, in this
/// order, so they refuse the same hierarchies with the same error.
fn check_levels(
    levels: &[CacheLevel],
    policy: Policy,
    classify_3c: bool,
    budget: u64,
) -> Result<(), SimError> {
    if levels.is_empty() {
        return Err(SimError::NoLevels);
    }
    let bytes = state_bytes(levels, policy);
    if bytes > budget {
        return Err(SimError::StateTooLarge { bytes, budget });
    }
    for level in levels {
        if classify_3c {
            shadow_capacity(level)?;
        }
        level::usable(level, policy)?;
    }
    Ok(())
}

/// The lines of `level`'s 3C shadow, if it can hold them.
fn shadow_capacity(level: &CacheLevel) -> Result<usize, SimError> {
    usize::try_from(level.lines())
        .ok()
        .filter(|&lines| lines <= MAX_SHADOW_LINES)
        .ok_or_else(|| SimError::TooLargeToClassify {
            name: level.name.clone(),
            lines: level.lines(),
        })
}

/// Accesses the first level takes together: enough that its batch loop runs long stretches,
/// few enough that a batch and its misses stay in the host's L1.
const BATCH: usize = 1024;

impl Hierarchy {
    /// Builds empty (cold) caches for `levels`, innermost first, all with `policy`;
    /// `classify_3c` turns on the compulsory/capacity/conflict split (slower). Refuses levels
    /// whose [`state_bytes`] exceed [`DEFAULT_STATE_BUDGET`].
    pub fn new(levels: &[CacheLevel], policy: Policy, classify_3c: bool) -> Result<Self, SimError> {
        Self::with_state_budget(levels, policy, classify_3c, DEFAULT_STATE_BUDGET)
    }

    /// [`Hierarchy::new`] with an explicit budget (bytes) for the state allocated up front.
    pub fn with_state_budget(
        levels: &[CacheLevel],
        policy: Policy,
        classify_3c: bool,
        budget: u64,
    ) -> Result<Self, SimError> {
        check_levels(levels, policy, classify_3c, budget)?;
        let mut sims = Vec::with_capacity(levels.len());
        for (i, level) in levels.iter().enumerate() {
            let shadow = if classify_3c {
                Some(FullyAssociativeLru::new(shadow_capacity(level)?))
            } else {
                None
            };
            sims.push(LevelSim::new(level, policy, shadow, i)?);
        }
        let pipelined = levels.len() > 1
            && std::thread::available_parallelism().is_ok_and(|cpus| cpus.get() > 1);
        Ok(Self {
            geometry: levels.to_vec(),
            first_line_shift: sims[0].line_shift,
            levels: sims,
            policy,
            classify: classify_3c,
            first_level_last_line: NO_LINE,
            repeated: Counts::default(),
            pending: Vec::with_capacity(BATCH),
            outgoing: Stream::default(),
            first_level_plain_lru: policy.is_lru() && !classify_3c,
            chunk: if pipelined { CHUNK } else { BATCH },
            pipelined,
            lower: None,
            buffers: [Stream::default(), Stream::default()],
            #[cfg(test)]
            always_detach: false,
        })
    }

    /// Passes first-level misses down `chunk` at a time, on a thread of their own if `pipelined`
    /// (tests make chunks small so that short traces take the threaded path).
    #[cfg(test)]
    fn with_chunk(mut self, chunk: usize, pipelined: bool) -> Self {
        self.chunk = chunk.max(1);
        self.pipelined = pipelined && self.geometry.len() > 1;
        self
    }

    /// Detaches the second level's shadow whenever its thread starts, runs or not.
    #[cfg(test)]
    fn always_detach(mut self) -> Self {
        self.always_detach = true;
        self
    }

    pub fn policy(&self) -> Policy {
        self.policy
    }

    pub fn classifies_3c(&self) -> bool {
        self.classify
    }

    /// The simulated levels' geometry, innermost first.
    pub fn levels(&self) -> Vec<&CacheLevel> {
        self.geometry.iter().collect()
    }

    /// Per-level counts, innermost first.
    pub fn stats(&mut self) -> Vec<LevelStats> {
        self.flush();
        (0..self.levels.len())
            .map(|i| self.level_stats(i))
            .collect()
    }

    /// Level `i`'s counts, with the first level's repeated-line accesses added back (after a
    /// [`Self::flush`]).
    fn level_stats(&self, i: usize) -> LevelStats {
        let mut counts = self.levels[i].counts;
        if i == 0 {
            counts.add(&self.repeated);
        }
        counts.stats()
    }

    /// Per-level counts with the level names.
    pub fn report(&mut self) -> Vec<LevelReport> {
        self.flush();
        self.levels
            .iter()
            .enumerate()
            .map(|(i, l)| LevelReport {
                name: l.geometry.name.clone(),
                stats: self.level_stats(i),
            })
            .collect()
    }

    /// Zeroes the counts but keeps cache contents (and which lines were ever seen), so a
    /// warm-up pass can be followed by a measured one.
    pub fn reset_stats(&mut self) {
        self.flush();
        for level in &mut self.levels {
            level.counts = Counts::default();
        }
        self.repeated = Counts::default();
    }

    /// Resident line *addresses* of level `level`, per set, in the policy's order (each says
    /// which in its file under `sim/policy/`: most recent first for LRU, newest first for
    /// FIFO, way order for tree-PLRU and random). For tests and teaching output. Panics if
    /// `level` is out of range.
    pub fn resident_lines(&mut self, level: usize) -> Vec<Vec<u64>> {
        self.flush();
        let shift = self.levels[level].line_shift;
        self.levels[level]
            .resident()
            .into_iter()
            .map(|set| set.into_iter().map(|line| line << shift).collect())
            .collect()
    }

    /// Whether the line holding `addr` is resident at `level`. Panics if `level` is out of
    /// range.
    pub fn contains(&mut self, level: usize, addr: u64) -> bool {
        self.flush();
        let l = &self.levels[level];
        l.holds(addr >> l.line_shift)
    }

    /// Simulates the accesses still pending. Every method that reads the caches' state or
    /// counts calls it first; a caller that only feeds accesses never needs to.
    pub fn flush(&mut self) {
        if !self.pending.is_empty() {
            self.run_pending();
        }
        if !self.outgoing.is_empty() {
            self.pass_down(false);
        }
        if let Some(lower) = self.lower.take() {
            self.levels.extend(lower.finish());
        }
    }

    /// One access through the hierarchy: queued for the next batch, or looked up at once by
    /// an LRU first level without 3C, unless it is confined to the line the first level was
    /// given last.
    ///
    /// That last case is a hit that changes nothing — the line is resident (every lookup
    /// leaves its line resident), already the most recent under LRU and FIFO-neutral, touching
    /// its way again sets the same tree-PLRU bits, random replacement ignores hits, and the 3C
    /// shadow saw the same line last. So only the count moves, here. Row-order traces of
    /// 8-byte elements take this path 7 times in 8.
    ///
    /// Inline always: `load` and `store` are then this function, with `is_store` a constant,
    /// where a plain `#[inline]` measured 12% slower on the row-order trace (each call went
    /// through a jump to a shared copy).
    #[inline(always)]
    fn access(&mut self, addr: u64, len: u32, is_store: bool) {
        let first = addr >> self.first_line_shift;
        let last = addr.saturating_add(u64::from(len.max(1)) - 1) >> self.first_line_shift;
        if first == last && first == self.first_level_last_line {
            self.repeated.record_hits(is_store, 1);
            return;
        }
        self.first_level_last_line = last;
        let access = Access {
            addr,
            len,
            is_store,
        };
        if self.first_level_plain_lru {
            if first == last {
                self.look_up_first_level(first, access);
            } else {
                // A straddle, at once too, so that accesses stay in order.
                self.pending.push(access);
                self.run_pending();
            }
            return;
        }
        self.pending.push(access);
        if self.pending.len() >= BATCH {
            self.run_pending();
        }
    }

    /// A one-line access to an LRU first level without 3C, at once: a miss joins the misses
    /// on their way down.
    #[inline(always)]
    fn look_up_first_level(&mut self, line: u64, access: Access) {
        let level = &mut self.levels[0];
        let hit = level.lru_lookup_now(line);
        level.counts.record_lookup(access.is_store, hit);
        if !hit && self.geometry.len() > 1 {
            self.outgoing.push(access);
            if self.outgoing.weight() >= self.chunk as u64 {
                self.pass_down(true);
            }
        }
    }

    /// Runs the pending batch through the first level; its misses, in order, join those on
    /// their way to the levels below, which take them a chunk at a time. Exact, because a
    /// level's state and counts depend only on the accesses that reach it, in order (no
    /// back-invalidation, rule 5).
    #[inline(never)]
    fn run_pending(&mut self) {
        let mut batch = std::mem::take(&mut self.pending);
        let below = self.geometry.len() > 1;
        self.levels[0].run_batch(&batch, below.then_some(&mut self.outgoing));
        batch.clear();
        self.pending = batch;
        if self.outgoing.weight() >= self.chunk as u64 {
            self.pass_down(true);
        }
    }

    /// A run of accesses each a line or more from the last: whatever is pending first, then
    /// the run through the first level at once (taken whole where it can be,
    /// `sim/level/runs.rs`); its misses join those on their way down.
    fn take_run(&mut self, run: Run) {
        if !self.pending.is_empty() {
            self.run_pending();
        }
        let below = self.geometry.len() > 1;
        self.levels[0].take_run(&run, below.then_some(&mut self.outgoing));
        let last = run.access(run.count - 1);
        self.first_level_last_line =
            (last.addr + u64::from(last.len.max(1)) - 1) >> self.first_line_shift;
        if self.outgoing.weight() >= self.chunk as u64 {
            self.pass_down(true);
        }
    }

    /// An ascending run whose step divides the first level's line and whose accesses each
    /// lie in one line (`addr % step + len ≤ step`): after the first line, each line's first
    /// access sits at the same offset, so those accesses are a run of whole lines, taken as
    /// one (`Hierarchy::take_run`), and every other access is a repeat of its line (a hit
    /// that changes nothing, as in [`Hierarchy::access`]), counted. A row-order sum of f64
    /// then costs a run per row, where a lookup per line took over 90% of the samples of an
    /// L1-only `sim row-sum`.
    fn take_line_run(&mut self, addr: u64, step: u64, count: u64, len: u32) {
        let shift = self.first_line_shift;
        let first_line = addr >> shift;
        let last_line = (addr + (count - 1) * step) >> shift;
        let line_bytes = 1u64 << shift;
        // The run starts at the first access if that is its line's first (a row that starts
        // on a line: the shadow then keeps the rows as runs, never building its table).
        let (start, lines) = if addr & (line_bytes - 1) < step {
            (addr, last_line - first_line + 1)
        } else {
            self.access(addr, len, false);
            (
                ((first_line + 1) << shift) | (addr % step),
                last_line - first_line,
            )
        };
        if lines > 0 {
            // Its last access is at most the run's own last one, which fits (checked above).
            let run =
                Run::new(start, line_bytes as i64, lines, len, false).expect("within the run");
            self.take_run(run);
        }
        let looked_up = last_line - first_line + 1;
        self.repeated.record_hits(false, count - looked_up);
    }

    /// Hands the outgoing misses to the levels below: to their thread if it runs (starting it
    /// if `may_start` and the hierarchy is pipelined), else through them here.
    fn pass_down(&mut self, may_start: bool) {
        if may_start && self.pipelined && self.lower.is_none() {
            // Moves' misses cost the second level little (a side at a time) and its shadow a
            // lookup each, so the shadow gets a thread of its own; see `sim/pipeline.rs`.
            let detach_shadow = self.outgoing.mostly_moves();
            #[cfg(test)]
            let detach_shadow = detach_shadow || self.always_detach;
            match Below::start(self.levels.split_off(1), detach_shadow) {
                Ok(lower) => self.lower = Some(lower),
                Err(levels) => {
                    self.levels.extend(levels);
                    self.pipelined = false;
                    self.chunk = BATCH;
                }
            }
        }
        match &mut self.lower {
            Some(lower) => {
                let chunk = std::mem::take(&mut self.outgoing);
                self.outgoing = lower.send(chunk);
            }
            None => {
                run_levels(&mut self.levels[1..], &self.outgoing, &mut self.buffers);
                self.outgoing.clear();
            }
        }
    }
}

impl AccessSink for Hierarchy {
    #[inline]
    fn load(&mut self, addr: u64, len: u32) {
        self.access(addr, len, false);
    }

    /// Whole at the first level where every access lies in one line (`sim/moves.rs`), one
    /// load and store at a time otherwise.
    fn move_run(&mut self, from: Walk, to: Walk, count: u64, len: u32) {
        if !self.take_moves(from, to, count, len) {
            for k in 0..count {
                self.access(from.at(k), len, false);
                self.access(to.at(k), len, true);
            }
        }
    }

    #[inline]
    fn store(&mut self, addr: u64, len: u32) {
        self.access(addr, len, true);
    }

    /// An ascending run with a step shorter than the first level's line: after each access
    /// that is looked up, the following ones that fall whole in the same line are the
    /// repeated-line hits of `Hierarchy::access`, counted in one addition instead of one
    /// call each (7 of 8 accesses of a row-order f64 walk on 64-byte lines); where the step
    /// divides the line, the looked-up ones go as one run of whole lines
    /// (`Hierarchy::take_line_run`). A run whose step is a line or more goes through the
    /// levels as a run (`Hierarchy::take_run`). Any other run takes the loads one by one.
    fn load_run(&mut self, addr: u64, step: i64, count: u64, len: u32) {
        let line_bytes = 1u64 << self.first_line_shift;
        let len = len.max(1);
        if count >= 2
            && step.unsigned_abs() >= line_bytes
            && let Some(run) = Run::new(addr, step, count, len, false)
        {
            return self.take_run(run);
        }
        let end = (count.saturating_sub(1))
            .checked_mul(step.unsigned_abs())
            .and_then(|span| span.checked_add(addr))
            .and_then(|last| last.checked_add(u64::from(len)));
        let step = match u64::try_from(step) {
            Ok(step) if step > 0 && step < line_bytes && end.is_some() => step,
            _ => {
                for k in 0..count {
                    self.load(addr.wrapping_add((k as i64).wrapping_mul(step) as u64), len);
                }
                return;
            }
        };
        if count > 0 && line_bytes.is_multiple_of(step) && addr % step + u64::from(len) <= step {
            return self.take_line_run(addr, step, count, len);
        }
        let mut k = 0;
        while k < count {
            let at = addr + k * step;
            self.access(at, len, false);
            k += 1;
            let first = at >> self.first_line_shift;
            if (at + u64::from(len) - 1) >> self.first_line_shift != first {
                continue; // a straddle: the next access may start in the line before
            }
            // The accesses j of the run (from 0) whose last byte is in `first`'s line are those
            // with addr + j·step + len - 1 ≤ that line's last byte; the ones after k repeat.
            let line_last = (first << self.first_line_shift) | (line_bytes - 1);
            let fits = (line_last - (u64::from(len) - 1) - addr) / step + 1;
            let repeats = fits.min(count).saturating_sub(k);
            self.repeated.record_hits(false, repeats);
            k += repeats;
        }
    }
}

#[cfg(test)]
mod tests;
