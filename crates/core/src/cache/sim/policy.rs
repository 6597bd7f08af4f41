//! Replacement policies: what [`Policy`] is, the list of them ([`Policy::ALL`]) that the
//! command line, both engines and the tests read, and the [`Rule`] each policy implements in
//! a file of its own under `policy/`.
//!
//! A policy's file holds all of it: its names and help line, which way counts it takes, the
//! bytes of state it allocates per set, its set lookups in the fast engine and, written out
//! again plainly, in the reference engine (`sim/reference.rs`), and its hand-worked tests. The
//! proptests beside the simulator draw every policy in [`Policy::ALL`] and hold the fast
//! engine to the reference, so a new policy is checked as soon as it is listed there.
//!
//! LRU is the one policy the fast engine also knows by name: its rings and the fast paths
//! built on them (batches, runs and moves taken whole, `sim/level/`) stay in the level, and its
//! [`Rule::fast`] says so ([`Fast::LruRings`]). Every other policy's lookups are called through
//! [`FastSets`], out of the LRU hot path.

mod fifo;
mod lru;
mod random;
mod tree_plru;

pub(super) use lru::{Probe, lru_probe, ring_move_to_front};

use std::fmt;

use serde::{Serialize, Serializer};

use crate::cache::geometry::CacheLevel;

/// Replacement policy, the same for every level of a hierarchy: one of [`Policy::ALL`], with
/// the seed it draws from if it is a seeded one.
#[derive(Clone, Copy)]
pub struct Policy {
    rule: &'static dyn Rule,
    /// The generator's seed for a seeded policy, 0 otherwise (so equality ignores it).
    seed: u64,
}

impl Policy {
    /// True least-recently-used (cachegrind's policy, the default).
    pub const LRU: Policy = Policy::of(&lru::Lru);
    /// Binary-tree pseudo-LRU (what many real L1s use); needs a power-of-two number of ways.
    pub const TREE_PLRU: Policy = Policy::of(&tree_plru::TreePlru);
    /// First in, first out: hits do not change the order.
    pub const FIFO: Policy = Policy::of(&fifo::Fifo);

    /// Every policy, in the order `sim --help` lists them; seeded ones with seed 0
    /// ([`Policy::with_seed`] sets another). Adding a policy is its file under `policy/` and
    /// one line here.
    pub const ALL: &'static [Policy] = &[
        Policy::LRU,
        Policy::TREE_PLRU,
        Policy::FIFO,
        Policy::of(&random::Random),
    ];

    const fn of(rule: &'static dyn Rule) -> Policy {
        Policy { rule, seed: 0 }
    }

    /// A uniformly random way, from a generator seeded with `seed` (reproducible).
    pub fn random(seed: u64) -> Policy {
        Policy::of(&random::Random).with_seed(seed)
    }

    /// The policy `sim --policy` calls `name` (or records call it), seed 0.
    pub fn named(name: &str) -> Option<Policy> {
        Policy::ALL
            .iter()
            .copied()
            .find(|p| p.name() == name || p.rule.record_name() == name)
    }

    /// This policy drawing from `seed`, if it is seeded; unchanged otherwise.
    pub fn with_seed(self, seed: u64) -> Policy {
        Policy {
            seed: if self.rule.seeded() { seed } else { 0 },
            ..self
        }
    }

    /// The word `sim --policy` takes.
    pub fn name(&self) -> &'static str {
        self.rule.name()
    }

    /// One line saying what it does (`sim --help`).
    pub fn summary(&self) -> &'static str {
        self.rule.summary()
    }

    /// What text output calls it: `LRU`, `tree pseudo-LRU`, `random (seed 7)`.
    pub fn title(&self) -> String {
        match self.seed() {
            Some(seed) => format!("{} (seed {seed})", self.rule.title()),
            None => self.rule.title().to_string(),
        }
    }

    /// The seed of a seeded policy.
    pub fn seed(&self) -> Option<u64> {
        self.rule.seeded().then_some(self.seed)
    }

    /// Whether a level of `ways` ways can run this policy.
    pub fn takes_ways(&self, ways: u32) -> bool {
        self.rule.refuses_ways(ways).is_none()
    }

    pub(super) fn rule(&self) -> &'static dyn Rule {
        self.rule
    }

    /// Whether this is LRU, whose fast paths the fast engine has built in.
    pub(super) fn is_lru(&self) -> bool {
        *self == Policy::LRU
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy::LRU
    }
}

impl PartialEq for Policy {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name() && self.seed == other.seed
    }
}

impl Eq for Policy {}

impl fmt::Debug for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.seed() {
            Some(seed) => write!(f, "Policy({}, seed {seed})", self.name()),
            None => write!(f, "Policy({})", self.name()),
        }
    }
}

/// As records have always carried it: the name (`"lru"`, `"tree-plru"`), or for a seeded
/// policy the name over its seed (`{"random": {"seed": 7}}`).
impl Serialize for Policy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        #[derive(Serialize)]
        struct Seeded {
            seed: u64,
        }
        match self.seed() {
            None => serializer.serialize_str(self.rule.record_name()),
            Some(seed) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(self.rule.record_name(), &Seeded { seed })?;
                map.end()
            }
        }
    }
}

/// One replacement policy: everything both engines and the command line need of it.
///
/// Contract (the proptests check it against the reference): a lookup of the line the level
/// looked up last is a hit that changes nothing, because the hierarchy counts such repeats
/// without a lookup (`Hierarchy::access`); the fast and the plain lookups agree hit for hit,
/// eviction for eviction, and list a set's lines in the same order.
pub(super) trait Rule: Sync {
    /// The word `sim --policy` takes (lower case, no spaces).
    fn name(&self) -> &'static str;

    /// The word records carry, where it differs from [`Rule::name`].
    fn record_name(&self) -> &'static str {
        self.name()
    }

    /// One line for `sim --help` (no final period, as clap prints help lines).
    fn summary(&self) -> &'static str;

    /// What text output calls it (`tree pseudo-LRU`).
    fn title(&self) -> &'static str;

    /// Whether it draws from a seeded generator (`sim --seed`).
    fn seeded(&self) -> bool {
        false
    }

    /// What a set needs that `ways` ways are not (for the error), if it cannot run on them.
    fn refuses_ways(&self, ways: u32) -> Option<&'static str> {
        let _ = ways;
        None
    }

    /// Bytes of replacement state per set the fast engine allocates up front, beside the 8
    /// bytes per way of tags (`state_bytes` checks them against the budget before anything is
    /// allocated).
    fn state_bytes_per_set(&self) -> u64;

    /// The fast engine's replacement state for a level of `geometry`, the `level`-th from the
    /// first (a seeded policy draws a stream of its own per level).
    fn fast(&self, geometry: &CacheLevel, seed: u64, level: usize) -> Fast;

    /// The reference engine's sets for such a level.
    fn plain(&self, geometry: &CacheLevel, seed: u64, level: usize) -> Box<dyn PlainSets>;
}

/// What one lookup did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lookup {
    Hit,
    /// A miss that filled an empty way.
    Filled,
    /// A miss that replaced a valid line (an eviction).
    Replaced,
}

/// A level's replacement state in the fast engine.
#[derive(Debug, Clone)]
pub(super) enum Fast {
    /// LRU rings, kept by the level itself (`sim/level.rs`) with the fast paths built on them.
    LruRings,
    /// Any other policy's state, looked up through it.
    Sets(Box<dyn FastSets>),
}

/// A policy's state for every set of one level of the fast engine. The level keeps the tags:
/// set `s`'s ways are `tags[s × ways ..][.. ways]`, each the complement of its line number
/// (`!line`), [`EMPTY_WAY`] for an empty way.
pub(super) trait FastSets: fmt::Debug + Send + BoxedClone {
    /// Looks `tag` up in set `set` whose ways are `tags`, updating the replacement state, and
    /// brings it in on a miss.
    fn look_up(&mut self, set: usize, tags: &mut [u64], tag: u64) -> Lookup;

    /// The way a set's lines are listed from (`Hierarchy::resident_lines`), going up and
    /// wrapping: a ring's head, or way 0 for policies that keep lines in their way.
    fn first_way(&self, set: usize) -> usize {
        let _ = set;
        0
    }
}

/// A copy of a policy's [`FastSets`] behind its box, so that a level can be cloned (the tests
/// try a level's plan on a copy). Every `Clone` state has it; a policy derives `Clone`.
pub(super) trait BoxedClone {
    fn boxed_clone(&self) -> Box<dyn FastSets>;
}

impl<T: FastSets + Clone + 'static> BoxedClone for T {
    fn boxed_clone(&self) -> Box<dyn FastSets> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn FastSets> {
    fn clone(&self) -> Self {
        self.boxed_clone()
    }
}

/// The tag of an empty way in the fast engine (no line's complement is 0).
pub(super) const EMPTY_WAY: u64 = 0;

/// `(a + b) mod ways` for `a, b < ways`, without a division: a step around a ring set.
#[inline]
pub(super) fn wrap_add(a: usize, b: usize, ways: usize) -> usize {
    let sum = a + b;
    if sum >= ways { sum - ways } else { sum }
}

/// A policy's sets for one level of the reference engine, made as they are first reached.
pub(super) trait PlainSets: fmt::Debug + Send {
    /// Looks line number `line` up in set `set` (its set index), bringing it in on a miss.
    fn look_up(&mut self, set: u64, line: u64) -> Lookup;

    /// The line numbers set `set` holds, in the policy's order (as the fast engine lists them).
    /// Read where the tests compare both engines' contents.
    #[cfg_attr(not(test), allow(dead_code))]
    fn resident(&self, set: u64) -> Vec<u64>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are unique and lead back to their policy, seeds only stick to seeded policies,
    /// and records carry what they always did.
    #[test]
    fn every_policy_is_named_once_and_serialised_as_before() {
        for (i, policy) in Policy::ALL.iter().enumerate() {
            assert_eq!(Policy::named(policy.name()), Some(*policy));
            assert_eq!(Policy::named(policy.rule.record_name()), Some(*policy));
            assert!(!policy.summary().ends_with('.'), "{policy:?}");
            for other in &Policy::ALL[i + 1..] {
                assert_ne!(policy.name(), other.name());
                assert_ne!(policy.rule.record_name(), other.rule.record_name());
            }
            let seeded = policy.with_seed(9);
            assert_eq!(seeded.seed().is_some(), policy.rule.seeded());
            assert_eq!(seeded == *policy, !policy.rule.seeded(), "{policy:?}");
        }
        let json = |p: Policy| serde_json::to_string(&p).unwrap();
        assert_eq!(json(Policy::LRU), r#""lru""#);
        assert_eq!(json(Policy::TREE_PLRU), r#""tree-plru""#);
        assert_eq!(json(Policy::FIFO), r#""fifo""#);
        assert_eq!(json(Policy::random(7)), r#"{"random":{"seed":7}}"#);
        assert_eq!(Policy::named("plru"), Some(Policy::TREE_PLRU));
        assert_eq!(Policy::named("no-such-policy"), None);
        assert_eq!(Policy::random(7).title(), "random (seed 7)");
        assert_eq!(Policy::default(), Policy::LRU);
    }
}
