//! Property tests of the copy engine: for random strided views (negative, zero and unit strides,
//! size-1 and empty dims, sizes that are not multiples of the tile, offsets, ranks 0..=5) every
//! path of the engine — sequential, parallel, every tuning, 8-byte SIMD and generic elements —
//! equals a naive element-by-element copy, and views that leave the storage are errors.

use proptest::prelude::*;
use stridelab_copy::order::{OrderSink, engine_order};
use stridelab_copy::{
    CacheSizes, CopyError, KernelSet, Planner, Tuning, copy_into_contiguous,
    copy_into_contiguous_par, copy_into_contiguous_tuned,
};

/// A common x86 core's caches: every schedule is checked on its own tunings below, so the
/// analytic ones need not be this machine's.
const CACHES: CacheSizes = CacheSizes {
    l1d_bytes: 32 << 10,
    l2_bytes: 1 << 20,
    llc_bytes: 32 << 20,
};

fn planner() -> Planner {
    Planner::analytic(CACHES)
}

/// `len` elements starting on a 64-byte cache line (plus `shift` elements), in a `Vec` a line
/// longer than they need.
struct LineBuffer<T> {
    storage: Vec<T>,
    start: usize,
    len: usize,
}

impl<T: Copy + Default> LineBuffer<T> {
    fn new(len: usize, shift: usize) -> Self {
        let storage = vec![T::default(); len + shift + 64];
        let start = storage.as_ptr().align_offset(64) + shift;
        LineBuffer {
            storage,
            start,
            len,
        }
    }
}

impl<T> std::ops::Deref for LineBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.storage[self.start..self.start + self.len]
    }
}

impl<T> std::ops::DerefMut for LineBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

/// A view over a storage of `storage_len` elements.
#[derive(Debug, Clone)]
struct View {
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
    storage_len: usize,
}

/// The smallest and largest storage index the view reaches relative to its offset.
fn reach(shape: &[usize], strides: &[isize]) -> (isize, isize) {
    shape
        .iter()
        .zip(strides)
        .fold((0, 0), |(lo, hi), (&n, &s)| {
            let span = (n as isize - 1) * s;
            if span < 0 {
                (lo + span, hi)
            } else {
                (lo, hi + span)
            }
        })
}

/// Wraps arbitrary shape/strides in a storage that holds exactly what they reach, plus slack.
fn fit(shape: Vec<usize>, strides: Vec<isize>, front_slack: usize, back_slack: usize) -> View {
    let (lo, hi) = if shape.contains(&0) {
        (0, 0)
    } else {
        reach(&shape, &strides)
    };
    let offset = (-lo) as usize + front_slack;
    View {
        storage_len: offset + hi as usize + 1 + back_slack,
        shape,
        strides,
        offset,
    }
}

/// Arbitrary small views: any strides, including zero and negative.
fn arbitrary_view() -> impl Strategy<Value = View> {
    (0usize..=5)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(
                    prop_oneof![3 => 1usize..12, 1 => 0usize..2, 1 => 12usize..40],
                    rank,
                ),
                prop::collection::vec(
                    prop_oneof![3 => -40isize..40, 1 => Just(1isize), 1 => Just(-1isize)],
                    rank,
                ),
                0usize..5,
                0usize..5,
            )
        })
        .prop_map(|(shape, strides, front, back)| fit(shape, strides, front, back))
}

/// Permuted, flipped and sliced views of a contiguous array: the transposes, `contiguous()`
/// and to-tiles copies the engine exists for, with sizes around the 8×8 tile and the panel.
fn permuted_view() -> impl Strategy<Value = View> {
    (1usize..=4)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(prop_oneof![2 => 1usize..20, 1 => 20usize..80], rank),
                Just((0..rank).collect::<Vec<_>>()).prop_shuffle(),
                prop::collection::vec(any::<bool>(), rank),
                prop::collection::vec(1usize..3, rank),
                0usize..9,
            )
        })
        .prop_map(|(base, permutation, flips, steps, front)| {
            // Row-major strides of the base array, then slice with steps and flip.
            let mut base_strides = vec![1isize; base.len()];
            for d in (0..base.len().saturating_sub(1)).rev() {
                base_strides[d] = base_strides[d + 1] * base[d + 1] as isize;
            }
            let shape: Vec<usize> = permutation
                .iter()
                .map(|&d| base[d].div_ceil(steps[d]))
                .collect();
            let strides: Vec<isize> = permutation
                .iter()
                .map(|&d| base_strides[d] * steps[d] as isize * if flips[d] { -1 } else { 1 })
                .collect();
            fit(shape, strides, front, 3)
        })
}

/// The definition: destination element k is the source element at the k-th index in C order.
fn naive_copy<T: Copy>(src: &[T], view: &View) -> Vec<T> {
    let count: usize = view.shape.iter().product();
    let mut out = Vec::with_capacity(count);
    let mut index = vec![0usize; view.shape.len()];
    for _ in 0..count {
        let pos = view.offset as isize
            + index
                .iter()
                .zip(&view.strides)
                .map(|(&i, &s)| i as isize * s)
                .sum::<isize>();
        out.push(src[pos as usize]);
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < view.shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

/// Replays the engine's order on plain vectors: a store takes its source element's value
/// (as an index), which must have been loaded before, and must be the element's only store.
struct Replay {
    loaded: Vec<bool>,
    dst: Vec<Option<f64>>,
}

impl OrderSink for Replay {
    fn load(&mut self, src: usize) {
        self.loaded[src] = true;
    }

    fn store(&mut self, dst: usize, src: usize) {
        assert!(
            self.loaded[src],
            "element {src} stored before it was loaded"
        );
        assert!(self.dst[dst].is_none(), "destination {dst} stored twice");
        self.dst[dst] = Some(src as f64);
    }
}

fn storage<T>(len: usize, make: impl Fn(usize) -> T) -> Vec<T> {
    (0..len).map(make).collect()
}

fn pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .expect("a 3-thread pool")
    })
}

/// Every engine entry point on `view` equals the naive copy.
fn check_all_paths(view: &View) -> Result<(), TestCaseError> {
    let count: usize = view.shape.iter().product();
    let src = storage(view.storage_len, |i| i as f64 + 0.25);
    let expected = naive_copy(&src, view);
    let run = |dst: &mut Vec<f64>| dst.fill(-1.0);

    let mut dst = vec![-1.0f64; count];
    copy_into_contiguous(
        &planner(),
        &src,
        &view.shape,
        &view.strides,
        view.offset,
        &mut dst,
    )
    .unwrap();
    prop_assert_eq!(&dst, &expected, "sequential f64");

    run(&mut dst);
    copy_into_contiguous_par(
        &planner(),
        &src,
        &view.shape,
        &view.strides,
        view.offset,
        &mut dst,
        pool(),
    )
    .unwrap();
    prop_assert_eq!(&dst, &expected, "parallel f64");

    let mut line_dst = LineBuffer::<f64>::new(count, 0);
    // (panel, tile rows, stream, staged, prefetch steps, tile prefetch bytes, batch rows,
    // batch prefetch bytes, kernels)
    for (
        panel,
        tile_rows,
        stream,
        staged,
        prefetch_steps,
        tile_prefetch_bytes,
        batch_rows,
        batch_prefetch_bytes,
        kernels,
    ) in [
        (8, 8, true, false, 1, 0, 8, 0, KernelSet::Best),
        (16, 24, false, false, 2, 64, 16, 64, KernelSet::Avx2),
        (24, 16, true, true, 0, 0, 24, 1024, KernelSet::Portable),
        (32, 64, true, true, 8, 1024, 16, 1024, KernelSet::Best),
        (16, 16, true, true, 8, 0, 8, 8, KernelSet::Avx2),
        (256, 16, true, true, 8, 0, 24, 100, KernelSet::Best),
        (256, 8, true, false, 8, 1024, 16, 1024, KernelSet::Best),
        (16, 24, true, false, 0, 64, 32, 0, KernelSet::Best),
        (64, 64, true, false, 8, 0, 5, 4096, KernelSet::Best),
        (64, 16, true, false, 8, 200, 16, 1024, KernelSet::Best),
        (16, 8, true, false, 2, 0, 8, 64, KernelSet::Avx2),
        (24, 16, true, false, 1, 0, 16, 0, KernelSet::Avx2),
        (64, 24, true, false, 0, 64, 24, 1024, KernelSet::Avx2),
    ] {
        let tuning = Tuning {
            panel,
            tile_rows,
            stream,
            staged,
            prefetch_steps,
            tile_prefetch_bytes,
            batch_rows,
            batch_prefetch_bytes,
            kernels,
        };
        // A destination on a cache line as well as a plain Vec's: only the first lets the
        // streamed kernels write whole lines from registers (rows of a multiple of 8 elements).
        for (parallel, aligned) in [(None, false), (Some(pool()), false), (None, true)] {
            let out: &mut [f64] = if aligned { &mut line_dst } else { &mut dst };
            out.fill(-1.0);
            copy_into_contiguous_tuned(
                &src,
                &view.shape,
                &view.strides,
                view.offset,
                out,
                tuning,
                parallel,
            )
            .unwrap();
            prop_assert_eq!(
                &*out,
                &expected[..],
                "{:?} parallel={} aligned={}",
                tuning,
                parallel.is_some(),
                aligned
            );
        }
    }

    // Other element sizes: the generic path (u16, f32) and the 8-byte integer SIMD path (u64).
    let src16 = storage(view.storage_len, |i| i as u16);
    let mut dst16 = vec![0u16; count];
    copy_into_contiguous(
        &planner(),
        &src16,
        &view.shape,
        &view.strides,
        view.offset,
        &mut dst16,
    )
    .unwrap();
    prop_assert_eq!(dst16, naive_copy(&src16, view), "u16");

    let src32 = storage(view.storage_len, |i| i as f32 * 0.5);
    let mut dst32 = vec![0f32; count];
    copy_into_contiguous_par(
        &planner(),
        &src32,
        &view.shape,
        &view.strides,
        view.offset,
        &mut dst32,
        pool(),
    )
    .unwrap();
    prop_assert_eq!(dst32, naive_copy(&src32, view), "f32");

    let src64 = storage(view.storage_len, |i| {
        (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    });
    let mut dst64 = vec![0u64; count];
    copy_into_contiguous(
        &planner(),
        &src64,
        &view.shape,
        &view.strides,
        view.offset,
        &mut dst64,
    )
    .unwrap();
    prop_assert_eq!(dst64, naive_copy(&src64, view), "u64");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn arbitrary_views_copy_like_the_definition(view in arbitrary_view()) {
        check_all_paths(&view)?;
    }

    #[test]
    fn permuted_views_copy_like_the_definition(view in permuted_view()) {
        check_all_paths(&view)?;
    }

    /// The order the simulator replays for the engine stores every destination element once,
    /// from its source element, after loading that element.
    #[test]
    fn the_replayed_engine_order_moves_every_element_once(
        view in prop_oneof![arbitrary_view(), permuted_view()]
    ) {
        let src = storage(view.storage_len, |i| i as f64);
        let want = naive_copy(&src, &view);
        let mut replay = Replay { loaded: vec![false; view.storage_len], dst: vec![None; want.len()] };
        engine_order(&planner(), view.storage_len, &view.shape, &view.strides, view.offset, 0, &mut replay)
            .unwrap();
        let got: Vec<Option<f64>> = replay.dst;
        prop_assert_eq!(got, want.into_iter().map(Some).collect::<Vec<_>>());
    }

    /// A storage one element too short at either end is refused, never read out of bounds.
    #[test]
    fn views_leaving_the_storage_are_errors(view in arbitrary_view(), cut_front in any::<bool>()) {
        let count: usize = view.shape.iter().product();
        prop_assume!(count > 0);
        let (lo, hi) = reach(&view.shape, &view.strides);
        let mut dst = vec![0.0f64; count];
        let src = vec![0.0f64; view.storage_len];
        let result = if cut_front && lo < 0 {
            // The most negative reach lands one element before the storage.
            let offset = (-lo - 1) as usize;
            copy_into_contiguous(&planner(), &src, &view.shape, &view.strides, offset, &mut dst)
        } else {
            // The storage ends one element before the furthest reach.
            let short = &src[..(view.offset as isize + hi) as usize];
            copy_into_contiguous(&planner(), short, &view.shape, &view.strides, view.offset, &mut dst)
        };
        let is_out_of_bounds = matches!(result, Err(CopyError::OutOfBounds { .. }));
        prop_assert!(is_out_of_bounds, "{:?}", result);
    }

    /// A destination of the wrong size is refused.
    #[test]
    fn wrong_destination_sizes_are_errors(view in arbitrary_view(), extra in 1usize..3) {
        let count: usize = view.shape.iter().product();
        let src = vec![0.0f64; view.storage_len];
        let mut dst = vec![0.0f64; count + extra];
        let result = copy_into_contiguous(&planner(), &src, &view.shape, &view.strides, view.offset, &mut dst);
        prop_assert_eq!(result, Err(CopyError::DestinationSize { dst: count + extra, needed: count }));
    }
}

/// The tile-edge and alignment cases of the 8×8 kernel, exhaustively for small matrices, with
/// the destination not line-aligned (it starts one element into a Vec).
#[test]
fn small_transposes_at_every_size_and_misalignment() {
    for rows in 1..=20usize {
        for cols in 1..=20usize {
            let src: Vec<f64> = (0..rows * cols).map(|i| i as f64).collect();
            let mut storage = vec![0.0f64; rows * cols + 1];
            let dst = &mut storage[1..];
            copy_into_contiguous(&planner(), &src, &[cols, rows], &[1, cols as isize], 0, dst)
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
}

/// Permutations that swap the first and last dims of a 4-D array: the merged middle dims form
/// a batch the streaming kernel sweeps inside each row step (aligned and misaligned
/// destinations, batches longer than one work item, sequential and parallel).
#[test]
fn batched_permutations_match_the_definition() {
    for dims in [
        [8usize, 40, 8, 8],
        [16, 3, 5, 24],
        [9, 7, 33, 10],
        [64, 2, 2, 64],
        [40, 3, 4, 16],
    ] {
        let [a, b, c, d] = dims.map(|n| n as isize);
        let view = View {
            shape: vec![dims[3], dims[1], dims[2], dims[0]],
            strides: vec![1, c * d, d, b * c * d],
            offset: 0,
            storage_len: (a * b * c * d) as usize,
        };
        let count = view.storage_len;
        let src = storage(count, |i| i as f64);
        let expected = naive_copy(&src, &view);
        for shift in [0usize, 3] {
            let mut backing = LineBuffer::<f64>::new(count, shift);
            let dst = &mut backing[..];
            // Row steps that divide the rows, leave a partial step, or take them all; panels
            // prefetched 1 or several panels ahead, or not at all.
            let steps = [(8, 0), (16, 1024), (24, 8)];
            for (parallel, (batch_rows, batch_prefetch_bytes)) in [None, Some(pool())]
                .into_iter()
                .flat_map(|parallel| steps.map(|step| (parallel, step)))
            {
                let tuning = Tuning {
                    stream: true,
                    batch_rows,
                    batch_prefetch_bytes,
                    ..Tuning::for_caches(0, 1, CACHES)
                };
                dst.fill(-1.0);
                copy_into_contiguous_tuned(
                    &src,
                    &view.shape,
                    &view.strides,
                    0,
                    dst,
                    tuning,
                    parallel,
                )
                .unwrap();
                assert_eq!(dst, &expected[..], "{dims:?} shift {shift} {tuning:?}");
            }
        }
    }
}

/// The streaming tiled transpose on line-aligned buffers, where the kernels without a carry
/// run (destination rows starting a line) beside the joining ones (they do not): partial last
/// tiles, panels and sizes that are not multiples of 8, sequential and parallel.
#[test]
fn streamed_tiles_on_aligned_buffers_match_the_definition() {
    for (rows, cols) in [(64usize, 64usize), (72, 40), (96, 100), (40, 203), (57, 48)] {
        let mut src = LineBuffer::<f64>::new(rows * cols, 0);
        for (i, x) in src.iter_mut().enumerate() {
            *x = i as f64;
        }
        let mut dst = LineBuffer::<f64>::new(rows * cols, 0);
        // (panel, tile rows, tile prefetch bytes: 0 = the next tile, else along the walk)
        for (panel, tile_rows, ahead) in [
            (16usize, 16usize, 0usize),
            (24, 24, 64),
            (64, 32, 0),
            (64, 16, 1024),
            (512, 32, 0),
            (512, 16, 1024),
        ] {
            let tuning = Tuning {
                panel,
                tile_rows,
                stream: true,
                staged: false,
                tile_prefetch_bytes: ahead,
                ..Tuning::for_caches(0, 1, CACHES)
            };
            for parallel in [None, Some(pool())] {
                dst.fill(-1.0);
                copy_into_contiguous_tuned(
                    &src,
                    &[cols, rows],
                    &[1, cols as isize],
                    0,
                    &mut dst,
                    tuning,
                    parallel,
                )
                .unwrap();
                for r in 0..rows {
                    for c in 0..cols {
                        assert_eq!(
                            dst[c * rows + r],
                            src[r * cols + c],
                            "{rows}x{cols} panel {panel} tile {tile_rows} ahead {ahead} at {r},{c}"
                        );
                    }
                }
            }
        }
    }
}
