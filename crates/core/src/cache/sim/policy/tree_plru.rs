//! Binary-tree pseudo-LRU (what many real L1s use): a tree of bits over a set's ways, each
//! node pointing at the half that was used less recently; a touch points every node on its
//! way's path away from it, and the victim is found by following the bits from the root.
//! Empty ways are filled first, in way order. Needs a power-of-two number of ways up to 64
//! (the tree is one `u64` per set). Lines stay in their way and list in way order.

use std::collections::HashMap;

use super::{EMPTY_WAY, Fast, FastSets, Lookup, PlainSets, Rule};
use crate::cache::geometry::CacheLevel;

#[derive(Debug)]
pub(super) struct TreePlru;

impl Rule for TreePlru {
    fn name(&self) -> &'static str {
        "plru"
    }

    fn record_name(&self) -> &'static str {
        "tree-plru"
    }

    fn summary(&self) -> &'static str {
        "Binary-tree pseudo-LRU"
    }

    fn title(&self) -> &'static str {
        "tree pseudo-LRU"
    }

    fn refuses_ways(&self, ways: u32) -> Option<&'static str> {
        (!ways.is_power_of_two() || ways > 64).then_some("a power-of-two number of ways (≤ 64)")
    }

    /// The tree's bits.
    fn state_bytes_per_set(&self) -> u64 {
        8
    }

    fn fast(&self, geometry: &CacheLevel, _: u64, _: usize) -> Fast {
        Fast::Sets(Box::new(PlruTrees {
            bits: vec![0; geometry.sets as usize],
            depth: geometry.ways.trailing_zeros(),
        }))
    }

    fn plain(&self, geometry: &CacheLevel, _: u64, _: usize) -> Box<dyn PlainSets> {
        Box::new(PlainPlru {
            ways: geometry.ways as usize,
            sets: HashMap::new(),
        })
    }
}

/// Each set's tree, node k at bit k-1 (root k = 1, children 2k and 2k+1); a bit set means
/// "the pseudo-LRU side is the right subtree".
#[derive(Debug, Clone)]
struct PlruTrees {
    bits: Vec<u64>,
    depth: u32,
}

impl FastSets for PlruTrees {
    fn look_up(&mut self, set: usize, tags: &mut [u64], tag: u64) -> Lookup {
        let tree = &mut self.bits[set];
        if let Some(way) = tags.iter().position(|&t| t == tag) {
            plru_touch(tree, self.depth, way);
            return Lookup::Hit;
        }
        let (way, lookup) = match tags.iter().position(|&t| t == EMPTY_WAY) {
            Some(free) => (free, Lookup::Filled),
            None => (plru_victim(*tree, self.depth), Lookup::Replaced),
        };
        tags[way] = tag;
        plru_touch(tree, self.depth, way);
        lookup
    }
}

/// The reference's sets: each reached set's ways (`None` while empty) and its tree.
#[derive(Debug)]
struct PlainPlru {
    ways: usize,
    sets: HashMap<u64, (Vec<Option<u64>>, u64)>,
}

impl PlainSets for PlainPlru {
    fn look_up(&mut self, set: u64, line: u64) -> Lookup {
        let ways = self.ways;
        let depth = ways.trailing_zeros();
        let (lines, tree) = self
            .sets
            .entry(set)
            .or_insert_with(|| (vec![None; ways], 0));
        if let Some(way) = lines.iter().position(|&held| held == Some(line)) {
            plru_touch(tree, depth, way);
            return Lookup::Hit;
        }
        let (way, lookup) = match lines.iter().position(Option::is_none) {
            Some(free) => (free, Lookup::Filled),
            None => (plru_victim(*tree, depth), Lookup::Replaced),
        };
        lines[way] = Some(line);
        plru_touch(tree, depth, way);
        lookup
    }

    fn resident(&self, set: u64) -> Vec<u64> {
        self.sets
            .get(&set)
            .map(|(lines, _)| lines.iter().flatten().copied().collect())
            .unwrap_or_default()
    }
}

/// Marks `way` most recently used: every node on its path points away from it.
#[inline]
fn plru_touch(tree: &mut u64, depth: u32, way: usize) {
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
fn plru_victim(tree: u64, depth: u32) -> usize {
    let mut node = 1usize;
    let mut way = 0usize;
    for _ in 0..depth {
        let right = ((tree >> (node - 1)) & 1) as usize;
        way = way * 2 + right;
        node = node * 2 + right;
    }
    way
}

#[cfg(test)]
mod tests {
    use crate::cache::sim::tests::{level, loads};
    use crate::cache::sim::{Hierarchy, Policy, SimError};

    #[test]
    fn tree_plru_four_ways_exact_victims() {
        // 1 set × 4 ways × 16 B.
        let mut h = Hierarchy::new(&[level("L1d", 64, 4, 16)], Policy::TREE_PLRU, false).unwrap();
        loads(&mut h, &[0, 1, 2, 3]); // fills ways 0..3 in order
        assert_eq!(h.resident_lines(0)[0], vec![0, 16, 32, 48]);
        // After touching way 3 last, root points left, left node points at way 0.
        loads(&mut h, &[4]);
        assert_eq!(h.resident_lines(0)[0], vec![64, 16, 32, 48]);
        // Way 0 just touched: root → right, right node (last touched way 3) → way 2.
        loads(&mut h, &[5]);
        assert_eq!(h.resident_lines(0)[0], vec![64, 16, 80, 48]);
        // Touch line 1 (way 1): root → right; right node → way 3 (way 2 touched last).
        loads(&mut h, &[1, 6]);
        assert_eq!(h.resident_lines(0)[0], vec![64, 16, 80, 96]);
        let s = h.stats()[0];
        assert_eq!((s.loads, s.load_misses, s.evictions), (8, 7, 3));
    }

    #[test]
    fn tree_plru_differs_from_lru() {
        // 0 1 2 3 then 0 2: LRU victim is 1. PLRU after touching way 2 last: root → left,
        // left node last touched way 0 → way 1 → line 1. Then 0 1 3: LRU victim is 2.
        // PLRU: last touched way 3 → root → left; left node last touched way 1 → way 0 → line
        // 0 (LRU would keep 0). They differ here.
        let geometry = [level("L1d", 64, 4, 16)];
        let mut plru = Hierarchy::new(&geometry, Policy::TREE_PLRU, false).unwrap();
        let mut lru = Hierarchy::new(&geometry, Policy::LRU, false).unwrap();
        for h in [&mut plru, &mut lru] {
            loads(h, &[0, 1, 2, 3, 0, 2, 4, 0, 4, 3, 5]);
        }
        // LRU: after 0 1 2 3 0 2 → order 2 0 3 1; 4 evicts 1 → 4 2 0 3; 0 → 0 4 2 3;
        // 4 → 4 0 2 3; 3 → 3 4 0 2; 5 evicts 2.
        assert_eq!(lru.resident_lines(0)[0], vec![80, 48, 64, 0]);
        // PLRU ways: [0,1,2,3]; 4 → way 1. Touches: 0 (way 0), 4 (way 1), 3 (way 3) → root
        // left; left node: way 1 touched after way 0 → way 0 → 5 evicts line 0.
        assert_eq!(plru.resident_lines(0)[0], vec![80, 64, 32, 48]);
        assert_ne!(
            lru.contains(0, 0),
            plru.contains(0, 0),
            "PLRU approximates LRU"
        );
    }

    #[test]
    fn plru_rejects_twelve_ways() {
        let err = Hierarchy::new(&[level("L1d", 48 << 10, 12, 64)], Policy::TREE_PLRU, false)
            .unwrap_err();
        assert!(matches!(err, SimError::WaysRefused { ways: 12, .. }));
        assert_eq!(
            err.to_string(),
            "L1d: tree pseudo-LRU needs a power-of-two number of ways (≤ 64), not 12"
        );
    }
}
