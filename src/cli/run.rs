//! `stridelab run`: measure a suite (or one kernel's grid) on this machine and write the
//! versioned results document (plus a CSV beside it).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::harness::machine::MachineInfo;
use crate::harness::suite::{DEFAULT_MAX_ACCESSES_PER_RUN, PlanLimits, Suite, parse_thread_list};
use crate::harness::{MethodOptions, Progress, RunOptions, catalogue, run_suite};
use crate::kernels::spec::format_params;
use crate::results::csv::to_csv;
use crate::results::output::{FileTarget, OutputPlan, STDOUT};
use crate::results::{ChecksumOutcome, ResultsDocument, RunStatus};

/// Exit code of a run stopped by Ctrl-C (128 + SIGINT), after its results were written.
const EXIT_INTERRUPTED: u8 = 130;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Suite to run: quick (default), full, gate, or a TOML file.
    #[arg(long, conflicts_with = "kernel")]
    pub suite: Option<String>,
    /// One kernel instead of a suite: NAME then key=value pairs; `key=a,b,c` is a grid.
    #[arg(long, num_args = 1.., value_name = "NAME [key=value]...")]
    pub kernel: Option<Vec<String>>,
    /// Thread counts for every point, e.g. `1,2` or `all` (= 1..available CPUs).
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,
    /// Ask for transparent huge pages on every buffer (whether they were granted is recorded).
    #[arg(long)]
    pub huge_pages: bool,
    /// Where to write the results document (`-`: stdout). The CSV goes beside it as
    /// `<stem>.csv` (none for stdout, a device or a pipe); a FILE ending in `.csv` is refused so
    /// the two never overwrite each other. Checked before anything is measured.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the results document to stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress bar (for CI).
    #[arg(long)]
    pub quiet: bool,
    /// List the kernels and their parameters, then exit.
    #[arg(long)]
    pub list: bool,
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
    /// anything runs); a larger point is refused. Runs this short let Ctrl-C stop a point
    /// within about a second.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ACCESSES_PER_RUN)]
    pub max_accesses: u64,
}

/// Extra sampling a `--kernel` run may spend per point to reach the target CI: DRAM bandwidth
/// here swings by ±15% over 0.1–1 s, and a 64 MiB point needs a few hundred 7 ms samples spread
/// over seconds before the median's CI is a few percent wide (quiet machine, 64 MiB copy and
/// row-sum: with 3 s, 3 of 6 runs reached ≤ 3%; with 10 s, 6 of 6, in 1.4–10.4 s).
const KERNEL_SAMPLING_BUDGET_S: f64 = 10.0;

/// The sampling method `args` ask for.
fn method_of(args: &RunArgs) -> anyhow::Result<MethodOptions> {
    let defaults = MethodOptions::default();
    if args.target_ci <= 0.0 || args.target_ci.is_nan() {
        anyhow::bail!("--target-ci must be above 0%");
    }
    let single_point = args.kernel.is_some();
    let budget = match args.sampling_budget {
        Some(s) if s.is_finite() && (0.0..=3600.0).contains(&s) => Some(s),
        Some(s) => anyhow::bail!("--sampling-budget {s}: must lie in 0..=3600 seconds"),
        None if single_point => Some(KERNEL_SAMPLING_BUDGET_S),
        None => None,
    };
    Ok(MethodOptions {
        huge_pages: args.huge_pages,
        target_relative_ci: args.target_ci,
        extra_sampling: budget.map_or(defaults.extra_sampling, Duration::from_secs_f64),
        extra_sampling_scales_with_minimum: budget.is_none(),
        // Enough rounds for the budget to matter: seconds of 5 ms samples.
        max_samples: if budget.is_some() {
            1000
        } else {
            defaults.max_samples
        },
        ..defaults
    })
}

fn list_kernels() -> ExitCode {
    for spec in catalogue() {
        let params: Vec<String> = spec
            .params
            .iter()
            .map(|p| match p.default {
                Some(d) => format!("[{}={d}]", p.name),
                None => p.name.to_string(),
            })
            .collect();
        println!("{:<12} {}", spec.name, params.join(" "));
    }
    ExitCode::SUCCESS
}

fn default_out(suite: &str) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    PathBuf::from(format!("reports/runs/{suite}-{stamp}.json"))
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.list {
        return Ok(list_kernels());
    }
    let suite = match &args.kernel {
        Some(words) => {
            let (name, rest) = words
                .split_first()
                .context("--kernel needs a kernel name")?;
            Suite::from_command_line(name, rest)
        }
        None => Suite::load(args.suite.as_deref().unwrap_or("quick"))?,
    };
    let threads = args
        .threads
        .as_deref()
        .map(parse_thread_list)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--threads: {e}"))?;
    // Every parameter is validated here, before anything runs.
    let limits = PlanLimits {
        max_accesses_per_run: args.max_accesses,
        ..PlanLimits::default()
    };
    let plan = suite.plan_with(threads.as_deref(), limits)?;
    // So is every output: a run is never measured only to be lost at the end.
    let outputs = plan_outputs(&args, &plan.name)?;

    let machine = MachineInfo::collect(None);
    let options = RunOptions {
        method: method_of(&args)?,
        manifest: serde_json::to_value(&machine).context("serialising the machine manifest")?,
        cache_levels: machine.effective_data_levels(),
        ..RunOptions::default()
    };
    let stop = super::common::stop_flag()?;
    // Without a terminal (CI logs) a plain line per finished point replaces the bar.
    let plain_log = !args.quiet && !std::io::stderr().is_terminal();
    let bar = if args.quiet || plain_log {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::with_draw_target(
            Some(plan.points.len() as u64),
            ProgressDrawTarget::stderr(),
        );
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} [{elapsed} < {eta}] {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    };
    let mut point_started = std::time::Instant::now();
    let mut current = String::new();
    let mut on_progress = |event: Progress<'_>| match event {
        Progress::Started { label, .. } => {
            point_started = std::time::Instant::now();
            current = label.to_string();
            bar.set_message(current.clone());
        }
        Progress::Finished { index, total, .. } => {
            bar.inc(1);
            if plain_log {
                eprintln!(
                    "[{}/{total}] {current} ({:.2} s)",
                    index + 1,
                    point_started.elapsed().as_secs_f64()
                );
            }
        }
    };
    let doc = run_suite(&plan, &options, &stop, &mut on_progress)?;
    bar.finish_and_clear();

    if let Some(target) = &outputs.json {
        let mut text = doc.to_json()?;
        text.push('\n');
        target.write(text.as_bytes())?;
    }
    if let Some(target) = &outputs.csv {
        target.write(to_csv(&doc).as_bytes())?;
    }
    if args.json {
        println!("{}", doc.to_json()?);
    } else if outputs.json != Some(FileTarget::Stdout) {
        print_summary(&doc, args.quiet);
    }
    if let Some(json) = &outputs.json {
        match &outputs.csv {
            Some(csv) => eprintln!("results: {} (CSV: {})", json.display(), csv.display()),
            None => eprintln!(
                "results: {} (no CSV: it goes beside a regular results file)",
                json.display()
            ),
        }
    }
    report_problems(&doc);
    Ok(if doc.status == RunStatus::Interrupted {
        ExitCode::from(EXIT_INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

/// Where a run writes its results.
struct RunOutputs {
    json: Option<FileTarget>,
    csv: Option<FileTarget>,
}

/// Checks `--out` (or the default file) and the CSV beside it before anything is measured.
fn plan_outputs(args: &RunArgs, suite_name: &str) -> anyhow::Result<RunOutputs> {
    let mut plan = OutputPlan::default();
    if let Some(suite) = &args.suite
        && Path::new(suite).is_file()
    {
        plan.input("--suite", Path::new(suite));
    }
    if args.json {
        plan.uses_stdout("--json")?;
    }
    let out = match (&args.out, args.json) {
        (Some(path), _) => path.clone(),
        (None, true) => {
            return Ok(RunOutputs {
                json: None,
                csv: None,
            });
        }
        (None, false) => default_out(suite_name),
    };
    let is_csv = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if is_csv && out.as_os_str() != STDOUT {
        anyhow::bail!(
            "--out {}: --out names the results JSON file and the CSV is written beside it as \
             <stem>.csv, so a .csv name would be overwritten; give e.g. --out {}",
            out.display(),
            out.with_extension("json").display()
        );
    }
    let json = plan.file("--out", &out)?;
    let csv = match &json {
        FileTarget::File(path) => {
            Some(plan.file("the CSV beside --out", &path.with_extension("csv"))?)
        }
        FileTarget::Stdout | FileTarget::Special(_) => None,
    };
    Ok(RunOutputs {
        json: Some(json),
        csv,
    })
}

/// Warns on stderr about error rows and an interrupted run (the file has the details).
fn report_problems(doc: &ResultsDocument) {
    let failed: Vec<_> = doc
        .records
        .iter()
        .filter(|r| r.checksum.status != ChecksumOutcome::Ok || r.timing.is_none())
        .collect();
    for r in &failed {
        if let Some(e) = &r.error {
            eprintln!(
                "warning: point {} ({}): {}: {}",
                r.index, r.kernel, e.stage, e.message
            );
        }
    }
    if doc.status == RunStatus::Interrupted {
        eprintln!(
            "interrupted: kept {} of {} points",
            doc.records.len(),
            doc.suite.points
        );
    }
}

fn print_summary(doc: &ResultsDocument, quiet: bool) {
    println!(
        "suite {} ({}): {} points in {:.1} s{}",
        doc.suite.name,
        doc.suite.source,
        doc.records.len(),
        doc.wall_s,
        if doc.status == RunStatus::Interrupted {
            " — interrupted"
        } else {
            ""
        }
    );
    if quiet {
        return;
    }
    println!(
        "{:<60} {:>3} {:>6} {:>12} {:>7} {:>9} {:>7} {:>6} {:>7}  simulated misses per level (conflict)",
        "point", "thr", "check", "ns/run", "±CI %", "ns/elem", "GB/s", "×ref", "×first"
    );
    let mut first_ns_per_element: BTreeMap<&str, f64> = BTreeMap::new();
    for r in &doc.records {
        let mut label = format!("{} {}", r.kernel, format_params(&r.params));
        if label.chars().count() > 60 {
            label = label.chars().take(59).collect();
            label.push('…');
        }
        let t = r.timing.as_ref();
        let cell = |v: Option<f64>, prec: usize| {
            v.map(|x| format!("{x:.prec$}"))
                .unwrap_or_else(|| "-".into())
        };
        // Speed relative to the first point of the same kernel in this run (>1: faster).
        let relative = t.map(|t| {
            let first = *first_ns_per_element
                .entry(r.kernel.as_str())
                .or_insert(t.ns_per_element);
            first / t.ns_per_element
        });
        let simulated = r
            .simulated
            .as_ref()
            .map(|s| {
                s.levels
                    .iter()
                    .map(|l| format!("{} {} ({})", l.name, compact(l.misses), compact(l.conflict)))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_else(|| "-".into());
        let check = match r.checksum.status {
            ChecksumOutcome::Ok => "ok",
            ChecksumOutcome::Mismatch => "WRONG",
            ChecksumOutcome::NotRun => "-",
        };
        println!(
            "{:<60} {:>3} {:>6} {:>12} {:>7} {:>9} {:>7} {:>6} {:>7}  {}",
            label,
            r.threads,
            check,
            cell(t.map(|t| t.ns_per_run.median), 0),
            cell(t.map(|t| t.ns_per_run.relative_ci_width() * 100.0), 1),
            cell(t.map(|t| t.ns_per_element), 3),
            cell(t.and_then(|t| t.gb_per_s), 2),
            cell(r.reference.as_ref().map(|c| c.ratio), 2),
            cell(relative, 2),
            simulated
        );
    }
    println!(
        "timed: ns/run is the median of the samples with its bootstrap 95% CI width; ×ref is GB/s \
         over the same-run copy/read reference; ×first is the speed relative to the kernel's first \
         point. simulated: misses of one cold run (conflict misses of the 3C split in brackets)."
    );
    if let Some(hw) = doc.records.iter().find_map(|r| r.counters.as_ref())
        && !hw.hardware.available
    {
        println!(
            "measured: hardware counters unavailable ({}); software counters in the results file.",
            hw.hardware.reason.as_deref().unwrap_or("no reason given")
        );
    }
}

/// 1234567 → "1.23M": misses at a glance.
fn compact(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}K", n as f64 / 1e3),
        _ => format!("{:.2}M", n as f64 / 1e6),
    }
}
