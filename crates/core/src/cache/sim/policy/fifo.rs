//! First-in, first-out replacement: a miss evicts the line that came in first; hits change
//! nothing. Lines list newest first.
//!
//! Fast engine: each set is a ring in insertion order with a moving head, so a miss is O(1).
//! Reference: each set a `Vec`, newest first.

use std::collections::HashMap;

use super::{EMPTY_WAY, Fast, FastSets, Lookup, PlainSets, Rule};
use crate::cache::geometry::CacheLevel;

#[derive(Debug)]
pub(super) struct Fifo;

impl Rule for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn summary(&self) -> &'static str {
        "First in, first out"
    }

    fn title(&self) -> &'static str {
        "FIFO"
    }

    /// The ring head.
    fn state_bytes_per_set(&self) -> u64 {
        4
    }

    fn fast(&self, geometry: &CacheLevel, _: u64, _: usize) -> Fast {
        Fast::Sets(Box::new(FifoRings {
            heads: vec![0; geometry.sets as usize],
        }))
    }

    fn plain(&self, geometry: &CacheLevel, _: u64, _: usize) -> Box<dyn PlainSets> {
        Box::new(PlainFifo {
            ways: geometry.ways as usize,
            sets: HashMap::new(),
        })
    }
}

/// Each set's ring head: its newest tag; the oldest is the way before it (wrapping).
#[derive(Debug, Clone)]
struct FifoRings {
    heads: Vec<u32>,
}

impl FastSets for FifoRings {
    fn look_up(&mut self, set: usize, tags: &mut [u64], tag: u64) -> Lookup {
        if tags.contains(&tag) {
            return Lookup::Hit;
        }
        // The head steps back onto the oldest tag, which the new one replaces.
        let head = &mut self.heads[set];
        let oldest = match *head as usize {
            0 => tags.len() - 1,
            way => way - 1,
        };
        *head = oldest as u32;
        if std::mem::replace(&mut tags[oldest], tag) == EMPTY_WAY {
            Lookup::Filled
        } else {
            Lookup::Replaced
        }
    }

    fn first_way(&self, set: usize) -> usize {
        self.heads[set] as usize
    }
}

/// The reference's FIFO sets: each reached set's lines, newest first.
#[derive(Debug)]
struct PlainFifo {
    ways: usize,
    sets: HashMap<u64, Vec<u64>>,
}

impl PlainSets for PlainFifo {
    fn look_up(&mut self, set: u64, line: u64) -> Lookup {
        let lines = self.sets.entry(set).or_default();
        if lines.contains(&line) {
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

#[cfg(test)]
mod tests {
    use crate::cache::sim::Policy;
    use crate::cache::sim::tests::{loads, tiny};

    #[test]
    fn fifo_ignores_hits_when_choosing_a_victim() {
        let mut h = tiny(Policy::FIFO, false);
        loads(&mut h, &[0, 2, 0, 4]); // 0 was inserted first: FIFO evicts 0 despite the hit
        assert_eq!(h.resident_lines(0)[0], vec![4 * 16, 2 * 16]);
        let s = h.stats()[0];
        assert_eq!((s.load_misses, s.evictions), (3, 1));
    }
}
