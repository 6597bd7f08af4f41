//! The data TLB beside a simulated run (`sim … --tlb 4k|2m`): the same access stream the
//! caches see, fed through [`crate::cache::tlb::TlbSim`] by a [`Tee`](crate::cache::tee::Tee), and the result as a
//! [`TlbReport`] — per level its geometry, where that came from, lookups, misses and misses
//! per access (all simulated), the stream's footprint in pages of both sizes (counted), and
//! sentences derived from those numbers. `cli::text::sim_tlb` lays it out; its JSON is the
//! `tlb` object of `sim --json`.

use serde::Serialize;

use crate::cache::tlb::{PageSize, TlbChoice, sim::TlbStats};
use crate::units::{format_count, format_share};

/// One TLB level's geometry and counts.
#[derive(Debug, Clone, Serialize)]
pub struct TlbLevelOutput {
    pub name: String,
    pub entries: u32,
    pub ways: u32,
    pub sets: u32,
    pub page_bytes: u64,
    /// Where entries and ways came from: a CPUID leaf, a preset, or an assumption.
    pub source: String,
    /// Simulated: accesses that reached the level.
    pub lookups: u64,
    /// Simulated: lookups that missed (at the last level, page walks).
    pub misses: u64,
    /// Simulated: misses ÷ the stream's accesses.
    pub misses_per_access: f64,
}

/// The TLB's side of a simulated run.
#[derive(Debug, Clone, Serialize)]
pub struct TlbReport {
    /// The levels' counts are simulated (LRU, cold unless warm); the footprint is counted.
    pub source: &'static str,
    pub page: PageSize,
    pub page_bytes: u64,
    /// Where the levels came from, in words (a preset standing in for CPUID says so).
    pub origin: String,
    pub accesses: u64,
    /// Accesses on another page than the access before ended on (counted).
    pub page_changes: u64,
    /// Distinct pages of `page_bytes` touched (counted).
    pub pages: u64,
    /// Distinct pages of the other size (2 MiB for a 4 KiB run, 4 KiB for a 2 MiB one).
    pub other_page_bytes: u64,
    pub other_pages: u64,
    /// The page counts stopped at `cache::tlb::sim::MAX_COUNTED_PAGES` (lower bounds).
    pub pages_capped: bool,
    pub levels: Vec<TlbLevelOutput>,
    /// Sentences derived from the numbers above.
    pub findings: Vec<String>,
}

/// The report of a TLB simulation of `choice`'s levels that counted `stats`.
pub fn tlb_report(choice: &TlbChoice, stats: &TlbStats) -> TlbReport {
    let page = choice.levels.first().map_or(PageSize::Small, |l| l.page);
    let per_access = |n: u64| {
        if stats.accesses == 0 {
            0.0
        } else {
            n as f64 / stats.accesses as f64
        }
    };
    let levels: Vec<TlbLevelOutput> = choice
        .levels
        .iter()
        .zip(&stats.levels)
        .map(|(level, counts)| TlbLevelOutput {
            name: level.name.clone(),
            entries: level.entries,
            ways: level.ways,
            sets: level.sets(),
            page_bytes: level.page.bytes(),
            source: level.source.clone(),
            lookups: counts.lookups,
            misses: counts.misses,
            misses_per_access: per_access(counts.misses),
        })
        .collect();
    let mut report = TlbReport {
        source: "simulated",
        page,
        page_bytes: page.bytes(),
        origin: choice.origin.clone(),
        accesses: stats.accesses,
        page_changes: stats.page_changes,
        pages: stats.footprint.pages(page),
        other_page_bytes: page.other().bytes(),
        other_pages: stats.footprint.pages(page.other()),
        pages_capped: stats.footprint.capped(),
        levels,
        findings: Vec::new(),
    };
    report.findings = findings(&report);
    report
}

/// What the numbers say: how often the stream changes page, its footprint against the first
/// level's entries and in the other page size, and how many accesses end in a page walk.
fn findings(report: &TlbReport) -> Vec<String> {
    let Some(first) = report.levels.first() else {
        return Vec::new();
    };
    if report.accesses == 0 {
        return vec!["the stream made no accesses".into()];
    }
    let at_least = if report.pages_capped { "at least " } else { "" };
    let label = PageSize::of_bytes(report.page_bytes).map_or("", PageSize::label);
    let other = PageSize::of_bytes(report.other_page_bytes).map_or("", PageSize::label);
    let fits = if report.pages > u64::from(first.entries) {
        "more than"
    } else {
        "within"
    };
    let mut out = vec![format!(
        "the stream moves to another {label} page on {} of its accesses and touches {at_least}{} \
         pages in all, {fits} the {}'s {} entries: with {other} pages it would touch {at_least}{}",
        format_share(report.page_changes, report.accesses),
        format_count(report.pages),
        first.name,
        first.entries,
        format_count(report.other_pages),
    )];
    if let (Some(last), true) = (report.levels.last(), report.levels.len() > 1) {
        out.push(format!(
            "{} of {} accesses miss the {} ({}); {} of those miss the {} too and walk the \
             page tables ({} of accesses)",
            format_count(first.misses),
            format_count(report.accesses),
            first.name,
            format_share(first.misses, report.accesses),
            format_count(last.misses),
            last.name,
            format_share(last.misses, report.accesses),
        ));
    } else {
        out.push(format!(
            "{} of {} accesses miss the {}, the only level, and walk the page tables ({})",
            format_count(first.misses),
            format_count(report.accesses),
            first.name,
            format_share(first.misses, report.accesses),
        ));
    }
    out
}
