//! `stridelab run`: measure a suite (or one kernel's grid) on this machine and write the
//! versioned results document (plus a CSV beside it). The plan, outputs and summary are
//! `harness::run::plan`'s and `cli::text::run_summary`'s.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::cli::common::{
    CacheArgs, EXIT_INTERRUPTED, HistoryArgs, ListArgs, ModelArgs, WisdomArgs, kernel_name_parser,
};
use crate::cli::text::history::history_text;
use crate::cli::text::model::probe_progress;
use crate::cli::text::progress::RunProgress;
use crate::cli::text::run_summary::{problems, run_summary};
use crate::harness::history::{HistoryPlan, REPORTS_DIR};
use crate::harness::run::plan::{
    RunRequest, geometry_lines, prepare_run, results_line, write_results,
};
use crate::harness::run_suite;
use crate::harness::suite::DEFAULT_MAX_ACCESSES_PER_RUN;
use crate::harness::time_model::{annotate, obtain_model};
use crate::kernels::CATALOGUE_RULES;
use crate::results::RunStatus;
use crate::results::output::FileTarget;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Suite to run: quick (default), full, gate, loops (example loop nests), or a TOML file.
    #[arg(long, conflicts_with_all = ["kernel", "loop_text"])]
    pub suite: Option<String>,
    /// Time your own loop nest instead (the language of `sim --loop`, docs/loops.md), with the
    /// misses of the same stream simulated; with --array. The same point as `--kernel loop
    /// nest=TEXT arrays='DECL; DECL'`, recorded like any run.
    #[arg(long = "loop", value_name = "TEXT", conflicts_with_all = ["kernel", "list"])]
    pub loop_text: Option<String>,
    /// An array of --loop, as for `sim --loop` (repeatable).
    #[arg(long = "array", value_name = "DECL", requires = "loop_text")]
    pub arrays: Vec<String>,
    /// One kernel instead of a suite: NAME then key=value pairs; `key=a,b,c` is a grid.
    #[arg(
        long,
        num_args = 1..,
        value_name = "NAME [key=value]...",
        value_parser = kernel_name_parser(),
        hide_possible_values = true
    )]
    pub kernel: Option<Vec<String>>,
    /// Thread counts for every point, e.g. `1,2` or `all` (= 1..available CPUs).
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,
    /// Ask for transparent huge pages on every buffer (whether they were granted is recorded).
    #[arg(long)]
    pub huge_pages: bool,
    /// Where to write the results document (`-`: stdout; default: a new file under
    /// reports/runs/). Checked before anything is measured.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write the records as a CSV table to FILE (`-`: stdout). Checked before anything is
    /// measured.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Print the results document to stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress bar (for CI).
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub list: ListArgs,
    /// The geometry the points' misses are simulated on (recorded in the results' manifest).
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(flatten)]
    pub wisdom: WisdomArgs,
    /// The time model every timed point's time is set beside (measured ÷ model).
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub history: HistoryArgs,
    /// Keep sampling a point until the 95% CI of its median is at most this wide, relative to
    /// the median (within the sampling budget).
    #[arg(long, value_name = "PCT", default_value = "2%", value_parser = super::common::parse_fraction)]
    pub target_ci: f64,
    /// Seconds of extra sampling a point may take to reach --target-ci. Default: 10 with
    /// --kernel (one point, so precision is cheap; sampling stops once the CI is reached); for
    /// a suite 0.15 and never more than its minimum samples took (the quick suite must stay
    /// under a minute).
    #[arg(long, value_name = "SECONDS")]
    pub sampling_budget: Option<f64>,
    /// Most loads and stores one run of a point may make (estimated from its parameters before
    /// anything runs; N takes K/M/G); a larger point is refused. Runs this short let Ctrl-C stop a point
    /// within about a second.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ACCESSES_PER_RUN, value_parser = super::common::parse_count_arg)]
    pub max_accesses: u64,
}

impl RunArgs {
    fn request(&self) -> RunRequest {
        RunRequest {
            suite: self.suite.clone(),
            kernel: self.kernel.clone(),
            loop_nest: (self.loop_text.clone()).map(|text| (text, self.arrays.clone())),
            threads: self.threads.clone(),
            huge_pages: self.huge_pages,
            out: self.out.clone(),
            export_csv: self.export_csv.clone(),
            json: self.json,
            target_ci: self.target_ci,
            sampling_budget: self.sampling_budget,
            max_accesses: self.max_accesses,
            geometry: self.cache.choice(),
        }
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.list.print()? {
        return Ok(ExitCode::SUCCESS);
    }
    // Every parameter and output is validated before anything runs.
    let history = HistoryPlan::settle(
        std::path::Path::new(REPORTS_DIR),
        &args.history.request(),
        args.out.as_deref(),
        &CATALOGUE_RULES,
    )?;
    let request = args.request();
    let machine = request.geometry.detect();
    let copies = args.wisdom.planner(&machine)?;
    let prepared = prepare_run(&request, machine.clone(), copies)?;
    // Where the simulated misses come from, before the table and again after it (a doubtful
    // level's warning would otherwise scroll away).
    let geometry = geometry_lines(&prepared.geometry);
    for line in &geometry {
        eprintln!("{line}");
    }
    let stop = super::common::stop_flag()?;
    let time_model = obtain_model(
        &args.model.choice(),
        &machine,
        false,
        &stop,
        &mut probe_progress(args.quiet),
    )?;
    for note in &time_model.notes {
        eprintln!("{note}");
    }
    let mut progress = RunProgress::new(prepared.plan.points.len(), args.quiet);
    let mut doc = run_suite(&prepared.plan, &prepared.options, &stop, &mut |event| {
        progress.event(event)
    })?;
    progress.finish();
    if let Some(model) = &time_model.model {
        annotate(
            &mut doc,
            model,
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        );
    }

    let outputs = &prepared.outputs;
    write_results(&doc, outputs)?;
    if args.json {
        println!("{}", doc.to_json()?);
    } else if outputs.json != Some(FileTarget::Stdout) {
        print!("{}", run_summary(&doc, args.quiet));
    }
    // The comparison goes where the summary went: stdout, unless stdout carries the document.
    let own_files: Vec<PathBuf> = outputs.json.iter().filter_map(FileTarget::path).collect();
    let (outcome, notes) = history.compare(&doc, &own_files, &CATALOGUE_RULES);
    let compared = history_text(outcome, &notes, args.quiet);
    if args.json || outputs.json == Some(FileTarget::Stdout) {
        eprint!("{compared}");
    } else {
        print!("{compared}");
    }
    if doc.status == RunStatus::Complete {
        if let Some(line) = history.save(&doc)? {
            eprintln!("{line}");
        }
    } else if history.save.is_some() {
        eprintln!("baseline not saved: the run was interrupted");
    }
    if let Some(line) = results_line(outputs) {
        eprintln!("{line}");
    }
    for line in problems(&doc) {
        eprintln!("{line}");
    }
    for line in geometry.iter().skip(1) {
        eprintln!("{line}");
    }
    Ok(if doc.status == RunStatus::Interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}
