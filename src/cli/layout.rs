//! `stridelab layout [--json] EXPR`: evaluate a view expression and explain the result.
//!
//! With `--json` exactly one object is printed on stdout (also for errors, which exit 2).
//! The hidden `--batch FILE` mode evaluates one expression per line and prints one JSON object
//! per line; the NumPy cross-check uses it to run thousands of chains in one process.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde::Serialize;

use crate::kernels::eval::{self as expr, Evaluation};
use crate::layout::contiguity::{self, Order};
use crate::layout::error::ErrorKind;
use crate::layout::{Layout, LayoutError};

/// Storages up to this many cells get a strip of touched cells...
const STRIP_MAX_CELLS: usize = 64;
/// ...when the view has at most this many elements (the strip walks every one of them).
const STRIP_MAX_VISITS: usize = 1 << 16;
const STRIP_CELLS_PER_ROW: usize = 16;
/// Views up to this many elements print all their values.
const VALUES_MAX_SHOWN: usize = 256;

/// The `--help` paragraph listing the JSON error kinds, built from the kinds themselves.
fn error_kinds_help() -> String {
    let mut text = String::from(
        "With --json, an error prints {\"error\": {\"kind\": KIND, \"message\": TEXT}} and exits 2. \
         KIND is one of:\n",
    );
    for kind in ErrorKind::ALL {
        let _ = writeln!(text, "  {:<18} {}", kind.as_str(), kind.describe());
    }
    text
}

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

#[derive(Serialize)]
struct JsonView<'a> {
    expr: &'a str,
    shape: &'a [usize],
    strides: &'a [isize],
    offset: usize,
    storage_len: usize,
    shares_storage: bool,
    c_contiguous: bool,
    f_contiguous: bool,
    values: Vec<i64>,
}

#[derive(Serialize)]
struct JsonErrorBody {
    kind: &'static str,
    message: String,
}

#[derive(Serialize)]
struct JsonError {
    error: JsonErrorBody,
}

/// The `--json` object for one expression: the view, or `{"error": {...}}`.
fn json_line(text: &str) -> (String, bool) {
    let result = match expr::evaluate(text) {
        Ok(evaluation) => {
            let layout = evaluation.layout();
            serde_json::to_string(&JsonView {
                expr: text,
                shape: layout.shape(),
                strides: layout.strides(),
                offset: layout.offset(),
                storage_len: evaluation.storage_len(),
                shares_storage: evaluation.shares_storage(),
                c_contiguous: layout.is_c_contiguous(),
                f_contiguous: layout.is_f_contiguous(),
                values: evaluation.values(),
            })
            .map(|s| (s, true))
        }
        Err(err) => serde_json::to_string(&JsonError {
            error: JsonErrorBody {
                kind: err.kind().as_str(),
                message: err.to_string(),
            },
        })
        .map(|s| (s, false)),
    };
    result.expect("serialising plain data to JSON cannot fail")
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
            let mut message = format!("error: {err}\n");
            if let Some(LayoutError::Parse { column, .. }) = err.layout_root() {
                message.push_str(&caret(&text, *column));
            }
            eprint!("{message}");
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

/// The expression with a caret under `column` (1-based, in characters).
fn caret(text: &str, column: usize) -> String {
    let pad = " ".repeat(column.saturating_sub(1));
    format!("  {text}\n  {pad}^\n")
}

/// `loc = 0 + 1·i0 + 4·i1`
fn formula(layout: &Layout) -> String {
    let mut f = format!("loc = {}", layout.offset());
    for (k, &s) in layout.strides().iter().enumerate() {
        let sign = if s < 0 { '-' } else { '+' };
        let _ = write!(f, " {sign} {}·i{k}", s.unsigned_abs());
    }
    f
}

fn ranges(layout: &Layout) -> String {
    if layout.ndim() == 0 {
        return "(a single element: no indices)".to_string();
    }
    let parts: Vec<String> = layout
        .shape()
        .iter()
        .enumerate()
        .map(|(k, n)| format!("0 ≤ i{k} < {n}"))
        .collect();
    format!("for {}", parts.join(", "))
}

fn contiguity_line(layout: &Layout, order: Order) -> String {
    match contiguity::check(layout, order) {
        Ok(()) if layout.numel() == 0 => "yes (an empty view is contiguous)".to_string(),
        Ok(()) => {
            let walk = match order {
                Order::C => "last",
                Order::F => "first",
            };
            format!(
                "yes: walking from the {walk} dim, each stride is the product of the sizes \
                 walked before it (size-1 dims ignored)"
            )
        }
        Err(broken) => format!("no: {}", broken.explain(order)),
    }
}

/// The values nested like NumPy prints them. An empty view prints `[]` without visiting its
/// dims (a shape of `[huge, 0]` would otherwise loop over `huge` empty rows); otherwise every
/// dim is at least 1, so the walk costs at most `values.len() × ndim` steps.
fn nested_values(shape: &[usize], values: &[i64]) -> String {
    if values.is_empty() {
        return format!("[] (no elements: shape {shape:?})");
    }
    fn rec(shape: &[usize], values: &[i64], depth: usize, out: &mut String) {
        match shape {
            [] => {
                let _ = write!(out, "{}", values[0]);
            }
            [_] => {
                let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                let _ = write!(out, "[{}]", items.join(", "));
            }
            [n, rest @ ..] => {
                let chunk = values.len() / (*n).max(1);
                out.push('[');
                for k in 0..*n {
                    if k > 0 {
                        out.push_str(",\n");
                        out.push_str(&" ".repeat(depth + 1));
                    }
                    rec(rest, &values[k * chunk..(k + 1) * chunk], depth + 1, out);
                }
                out.push(']');
            }
        }
    }
    let mut out = String::new();
    rec(shape, values, 0, &mut out);
    out
}

/// A strip of the storage: each cell's value and when the view visits it.
fn storage_strip(evaluation: &Evaluation<i64>) -> String {
    let storage = evaluation.storage();
    let mut first_visit: Vec<Option<usize>> = vec![None; storage.len()];
    let mut visits = vec![0usize; storage.len()];
    for (order, offset) in evaluation.layout().offsets().enumerate() {
        first_visit[offset].get_or_insert(order);
        visits[offset] += 1;
    }
    let touched = visits.iter().filter(|&&v| v > 0).count();
    let repeated = visits.iter().any(|&v| v > 1);
    let mut out = format!(
        "storage cells ({} of {} touched; the visit row gives the order in which the view reads \
         each cell, · = untouched{})\n",
        touched,
        storage.len(),
        if repeated {
            ", n+ = first read at n and read again later"
        } else {
            ""
        }
    );
    let width = storage
        .len()
        .max(evaluation.layout().numel())
        .to_string()
        .len()
        .max(2)
        + 2;
    for start in (0..storage.len()).step_by(STRIP_CELLS_PER_ROW) {
        let end = (start + STRIP_CELLS_PER_ROW).min(storage.len());
        let mut cell = String::from("  cell  ");
        let mut value = String::from("  value ");
        let mut visit = String::from("  visit ");
        for i in start..end {
            let _ = write!(cell, "{i:>width$}");
            let _ = write!(value, "{:>width$}", storage[i]);
            let mark = match (first_visit[i], visits[i]) {
                (None, _) => "·".to_string(),
                (Some(v), 1) => v.to_string(),
                (Some(v), _) => format!("{v}+"),
            };
            let _ = write!(visit, "{mark:>width$}");
        }
        let _ = writeln!(out, "{cell}\n{value}\n{visit}");
        if end < storage.len() {
            out.push('\n');
        }
    }
    out
}

/// The chain of steps as a table: one row per step with its shape, strides, offset and
/// whether it viewed or copied.
fn chain_table(evaluation: &Evaluation<i64>) -> String {
    let mut out = String::new();
    let rows: Vec<[String; 5]> = evaluation
        .steps
        .iter()
        .enumerate()
        .map(|(k, step)| {
            let what = if k == 0 {
                "storage 0..N".to_string()
            } else if step.copied {
                "COPY (new storage)".to_string()
            } else if !step.writable {
                "view, read-only".to_string()
            } else {
                "view".to_string()
            };
            [
                step.text.clone(),
                format!("{:?}", step.layout.shape()),
                format!("{:?}", step.layout.strides()),
                step.layout.offset().to_string(),
                what,
            ]
        })
        .collect();
    let header = ["step", "shape", "strides", "offset", ""];
    let widths: Vec<usize> = (0..5)
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in std::iter::once(header.map(String::from)).chain(rows) {
        let mut line = String::from(" ");
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            let _ = write!(line, " {cell}{}", " ".repeat(pad));
            if c < 4 {
                line.push(' ');
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

fn explain(evaluation: &Evaluation<i64>) -> String {
    let layout = evaluation.layout();
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", evaluation.expr.trim());

    out.push_str(&chain_table(evaluation));
    out.push('\n');

    let numel = layout.numel();
    let noun = if numel == 1 { "element" } else { "elements" };
    let _ = writeln!(out, "shape     {:?}  ({numel} {noun})", layout.shape());
    let _ = writeln!(
        out,
        "strides   {:?}  (in elements: +1 on index k moves strides[k] cells)",
        layout.strides()
    );
    let _ = writeln!(out, "offset    {}", layout.offset());
    let _ = writeln!(out, "formula   {}", formula(layout));
    let _ = writeln!(out, "          {}", ranges(layout));
    let storage_note = if evaluation.shares_storage() {
        format!(
            "{} elements, shared with arange({}) — no data was copied",
            evaluation.storage_len(),
            evaluation.steps[0].layout.numel()
        )
    } else {
        let copier = evaluation
            .steps
            .iter()
            .rev()
            .find(|s| s.copied)
            .map_or("a step".to_string(), |s| format!("`{}`", s.text));
        format!(
            "{} elements, a copy made by {copier} (the values below are that copy)",
            evaluation.storage_len()
        )
    };
    let _ = writeln!(out, "storage   {storage_note}");
    let writable = if evaluation.tensor().writable() {
        "yes".to_string()
    } else {
        "no: several elements may share one storage cell (stride 0 or overlap), \
         so the view is read-only"
            .to_string()
    };
    let _ = writeln!(out, "writable  {writable}");
    let _ = writeln!(out, "C-contiguous  {}", contiguity_line(layout, Order::C));
    let _ = writeln!(out, "F-contiguous  {}", contiguity_line(layout, Order::F));
    out.push('\n');

    if evaluation.storage_len() <= STRIP_MAX_CELLS
        && evaluation.storage_len() > 0
        && numel <= STRIP_MAX_VISITS
    {
        out.push_str(&storage_strip(evaluation));
        out.push('\n');
    } else if let Some((low, high)) = layout.reachable_range() {
        let _ = writeln!(
            out,
            "storage cells: the view reads cells {low}..={high} of {} (a strip of cells is \
             drawn for storages of at most {STRIP_MAX_CELLS} cells read by at most \
             {STRIP_MAX_VISITS} elements)\n",
            evaluation.storage_len()
        );
    }

    if numel <= VALUES_MAX_SHOWN {
        let values = evaluation.values();
        let _ = writeln!(
            out,
            "values (logical C order)\n  {}",
            nested_values(layout.shape(), &values).replace('\n', "\n  ")
        );
    } else {
        let head: Vec<String> = layout
            .offsets()
            .take(16)
            .map(|o| evaluation.storage()[o].to_string())
            .collect();
        let _ = writeln!(
            out,
            "values (logical C order, first 16 of {numel})\n  {}, ...",
            head.join(", ")
        );
    }
    out
}
