//! `stridelab why KERNEL key=value…`: reads the command line, shows progress while the library
//! times the point beside its controls, and prints the report it concluded (or its JSON).

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;

use super::common::{CacheArgs, WisdomArgs, kernel_name_parser};
use crate::harness::suite::DEFAULT_MAX_ACCESSES_PER_RUN;
use crate::harness::why::{WhyError, WhyReport, WhyRequest, plan_why, run_why};

#[derive(Debug, Args)]
pub struct WhyArgs {
    /// The point: a kernel NAME, then key=value pairs (one value each), as for `run --kernel`.
    #[arg(
        required = true,
        num_args = 1..,
        value_name = "NAME [key=value]...",
        value_parser = kernel_name_parser(),
        hide_possible_values = true
    )]
    pub kernel: Vec<String>,
    /// Rounds of base, every control, base again (2..=20): the base's change between its two
    /// runs of a round is the noise every control is judged against.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Seconds of extra sampling each timing may take to reach --target-ci.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.5)]
    pub sampling_budget: f64,
    /// The 95% CI width of a timing's median to sample towards, relative to the median.
    #[arg(long, value_name = "PCT", default_value = "2%", value_parser = super::common::parse_fraction)]
    pub target_ci: f64,
    /// Most loads and stores one run of the point (or a control) may make; N takes K/M/G.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_ACCESSES_PER_RUN, value_parser = super::common::parse_count_arg)]
    pub max_accesses: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(flatten)]
    pub wisdom: WisdomArgs,
}

pub fn run(args: WhyArgs) -> anyhow::Result<ExitCode> {
    if !(0.0..=3600.0).contains(&args.sampling_budget) {
        anyhow::bail!(
            "--sampling-budget {}: must lie in 0..=3600 seconds",
            args.sampling_budget
        );
    }
    let request = WhyRequest {
        kernel: args.kernel.clone(),
        rounds: args.rounds,
        sampling_budget: args.sampling_budget,
        target_ci: args.target_ci,
        max_accesses: args.max_accesses,
        geometry: args.cache.choice(),
    };
    let machine = request.geometry.detect();
    let copies = args.wisdom.planner(&machine)?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let plan = plan_why(&request, machine, copies, cpus)?;
    let stop = super::common::stop_flag()?;
    let hidden = args.quiet || !std::io::stderr().is_terminal();
    let bar = super::text::progress::progress_bar(plan.timings() as u64, hidden);
    let result = run_why(&plan, &stop, &mut |p| {
        bar.set_position(p.done as u64);
        bar.set_message(format!(
            "round {} of {}: {}",
            p.round + 1,
            args.rounds,
            p.what
        ));
    });
    bar.finish_and_clear();
    let report = match result {
        Ok(report) => report,
        Err(WhyError::Interrupted(done, total)) => {
            eprintln!("interrupted after {done} of {total} rounds: no verdict");
            return Ok(ExitCode::from(super::common::EXIT_INTERRUPTED));
        }
        Err(e) => return Err(e.into()),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// The report as text: the point, a table of controls, their sentences and the verdict.
fn render(report: &WhyReport) -> String {
    let mut out = format!(
        "why: {} — {} rounds; base {:.3} ns per element (timed, median of its {} timings); noise ±{:.1}% \
         (the base against itself within a round){}\n\n",
        report.point,
        report.rounds,
        report.base_ns_per_element,
        2 * report.rounds,
        report.noise * 100.0,
        report
            .load_average
            .map(|l| format!("; load average {l:.2} when it began"))
            .unwrap_or_default()
    );
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    table.set_header([
        "control",
        "factor",
        "× base (median)",
        "rounds",
        "time",
        "model",
    ]);
    for c in &report.controls {
        let rounds: Vec<String> = c.ratios.iter().map(|r| format!("{r:.2}")).collect();
        table.add_row([
            c.control.change.clone(),
            c.control.factor.words().to_string(),
            format!("{:.2}", c.median),
            rounds.join(" "),
            c.moved_in_a_word().to_string(),
            c.model_in_a_word().to_string(),
        ]);
    }
    out.push_str(&format!("{table}\n\n"));
    for c in &report.controls {
        out.push_str(&format!("- {}\n", c.sentence));
    }
    out.push('\n');
    for line in &report.verdict {
        out.push_str(&format!("{line}\n"));
    }
    out
}
