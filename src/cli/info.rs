//! `stridelab info [--json] [--preset NAME] [--cache NAME=SIZE,WAYS,LINE]...`: describe this
//! machine (CPU, caches with source and warnings, the data TLB from CPUID, pages, pinning, perf
//! events, build) as a table (`text::info`) or one JSON object, and with `--preset`/`--cache` the hierarchy `sim` and `run` would
//! simulate.

use std::process::ExitCode;

use anyhow::Context;

use crate::cli::common::CacheArgs;
use crate::cli::text::info::render_table;
use crate::harness::machine::MachineInfo;

#[derive(Debug, clap::Args)]
pub struct InfoArgs {
    /// Print one JSON object (the machine manifest results files embed).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub cache: CacheArgs,
}

pub fn run(args: InfoArgs) -> anyhow::Result<ExitCode> {
    let choice = args.cache.choice();
    let detected = choice.detect();
    let chosen = if choice.is_given() {
        let chosen = choice
            .resolve(&detected)
            .context("choosing the cache levels to simulate")?;
        Some(chosen)
    } else {
        None
    };
    let info = match &chosen {
        Some(chosen) => MachineInfo::for_geometry(detected, chosen),
        None => MachineInfo::collect_with(detected, None),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        print!("{}", render_table(&info, chosen.as_ref()));
    }
    Ok(ExitCode::SUCCESS)
}
