//! `stridelab layout [--json] [--cache NAME=SIZE,WAYS,LINE … | --preset P …] [--dtype T] EXPR`:
//! evaluate a view expression and explain the result, and what the view does to each cache
//! level given (every `--cache` level and every data level of each `--preset`, as `sim` takes
//! them), else to this machine's L1d.
//!
//! With `--json` exactly one object is printed on stdout, also for errors (which exit 2):
//! `{"error": {"kind": …, "message": …}}`; `main` does the same for malformed options.
//! The hidden `--batch FILE` mode evaluates one expression per line and prints one JSON object
//! per line; the NumPy cross-check uses it to run thousands of chains in one process.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::cache::geometry::{CacheKind, CacheLevel, Geometry};
use crate::cli::common::CacheArgs;
use crate::cli::text::layout::{error_json, error_text, explain, json_line, view_json};
use crate::cli::text::layout_cache::cache_text;
use crate::kernels::eval as expr;
use crate::kernels::views::cache::{Dtype, UnknownDtype, ViewCacheError};
use crate::kernels::views::padding::ViewChain;
use crate::kernels::views::report::{LevelReport, explain as explain_cache};
use crate::layout::describe::error_kinds_help;

#[derive(Debug, clap::Args)]
#[command(after_help = after_help())]
pub struct LayoutArgs {
    /// The view expression, e.g. 'arange(12).view(3,4).T' or 'arange(24).view(2,3,4)[:, ::-1, 1]'.
    /// Every integer may be arithmetic (+, -, *, //, parentheses; checked in 64 bits), e.g.
    /// 'arange(32*64*56*56).view(32, 64, 56*56)'.
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

/// The error kinds of the expression, plus those of the options and the cache analysis.
fn after_help() -> String {
    let mut text = error_kinds_help();
    text.push_str(&format!(
        "  {:<18} an option is malformed or names an unknown preset, or the levels clash\n",
        USAGE
    ));
    text.push_str(
        "(too_large and overflow also cover a cache level too large for the analysis and a \
         byte stride beyond 64-bit addresses.)\n",
    );
    text
}

/// The `--json` error kind of a malformed option.
pub const USAGE: &str = "usage";

fn parse_dtype(text: &str) -> Result<Dtype, String> {
    text.parse().map_err(|e: UnknownDtype| e.to_string())
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
    let levels = match cache_levels(&args.cache) {
        Ok(levels) => levels,
        Err(err) => return Ok(fail(args.json, USAGE, &format!("{err:#}"))),
    };
    let chain = ViewChain {
        text: &text,
        steps: &evaluation.steps,
    };
    let itemsize = args.dtype.itemsize();
    let analyses: Result<Vec<LevelReport>, ViewCacheError> = match &levels {
        Ok(levels) => levels
            .iter()
            .map(|level| explain_cache(evaluation.layout(), &chain, itemsize, level))
            .collect(),
        Err(_) => Ok(Vec::new()),
    };
    if args.json {
        let analyses = match analyses {
            Ok(a) => a,
            Err(err) => return Ok(fail(true, cache_error_kind(&err), &err.to_string())),
        };
        let caches = match &levels {
            Ok(_) => serde_json::to_value(&analyses)?,
            Err(note) => serde_json::json!([{ "level": "L1d", "unavailable": note }]),
        };
        println!("{}", view_json(&text, &evaluation, Some(caches)));
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", explain(&evaluation));
    match (&levels, analyses) {
        (Err(note), _) => println!("\ncache     {note}"),
        (Ok(_), Ok(analyses)) => {
            for analysis in &analyses {
                print!("\n{}", cache_text(analysis));
            }
        }
        (Ok(_), Err(err)) => return Ok(fail(false, cache_error_kind(&err), &err.to_string())),
    }
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

/// `{"error": {"kind": KIND, "message": TEXT}}`.
pub fn error_object(kind: &str, message: &str) -> String {
    serde_json::json!({ "error": { "kind": kind, "message": message } }).to_string()
}

fn cache_error_kind(err: &ViewCacheError) -> &'static str {
    match err {
        ViewCacheError::TooLarge { .. } => "too_large",
        ViewCacheError::StrideOverflow { .. } => "overflow",
    }
}

/// The levels to explain: every level given (`--preset` data levels first, then `--cache`,
/// as `sim` resolves them), else this machine's L1d; `Ok(Err(why))` when that is unknown.
fn cache_levels(args: &CacheArgs) -> anyhow::Result<Result<Vec<CacheLevel>, String>> {
    if args.is_given() {
        return Ok(Ok(args.resolve(&Geometry::default())?));
    }
    let detected = args.choice().detect();
    Ok(detected
        .levels
        .iter()
        .find(|l| l.level == 1 && l.kind == CacheKind::Data)
        .cloned()
        .map(|l| vec![l])
        .ok_or_else(|| {
            "this machine's L1d geometry is unknown; give one, e.g. --cache L1d=48K,12,64 or \
             --preset design-vm"
                .to_string()
        }))
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
