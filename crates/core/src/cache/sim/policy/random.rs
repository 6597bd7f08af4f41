//! Random replacement: empty ways are filled first, in way order; then a miss evicts a
//! uniformly random way, drawn from the crate's seeded generator (one stream per level, so a
//! run is reproducible). Hits change nothing. Lines stay in their way and list in way order.

use std::collections::HashMap;

use super::{EMPTY_WAY, Fast, FastSets, Lookup, PlainSets, Rule};
use crate::cache::geometry::CacheLevel;
use crate::stats::SplitMix64;

#[derive(Debug)]
pub(super) struct Random;

impl Rule for Random {
    fn name(&self) -> &'static str {
        "random"
    }

    fn summary(&self) -> &'static str {
        "A random way (seeded by --seed)"
    }

    fn title(&self) -> &'static str {
        "random"
    }

    fn seeded(&self) -> bool {
        true
    }

    fn state_bytes_per_set(&self) -> u64 {
        0
    }

    fn fast(&self, _: &CacheLevel, seed: u64, level: usize) -> Fast {
        Fast::Sets(Box::new(RandomWays {
            state: level_stream(seed, level),
        }))
    }

    fn plain(&self, geometry: &CacheLevel, seed: u64, level: usize) -> Box<dyn PlainSets> {
        Box::new(PlainRandom {
            ways: geometry.ways as usize,
            sets: HashMap::new(),
            rng: level_stream(seed, level),
        })
    }
}

/// The generator for level `level` under `seed`: a distinct stream per level.
fn level_stream(seed: u64, level: usize) -> SplitMix64 {
    SplitMix64::new(seed ^ (level as u64).wrapping_mul(0xA076_1D64_78BD_642F))
}

/// The level's generator; the tags are all the state a set has.
#[derive(Debug, Clone)]
struct RandomWays {
    state: SplitMix64,
}

impl FastSets for RandomWays {
    fn look_up(&mut self, _: usize, tags: &mut [u64], tag: u64) -> Lookup {
        if tags.contains(&tag) {
            return Lookup::Hit;
        }
        let (way, lookup) = match tags.iter().position(|&t| t == EMPTY_WAY) {
            Some(free) => (free, Lookup::Filled),
            None => (self.state.below_by_modulo(tags.len()), Lookup::Replaced),
        };
        tags[way] = tag;
        lookup
    }
}

/// The reference's sets: each reached set's ways (`None` while empty), and the level's
/// generator.
#[derive(Debug)]
struct PlainRandom {
    ways: usize,
    sets: HashMap<u64, Vec<Option<u64>>>,
    rng: SplitMix64,
}

impl PlainSets for PlainRandom {
    fn look_up(&mut self, set: u64, line: u64) -> Lookup {
        let ways = self.ways;
        let lines = self.sets.entry(set).or_insert_with(|| vec![None; ways]);
        if lines.contains(&Some(line)) {
            return Lookup::Hit;
        }
        let (way, lookup) = match lines.iter().position(Option::is_none) {
            Some(free) => (free, Lookup::Filled),
            None => (self.rng.below_by_modulo(ways), Lookup::Replaced),
        };
        lines[way] = Some(line);
        lookup
    }

    fn resident(&self, set: u64) -> Vec<u64> {
        self.sets
            .get(&set)
            .map(|lines| lines.iter().flatten().copied().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use crate::cache::sim::tests::{level, loads};
    use crate::cache::sim::{Hierarchy, Policy};

    #[test]
    fn random_is_reproducible_and_fills_invalid_ways_first() {
        let geometry = [level("L1d", 256, 4, 16)]; // 4 sets × 4 ways
        let run = |seed| {
            let mut h = Hierarchy::new(&geometry, Policy::random(seed), false).unwrap();
            loads(&mut h, &[0, 4, 8, 12]);
            assert_eq!(h.stats()[0].evictions, 0);
            assert_eq!(h.resident_lines(0)[0], vec![0, 64, 128, 192]);
            loads(&mut h, &(16..64).step_by(4).collect::<Vec<_>>());
            (h.resident_lines(0), h.stats()[0])
        };
        let (a, sa) = run(7);
        let (b, sb) = run(7);
        assert_eq!((a.clone(), sa), (b, sb));
        assert_eq!(sa.evictions, 12);
        assert_eq!(a[0].len(), 4);
        let (c, _) = run(8);
        assert_ne!(a, c, "different seeds should pick different victims");
    }
}
