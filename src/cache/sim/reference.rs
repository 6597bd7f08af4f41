//! A deliberately plain simulator (tests only) that the fast [`super::Hierarchy`] must equal
//! count for count and line for line: per-set `Vec`s kept in recency / insertion / way order,
//! a fully-associative LRU as a `Vec` in recency order, a `HashSet` of lines ever seen; no
//! fast paths, no rings, no linked lists. Same semantics as the module docs of [`super`]
//! (rules 1–6 and the 3C definitions); tree-PLRU and random replacement reuse the fast
//! simulator's tree and generator helpers, whose behaviour the hand-computed unit tests pin
//! down.

use std::collections::HashSet;

use super::{LevelStats, Policy, plru_touch, plru_victim, splitmix, xorshift};
use crate::cache::AccessSink;
use crate::cache::geometry::CacheLevel;

/// An invalid way (no line number is `u64::MAX`).
const EMPTY: u64 = u64::MAX;

#[derive(Debug)]
struct Level {
    line_shift: u32,
    ways: usize,
    /// LRU: most recent first; FIFO: newest first; tree-PLRU and random: one entry per way
    /// (`EMPTY` when invalid).
    sets: Vec<Vec<u64>>,
    plru_bits: Vec<u64>,
    rng: u64,
    stats: LevelStats,
    /// Ever seen, and the fully-associative LRU of the level's size (most recent first).
    classify: Option<(HashSet<u64>, Vec<u64>)>,
    capacity: usize,
}

/// The reference hierarchy; build it with the same arguments as [`super::Hierarchy::new`].
#[derive(Debug)]
pub(super) struct Reference {
    levels: Vec<Level>,
    policy: Policy,
}

impl Reference {
    pub(super) fn new(levels: &[CacheLevel], policy: Policy, classify_3c: bool) -> Self {
        let levels = levels
            .iter()
            .enumerate()
            .map(|(index, geometry)| {
                let sets = geometry.sets as usize;
                let ways = geometry.ways as usize;
                let fixed_ways = matches!(policy, Policy::TreePlru | Policy::Random { .. });
                Level {
                    line_shift: geometry.line.trailing_zeros(),
                    ways,
                    sets: vec![
                        if fixed_ways {
                            vec![EMPTY; ways]
                        } else {
                            Vec::new()
                        };
                        sets
                    ],
                    plru_bits: vec![0; sets],
                    rng: match policy {
                        Policy::Random { seed } => {
                            splitmix(seed ^ (index as u64).wrapping_mul(0xA076_1D64_78BD_642F)) | 1
                        }
                        _ => 0,
                    },
                    stats: LevelStats::default(),
                    classify: classify_3c.then(|| (HashSet::new(), Vec::new())),
                    capacity: sets * ways,
                }
            })
            .collect();
        Self { levels, policy }
    }

    pub(super) fn stats(&self) -> Vec<LevelStats> {
        self.levels.iter().map(|l| l.stats).collect()
    }

    /// Resident line addresses per set, in the order [`super::Hierarchy::resident_lines`]
    /// promises.
    pub(super) fn resident_lines(&self, level: usize) -> Vec<Vec<u64>> {
        let l = &self.levels[level];
        l.sets
            .iter()
            .map(|set| {
                set.iter()
                    .filter(|&&t| t != EMPTY)
                    .map(|&line| line << l.line_shift)
                    .collect()
            })
            .collect()
    }

    fn access(&mut self, addr: u64, len: u32, is_store: bool) {
        let policy = self.policy;
        for level in &mut self.levels {
            let first = addr >> level.line_shift;
            let last = addr.saturating_add(u64::from(len.max(1)) - 1) >> level.line_shift;
            let mut missed = false;
            // 0 none, 1 conflict, 2 capacity, 3 compulsory: the worst line's reason counts.
            let mut worst = 0;
            for line in first..=last {
                let hit = level.lookup(line, policy);
                let capacity = level.capacity;
                if let Some((seen, fully_associative)) = &mut level.classify {
                    let first_touch = seen.insert(line);
                    let fa_hit = match fully_associative.iter().position(|&l| l == line) {
                        Some(i) => {
                            fully_associative.remove(i);
                            true
                        }
                        None => false,
                    };
                    fully_associative.insert(0, line);
                    fully_associative.truncate(capacity);
                    if !hit {
                        worst = worst.max(if first_touch {
                            3
                        } else if !fa_hit {
                            2
                        } else {
                            1
                        });
                    }
                }
                missed |= !hit;
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
                3 => s.compulsory += 1,
                2 => s.capacity += 1,
                1 => s.conflict += 1,
                _ => {}
            }
            if !missed {
                return;
            }
        }
    }
}

impl Level {
    fn lookup(&mut self, line: u64, policy: Policy) -> bool {
        let set_index = (line % self.sets.len() as u64) as usize;
        let ways = self.ways;
        let set = &mut self.sets[set_index];
        match policy {
            Policy::Lru | Policy::Fifo => {
                if let Some(i) = set.iter().position(|&t| t == line) {
                    if policy == Policy::Lru {
                        set.remove(i);
                        set.insert(0, line);
                    }
                    return true;
                }
                set.insert(0, line);
                if set.len() > ways {
                    set.pop();
                    self.stats.evictions += 1;
                }
                false
            }
            Policy::TreePlru => {
                let depth = ways.trailing_zeros();
                let tree = &mut self.plru_bits[set_index];
                if let Some(way) = set.iter().position(|&t| t == line) {
                    plru_touch(tree, depth, way);
                    return true;
                }
                let way = set.iter().position(|&t| t == EMPTY).unwrap_or_else(|| {
                    self.stats.evictions += 1;
                    plru_victim(*tree, depth)
                });
                set[way] = line;
                plru_touch(tree, depth, way);
                false
            }
            Policy::Random { .. } => {
                if set.contains(&line) {
                    return true;
                }
                let way = set.iter().position(|&t| t == EMPTY).unwrap_or_else(|| {
                    self.stats.evictions += 1;
                    (xorshift(&mut self.rng) % ways as u64) as usize
                });
                set[way] = line;
                false
            }
        }
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
