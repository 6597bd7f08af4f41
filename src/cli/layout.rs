//! `stridelab layout [--json] EXPR`: evaluate a view expression and explain the result.
//!
//! With `--json` exactly one object is printed on stdout (also for errors, which exit 2).
//! The hidden `--batch FILE` mode evaluates one expression per line and prints one JSON object
//! per line; the NumPy cross-check uses it to run thousands of chains in one process.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::kernels::describe::{error_text, explain, json_line};
use crate::kernels::eval as expr;
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
}

pub fn run(args: LayoutArgs) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.batch {
        return run_batch(path);
    }
    let text = args.expr.unwrap_or_default();
    if args.json {
        let (line, ok) = json_line(&text);
        println!("{line}");
        return Ok(ExitCode::from(if ok { 0 } else { 2 }));
    }
    match expr::evaluate(&text) {
        Ok(evaluation) => {
            print!("{}", explain(&evaluation));
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            eprint!("{}", error_text(&text, &err));
            Ok(ExitCode::from(2))
        }
    }
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
