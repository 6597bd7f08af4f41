//! Element moves taken in one loop (`sim/moves.rs`, `level/moves.rs`) and whole by the 3C
//! shadow (`shadow/moves.rs`) against the plain reference simulator fed the same loads and
//! stores one by one.

use proptest::prelude::*;

use super::reference::Reference;
use super::stream::Moves;
use super::tests::{arbitrary_level, mostly_lru};
use super::*;

/// One step of a trace.
#[derive(Debug, Clone, Copy)]
enum Step {
    Load(u64),
    Run(u64, i64, u64),
    Moves(MoveRun),
    /// The last move run one column on, as a transpose's next column: the load side starts
    /// an element further, the store side where the last one ended.
    NextColumn,
    /// The last move run again.
    Repeat,
}

#[derive(Debug, Clone, Copy)]
struct MoveRun {
    from: Walk,
    to: Walk,
    count: u64,
    len: u32,
}

const BASE: u64 = 1 << 20;

fn walk(addr: u64, kind: u8, lines: i64, len: u32) -> Walk {
    let len = i64::from(len);
    let step = match kind % 6 {
        0 => len,                  // shorter than a line
        1 => lines * 64,           // whole lines at every level (lines of 16–64 B)
        2 => lines * 16,           // whole lines at some levels only
        3 => 0,                    // one element over and over
        4 => -len,                 // descending
        _ => lines * 16 + len / 2, // neither: element by element
    };
    Walk {
        addr: BASE + addr,
        step,
    }
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let moves = (
        (0u64..3000, 0u8..6, -3i64..4),
        (0u64..3000, 0u8..6, -3i64..4),
        0u64..200,
        0u32..6,
        0u8..4,
    )
        .prop_map(|(from, to, count, len_bits, placement)| {
            // Lengths 1–16 B, and now and then 3 B (never confined to a line: one by one).
            let len = if len_bits == 5 {
                3
            } else {
                1 << len_bits.min(4)
            };
            let align = |at: u64| at - at % u64::from(len);
            // Apart (a transpose's two buffers), or in one region (sides sharing lines).
            let to_addr = if placement == 0 { to.0 } else { 8000 + to.0 };
            let nonzero = |lines: i64| if lines == 0 { 1 } else { lines };
            Step::Moves(MoveRun {
                from: walk(align(from.0), from.1, nonzero(from.2), len),
                to: walk(align(to_addr), to.1, nonzero(to.2), len),
                count,
                len,
            })
        });
    let one = prop_oneof![
        (0u64..12000).prop_map(Step::Load),
        (0u64..12000, -3i64..4, 0u64..100).prop_map(|(addr, lines, count)| Step::Run(
            addr,
            lines * 64,
            count
        )),
        moves,
        Just(Step::NextColumn),
        Just(Step::NextColumn),
        Just(Step::Repeat),
    ];
    proptest::collection::vec(one, 0..40)
}

proptest! {
    /// Every level's counts (3C included) and contents equal the reference's: move runs with
    /// steps shorter than a line, of whole lines, of neither, of zero and descending, sides
    /// apart or sharing lines, long enough to be taken whole by the shadow or not, a
    /// transpose's consecutive columns, singles and runs between, every policy, and the lower
    /// levels in chunks, here or on a thread of their own (the second level's shadow on
    /// another as the first chunk decides, or always).
    #[test]
    fn moves_equal_the_reference(
        shapes in proptest::collection::vec((1u64..10, 1u64..7, 0u32..3), 1..4),
        policy in mostly_lru(),
        classify in proptest::bool::ANY,
        passing in (0u8..4, 1usize..40),
        steps in steps(),
    ) {
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
        let mut last: Option<MoveRun> = None;
        for step in steps {
            let moves = match step {
                Step::Load(addr) => {
                    fast.load(BASE + addr, 8);
                    plain.load(BASE + addr, 8);
                    continue;
                }
                Step::Run(addr, step, count) => {
                    fast.load_run(BASE + addr, step, count, 8);
                    for k in 0..count {
                        plain.load((BASE + addr).wrapping_add_signed(k as i64 * step), 8);
                    }
                    continue;
                }
                Step::Moves(moves) => moves,
                Step::Repeat => match last {
                    Some(moves) => moves,
                    None => continue,
                },
                Step::NextColumn => match last {
                    Some(m) => MoveRun {
                        from: Walk { addr: m.from.addr + u64::from(m.len), ..m.from },
                        to: Walk { addr: m.to.at(m.count), ..m.to },
                        ..m
                    },
                    None => continue,
                },
            };
            last = Some(moves);
            fast.move_run(moves.from, moves.to, moves.count, moves.len);
            plain.move_run(moves.from, moves.to, moves.count, moves.len);
        }
        prop_assert_eq!(fast.stats(), plain.stats());
        for level in 0..geometry.len() {
            prop_assert_eq!(fast.resident_lines(level), plain.resident_lines(level));
        }
    }
}

/// Column `j` of a naive-write transpose of an n×n f64 matrix at `BASE` into the one right
/// after it: a load down the column, a store along row j of the destination.
fn transpose_column(n: u64, j: u64) -> (Walk, Walk) {
    let from = Walk {
        addr: BASE + j * 8,
        step: (n * 8) as i64,
    };
    let to = Walk {
        addr: BASE + n * n * 8 + j * n * 8,
        step: 8,
    };
    (from, to)
}

/// A transpose's columns on a classifying first level: the shadow takes them whole (the
/// figures equal the reference's), and one-by-one feeding gives the same counts.
#[test]
fn transpose_columns_are_taken_whole_and_exactly() {
    let geometry = [arbitrary_level(0, 4, 2, 2, Policy::LRU)]; // 8 lines of 64 B
    let mut fast = Hierarchy::new(&geometry, Policy::LRU, true).unwrap();
    let mut plain = Reference::new(&geometry, Policy::LRU, true, DEFAULT_STATE_BUDGET).unwrap();
    let n = 64u64;
    for j in 0..n {
        let (from, to) = transpose_column(n, j);
        if j > 0 {
            let moves = Moves {
                load: Run::new(from.addr, from.step, n, 8, false).unwrap(),
                store: Run::new(to.addr, to.step, n, 8, true).unwrap(),
            };
            let mut first = fast.levels[0].clone();
            assert_eq!(
                first.plan_moves(&moves),
                level::ShadowPlan::Whole,
                "column {j}"
            );
        }
        fast.move_run(from, to, n, 8);
        plain.move_run(from, to, n, 8);
    }
    let stats = fast.stats();
    assert_eq!(stats, plain.stats());
    assert!(
        stats[0].capacity > 0 && stats[0].compulsory > 0,
        "{stats:?}"
    );
}

/// A naive transpose whose column falls in one set of the first level: the pairs between
/// those whose store meets that set are taken a side at a time, with and without 3C, through
/// two levels, the misses passed down marked and taken a side at a time below too — with the
/// lower level here, or on a thread of its own with its shadow on another — and every count
/// and line held equals the reference's. Below, the column misses throughout (a 128-wide
/// matrix) or fits and hits from the second column on (32-wide).
#[test]
fn transpose_columns_in_one_set_are_taken_apart_exactly() {
    // Level 0: 4 sets of 2 ways, 64 B lines.
    let cases = [(128u64, (16, 2)), (32, (64, 4))];
    for (n, (sets, ways)) in cases {
        for (classify, pipelined) in [(false, false), (true, false), (false, true), (true, true)] {
            let geometry = [
                arbitrary_level(0, 4, 2, 2, Policy::LRU),
                arbitrary_level(1, sets, ways, 2, Policy::LRU),
            ];
            let mut fast = Hierarchy::new(&geometry, Policy::LRU, classify)
                .unwrap()
                .with_chunk(300, pipelined);
            let mut plain =
                Reference::new(&geometry, Policy::LRU, classify, DEFAULT_STATE_BUDGET).unwrap();
            // A column steps n × 8 B, a whole number of lines in one set of level 0.
            for j in 0..n {
                let (from, to) = transpose_column(n, j);
                fast.move_run(from, to, n, 8);
                plain.move_run(from, to, n, 8);
            }
            let case = format!("{n} wide, 3C {classify}, own thread {pipelined}");
            let stats = fast.stats();
            assert_eq!(stats, plain.stats(), "{case}");
            for level in 0..geometry.len() {
                assert_eq!(fast.resident_lines(level), plain.resident_lines(level));
            }
            fast.flush();
            // The store row meets the column's set in one line of four: most pairs go apart.
            let apart = fast.levels[0].pairs_apart;
            assert!(
                apart > n * n / 2,
                "{case}: {apart} of {} pairs apart",
                n * n
            );
            let below = &fast.levels[1];
            assert!(
                below.pieces_marked >= n,
                "{case}: {} pieces",
                below.pieces_marked
            );
            assert_eq!(below.shadow_returns > 0, classify && pipelined, "{case}");
            let hits = stats[1].loads + stats[1].stores - stats[1].misses();
            assert_eq!(hits > 0, n == 32, "{case}: {hits} hits below");
        }
    }
}
