//! `run --loop`'s text: the nest, its measured time and the simulated misses of the same stream.

use std::fmt::Write as _;

use crate::harness::loop_run::LoopRunReport;
use crate::units::format_count_from_five_digits as grouped;

/// The report as `run --loop` prints it, every figure labelled measured, derived or simulated.
pub fn run_loop_text(report: &LoopRunReport) -> String {
    let mut out = String::new();
    let t = &report.timing.ns_per_run;
    let _ = writeln!(out, "loop: {}", report.nest);
    for (decl, base) in report.arrays.iter().zip(&report.bases) {
        let _ = writeln!(out, "  array {decl} at {base:#x}");
    }
    let _ = writeln!(
        out,
        "time (measured, 1 pinned thread, {} samples): median {:.3} ms, 95% CI {:.3}–{:.3} ms",
        t.n,
        t.median / 1e6,
        t.ci_low / 1e6,
        t.ci_high / 1e6
    );
    let _ = writeln!(
        out,
        "  {:.2} ns per access over {} loads and stores (derived)",
        report.ns_per_access,
        grouped(report.accesses)
    );
    let _ = writeln!(
        out,
        "misses of one cold run (simulated, LRU, the stream timed above):"
    );
    let _ = writeln!(
        out,
        "  {:<5} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "level", "accesses", "misses", "compulsory", "capacity", "conflict"
    );
    for level in &report.simulated.levels {
        let _ = writeln!(
            out,
            "  {:<5} {:>12} {:>12} {:>12} {:>12} {:>12}",
            level.name,
            grouped(level.loads + level.stores),
            grouped(level.misses),
            grouped(level.compulsory),
            grouped(level.capacity),
            grouped(level.conflict)
        );
    }
    out
}
