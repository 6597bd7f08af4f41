//! The text summary of a results document as `stridelab run` prints it: one table per run of
//! consecutive points of a kernel, the parameters they share hoisted into its header line, one
//! row per point with its timing (auto-scaled), precision marks and simulated misses (exact,
//! grouped), every line at most [`MAX_WIDTH`] characters; footnotes say what each column is.
//! What the summary concludes — the headline, each point's problem, the footnotes, the
//! precision warnings — is `harness::run::verdicts`'; this file lays it out and names points.

use std::fmt::Write as _;

use crate::cli::text::run_blocks::{Block, blocks};
use crate::cli::text::table::{Align, Column, MISSING, table, wrap};
use crate::harness::measure::precision::{mark, percent};
use crate::harness::run::verdicts::{
    PointProblem, Shown, TIMED_FIGURES, failure_sentences, footnotes, headline,
    interrupted_sentence, measured_over_model_cell, point_problem, precision_findings,
    requested_gb_per_s,
};
use crate::results::{PointRecord, ResultsDocument};
use crate::units::{format_count, format_duration_ns, format_significant, format_time_ratio};

/// The widest line the summary prints: tables that would be wider put the simulated misses in
/// a second table under the timing one.
pub const MAX_WIDTH: usize = 120;

/// Footnotes wrap narrower than the tables: prose reads badly across 120 columns.
const NOTE_WIDTH: usize = 100;

const INDENT: &str = "  ";

/// The summary `stridelab run` prints: a headline, and unless `quiet` the tables and their
/// footnotes.
pub fn run_summary(doc: &ResultsDocument, quiet: bool) -> String {
    let mut out = headline(doc);
    out.push('\n');
    if quiet {
        return out;
    }
    let mut seen = Shown::default();
    for block in blocks(&doc.records) {
        out.push('\n');
        out.push_str(&render_block(&block, &mut seen));
    }
    out.push('\n');
    for note in footnotes(doc, &seen) {
        out.push_str(&wrap(&note, NOTE_WIDTH, INDENT));
    }
    out
}

/// The header line of a block: the kernel, what its rows share, and what kind of points they
/// are when they come from a geometry sweep.
fn block_header(block: &[PointRecord], shared: &[String]) -> String {
    let first = &block[0];
    // Parameters read as the command line wrote them; the thread count is not one.
    let (params, others): (Vec<&String>, Vec<&String>) =
        shared.iter().partition(|w| w.contains('='));
    let params: Vec<&str> = params.iter().map(|w| w.as_str()).collect();
    let mut parts: Vec<&str> = Vec::new();
    let joined = params.join(" ");
    if !joined.is_empty() {
        parts.push(&joined);
    }
    parts.extend(others.iter().map(|w| w.as_str()));
    let mut header = format!("{}: {}", first.kernel, parts.join(" · "));
    if let Some(sweep) = &first.sweep {
        let on = sweep
            .preset
            .as_ref()
            .map(|p| format!(" on preset {p}"))
            .unwrap_or_default();
        if sweep.timed {
            let _ = write!(header, " · {} sweep", sweep.level);
        } else {
            let _ = write!(header, " · {} sweep, simulated only{on}", sweep.level);
        }
    }
    wrap(&header, MAX_WIDTH, INDENT)
}

/// The levels the block's simulations name, in the order of the first that names each.
fn level_names(block: &[PointRecord]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for level in block
        .iter()
        .filter_map(|r| r.simulated.as_ref())
        .flat_map(|s| &s.levels)
    {
        if !names.contains(&level.name) {
            names.push(level.name.clone());
        }
    }
    names
}

/// One block's table(s): timing and misses side by side when that fits in [`MAX_WIDTH`],
/// else one under the other.
fn render_block(table_of: &Block, seen: &mut Shown) -> String {
    let block = table_of.records;
    let levels = level_names(block);
    let first_per_element = block
        .iter()
        .find_map(|r| r.timing.as_ref().map(|t| t.ns_per_element));
    let timed = block.iter().any(|r| r.timing.is_some());
    let mut timing_columns: Vec<Column> = Vec::new();
    if timed {
        timing_columns = timing_cells(block, first_per_element);
    }
    timing_columns.push(problem_column(block, seen));
    let miss_columns = miss_cells(block, &levels, seen);
    let label = Column::new("point", Align::Left, table_of.labels.clone());
    let keep = |columns: Vec<Column>| -> Vec<Column> {
        columns.into_iter().filter(Column::has_values).collect()
    };
    let (timing_columns, miss_columns) = (keep(timing_columns), keep(miss_columns));
    for column in &timing_columns {
        if !seen.columns.contains(&column.header) {
            seen.columns.push(column.header.clone());
        }
    }
    let with_label = |rest: &[Column]| -> Vec<Column> {
        let mut columns: Vec<Column> = Vec::new();
        if label.has_values() {
            columns.push(label.clone());
        }
        columns.extend(rest.iter().cloned());
        columns
    };
    let mut out = block_header(block, &table_of.shared);
    let together = table(&with_label(
        &[timing_columns.clone(), miss_columns.clone()].concat(),
    ));
    if together.width(INDENT) <= MAX_WIDTH || timing_columns.is_empty() || miss_columns.is_empty() {
        out.push_str(&together.render(INDENT));
    } else {
        out.push_str(&table(&with_label(&timing_columns)).render(INDENT));
        out.push_str(&table(&with_label(&miss_columns)).render(INDENT));
    }
    // What each `expr #k` of the labels stands for (a view expression is too long for one).
    for line in &table_of.legend {
        out.push_str(INDENT);
        out.push_str(&wrap(line, MAX_WIDTH - INDENT.len(), "      "));
    }
    out
}

/// time/run, CI, time/elem, vs first, GB/s, vs ref, ÷ model: one column each.
fn timing_cells(block: &[PointRecord], first: Option<f64>) -> Vec<Column> {
    let mut columns = TIMED_FIGURES.map(|(header, _)| (header, Vec::new()));
    let several = block.iter().filter(|r| r.timing.is_some()).count() > 1;
    for (i, r) in block.iter().enumerate() {
        let t = r.timing.as_ref();
        let is_first = block[..i].iter().all(|r| r.timing.is_none());
        let vs_first = match (t, first) {
            (Some(_), Some(_)) if is_first && several => "(first)".to_string(),
            (Some(t), Some(first)) if several => format_time_ratio(t.ns_per_element / first),
            _ => MISSING.into(),
        };
        let vs_ref = r
            .reference
            .as_ref()
            .map(|c| format_time_ratio(1.0 / c.ratio));
        let cells = [
            t.map(|t| format_duration_ns(t.ns_per_run.median)),
            t.map(|t| percent(t.ns_per_run.relative_ci_width())),
            t.map(|t| format_duration_ns(t.ns_per_element)),
            Some(vs_first),
            requested_gb_per_s(r).map(format_significant),
            vs_ref,
            measured_over_model_cell(r),
        ];
        for ((_, column), cell) in columns.iter_mut().zip(cells) {
            column.push(cell.unwrap_or_else(|| MISSING.into()));
        }
    }
    columns
        .into_iter()
        .map(|(header, cells)| Column::new(header, Align::Right, cells))
        .collect()
}

/// One column per level: `misses (conflict)`, `≥` before a simulated prefix's counts.
fn miss_cells(block: &[PointRecord], levels: &[String], seen: &mut Shown) -> Vec<Column> {
    levels
        .iter()
        .map(|name| {
            let cells = block
                .iter()
                .map(|r| {
                    let Some(s) = r.simulated.as_ref() else {
                        return MISSING.to_string();
                    };
                    let Some(l) = s.levels.iter().find(|l| &l.name == name) else {
                        return MISSING.to_string();
                    };
                    seen.simulated = true;
                    let prefix = s.scope.kind == "prefix";
                    seen.prefix |= prefix;
                    format!(
                        "{}{} ({})",
                        if prefix { "≥" } else { "" },
                        format_count(l.misses),
                        format_count(l.conflict)
                    )
                })
                .collect();
            Column::new(&format!("{name} miss"), Align::Right, cells)
        })
        .collect()
}

/// The `!` column: precision marks of a timing, or why a point has no numbers.
fn problem_column(block: &[PointRecord], seen: &mut Shown) -> Column {
    let cells = block
        .iter()
        .map(|r| match point_problem(r) {
            PointProblem::WrongChecksum => "WRONG checksum".to_string(),
            PointProblem::Failed { stage } => format!("error: {stage}"),
            PointProblem::Imprecise(warnings) => {
                for w in warnings {
                    if !seen.warnings.contains(w) {
                        seen.warnings.push(*w);
                    }
                }
                let marks: Vec<&str> = warnings.iter().map(|w| mark(*w)).collect();
                marks.join(" ")
            }
        })
        .collect();
    Column::new("!", Align::Left, cells)
}

/// Each record's name as its table shows it: the kernel and the parameters that vary in its
/// table (the kernel alone for a table of one).
fn point_names(doc: &ResultsDocument) -> Vec<(usize, String)> {
    blocks(&doc.records)
        .into_iter()
        .flat_map(|block| {
            block
                .records
                .iter()
                .zip(block.full_labels)
                .map(|(r, label)| {
                    let name = format!("{} {label}", r.kernel);
                    (r.index, name.trim_end().to_string())
                })
        })
        .collect()
}

/// One warning line per kind of precision warning any timed point of `doc` carries, as
/// hyperfine warns (`harness::run::verdicts`), each point named as its table names it.
pub fn precision_warnings(doc: &ResultsDocument) -> Vec<String> {
    let names = point_names(doc);
    let name_of = |index: usize| {
        names
            .iter()
            .find(|(i, _)| *i == index)
            .map_or_else(|| format!("point {index}"), |(_, n)| n.clone())
    };
    precision_findings(doc)
        .iter()
        .map(|finding| {
            let line = finding.sentence(name_of);
            wrap(&line, NOTE_WIDTH, INDENT).trim_end().to_string()
        })
        .collect()
}

/// Warnings about error rows, imprecise timings and an interrupted run (the file has the
/// details).
pub fn problems(doc: &ResultsDocument) -> Vec<String> {
    let mut lines = failure_sentences(doc);
    lines.extend(precision_warnings(doc));
    lines.extend(interrupted_sentence(doc));
    lines
}

#[cfg(test)]
mod tests;
