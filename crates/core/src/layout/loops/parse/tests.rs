//! Table-driven tests of the LOOP language: good nests and what they parse to, bad ones and
//! the column each error points at, and the bounds check on nests that leave their arrays.

use super::*;
use crate::layout::loops::{LoopNest, check};

fn arrays(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|t| t.to_string()).collect()
}

const AB: &[&str] = &["a = f64[1024, 1024]", "b = f64[1024, 1024]"];

#[test]
fn the_example_parses_into_slots_in_program_order() {
    let nest = LoopNest::parse(
        "for i in 0..1024: for j in 0..1024: a[j, i] += b[i, j]",
        &arrays(AB),
    )
    .unwrap();
    assert_eq!(nest.loops.len(), 2);
    let texts: Vec<&str> = nest.references.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(texts, ["b[i, j]", "a[j, i]"]);
    let slots: Vec<(usize, bool)> = nest
        .slots
        .iter()
        .map(|s| (s.reference, s.is_store))
        .collect();
    // b is read, then a is loaded and stored.
    assert_eq!(slots, [(0, false), (1, false), (1, true)]);
    // a[j, i] steps one row (1024 elements) per j; b[i, j] one element.
    assert_eq!(nest.innermost_stride(1), 1024);
    assert_eq!(nest.innermost_stride(0), 1);
}

#[test]
fn good_nests_parse() {
    // (loop, arrays, references, slots per iteration)
    let table: &[(&str, &[&str], usize, usize)] = &[
        ("for i in 0..8: read a[i]", &["a = f32[8]"], 1, 1),
        ("for i in 0..8: s += a[i]", &["a = f32[8]"], 1, 1),
        ("for i in 0..8 step 2: a[i] = 0", &["a = f32[8]"], 1, 1),
        (
            "for i in 0..4: for j in i..4: a[i, j] = a[j, i]",
            &["a = i32[4, 4]"],
            2,
            2,
        ),
        (
            "for i in 0..4: for j in 0..4: for k in 0..4: c[i,j] += a[i,k] * b[k,j]",
            &["a = f64[4,4]", "b = f64[4,4]", "c = f64[4,4]"],
            3,
            4,
        ),
        (
            "for i in 1..7: a[2*i-2, (i+1)*1 - 1] -= 3 * i / 2",
            &["a = u8[13, 8]"],
            1,
            2,
        ),
        (
            "for i in 0..4: read a[i], b[0, i]; s = 1",
            &["a = f64[4]", "b = f64[2,4] ld=8"],
            2,
            2,
        ),
        (
            "for i in 0..4: x = (a[i] + 1) * -a[3 - i];",
            &["a = f64[4]"],
            2,
            2,
        ),
        (
            "for i in 0..32: read v[i]",
            &["v = f64 arange(64).view(32, 2).T[1]"],
            1,
            1,
        ),
        ("for i in 0..2: read v[i]", &["v = f64[2] align=64"], 1, 1),
    ];
    for &(text, decls, refs, slots) in table {
        let nest = LoopNest::parse(text, &arrays(decls)).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(nest.references.len(), refs, "{text}");
        assert_eq!(nest.slots.len(), slots, "{text}");
        check(&nest, 1 << 20).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

/// The error's source, column and a word its message must contain.
fn text_error(result: Result<LoopNest, LoopError>) -> (Source, usize, String) {
    match result {
        Err(LoopError::Text {
            origin,
            column,
            message,
            ..
        }) => (origin, column, message),
        other => panic!("expected a text error, got {other:?}"),
    }
}

#[test]
fn bad_loops_point_at_their_column() {
    // (loop text over a, b = f64[1024, 1024], column, a word of the message)
    let table: &[(&str, usize, &str)] = &[
        ("", 1, "a loop"),
        ("a[0, 0] = 1", 1, "a loop"),
        ("for i 0..4: read a[i, i]", 7, "'in'"),
        ("for i in 0 4: read a[i, i]", 12, "'..'"),
        ("for i in 0..4 read a[i, i]", 15, "':'"),
        ("for i in 0..4:", 15, "a statement"),
        ("for i in 0..4: read c[i, i]", 21, "unknown array 'c'"),
        ("for i in 0..4: read a[i]", 21, "2 dims"),
        (
            "for i in 0..4: for j in 0..4: read a[i*j, 0]",
            39,
            "not affine",
        ),
        ("for i in 0..4: read a[k, 0]", 23, "unknown loop index 'k'"),
        (
            "for i in 0..j: for j in 0..4: read a[i, j]",
            13,
            "unknown name 'j'",
        ),
        ("for i in 0..4: for i in 0..4: read a[i, i]", 20, "already"),
        ("for i in 0..4 step 0: read a[i, i]", 20, "positive"),
        ("for i in 0..4: a = 1", 16, "is an array"),
        ("for i in 0..4: i = 1", 16, "loop index"),
        ("for i in 0..4: read a[i, i] read", 29, "';'"),
        ("for i in 0..4: s += a[i, i] +", 30, "a number"),
        ("for i in 0..4: read a[i, i/2]", 27, "+ - *"),
        (
            "for i in 0..4: read a[i, i] # note",
            29,
            "unexpected character",
        ),
        (
            "for i in 0..99999999999999999999: read a[i, i]",
            13,
            "64 bits",
        ),
        ("for i in 0..4: s ? a[i, i]", 18, "unexpected character"),
        ("for i in 0..4: s a[i, i]", 18, "'='"),
    ];
    for &(text, column, word) in table {
        let (source, c, message) = text_error(LoopNest::parse(text, &arrays(AB)));
        assert_eq!(source, Source::Loop, "{text}");
        assert_eq!(c, column, "{text}: {message}");
        assert!(message.contains(word), "{text}: {message}");
    }
}

#[test]
fn bad_declarations_point_at_their_column() {
    // (declaration, column, a word of the message)
    let table: &[(&str, usize, &str)] = &[
        ("a f64[4]", 3, "'='"),
        ("a = f65[4]", 5, "unknown element type"),
        ("a = f64[4", 10, "']'"),
        ("a = f64[0]", 9, "positive"),
        ("a = f64[4] ld=8", 15, "two or more dims"),
        ("a = f64[4, 4] xy=8", 15, "ld="),
        ("a = f64 arange(12).view(5, 3)", 0, ""),
        ("a = f64 arange(12).vew(3, 4)", 19, "unknown method"),
        ("a = f64 arange(12).view(3,,4)", 27, "expected"),
        ("a = f64[4] align=3", 18, "power of two"),
        ("a = f64", 8, "'['"),
    ];
    for &(text, column, word) in table {
        match (parse_array(text, 0), column) {
            (
                Err(LoopError::Text {
                    column: c,
                    message,
                    origin: source,
                    ..
                }),
                _,
            ) => {
                assert_eq!(source, Source::Array(0));
                assert_eq!(c, column, "{text}: {message}");
                assert!(message.contains(word), "{text}: {message}");
            }
            (Err(e @ LoopError::Declaration { .. }), 0) => {
                assert!(e.to_string().contains(word), "{text}: {e}")
            }
            (other, _) => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn declarations_lay_arrays_out() {
    let a = parse_array("a = f64[3, 4] ld=6", 0).unwrap();
    assert_eq!(
        (a.strides.clone(), a.storage_len, a.leading_dim()),
        (vec![6, 1], 16, Some(6))
    );
    let a = parse_array("a = f32[2, 3, 4] ld=5 align=64", 0).unwrap();
    assert_eq!(
        (a.strides.clone(), a.storage_len, a.align),
        (vec![15, 5, 1], 29, 64)
    );
    assert_eq!(a.with_leading_dim(8).unwrap().strides, [24, 8, 1]);
    let v = parse_array("b = f64 arange(1024*1024).view(1024,1024).T", 1).unwrap();
    assert_eq!(
        (v.strides.clone(), v.storage_len, v.leading_dim()),
        (vec![1, 1024], 1 << 20, None)
    );
    assert!(parse_array("a = f64[4, 4] ld=3", 0).is_err());
}

#[test]
fn out_of_bounds_names_the_reference_and_the_point() {
    let nest = LoopNest::parse(
        "for i in 0..1024: for j in 0..1024: a[j, i+1] += b[i, j]",
        &arrays(AB),
    )
    .unwrap();
    let text = check(&nest, 1 << 30).unwrap_err().to_string();
    assert!(text.contains("statement 1"), "{text}");
    assert!(text.contains("a[j, i+1]"), "{text}");
    assert!(text.contains("i = 1023, j = 0 gives a[0, 1024]"), "{text}");
    assert!(text.contains("shape [1024, 1024]"), "{text}");
    // A triangular nest that stays inside raises no alarm; one that leaves is caught at the
    // row where it does.
    let inside = LoopNest::parse(
        "for i in 0..1024: for j in i..1024: read a[j, 1023 - j + i]",
        &arrays(AB),
    )
    .unwrap();
    assert_eq!(check(&inside, 1 << 30).unwrap().iterations, 1024 * 1025 / 2);
    let outside = LoopNest::parse(
        "for i in 0..1024: for j in 0..i+2: read a[i, j]",
        &arrays(AB),
    )
    .unwrap();
    let text = check(&outside, 1 << 30).unwrap_err().to_string();
    assert!(
        text.contains("i = 1023, j = 1024 gives a[1023, 1024]"),
        "{text}"
    );
}

#[test]
fn counts_are_exact_and_budgets_stop_huge_nests() {
    let nest = LoopNest::parse(
        "for i in 0..10: for j in i..10 step 3: read a[i, j]",
        &arrays(AB),
    )
    .unwrap();
    let facts = check(&nest, 1000).unwrap();
    let exact: u64 = (0..10u64).map(|i| (10 - i).div_ceil(3)).sum();
    assert_eq!((facts.accesses, facts.iterations), (exact, exact));
    let huge = LoopNest::parse(
        "for i in 0..1000000000000: for j in 0..1000000000000: read a[0, 0]",
        &arrays(AB),
    )
    .unwrap();
    assert!(matches!(
        check(&huge, 1 << 20),
        Err(LoopError::TooManyAccesses { .. })
    ));
    let empty_inner = LoopNest::parse(
        "for i in 0..1000000000000: for j in 0..0: read a[0, 0]",
        &arrays(AB),
    )
    .unwrap();
    assert!(matches!(
        check(&empty_inner, 1 << 20),
        Err(LoopError::TooManyIterations { .. })
    ));
    let far = LoopNest::parse(
        "for i in 9223372036854775806..9223372036854775807: for j in i+2..i+4: read a[0, 0]",
        &arrays(AB),
    )
    .unwrap();
    assert!(matches!(check(&far, 1 << 20), Err(LoopError::Overflow(_))));
}
