//! The text form of a simulated trace ([`TraceReport`]): what was read (records by kind,
//! counted), the counts per level and their 3C split (simulated, `sim`'s own tables), the
//! busiest sets of each level (counted) and the histogram of address steps (counted). Each
//! section's title says whether its figures are simulated or counted.

use std::fmt::Write as _;

use crate::cache::geometry::warning_lines;
use crate::cli::text::sim::{DOUBTED, causes_table, counts_table, marked_name};
use crate::cli::text::table::{Align, TextTable};
use crate::harness::sim::trace::TraceReport;
use crate::harness::sim::trace_figures::{Direction, StepBucket};
use crate::units::{format_bytes_exact, format_count, format_share as percent, format_significant};

/// Everything a person reads about a simulated trace.
pub fn trace_text(report: &TraceReport) -> String {
    let mut text = String::new();
    let how = if report.format_detected {
        "detected"
    } else {
        "named"
    };
    let gzip = if report.compressed { ", gzip" } else { "" };
    let _ = writeln!(
        text,
        "trace {} ({} format, {how}{gzip}) — simulated ({} replacement, cold start, \
         cachegrind semantics)",
        report.trace,
        report.format.name(),
        report.policy.title()
    );
    let _ = writeln!(text, "caches: {}", report.geometry_source);
    let uses = format!("the rows marked {DOUBTED} simulate these levels");
    for line in warning_lines(&report.warnings, &uses) {
        let _ = writeln!(text, "{line}");
    }
    records_table(&mut text, report);
    let _ = writeln!(
        text,
        "\n{} accesses reach the first level (simulated)\n",
        format_count(report.accesses)
    );
    counts_table(&mut text, &report.levels);
    causes_table(&mut text, &report.levels);
    sets_tables(&mut text, report);
    steps_table(&mut text, report);
    text
}

fn records_table(text: &mut String, report: &TraceReport) {
    let counts = &report.records.counts;
    let _ = writeln!(text, "\nrecords read ({})", report.records.source);
    let mut table = TextTable::new(&[("record", Align::Left), ("lines", Align::Right)]);
    let rows = [
        ("loads", counts.loads),
        ("stores", counts.stores),
        ("modifies (one load each)", counts.modifies),
        ("instruction fetches (skipped)", counts.instruction_fetches),
        ("escapes and flushes (skipped)", counts.other_records),
        ("bad lines (skipped)", counts.bad_lines),
        ("blank, comment, banner", counts.not_records),
        ("all lines", counts.lines),
    ];
    for (what, count) in rows {
        table.push(vec![what.to_string(), format_count(count)]);
    }
    text.push_str(&table.render(""));
}

fn sets_tables(text: &mut String, report: &TraceReport) {
    for (sets, level) in report.busiest_sets.iter().zip(&report.levels) {
        let _ = writeln!(
            text,
            "\n{} sets most loads map to ({}, at this level's geometry, every load of the \
             trace): {} of {} sets used, {} loads per set if spread evenly",
            marked_name(&sets.level, &level.warnings),
            report.busiest_sets_source,
            format_count(sets.sets_used),
            format_count(sets.sets),
            format_significant(sets.even_share),
        );
        let mut table = TextTable::new(&[
            ("set", Align::Right),
            ("loads", Align::Right),
            ("of all loads", Align::Right),
        ]);
        for set in &sets.top {
            table.push(vec![
                format_count(set.set),
                format_count(set.loads),
                percent(set.loads, sets.loads),
            ]);
        }
        text.push_str(&table.render(""));
    }
}

fn steps_table(text: &mut String, report: &TraceReport) {
    let steps = &report.steps;
    let _ = writeln!(
        text,
        "\nsteps between consecutive data accesses ({}; {} B lines)",
        report.steps_source,
        format_count(steps.line)
    );
    let mut table = TextTable::new(&[
        ("step", Align::Left),
        ("steps", Align::Right),
        ("share", Align::Right),
    ]);
    for bucket in &steps.buckets {
        table.push(vec![
            step_label(bucket),
            format_count(bucket.steps),
            percent(bucket.steps, steps.steps),
        ]);
    }
    text.push_str(&table.render(""));
}

/// `0 (same address)`, `+[1 B, 64 B]`, `-(64 B, 128 B]`: the step's sign, then the range of
/// its size.
fn step_label(bucket: &StepBucket) -> String {
    let sign = match bucket.direction {
        Direction::Same => return "0 (same address)".to_string(),
        Direction::Up => "+",
        Direction::Down => "-",
    };
    let max = format_bytes_exact(bucket.max_bytes);
    if bucket.min_bytes == 1 {
        format!("{sign}[1 B, {max}]")
    } else {
        format!(
            "{sign}({}, {max}]",
            format_bytes_exact(bucket.min_bytes - 1)
        )
    }
}
