//! One simulated cache level of the fast engine: its tags, replacement state (LRU and FIFO
//! rings, tree pseudo-LRU bits, seeded random), counts (`sim/counts.rs`) and 3C shadow, the
//! set lookups the hierarchy calls per access, and which geometries a level can take
//! ([`usable`]). The hot path lives here; `#[inline]` attributes mark what the hierarchy
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
use super::shadow::{FullyAssociativeLru, ShadowOutcome};
use super::stream::{Access, Stream};
use super::{Policy, SimError};
use crate::cache::geometry::CacheLevel;
use crate::stats::SplitMix64;

/// No line number: lines are addresses shifted right by at least one bit (geometry rule 2).
pub(super) const NO_LINE: u64 = u64::MAX;

/// The tag of an empty way. A way holds its line's complement ([`tag_of`]), so an empty tag
/// array is all zero bytes: the allocator hands it over as untouched zero pages, and a
/// level's tags cost memory and time only for the sets a trace reaches (an L3 of 260 MiB has
/// 34 MiB of tags; filling them took 27 ms per point).
const EMPTY: u64 = 0;

/// The tag that stands for `line` in a way (never [`EMPTY`], as no line is [`NO_LINE`]).
#[inline(always)]
fn tag_of(line: u64) -> u64 {
    !line
}

/// Replacement state beyond the tag array (and the ring heads, [`LevelSim::ring_heads`]).
#[derive(Debug, Clone)]
enum Replacement {
    /// Each set's tags are a ring in recency order: most recent at `ring_heads[set]`, then
    /// onwards (wrapping within the set), least recent last. A miss moves the head back one
    /// way onto the least recent tag and overwrites it — O(1), where keeping tags most-recent
    /// first in place (cachegrind's layout) shifted the whole set. A hit at recency position p
    /// closes the gap from whichever side is shorter: O(min(p, ways - 1 - p)) tag moves, so
    /// the cyclic patterns that hit the least recent way cost O(1) too.
    Lru,
    /// The same rings in insertion order (newest at the head); hits change nothing.
    Fifo,
    /// Tags stay in their way; `bits[set]` holds the tree (node k at bit k-1, root k=1; a
    /// bit set means "the pseudo-LRU side is the right subtree").
    TreePlru { bits: Vec<u64>, depth: u32 },
    /// Tags stay in their way; invalid ways are filled first, then a random victim.
    Random { state: SplitMix64 },
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
    /// Each set's ring head under LRU and FIFO (empty for the other policies). Kept out of
    /// [`Replacement`] so the inline LRU path reaches it without matching on the policy.
    ring_heads: Vec<u32>,
    replacement: Replacement,
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
        let replacement = match policy {
            Policy::Lru => Replacement::Lru,
            Policy::Fifo => Replacement::Fifo,
            Policy::TreePlru => Replacement::TreePlru {
                bits: vec![0; sets as usize],
                depth: geometry.ways.trailing_zeros(),
            },
            Policy::Random { seed } => Replacement::Random {
                state: random_start(seed, index),
            },
        };
        Ok(Self {
            geometry: geometry.clone(),
            sets,
            set_mask: geometry.sets.is_power_of_two().then(|| sets - 1),
            ways,
            line_shift: geometry.line.trailing_zeros(),
            tags: vec![EMPTY; slots],
            ring_heads: match replacement {
                Replacement::Lru | Replacement::Fifo => vec![0; sets as usize],
                Replacement::TreePlru { .. } | Replacement::Random { .. } => Vec::new(),
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
        if !matches!(self.replacement, Replacement::Lru) {
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
        if !matches!(self.replacement, Replacement::Lru) {
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

    /// [`Self::lookup`] for every policy but LRU.
    #[inline(never)]
    fn lookup_other(&mut self, set: usize, line: u64) -> bool {
        let tag = tag_of(line);
        let ways = self.ways;
        let tags = &mut self.tags[set * ways..][..ways];
        match &mut self.replacement {
            Replacement::Lru => unreachable!("LRU is looked up inline"),
            Replacement::Fifo => {
                if tags.contains(&tag) {
                    return true;
                }
                if ring_push_front(tags, &mut self.ring_heads[set], tag) != EMPTY {
                    self.counts.record_evictions(1);
                }
                false
            }
            Replacement::TreePlru { bits, depth } => {
                let depth = *depth;
                let tree = &mut bits[set];
                let way = match tags.iter().position(|&t| t == tag) {
                    Some(way) => {
                        plru_touch(tree, depth, way);
                        return true;
                    }
                    None => match tags.iter().position(|&t| t == EMPTY) {
                        Some(free) => free,
                        None => {
                            self.counts.record_evictions(1);
                            plru_victim(*tree, depth)
                        }
                    },
                };
                tags[way] = tag;
                plru_touch(tree, depth, way);
                false
            }
            Replacement::Random { state } => {
                if tags.contains(&tag) {
                    return true;
                }
                let way = match tags.iter().position(|&t| t == EMPTY) {
                    Some(free) => free,
                    None => {
                        self.counts.record_evictions(1);
                        state.below_by_modulo(ways)
                    }
                };
                tags[way] = tag;
                false
            }
        }
    }

    /// Resident line numbers per set: recency order (most recent first) for LRU, insertion
    /// order (newest first) for FIFO, way order for tree-PLRU and random.
    pub(super) fn resident(&self) -> Vec<Vec<u64>> {
        let heads = match &self.replacement {
            Replacement::Lru | Replacement::Fifo => Some(&self.ring_heads),
            Replacement::TreePlru { .. } | Replacement::Random { .. } => None,
        };
        self.tags
            .chunks(self.ways)
            .enumerate()
            .map(|(set, tags)| {
                // Rings read from their head; the other policies in way order.
                let start = heads.map_or(0, |heads| heads[set] as usize);
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
/// under `policy`: a geometry without sets, ways or a usable line, or tree pseudo-LRU on a
/// number of ways that is not a power of two up to 64.
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
    if policy == Policy::TreePlru && (!geometry.ways.is_power_of_two() || geometry.ways > 64) {
        return Err(SimError::PlruWays {
            name: geometry.name.clone(),
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

/// `(a + b) mod ways` for `a, b < ways`, without a division.
#[inline]
fn wrap_add(a: usize, b: usize, ways: usize) -> usize {
    let sum = a + b;
    if sum >= ways { sum - ways } else { sum }
}

/// What [`lru_probe`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// At the most or the least recent way; the ring is updated.
    Hit,
    /// Not in the set; the line replaced the least recent tag.
    Miss,
    /// Elsewhere in the set; nothing is updated yet ([`LevelSim::lru_hit_deeper`] does it).
    HitDeeper,
}

/// The inline part of an LRU lookup in one ring set (see [`Replacement::Lru`]); counts a
/// valid tag a miss evicts.
///
/// The most and the least recent ways are checked first: cyclic traces (a loop over a few
/// lines more than a set holds, or exactly as many) hit the latter every time, and the move
/// is O(1). Then one pass over the set tells a miss from a deeper hit.
#[inline(always)]
fn lru_probe(tags: &mut [u64], head: &mut u32, tag: u64, evictions: &mut u64) -> Probe {
    let ways = tags.len();
    let start = *head as usize;
    if tags[start] == tag {
        return Probe::Hit;
    }
    let oldest = if start == 0 { ways - 1 } else { start - 1 };
    if tags[oldest] == tag {
        *head = oldest as u32;
        return Probe::Hit;
    }
    if set_holds(tags, tag) {
        return Probe::HitDeeper;
    }
    // A miss: the head steps back onto the least recent tag, which the new one replaces.
    *head = oldest as u32;
    let victim = std::mem::replace(&mut tags[oldest], tag);
    *evictions += u64::from(victim != EMPTY);
    Probe::Miss
}

/// Whether `tag` is among `tags`: an OR over the set, with no dependency chain between
/// ways. Over a slice of unknown length it vectorises; over a constant width the compiler
/// emits a compare against memory per way, which measured faster on a set that misses every
/// access (in the profile the vector loop held ~40% of the samples; its 16-byte loads overlap
/// the previous access's 8-byte tag store, which cannot be forwarded to them).
#[inline(always)]
fn set_holds(tags: &[u64], tag: u64) -> bool {
    tags.iter().fold(false, |any, &held| any | (held == tag))
}

/// Makes the tag at recency `position` of a ring set (see [`Replacement::Lru`]) the most
/// recent, as `tag`. Either the `position` more recent tags move one step older, or the
/// older ones move one step more recent and the head steps back onto the freed least recent
/// slot — whichever moves fewer tags.
#[inline]
fn ring_move_to_front(tags: &mut [u64], head: &mut u32, position: usize, tag: u64) {
    let ways = tags.len();
    let start = *head as usize;
    if position <= ways - 1 - position {
        let mut to = wrap_add(start, position, ways);
        for _ in 0..position {
            let from = if to == 0 { ways - 1 } else { to - 1 };
            tags[to] = tags[from];
            to = from;
        }
        tags[start] = tag;
    } else {
        let mut to = wrap_add(start, position, ways);
        for _ in position..ways - 1 {
            let from = if to + 1 == ways { 0 } else { to + 1 };
            tags[to] = tags[from];
            to = from;
        }
        let new_head = if start == 0 { ways - 1 } else { start - 1 };
        tags[new_head] = tag;
        *head = new_head as u32;
    }
}

/// Puts `tag` at the head of a ring set in place of its oldest tag; returns that tag.
#[inline]
fn ring_push_front(tags: &mut [u64], head: &mut u32, tag: u64) -> u64 {
    let ways = tags.len();
    let start = *head as usize;
    let new_head = if start == 0 { ways - 1 } else { start - 1 };
    *head = new_head as u32;
    std::mem::replace(&mut tags[new_head], tag)
}

/// Marks `way` most recently used: every node on its path points away from it.
#[inline]
pub(super) fn plru_touch(tree: &mut u64, depth: u32, way: usize) {
    let mut node = 1usize;
    for level in (0..depth).rev() {
        let went_right = (way >> level) & 1;
        // The pseudo-LRU side is the other subtree.
        let lru_is_right = (went_right ^ 1) as u64;
        *tree = (*tree & !(1 << (node - 1))) | (lru_is_right << (node - 1));
        node = node * 2 + went_right;
    }
}

/// Follows the bits from the root to the pseudo-least-recently-used way.
#[inline]
pub(super) fn plru_victim(tree: u64, depth: u32) -> usize {
    let mut node = 1usize;
    let mut way = 0usize;
    for _ in 0..depth {
        let right = ((tree >> (node - 1)) & 1) as usize;
        way = way * 2 + right;
        node = node * 2 + right;
    }
    way
}

/// The random policy's generator for level `index` under `seed`: the crate's one seeded
/// generator, a distinct stream per level.
pub(super) fn random_start(seed: u64, index: usize) -> SplitMix64 {
    SplitMix64::new(seed ^ (index as u64).wrapping_mul(0xA076_1D64_78BD_642F))
}
