//! Unit tests of `lib.rs` and `loops.rs`, kept beside them so the modules themselves stay
//! short.

use super::*;
use crate::loops::PanelKernel;
use crate::simd::Isa;

fn planner() -> Planner {
    Planner::analytic(TEST_CACHES)
}

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
        let got = copy_into_contiguous(
            &planner(),
            &src,
            shape,
            strides,
            offset,
            &mut dst[..dst_len],
        );
        assert_eq!(got, Err(expected), "{shape:?} {strides:?} +{offset}");
    }
}

#[test]
fn empty_views_need_no_valid_storage() {
    let mut dst: [f64; 0] = [];
    assert_eq!(
        copy_into_contiguous(&planner(), &[], &[0, 5], &[99, 99], 1000, &mut dst),
        Ok(())
    );
}

#[test]
fn a_transpose_matches_the_definition() {
    for (rows, cols) in [(8, 8), (16, 24), (13, 17), (64, 9), (100, 70)] {
        let src: Vec<f64> = (0..rows * cols).map(|i| i as f64).collect();
        let mut dst = vec![0.0; rows * cols];
        copy_into_contiguous(
            &planner(),
            &src,
            &[cols, rows],
            &[1, cols as isize],
            0,
            &mut dst,
        )
        .unwrap();
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

#[test]
fn the_streamed_kernels_run_where_their_lines_are_whole() {
    let streamed = Tuning {
        stream: true,
        staged: false,
        ..Tuning::for_caches(1 << 30, 1, TEST_CACHES)
    };
    let staged = Tuning {
        staged: true,
        ..streamed
    };
    // (isa, tuning, (panels, their destination distance), first row on a line, ldd, kernel)
    let cases = [
        (
            Isa::Avx512,
            streamed,
            (1, 0),
            true,
            64,
            PanelKernel::Streamed,
        ),
        (
            Isa::Avx512,
            streamed,
            (1, 0),
            false,
            4097,
            PanelKernel::Streamed,
        ),
        (
            Isa::Avx512,
            streamed,
            (4, 64),
            true,
            64,
            PanelKernel::BatchStream,
        ),
        (Isa::Avx2, streamed, (1, 0), true, 64, PanelKernel::Streamed),
        (
            Isa::Avx2,
            streamed,
            (4, 64),
            true,
            64,
            PanelKernel::BatchStream,
        ),
        (
            Isa::Avx2,
            streamed,
            (4, 60),
            true,
            64,
            PanelKernel::Streamed,
        ),
        (
            Isa::Avx2,
            streamed,
            (1, 0),
            true,
            4097,
            PanelKernel::Streamed,
        ),
        (
            Isa::Avx2,
            streamed,
            (1, 0),
            false,
            64,
            PanelKernel::Streamed,
        ),
        (Isa::Avx2, staged, (1, 0), true, 64, PanelKernel::Staged),
        (
            Isa::Portable,
            streamed,
            (1, 0),
            true,
            64,
            PanelKernel::Staged,
        ),
    ];
    for (isa, tuning, batch, on_line, ldd, kernel) in cases {
        let got = PanelKernel::choose(isa, tuning, batch, on_line, ldd);
        let want = if cfg!(target_arch = "x86_64") {
            kernel
        } else {
            PanelKernel::Staged
        };
        assert_eq!(got, want, "{isa:?} {batch:?} {on_line} {ldd}");
    }
}

/// Every streamed kernel, for each instruction set this CPU has, on destinations whose rows
/// all start a line (where AVX2 streams from registers) and on ones that do not.
#[test]
fn streamed_transposes_copy_exactly_on_every_instruction_set() {
    // (shape, strides): square and ragged transposes (a source row length off the line grid
    // among them, which is swept), and a batch of panels: the (3,1,2,0) permutation of a
    // (16, 2, 4, 16) array, whose source rows continue across its third dim.
    let views: [(&[usize], &[isize]); 4] = [
        (&[64, 64], &[1, 64]),
        (&[40, 72], &[1, 40]),
        (&[19, 24], &[1, 19]),
        (&[16, 2, 4, 16], &[1, 64, 16, 128]),
    ];
    // (tile rows, batch rows): the 8-row sweep, tiles, tall tiles.
    let shapes = [(8, 8), (16, 16), (24, 24)];
    for (shape, strides) in views {
        let count: usize = shape.iter().product();
        // Positive strides: the last element is the farthest.
        let len = 1 + shape
            .iter()
            .zip(strides)
            .map(|(&n, &s)| (n - 1) * s as usize)
            .sum::<usize>();
        let src: Vec<f64> = (0..len).map(|i| i as f64 + 0.5).collect();
        // The definition, in C order of the view's indices.
        let want: Vec<f64> = (0..count)
            .map(|k| {
                let (mut rest, mut at) = (k, 0);
                for (&n, &s) in shape.iter().zip(strides).rev() {
                    at += rest % n * s as usize;
                    rest /= n;
                }
                src[at]
            })
            .collect();
        for kernels in [KernelSet::Best, KernelSet::Avx2, KernelSet::Portable] {
            for (tile_rows, batch_rows) in shapes {
                let tuning = Tuning {
                    panel: 16,
                    tile_rows,
                    batch_rows,
                    stream: true,
                    staged: false,
                    kernels,
                    ..Tuning::for_caches(1 << 30, 1, TEST_CACHES)
                };
                for shift in [0, 1] {
                    let mut buffer = vec![0.0f64; count + 8];
                    // The first element on a cache line, then `shift` past it.
                    let start = buffer.as_ptr().align_offset(simd::LINE_BYTES) + shift;
                    let dst = &mut buffer[start..start + count];
                    copy_into_contiguous_tuned(&src, shape, strides, 0, dst, tuning, None).unwrap();
                    assert_eq!(dst, &want[..], "{shape:?} {kernels:?} {tuning:?} +{shift}");
                }
            }
        }
    }
}

mod kernels_agree {
    use super::*;
    use proptest::prelude::*;

    /// A transposed `rows`×`cols` matrix with leading dimension `cols + pad`, `batch` of them
    /// one after another, the view starting `offset` elements in: odd sizes (4097-like source
    /// rows off the line grid, destination rows starting mid-line) among them.
    fn views() -> impl Strategy<Value = (Vec<usize>, Vec<isize>, usize, usize)> {
        (1usize..3, 8usize..90, 8usize..90, 0usize..9, 0usize..9).prop_map(
            |(batch, rows, cols, pad, offset)| {
                let ld = cols + pad;
                let matrix = (rows * ld) as isize;
                let shape = vec![batch, cols, rows];
                let strides = vec![matrix, 1, ld as isize];
                (shape, strides, offset, offset + batch * rows * ld)
            },
        )
    }

    /// Every knob a schedule may set: panel, tile rows, streaming stores, staged, the walk's
    /// prefetch distance.
    fn tunings() -> impl Strategy<Value = Tuning> {
        (
            prop::sample::select(vec![8usize, 16, 64, 256, 1024]),
            prop::sample::select(vec![8usize, 16, 24, 32, 64]),
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(vec![0usize, 1024]),
        )
            .prop_map(|(panel, tile_rows, stream, staged, ahead)| Tuning {
                panel,
                tile_rows,
                batch_rows: tile_rows,
                stream,
                staged,
                tile_prefetch_bytes: ahead,
                ..Tuning::for_caches(1 << 30, 1, TEST_CACHES)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// The AVX2 kernels, the CPU's best ones (AVX-512 where it has it) and the portable
        /// ones all equal the definition, on destinations that start at every offset within
        /// a line.
        #[test]
        fn every_kernel_set_copies_exactly(
            (shape, strides, offset, len) in views(),
            tuning in tunings(),
            shift in 0usize..8,
        ) {
            let src: Vec<f64> = (0..len).map(|i| i as f64 + 0.25).collect();
            let count: usize = shape.iter().product();
            let want: Vec<f64> = (0..count)
                .map(|k| {
                    let (mut rest, mut at) = (k, offset as isize);
                    for (&n, &s) in shape.iter().zip(&strides).rev() {
                        at += (rest % n) as isize * s;
                        rest /= n;
                    }
                    src[at as usize]
                })
                .collect();
            for kernels in [KernelSet::Best, KernelSet::Avx2, KernelSet::Portable] {
                let mut buffer = vec![-1.0f64; count + 16];
                let start = buffer.as_ptr().align_offset(simd::LINE_BYTES) + shift;
                let dst = &mut buffer[start..start + count];
                let tuning = Tuning { kernels, ..tuning };
                copy_into_contiguous_tuned(&src, &shape, &strides, offset, dst, tuning, None)
                    .unwrap();
                prop_assert_eq!(&*dst, &want[..], "{:?} +{}", tuning, shift);
            }
        }
    }
}
