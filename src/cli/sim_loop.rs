//! `stridelab sim --loop TEXT --array DECL …`: parses the nest, simulates it
//! (`harness::sim::loops`) on the geometry, policy and budgets of `sim`, and prints the report
//! (`cli::text::sim_loop`) or its JSON. A malformed nest or declaration, an index out of
//! bounds or a nest beyond the budget exits 2 with the error (and a caret under the column
//! it points at); with `--json` the error is one object, `{"error": {"message": …}}`.

use std::process::ExitCode;

use crate::cache::sim::Policy;
use crate::cache::tlb::TlbChoice;
use crate::cli::common::CacheArgs;
use crate::cli::text::sim_loop::{error_text, loop_text};
use crate::cli::text::sim_prefetch::beside_text;
use crate::harness::sim::loops::{LoopSimError, LoopSimRequest, simulate_nest};
use crate::harness::sim::loops_prefetch::nest_prefetch;
use crate::harness::sim::prefetch::prefetch_config;
use crate::layout::loops::LoopNest;

/// The options of `sim` that `--loop` reads.
pub struct LoopOptions<'a> {
    pub arrays: &'a [String],
    pub cache: &'a CacheArgs,
    pub policy: Policy,
    pub warm: bool,
    pub json: bool,
    pub max_accesses: u64,
    pub max_sim_memory: u64,
    pub tlb: Option<&'a TlbChoice>,
    /// `--prefetch on`: the prefetch model beside the simulator.
    pub prefetch: bool,
}

pub fn run(text: &str, args: &LoopOptions) -> anyhow::Result<ExitCode> {
    let geometry = args.cache.choose()?;
    let prefetch = args
        .prefetch
        .then(|| prefetch_config(&geometry))
        .transpose()?;
    let outcome = LoopNest::parse(text, args.arrays)
        .map_err(LoopSimError::from)
        .and_then(|nest| {
            let request = LoopSimRequest {
                nest: &nest,
                geometry: &geometry,
                policy: args.policy,
                warm: args.warm,
                max_accesses: args.max_accesses,
                max_sim_memory: args.max_sim_memory,
                tlb: args.tlb,
            };
            let mut report = simulate_nest(&request)?;
            report.prefetch = nest_prefetch(&request, prefetch.as_ref())?;
            Ok(report)
        });
    match outcome {
        Ok(report) if args.json => println!("{}", report.to_json()?),
        Ok(report) => {
            print!("{}", loop_text(&report));
            print!(
                "{}",
                beside_text(report.tlb.as_ref(), report.prefetch.as_ref())
            );
        }
        Err(err) => return Ok(error_exit(args.json, &err.to_string(), &error_text(&err))),
    }
    Ok(ExitCode::SUCCESS)
}

/// Exit code 2 after printing an error of `--loop` (of `sim` or `run`): `{"error": {"message":
/// …}}` on stdout with `--json`, else `text` on stderr.
pub fn error_exit(json: bool, message: &str, text: &str) -> ExitCode {
    if json {
        println!("{}", serde_json::json!({ "error": { "message": message } }));
    } else {
        eprint!("{text}");
    }
    ExitCode::from(2)
}
