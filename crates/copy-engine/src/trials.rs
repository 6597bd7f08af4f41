//! The measuring planner's trials: which candidate schedules a copy is timed with, on which
//! bands of it, and the timing itself (the planner's "which", "where" and "how long", in
//! `planner.rs`'s doc). Safe code only.

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use crate::plan::{CacheSizes, Dim, Inner, Plan, Tuning};
use crate::wisdom::Trial;

/// Copies up to this many destination bytes are timed whole; larger ones on bands this big.
pub(crate) const TRIAL_BYTES: usize = 4 << 20;
/// Disjoint bands a large copy's trials rotate over.
const POSITIONS: usize = 4;
const MIN_ROUNDS: usize = 3;
const MAX_ROUNDS: usize = 15;
/// The planning budget (the larger of this and a tenth of one whole copy).
const BUDGET: Duration = Duration::from_millis(50);

/// Times one candidate on one trial band; the engine's copy of the band behind it.
pub(crate) trait TrialRunner {
    /// Runs the copy of `trial` (a band of the real copy) with `tuning`.
    fn run(&mut self, trial: &TrialBand, tuning: Tuning);
}

/// A band of the real copy: its plan, and where it starts in the source and destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrialBand {
    pub plan: Plan,
    pub src_offset: usize,
    pub dst_offset: usize,
}

/// The named candidate schedules for a copy, duplicates removed (first name kept).
pub(crate) fn candidates(
    plan: &Plan,
    bytes: usize,
    threads: usize,
    caches: CacheSizes,
) -> Vec<(&'static str, Tuning)> {
    let assuming_llc = |llc_bytes: usize| {
        let assumed = CacheSizes {
            llc_bytes,
            ..caches
        };
        Tuning::for_caches(bytes, threads, assumed)
    };
    let in_cache = assuming_llc(usize::MAX);
    let tiles = assuming_llc(bytes);
    let walk = assuming_llc((bytes / 16).max(1));
    let mut list = vec![("in-cache", in_cache), ("stream-tiles", tiles)];
    if matches!(plan.inner, Inner::Transpose { .. }) {
        let rows = |tile_rows: usize| (tile_rows / 8 * 8).clamp(8, 64);
        list.extend([
            (
                "stream-tiles-short",
                Tuning {
                    tile_rows: rows(tiles.tile_rows / 2),
                    ..tiles
                },
            ),
            (
                "stream-tiles-tall",
                Tuning {
                    tile_rows: rows(tiles.tile_rows * 2),
                    ..tiles
                },
            ),
            ("stream-walk", walk),
            (
                "stream-walk-far",
                Tuning {
                    tile_prefetch_bytes: walk.tile_prefetch_bytes * 2,
                    ..walk
                },
            ),
            (
                "staged-stream",
                Tuning {
                    stream: true,
                    ..in_cache
                },
            ),
        ]);
    }
    let mut unique: Vec<(&'static str, Tuning)> = Vec::with_capacity(list.len());
    for (name, tuning) in list {
        if unique.iter().all(|(_, t)| *t != tuning) {
            unique.push((name, tuning));
        }
    }
    unique
}

/// The bands a copy's trials run on, and the destination bytes of each.
pub(crate) struct Bands {
    pub bands: Vec<TrialBand>,
    pub trial_bytes: usize,
}

/// The whole copy when it is at most [`TRIAL_BYTES`]; else up to [`POSITIONS`] disjoint bands
/// of one loop (the first whose band can be that small: an outer loop, the transpose rows in
/// multiples of 64, the batch), or `None` when no loop can be cut that small.
pub(crate) fn trial_bands(plan: &Plan, offset: usize, bytes: usize) -> Option<Bands> {
    let whole = TrialBand {
        plan: plan.clone(),
        src_offset: offset,
        dst_offset: 0,
    };
    if bytes <= TRIAL_BYTES {
        return Some(Bands {
            bands: vec![whole],
            trial_bytes: bytes,
        });
    }
    // The loops a band may cut, as (which, the loop, the smallest step to cut it in): a
    // transpose's rows step `lds` in the source and 1 in the destination.
    let mut cuts: Vec<(Cut, Dim, usize)> = plan
        .outer
        .iter()
        .enumerate()
        .map(|(i, &dim)| (Cut::Outer(i), dim, 1))
        .collect();
    if let Inner::Transpose { rows, lds, .. } = plan.inner {
        let dim = Dim {
            len: rows,
            src_stride: lds,
            dst_stride: 1,
        };
        cuts.push((Cut::Rows, dim, 64));
    }
    if plan.batch.len > 1 {
        cuts.push((Cut::Batch, plan.batch, 1));
    }
    cuts.into_iter().find_map(|(which, dim, step)| {
        let per_index = bytes / dim.len;
        let k = TRIAL_BYTES.div_ceil(per_index.max(1)).div_ceil(step) * step;
        let positions = (dim.len / k.max(1)).min(POSITIONS);
        let band = |start: usize| TrialBand {
            plan: which.shortened(plan, k),
            src_offset: shifted(offset, start, dim.src_stride),
            dst_offset: shifted(0, start, dim.dst_stride),
        };
        (k < dim.len && positions >= 1).then(|| Bands {
            bands: (0..positions).map(|p| band(p * k)).collect(),
            trial_bytes: k * per_index,
        })
    })
}

/// A loop of a plan that a trial band cuts short.
#[derive(Debug, Clone, Copy)]
enum Cut {
    Outer(usize),
    Rows,
    Batch,
}

impl Cut {
    /// `plan` with this loop cut to `len` steps.
    fn shortened(self, plan: &Plan, len: usize) -> Plan {
        let mut band = plan.clone();
        match self {
            Cut::Outer(i) => band.outer[i].len = len,
            Cut::Rows => {
                if let Inner::Transpose { rows, .. } = &mut band.inner {
                    *rows = len;
                }
            }
            Cut::Batch => band.batch.len = len,
        }
        band
    }
}

/// Whether every element a band reads lies in `0..src_len` and every one it writes in
/// `0..dst_len`: the raw loops trust a band as they trust a validated view.
pub(crate) fn band_fits(band: &TrialBand, src_len: usize, dst_len: usize) -> bool {
    let plan = &band.plan;
    let mut loops: Vec<(usize, isize, isize)> = plan
        .outer
        .iter()
        .chain(std::iter::once(&plan.batch))
        .map(|d| (d.len, d.src_stride, d.dst_stride))
        .collect();
    match plan.inner {
        Inner::Transpose {
            rows,
            cols,
            lds,
            ldd,
        } => loops.extend([(rows, lds, 1), (cols, 1, ldd)]),
        Inner::Run { len, src_stride } => loops.push((len, src_stride, 1)),
    }
    let (mut lo, mut hi) = (band.src_offset as i128, band.src_offset as i128);
    let mut dst_hi = band.dst_offset as i128;
    for (len, src_stride, dst_stride) in loops {
        if len == 0 {
            return true;
        }
        let span = (len as i128 - 1) * src_stride as i128;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
        // Destination strides are non-negative (C order).
        dst_hi += (len as i128 - 1) * dst_stride.max(0) as i128;
    }
    lo >= 0 && hi < src_len as i128 && dst_hi < dst_len as i128
}

/// `base + start·stride`: inside the validated view, since `start` indexes one of its loops.
fn shifted(base: usize, start: usize, stride: isize) -> usize {
    (base as isize + start as isize * stride) as usize
}

/// Times every candidate on the bands in rotated order, within the budget counted from
/// `started`; returns the winner's index and each candidate's median.
pub(crate) fn measure(
    candidates: &[(&'static str, Tuning)],
    bands: &Bands,
    (bytes, started): (usize, Instant),
    runner: &mut impl TrialRunner,
) -> (usize, Vec<Trial>) {
    // One untimed pass over the bands: the destination's pages are faulted in before any
    // candidate is timed, so no candidate pays for them.
    for band in &bands.bands {
        runner.run(band, candidates[0].1);
    }
    let mut times: Vec<Vec<u64>> = vec![Vec::new(); candidates.len()];
    let mut position = 0;
    let mut budget = BUDGET;
    for round in 0..MAX_ROUNDS {
        for k in 0..candidates.len() {
            let which = (k + round) % candidates.len();
            let band = &bands.bands[position % bands.bands.len()];
            position += 1;
            let t0 = Instant::now();
            runner.run(band, candidates[which].1);
            times[which].push(u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX));
        }
        if round == 0 {
            let best = times.iter().filter_map(|t| t.first()).min().copied();
            let whole_copy_ns = best.unwrap_or(0) as f64 * bytes as f64 / bands.trial_bytes as f64;
            budget = budget.max(Duration::from_nanos((whole_copy_ns / 10.0) as u64));
        }
        if round + 1 >= MIN_ROUNDS && started.elapsed() >= budget {
            break;
        }
    }
    let trials: Vec<Trial> = candidates
        .iter()
        .zip(&mut times)
        .map(|((name, _), t)| {
            t.sort_unstable();
            Trial {
                schedule: (*name).to_string(),
                median_ns: t[t.len() / 2],
                runs: t.len(),
            }
        })
        .collect();
    let winner = (0..trials.len())
        .min_by_key(|&i| trials[i].median_ns)
        .unwrap_or(0);
    (winner, trials)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `dst[i]` = the view's `i`-th element in C order, element by element.
    fn naive_copy(src: &[f64], shape: &[usize], strides: &[isize], offset: usize) -> Vec<f64> {
        let count: usize = shape.iter().product();
        (0..count)
            .map(|mut linear| {
                let mut at = offset as isize;
                for (&n, &s) in shape.iter().zip(strides).rev() {
                    at += (linear % n) as isize * s;
                    linear /= n;
                }
                src[at as usize]
            })
            .collect()
    }

    /// A transposed `rows`×`cols` matrix (leading dimension `ld` ≥ `cols`) inside a batch of
    /// `batch` such matrices: a view whose plan has a transpose, a batch or an outer loop.
    fn views() -> impl Strategy<Value = (Vec<usize>, Vec<isize>, usize, usize)> {
        (1usize..3, 8usize..70, 8usize..70, 0usize..9, 0usize..9).prop_map(
            |(batch, rows, cols, pad, offset)| {
                let ld = cols + pad;
                let matrix = (rows * ld) as isize;
                let shape = vec![batch, cols, rows];
                let strides = vec![matrix, 1, ld as isize];
                let len = offset + batch * rows * ld;
                (shape, strides, offset, len)
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the planner picks, the copy is exact: every candidate of every size
        /// family, on one and two threads.
        #[test]
        fn every_candidate_copies_exactly((shape, strides, offset, len) in views()) {
            let src: Vec<f64> = (0..len).map(|i| i as f64 + 0.5).collect();
            let expected = naive_copy(&src, &shape, &strides, offset);
            let plan = Plan::new(&shape, &strides);
            static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
            let pool = POOL.get_or_init(|| {
                rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap()
            });
            for bytes in [1 << 20, 64 << 20, 1 << 32] {
                for (threads, pool) in [(1, None), (2, Some(pool))] {
                    for (name, tuning) in candidates(&plan, bytes, threads, crate::TEST_CACHES) {
                        let mut dst = vec![-1.0; expected.len()];
                        crate::copy_into_contiguous_tuned(
                            &src, &shape, &strides, offset, &mut dst, tuning, pool,
                        )
                        .unwrap();
                        prop_assert_eq!(&dst, &expected, "{} at {} B on {}", name, bytes, threads);
                    }
                }
            }
        }

        /// Trial bands of large copies stay inside the copy, are disjoint, and are about
        /// [`TRIAL_BYTES`] each.
        #[test]
        fn trial_bands_are_disjoint_parts_of_the_copy(
            outer in 1usize..40,
            rows in 8usize..5000,
            cols in 8usize..5000,
            pad in 0usize..9,
        ) {
            let ld = cols + pad;
            let shape = [outer, cols, rows];
            let strides = [(rows * ld) as isize, 1, ld as isize];
            let plan = Plan::new(&shape, &strides);
            let count = outer * rows * cols;
            let bytes = count * 8;
            let Some(bands) = trial_bands(&plan, 0, bytes) else {
                // Only when no loop can be cut to a small band: a band of TRIAL_BYTES would be
                // the whole outer loop, and (the rows cut in steps of 64) all the rows.
                let outer_band = TRIAL_BYTES.div_ceil(bytes / outer);
                let rows_band = TRIAL_BYTES.div_ceil(bytes / rows).next_multiple_of(64);
                prop_assert!(outer_band >= outer && rows_band >= rows);
                return Ok(());
            };
            let src_len = outer * rows * ld;
            let mut starts = std::collections::HashSet::new();
            for band in &bands.bands {
                prop_assert!(band_fits(band, src_len, count), "{:?}", band);
                prop_assert!(starts.insert(band.dst_offset), "two bands start at {}", band.dst_offset);
            }
            if bytes > TRIAL_BYTES {
                prop_assert!(bands.trial_bytes < bytes);
            }
        }
    }

    #[test]
    fn small_copies_are_timed_whole_and_large_ones_on_disjoint_bands() {
        let n = 4096usize;
        let plan = Plan::new(&[n, n], &[1, n as isize]);
        let bands = trial_bands(&plan, 0, n * n * 8).expect("rows can be cut");
        assert_eq!(bands.bands.len(), POSITIONS);
        assert_eq!(bands.trial_bytes, 128 * n * 8);
        for (p, band) in bands.bands.iter().enumerate() {
            assert_eq!(band.src_offset, p * 128 * n);
            assert_eq!(band.dst_offset, p * 128);
        }
        let small = Plan::new(&[512, 512], &[1, 512]);
        let whole = trial_bands(&small, 3, 512 * 512 * 8).unwrap();
        assert_eq!(whole.bands.len(), 1);
        assert_eq!(whole.bands[0].plan, small);
        assert_eq!(whole.bands[0].src_offset, 3);
    }

    #[test]
    fn the_analytic_tuning_is_always_a_candidate() {
        let kib = 1usize << 10;
        for (l2, llc) in [(2048 * kib, 2048 * kib), (1024 * kib, 32768 * kib)] {
            let caches = CacheSizes {
                l1d_bytes: 48 * kib,
                l2_bytes: l2,
                llc_bytes: llc,
            };
            for bytes in [1 << 20, 3 << 20, 8 << 20, 64 << 20, 1 << 30] {
                for threads in [1, 2] {
                    let plan = Plan::new(&[1024, 1024], &[1, 1024]);
                    let list = candidates(&plan, bytes, threads, caches);
                    let analytic = Tuning::for_caches(bytes, threads, caches);
                    assert!(
                        list.iter().any(|(_, t)| *t == analytic),
                        "{bytes} B, {threads} threads, {caches:?}"
                    );
                    assert!(list.len() <= 7);
                }
            }
        }
    }
}
