//! Element moves through the hierarchy ([`AccessSink::move_run`]): the first level takes a
//! move run in one loop, its shadow the run whole where it can (`level/moves.rs`), and the
//! misses go down marked (`level/moves_apart.rs`) or as accesses.
//!
//! [`AccessSink::move_run`]: crate::cache::AccessSink::move_run

use super::stream::{Moves, Run};
use super::{BATCH, Hierarchy};
use crate::cache::Walk;

impl Hierarchy {
    /// Takes the moves if every access of both sides lies whole in one first-level line
    /// (lengths a power of two up to a line, addresses and steps multiples of it) and within
    /// the address space; false (nothing done) otherwise.
    pub(super) fn take_moves(&mut self, from: Walk, to: Walk, count: u64, len: u32) -> bool {
        let line_bytes = 1u64 << self.first_line_shift;
        let len = u64::from(len.max(1));
        let confined = |walk: &Walk| {
            walk.addr.is_multiple_of(len) && walk.step.unsigned_abs().is_multiple_of(len)
        };
        if count == 0
            || !len.is_power_of_two()
            || len > line_bytes
            || !confined(&from)
            || !confined(&to)
        {
            return false;
        }
        let run =
            |walk: Walk, is_store| Run::new(walk.addr, walk.step, count, len as u32, is_store);
        let (Some(load), Some(store)) = (run(from, false), run(to, true)) else {
            return false;
        };
        let moves = Moves { load, store };
        if !self.pending.is_empty() {
            self.run_pending();
        }
        let plan = self.levels[0].plan_moves(&moves);
        let below = self.geometry.len() > 1;
        // In pieces, so that misses go down while the run goes on.
        let mut start = 0;
        while start < count {
            let end = count.min(start + BATCH as u64);
            let misses = below.then_some(&mut self.outgoing);
            self.levels[0].take_moves(&moves, start..end, plan, misses);
            if self.outgoing.weight() >= self.chunk as u64 {
                self.pass_down(true);
            }
            start = end;
        }
        self.first_level_last_line = store.access(count - 1).addr >> self.first_line_shift;
        true
    }
}
