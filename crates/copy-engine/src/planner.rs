//! The planner: the value that picks every copy's schedule. Built analytic
//! ([`Planner::analytic`]), it derives each schedule from the cache sizes it was given. Built
//! with wisdom ([`Planner::new`]), the first copy of a class it has no wisdom for times a
//! bounded set of candidate schedules on that copy's own buffers and keeps the fastest.
//!
//! The analytic tuning ([`Tuning::for_caches`]) guesses from cache sizes, and a guess walks
//! into cliffs where the sizes mislead (a hypervisor's L3, a destination that fits an LLC the
//! sizes do not show). Measuring the candidates on the machine at hand, as FFTW's planner
//! does, replaces the guess with the winner; the analytic tuning is always one candidate.
//!
//! - Which: the candidate families are the analytic tuning evaluated as if the destination
//!   fitted in L1's reach (staged, regular stores), fitted the LLC (streamed tiles) or not
//!   (a walk with a near prefetch), plus a staged schedule with streaming stores, shorter and
//!   taller tiles and a farther prefetch. Run copies (no transpose) only choose the store kind.
//! - Where: copies up to `TRIAL_BYTES` (4 MiB) are timed whole; larger ones on bands of one
//!   loop (outermost loop, transpose rows, or batch) of about that size, rotating over up to 4
//!   disjoint bands so each trial reads memory the previous ones left cold (`trials.rs`).
//! - How long: one untimed pass over the bands (so no candidate pays for the destination's
//!   first touch), then candidates interleaved in rotated order, at least 3 rounds, and more
//!   while the whole planning stays within its budget (50 ms, or 10% of one whole copy when
//!   that is longer); the winner has the lowest median, unless the analytic schedule is
//!   within [`MARGIN`] of it (then the analytic one stays).
//!
//! Nothing is planned unless the caller asks for wisdom: an analytic planner's results and
//! speed do not depend on a file it was never told about. A planner's wisdom and the plans it
//! reports live in the value itself (behind a lock, so threads copying with one planner share
//! it); two planners share nothing.

#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use crate::loops::copy_planned;
use crate::plan::{CacheSizes, Inner, KernelSet, Plan, Tuning};
use crate::trials::{TrialBand, TrialRunner, band_fits, candidates, measure, trial_bands};
use crate::wisdom::{
    CopyClass, Machine, MachineKey, Schedule, Trial, Verdict, Wisdom, WisdomError,
};

/// Below this many destination bytes the analytic tuning stands: the copy fits L2, where the
/// candidates differ by less than planning them costs.
const MIN_PLAN_BYTES: usize = 1 << 20;
/// A challenger replaces the analytic schedule only when its median is this much faster:
/// between near-equal candidates the fastest median of a few noisy trials is chance, and a
/// chance winner cost up to 5% at some sizes in the same-run sweep (docs/copy-engine.md).
const MARGIN: f64 = 0.03;

/// Where a planner keeps what it learns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WisdomChoice {
    /// No planning: every copy takes the analytic tuning (reproducible plans, e.g. for a gate
    /// that compares simulated misses between builds).
    Off,
    /// Plan, and keep the plans in the planner only.
    Memory,
    /// Plan, and keep the plans in this file (read now, rewritten after each new plan). The
    /// user named it, so its directory must exist.
    File(PathBuf),
    /// [`WisdomChoice::File`] at the application's default location, whose missing
    /// directories are created on the first save.
    DefaultFile(PathBuf),
}

/// How a copy's schedule was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanSource {
    /// Timed by this planner.
    Measured,
    /// Taken from the wisdom (a file, or an earlier copy with this planner).
    Wisdom,
}

/// One copy class's plan as used since the last [`Planner::take_events`].
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

/// What a planner with wisdom has learnt and not yet reported.
#[derive(Debug)]
struct PlannerState {
    wisdom: Wisdom,
    /// Classes already reported since the last drain.
    reported: HashSet<CopyClass>,
    events: Vec<PlanEvent>,
    /// Set after a failed save, so the warning is printed once.
    save_failed: bool,
}

/// Picks each copy's schedule: from its cache sizes, or measured and kept as wisdom. Pass it
/// to every copy ([`crate::copy_into_contiguous`]); it is `Sync`, so the threads of one run
/// may share it.
#[derive(Debug)]
pub struct Planner {
    caches: CacheSizes,
    /// The best micro-kernels any of its schedules may use ([`Planner::with_kernels`]).
    kernels: KernelSet,
    choice: WisdomChoice,
    /// Why the wisdom file was not loaded, if it was not.
    problem: Option<WisdomError>,
    /// `None` for an analytic planner.
    state: Option<Mutex<PlannerState>>,
}

impl Planner {
    /// A planner that plans nothing: every copy takes the analytic tuning for `caches`
    /// ([`WisdomChoice::Off`]).
    pub fn analytic(caches: CacheSizes) -> Planner {
        Planner {
            caches,
            kernels: KernelSet::Best,
            choice: WisdomChoice::Off,
            problem: None,
            state: None,
        }
    }

    /// A planner for `machine` keeping its wisdom as `choice` says. A wisdom file that cannot
    /// be used (corrupt, foreign, of another version) is not an error: its plans are then kept
    /// in memory, the file is left as it is, and [`Planner::wisdom_problem`] says why. A named
    /// file whose directory does not exist is an error: the caller was given a path it cannot
    /// write, and the engine creates no directory it was not asked for.
    pub fn new(machine: Machine, choice: WisdomChoice) -> Result<Planner, WisdomError> {
        let caches = machine.caches;
        let key = MachineKey::of(&machine);
        let (path, creates_directory) = match &choice {
            WisdomChoice::Off => return Ok(Planner::analytic(caches)),
            WisdomChoice::Memory => (None, false),
            WisdomChoice::File(path) => {
                check_directory(path)?;
                (Some(path), false)
            }
            WisdomChoice::DefaultFile(path) => (Some(path), true),
        };
        let (wisdom, problem) = match path {
            None => (Wisdom::empty(key, None), None),
            Some(path) => match Wisdom::load(path, key.clone()) {
                Ok(wisdom) => (
                    Wisdom {
                        creates_directory,
                        ..wisdom
                    },
                    None,
                ),
                Err(err) => (Wisdom::empty(key, None), Some(err)),
            },
        };
        let state = PlannerState {
            wisdom,
            reported: HashSet::new(),
            events: Vec::new(),
            save_failed: false,
        };
        Ok(Planner {
            caches,
            kernels: KernelSet::Best,
            choice,
            problem,
            state: Some(Mutex::new(state)),
        })
    }

    /// This planner with every schedule it gives (analytic, candidate, measured or from
    /// wisdom) capped at the micro-kernels `kernels`: on an AVX-512 machine,
    /// `KernelSet::Avx2` makes the whole engine the one an AVX2-only CPU runs. A capped
    /// planner keeps its plans in memory only and reads no file: a wisdom file's plans were
    /// timed on the best kernels and record none. Public (hidden) for benchmarks and tests.
    #[doc(hidden)]
    pub fn with_kernels(self, kernels: KernelSet) -> Planner {
        let state = self.state.map(|state| {
            let mut state = state.into_inner().unwrap_or_else(|p| p.into_inner());
            if kernels != KernelSet::Best {
                state.wisdom = Wisdom::empty(state.wisdom.machine.clone(), None);
            }
            Mutex::new(state)
        });
        Planner {
            kernels,
            state,
            ..self
        }
    }

    /// The micro-kernels this planner's schedules may use.
    #[doc(hidden)]
    pub fn kernels(&self) -> KernelSet {
        self.kernels
    }

    /// The analytic tuning for a copy of `bytes` on `threads` threads, with this planner's
    /// kernels.
    fn analytic_tuning(&self, bytes: usize, threads: usize) -> Tuning {
        Tuning {
            kernels: self.kernels,
            ..Tuning::for_caches(bytes, threads, self.caches)
        }
    }

    /// The cache sizes this planner plans for.
    pub fn caches(&self) -> CacheSizes {
        self.caches
    }

    /// Where this planner was asked to keep its wisdom.
    pub fn choice(&self) -> &WisdomChoice {
        &self.choice
    }

    /// The file new plans are saved to: `None` for an analytic or in-memory planner, and for
    /// one whose file could not be used ([`Planner::wisdom_problem`]).
    pub fn wisdom_file(&self) -> Option<PathBuf> {
        self.lock().and_then(|state| state.wisdom.file.clone())
    }

    /// Why the wisdom file was not loaded (its plans are then kept in memory only).
    pub fn wisdom_problem(&self) -> Option<&WisdomError> {
        self.problem.as_ref()
    }

    /// The plans used since the last call (each class once), oldest first; none for an
    /// analytic planner.
    pub fn take_events(&self) -> Vec<PlanEvent> {
        match self.lock() {
            Some(mut state) => {
                state.reported.clear();
                std::mem::take(&mut state.events)
            }
            None => Vec::new(),
        }
    }

    /// The state of a planner with wisdom, locked.
    fn lock(&self) -> Option<MutexGuard<'_, PlannerState>> {
        // A panic while planning leaves only a plan map behind, still consistent.
        self.state.as_ref().map(|state| {
            state
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        })
    }

    /// The tuning for a copy of `bytes` destination bytes already known without timing: the
    /// wisdom's, else the analytic one. What the replay uses, so it follows the plan the timed
    /// copy chose with the same planner.
    pub(crate) fn known_tuning(
        &self,
        plan: &Plan,
        offset: usize,
        threads: usize,
        bytes: usize,
    ) -> Tuning {
        let analytic = self.analytic_tuning(bytes, threads);
        if bytes < MIN_PLAN_BYTES {
            return analytic;
        }
        let class = class_of(plan, offset, threads);
        self.lock()
            .and_then(|state| state.wisdom.plans.get(&class).map(|v| v.schedule.tuning))
            .map_or(analytic, |tuning| Tuning {
                kernels: self.kernels,
                ..tuning
            })
    }

    /// The tuning of a validated, non-empty copy: the planner's for 8-byte elements (measured
    /// on these buffers the first time a class is seen, when planning is on), else the
    /// analytic one.
    pub(crate) fn planned_tuning<T: Copy + 'static>(
        &self,
        src: &[T],
        plan: &Plan,
        offset: usize,
        dst: &mut [T],
        pool: Option<&rayon::ThreadPool>,
    ) -> Tuning {
        let threads = pool.map_or(1, |p| p.current_num_threads());
        let bytes = dst.len().saturating_mul(size_of::<T>());
        if !crate::is_plain_eight_byte::<T>() {
            return self.analytic_tuning(bytes, threads);
        }
        let mut runner = EngineTrials { src, dst, pool };
        self.tuning_for(plan, offset, threads, bytes, &mut runner)
    }

    /// The tuning for a validated 8-byte copy: the wisdom's when the class is known, a
    /// measured one when the planner has wisdom and the copy is large enough, else the
    /// analytic one.
    pub(crate) fn tuning_for(
        &self,
        plan: &Plan,
        offset: usize,
        threads: usize,
        bytes: usize,
        runner: &mut impl TrialRunner,
    ) -> Tuning {
        let analytic = self.analytic_tuning(bytes, threads);
        if bytes < MIN_PLAN_BYTES {
            return analytic;
        }
        // Held while planning: a second thread copying the same class waits for the plan.
        let Some(mut guard) = self.lock() else {
            return analytic;
        };
        let state = &mut *guard;
        let class = class_of(plan, offset, threads);
        if let Some(verdict) = state.wisdom.plans.get(&class) {
            let tuning = Tuning {
                kernels: self.kernels,
                ..verdict.schedule.tuning
            };
            if state.reported.insert(class.clone()) {
                state.events.push(event(verdict, PlanSource::Wisdom));
            }
            return tuning;
        }
        let started = Instant::now();
        let Some(bands) = trial_bands(plan, offset, bytes) else {
            return analytic;
        };
        let candidates: Vec<(&'static str, Tuning)> = candidates(plan, bytes, threads, self.caches)
            .into_iter()
            .map(|(name, tuning)| {
                let kernels = self.kernels;
                (name, Tuning { kernels, ..tuning })
            })
            .collect();
        let (fastest, trials) = measure(&candidates, &bands, (bytes, started), runner);
        let winner = candidates
            .iter()
            .position(|(_, t)| *t == analytic)
            .filter(|&a| {
                trials[fastest].median_ns as f64 > (1.0 - MARGIN) * trials[a].median_ns as f64
            })
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
fn describe(class: &CopyClass) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TEST_CACHES, copy_into_contiguous};

    fn machine(cpu_model: &str) -> Machine {
        Machine {
            cpu_model: cpu_model.into(),
            caches: TEST_CACHES,
        }
    }

    /// A 512×512 transpose (2 MiB, large enough to be planned) with `planner`; the copy is
    /// checked, so a plan that broke it would fail here too.
    fn transpose_512(planner: &Planner) {
        let n = 512;
        let src: Vec<f64> = (0..n * n).map(|i| i as f64).collect();
        let mut dst = vec![0.0; n * n];
        copy_into_contiguous(planner, &src, &[n, n], &[1, n as isize], 0, &mut dst).unwrap();
        assert_eq!((dst[1], dst[n]), (n as f64, 1.0));
    }

    fn sources(events: &[PlanEvent]) -> Vec<PlanSource> {
        events.iter().map(|e| e.source).collect()
    }

    #[test]
    fn each_planner_keeps_its_own_plans_and_events() {
        let first = Planner::new(machine("Test CPU"), WisdomChoice::Memory).unwrap();
        let second = Planner::new(machine("Test CPU"), WisdomChoice::Memory).unwrap();
        let analytic = Planner::analytic(TEST_CACHES);
        transpose_512(&first);
        transpose_512(&first);
        transpose_512(&second);
        transpose_512(&analytic);
        // The second copy of a class is not reported again before the drain.
        let events = first.take_events();
        assert_eq!(sources(&events), [PlanSource::Measured]);
        assert_eq!(
            events[0].class,
            "transpose 512×512, lds 512, ldd 512, source line offset 0, 1 thread"
        );
        // The other planner measured for itself: it knew nothing of the first one's plan.
        assert_eq!(sources(&second.take_events()), [PlanSource::Measured]);
        assert!(analytic.take_events().is_empty());
        // After a drain, the known class is reported again, from the wisdom.
        transpose_512(&first);
        assert_eq!(sources(&first.take_events()), [PlanSource::Wisdom]);
        assert!(first.take_events().is_empty());
    }

    #[test]
    fn a_wisdom_file_carries_plans_to_the_next_planner() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wisdom.json");
        let choice = WisdomChoice::File(path.clone());
        let writer = Planner::new(machine("Test CPU"), choice.clone()).unwrap();
        assert_eq!(writer.choice(), &choice);
        assert_eq!(writer.wisdom_file(), Some(path.clone()));
        transpose_512(&writer);
        assert_eq!(sources(&writer.take_events()), [PlanSource::Measured]);
        let reader = Planner::new(machine("Test CPU"), choice.clone()).unwrap();
        assert!(reader.wisdom_problem().is_none());
        transpose_512(&reader);
        let events = reader.take_events();
        assert_eq!(sources(&events), [PlanSource::Wisdom]);
        assert_eq!(events[0].planning_s, 0.0);
        // Another machine's planner leaves the file alone and keeps its plans in memory.
        let foreign = Planner::new(machine("Other CPU"), choice).unwrap();
        assert!(matches!(
            foreign.wisdom_problem(),
            Some(WisdomError::Foreign { .. })
        ));
        assert_eq!(foreign.wisdom_file(), None);
    }

    /// Records the tunings a planner's trials ran.
    struct Recording(Vec<Tuning>);

    impl TrialRunner for Recording {
        fn run(&mut self, _band: &TrialBand, tuning: Tuning) {
            self.0.push(tuning);
        }
    }

    #[test]
    fn a_capped_planner_gives_no_schedule_wider_kernels() {
        use crate::simd::Isa;
        for kernels in [KernelSet::Avx2, KernelSet::Portable] {
            let planner = Planner::new(machine("Test CPU"), WisdomChoice::Memory)
                .unwrap()
                .with_kernels(kernels);
            assert_eq!(planner.kernels(), kernels);
            // Below the planning size (analytic), planned whole, planned on bands; square and
            // 4097-like odd sizes; one and two threads.
            for n in [64usize, 512, 1024, 4097] {
                let plan = Plan::new(&[n, n], &[1, n as isize]);
                for threads in [1, 2] {
                    let bytes = n * n * 8;
                    let mut trials = Recording(Vec::new());
                    let chosen = planner.tuning_for(&plan, 0, threads, bytes, &mut trials);
                    assert_eq!(trials.0.is_empty(), bytes < MIN_PLAN_BYTES, "{n}");
                    let known = planner.known_tuning(&plan, 0, threads, bytes);
                    for tuning in trials.0.iter().chain([&chosen, &known]) {
                        assert_eq!(tuning.kernels, kernels, "{n} on {threads}");
                        assert_ne!(Isa::detect().limited_to(tuning.kernels), Isa::Avx512);
                    }
                    // A second copy of the class takes the plan from the wisdom, still capped.
                    let again = planner.tuning_for(&plan, 0, threads, bytes, &mut trials);
                    assert_eq!(again, chosen);
                }
            }
        }
    }

    #[test]
    fn a_capped_planner_neither_reads_nor_writes_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wisdom.json");
        let choice = WisdomChoice::File(path.clone());
        let writer = Planner::new(machine("Test CPU"), choice.clone()).unwrap();
        transpose_512(&writer);
        assert!(path.exists());
        let written = std::fs::read(&path).unwrap();
        let capped = Planner::new(machine("Test CPU"), choice)
            .unwrap()
            .with_kernels(KernelSet::Avx2);
        assert_eq!(capped.wisdom_file(), None);
        let n = 1024;
        let src: Vec<f64> = (0..n * n).map(|i| i as f64).collect();
        let mut dst = vec![0.0; n * n];
        copy_into_contiguous(&capped, &src, &[n, n], &[1, n as isize], 0, &mut dst).unwrap();
        transpose_512(&capped);
        // Both classes measured afresh (the file's 512² plan was timed on other kernels).
        assert_eq!(
            sources(&capped.take_events()),
            [PlanSource::Measured, PlanSource::Measured]
        );
        assert_eq!(std::fs::read(&path).unwrap(), written);
    }

    #[test]
    fn a_named_file_in_a_missing_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("wisdom.json");
        let refused = Planner::new(machine("Test CPU"), WisdomChoice::File(path));
        assert!(matches!(refused, Err(WisdomError::MissingDirectory { .. })));
        let off = Planner::new(machine("Test CPU"), WisdomChoice::Off).unwrap();
        assert_eq!(
            (off.choice(), off.wisdom_file()),
            (&WisdomChoice::Off, None)
        );
        assert_eq!(off.caches(), TEST_CACHES);
    }
}
