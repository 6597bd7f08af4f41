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

use crate::cli::common::{CacheArgs, WisdomArgs};
use crate::harness::run::plan::{geometry_and_manifest, geometry_lines};
use crate::harness::suite::PlanLimits;
use crate::harness::{Progress, RunOptions, Suite, run_suite};
use crate::kernels::CATALOGUE_RULES;
use crate::report::{
    Explanations, ReportError, ReportInput, copy_report, outdir, render_claimed, utc_stamp,
};
use crate::results::RunStatus;

/// Exit code of a main job stopped by Ctrl-C, SIGTERM or SIGHUP (128 + SIGINT), after its
/// report was written.
const EXIT_INTERRUPTED: u8 = 130;

/// Where the main job writes its reports.
const REPORTS_DIR: &str = "reports";

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
    let inputs = args
        .inputs
        .iter()
        .map(|p| ReportInput::read(p, &CATALOGUE_RULES, explanations()))
        .collect::<Result<Vec<_>, _>>()?;
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

pub fn main_job(cache: &CacheArgs, wisdom: &WisdomArgs) -> anyhow::Result<ExitCode> {
    eprintln!(
        "stridelab: running the main job (the quick suite, then the report in \
         {REPORTS_DIR}/latest/); `stridelab --help` lists the subcommands"
    );
    let (geometry, manifest) = geometry_and_manifest(&cache.choice())?;
    let suite = Suite::builtin("quick").context("the built-in quick suite is missing")?;
    let plan = suite.plan_on(None, PlanLimits::default(), &geometry.levels)?;
    // `reports/latest` must accept a report before anything is measured.
    let root = Path::new(REPORTS_DIR);
    let latest_claim = outdir::claim_default(&root.join("latest"))?;
    let geometry_lines = geometry_lines(&geometry);
    for line in &geometry_lines {
        eprintln!("{line}");
    }
    let options = RunOptions {
        manifest,
        cache_levels: geometry.levels.clone(),
        ..RunOptions::default()
    };
    wisdom.configure()?;
    let stop = super::common::stop_flag()?;
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
    let doc = run_suite(&plan, &options, &stop, &mut on_progress)?;
    // The inferred-geometry section: timing alone, held against sysfs. A short budget keeps the
    // main job within its two minutes; `stridelab infer` with the default budget is steadier.
    let infer = if stop.load(Ordering::Relaxed) {
        None
    } else {
        bar.set_message(format!(
            "inferring the cache geometry from timing (≤ {MAIN_JOB_INFER_BUDGET_S} s)"
        ));
        match crate::infer::infer_geometry(MAIN_JOB_INFER_BUDGET_S, false) {
            Ok(report) => Some(report),
            Err(err) => {
                eprintln!("note: geometry inference skipped: {err:#}");
                None
            }
        }
    };
    bar.finish_and_clear();
    // Imprecise timings are named here as `run` names them; the report draws them regardless.
    for line in crate::cli::text::run_summary::precision_warnings(&doc) {
        eprintln!("{line}");
    }

    let dir = fresh_dir(root, &utc_stamp(doc.started_unix_s, false));
    bar.set_message("rendering the report");
    let input = ReportInput {
        path: dir.join("results.json"),
        doc,
        infer,
        explanations: explanations(),
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
