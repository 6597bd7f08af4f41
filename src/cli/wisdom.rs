//! `stridelab wisdom`: prefill the copy planner's wisdom for a suite's copies, so later runs
//! take every plan from the file instead of planning during a measurement.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use stridelab_copy::{PlanSource, WisdomChoice};

use crate::cli::common::{CacheArgs, EXIT_INTERRUPTED, WisdomArgs};
use crate::harness::Suite;
use crate::harness::run::plan::geometry_and_manifest;
use crate::harness::run::prefill::prefill_plans;
use crate::harness::suite::PlanLimits;
use crate::kernels::copy_planner::copy_planner;

#[derive(Debug, Args)]
pub struct WisdomCmdArgs {
    /// The suite whose copies are planned: quick (default), full, gate, or a TOML file.
    #[arg(long, value_name = "SUITE")]
    pub suite: Option<String>,
    #[command(flatten)]
    pub wisdom: WisdomArgs,
}

/// Plans every copy of the suite's timed points (run once each, untimed) into the wisdom file.
pub fn run(args: WisdomCmdArgs) -> anyhow::Result<ExitCode> {
    let choice = args.wisdom.choice();
    let path = match &choice {
        WisdomChoice::File(path) | WisdomChoice::DefaultFile(path) => path.clone(),
        WisdomChoice::Off => anyhow::bail!("wisdom prefill needs a file; --wisdom is `off`"),
        WisdomChoice::Memory => anyhow::bail!(
            "wisdom prefill needs a file: no $XDG_CACHE_HOME or $HOME here; name one with --wisdom FILE"
        ),
    };
    let suite_name = args.suite.as_deref().unwrap_or("quick");
    let suite = Suite::load(suite_name)?;
    let cache = CacheArgs::default().choice();
    let machine = cache.detect();
    let (geometry, _) = geometry_and_manifest(&cache, machine.clone())?;
    let plan = suite.plan_on(None, PlanLimits::default(), &geometry.levels)?;
    // A file that cannot be read is left alone, so nothing could be prefilled into it.
    let planner = std::sync::Arc::new(copy_planner(choice, &machine)?);
    if let Some(problem) = planner.wisdom_problem() {
        anyhow::bail!(
            "cannot prefill: {problem}; move it aside or name another file with --wisdom"
        );
    }
    let stop = super::common::stop_flag()?;
    let (mut planned, mut known) = (0, 0);
    let points = prefill_plans(&plan, &planner, &stop, |point| {
        if let Some(error) = &point.error {
            eprintln!("{}: not run: {error}", point.label);
        }
        for event in &point.plans {
            let how = match event.source {
                PlanSource::Measured => {
                    planned += 1;
                    format!("planned in {:.0} ms", event.planning_s * 1e3)
                }
                PlanSource::Wisdom => {
                    known += 1;
                    "already in the wisdom".into()
                }
            };
            println!(
                "{}: {} → {} ({how})",
                point.label, event.class, event.schedule.name
            );
        }
    });
    let failed = points.iter().filter(|p| p.error.is_some()).count();
    println!(
        "wisdom: {planned} copies planned, {known} already known, from {} points of suite `{}`; file {}",
        points.len(),
        plan.name,
        path.display()
    );
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("interrupted: the plans made so far are in the file");
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    if failed > 0 {
        return Err(anyhow::anyhow!("{failed} points could not be prepared"))
            .context("wisdom prefill incomplete");
    }
    Ok(ExitCode::SUCCESS)
}
