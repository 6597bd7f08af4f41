//! `stridelab model`: measure (or read) the time model's probes of this machine and show them.
//! The probes, the file and its rules are `harness::time_model`'s.

use std::process::ExitCode;

use clap::Args;

use crate::cache::geometry::Geometry;
use crate::cli::common::{EXIT_INTERRUPTED, ModelArgs};
use crate::cli::text::model::{model_table, probe_progress};
use crate::harness::time_model::{ModelChoice, ProbeError, TimeModelError, obtain_model};

#[derive(Debug, Args)]
pub struct ModelCmdArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Probe again even when the file holds this machine's probes (and rewrite it).
    #[arg(long)]
    pub remeasure: bool,
    /// Print the probes as JSON (the file's format).
    #[arg(long)]
    pub json: bool,
    /// No progress lines.
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: ModelCmdArgs) -> anyhow::Result<ExitCode> {
    let choice = args.model.choice();
    if choice == ModelChoice::Off {
        anyhow::bail!(
            "--model off: there is no time model to show; name a file or leave the flag out"
        );
    }
    let machine = Geometry::detect();
    let stop = super::common::stop_flag()?;
    let obtained = match obtain_model(
        &choice,
        &machine,
        args.remeasure,
        &stop,
        &mut probe_progress(args.quiet),
    ) {
        Err(TimeModelError::Probe(ProbeError::Interrupted)) => {
            eprintln!("interrupted: no probes kept");
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        other => other?,
    };
    for note in &obtained.notes {
        eprintln!("{note}");
    }
    let Some(model) = obtained.model else {
        return Ok(ExitCode::SUCCESS);
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&model)?);
    } else {
        print!("{}", model_table(&model));
    }
    Ok(ExitCode::SUCCESS)
}
