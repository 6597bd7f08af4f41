//! `stridelab layout [--json [--all]] [--cache NAME=SIZE,WAYS,LINE … | --preset P …] [--dtype T]
//! EXPR`: evaluate a view expression and explain the result, and what the view does to every
//! data level of the geometry `sim` would simulate (this machine's or `--preset`'s, each
//! `--cache` level replacing or adding one).
//!
//! With `--json` exactly one object is printed on stdout, also for errors (which exit 2):
//! `{"error": {"kind": …, "message": …}}`; `main` does the same for malformed options. Its
//! long lists are cut to their first entries unless `--all` (`explain::listing`).
//! The hidden `--batch FILE` mode evaluates one expression per line and prints one JSON object
//! per line; the NumPy cross-check uses it to run thousands of chains in one process.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use stridelab_copy::Planner;

use crate::cache::geometry::{ChosenGeometry, Geometry, GeometryError};
use crate::cli::common::CacheArgs;
use crate::cli::text::layout::{
    error_json, error_object, error_text, explain, json_line, view_json,
};
use crate::cli::text::layout_cache::geometry_text;
use crate::explain::cache::{Dtype, UnknownDtype};
use crate::explain::levels::{GeometryExplanation, explain_geometry};
use crate::explain::listing::{DEFAULT_SHOWN, Listing, cap_set_lines, check_all};
use crate::explain::padding::ViewChain;
use crate::kernels::copy_planner::analytic_planner;
use crate::kernels::eval as expr;
use crate::layout::ErrorKind;
use crate::layout::describe::error_kinds_help;

#[derive(Debug, clap::Args)]
#[command(after_help = after_help())]
pub struct LayoutArgs {
    /// The view expression, e.g. 'arange(12).view(3,4).T' or 'arange(24).view(2,3,4)[:, ::-1, 1]'.
    /// Every integer may be arithmetic (+, -, *, //, parentheses; checked in 64 bits), e.g.
    /// 'arange(32*64*56*56).view(32, 64, 56*56)'.
    #[arg(required_unless_present = "batch")]
    pub expr: Option<String>,
    /// Print one JSON object instead of the explanation. Its per-element `values` and each
    /// level's per-set `set_lines` list their first 4096 entries, with `values_total` /
    /// `set_lines_total` and `*_truncated` saying so.
    #[arg(long)]
    pub json: bool,
    /// With --json: list every value and every set's count (refused, exit 2, when that would
    /// print more than 64 MiB).
    #[arg(long, requires = "json")]
    pub all: bool,
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

/// The error kinds of the expression, plus those of the options and the cache analysis.
fn after_help() -> String {
    let mut text = error_kinds_help();
    text.push_str(&format!(
        "  {:<18} an option is malformed or names an unknown preset, or the levels clash\n",
        USAGE
    ));
    text.push_str(
        "(too_large and overflow also cover a cache level too large for the analysis, a byte \
         stride beyond 64-bit addresses, and --all output beyond 64 MiB; invalid_argument a \
         division by zero in the text.)\n",
    );
    text
}

/// The `--json` error kind of a malformed option.
pub const USAGE: &str = "usage";

fn parse_dtype(text: &str) -> Result<Dtype, String> {
    text.parse().map_err(|e: UnknownDtype| e.to_string())
}

pub fn run(args: LayoutArgs) -> anyhow::Result<ExitCode> {
    // This machine, detected once: the copies an expression makes are planned for its caches,
    // and (without a preset) it is the geometry explained.
    let machine = args.cache.choice().detect();
    let copies = Arc::new(analytic_planner(&machine));
    if let Some(path) = &args.batch {
        return run_batch(path, &copies);
    }
    let text = args.expr.clone().unwrap_or_default();
    let evaluation = match expr::evaluate(&text, copies) {
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
    let chosen = match chosen_geometry(&args.cache, &machine) {
        Ok(chosen) => chosen,
        Err(err) => return Ok(fail(args.json, USAGE, &format!("{err:#}"))),
    };
    let chain = ViewChain {
        text: &text,
        steps: &evaluation.steps,
    };
    let explained = match &chosen {
        Some(chosen) => {
            explain_geometry(evaluation.layout(), &chain, args.dtype.itemsize(), chosen)
        }
        None => Ok(GeometryExplanation::unknown()),
    };
    let mut explained = match explained {
        Ok(explained) => explained,
        Err(err) => return Ok(fail(args.json, err.kind(), &err.to_string())),
    };
    if !args.json {
        print!("{}{}", explain(&evaluation), geometry_text(&explained));
        return Ok(ExitCode::SUCCESS);
    }
    let listing = if args.all {
        let values = evaluation.layout().numel() as u64;
        let largest = evaluation.storage_len().saturating_sub(1) as u64;
        if let Err(err) = check_all(values, largest, &explained.caches) {
            return Ok(fail(true, ErrorKind::TooLarge.as_str(), &err.to_string()));
        }
        Listing::All
    } else {
        Listing::First(DEFAULT_SHOWN)
    };
    cap_set_lines(&mut explained.caches, listing);
    println!(
        "{}",
        view_json(&text, &evaluation, Some(&explained), listing)
    );
    Ok(ExitCode::SUCCESS)
}

/// Prints an error as `--json` or text asks and returns exit code 2.
fn fail(json: bool, kind: &str, message: &str) -> ExitCode {
    if json {
        println!("{}", error_object(kind, message));
    } else {
        eprintln!("error: {message}");
    }
    ExitCode::from(2)
}

/// The geometry `sim` would simulate; `None` when this machine's is unknown and no option
/// gives one (the explanation then says how to give one).
fn chosen_geometry(args: &CacheArgs, machine: &Geometry) -> anyhow::Result<Option<ChosenGeometry>> {
    match args.choice().resolve(machine) {
        Ok(chosen) => Ok(Some(chosen)),
        Err(GeometryError::Empty) if !args.is_given() => Ok(None),
        Err(err) => Err(anyhow::Error::new(err).context("choosing the cache levels to explain")),
    }
}

fn run_batch(path: &PathBuf, copies: &Arc<Planner>) -> anyhow::Result<ExitCode> {
    let input = std::fs::read_to_string(path)
        .with_context(|| format!("reading the batch file {}", path.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for text in input.lines().filter(|l| !l.trim().is_empty()) {
        writeln!(out, "{}", json_line(text, copies).0)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
