//! What one access did at a level ([`Outcome`]), the one rule that classifies a miss
//! ([`classified`]), and a level's counts ([`Counts`]) with the operations every path of the
//! simulator updates them by.

use super::LevelStats;
use super::shadow::{RunTally, ShadowOutcome};

/// What one line access did at a level; for a straddling access, the worst of its lines
/// (ordered: a compulsory miss outranks a capacity one, which outranks a conflict). `Miss` is
/// a miss at a level that does not classify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Outcome {
    Hit,
    Conflict,
    Capacity,
    Compulsory,
    Miss,
}

const OUTCOMES: usize = Outcome::Miss as usize + 1;

/// A line's outcome at a level from its set lookup (`hit`) and, where the level classifies,
/// the 3C shadow's view of the line (Hill's definitions): a miss is compulsory the first time
/// the level sees the line, capacity if a fully-associative LRU cache of the level's size
/// missed too, conflict otherwise. Every path that classifies, one access or a tally of many
/// ([`Counts::record_causes`]), goes through here.
#[inline(always)]
pub(super) fn classified(hit: bool, seen: Option<ShadowOutcome>) -> Outcome {
    match seen {
        _ if hit => Outcome::Hit,
        None => Outcome::Miss,
        Some(seen) if seen.first_touch => Outcome::Compulsory,
        Some(seen) if !seen.fully_associative_hit => Outcome::Capacity,
        Some(_) => Outcome::Conflict,
    }
}

/// A level's counts. Loads and stores are indexed by `is_store` and causes by [`Outcome`], so
/// counting one access branches neither on its kind nor on what it did; the `Hit` and `Miss`
/// slots of `by_outcome` take those writes and are never read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counts {
    /// Loads (`[0]`) and stores (`[1]`).
    accesses: [u64; 2],
    /// Load (`[0]`) and store (`[1]`) misses.
    misses: [u64; 2],
    /// Valid lines replaced.
    evictions: u64,
    by_outcome: [u64; OUTCOMES],
}

impl Counts {
    /// One access (a straddle's worst line) that did `outcome`.
    #[inline(always)]
    pub(super) fn record(&mut self, is_store: bool, outcome: Outcome) {
        self.record_lookup(is_store, outcome == Outcome::Hit);
        self.record_cause(outcome);
    }

    /// One access whose set lookup hit or missed; its miss's cause is recorded apart
    /// ([`Self::record_cause`]), by whatever classifies it.
    #[inline(always)]
    pub(super) fn record_lookup(&mut self, is_store: bool, hit: bool) {
        let kind = usize::from(is_store);
        self.accesses[kind] += 1;
        self.misses[kind] += u64::from(!hit);
    }

    /// The cause of one access's outcome (nothing that is read, for a hit or an unclassified
    /// miss).
    #[inline(always)]
    pub(super) fn record_cause(&mut self, outcome: Outcome) {
        self.by_outcome[outcome as usize] += 1;
    }

    /// `n` accesses that hit without being looked up: repeats of a line known to be its
    /// set's most recent.
    #[inline(always)]
    pub(super) fn record_hits(&mut self, is_store: bool, n: u64) {
        self.accesses[usize::from(is_store)] += n;
    }

    /// `n` accesses that each missed and evicted a line without being looked up: the rest of
    /// a run of distinct lines whose sets hold only lines of the run (`level/runs.rs`). Their
    /// causes, where the level classifies, come apart ([`Self::record_causes`]).
    pub(super) fn record_evicting_misses(&mut self, is_store: bool, n: u64) {
        let kind = usize::from(is_store);
        self.accesses[kind] += n;
        self.misses[kind] += n;
        self.evictions += n;
    }

    /// `n` valid lines replaced.
    #[inline(always)]
    pub(super) fn record_evictions(&mut self, n: u64) {
        self.evictions += n;
    }

    /// The causes of `misses` misses whose shadow outcomes `tally` sums (the rest of its
    /// count neither a first touch nor a fully-associative hit), each as [`classified`] says.
    pub(super) fn record_causes(&mut self, tally: RunTally, misses: u64) {
        let neither = misses - tally.first_touches - tally.fully_associative_hits;
        let views = [
            (true, false, tally.first_touches),
            (false, true, tally.fully_associative_hits),
            (false, false, neither),
        ];
        for (first_touch, fully_associative_hit, n) in views {
            let seen = ShadowOutcome {
                fully_associative_hit,
                first_touch,
            };
            self.by_outcome[classified(false, Some(seen)) as usize] += n;
        }
    }

    /// Adds `other`'s counts (a batch's, kept apart while it ran).
    #[inline]
    pub(super) fn add(&mut self, other: &Self) {
        for (total, count) in self.accesses.iter_mut().zip(other.accesses) {
            *total += count;
        }
        for (total, count) in self.misses.iter_mut().zip(other.misses) {
            *total += count;
        }
        self.evictions += other.evictions;
        for (total, count) in self.by_outcome.iter_mut().zip(other.by_outcome) {
            *total += count;
        }
    }

    pub(super) fn stats(&self) -> LevelStats {
        let cause = |outcome: Outcome| self.by_outcome[outcome as usize];
        LevelStats {
            loads: self.accesses[0],
            stores: self.accesses[1],
            load_misses: self.misses[0],
            store_misses: self.misses[1],
            evictions: self.evictions,
            compulsory: cause(Outcome::Compulsory),
            capacity: cause(Outcome::Capacity),
            conflict: cause(Outcome::Conflict),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn seen(first_touch: bool, fully_associative_hit: bool) -> Option<ShadowOutcome> {
        Some(ShadowOutcome {
            fully_associative_hit,
            first_touch,
        })
    }

    #[test]
    fn a_miss_is_classified_by_the_shadow_and_a_hit_never() {
        let table = [
            (true, seen(true, false), Outcome::Hit),
            (true, None, Outcome::Hit),
            (false, None, Outcome::Miss),
            (false, seen(true, false), Outcome::Compulsory),
            (false, seen(false, false), Outcome::Capacity),
            (false, seen(false, true), Outcome::Conflict),
        ];
        for (hit, view, outcome) in table {
            assert_eq!(classified(hit, view), outcome, "{hit} {view:?}");
        }
    }

    #[test]
    fn counts_reach_the_stats_by_kind_and_cause() {
        let mut counts = Counts::default();
        counts.record(false, Outcome::Hit);
        counts.record(true, Outcome::Conflict);
        counts.record(false, Outcome::Miss);
        counts.record_hits(false, 5);
        counts.record_evicting_misses(true, 4);
        let tally = RunTally {
            fully_associative_hits: 1,
            first_touches: 2,
        };
        counts.record_causes(tally, 4);
        counts.record_evictions(2);
        let mut doubled = counts;
        doubled.add(&counts);
        let stats = doubled.stats();
        let expected = LevelStats {
            loads: 2 * 7,
            stores: 2 * 5,
            load_misses: 2,
            store_misses: 2 * 5,
            evictions: 2 * 6,
            compulsory: 2 * 2,
            capacity: 2,
            conflict: 2 * 2,
        };
        assert_eq!(stats, expected);
    }
}
