//! `stridelab report` (re-render a report from results files) and the main job run by
//! `stridelab` with no subcommand: measure the `quick` suite, then write `reports/<stamp>/`
//! and `reports/latest/`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::common::{CacheArgs, EXIT_INTERRUPTED, HistoryArgs, ModelArgs, WisdomArgs};
use crate::cli::text::history::history_text;
use crate::cli::text::model::probe_progress;
use crate::cli::text::table::wrap;
use crate::harness::history::{HistoryPlan, REPORTS_DIR, earlier_runs};
use crate::harness::run::plan::{RunRequest, geometry_and_manifest, geometry_lines, method_of};
use crate::harness::suite::PlanLimits;
use crate::harness::time_model::{annotate, obtain_model};
use crate::harness::{MethodOptions, Progress, RunOptions, Suite, run_suite};
use crate::kernels::CATALOGUE_RULES;
use crate::report::{
    Explanations, ReportError, ReportInput, copy_report, outdir, render_claimed, utc_stamp,
};
use crate::results::RunStatus;
use crate::results::precision_summary::PrecisionSummary;

/// How a main-job user samples longer (the main job's own flag, so the advice works as typed).
const SAMPLE_LONGER: &str = "`stridelab --sampling-budget 1`";

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A results file (`stridelab run` or a report's results.json); repeat to put machines
    /// side by side.
    #[arg(long = "in", value_name = "FILE", required = true)]
    pub inputs: Vec<PathBuf>,
    /// The report directory to write: a new or empty directory, or an earlier stridelab report
    /// (its `.stridelab-report.json` lists the files stridelab wrote; only those are replaced).
    /// A directory holding other files, or whose parent does not exist, is refused before
    /// anything is written. Default: reports/rendered.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// The catalogue's paragraph on every kernel, for the report's sections.
fn explanations() -> Explanations {
    crate::kernels::catalogue()
        .iter()
        .map(|spec| (spec.name.to_string(), spec.explanation.to_string()))
        .collect()
}

/// `stridelab report`.
pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let mut inputs = args
        .inputs
        .iter()
        .map(|p| ReportInput::read(p, &CATALOGUE_RULES, explanations()))
        .collect::<Result<Vec<_>, _>>()?;
    // A later run is compared with the first against the noise of the runs before it on its
    // machine: the other inputs and those kept under reports/.
    for input in inputs.iter_mut().skip(1) {
        let root = Path::new(REPORTS_DIR);
        let found = earlier_runs(root, &[], &args.inputs, &input.doc, &CATALOGUE_RULES);
        input.earlier = found.runs.into_iter().map(|(_, doc)| doc).collect();
        input.earlier_source = format!("{}/", root.display());
    }
    let claim = outdir::claim_out(args.out.as_deref())?;
    // Ctrl-C stops the rendering between figures; the staging directory is then removed.
    let stop = super::common::stop_flag()?;
    let rendered = match render_claimed(&inputs, &claim, &stop) {
        Err(ReportError::Interrupted) => {
            eprintln!(
                "interrupted: no report written; `{}` is as it was",
                claim.dir().display()
            );
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        other => other?,
    };
    note_omitted(&rendered.omitted);
    println!("{}", rendered.index.display());
    Ok(ExitCode::SUCCESS)
}

/// One line on the figures the data did not support (the page names each and why); a line per
/// figure buried the path of the report under a dozen notes for a small results file.
fn note_omitted(omitted: &[String]) {
    if !omitted.is_empty() {
        eprintln!(
            "note: {} figure(s) not drawn, as the results hold no data for them (the page says \
             which and why)",
            omitted.len()
        );
    }
}

/// A directory under `root` named by `stamp` that does not exist yet.
fn fresh_dir(root: &Path, stamp: &str) -> PathBuf {
    let mut dir = root.join(stamp);
    let mut n = 2;
    while dir.exists() {
        dir = root.join(format!("{stamp}-{n}"));
        n += 1;
    }
    dir
}

/// The main job: `stridelab` (or `cargo run --release`) with no subcommand.
/// Seconds the main job gives `stridelab infer`'s probes.
const MAIN_JOB_INFER_BUDGET_S: f64 = 30.0;

/// What the main job was asked on the command line.
pub struct MainJob<'a> {
    pub cache: &'a CacheArgs,
    pub wisdom: &'a WisdomArgs,
    pub model: &'a ModelArgs,
    pub history: &'a HistoryArgs,
    pub sampling_budget: Option<f64>,
}

pub fn main_job(job: &MainJob<'_>) -> anyhow::Result<ExitCode> {
    let MainJob { cache, wisdom, .. } = job;
    eprintln!(
        "stridelab: running the main job (the quick suite, then the report in \
         {REPORTS_DIR}/latest/); `stridelab --help` lists the subcommands"
    );
    // This machine's caches, detected once: the run's manifest and the inference both use it.
    let choice = cache.choice();
    let machine = choice.detect();
    let (geometry, manifest) = geometry_and_manifest(&choice, machine.clone())?;
    let suite = Suite::builtin("quick").context("the built-in quick suite is missing")?;
    let plan = suite.plan_on(None, PlanLimits::default(), &geometry.levels)?;
    let method = method_of(&RunRequest {
        sampling_budget: job.sampling_budget,
        target_ci: MethodOptions::default().target_relative_ci,
        ..RunRequest::default()
    })?;
    // `reports/latest` and the history (a named baseline) must be usable before anything is
    // measured.
    let root = Path::new(REPORTS_DIR);
    let latest_claim = outdir::claim_default(&root.join("latest"))?;
    let history = HistoryPlan::settle(root, &job.history.request(), None, &CATALOGUE_RULES)?;
    let geometry_lines = geometry_lines(&geometry);
    for line in &geometry_lines {
        eprintln!("{line}");
    }
    let options = RunOptions {
        method,
        manifest,
        ..RunOptions::on(geometry.levels.clone(), wisdom.planner(&machine)?)
    };
    let stop = super::common::stop_flag()?;
    let time_model = obtain_model(
        &job.model.choice(),
        &machine,
        false,
        &stop,
        &mut probe_progress(false),
    )?;
    for note in &time_model.notes {
        eprintln!("{note}");
    }
    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::with_draw_target(
            Some(plan.points.len() as u64),
            ProgressDrawTarget::stderr(),
        );
        bar.set_style(
            ProgressStyle::with_template(
                "quick suite {bar:30} {pos}/{len} [{elapsed} < {eta}] {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    } else {
        eprintln!("running the quick suite ({} points)…", plan.points.len());
        ProgressBar::hidden()
    };
    let mut on_progress = |event: Progress<'_>| match event {
        Progress::Started { label, .. } => bar.set_message(label.to_string()),
        Progress::Finished { .. } => bar.inc(1),
    };
    let mut doc = run_suite(&plan, &options, &stop, &mut on_progress)?;
    if let Some(model) = &time_model.model {
        annotate(
            &mut doc,
            model,
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        );
    }
    // The inferred-geometry section: timing alone, held against sysfs. A short budget keeps the
    // main job within its two minutes; `stridelab infer` with the default budget is steadier.
    let infer = if stop.load(Ordering::Relaxed) {
        None
    } else {
        bar.set_message(format!(
            "inferring the cache geometry from timing (≤ {MAIN_JOB_INFER_BUDGET_S} s)"
        ));
        match crate::infer::infer_geometry(MAIN_JOB_INFER_BUDGET_S, false, &machine) {
            Ok(report) => Some(report),
            Err(err) => {
                eprintln!("note: geometry inference skipped: {err:#}");
                None
            }
        }
    };
    bar.finish_and_clear();
    // How precise the timings are, in a few sentences whose advice works with this command; the
    // report's summary says the same and lists the points.
    let precision = PrecisionSummary::of(&doc).sentences(SAMPLE_LONGER);

    let (outcome, history_notes) = history.compare(&doc, &[], &CATALOGUE_RULES);
    let dir = fresh_dir(root, &utc_stamp(doc.started_unix_s, false));
    bar.set_message("rendering the report");
    let input = ReportInput {
        path: dir.join("results.json"),
        doc,
        infer,
        explanations: explanations(),
        earlier: Vec::new(),
        earlier_source: String::new(),
        against_earlier: outcome.as_ref().and_then(|o| o.as_ref().ok()).cloned(),
    };
    // The stop flag may already be set (Ctrl-C ended the measuring): the partial report is
    // still written, so the rendering itself is not cancellable here.
    let keep_going = std::sync::atomic::AtomicBool::new(false);
    let rendered = render_claimed(
        std::slice::from_ref(&input),
        &outdir::claim_default(&dir)?,
        &keep_going,
    )?;
    let latest = latest_claim.dir().to_path_buf();
    copy_report(&dir, &latest_claim)?;
    note_omitted(&rendered.omitted);
    let failed = input
        .doc
        .records
        .iter()
        .filter(|r| r.error.is_some())
        .count();
    if failed > 0 {
        eprintln!("warning: {failed} point(s) have no numbers (see the report's summary)");
    }
    eprintln!(
        "quick suite: {} points in {:.1} s; this report is also kept in {}",
        input.doc.records.len(),
        input.doc.wall_s,
        dir.display()
    );
    for sentence in &precision {
        eprintln!("{}", wrap(sentence, 100, "  ").trim_end());
    }
    eprint!("{}", history_text(outcome, &history_notes, true));
    if input.doc.status == RunStatus::Complete
        && let Some(line) = history.save(&input.doc)?
    {
        eprintln!("{line}");
    }
    for line in geometry_lines.iter().skip(1) {
        eprintln!("{line}");
    }
    println!("{}", latest.join("index.html").display());
    Ok(if input.doc.status == RunStatus::Interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}
