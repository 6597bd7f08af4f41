//! The walk (runs, joined rows and all) against a brute-force enumeration of the nest: every
//! point of the loops in program order, each reference's element computed from its indices.

use proptest::prelude::*;

use super::walk::{AccessEvent, Placement, walk};
use super::{LoopNest, check};

/// Every access of `nest`, point by point, with no runs: the definition the walk must equal.
fn brute_force(nest: &LoopNest, placement: &Placement) -> Vec<AccessEvent> {
    fn at(
        nest: &LoopNest,
        placement: &Placement,
        values: &mut Vec<i64>,
        out: &mut Vec<AccessEvent>,
    ) {
        let k = values.len();
        if k == nest.loops.len() {
            for slot in &nest.slots {
                let reference = &nest.references[slot.reference];
                let array = &nest.arrays[reference.array];
                let element: i128 = reference
                    .indices
                    .iter()
                    .zip(&array.strides)
                    .map(|(index, &stride)| index.at(values) * i128::from(stride))
                    .sum::<i128>()
                    + array.offset as i128;
                out.push(AccessEvent {
                    reference: slot.reference,
                    addr: placement.bases[reference.array] + element as u64 * array.itemsize,
                    len: array.itemsize as u32,
                    is_store: slot.is_store,
                });
            }
            return;
        }
        let l = &nest.loops[k];
        let (lo, hi) = (l.lower.at(values), l.upper.at(values));
        let mut v = lo;
        while v < hi {
            values.push(v as i64);
            at(nest, placement, values, out);
            values.pop();
            v += i128::from(l.step);
        }
    }
    let mut out = Vec::new();
    at(nest, placement, &mut Vec::new(), &mut out);
    out
}

/// A nest of two or three loops (inner bounds constant or triangular, steps 1 or 2) over
/// matrices whose rows may be padded, read and written in either order.
fn nests() -> impl Strategy<Value = (String, Vec<String>)> {
    (
        1usize..6,
        1usize..7,
        1usize..4,
        any::<bool>(),
        any::<bool>(),
        1i64..3,
        0usize..3,
        0usize..4,
    )
        .prop_map(|(n1, n2, n3, three, triangular, step, pad, body)| {
            let n = n1.max(n2).max(n3);
            let lower = if triangular { "i" } else { "0" };
            let inner = if three {
                format!("for i in 0..{n1}: for k in 0..{n3}: for j in {lower}..{n2} step {step}: ")
            } else {
                format!("for i in 0..{n1}: for j in {lower}..{n2} step {step}: ")
            };
            let statement = match body {
                0 => "s += a[i, j]",
                1 => "s += a[j, i]",
                2 => "b[j, i] = a[i, j]",
                _ => "b[i, j] += a[i, j]; s += b[j, i]",
            };
            let arrays = vec![
                format!("a = f64[{n}, {n}] ld={}", n + pad),
                format!("b = f32[{n}, {n}]"),
            ];
            (format!("{inner}{statement}"), arrays)
        })
}

proptest! {
    #[test]
    fn the_walk_is_the_nest_point_by_point((text, arrays) in nests()) {
        let nest = LoopNest::parse(&text, &arrays).unwrap();
        check(&nest, u64::MAX).unwrap();
        let placement = Placement::of(&nest.arrays).unwrap();
        let mut walked = Vec::new();
        walk(&nest, &placement, &mut |event| walked.push(event)).unwrap();
        prop_assert_eq!(walked, brute_force(&nest, &placement), "{}", text);
    }
}

#[test]
fn rows_in_storage_order_walk_as_one_run() {
    let arrays = ["a = f64[4, 6]".to_string()];
    let runs = |text: &str| {
        let nest = LoopNest::parse(text, &arrays).unwrap();
        let mut counts = Vec::new();
        super::walk_runs(&nest, &mut |run| counts.push(run.count)).unwrap();
        counts
    };
    assert_eq!(runs("for i in 0..4: for j in 0..6: s += a[i, j]"), [24]);
    // Not joined: a partial row, a column walk, a triangular inner loop.
    assert_eq!(runs("for i in 0..4: for j in 0..5: s += a[i, j]"), [5; 4]);
    assert_eq!(runs("for j in 0..6: for i in 0..4: s += a[i, j]"), [4; 6]);
    assert_eq!(
        runs("for i in 0..4: for j in i..6: s += a[i, j]"),
        [6, 5, 4, 3]
    );
}
