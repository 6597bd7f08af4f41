//! `stridelab layout [--json] [--cache NAME=SIZE,WAYS,LINE | --preset P] [--dtype T] EXPR`:
//! evaluate a view expression and explain the result, and what the view does to one cache
//! level: the first `--cache` level, else the first preset's L1d, else this machine's L1d.
//!
//! With `--json` exactly one object is printed on stdout (also for errors, which exit 2).
//! The hidden `--batch FILE` mode evaluates one expression per line and prints one JSON object
//! per line; the NumPy cross-check uses it to run thousands of chains in one process.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::cache::geometry::{CacheKind, CacheLevel, Geometry};
use crate::cli::common::CacheArgs;
use crate::harness::sim_run::{LAYOUT_MAX_ACCESSES, simulate_view_walk};
use crate::kernels::describe::{error_json, error_text, explain, json_line, view_json};
use crate::kernels::eval as expr;
use crate::kernels::view_cache::{Dtype, ViewCache, analyse};
use crate::kernels::view_cache_text::cache_text;
use crate::layout::Layout;
use crate::layout::describe::error_kinds_help;

#[derive(Debug, clap::Args)]
#[command(after_help = error_kinds_help())]
pub struct LayoutArgs {
    /// The view expression, e.g. 'arange(12).view(3,4).T' or 'arange(24).view(2,3,4)[:, ::-1, 1]'.
    #[arg(required_unless_present = "batch")]
    pub expr: Option<String>,
    /// Print one JSON object instead of the explanation.
    #[arg(long)]
    pub json: bool,
    /// Evaluate one expression per line of FILE and print one JSON object per line.
    #[arg(long, hide = true, value_name = "FILE")]
    pub batch: Option<PathBuf>,
    #[command(flatten)]
    pub cache: CacheArgs,
    /// Element type of the storage (f64, f32, f16, bf16, i64, i32, i16, i8, u8): bytes per
    /// element for the cache analysis; strides stay in elements.
    #[arg(long, value_name = "T", default_value = "f64", value_parser = parse_dtype)]
    pub dtype: Dtype,
}

fn parse_dtype(text: &str) -> Result<Dtype, String> {
    text.parse()
}

pub fn run(args: LayoutArgs) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.batch {
        return run_batch(path);
    }
    let text = args.expr.clone().unwrap_or_default();
    let evaluation = match expr::evaluate(&text) {
        Ok(evaluation) => evaluation,
        Err(err) => {
            if args.json {
                println!("{}", error_json(&err));
            } else {
                eprint!("{}", error_text(&text, &err));
            }
            return Ok(ExitCode::from(2));
        }
    };
    let level = cache_level(&args.cache)?;
    let analysis = match level {
        Ok(l) => Ok(view_cache(evaluation.layout(), args.dtype, &l)?),
        Err(note) => Err(note),
    };
    if args.json {
        let cache = match &analysis {
            Ok(a) => serde_json::to_value(a)?,
            Err(note) => serde_json::json!({ "unavailable": note }),
        };
        println!("{}", view_json(&text, &evaluation, Some(cache)));
    } else {
        print!("{}", explain(&evaluation));
        match &analysis {
            Ok(a) => print!("\n{}", cache_text(a)),
            Err(note) => println!("\ncache     {note}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The level to analyse: the first `--cache`, else the first preset's innermost data level,
/// else this machine's L1d; `Err(why)` when the machine's L1d is unknown.
fn cache_level(args: &CacheArgs) -> anyhow::Result<Result<CacheLevel, String>> {
    if let Some(level) = args.caches.first() {
        return Ok(Ok(level.clone()));
    }
    if args.is_given() {
        let levels = args.resolve(&Geometry::default())?;
        return Ok(levels
            .into_iter()
            .next()
            .ok_or_else(|| "no data level".to_string()));
    }
    let detected = args.choice().detect();
    Ok(detected
        .levels
        .iter()
        .find(|l| l.level == 1 && l.kind == CacheKind::Data)
        .cloned()
        .ok_or_else(|| {
            "this machine's L1d geometry is unknown; give one, e.g. --cache L1d=48K,12,64 or \
             --preset design-vm"
                .to_string()
        }))
}

/// The analysis plus the simulated C-order walk (or why it did not run).
fn view_cache(layout: &Layout, dtype: Dtype, level: &CacheLevel) -> anyhow::Result<ViewCache> {
    let mut analysis = analyse(layout, dtype.itemsize(), level)?;
    match simulate_view_walk(layout, dtype.itemsize(), level, LAYOUT_MAX_ACCESSES) {
        Ok(walk) => analysis.simulated = Some(walk),
        Err(err) => analysis.simulated_note = Some(err.to_string()),
    }
    Ok(analysis)
}

fn run_batch(path: &PathBuf) -> anyhow::Result<ExitCode> {
    let input = std::fs::read_to_string(path)
        .with_context(|| format!("reading the batch file {}", path.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for text in input.lines().filter(|l| !l.trim().is_empty()) {
        writeln!(out, "{}", json_line(text).0)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
