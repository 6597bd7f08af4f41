//! The measuring planner: the first copy of a class this process has no wisdom for times a
//! bounded set of candidate schedules on that copy's own buffers and keeps the fastest.
//!
//! The analytic tuning ([`Tuning::for_geometry`]) guesses from cache sizes, and a guess walks
//! into cliffs where the sizes mislead (a hypervisor's L3, a destination that fits an LLC the
//! sizes do not show). Measuring the candidates on the machine at hand, as FFTW's planner
//! does, replaces the guess with the winner; the analytic tuning is always one candidate.
//!
//! - Which: the candidate families are the analytic tuning evaluated as if the destination
//!   fitted in L1's reach (staged, regular stores), fitted the LLC (streamed tiles) or not
//!   (a walk with a near prefetch), plus a staged schedule with streaming stores, shorter and
//!   taller tiles and a farther prefetch. Run copies (no transpose) only choose the store kind.
//! - Where: copies up to [`TRIAL_BYTES`] are timed whole; larger ones on bands of one loop
//!   (outermost loop, transpose rows, or batch) of about that size, rotating over up to
//!   [`POSITIONS`] disjoint bands so each trial reads memory the previous ones left cold.
//! - How long: one untimed pass over the bands (so no candidate pays for the destination's
//!   first touch), then candidates interleaved in rotated order, at least [`MIN_ROUNDS`]
//!   rounds, and more while the whole planning stays within its budget (50 ms, or 10% of one
//!   whole copy when that is longer); the winner has the lowest median, unless the analytic
//!   schedule is within [`MARGIN`] of it (then the analytic one stays).
//!
//! Nothing is planned unless the application asks ([`configure_planner`]): a library call
//! with no configuration takes the analytic tuning, so its results and its speed do not depend
//! on a file it was never told about.

#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::plan::{Dim, Geometry, Inner, Plan, Tuning};
use super::wisdom::{CopyClass, MachineKey, Schedule, Trial, Verdict, Wisdom, WisdomError};
use super::{copy_planned, is_plain_eight_byte};

/// Copies up to this many destination bytes are timed whole; larger ones on bands this big.
const TRIAL_BYTES: usize = 4 << 20;
/// Below this many destination bytes the analytic tuning stands: the copy fits L2, where the
/// candidates differ by less than planning them costs.
const MIN_PLAN_BYTES: usize = 1 << 20;
/// Disjoint bands a large copy's trials rotate over.
const POSITIONS: usize = 4;
const MIN_ROUNDS: usize = 3;
const MAX_ROUNDS: usize = 15;
/// The planning budget (the larger of this and a tenth of one whole copy).
const BUDGET: Duration = Duration::from_millis(50);
/// A challenger replaces the analytic schedule only when its median is this much faster:
/// between near-equal candidates the fastest median of a few noisy trials is chance, and a
/// chance winner cost up to 5% at some sizes in the same-run sweep (docs/copy-engine.md).
const MARGIN: f64 = 0.03;

/// Where the planner keeps what it learns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WisdomChoice {
    /// No planning: every copy takes the analytic tuning (reproducible plans, e.g. for a gate
    /// that compares simulated misses between builds).
    Off,
    /// Plan, and keep the plans for this process only.
    Memory,
    /// Plan, and keep the plans in this file (read now, rewritten after each new plan). The
    /// user named it, so its directory must exist.
    File(PathBuf),
    /// [`WisdomChoice::File`] at the default location
    /// ([`default_wisdom_path`](super::default_wisdom_path)), whose missing
    /// directories are created on the first save.
    DefaultFile(PathBuf),
}

/// How a copy's schedule was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanSource {
    /// Timed in this process.
    Measured,
    /// Taken from the wisdom (a file, or an earlier copy of this process).
    Wisdom,
}

/// One copy class's plan as used since the last [`take_plan_events`].
#[derive(Debug, Clone, PartialEq)]
pub struct PlanEvent {
    /// The copy, in words (`transpose 2048×2048, lds 2048, ldd 2048, 1 thread`).
    pub class: String,
    pub schedule: Schedule,
    pub source: PlanSource,
    /// Wall time of the planning (0 for a plan from wisdom), in seconds.
    pub planning_s: f64,
    pub trial_bytes: usize,
    pub trials: Vec<Trial>,
}

struct PlannerState {
    wisdom: Wisdom,
    /// Classes already reported since the last drain.
    reported: HashSet<CopyClass>,
    events: Vec<PlanEvent>,
    /// Set after a failed save, so the warning is printed once.
    save_failed: bool,
}

/// `None`: not configured, analytic tunings only.
static STATE: Mutex<Option<PlannerState>> = Mutex::new(None);

fn lock() -> std::sync::MutexGuard<'static, Option<PlannerState>> {
    // A panic while planning leaves only a plan map behind, still consistent.
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Turns planning on (or off) for this process. Returns why a wisdom file was not loaded, if
/// it was not: its plans are then kept in memory and the file is left as it is. A named file
/// whose directory does not exist is an error instead (nothing is configured): the command was
/// given a path it cannot write, and stridelab creates no directory it was not asked for.
pub fn configure_planner(choice: WisdomChoice) -> Result<Option<WisdomError>, WisdomError> {
    let machine = MachineKey::current(Geometry::get());
    let (path, creates_directory) = match choice {
        WisdomChoice::Off => {
            *lock() = None;
            return Ok(None);
        }
        WisdomChoice::Memory => (None, false),
        WisdomChoice::File(path) => {
            check_directory(&path)?;
            (Some(path), false)
        }
        WisdomChoice::DefaultFile(path) => (Some(path), true),
    };
    let (wisdom, problem) = match path {
        None => (Wisdom::empty(machine, None), None),
        Some(path) => match Wisdom::load(&path, machine.clone()) {
            Ok(wisdom) => (
                Wisdom {
                    creates_directory,
                    ..wisdom
                },
                None,
            ),
            Err(err) => (Wisdom::empty(machine, None), Some(err)),
        },
    };
    *lock() = Some(PlannerState {
        wisdom,
        reported: HashSet::new(),
        events: Vec::new(),
        save_failed: false,
    });
    Ok(problem)
}

/// A named wisdom file's directory must exist (`.` for a bare name).
fn check_directory(path: &Path) -> Result<(), WisdomError> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => return Ok(()),
    };
    if dir.is_dir() {
        return Ok(());
    }
    Err(WisdomError::MissingDirectory {
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
    })
}

/// The plans used since the last call (each class once), oldest first.
pub fn take_plan_events() -> Vec<PlanEvent> {
    let mut state = lock();
    match state.as_mut() {
        Some(state) => {
            state.reported.clear();
            std::mem::take(&mut state.events)
        }
        None => Vec::new(),
    }
}

/// The tuning for a copy of `bytes` destination bytes already known without timing: the
/// wisdom's, else the analytic one. What the simulator's replay uses, so it follows the plan
/// the timed copy chose in the same process.
pub(crate) fn known_tuning(plan: &Plan, offset: usize, threads: usize, bytes: usize) -> Tuning {
    let analytic = Tuning::for_geometry(bytes, threads, Geometry::get());
    if bytes < MIN_PLAN_BYTES {
        return analytic;
    }
    let class = class_of(plan, offset, threads);
    let state = lock();
    state
        .as_ref()
        .and_then(|s| s.wisdom.plans.get(&class))
        .map_or(analytic, |v| v.schedule.tuning)
}

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

/// The tuning for a validated 8-byte copy: the wisdom's when the class is known, a measured
/// one when the planner is on and the copy is large enough, else the analytic one.
pub(crate) fn tuning_for(
    plan: &Plan,
    offset: usize,
    threads: usize,
    bytes: usize,
    runner: &mut impl TrialRunner,
) -> Tuning {
    let analytic = Tuning::for_geometry(bytes, threads, Geometry::get());
    if bytes < MIN_PLAN_BYTES {
        return analytic;
    }
    let mut guard = lock();
    let Some(state) = guard.as_mut() else {
        return analytic;
    };
    let class = class_of(plan, offset, threads);
    if let Some(verdict) = state.wisdom.plans.get(&class) {
        let tuning = verdict.schedule.tuning;
        if state.reported.insert(class.clone()) {
            state.events.push(event(verdict, PlanSource::Wisdom));
        }
        return tuning;
    }
    let started = Instant::now();
    let Some(bands) = trial_bands(plan, offset, bytes) else {
        return analytic;
    };
    let candidates = candidates(plan, bytes, threads, Geometry::get());
    let (fastest, trials) = measure(&candidates, &bands, (bytes, started), runner);
    let winner = candidates
        .iter()
        .position(|(_, t)| *t == analytic)
        .filter(|&a| trials[fastest].median_ns as f64 > (1.0 - MARGIN) * trials[a].median_ns as f64)
        .unwrap_or(fastest);
    let verdict = Verdict {
        class: class.clone(),
        schedule: Schedule::new(candidates[winner].0, candidates[winner].1),
        planning_s: started.elapsed().as_secs_f64(),
        trial_bytes: bands.trial_bytes,
        trials,
    };
    let tuning = verdict.schedule.tuning;
    state.events.push(event(&verdict, PlanSource::Measured));
    state.reported.insert(class.clone());
    state.wisdom.plans.insert(class, verdict);
    if let Err(err) = state.wisdom.save()
        && !state.save_failed
    {
        state.save_failed = true;
        eprintln!("warning: the copy planner's wisdom is kept in memory only: {err}");
    }
    tuning
}

/// The tuning of a validated, non-empty copy: the planner's for 8-byte elements (measured on
/// these buffers the first time a class is seen, when planning is on), else the analytic one.
pub(super) fn planned_tuning<T: Copy + 'static>(
    src: &[T],
    plan: &Plan,
    offset: usize,
    dst: &mut [T],
    pool: Option<&rayon::ThreadPool>,
) -> Tuning {
    let threads = pool.map_or(1, |p| p.current_num_threads());
    let bytes = dst.len().saturating_mul(size_of::<T>());
    if !is_plain_eight_byte::<T>() {
        return Tuning::for_parallel_copy(bytes, threads);
    }
    let mut runner = EngineTrials { src, dst, pool };
    tuning_for(plan, offset, threads, bytes, &mut runner)
}

/// Runs the planner's trials: bands of the real copy, on its own buffers and pool.
struct EngineTrials<'a, T> {
    src: &'a [T],
    dst: &'a mut [T],
    pool: Option<&'a rayon::ThreadPool>,
}

impl<T: Copy + 'static> TrialRunner for EngineTrials<'_, T> {
    fn run(&mut self, band: &TrialBand, tuning: Tuning) {
        // A band is a part of the validated copy; checked again because the raw loops trust it.
        if band_fits(band, self.src.len(), self.dst.len()) {
            let dst = &mut self.dst[band.dst_offset..];
            copy_planned(
                self.src,
                &band.plan,
                band.src_offset,
                dst,
                tuning,
                self.pool,
            );
        } else {
            debug_assert!(false, "a trial band outside its copy: {band:?}");
        }
    }
}

fn event(verdict: &Verdict, source: PlanSource) -> PlanEvent {
    PlanEvent {
        class: describe(&verdict.class),
        schedule: verdict.schedule.clone(),
        source,
        planning_s: match source {
            PlanSource::Measured => verdict.planning_s,
            PlanSource::Wisdom => 0.0,
        },
        trial_bytes: verdict.trial_bytes,
        trials: verdict.trials.clone(),
    }
}

fn class_of(plan: &Plan, offset: usize, threads: usize) -> CopyClass {
    CopyClass {
        plan: plan.clone(),
        src_line_offset: offset % 8,
        threads: threads.max(1),
    }
}

/// A copy class in words, for records and messages.
pub(crate) fn describe(class: &CopyClass) -> String {
    let plan = &class.plan;
    let kernel = match plan.inner {
        Inner::Transpose {
            rows,
            cols,
            lds,
            ldd,
        } => format!("transpose {rows}×{cols}, lds {lds}, ldd {ldd}"),
        Inner::Run { len, src_stride } => format!("runs of {len}, source stride {src_stride}"),
    };
    let mut text = kernel;
    if plan.batch.len > 1 {
        text += &format!(", batch of {}", plan.batch.len);
    }
    if !plan.outer.is_empty() {
        let lens: Vec<String> = plan.outer.iter().map(|d| d.len.to_string()).collect();
        text += &format!(", outer loops {}", lens.join("×"));
    }
    let threads = class.threads;
    text += &format!(
        ", source line offset {}, {threads} thread{}",
        class.src_line_offset,
        if threads == 1 { "" } else { "s" }
    );
    text
}

/// The named candidate schedules for a copy, duplicates removed (first name kept).
pub(crate) fn candidates(
    plan: &Plan,
    bytes: usize,
    threads: usize,
    geometry: Geometry,
) -> Vec<(&'static str, Tuning)> {
    let assuming_llc = |llc_bytes: usize| {
        let assumed = Geometry {
            llc_bytes,
            ..geometry
        };
        Tuning::for_geometry(bytes, threads, assumed)
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
fn measure(
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
                median_ns: crate::stats::upper_median_of_sorted(t).unwrap_or(u64::MAX),
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
                    for (name, tuning) in candidates(&plan, bytes, threads, Geometry::get()) {
                        let mut dst = vec![-1.0; expected.len()];
                        super::super::copy_into_contiguous_tuned(
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
                // Only when no loop can be cut to a small band.
                prop_assert!(rows < 128 || bytes / rows * 64 > TRIAL_BYTES);
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
            let geometry = Geometry {
                l1d_bytes: 48 * kib,
                l2_bytes: l2,
                llc_bytes: llc,
            };
            for bytes in [1 << 20, 3 << 20, 8 << 20, 64 << 20, 1 << 30] {
                for threads in [1, 2] {
                    let plan = Plan::new(&[1024, 1024], &[1, 1024]);
                    let list = candidates(&plan, bytes, threads, geometry);
                    let analytic = Tuning::for_geometry(bytes, threads, geometry);
                    assert!(
                        list.iter().any(|(_, t)| *t == analytic),
                        "{bytes} B, {threads} threads, {geometry:?}"
                    );
                    assert!(list.len() <= 7);
                }
            }
        }
    }
}
