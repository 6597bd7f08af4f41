//! The data-TLB section `sim --tlb 4k|2m` appends to its text (kernels, `--loop` and
//! `--trace` alike): where the levels came from, one row per level with its geometry, source
//! and simulated counts, then the library's findings.

use crate::cli::text::table::{Align, TextTable};
use crate::harness::sim::tlb::TlbReport;
use crate::units::{format_bytes_exact, format_count, format_share};

/// The section, from a blank line on.
pub(crate) fn tlb_text(report: &TlbReport) -> String {
    let mut text = format!(
        "\ndata TLB (simulated, {} pages, LRU; levels: {})\n",
        format_bytes_exact(report.page_bytes),
        report.origin
    );
    let right = |h| (h, Align::Right);
    let mut table = TextTable::new(&[
        ("level", Align::Left),
        right("entries"),
        right("ways"),
        right("sets"),
        right("lookups"),
        right("misses"),
        right("miss/access"),
        ("source", Align::Left),
    ]);
    for level in &report.levels {
        table.push(vec![
            level.name.clone(),
            format_count(u64::from(level.entries)),
            if level.ways == level.entries {
                "full".to_string()
            } else {
                level.ways.to_string()
            },
            level.sets.to_string(),
            format_count(level.lookups),
            format_count(level.misses),
            format_share(level.misses, report.accesses),
            level.source.clone(),
        ]);
    }
    text.push_str(&table.render(""));
    for finding in &report.findings {
        text.push_str(&format!("tlb   {finding}\n"));
    }
    text
}
