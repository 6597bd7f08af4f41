//! `stridelab why`: one point timed beside controlled variants, each changing one factor
//! ([`controls`]), in the same process and interleaved round by round (base, every variant,
//! base again), so a slow minute of a shared machine falls on all of them. Each control's
//! effect is its time per element over the base's per round, judged against how far the base
//! moved between its own two runs of the round ([`judge`]), and set beside the simulated
//! misses of both points: the verdict names the factors whose control moved time beyond that
//! noise, and whether the cache model predicted each.

mod beyond;
pub mod controls;
pub mod judge;
mod words;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::Serialize;
use stridelab_copy::Planner;
use thiserror::Error;

use crate::cache::geometry::{Geometry, GeometryChoice};
use crate::harness::run::plan::{PreparedRun, RunPlanError, RunRequest, prepare_run};
use crate::harness::run::session::HarnessError;
use crate::harness::{Progress, run_suite};
use crate::results::{PointRecord, SimulatedMisses};
use controls::{Control, Factor, NotRun, controls_for};
use judge::{LevelChange, ModelCall, Moved, median, model_call, noise_band};

/// Most rounds a `why` run takes (each round times every variant once and the base twice).
pub const MAX_ROUNDS: usize = 20;

/// What `why` is asked.
#[derive(Debug, Clone)]
pub struct WhyRequest {
    /// The kernel's name, then its `key=value` words: one point, no grid.
    pub kernel: Vec<String>,
    pub rounds: usize,
    /// Seconds of extra sampling each timing may spend (per variant per round).
    pub sampling_budget: f64,
    pub target_ci: f64,
    pub max_accesses: u64,
    pub geometry: GeometryChoice,
}

/// Why a `why` run cannot start or finish.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WhyError {
    #[error("--rounds {0}: must lie in 2..={MAX_ROUNDS} (two rounds at least tell noise apart)")]
    Rounds(usize),
    #[error("why times one point; {0} expands to {1} points (give one value per parameter)")]
    Grid(String, usize),
    #[error("the control `{change}`")]
    Control {
        change: String,
        #[source]
        source: RunPlanError,
    },
    #[error(transparent)]
    Plan(#[from] RunPlanError),
    #[error(transparent)]
    Harness(#[from] HarnessError),
    #[error("interrupted after {0} of {1} rounds")]
    Interrupted(usize, usize),
}

/// The base point and its variants, each validated like `run --kernel`.
pub struct WhyPlan {
    base: PreparedRun,
    controls: Vec<(Control, PreparedRun)>,
    not_run: Vec<NotRun>,
    rounds: usize,
    /// How the base point is written (`col-sum cols=1024 rows=1024`).
    pub label: String,
}

impl WhyPlan {
    /// Timings the run makes: each round the base twice and every variant once.
    pub fn timings(&self) -> usize {
        self.rounds * (self.controls.len() + 2)
    }
}

/// One control's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct ControlOutcome {
    #[serde(flatten)]
    pub control: Control,
    /// Variant ÷ base time per element, one per round.
    pub ratios: Vec<f64>,
    pub median: f64,
    /// The ratio that means "no effect": 1, or ½ for a second thread (twice the elements).
    pub expected: f64,
    pub moved: Moved,
    pub model: ModelCall,
    /// The outcome in a sentence, from the numbers above.
    pub sentence: String,
}

impl ControlOutcome {
    /// The model's call in a table cell's words.
    pub fn model_in_a_word(&self) -> &'static str {
        match (&self.model, self.moved) {
            (ModelCall::NotModelled { .. }, _) => "not modelled",
            (ModelCall::NoSimulation, _) => "no simulation",
            (ModelCall::Simulated { agrees: true, .. }, _) => "agrees",
            (ModelCall::Simulated { .. }, Moved::Unchanged) => "misses moved, time did not",
            (ModelCall::Simulated { .. }, Moved::Unclear) => "time unclear",
            (ModelCall::Simulated { .. }, _) => "does not explain",
        }
    }

    /// The time verdict in a table cell's words.
    pub fn moved_in_a_word(&self) -> &'static str {
        match self.moved {
            Moved::Faster => "faster",
            Moved::Slower => "slower",
            Moved::Unchanged => "within noise",
            Moved::Unclear => "unclear",
        }
    }
}

/// What `why` found.
#[derive(Debug, Clone, Serialize)]
pub struct WhyReport {
    pub point: String,
    pub rounds: usize,
    /// Median time per element of the base over its 2 × rounds timings, nanoseconds.
    pub base_ns_per_element: f64,
    /// The noise band: the largest relative change of the base between its two runs of a round.
    pub noise: f64,
    /// The machine's 1-minute load average when the rounds began (`/proc/loadavg`), if read:
    /// other work on the CPUs moves every timing, and a second thread's most.
    pub load_average: Option<f64>,
    pub controls: Vec<ControlOutcome>,
    pub not_run: Vec<NotRun>,
    /// The verdict: the factors that moved time beyond noise, and the model's part.
    pub verdict: Vec<String>,
}

/// Validates the base point and every variant before anything is timed.
pub fn plan_why(
    request: &WhyRequest,
    machine: Geometry,
    copies: Arc<Planner>,
    cpus: usize,
) -> Result<WhyPlan, WhyError> {
    if !(2..=MAX_ROUNDS).contains(&request.rounds) {
        return Err(WhyError::Rounds(request.rounds));
    }
    let run_request = |kernel: Vec<String>, threads: usize, huge_pages: bool| RunRequest {
        suite: None,
        kernel: Some(kernel),
        loop_nest: None,
        threads: Some(threads.to_string()),
        huge_pages,
        out: None,
        json: true,
        export_csv: None,
        target_ci: request.target_ci,
        sampling_budget: Some(request.sampling_budget),
        max_accesses: request.max_accesses,
        geometry: request.geometry.clone(),
    };
    let base = prepare_run(
        &run_request(request.kernel.clone(), 1, false),
        machine.clone(),
        Arc::clone(&copies),
    )?;
    let [point] = base.plan.points.as_slice() else {
        return Err(WhyError::Grid(
            request.kernel.join(" "),
            base.plan.points.len(),
        ));
    };
    let line = base
        .geometry
        .levels
        .first()
        .map_or(64, |level| u64::from(level.line));
    let (chosen, not_run) = controls_for(point.spec.name, &point.params, &point.args, line, cpus);
    let label = crate::harness::run::session::point_label(point);
    let mut controls = Vec::with_capacity(chosen.len());
    for control in chosen {
        let mut kernel = vec![point.spec.name.to_string()];
        kernel.extend(words_of(&control.words));
        let mut prepared = prepare_run(
            &run_request(kernel, control.threads, control.huge_pages),
            machine.clone(),
            Arc::clone(&copies),
        )
        .map_err(|source| WhyError::Control {
            change: control.change.clone(),
            source,
        })?;
        prepared.options.buffer_shift = control.shift;
        controls.push((control, prepared));
    }
    Ok(WhyPlan {
        base,
        controls,
        not_run,
        rounds: request.rounds,
        label,
    })
}

/// What the progress callback hears: a timing is about to start.
#[derive(Debug)]
pub struct WhyProgress<'a> {
    pub done: usize,
    pub total: usize,
    pub round: usize,
    pub what: &'a str,
}

/// Times one prepared point once; the first round also simulates it.
fn time_once(
    prepared: &PreparedRun,
    simulate: bool,
    stop: &AtomicBool,
) -> Result<Option<PointRecord>, WhyError> {
    let mut options = prepared.options.clone();
    options.simulate = simulate;
    let doc = run_suite(&prepared.plan, &options, stop, &mut |_: Progress<'_>| {})?;
    Ok(doc.records.into_iter().next())
}

fn ns_per_element(record: &Option<PointRecord>) -> Option<f64> {
    record
        .as_ref()
        .and_then(|r| r.timing.as_ref())
        .map(|t| t.ns_per_element)
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// Runs the plan: `rounds` rounds of base, variants, base.
pub fn run_why(
    plan: &WhyPlan,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(WhyProgress<'_>),
) -> Result<WhyReport, WhyError> {
    let load_average = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok());
    let total = plan.timings();
    let mut done = 0;
    let mut base_pairs = Vec::new();
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); plan.controls.len()];
    let mut simulated: Vec<Option<SimulatedMisses>> = vec![None; plan.controls.len() + 1];
    for round in 0..plan.rounds {
        let mut step = |what: &str, prepared: &PreparedRun| {
            if stop.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(WhyError::Interrupted(round, plan.rounds));
            }
            progress(WhyProgress {
                done,
                total,
                round,
                what,
            });
            done += 1;
            time_once(prepared, round == 0, stop)
        };
        let first = step("base", &plan.base)?;
        let mut times = Vec::with_capacity(plan.controls.len());
        for (control, prepared) in &plan.controls {
            times.push(step(&control.change, prepared)?);
        }
        let second = step("base again", &plan.base)?;
        if round == 0 {
            simulated[0] = first.as_ref().and_then(|r| r.simulated.clone());
            for (k, record) in times.iter().enumerate() {
                simulated[k + 1] = record.as_ref().and_then(|r| r.simulated.clone());
            }
        }
        let (Some(a), Some(b)) = (ns_per_element(&first), ns_per_element(&second)) else {
            continue;
        };
        base_pairs.push((a, b));
        for (k, record) in times.iter().enumerate() {
            if let Some(t) = ns_per_element(record) {
                ratios[k].push(t / ((a + b) / 2.0));
            }
        }
    }
    let beyond = plan
        .controls
        .iter()
        .map(|(control, _)| beyond_sets(plan, control))
        .collect();
    let mut report = assemble(plan, base_pairs, ratios, simulated, beyond);
    report.load_average = load_average;
    Ok(report)
}

/// `key=value` words, as a point is written on the command line.
fn words_of(pairs: &[(String, String)]) -> Vec<String> {
    pairs.iter().map(|(k, v)| format!("{k}={v}")).collect()
}

/// What the simulator's models beyond sets say of `control`: the TLB for the huge-pages
/// control, the prefetch model for a streams control; `None` for the others.
fn beyond_sets(plan: &WhyPlan, control: &Control) -> Option<Result<Vec<LevelChange>, String>> {
    if !matches!(control.factor, Factor::Tlb | Factor::MemoryParallelism) {
        return None;
    }
    let point = plan.base.plan.points.first()?;
    let words = words_of(&point.args);
    let inputs = beyond::SimInputs {
        kernel: point.spec.name,
        geometry: &plan.base.geometry,
        max_accesses: plan.base.options.simulation_access_cap,
        copies: Arc::clone(&plan.base.options.copies),
    };
    Some(match control.factor {
        Factor::Tlb => beyond::tlb_change(&inputs, &words),
        _ => beyond::prefetch_change(&inputs, &words, &words_of(&control.words)),
    })
}

fn assemble(
    plan: &WhyPlan,
    base_pairs: Vec<(f64, f64)>,
    ratios: Vec<Vec<f64>>,
    simulated: Vec<Option<SimulatedMisses>>,
    beyond: Vec<Option<Result<Vec<LevelChange>, String>>>,
) -> WhyReport {
    let band = noise_band(&base_pairs);
    let base_times: Vec<f64> = base_pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    let controls: Vec<ControlOutcome> = plan
        .controls
        .iter()
        .zip(ratios)
        .enumerate()
        .map(|(k, ((control, _), ratios))| {
            let expected = if control.factor == Factor::Bandwidth {
                0.5
            } else {
                1.0
            };
            let moved = judge::judge(&ratios, expected, band);
            let model = model_call(
                control.factor,
                moved,
                simulated[0].as_ref(),
                simulated[k + 1].as_ref(),
                beyond.get(k).cloned().flatten(),
            );
            let median = median(&ratios);
            let mut outcome = ControlOutcome {
                control: control.clone(),
                ratios,
                median,
                expected,
                moved,
                model,
                sentence: String::new(),
            };
            outcome.sentence = words::control_sentence(&outcome, band);
            outcome
        })
        .collect();
    let verdict = words::verdict(&controls, &plan.not_run, band);
    WhyReport {
        point: plan.label.clone(),
        rounds: plan.rounds,
        base_ns_per_element: median(&base_times),
        noise: band.exp() - 1.0,
        load_average: None,
        controls,
        not_run: plan.not_run.clone(),
        verdict,
    }
}
