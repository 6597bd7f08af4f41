//! True least-recently-used replacement (cachegrind's, the default): a hit makes its line the
//! most recent, a miss evicts the least recent. Lines list most recent first.
//!
//! The fast engine keeps LRU sets as rings in the level (`sim/level.rs`: the ring heads, and
//! the batch, run and move paths built on them); the ring operations themselves are here. The
//! reference keeps each set as a `Vec`, most recent first.

use std::collections::HashMap;

use super::{EMPTY_WAY, Fast, Lookup, PlainSets, Rule, wrap_add};
use crate::cache::geometry::CacheLevel;

#[derive(Debug)]
pub(super) struct Lru;

impl Rule for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }

    fn summary(&self) -> &'static str {
        "True least-recently-used (cachegrind's policy)"
    }

    fn title(&self) -> &'static str {
        "LRU"
    }

    /// The ring head.
    fn state_bytes_per_set(&self) -> u64 {
        4
    }

    fn fast(&self, _: &CacheLevel, _: u64, _: usize) -> Fast {
        Fast::LruRings
    }

    fn plain(&self, geometry: &CacheLevel, _: u64, _: usize) -> Box<dyn PlainSets> {
        Box::new(PlainLru {
            ways: geometry.ways as usize,
            sets: HashMap::new(),
        })
    }
}

/// The reference's LRU sets: each reached set's lines, most recent first.
#[derive(Debug)]
struct PlainLru {
    ways: usize,
    sets: HashMap<u64, Vec<u64>>,
}

impl PlainSets for PlainLru {
    fn look_up(&mut self, set: u64, line: u64) -> Lookup {
        let lines = self.sets.entry(set).or_default();
        if let Some(i) = lines.iter().position(|&held| held == line) {
            lines.remove(i);
            lines.insert(0, line);
            return Lookup::Hit;
        }
        lines.insert(0, line);
        if lines.len() > self.ways {
            lines.pop();
            return Lookup::Replaced;
        }
        Lookup::Filled
    }

    fn resident(&self, set: u64) -> Vec<u64> {
        self.sets.get(&set).cloned().unwrap_or_default()
    }
}

/// What [`lru_probe`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::cache::sim) enum Probe {
    /// At the most or the least recent way; the ring is updated.
    Hit,
    /// Not in the set; the line replaced the least recent tag.
    Miss,
    /// Elsewhere in the set; nothing is updated yet (the level's `lru_hit_deeper` does it).
    HitDeeper,
}

/// The inline part of an LRU lookup in one ring set: each set's tags are a ring in recency
/// order, most recent at `head`, then onwards (wrapping within the set), least recent last.
/// Counts a valid tag a miss evicts.
///
/// A miss moves the head back one way onto the least recent tag and overwrites it — O(1),
/// where keeping tags most-recent first in place (cachegrind's layout) shifted the whole set.
/// The most and the least recent ways are checked first: cyclic traces (a loop over a few
/// lines more than a set holds, or exactly as many) hit the latter every time, and the move
/// is O(1). Then one pass over the set tells a miss from a deeper hit.
#[inline(always)]
pub(in crate::cache::sim) fn lru_probe(
    tags: &mut [u64],
    head: &mut u32,
    tag: u64,
    evictions: &mut u64,
) -> Probe {
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
    *evictions += u64::from(victim != EMPTY_WAY);
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

/// Makes the tag at recency `position` of a ring set (see [`lru_probe`]) the most recent, as
/// `tag`. Either the `position` more recent tags move one step older, or the older ones move
/// one step more recent and the head steps back onto the freed least recent slot — whichever
/// moves fewer tags: a hit at position p costs O(min(p, ways - 1 - p)) tag moves.
#[inline]
pub(in crate::cache::sim) fn ring_move_to_front(
    tags: &mut [u64],
    head: &mut u32,
    position: usize,
    tag: u64,
) {
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

#[cfg(test)]
mod tests {
    use crate::cache::sim::Policy;
    use crate::cache::sim::tests::{loads, tiny};

    #[test]
    fn lru_tiny_cache_exact_contents_and_counts() {
        let mut h = tiny(Policy::LRU, false);
        // Lines 0,2,4 share set 0; line 1 is set 1. 0 2 0 4 → 4 evicts 2 (LRU).
        loads(&mut h, &[0, 2, 0, 4, 1]);
        assert_eq!(h.resident_lines(0), vec![vec![4 * 16, 0], vec![16]]);
        let s = h.stats()[0];
        assert_eq!((s.loads, s.load_misses, s.evictions), (5, 4, 1));
        loads(&mut h, &[2]); // 2 was evicted: miss, evicts 0 (LRU now)
        assert_eq!(h.resident_lines(0)[0], vec![2 * 16, 4 * 16]);
        assert_eq!(h.stats()[0].load_misses, 5);
    }
}
