//! What a level takes and passes to the level below: single accesses ([`Access`]) and strided
//! runs taken whole ([`Run`]), in order ([`Stream`]); and the element moves the first level
//! takes whole ([`Moves`]). A run that misses whole stays one entry
//! all the way down, so a column walk reaches every level as one run per column
//! (`level/runs.rs`).

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
        match self.step {
            0 => u64::MAX,
            _ if step >= line_bytes => 1,
            1.. => (line_bytes - within).div_ceil(step),
            _ => within / step + 1,
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
/// the first level takes them whole (`level/moves.rs`), its misses go down as accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Moves {
    pub(super) load: Run,
    pub(super) store: Run,
}

/// A level's misses on their way down, in order.
#[derive(Debug, Default)]
pub(super) struct Stream {
    accesses: Vec<Access>,
    /// Each run with the number of `accesses` before it.
    runs: Vec<(usize, Run)>,
    /// The runs' accesses, all told.
    run_accesses: u64,
}

/// A stretch of a [`Stream`], in order: single accesses, or one run.
pub(super) enum Piece<'a> {
    Accesses(&'a [Access]),
    Run(&'a Run),
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
                self.runs.push((self.accesses.len(), run));
                self.run_accesses += count;
            }
        }
    }

    /// Accesses held, a run counting as many as it has: the work the stream stands for.
    #[inline]
    pub(super) fn weight(&self) -> u64 {
        self.accesses.len() as u64 + self.run_accesses
    }

    pub(super) fn is_empty(&self) -> bool {
        self.accesses.is_empty() && self.runs.is_empty()
    }

    pub(super) fn clear(&mut self) {
        self.accesses.clear();
        self.runs.clear();
        self.run_accesses = 0;
    }

    /// Calls `take` with each piece in order.
    pub(super) fn for_each_piece(&self, mut take: impl FnMut(Piece<'_>)) {
        let mut done = 0;
        for (before, run) in &self.runs {
            if *before > done {
                take(Piece::Accesses(&self.accesses[done..*before]));
                done = *before;
            }
            take(Piece::Run(run));
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
        });
        assert_eq!(seen, ["[1]", "run 100 ×3", "[200]", "run 400 ×2", "[2]"]);
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
        });
        assert_eq!(seen, [(0, 3), (320, 1), (448, 3)]);
    }
}
