//! Strided runs taken whole (`level/runs.rs`, the shadow's segments) against the plain
//! reference simulator fed the same accesses one by one.

use proptest::prelude::*;

use super::reference::Reference;
use super::tests::{arbitrary_level, mostly_lru};
use super::*;

/// One step of a trace: a single load or store, a run, or a run made from the last one.
#[derive(Debug, Clone, Copy)]
enum Step {
    Load(u64),
    Store(u64),
    Run {
        addr: u64,
        step: i64,
        count: u64,
        len: u32,
    },
    /// The last run again, whole.
    Repeat,
    /// The run `n` runs back (modulo how many there were) again, whole.
    Earlier(usize),
    /// The last run moved by `bytes` (a neighbouring column of a matrix: the same lines, or
    /// the lines next to them).
    Shifted(i64),
    /// The run that continues the last one.
    Continued,
    /// A load of the last run's access `k` from its end (the shadow's least recent lines).
    Revisit(u64),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let one = (
        0u8..11,
        0u64..4000,
        -6i64..7,
        0u32..3,
        0u64..300,
        1u32..=16,
        -80i64..80,
    )
        .prop_map(|(kind, addr, lines, unit, count, len, shift)| {
            let step = if lines == 0 { 1 } else { lines } * (16 << unit);
            match kind {
                0 => Step::Load(addr),
                1 => Step::Store(addr),
                2 => Step::Repeat,
                3 => Step::Shifted(shift),
                4 => Step::Continued,
                // Short runs pile up as segments of the shadow.
                5 => Step::Run {
                    addr,
                    step,
                    count: count % 6,
                    len,
                },
                6 | 7 => Step::Revisit(count % 60),
                8 => Step::Earlier(count as usize % 5),
                _ => Step::Run {
                    addr,
                    step,
                    count,
                    len,
                },
            }
        });
    proptest::collection::vec(one, 0..60)
}

proptest! {
    /// Every level's counts (3C included) and contents equal the reference's, for runs that
    /// skip most lookups (steps of whole lines, longer than ways × sets reached or than the
    /// shadow), runs that repeat or overlap the last one, steps of whole lines at one level
    /// only (lines of 16 to 64 B), descending runs, singles between runs, every policy, and
    /// the lower levels in chunks, here or on a thread of their own (the second level's
    /// shadow on another as the first chunk decides, or always).
    #[test]
    fn runs_taken_whole_equal_the_reference(
        shapes in proptest::collection::vec((1u64..10, 1u64..7, 0u32..3), 1..4),
        policy in mostly_lru(),
        classify in proptest::bool::ANY,
        passing in (0u8..4, 1usize..40),
        steps in steps(),
    ) {
        // LRU, whose levels take runs whole, half the time.
        let geometry: Vec<CacheLevel> = shapes
            .iter()
            .enumerate()
            .map(|(i, &(sets, ways, line_bits))| arbitrary_level(i, sets, ways, line_bits, policy))
            .collect();
        let mut fast = Hierarchy::new(&geometry, policy, classify).unwrap();
        if passing.0 > 0 {
            fast = fast.with_chunk(passing.1, passing.0 >= 2);
        }
        if passing.0 == 3 {
            fast = fast.always_detach();
        }
        let mut plain = Reference::new(&geometry, policy, classify, DEFAULT_STATE_BUDGET).unwrap();
        let base = 1u64 << 20;
        let mut earlier = vec![(base, 64i64, 0u64, 8u32)];
        for (i, step) in steps.iter().enumerate() {
            if i == steps.len() / 2 {
                fast.flush();
            }
            let last = earlier[earlier.len() - 1];
            let run = match *step {
                Step::Load(addr) => {
                    fast.load(base + addr, 8);
                    plain.load(base + addr, 8);
                    continue;
                }
                Step::Store(addr) => {
                    fast.store(base + addr, 8);
                    plain.store(base + addr, 8);
                    continue;
                }
                Step::Run { addr, step, count, len } => (base + addr, step, count, len),
                Step::Repeat => last,
                Step::Earlier(back) => earlier[earlier.len() - 1 - back % earlier.len()],
                Step::Shifted(bytes) => (last.0.wrapping_add_signed(bytes), last.1, last.2, last.3),
                Step::Revisit(back) => {
                    let (addr, step, count, _) = last;
                    if back < count {
                        let at = addr.wrapping_add_signed((count - 1 - back) as i64 * step);
                        fast.load(at, 8);
                        plain.load(at, 8);
                    }
                    continue;
                }
                Step::Continued => {
                    let next = last.0.wrapping_add_signed(last.1 * last.2 as i64);
                    (next, last.1, last.2, last.3)
                }
            };
            earlier.push(run);
            let (addr, step, count, len) = run;
            fast.load_run(addr, step, count, len);
            for k in 0..count {
                plain.load(addr.wrapping_add_signed(k as i64 * step), len);
            }
        }
        prop_assert_eq!(fast.stats(), plain.stats());
        for level in 0..geometry.len() {
            prop_assert_eq!(fast.resident_lines(level), plain.resident_lines(level));
        }
    }
}
