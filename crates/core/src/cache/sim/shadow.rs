//! The 3C bookkeeping behind [`super::Hierarchy`], one per classified level: which lines the
//! level has ever seen (compulsory misses) and a fully-associative LRU shadow cache of the
//! level's size (capacity vs conflict misses).
//!
//! - [`SeenLines`]: one bit per line, in lazily allocated chunks found through a two-level
//!   directory.
//! - [`FullyAssociativeLru`]: the shadow, an open-addressing hash table of the lines it holds
//!   whose slots are also the nodes of its doubly-linked recency list.
//!
//! Why this shape: what a classified level touches per access must stay in the host's caches. The
//! shadow's table holds only the lines the shadow holds (at most the level's line count; a
//! quarter full up to 2 MiB of slots, half beyond), so a 32 KiB L1's takes 32 KiB and a 1 MiB
//! L2's (16 Ki lines) 1 MiB, within the host's L2; and the record of lines ever seen is a bit per
//! line, consulted only when the shadow misses. The table it replaced kept a 4-byte entry per
//! line ever seen and per level, indexed by line number: 16 MiB for a 4096² f64 matrix, whose
//! column walk put consecutive entries 4 KiB apart, a host cache and TLB miss on every access
//! (docs/simulator.md).
//!
//! Why a linked list rather than stamps: a stamp-based shadow (Bennett–Kruskal / Olken) was
//! built, proptested and measured against the list on the `benches/simulator.rs` traces: the
//! list was 1.1× faster on row and column order, the stamps 1.04–1.25× faster on random lines.
//! Strided traces are this tool's business.

mod moves;
mod seen;
mod segments;

use moves::Remnant;
pub(super) use moves::SideLines;
use seen::SeenLines;
use segments::MAX_SEGMENTS;
pub(super) use segments::Segment;

/// Slot index meaning "none" (list ends).
const NIL: u32 = u32::MAX;
/// A free slot's line (no line number can be this: lines are addresses shifted right by at
/// least one bit).
const NO_LINE: u64 = u64::MAX;
/// The largest shadow (in lines): its table, at most half full, must stay indexable by `u32`
/// below [`NIL`].
pub(super) const MAX_CAPACITY: usize = 1 << 30;
/// Slots a shadow's table starts with; it doubles whenever it would be fuller than
/// [`FullyAssociativeLru::fill_limit`].
const INITIAL_SLOTS: usize = 16;
/// Tables below this many slots (2 MiB) stay at most a quarter full, larger ones half.
const ROOMY_SLOTS: usize = 1 << 17;
/// Fibonacci hashing: multiplying by 2^64/φ and keeping the high bits spreads arithmetic
/// progressions of line numbers (every strided walk) evenly over the table.
pub(super) const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// A fully-associative LRU cache of `capacity` lines (the 3C shadow of one level). Its lines
/// live in an open-addressing (linear probing) hash table, never more than half full, and
/// each slot is also a node of the recency list (head: most recent; tail: the next victim).
/// O(1) expected per access. An eviction deletes by backward shift (no tombstones), and a
/// slot that moves takes its list links along.
#[derive(Debug, Clone)]
pub(super) struct FullyAssociativeLru {
    capacity: usize,
    /// Lines held.
    len: usize,
    /// A power of two in length.
    slots: Vec<Slot>,
    /// 64 − log2(slots.len()): a line's home slot is the top bits of its hash.
    shift: u32,
    head: u32,
    tail: u32,
    /// The most recent line: repeated touches of it change nothing and skip the table.
    last: u64,
    /// A slot that may hold the next line touched: the one more recent than the last line hit,
    /// as it was before that hit. A trace that walks again lines it walked before, in the same
    /// order (a matrix's next column, a repeated pass), finds each there, one host-cache hit
    /// instead of a probe into a table larger than the host's L1. Only a guess: checked
    /// against the slot's line before use.
    guess: u32,
    /// What strided runs left in the shadow, most recent first, when that is all it holds
    /// (at most `capacity` lines; the table is empty then). Empty while the table is in use.
    segments: Vec<Segment>,
    /// What a move run taken whole left, when that is all the shadow holds (the table is
    /// empty and there are no segments then): `shadow/moves.rs`. Boxed: inline, it spread the
    /// shadow's hot fields, and the 3C row-order bench ran 6–11% slower.
    remnant: Option<Box<Remnant>>,
    seen: SeenLines,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    line: u64,
    prev: u32,
    next: u32,
}

const FREE: Slot = Slot {
    line: NO_LINE,
    prev: NIL,
    next: NIL,
};

/// What the shadow says about one line access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ShadowOutcome {
    pub(super) fully_associative_hit: bool,
    pub(super) first_touch: bool,
}

/// The outcomes of a run's accesses past its prefix ([`FullyAssociativeLru::access_run`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct RunTally {
    pub(super) fully_associative_hits: u64,
    pub(super) first_touches: u64,
}

impl RunTally {
    const HIT: ShadowOutcome = ShadowOutcome {
        fully_associative_hit: true,
        first_touch: false,
    };

    fn add(&mut self, outcome: ShadowOutcome) {
        self.fully_associative_hits += u64::from(outcome.fully_associative_hit);
        self.first_touches += u64::from(outcome.first_touch);
    }
}

impl FullyAssociativeLru {
    /// An empty shadow; `capacity` is at most [`MAX_CAPACITY`].
    pub(super) fn new(capacity: usize) -> Self {
        debug_assert!((1..=MAX_CAPACITY).contains(&capacity));
        Self {
            capacity,
            len: 0,
            slots: vec![FREE; INITIAL_SLOTS],
            shift: 64 - INITIAL_SLOTS.trailing_zeros(),
            head: NIL,
            tail: NIL,
            last: NO_LINE,
            guess: NIL,
            segments: Vec::new(),
            remnant: None,
            seen: SeenLines::new(),
        }
    }

    /// The record of lines seen (tests check its size).
    #[cfg(test)]
    pub(super) fn seen(&self) -> &SeenLines {
        &self.seen
    }

    #[inline(always)]
    fn home(&self, line: u64) -> usize {
        (line.wrapping_mul(GOLDEN) >> self.shift) as usize
    }

    /// The slot holding `line` if it is the guessed slot or the one before it in recency
    /// (a line touched in between, as a column walk's stores come between its loads).
    #[inline(always)]
    fn guessed(&self, line: u64) -> Option<usize> {
        let guess = self.slots.get(self.guess as usize)?;
        if guess.line == line {
            return Some(self.guess as usize);
        }
        let before = guess.prev as usize;
        (self.slots.get(before)?.line == line).then_some(before)
    }

    /// `Ok(slot)` holding `line`, or `Err(slot)`: the free slot that ends its probe sequence.
    #[inline(always)]
    fn find(&self, line: u64) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(line);
        loop {
            match self.slots[i].line {
                held if held == line => return Ok(i),
                NO_LINE => return Err(i),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Inline always: it is the 3C levels' per-access work.
    #[inline(always)]
    pub(super) fn access(&mut self, line: u64) -> ShadowOutcome {
        if line == self.last {
            return ShadowOutcome {
                fully_associative_hit: true,
                first_touch: false,
            };
        }
        self.last = line;
        if !self.segments.is_empty() || self.remnant.is_some() {
            self.build_table();
        }
        let found = match self.guessed(line) {
            Some(slot) => Ok(slot),
            None => self.find(line),
        };
        match found {
            Ok(slot) => {
                self.guess = self.slots[slot].prev;
                self.move_to_front(slot as u32);
                ShadowOutcome {
                    fully_associative_hit: true,
                    first_touch: false,
                }
            }
            Err(free) => {
                self.insert(line, free);
                ShadowOutcome {
                    fully_associative_hit: false,
                    first_touch: self.seen.insert(line),
                }
            }
        }
    }

    /// A run of distinct lines, `run.line(k)` for k in `0..run.count` in order: the outcomes
    /// of the accesses below `prefix` go to `outcomes` (cleared first), the rest are tallied.
    ///
    /// Exact by two facts of a fully-associative LRU cache of C lines: once a run has missed
    /// on C distinct lines the cache holds only lines of the run, so every later line of it
    /// misses too; and a run whose lines are all held (at most C of them, so none is pushed
    /// out before its turn) hits on every line and ends up most recent, in its own order,
    /// the other lines keeping theirs. So a run whose first C lines meet none the cache holds
    /// misses throughout and leaves its last C lines, one [`Segment`]; one that equals a
    /// segment hits throughout and moves it to the front. Segments stay until a single access
    /// or a run that meets one only in part needs the table.
    ///
    /// Out of line: inlined into `LevelSim::take_run`, `sim col-sum` took 1.1–1.3× the CPU time.
    #[inline(never)]
    pub(super) fn access_run(
        &mut self,
        run: Segment,
        prefix: u64,
        outcomes: &mut Vec<ShadowOutcome>,
    ) -> RunTally {
        outcomes.clear();
        let mut tally = RunTally::default();
        let mut record = |k: u64, outcome: ShadowOutcome| {
            if k < prefix {
                outcomes.push(outcome);
            } else {
                tally.add(outcome);
            }
        };
        if run.count == 0 {
            return tally;
        }
        if self.remnant.is_some() {
            self.build_table();
        }
        let capacity = self.capacity as u64;
        if self.len == 0 {
            if let Some(at) = self.segments.iter().position(|held| *held == run) {
                for k in 0..run.count.min(prefix) {
                    record(k, RunTally::HIT);
                }
                tally.fully_associative_hits += run.count.saturating_sub(prefix);
                self.segments[..=at].rotate_right(1);
                self.last = run.line(run.count - 1);
                return tally;
            }
            let checked = Segment {
                count: run.count.min(capacity),
                ..run
            };
            // A run is checked against every segment: a long one may meet more of them.
            let room = run.count >= capacity
                || self.segments.len() < MAX_SEGMENTS.max((run.count / 4) as usize);
            if room && self.segments.iter().all(|held| checked.disjoint(held)) {
                let looked_up = prefix.min(run.count);
                for k in 0..looked_up {
                    record(k, self.run_miss(run.line(k)));
                }
                tally.first_touches += self.seen.insert_lines(run, looked_up..run.count);
                self.hold_only(run);
                return tally;
            }
            self.build_table();
        }
        for k in 0..run.count.min(capacity) {
            record(k, self.access(run.line(k)));
        }
        if run.count > capacity {
            let looked_up = prefix.clamp(capacity, run.count);
            for k in capacity..looked_up {
                record(k, self.run_miss(run.line(k)));
            }
            tally.first_touches += self.seen.insert_lines(run, looked_up..run.count);
            self.clear_table();
            self.hold_only(run);
        }
        tally
    }

    /// A line of a run that misses without looking: only whether it is a first touch.
    #[inline]
    fn run_miss(&mut self, line: u64) -> ShadowOutcome {
        ShadowOutcome {
            fully_associative_hit: false,
            first_touch: self.seen.insert(line),
        }
    }

    /// With the table empty: `run` (which missed throughout) becomes the most recent segment,
    /// and the least recent lines beyond the capacity go.
    fn hold_only(&mut self, run: Segment) {
        let capacity = self.capacity as u64;
        self.last = run.line(run.count - 1);
        if run.count >= capacity {
            self.segments.clear();
            self.segments.push(run.from(run.count - capacity));
            return;
        }
        self.segments.insert(0, run);
        let held: u64 = self.segments.iter().map(|segment| segment.count).sum();
        let mut excess = held.saturating_sub(capacity);
        while excess > 0 {
            let oldest = self.segments.last_mut().expect("segments hold the excess");
            if oldest.count <= excess {
                excess -= oldest.count;
                self.segments.pop();
            } else {
                *oldest = oldest.from(excess);
                excess = 0;
            }
        }
    }

    /// Puts the lines held outside the table (segments, or a move run's remnant) in it, least
    /// recent first, and drops them.
    #[cold]
    #[inline(never)]
    fn build_table(&mut self) {
        for line in self.take_remnant() {
            if let Err(free) = self.find(line) {
                self.insert(line, free);
            }
        }
        for at in (0..self.segments.len()).rev() {
            let segment = self.segments[at];
            for k in 0..segment.count {
                let line = segment.line(k);
                if let Err(free) = self.find(line) {
                    self.insert(line, free);
                }
            }
        }
        self.segments.clear();
    }

    /// Empties the table (its size stays).
    fn clear_table(&mut self) {
        self.slots.fill(FREE);
        self.len = 0;
        self.head = NIL;
        self.tail = NIL;
    }

    /// Puts `line` (absent; `free` ends its probe sequence) at the front, evicting the least
    /// recent line when full. Out of line: it is the longer path, taken on shadow misses.
    #[inline(never)]
    fn insert(&mut self, line: u64, free: usize) {
        let slot = if self.len == self.capacity {
            let victim = self.tail;
            self.unlink(victim);
            // The deletion empties one slot and fills none that was empty, so the first free
            // slot from `line`'s home is the one it emptied if that lies before `free`.
            let emptied = self.remove(victim as usize);
            let mask = self.slots.len() - 1;
            let home = self.home(line);
            if emptied.wrapping_sub(home) & mask < free.wrapping_sub(home) & mask {
                emptied
            } else {
                free
            }
        } else {
            self.len += 1;
            if self.len > self.fill_limit() {
                self.grow();
                self.find(line).unwrap_err()
            } else {
                free
            }
        };
        self.slots[slot].line = line;
        self.push_front(slot as u32);
    }

    /// Empties slot `hole` (already unlinked) by backward shift: each later entry of its
    /// cluster that may sit earlier (its home is not between the hole and it) moves into the
    /// hole, which moves on to where that entry was. Returns the slot left empty.
    fn remove(&mut self, mut hole: usize) -> usize {
        let mask = self.slots.len() - 1;
        let mut at = hole;
        loop {
            at = (at + 1) & mask;
            let line = self.slots[at].line;
            if line == NO_LINE {
                break;
            }
            let from_home = at.wrapping_sub(self.home(line)) & mask;
            let from_hole = at.wrapping_sub(hole) & mask;
            if from_home >= from_hole {
                self.relocate(at, hole);
                hole = at;
            }
        }
        self.slots[hole] = FREE;
        hole
    }

    /// Moves the entry in slot `from` to the free slot `to`, with its list neighbours'
    /// links (no entry links to a free slot, so none point at `to` yet).
    fn relocate(&mut self, from: usize, to: usize) {
        let entry = self.slots[from];
        self.slots[to] = entry;
        let to = to as u32;
        match entry.prev {
            NIL => self.head = to,
            p => self.slots[p as usize].next = to,
        }
        match entry.next {
            NIL => self.tail = to,
            n => self.slots[n as usize].prev = to,
        }
    }

    /// How many lines the table may hold before it doubles: a quarter of its slots while it
    /// is small enough for the host's L2 (probes and backward shifts walk shorter clusters:
    /// `sim col-sum` and the transpose 0.85–0.90 of the time at half), half beyond (a VM's
    /// 260 MiB L3 would otherwise ask for 512 MiB of slots).
    fn fill_limit(&self) -> usize {
        if self.slots.len() < ROOMY_SLOTS {
            self.slots.len() / 4
        } else {
            self.slots.len() / 2
        }
    }

    /// Doubles the table. The old slots are read in order (a walk along the list would jump
    /// across the whole table for a large shadow): each line moves to its slot in the new
    /// table, then the links are renamed from old slots to new.
    #[cold]
    fn grow(&mut self) {
        let doubled = vec![FREE; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        self.shift -= 1;
        let mut renamed = vec![NIL; old.len()];
        for (at, slot) in old.iter().enumerate() {
            if slot.line != NO_LINE {
                let to = self.find(slot.line).unwrap_err();
                self.slots[to].line = slot.line;
                renamed[at] = to as u32;
            }
        }
        let rename = |link: u32| {
            if link == NIL {
                NIL
            } else {
                renamed[link as usize]
            }
        };
        for (at, slot) in old.iter().enumerate() {
            if slot.line != NO_LINE {
                let to = &mut self.slots[renamed[at] as usize];
                to.prev = rename(slot.prev);
                to.next = rename(slot.next);
            }
        }
        self.head = rename(self.head);
        self.tail = rename(self.tail);
    }

    fn unlink(&mut self, node: u32) {
        let Slot { prev, next, .. } = self.slots[node as usize];
        match prev {
            NIL => self.head = next,
            p => self.slots[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.slots[n as usize].prev = prev,
        }
    }

    fn push_front(&mut self, node: u32) {
        let head = self.head;
        let n = &mut self.slots[node as usize];
        n.prev = NIL;
        n.next = head;
        match head {
            NIL => self.tail = node,
            h => self.slots[h as usize].prev = node,
        }
        self.head = node;
    }

    #[inline]
    fn move_to_front(&mut self, node: u32) {
        if self.head != node {
            self.unlink(node);
            self.push_front(node);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recency-vector model's outcome for `line`, which it then holds most recent.
    fn model_access(
        recency: &mut Vec<u64>,
        ever: &mut Vec<u64>,
        capacity: usize,
        line: u64,
    ) -> ShadowOutcome {
        let first_touch = !ever.contains(&line);
        if first_touch {
            ever.push(line);
        }
        let position = recency.iter().position(|&l| l == line);
        match position {
            Some(p) => {
                recency.remove(p);
            }
            None if recency.len() == capacity => {
                recency.pop();
            }
            None => {}
        }
        recency.insert(0, line);
        ShadowOutcome {
            fully_associative_hit: position.is_some(),
            first_touch,
        }
    }

    /// Runs (repeats of the last or of an earlier one, shifted, from the same line with another
    /// step or length, short ones piling up as segments, long ones past the capacity) and
    /// single accesses between them: every outcome, the tallies and the final order equal a
    /// recency vector's.
    #[test]
    fn runs_equal_a_recency_vector() {
        for capacity in [1usize, 2, 5, 16, 40] {
            let mut shadow = FullyAssociativeLru::new(capacity);
            let (mut recency, mut ever) = (Vec::new(), Vec::new());
            let mut outcomes = Vec::new();
            let mut state = 0x2545_F491u64 + capacity as u64;
            let mut next = move |below: u64| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state % below
            };
            let mut earlier = vec![Segment {
                first: 1000,
                step: 3,
                count: 4,
            }];
            for _ in 0..3000 {
                let last = earlier[earlier.len() - 1];
                let run = match next(8) {
                    6 => earlier[earlier.len() - 1 - next(earlier.len().min(5) as u64) as usize],
                    // From the same line as the last, with another step or length.
                    7 => Segment {
                        step: last.step + next(3) as i64 - 1,
                        count: last.count + next(3) - 1.min(last.count),
                        ..last
                    },
                    0 => {
                        let line = 900 + next(300);
                        let out = shadow.access(line);
                        assert_eq!(out, model_access(&mut recency, &mut ever, capacity, line));
                        continue;
                    }
                    1 => last,
                    2 => Segment {
                        first: last.first + next(3),
                        ..last
                    },
                    3 => Segment {
                        first: 1000 + next(200),
                        step: 1 + next(4) as i64,
                        count: next(4),
                    },
                    _ => Segment {
                        first: 1000 + next(200),
                        step: next(9) as i64 - 4,
                        count: next(3 * capacity as u64 + 2),
                    },
                };
                let run = Segment {
                    step: if run.step == 0 { 1 } else { run.step },
                    ..run
                };
                earlier.push(run);
                let prefix = next(run.count + 2);
                let tally = shadow.access_run(run, prefix, &mut outcomes);
                let mut expected = RunTally::default();
                for k in 0..run.count {
                    let want = model_access(&mut recency, &mut ever, capacity, run.line(k));
                    if k < prefix {
                        assert_eq!(outcomes[k as usize], want, "{run:?} access {k}");
                    } else {
                        expected.add(want);
                    }
                }
                assert_eq!(outcomes.len() as u64, run.count.min(prefix));
                assert_eq!(tally, expected, "{run:?}");
            }
            shadow.build_table();
            assert_eq!(recency_list(&shadow), recency);
        }
    }

    /// The shadow's lines along its recency list, most recent first.
    fn recency_list(shadow: &FullyAssociativeLru) -> Vec<u64> {
        let mut listed = Vec::new();
        let mut at = shadow.head;
        while at != NIL {
            listed.push(shadow.slots[at as usize].line);
            at = shadow.slots[at as usize].next;
        }
        listed
    }

    /// A shadow against a plain recency vector, through growth and evictions that shift
    /// clusters (lines chosen to collide in a small table).
    #[test]
    fn shadow_equals_a_recency_vector() {
        for capacity in [1usize, 2, 3, 7, 64] {
            let mut shadow = FullyAssociativeLru::new(capacity);
            let mut recency: Vec<u64> = Vec::new();
            let mut ever: Vec<u64> = Vec::new();
            let mut state = 0x9E37_79B9u64 + capacity as u64;
            for _ in 0..20_000 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let line = (state % 200) * 1024 + state % 3;
                let out = shadow.access(line);
                assert_eq!(out, model_access(&mut recency, &mut ever, capacity, line));
                assert_eq!(recency_list(&shadow), recency);
                assert!(2 * shadow.len <= shadow.slots.len());
            }
        }
    }
}
