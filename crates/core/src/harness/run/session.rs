//! Runs a whole [`Plan`]: one record per point, a failing point as an error row, a stop request
//! (Ctrl-C) ending the run cleanly with the finished points kept and the document marked
//! `interrupted`. The library entry point the CLI, the report and the gate call.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use stridelab_copy::{PlanEvent, PlanSource, Planner};
use thiserror::Error;

use crate::cache::geometry::CacheLevel;
use crate::harness::catalogue_link::params_with_bytes;
use crate::harness::measure::pin::{PinError, PinnedPool};
use crate::harness::run::runner::{
    MethodOptions, PointKind, PointMeasurement, checksum_ok, measure_point,
};
use crate::harness::sim::predict::predict;
use crate::harness::sim::warm::simulate_from;
use crate::harness::suite::{Plan, PlannedPoint};
use crate::kernels::simulation_start;
use crate::kernels::spec::{BufferShift, Family, Instance, KernelError, PrepareOptions};
use crate::mem::anon_huge_pages_bytes;
use crate::results::schema::{CopyPlanRecord, CopyPlanTrial};
use crate::results::{
    ChecksumOutcome, ChecksumStatus, HugePageStatus, MachineManifest, MethodSettings, PointError,
    PointRecord, ResultsDocument, RunStatus, SCHEMA_VERSION, SuiteSummary, ToolInfo,
};

/// Everything a run needs besides the plan.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub method: MethodOptions,
    /// Upper bound on accesses fed to the cache model per point.
    pub simulation_access_cap: u64,
    /// Upper bound on the time the cache model may take per point.
    pub simulation_time_budget: Duration,
    /// Skip the cache model entirely (records get no `simulated` section).
    pub simulate: bool,
    /// The machine manifest to embed (`harness::machine::MachineInfo` as JSON).
    pub manifest: MachineManifest,
    /// The cache levels to simulate, innermost first.
    pub cache_levels: Vec<CacheLevel>,
    /// The copy engine's planner of this run: every copying kernel is prepared with it, and
    /// the plans it reports during a point go into that point's record (`copy_plans`).
    pub copies: Arc<Planner>,
    /// One buffer of every point started past its 2 MiB boundary (`why`'s alignment
    /// controls); none by default.
    pub buffer_shift: BufferShift,
}

impl RunOptions {
    /// The default method and simulation limits, simulating `cache_levels` and copying
    /// through `copies` (the caller's choices: the harness never detects the machine itself,
    /// the binary does, once).
    pub fn on(cache_levels: Vec<CacheLevel>, copies: Arc<Planner>) -> Self {
        Self {
            method: MethodOptions::default(),
            // As many accesses as a point's run may make (the plan refuses larger points), so
            // every point is simulated in full; the time budget is a safety net only.
            simulation_access_cap: crate::harness::suite::DEFAULT_MAX_ACCESSES_PER_RUN,
            simulation_time_budget: Duration::from_secs(30),
            simulate: true,
            manifest: serde_json::Value::Null,
            cache_levels,
            copies,
            buffer_shift: BufferShift::default(),
        }
    }
}

/// What the progress callback hears.
#[derive(Debug)]
pub enum Progress<'a> {
    /// Point `index` (0-based) of `total` is about to be measured.
    Started {
        index: usize,
        total: usize,
        label: &'a str,
    },
    /// Point `index` finished (possibly with an error row).
    Finished {
        index: usize,
        total: usize,
        record: &'a PointRecord,
    },
}

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum HarnessError {
    #[error(transparent)]
    Pin(#[from] PinError),
}

/// `kernel key=value ... · N threads`: how a point is named in progress output (in words: `×`
/// reads as a ratio in the table below it).
pub fn point_label(point: &PlannedPoint) -> String {
    format!(
        "{} {} · {}",
        point.spec.name,
        params_with_bytes(point.spec.name, &point.params),
        threads_phrase(point.threads)
    )
}

/// `1 thread`, `2 threads`.
pub fn threads_phrase(threads: usize) -> String {
    if threads == 1 {
        "1 thread".into()
    } else {
        format!("{threads} threads")
    }
}

/// What a family's figure is: bandwidth kernels are normalised by the same-run copy/read
/// reference; probes, strides, views and chases are reported per access.
pub fn point_kind(family: Family) -> PointKind {
    match family {
        Family::Traverse | Family::Transpose | Family::Blocked => PointKind::Bandwidth,
        Family::Tensor => PointKind::Bandwidth,
        Family::Reference => PointKind::Reference,
        // Every family is named, so a new one must choose its figure here.
        Family::Stride | Family::Conflict | Family::View | Family::Latency | Family::Matmul => {
            PointKind::Latency
        }
        // A nest's accesses are its elements: time per access, whatever it reads or writes.
        Family::Loop => PointKind::Latency,
    }
}

fn method_settings(options: &RunOptions) -> MethodSettings {
    let m = &options.method;
    MethodSettings {
        warmup_ms: m.warmup.as_secs_f64() * 1e3,
        min_sample_ms: m.min_sample.as_secs_f64() * 1e3,
        samples: m.samples,
        bootstrap_resamples: m.bootstrap.resamples,
        bootstrap_seed: m.bootstrap.seed,
        confidence: m.bootstrap.confidence,
        huge_pages_requested: m.huge_pages,
        simulation_access_cap: options.simulation_access_cap,
    }
}

/// Measures every point of `plan` in order. `stop` is polled between samples and points;
/// `progress` hears about every point.
pub fn run_suite(
    plan: &Plan,
    options: &RunOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<ResultsDocument, HarnessError> {
    let started = Instant::now();
    let started_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut pools: BTreeMap<usize, PinnedPool> = BTreeMap::new();
    let mut records = Vec::with_capacity(plan.points.len());
    let total = plan.points.len();
    let mut status = RunStatus::Complete;
    for (index, point) in plan.points.iter().enumerate() {
        if stop.load(Ordering::SeqCst) {
            status = RunStatus::Interrupted;
            break;
        }
        let label = point_label(point);
        progress(Progress::Started {
            index,
            total,
            label: &label,
        });
        let pool = match pools.entry(point.threads) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(PinnedPool::new(point.threads)?)
            }
        };
        match measure_one(index, point, pool, options, stop) {
            Some(record) => {
                progress(Progress::Finished {
                    index,
                    total,
                    record: &record,
                });
                records.push(record);
            }
            None => {
                status = RunStatus::Interrupted;
                break;
            }
        }
    }
    Ok(ResultsDocument {
        schema: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "stridelab".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        started_unix_s,
        wall_s: started.elapsed().as_secs_f64(),
        status,
        info: options.manifest.clone(),
        suite: SuiteSummary {
            name: plan.name.clone(),
            source: plan.source.clone(),
            description: plan.description.clone(),
            points: total,
        },
        method: method_settings(options),
        records,
        time_model_probes: None,
    })
}

/// Measures and simulates one point; `None` when a stop request interrupted it.
fn measure_one(
    index: usize,
    point: &PlannedPoint,
    pool: &PinnedPool,
    options: &RunOptions,
    stop: &AtomicBool,
) -> Option<PointRecord> {
    let spec = point.spec;
    // Plans reported from here on are this point's.
    drop(options.copies.take_events());
    let prepare_options = PrepareOptions {
        huge_pages: options.method.huge_pages,
        simulate_only: false,
        copies: Arc::clone(&options.copies),
        shift: options.buffer_shift,
    };
    let prepare = || -> Result<Box<dyn Instance>, KernelError> {
        (spec.prepare)(&point.params, &prepare_options)
    };
    let measured = if point.timed() {
        measure_point(
            pool,
            &prepare,
            point_kind(spec.family),
            &options.method,
            stop,
        )
    } else {
        checked_untimed(&prepare)
    };
    if measured.interrupted {
        return None;
    }
    let huge_pages = options
        .method
        .huge_pages
        .then(|| match anon_huge_pages_bytes() {
            Ok(bytes) => HugePageStatus {
                requested: true,
                anon_huge_bytes: Some(bytes),
                note: Some("process-wide AnonHugePages after the point ran".into()),
            },
            Err(note) => HugePageStatus {
                requested: true,
                anon_huge_bytes: None,
                note: Some(note.to_string()),
            },
        });
    let mut error = measured.error;
    let levels = point.levels.as_deref().unwrap_or(&options.cache_levels);
    let simulated = match (options.simulate, measured.instance) {
        (true, Some(mut instance)) if measured.checksum.status == ChecksumOutcome::Ok => {
            match simulate_from(
                simulation_start(spec),
                instance.as_mut(),
                levels,
                options.simulation_access_cap,
                options.simulation_time_budget,
                point.threads,
            ) {
                Ok(s) => Some(s),
                Err(sim_error) => {
                    error.get_or_insert(PointError {
                        stage: "simulate".into(),
                        message: sim_error.to_string(),
                    });
                    None
                }
            }
        }
        _ => None,
    };
    Some(PointRecord {
        index,
        kernel: spec.name.to_string(),
        family: spec.family,
        params: point.params.clone(),
        threads: point.threads,
        pinning: pool.pinning().clone(),
        work: measured.work,
        huge_pages,
        checksum: ChecksumStatus {
            ..measured.checksum
        },
        timing: measured.timing,
        counters: measured.counters,
        simulated,
        reference: measured.reference,
        error,
        model: Some(predict(spec, &point.params, levels)),
        sweep: point.sweep.clone(),
        copy_plans: options
            .copies
            .take_events()
            .into_iter()
            .map(plan_record)
            .collect(),
        time_model: None,
    })
}

/// A copy plan as the results document records it.
fn plan_record(event: PlanEvent) -> CopyPlanRecord {
    CopyPlanRecord {
        class: event.class,
        schedule: event.schedule.name,
        source: match event.source {
            PlanSource::Measured => "measured",
            PlanSource::Wisdom => "wisdom",
        }
        .into(),
        planning_s: event.planning_s,
        trial_bytes: event.trial_bytes as u64,
        trials: event
            .trials
            .into_iter()
            .map(|t| CopyPlanTrial {
                schedule: t.schedule,
                median_ns: t.median_ns,
                runs: t.runs,
            })
            .collect(),
    }
}

/// A simulated-only point: one instance, one run with its checksum verified (so the stream
/// the model sees is a correct kernel's), no timing and no counters.
fn checked_untimed(
    prepare: &dyn Fn() -> Result<Box<dyn Instance>, KernelError>,
) -> PointMeasurement {
    let mut measured = PointMeasurement {
        work: None,
        checksum: ChecksumStatus {
            status: ChecksumOutcome::NotRun,
            expected: None,
            actual: None,
            runs_checked: 0,
        },
        timing: None,
        counters: None,
        reference: None,
        error: None,
        instance: None,
        interrupted: false,
    };
    let mut instance = match prepare() {
        Ok(instance) => instance,
        Err(e) => {
            measured.error = Some(PointError {
                stage: "prepare".into(),
                message: e.to_string(),
            });
            return measured;
        }
    };
    let expected = instance.expected_checksum();
    let actual = instance.run();
    let ok = checksum_ok(actual, expected);
    measured.work = Some(instance.work());
    measured.checksum = ChecksumStatus {
        status: if ok {
            ChecksumOutcome::Ok
        } else {
            ChecksumOutcome::Mismatch
        },
        expected: Some(expected),
        actual: Some(actual),
        runs_checked: 1,
    };
    if !ok {
        measured.error = Some(PointError {
            stage: "checksum".into(),
            message: format!("checksum {actual} where {expected} was expected"),
        });
    }
    measured.instance = Some(instance);
    measured
}
