//! What a level takes and passes to the level below: single accesses ([`Access`]), strided
//! runs taken whole ([`Run`]) and the misses of element moves, marked ([`MovesMissed`]), in
//! order ([`Stream`]); and the element moves the first level takes whole ([`Moves`]). A run
//! that misses whole stays one entry all the way down, so a column walk reaches every level
//! as one run per column (`level/runs.rs`).

/// One access of a batch: what [`super::AccessSink`] was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Access {
    pub(super) addr: u64,
    pub(super) len: u32,
    pub(super) is_store: bool,
}

/// `count` one-size accesses at `addr + k·step` (k from 0), of one kind. A run is valid by
/// construction: every address of it fits in a `u64` ([`Run::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Run {
    pub(super) addr: u64,
    pub(super) step: i64,
    pub(super) count: u64,
    pub(super) len: u32,
    pub(super) is_store: bool,
}

impl Run {
    /// The run, if its first and last accesses (whole) lie within the address space.
    pub(super) fn new(addr: u64, step: i64, count: u64, len: u32, is_store: bool) -> Option<Self> {
        let last = i128::from(addr)
            + i128::from(count.saturating_sub(1)) * i128::from(step)
            + i128::from(len.max(1))
            - 1;
        let fits = (0..=i128::from(u64::MAX)).contains(&last)
            && i128::from(addr) + i128::from(len.max(1)) - 1 <= i128::from(u64::MAX);
        fits.then_some(Self {
            addr,
            step,
            count,
            len,
            is_store,
        })
    }

    /// Access `k` (below `count`).
    #[inline]
    pub(super) fn access(&self, k: u64) -> Access {
        Access {
            addr: self
                .addr
                .wrapping_add((k as i64).wrapping_mul(self.step) as u64),
            len: self.len,
            is_store: self.is_store,
        }
    }

    /// How many accesses from the one at `addr` on (itself included) start in its line of
    /// `1 << line_shift` bytes: all that remain in the line's direction for a step shorter
    /// than the line, u64::MAX for a step of zero, 1 for a step of a line or more.
    #[inline]
    pub(super) fn in_same_line(&self, addr: u64, line_shift: u32) -> u64 {
        let line_bytes = 1u64 << line_shift;
        let step = self.step.unsigned_abs();
        let within = addr & (line_bytes - 1);
        // A power-of-two step (every element size) shifts: a division took over a third of
        // the moves loop's samples on a transpose.
        let div = |bytes: u64| match step.is_power_of_two() {
            true => bytes >> step.trailing_zeros(),
            false => bytes / step,
        };
        match self.step {
            0 => u64::MAX,
            _ if step >= line_bytes => 1,
            1.. => div(line_bytes - within + step - 1),
            _ => div(within) + 1,
        }
    }

    /// Accesses `from..to` of this run, as a run.
    pub(super) fn part(&self, from: u64, to: u64) -> Self {
        Self {
            addr: self.access(from).addr,
            count: to - from,
            ..*self
        }
    }
}

/// Element moves, as [`crate::cache::AccessSink::move_run`] gives them: for k ascending,
/// `load.access(k)`, then `store.access(k)`. The runs have the same count and length; only
/// the first level takes them whole (`level/moves.rs`), its misses go down as accesses or
/// marked ([`MovesMissed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Moves {
    pub(super) load: Run,
    pub(super) store: Run,
}

/// Pairs of moves one [`MovesMissed`] marks at most.
pub(super) const MARKED_PAIRS: usize = 1024;

/// Bit i set: the access of pair `start + i` (of one side).
pub(super) type Marks = [u64; MARKED_PAIRS / 64];

/// The misses among up to [`MARKED_PAIRS`] pairs of moves, marked instead of listed: a
/// transpose's column misses a first level on every load, and a bit a pair is 128 times
/// smaller than the accesses, which one thread would write and the next read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct MovesMissed {
    pub(super) moves: Moves,
    pub(super) start: u64,
    /// Loads, stores.
    pub(super) missed: [Marks; 2],
}

/// Accesses a [`MovesMissed`] is expanded into at a time (4 KiB: they stay in the host's L1).
const EXPANDED: usize = 256;

impl MovesMissed {
    fn count(&self) -> u64 {
        self.missed
            .iter()
            .flatten()
            .map(|word| u64::from(word.count_ones()))
            .sum()
    }

    /// Calls `take` with pair `start + i` and which of its sides missed, for each such pair
    /// in order (`[load, store]`).
    #[inline(always)]
    pub(super) fn for_each_pair(&self, mut take: impl FnMut(u64, [bool; 2])) {
        let [loads, stores] = &self.missed;
        for (word, (&load_bits, &store_bits)) in loads.iter().zip(stores).enumerate() {
            let mut either = load_bits | store_bits;
            while either != 0 {
                let bit = either.trailing_zeros();
                let pair = self.start + word as u64 * 64 + u64::from(bit);
                take(
                    pair,
                    [load_bits >> bit & 1 == 1, store_bits >> bit & 1 == 1],
                );
                either &= either - 1;
            }
        }
    }

    /// Calls `take` with the missed accesses in pair order, each pair's load before its
    /// store, in slices of at most [`EXPANDED`].
    pub(super) fn for_each_slice(&self, mut take: impl FnMut(&[Access])) {
        let none = Access {
            addr: 0,
            len: 0,
            is_store: false,
        };
        let mut slice = [none; EXPANDED];
        let mut filled = 0;
        self.for_each_pair(|pair, missed| {
            for (run, missed) in [&self.moves.load, &self.moves.store]
                .into_iter()
                .zip(missed)
            {
                if missed {
                    slice[filled] = run.access(pair);
                    filled += 1;
                }
            }
            if filled + 2 > EXPANDED {
                take(&slice[..filled]);
                filled = 0;
            }
        });
        if filled > 0 {
            take(&slice[..filled]);
        }
    }
}

/// What a [`Stream`] holds besides single accesses.
#[derive(Debug, Clone, Copy)]
enum Bulk {
    Run(Run),
    /// Index in [`Stream::moves`].
    Moves(usize),
}

/// A level's misses on their way down, in order.
#[derive(Debug, Default)]
pub(super) struct Stream {
    accesses: Vec<Access>,
    /// Each run or moves' misses with the number of `accesses` before it.
    bulk: Vec<(usize, Bulk)>,
    moves: Vec<MovesMissed>,
    /// The runs' and moves' accesses, all told.
    bulk_accesses: u64,
}

/// A stretch of a [`Stream`], in order: single accesses, one run, or the misses of some
/// moves.
pub(super) enum Piece<'a> {
    Accesses(&'a [Access]),
    Run(&'a Run),
    Moves(&'a MovesMissed),
}

impl Stream {
    pub(super) fn with_capacity(accesses: usize) -> Self {
        Self {
            accesses: Vec::with_capacity(accesses),
            ..Self::default()
        }
    }

    #[inline]
    pub(super) fn push(&mut self, access: Access) {
        self.accesses.push(access);
    }

    /// Appends `run` (a run of one as a single access; an empty one not at all).
    pub(super) fn push_run(&mut self, run: Run) {
        match run.count {
            0 => {}
            1 => self.push(run.access(0)),
            count => {
                self.bulk.push((self.accesses.len(), Bulk::Run(run)));
                self.bulk_accesses += count;
            }
        }
    }

    /// Appends the misses `missed` marks (none: nothing).
    pub(super) fn push_moves(&mut self, missed: MovesMissed) {
        let count = missed.count();
        if count > 0 {
            let at = Bulk::Moves(self.moves.len());
            self.bulk.push((self.accesses.len(), at));
            self.moves.push(missed);
            self.bulk_accesses += count;
        }
    }

    /// Accesses held, a run counting as many as it has: the work the stream stands for.
    #[inline]
    pub(super) fn weight(&self) -> u64 {
        self.accesses.len() as u64 + self.bulk_accesses
    }

    pub(super) fn is_empty(&self) -> bool {
        self.accesses.is_empty() && self.bulk.is_empty()
    }

    /// Whether moves' misses, marked, stand for most of the stream's weight.
    pub(super) fn mostly_moves(&self) -> bool {
        let marked: u64 = self
            .bulk
            .iter()
            .map(|(_, bulk)| match bulk {
                Bulk::Run(_) => 0,
                Bulk::Moves(at) => self.moves[*at].count(),
            })
            .sum();
        marked * 2 > self.weight()
    }

    pub(super) fn clear(&mut self) {
        self.accesses.clear();
        self.bulk.clear();
        self.moves.clear();
        self.bulk_accesses = 0;
    }

    /// Calls `take` with each piece in order.
    pub(super) fn for_each_piece(&self, mut take: impl FnMut(Piece<'_>)) {
        let mut done = 0;
        for (before, bulk) in &self.bulk {
            if *before > done {
                take(Piece::Accesses(&self.accesses[done..*before]));
                done = *before;
            }
            take(match bulk {
                Bulk::Run(run) => Piece::Run(run),
                Bulk::Moves(at) => Piece::Moves(&self.moves[*at]),
            });
        }
        if done < self.accesses.len() {
            take(Piece::Accesses(&self.accesses[done..]));
        }
    }
}

/// Collects the misses of a run's accesses, taken in order, into as few pieces as possible:
/// consecutive missing accesses become one run.
pub(super) struct MissCollector<'s> {
    run: Run,
    /// The missing accesses `start..end` not yet passed on.
    start: u64,
    end: u64,
    misses: Option<&'s mut Stream>,
}

impl<'s> MissCollector<'s> {
    pub(super) fn new(run: Run, misses: Option<&'s mut Stream>) -> Self {
        Self {
            run,
            start: 0,
            end: 0,
            misses,
        }
    }

    /// Access `k` (each `k` once, ascending) missed.
    #[inline]
    pub(super) fn missed(&mut self, k: u64) {
        if k != self.end {
            self.pass_on();
            self.start = k;
        }
        self.end = k + 1;
    }

    /// Accesses `from..to`, all after the last one given, missed.
    pub(super) fn missed_all(&mut self, from: u64, to: u64) {
        if from < to {
            self.missed(from);
            self.end = to;
        }
    }

    fn pass_on(&mut self) {
        if let Some(misses) = self.misses.as_deref_mut() {
            misses.push_run(self.run.part(self.start, self.end));
        }
        self.start = self.end;
    }
}

impl Drop for MissCollector<'_> {
    fn drop(&mut self) {
        self.pass_on();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(addr: u64, step: i64, count: u64) -> Run {
        Run::new(addr, step, count, 8, false).unwrap()
    }

    /// Accesses left in the line of the one at `addr`, 64-byte lines.
    #[test]
    fn accesses_in_the_same_line_count_to_its_edge() {
        let table = [
            (8, 0, 8),        // an f64 row from the line's start: all 8
            (8, 56, 1),       // the line's last element
            (24, 16, 2),      // 16 and 40 start in it, 64 does not
            (-8, 56, 8),      // descending from the line's end
            (-8, 0, 1),       // descending from its start
            (64, 8, 1),       // a line or more: one
            (0, 8, u64::MAX), // no step: for ever
        ];
        for (step, offset, expected) in table {
            let run = run(6400, step, 100);
            assert_eq!(
                run.in_same_line(6400 + offset, 6),
                expected,
                "step {step}, at {offset}"
            );
        }
    }

    #[test]
    fn runs_outside_the_address_space_are_refused() {
        assert!(Run::new(u64::MAX - 7, 8, 1, 8, false).is_some());
        assert!(Run::new(u64::MAX - 7, 8, 2, 8, false).is_none());
        assert!(Run::new(64, -64, 2, 8, false).is_some());
        assert!(Run::new(64, -64, 3, 8, false).is_none());
        assert!(Run::new(u64::MAX, 0, 5, 2, false).is_none());
    }

    #[test]
    fn pieces_keep_runs_between_their_accesses() {
        let mut stream = Stream::default();
        let single = |addr| Access {
            addr,
            len: 8,
            is_store: false,
        };
        stream.push(single(1));
        stream.push_run(run(100, 64, 3));
        stream.push_run(run(200, 64, 1));
        stream.push_run(run(300, 64, 0));
        stream.push_run(run(400, 64, 2));
        stream.push(single(2));
        assert_eq!(stream.weight(), 1 + 3 + 1 + 2 + 1);
        let mut seen = Vec::new();
        stream.for_each_piece(|piece| match piece {
            Piece::Accesses(a) => seen.push(format!(
                "{:?}",
                a.iter().map(|a| a.addr).collect::<Vec<_>>()
            )),
            Piece::Run(r) => seen.push(format!("run {} ×{}", r.addr, r.count)),
            Piece::Moves(m) => seen.push(format!("moves from {}", m.start)),
        });
        assert_eq!(seen, ["[1]", "run 100 ×3", "[200]", "run 400 ×2", "[2]"]);
    }

    /// Marked misses come back in pair order, each pair's load before its store, in slices
    /// the size of the stack buffer; a piece with no misses is not kept.
    #[test]
    fn marked_moves_expand_in_pair_order() {
        let moves = Moves {
            load: run(0, 64, 1000),
            store: Run::new(100_000, 8, 1000, 8, true).unwrap(),
        };
        let mut missed = [[0; MARKED_PAIRS / 64]; 2];
        let loads = [0, 5, 64, 700];
        let stores = [5, 6, 700, 999];
        for pair in loads {
            missed[0][pair / 64] |= 1 << (pair % 64);
        }
        for pair in stores {
            missed[1][pair / 64] |= 1 << (pair % 64);
        }
        let mut stream = Stream::default();
        stream.push_moves(MovesMissed {
            moves,
            start: 0,
            missed: [[0; MARKED_PAIRS / 64]; 2],
        });
        assert!(stream.is_empty());
        stream.push_moves(MovesMissed {
            moves,
            start: 0,
            missed,
        });
        assert_eq!(stream.weight(), 8);
        let mut seen = Vec::new();
        stream.for_each_piece(|piece| match piece {
            Piece::Moves(m) => m.for_each_slice(|a| seen.extend(a.iter().map(|a| a.addr))),
            _ => unreachable!("only moves pushed"),
        });
        let store = |k: u64| 100_000 + 8 * k;
        let expected = [
            0,
            320,
            store(5),
            store(6),
            64 * 64,
            700 * 64,
            store(700),
            store(999),
        ];
        assert_eq!(seen, expected);
        // All 2048 accesses of a piece missing whole: slices of at most 256, in order.
        let all = MovesMissed {
            moves,
            start: 0,
            missed: [[u64::MAX; MARKED_PAIRS / 64]; 2],
        };
        let mut sizes = Vec::new();
        let mut order = Vec::new();
        all.for_each_slice(|a| {
            sizes.push(a.len());
            order.extend(a.iter().map(|a| a.is_store));
        });
        assert!(sizes.iter().all(|&n| n <= EXPANDED), "{sizes:?}");
        assert_eq!(sizes.iter().sum::<usize>(), 2 * MARKED_PAIRS);
        assert!(order.chunks(2).all(|pair| pair == [false, true]));
    }

    #[test]
    fn consecutive_misses_go_down_as_one_run() {
        let mut stream = Stream::default();
        {
            let mut misses = MissCollector::new(run(0, 64, 10), Some(&mut stream));
            for k in [0, 1, 2, 5, 7] {
                misses.missed(k);
            }
            misses.missed_all(8, 10);
        }
        let mut seen = Vec::new();
        stream.for_each_piece(|piece| match piece {
            Piece::Accesses(a) => seen.extend(a.iter().map(|a| (a.addr, 1))),
            Piece::Run(r) => seen.push((r.addr, r.count)),
            Piece::Moves(_) => unreachable!("no moves pushed"),
        });
        assert_eq!(seen, [(0, 3), (320, 1), (448, 3)]);
    }
}
