//! The text summary of a results document as `stridelab run` prints it: one row per point with
//! its timing, checksum, speed relative to the reference and to the kernel's first point, and
//! the simulated misses per level.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::harness::catalogue_link::params_with_bytes;
use crate::results::{ChecksumOutcome, PointRecord, ResultsDocument, RunStatus};

/// The summary `stridelab run` prints: a headline, and unless `quiet` one row per point.
pub fn run_summary(doc: &ResultsDocument, quiet: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "suite {} ({}): {} points in {:.1} s{}",
        doc.suite.name,
        doc.suite.source,
        doc.records.len(),
        doc.wall_s,
        if doc.status == RunStatus::Interrupted {
            " — interrupted"
        } else {
            ""
        }
    );
    if quiet {
        return out;
    }
    let _ = writeln!(
        out,
        "{:<72} {:>3} {:>6} {:>12} {:>7} {:>9} {:>7} {:>6} {:>7}  simulated misses per level (conflict)",
        "point", "thr", "check", "ns/run", "±CI %", "ns/elem", "GB/s", "×ref", "×first"
    );
    let mut first_ns_per_element: BTreeMap<&str, f64> = BTreeMap::new();
    for r in &doc.records {
        let _ = writeln!(out, "{}", point_row(r, &mut first_ns_per_element));
    }
    let _ = writeln!(
        out,
        "timed: ns/run is the median of the samples with its bootstrap 95% CI width; ×ref is GB/s \
         over the same-run copy/read reference; ×first is the speed relative to the kernel's first \
         point. simulated: misses of one cold run (conflict misses of the 3C split in brackets)."
    );
    if let Some(hw) = doc.records.iter().find_map(|r| r.counters.as_ref())
        && !hw.hardware.available
    {
        let _ = writeln!(
            out,
            "measured: hardware counters unavailable ({}); software counters in the results file.",
            hw.hardware.reason.as_deref().unwrap_or("no reason given")
        );
    }
    out
}

/// One point's row; `first_ns_per_element` remembers each kernel's first point.
fn point_row<'a>(r: &'a PointRecord, first_ns_per_element: &mut BTreeMap<&'a str, f64>) -> String {
    let mut label = format!("{} {}", r.kernel, params_with_bytes(&r.kernel, &r.params));
    if label.chars().count() > 72 {
        label = label.chars().take(71).collect();
        label.push('…');
    }
    let t = r.timing.as_ref();
    let cell = |v: Option<f64>, prec: usize| {
        v.map(|x| format!("{x:.prec$}"))
            .unwrap_or_else(|| "-".into())
    };
    // Speed relative to the first point of the same kernel in this run (>1: faster).
    let relative = t.map(|t| {
        let first = *first_ns_per_element
            .entry(r.kernel.as_str())
            .or_insert(t.ns_per_element);
        first / t.ns_per_element
    });
    let simulated = r
        .simulated
        .as_ref()
        .map(|s| {
            s.levels
                .iter()
                .map(|l| format!("{} {} ({})", l.name, compact(l.misses), compact(l.conflict)))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_else(|| "-".into());
    let check = match r.checksum.status {
        ChecksumOutcome::Ok => "ok",
        ChecksumOutcome::Mismatch => "WRONG",
        ChecksumOutcome::NotRun => "-",
    };
    format!(
        "{:<72} {:>3} {:>6} {:>12} {:>7} {:>9} {:>7} {:>6} {:>7}  {}",
        label,
        r.threads,
        check,
        cell(t.map(|t| t.ns_per_run.median), 0),
        cell(t.map(|t| t.ns_per_run.relative_ci_width() * 100.0), 1),
        cell(t.map(|t| t.ns_per_element), 3),
        cell(t.and_then(|t| t.gb_per_s), 2),
        cell(r.reference.as_ref().map(|c| c.ratio), 2),
        cell(relative, 2),
        simulated
    )
}

/// 1234567 → "1.23M": misses at a glance.
pub(crate) fn compact(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}K", n as f64 / 1e3),
        _ => format!("{:.2}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_compacted_at_a_glance() {
        assert_eq!(compact(999), "999");
        assert_eq!(compact(1_500), "1.5K");
        assert_eq!(compact(1_234_567), "1.23M");
    }

    #[test]
    fn a_quiet_summary_is_the_headline_alone() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/gate/recorded.json"
        );
        let doc =
            ResultsDocument::read(std::path::Path::new(path), &crate::kernels::CATALOGUE_RULES)
                .unwrap();
        let quiet = run_summary(&doc, true);
        assert_eq!(quiet.lines().count(), 1, "{quiet}");
        assert!(
            quiet.starts_with(&format!("suite {} (", doc.suite.name)),
            "{quiet}"
        );
        let full = run_summary(&doc, false);
        assert!(full.lines().count() >= doc.records.len() + 3, "{full}");
        assert!(full.contains("×first"), "{full}");
    }
}
