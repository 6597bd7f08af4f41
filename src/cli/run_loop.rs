//! `stridelab run --loop TEXT --array DECL …`: times a user's loop nest on one pinned thread
//! and simulates the same stream (`harness::loop_run`), on the geometry `run` simulates. A
//! malformed nest, an index out of bounds or a nest beyond the budget exits 2 with the error.

use std::process::ExitCode;

use crate::cli::common::CacheArgs;
use crate::cli::sim_loop::error_exit;
use crate::cli::text::sim_loop::error_text;
use crate::harness::MethodOptions;
use crate::harness::loop_run::{LoopRunError, run_nest};
use crate::harness::run::plan::geometry_lines;
use crate::harness::sim::loops::LoopSimError;
use crate::layout::loops::LoopNest;

/// The options of `run` that `--loop` reads.
pub struct LoopRunOptions<'a> {
    pub arrays: &'a [String],
    pub cache: &'a CacheArgs,
    pub json: bool,
    pub max_accesses: u64,
    pub target_ci: f64,
}

pub fn run(text: &str, args: &LoopRunOptions) -> anyhow::Result<ExitCode> {
    let geometry = args.cache.choose()?;
    let method = MethodOptions {
        target_relative_ci: args.target_ci,
        ..MethodOptions::default()
    };
    let nest = match LoopNest::parse(text, args.arrays) {
        Ok(nest) => nest,
        Err(err) => return Ok(fail(args.json, &LoopSimError::from(err))),
    };
    let report = match run_nest(nest, &geometry.levels, &method, args.max_accesses) {
        Ok(report) => report,
        Err(LoopRunError::Loop(err)) => return Ok(fail(args.json, &LoopSimError::from(err))),
        Err(err) => return Ok(fail_plain(args.json, &err.to_string())),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", crate::cli::text::run_loop::run_loop_text(&report));
    for line in geometry_lines(&geometry) {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

fn fail(json: bool, err: &LoopSimError) -> ExitCode {
    error_exit(json, &err.to_string(), &error_text(err))
}

fn fail_plain(json: bool, message: &str) -> ExitCode {
    error_exit(json, message, &format!("error: {message}\n"))
}
