//! The reference engine (`stridelab sim --engine reference`): a deliberately plain simulator,
//! the executable specification that the fast [`super::Hierarchy`] must equal count for count
//! and line for line (the proptests beside it check that). Every access looks up each line it
//! touches, one by one, at each level it reaches, in the policy's plain sets (each policy's
//! file under `sim/policy/` keeps them: a `Vec` per set in recency, insertion or way order,
//! made when the set is first reached); the 3C shadow is a fully-associative LRU kept as each
//! held line's last use, and a `HashSet` of the lines ever seen. No fast paths, batches, rings
//! or threads.
//!
//! Same semantics as the module docs of [`super`] (rules 1–6 and the 3C definitions), written
//! out again here rather than shared with the fast engine, so that the check compares two
//! readings of them; a policy's plain sets are likewise a second reading of its fast ones.
//! Tree-PLRU's tree and random's generator are shared by both readings, and hand-computed
//! unit tests pin them down.
//!
//! Its work is bounded like the fast engine's: the same checks of the levels before anything
//! is allocated (and nothing per set until a set is reached), and `sim`'s access estimate
//! before it runs. Each access costs a hash lookup per line and level, and the shadow a
//! logarithmic one; memory grows with the sets reached and the lines seen.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::policy::{Lookup, PlainSets};
use super::{LevelStats, Policy, SimError, check_levels, shadow_capacity};
use crate::cache::AccessSink;
use crate::cache::geometry::CacheLevel;

/// The reference hierarchy, innermost level first.
#[derive(Debug)]
pub(super) struct Reference {
    levels: Vec<Level>,
}

#[derive(Debug)]
struct Level {
    line_shift: u32,
    sets: u64,
    /// The policy's sets, made as they are reached.
    plain: Box<dyn PlainSets>,
    stats: LevelStats,
    /// Present when the hierarchy classifies misses (3C).
    shadow: Option<Shadow>,
}

/// What classifies a level's misses: every line it has seen, and a fully-associative LRU
/// cache of as many lines as the level holds.
#[derive(Debug)]
struct Shadow {
    seen: HashSet<u64>,
    /// Each held line's last use (the shadow's access count then) …
    last_use: HashMap<u64, u64>,
    /// … and the held lines by last use, least recent first.
    by_last_use: BTreeMap<u64, u64>,
    accesses: u64,
    capacity: usize,
}

/// Why an access missed, worst last (its worst line's cause counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cause {
    Conflict,
    Capacity,
    Compulsory,
}

impl Reference {
    /// Empty caches for `levels`, innermost first, all with `policy`, classifying misses if
    /// `classify_3c`; refused exactly as [`super::Hierarchy::with_state_budget`] refuses them.
    pub(super) fn new(
        levels: &[CacheLevel],
        policy: Policy,
        classify_3c: bool,
        budget: u64,
    ) -> Result<Self, SimError> {
        check_levels(levels, policy, classify_3c, budget)?;
        let mut built = Vec::with_capacity(levels.len());
        for (index, geometry) in levels.iter().enumerate() {
            let shadow = if classify_3c {
                Some(Shadow {
                    seen: HashSet::new(),
                    last_use: HashMap::new(),
                    by_last_use: BTreeMap::new(),
                    accesses: 0,
                    capacity: shadow_capacity(geometry)?,
                })
            } else {
                None
            };
            built.push(Level {
                line_shift: geometry.line.trailing_zeros(),
                sets: u64::from(geometry.sets),
                plain: policy
                    .rule()
                    .plain(geometry, policy.seed().unwrap_or(0), index),
                stats: LevelStats::default(),
                shadow,
            });
        }
        Ok(Self { levels: built })
    }

    /// Per-level counts, innermost first.
    pub(super) fn stats(&self) -> Vec<LevelStats> {
        self.levels.iter().map(|l| l.stats).collect()
    }

    /// Zeroes the counts but keeps the caches' contents and the lines seen.
    pub(super) fn reset_stats(&mut self) {
        for level in &mut self.levels {
            level.stats = LevelStats::default();
        }
    }

    /// Resident line addresses per set, in the order [`super::Hierarchy::resident_lines`]
    /// promises.
    #[cfg(test)]
    pub(super) fn resident_lines(&self, level: usize) -> Vec<Vec<u64>> {
        let l = &self.levels[level];
        (0..l.sets)
            .map(|index| {
                l.plain
                    .resident(index)
                    .into_iter()
                    .map(|line| line << l.line_shift)
                    .collect()
            })
            .collect()
    }

    /// One access: at each level, every line it touches looked up (and shown to the shadow);
    /// counted once, as a miss if any line missed, classified by its worst line; a miss goes
    /// on to the next level whole, a hit stops.
    fn access(&mut self, addr: u64, len: u32, is_store: bool) {
        for level in &mut self.levels {
            let first = addr >> level.line_shift;
            let last = addr.saturating_add(u64::from(len.max(1)) - 1) >> level.line_shift;
            let mut missed = false;
            let mut worst: Option<Cause> = None;
            for line in first..=last {
                let hit = level.lookup(line);
                missed |= !hit;
                if let Some(shadow) = &mut level.shadow {
                    let (first_touch, held) = shadow.access(line);
                    let cause = if first_touch {
                        Cause::Compulsory
                    } else if !held {
                        Cause::Capacity
                    } else {
                        Cause::Conflict
                    };
                    if !hit {
                        worst = worst.max(Some(cause));
                    }
                }
            }
            let s = &mut level.stats;
            if is_store {
                s.stores += 1;
                s.store_misses += u64::from(missed);
            } else {
                s.loads += 1;
                s.load_misses += u64::from(missed);
            }
            match worst {
                Some(Cause::Compulsory) => s.compulsory += 1,
                Some(Cause::Capacity) => s.capacity += 1,
                Some(Cause::Conflict) => s.conflict += 1,
                None => {}
            }
            if !missed {
                return;
            }
        }
    }
}

impl Level {
    /// Looks `line` up in its set, bringing it in on a miss; true on a hit.
    fn lookup(&mut self, line: u64) -> bool {
        match self.plain.look_up(line % self.sets, line) {
            Lookup::Hit => true,
            Lookup::Filled => false,
            Lookup::Replaced => {
                self.stats.evictions += 1;
                false
            }
        }
    }
}

impl Shadow {
    /// One line through the shadow: whether the level had never seen it, and whether the
    /// fully-associative cache held it; it is then the most recent, and the least recent
    /// line goes if the cache is over its capacity.
    fn access(&mut self, line: u64) -> (bool, bool) {
        let first_touch = self.seen.insert(line);
        self.accesses += 1;
        let held = match self.last_use.insert(line, self.accesses) {
            Some(previous) => {
                self.by_last_use.remove(&previous);
                true
            }
            None => false,
        };
        self.by_last_use.insert(self.accesses, line);
        if self.by_last_use.len() > self.capacity
            && let Some((_, oldest)) = self.by_last_use.pop_first()
        {
            self.last_use.remove(&oldest);
        }
        (first_touch, held)
    }
}

impl AccessSink for Reference {
    fn load(&mut self, addr: u64, len: u32) {
        self.access(addr, len, false);
    }

    fn store(&mut self, addr: u64, len: u32) {
        self.access(addr, len, true);
    }
}
