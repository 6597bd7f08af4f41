//! The text form of a simulated loop nest ([`LoopReport`]): the arrays as placed, the whole
//! nest's counts and 3C split per level, the same per array reference with the sets its
//! conflict misses fell in, the model of each reference's innermost step, the findings and
//! the padding search — all computed in `harness::sim::loops`; this file lays them out.

use std::fmt::Write as _;

use crate::cli::text::table::{Align, TextTable, wrap};
use crate::harness::sim::loops::{LoopReport, LoopSimError, PaddingOutput};
use crate::layout::describe::caret;
use crate::units::{format_bytes_exact, format_count, format_share as percent};

/// Width the sentences wrap at.
const WIDTH: usize = 100;

/// `error: …`, and the text with a caret under the column a parse error points at.
pub fn error_text(err: &LoopSimError) -> String {
    let mut text = format!("error: {err}\n");
    if let LoopSimError::Nest(nest) = err
        && let Some((input, column)) = nest.caret()
    {
        text.push_str(&caret(input, column));
    }
    text
}

pub fn loop_text(report: &LoopReport) -> String {
    let mut text = String::new();
    let start = if report.warm { "warm" } else { "cold" };
    let _ = writeln!(
        text,
        "{}\n— simulated ({} replacement, {start} start, cachegrind semantics)",
        report.loop_text,
        report.policy.title()
    );
    let _ = writeln!(text, "caches: {}", report.geometry_source);
    for warning in &report.warnings {
        let _ = writeln!(text, "warning: {warning}");
    }
    for array in &report.arrays {
        let _ = writeln!(
            text,
            "array {:<24} at {:#x}, {}, strides {:?} elements",
            array.declaration,
            array.base_address,
            format_bytes_exact(array.bytes),
            array.strides
        );
    }
    let _ = writeln!(
        text,
        "{} iterations, {} accesses reach the first level\n",
        format_count(report.iterations),
        format_count(report.accesses)
    );
    nest_table(&mut text, report);
    references_table(&mut text, report);
    let _ = writeln!(text, "\nwhy (set/GCD model of one innermost run, analytic)");
    for reference in &report.references {
        text.push_str(&indented(&reference.stride, "  ", "    "));
        for line in &reference.model {
            text.push_str(&indented(line, "    ", "      "));
        }
    }
    if !report.findings.is_empty() {
        let _ = writeln!(text, "\nfindings (simulated)");
        for finding in &report.findings {
            text.push_str(&indented(finding, "  ", "    "));
        }
    }
    for padding in &report.padding {
        padding_table(&mut text, report, padding);
    }
    text
}

fn nest_table(text: &mut String, report: &LoopReport) {
    let right = |h| (h, Align::Right);
    let mut table = TextTable::new(&[
        ("level", Align::Left),
        right("size"),
        right("ways"),
        right("sets"),
        right("loads"),
        right("stores"),
        right("misses"),
        right("miss"),
        right("compulsory"),
        right("capacity"),
        right("conflict"),
    ]);
    for level in &report.levels {
        let c = &level.counts;
        table.push(vec![
            c.name.clone(),
            format_bytes_exact(c.size),
            format_count(c.ways),
            format_count(c.sets),
            format_count(c.loads),
            format_count(c.stores),
            format_count(c.misses),
            percent(c.misses, c.loads + c.stores),
            format_count(c.compulsory),
            format_count(c.capacity),
            format_count(c.conflict),
        ]);
    }
    let _ = writeln!(text, "whole nest (simulated)");
    text.push_str(&table.render(""));
}

fn references_table(text: &mut String, report: &LoopReport) {
    let _ = writeln!(
        text,
        "\nper array reference (simulated, each access counted to its reference)"
    );
    if let Some(why) = &report.attribution_skipped {
        let _ = writeln!(text, "  not counted: {why}");
        return;
    }
    let right = |h| (h, Align::Right);
    let mut table = TextTable::new(&[
        ("reference", Align::Left),
        right("stmt"),
        ("level", Align::Left),
        right("accesses"),
        right("misses"),
        right("compulsory"),
        right("capacity"),
        right("conflict"),
        ("conflict sets (most)", Align::Left),
    ]);
    for reference in &report.references {
        for level in &reference.levels {
            let sets = if level.conflict_sets == 0 {
                String::new()
            } else {
                let top: Vec<String> = level
                    .top_conflict_sets
                    .iter()
                    .map(|(set, n)| format!("{set}×{}", format_count(*n)))
                    .collect();
                format!(
                    "{} sets: {}",
                    format_count(level.conflict_sets),
                    top.join(" ")
                )
            };
            table.push(vec![
                reference.reference.clone(),
                reference.statement.to_string(),
                level.level.clone(),
                format_count(level.loads + level.stores),
                format_count(level.misses),
                format_count(level.compulsory),
                format_count(level.capacity),
                format_count(level.conflict),
                sets,
            ]);
        }
    }
    text.push_str(&table.render(""));
}

fn padding_table(text: &mut String, report: &LoopReport, padding: &PaddingOutput) {
    let _ = writeln!(
        text,
        "\npadding {} (each leading dimension re-simulated: whole-nest conflict misses per level)",
        padding.array
    );
    let mut columns = vec![("ld", Align::Right)];
    let names: Vec<String> = report
        .levels
        .iter()
        .map(|l| l.counts.name.clone())
        .collect();
    columns.extend(names.iter().map(|n| (n.as_str(), Align::Right)));
    columns.push(("all misses", Align::Right));
    columns.push(("", Align::Left));
    let mut table = TextTable::new(&columns);
    let mut row = |ld: usize, conflict: &[u64], misses: &[u64], note: &str| {
        let mut cells = vec![ld.to_string()];
        cells.extend(conflict.iter().map(|&c| format_count(c)));
        cells.push(format_count(misses.iter().sum()));
        cells.push(note.to_string());
        table.push(cells);
    };
    row(
        padding.ld,
        &padding.conflict_before,
        &padding.misses_before,
        "as declared",
    );
    for (k, candidate) in padding.candidates.iter().enumerate() {
        let note = if padding.best == Some(k) { "best" } else { "" };
        row(candidate.ld, &candidate.conflict, &candidate.misses, note);
    }
    text.push_str(&table.render("  "));
    text.push_str(&indented(&padding.sentence, "  ", "    "));
}

/// `text` wrapped at [`WIDTH`], its first line after `first`, the others after `rest`.
fn indented(text: &str, first: &str, rest: &str) -> String {
    format!("{first}{}", wrap(text, WIDTH - first.len(), rest))
}
