//! The simulator a user picks (`stridelab sim --engine`): the fast [`Hierarchy`], or the plain
//! reference (`reference.rs`), the executable specification the fast one is checked against.
//! Both take the same levels, refuse the same ones and give the same counts; a [`Simulator`]
//! is either, fed and read the same way.

use super::reference::Reference;
use super::{Hierarchy, LevelStats, Policy, SimError};
use crate::cache::AccessSink;
use crate::cache::geometry::CacheLevel;

/// Which simulator runs a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Engine {
    /// [`Hierarchy`]: batches, runs and moves taken whole, lower levels on threads of their own.
    #[default]
    Fast,
    /// A lookup per line and level, one access at a time: slower, and plain enough to read as
    /// the definition of the counts.
    Reference,
}

/// A cache hierarchy simulated by either [`Engine`].
#[derive(Debug)]
pub struct Simulator {
    engine: Built,
}

#[derive(Debug)]
enum Built {
    /// Boxed: the fast hierarchy's state is far larger than the reference's handle.
    Fast(Box<Hierarchy>),
    Reference(Reference),
}

impl Simulator {
    /// Empty (cold) caches for `levels`, innermost first, all with `policy`, classifying
    /// misses (3C) if `classify_3c`, by `engine`. Either engine refuses levels that
    /// [`Hierarchy::with_state_budget`] refuses, with the same error, before allocating.
    pub fn new(
        engine: Engine,
        levels: &[CacheLevel],
        policy: Policy,
        classify_3c: bool,
        budget: u64,
    ) -> Result<Self, SimError> {
        let engine = match engine {
            Engine::Fast => Built::Fast(Box::new(Hierarchy::with_state_budget(
                levels,
                policy,
                classify_3c,
                budget,
            )?)),
            Engine::Reference => {
                Built::Reference(Reference::new(levels, policy, classify_3c, budget)?)
            }
        };
        Ok(Self { engine })
    }

    /// Where the accesses go (the engine itself: no dispatch of its own per access).
    pub fn sink(&mut self) -> &mut dyn AccessSink {
        match &mut self.engine {
            Built::Fast(hierarchy) => hierarchy.as_mut(),
            Built::Reference(reference) => reference,
        }
    }

    /// Per-level counts, innermost first.
    pub fn stats(&mut self) -> Vec<LevelStats> {
        match &mut self.engine {
            Built::Fast(hierarchy) => hierarchy.stats(),
            Built::Reference(reference) => reference.stats(),
        }
    }

    /// Zeroes the counts but keeps the caches' contents (and the lines seen), so a warm-up
    /// pass can be followed by a measured one.
    pub fn reset_stats(&mut self) {
        match &mut self.engine {
            Built::Fast(hierarchy) => hierarchy.reset_stats(),
            Built::Reference(reference) => reference.reset_stats(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::parse_cache_override;

    fn levels() -> Vec<CacheLevel> {
        ["L1d=1K,2,64", "L2=4K,4,64"]
            .iter()
            .map(|text| parse_cache_override(text).unwrap())
            .collect()
    }

    /// A warm-up pass, reset, then a measured pass with loads, stores, straddles and a column
    /// walk: both engines count the same, under every policy, 3C on.
    #[test]
    fn both_engines_count_a_warm_trace_alike() {
        for policy in Policy::ALL.iter().map(|policy| policy.with_seed(3)) {
            let stats = [Engine::Fast, Engine::Reference].map(|engine| {
                let mut sim = Simulator::new(engine, &levels(), policy, true, 1 << 20).unwrap();
                let feed = |sink: &mut dyn AccessSink| {
                    sink.load_run(0, 8, 1000, 8);
                    sink.load_run(4, 4096, 64, 8);
                    sink.store(60, 8);
                    sink.modify(9000, 4);
                };
                feed(sim.sink());
                sim.reset_stats();
                feed(sim.sink());
                sim.stats()
            });
            assert_eq!(stats[0], stats[1], "{policy:?}");
            assert_eq!(stats[0][0].loads, 1000 + 64 + 1, "{policy:?}");
            assert!(stats[0][0].misses() > 0, "{policy:?}");
        }
    }

    #[test]
    fn both_engines_refuse_alike() {
        let cases = [
            (Vec::new(), Policy::LRU, 1 << 20),
            (levels(), Policy::LRU, 16),
            (
                vec![parse_cache_override("L1d=768,12,64").unwrap()],
                Policy::TREE_PLRU,
                1 << 20,
            ),
        ];
        for (levels, policy, budget) in cases {
            let errors = [Engine::Fast, Engine::Reference]
                .map(|engine| Simulator::new(engine, &levels, policy, true, budget).unwrap_err());
            assert_eq!(errors[0], errors[1]);
        }
    }
}
