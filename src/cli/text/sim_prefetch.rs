//! The text form of the hardware-prefetch model beside a simulated point, nest or trace
//! (`sim --prefetch on`): its parameters and their source, the counts in a table, and the
//! library's sentence (`cache::prefetch::PrefetchReport::finding`); and both models' sections
//! beside the caches in one place ([`beside_text`]).

use std::fmt::Write as _;

use crate::cache::prefetch::PrefetchReport;
use crate::cli::text::sim_tlb::tlb_text;
use crate::cli::text::table::{Align, TextTable};
use crate::harness::sim::tlb::TlbReport;
use crate::units::{format_count, format_share};

/// The section printed after the simulator's tables.
pub fn prefetch_text(report: &PrefetchReport) -> String {
    let model = &report.model;
    let mut text = String::new();
    let fed = if report.fed_by.is_empty() {
        "every demand access".to_string()
    } else {
        format!("the misses of {}", report.fed_by.join(" and "))
    };
    let _ = writeln!(
        text,
        "\nprefetch model ({}'s parameters) — simulated (LRU, line by line, no timing): {} \
         without and with prefetch, fed {fed}",
        model.name, report.fill_level
    );
    let next_line = if model.next_line { "on" } else { "off" };
    let _ = writeln!(
        text,
        "  next-line {next_line}; stream table {} entries (one per 4 KiB page, least recently \
         used replaced), trained after {} accesses at one line step, up to {} lines ahead, \
         never past the page",
        model.stream_entries, model.train_accesses, model.distance
    );
    let _ = writeln!(text, "  source: {}", model.source);
    for assumption in &model.assumptions {
        let _ = writeln!(text, "  assumed: {assumption}");
    }
    let c = &report.counts;
    let of_misses = |n: u64| {
        format!(
            "{} of the misses without",
            format_share(n, c.misses_without)
        )
    };
    let mut table = TextTable::new(&[
        ("", Align::Left),
        ("simulated", Align::Right),
        ("", Align::Left),
    ]);
    let rows = [
        (
            format!("{} demand line accesses", report.fill_level),
            c.fill_accesses,
            String::new(),
        ),
        (
            "misses without prefetch".into(),
            c.misses_without,
            String::new(),
        ),
        (
            "misses with prefetch".into(),
            c.misses_with,
            of_misses(c.misses_with),
        ),
        (
            "covered by the stream prefetcher".into(),
            c.covered_by_stream,
            of_misses(c.covered_by_stream),
        ),
        (
            "covered by the next-line prefetcher".into(),
            c.covered_by_next_line,
            of_misses(c.covered_by_next_line),
        ),
        (
            "prefetches issued".into(),
            report.issued,
            format!(
                "stream {}, next-line {}",
                format_count(c.issued_by_stream),
                format_count(c.issued_by_next_line)
            ),
        ),
        (
            "prefetches never used".into(),
            report.unused,
            format!(
                "{} evicted untouched, {} left at the end",
                format_count(c.unused_evicted),
                format_count(c.unused_left)
            ),
        ),
    ];
    for (label, count, note) in rows {
        table.push(vec![format!("  {label}"), format_count(count), note]);
    }
    text.push_str(&table.render(""));
    let s = &report.streams;
    let at_least = if s.max_capped { "at least " } else { "" };
    let _ = writeln!(
        text,
        "  streams: a return to a page counts the pages walked since its last access, its own \
         included: up to {at_least}{} (median {}) over {} returns; {} returns beyond the table's \
         {} entries; {} table replacements, {} of a trained entry; {} returns found their \
         page's trained stream replaced (thrash)",
        s.max,
        s.median,
        format_count(s.returning),
        format_count(s.beyond_table),
        model.stream_entries,
        format_count(s.table_evictions),
        format_count(s.trained_evicted),
        format_count(s.streams_lost)
    );
    let _ = writeln!(text, "  finding: {}", report.finding);
    text
}

/// The sections of the models fed beside the caches, in the order `sim` prints them: the data
/// TLB's (`--tlb`), then the prefetch model's (`--prefetch on`); empty for those not run.
pub(crate) fn beside_text(tlb: Option<&TlbReport>, prefetch: Option<&PrefetchReport>) -> String {
    let mut text = tlb.map(tlb_text).unwrap_or_default();
    text.push_str(&prefetch.map(prefetch_text).unwrap_or_default());
    text
}
