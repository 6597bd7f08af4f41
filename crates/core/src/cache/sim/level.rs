//! One simulated cache level of the fast engine: its tags, replacement state (LRU rings here,
//! any other policy's through its `FastSets`, `sim/policy/`), counts (`sim/counts.rs`) and
//! 3C shadow, the set lookups the hierarchy calls per access, and which geometries a level can
//! take ([`usable`]). The hot path lives here; `#[inline]` attributes mark what the hierarchy
//! inlines.

mod moves;
mod moves_apart;
mod moves_missed;
mod runs;

#[cfg(test)]
pub(super) use moves::ShadowPlan;
pub(super) use moves_missed::classify_marked;
pub(super) use runs::RunShape;

use super::counts::{Counts, Outcome, classified};
use super::hits::HitLog;
use super::policy::{
    EMPTY_WAY as EMPTY, Fast, Lookup, Probe, lru_probe, ring_move_to_front, wrap_add,
};
use super::shadow::{FullyAssociativeLru, ShadowOutcome};
use super::stream::{Access, Stream};
use super::{Policy, SimError};
use crate::cache::geometry::CacheLevel;

/// No line number: lines are addresses shifted right by at least one bit (geometry rule 2).
pub(super) const NO_LINE: u64 = u64::MAX;

/// The tag that stands for `line` in a way: its complement, never [`EMPTY`] (0) as no line is
/// [`NO_LINE`]. So an empty tag array is all zero bytes: the allocator hands it over as
/// untouched zero pages, and a level's tags cost memory and time only for the sets a trace
/// reaches (an L3 of 260 MiB has 34 MiB of tags; filling them took 27 ms per point).
#[inline(always)]
fn tag_of(line: u64) -> u64 {
    !line
}

/// One simulated level.
#[derive(Debug, Clone)]
pub(super) struct LevelSim {
    pub(super) geometry: CacheLevel,
    sets: u64,
    /// `sets - 1` when sets is a power of two (mask instead of a division).
    set_mask: Option<u64>,
    pub(super) ways: usize,
    pub(super) line_shift: u32,
    /// Each way's [`tag_of`] its line, [`EMPTY`] if it holds none; set s at `[s × ways ..]`.
    tags: Vec<u64>,
    /// Each set's ring head under LRU (empty for the other policies): the set's most recent
    /// tag, the least recent the way before it (wrapping). Kept out of [`Fast`] so the inline
    /// LRU path reaches it without matching on the policy.
    ring_heads: Vec<u32>,
    replacement: Fast,
    pub(super) counts: Counts,
    shadow: Option<FullyAssociativeLru>,
    /// While the shadow is detached to a thread of its own (`sim/detached.rs`): every line
    /// lookup's hit, in order, for the shadow to classify the misses by. Boxed, so the run
    /// loop takes it out and puts it back for a pointer's cost.
    hit_log: Option<Box<HitLog>>,
    /// The shadow's outcomes for the accesses of a run that are looked up (`level/runs.rs`),
    /// kept between runs.
    run_outcomes: Vec<ShadowOutcome>,
    /// Pairs of moves taken a side at a time (`level/moves_apart.rs`), for tests that must
    /// know the path was taken.
    #[cfg(test)]
    pub(super) pairs_apart: u64,
    /// Pieces of moves' misses taken a side at a time (`level/moves_missed.rs`), and times
    /// the shadow came back from a thread of its own (`sim/detached.rs`): for tests.
    #[cfg(test)]
    pub(super) pieces_marked: u64,
    #[cfg(test)]
    pub(super) shadow_returns: u64,
}

impl LevelSim {
    pub(super) fn new(
        geometry: &CacheLevel,
        policy: Policy,
        shadow: Option<FullyAssociativeLru>,
        index: usize,
    ) -> Result<Self, SimError> {
        let slots = usable(geometry, policy)?;
        let sets = u64::from(geometry.sets);
        let ways = geometry.ways as usize;
        let replacement = policy
            .rule()
            .fast(geometry, policy.seed().unwrap_or(0), index);
        Ok(Self {
            geometry: geometry.clone(),
            sets,
            set_mask: geometry.sets.is_power_of_two().then(|| sets - 1),
            ways,
            line_shift: geometry.line.trailing_zeros(),
            tags: vec![EMPTY; slots],
            ring_heads: match replacement {
                Fast::LruRings => vec![0; sets as usize],
                Fast::Sets(_) => Vec::new(),
            },
            replacement,
            counts: Counts::default(),
            shadow,
            hit_log: None,
            run_outcomes: Vec::new(),
            #[cfg(test)]
            pairs_apart: 0,
            #[cfg(test)]
            pieces_marked: 0,
            #[cfg(test)]
            shadow_returns: 0,
        })
    }

    /// Chunks of the 3C record of lines seen (0 without 3C), for tests of its size.
    #[cfg(test)]
    pub(super) fn seen_chunks(&self) -> usize {
        self.shadow
            .as_ref()
            .map_or(0, |shadow| shadow.seen().chunks())
    }

    /// Hands the 3C shadow, and how this level takes runs, to a thread of its own
    /// (`sim/detached.rs`); from now on every lookup's hit is logged for it. None if the level
    /// does not classify.
    pub(super) fn detach_shadow(&mut self) -> Option<(FullyAssociativeLru, RunShape)> {
        let shadow = self.shadow.take()?;
        self.hit_log = Some(Box::default());
        Some((shadow, self.run_shape()))
    }

    /// The hits logged since the last call, in order (empty unless the shadow is detached).
    pub(super) fn take_hit_log(&mut self) -> HitLog {
        self.hit_log
            .as_mut()
            .map(|log| log.take_all())
            .unwrap_or_default()
    }

    /// Takes the shadow back, with the causes of the misses it classified meanwhile (its
    /// counts hold only causes).
    pub(super) fn attach_shadow(&mut self, shadow: FullyAssociativeLru, causes: &Counts) {
        self.counts.add(causes);
        self.shadow = Some(shadow);
        self.hit_log = None;
        #[cfg(test)]
        {
            self.shadow_returns += 1;
        }
    }

    #[inline]
    pub(super) fn set_of(&self, line: u64) -> usize {
        match self.set_mask {
            Some(mask) => (line & mask) as usize,
            None => (line % self.sets) as usize,
        }
    }

    /// Whether this level is LRU, the policy with fast paths of its own.
    #[inline(always)]
    pub(super) fn is_lru(&self) -> bool {
        matches!(self.replacement, Fast::LruRings)
    }

    /// Whether `line` is resident (no state changes).
    pub(super) fn holds(&self, line: u64) -> bool {
        let ways = self.ways;
        self.tags[self.set_of(line) * ways..][..ways].contains(&tag_of(line))
    }

    /// One access (possibly straddling); returns true on a miss. Rules 3 and 6 of the module
    /// docs live here.
    #[inline]
    pub(super) fn access(&mut self, addr: u64, len: u32, is_store: bool) -> bool {
        let (first, last) = line_span(addr, len, self.line_shift);
        let outcome = if first == last {
            self.touch(first)
        } else {
            self.touch_lines(first, last)
        };
        self.counts.record(is_store, outcome);
        outcome != Outcome::Hit
    }

    /// The accesses of one batch in order, as [`Self::access`] would take them one by one;
    /// those that miss are appended to `misses` (the next level's batch) when there is one.
    ///
    /// LRU gets loops of its own, with the way count a constant for 8, 12 and 16 ways and the
    /// 3C shadow compiled in or out, counting in locals; every other policy takes the accesses
    /// one by one.
    pub(super) fn run_batch(&mut self, batch: &[Access], mut misses: Option<&mut Stream>) {
        if !self.is_lru() {
            for access in batch {
                let missed = self.access(access.addr, access.len, access.is_store);
                if let (true, Some(misses)) = (missed, misses.as_deref_mut()) {
                    misses.push(*access);
                }
            }
            return;
        }
        let shadow = if self.shadow.is_some() {
            HERE
        } else if self.hit_log.is_some() {
            DETACHED
        } else {
            NONE
        };
        match (self.ways, shadow) {
            (8, NONE) => self.lru_batch::<8, NONE>(batch, misses),
            (8, HERE) => self.lru_batch::<8, HERE>(batch, misses),
            (8, _) => self.lru_batch::<8, DETACHED>(batch, misses),
            (12, NONE) => self.lru_batch::<12, NONE>(batch, misses),
            (12, HERE) => self.lru_batch::<12, HERE>(batch, misses),
            (12, _) => self.lru_batch::<12, DETACHED>(batch, misses),
            (16, NONE) => self.lru_batch::<16, NONE>(batch, misses),
            (16, HERE) => self.lru_batch::<16, HERE>(batch, misses),
            (16, _) => self.lru_batch::<16, DETACHED>(batch, misses),
            (_, NONE) => self.lru_batch::<0, NONE>(batch, misses),
            (_, HERE) => self.lru_batch::<0, HERE>(batch, misses),
            (_, _) => self.lru_batch::<0, DETACHED>(batch, misses),
        }
    }

    /// [`Self::run_batch`] for LRU with `WAYS` ways (0: the level's own count, not a constant)
    /// and the 3C shadow as `SHADOW` says ([`NONE`], [`HERE`] or [`DETACHED`]: the hits
    /// logged).
    ///
    /// Counts live in locals for the batch.
    fn lru_batch<const WAYS: usize, const SHADOW: u8>(
        &mut self,
        batch: &[Access],
        mut misses: Option<&mut Stream>,
    ) {
        let shift = self.line_shift;
        let mut counts = Counts::default();
        let mut evictions = 0;
        for access in batch {
            let (first, last) = line_span(access.addr, access.len, shift);
            let outcome = if first != last {
                self.touch_lines(first, last)
            } else {
                let set = self.set_of(first);
                let hit = self.lru_touch::<WAYS>(set, first, &mut evictions);
                if SHADOW == DETACHED
                    && let Some(log) = self.hit_log.as_mut()
                {
                    log.push(hit);
                }
                let seen = match &mut self.shadow {
                    Some(shadow) if SHADOW == HERE => Some(shadow.access(first)),
                    _ => None,
                };
                classified(hit, seen)
            };
            counts.record(access.is_store, outcome);
            if let (true, Some(misses)) = (outcome != Outcome::Hit, misses.as_deref_mut()) {
                misses.push(*access);
            }
        }
        counts.record_evictions(evictions);
        self.counts.add(&counts);
    }

    /// A straddling access: every line is looked up (replacement state updated for each);
    /// the worst outcome counts. Kept out of line so the one-line path stays small.
    #[inline(never)]
    fn touch_lines(&mut self, first: u64, last: u64) -> Outcome {
        (first..=last)
            .map(|line| self.touch(line))
            .fold(Outcome::Hit, Outcome::max)
    }

    /// One line: the lookup, and the 3C shadow's view of it if this level classifies.
    #[inline(always)]
    fn touch(&mut self, line: u64) -> Outcome {
        let hit = self.lookup(line);
        if let Some(log) = self.hit_log.as_mut() {
            log.push(hit);
        }
        let seen = self.shadow.as_mut().map(|shadow| shadow.access(line));
        classified(hit, seen)
    }

    /// Looks `line` up in its set, updating replacement state; returns true on a hit. LRU, the
    /// default and the benchmarked policy, is inline; the others are out of line so the hot
    /// path stays small.
    #[inline(always)]
    fn lookup(&mut self, line: u64) -> bool {
        let set = self.set_of(line);
        if !self.is_lru() {
            return self.lookup_other(set, line);
        }
        // Width-generic: the batch loops ([`Self::run_batch`]) have the fixed-width copies.
        let mut evictions = 0;
        let hit = self.lru_touch::<0>(set, line, &mut evictions);
        self.counts.record_evictions(evictions);
        hit
    }

    /// An LRU lookup of one line, at once (the first level's path in `Hierarchy::access`):
    /// true on a hit. The common widths get code of their own: with the way count a constant,
    /// the scan over the set compiles to a dozen compares against memory and the ring
    /// arithmetic folds (1.2× on a 12-way L1 that misses every access).
    #[inline(always)]
    pub(super) fn lru_lookup_now(&mut self, line: u64) -> bool {
        let set = self.set_of(line);
        let mut evictions = 0;
        let hit = match self.ways {
            8 => self.lru_touch::<8>(set, line, &mut evictions),
            12 => self.lru_touch::<12>(set, line, &mut evictions),
            16 => self.lru_touch::<16>(set, line, &mut evictions),
            _ => self.lru_touch::<0>(set, line, &mut evictions),
        };
        self.counts.record_evictions(evictions);
        hit
    }

    /// Looks `line` up in LRU set `set` of `WAYS` ways (0: the level's own count, not a
    /// constant): the ring is updated, a deeper hit finished out of line, an eviction counted
    /// in `evictions`. True on a hit.
    #[inline(always)]
    fn lru_touch<const WAYS: usize>(&mut self, set: usize, line: u64, evictions: &mut u64) -> bool {
        let ways = if WAYS == 0 { self.ways } else { WAYS };
        let tags = &mut self.tags[set * ways..][..ways];
        match lru_probe(tags, &mut self.ring_heads[set], tag_of(line), evictions) {
            Probe::Hit => true,
            Probe::Miss => false,
            Probe::HitDeeper => {
                self.lru_hit_deeper(set, line);
                true
            }
        }
    }

    /// An LRU hit neither at the most nor at the least recent way of `set`: finds the way and
    /// moves it to the front. Out of line: it is the rarer, longer case, and keeping it out
    /// keeps the inline lookup (which every miss passes through) small.
    #[inline(never)]
    fn lru_hit_deeper(&mut self, set: usize, line: u64) {
        let tag = tag_of(line);
        let ways = self.ways;
        let tags = &mut self.tags[set * ways..][..ways];
        let head = &mut self.ring_heads[set];
        // No early exit: where a line sits in its ring moves as heads rotate, so an exit
        // branch would mispredict on cyclic traces; a full pass does not.
        let mut found = 0;
        for (way, &held) in tags.iter().enumerate() {
            if held == tag {
                found = way;
            }
        }
        // Recency position of the hit: its distance from the head around the ring.
        let position = wrap_add(found, ways - *head as usize, ways);
        if position != 0 {
            ring_move_to_front(tags, head, position, tag);
        }
    }

    /// [`Self::lookup`] for every policy but LRU: through the policy's [`FastSets`].
    ///
    /// [`FastSets`]: super::policy::FastSets
    #[inline(never)]
    fn lookup_other(&mut self, set: usize, line: u64) -> bool {
        let Fast::Sets(sets) = &mut self.replacement else {
            unreachable!("LRU is looked up inline")
        };
        let ways = self.ways;
        let tags = &mut self.tags[set * ways..][..ways];
        match sets.look_up(set, tags, tag_of(line)) {
            Lookup::Hit => true,
            Lookup::Filled => false,
            Lookup::Replaced => {
                self.counts.record_evictions(1);
                false
            }
        }
    }

    /// Resident line numbers per set, in the policy's order: most recent first for LRU, from
    /// the way its [`FastSets::first_way`] names for the others.
    ///
    /// [`FastSets::first_way`]: super::policy::FastSets::first_way
    pub(super) fn resident(&self) -> Vec<Vec<u64>> {
        self.tags
            .chunks(self.ways)
            .enumerate()
            .map(|(set, tags)| {
                let start = match &self.replacement {
                    Fast::LruRings => self.ring_heads[set] as usize,
                    Fast::Sets(sets) => sets.first_way(set),
                };
                (0..self.ways)
                    .map(|i| tags[wrap_add(start, i, self.ways)])
                    .filter(|&t| t != EMPTY)
                    .map(tag_of)
                    .collect()
            })
            .collect()
    }
}

/// The ways of every set (`sets × ways`) of `geometry`, or why no engine can simulate it
/// under `policy`: a geometry without sets, ways or a usable line, or ways the policy refuses
/// (tree pseudo-LRU: a power of two up to 64).
pub(super) fn usable(geometry: &CacheLevel, policy: Policy) -> Result<usize, SimError> {
    let bad = || SimError::BadGeometry {
        name: geometry.name.clone(),
        sets: geometry.sets,
        ways: geometry.ways,
    };
    // Lines of at least 2 B (geometry rule 2): no line number can equal `EMPTY`.
    if geometry.sets == 0
        || geometry.ways == 0
        || !geometry.line.is_power_of_two()
        || geometry.line < 2
    {
        return Err(bad());
    }
    let slots = usize::try_from(geometry.sets)
        .ok()
        .and_then(|sets| sets.checked_mul(geometry.ways as usize))
        .ok_or_else(bad)?;
    if let Some(needs) = policy.rule().refuses_ways(geometry.ways) {
        return Err(SimError::WaysRefused {
            name: geometry.name.clone(),
            policy: policy.rule().title(),
            needs,
            ways: geometry.ways,
        });
    }
    Ok(slots)
}

/// Where a level's 3C shadow is, for the batch loop: none, here, or detached (hits logged).
const NONE: u8 = 0;
const HERE: u8 = 1;
const DETACHED: u8 = 2;

/// The first and last line an access of `len` bytes at `addr` touches (an empty access
/// touches its first byte's line).
#[inline(always)]
pub(super) fn line_span(addr: u64, len: u32, line_shift: u32) -> (u64, u64) {
    let last = addr.saturating_add(u64::from(len.max(1)) - 1);
    (addr >> line_shift, last >> line_shift)
}
