//! Unit tests of `copy/mod.rs`, kept beside it so the module itself stays short.

use super::*;

#[test]
fn bounds_violations_are_errors() {
    let src = [0.0f64; 10];
    let mut dst = [0.0f64; 4];
    type Case<'a> = (&'a [usize], &'a [isize], usize, usize, CopyError);
    let cases: [Case; 5] = [
        (
            &[2, 2],
            &[1],
            0,
            4,
            CopyError::RankMismatch {
                shape: 2,
                strides: 1,
            },
        ),
        (
            &[2, 2],
            &[5, 1],
            4,
            4,
            CopyError::OutOfBounds { index: 10, len: 10 },
        ),
        (
            &[2, 2],
            &[-5, 1],
            4,
            4,
            CopyError::OutOfBounds { index: -1, len: 10 },
        ),
        (
            &[3],
            &[1],
            0,
            4,
            CopyError::DestinationSize { dst: 4, needed: 3 },
        ),
        (&[usize::MAX, 3], &[0, 0], 0, 4, CopyError::Overflow),
    ];
    for (shape, strides, offset, dst_len, expected) in cases {
        let got = copy_into_contiguous(&src, shape, strides, offset, &mut dst[..dst_len]);
        assert_eq!(got, Err(expected), "{shape:?} {strides:?} +{offset}");
    }
}

#[test]
fn empty_views_need_no_valid_storage() {
    let mut dst: [f64; 0] = [];
    assert_eq!(
        copy_into_contiguous(&[], &[0, 5], &[99, 99], 1000, &mut dst),
        Ok(())
    );
}

#[test]
fn a_transpose_matches_the_definition() {
    for (rows, cols) in [(8, 8), (16, 24), (13, 17), (64, 9), (100, 70)] {
        let src: Vec<f64> = (0..rows * cols).map(|i| i as f64).collect();
        let mut dst = vec![0.0; rows * cols];
        copy_into_contiguous(&src, &[cols, rows], &[1, cols as isize], 0, &mut dst).unwrap();
        for r in 0..rows {
            for c in 0..cols {
                assert_eq!(
                    dst[c * rows + r],
                    src[r * cols + c],
                    "{rows}x{cols} at {r},{c}"
                );
            }
        }
    }
}
