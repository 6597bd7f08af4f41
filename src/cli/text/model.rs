//! The time model's probes as `stridelab model` and `run` print them: a progress line per probe
//! on stderr, and one row per level of medians with their sample ranges.

use std::io::Write as _;

use crate::cli::text::table::{Align, Column, table};
use crate::harness::time_model::ProbeProgress;
use crate::results::time_model::{Interval, MachineModel};
use crate::units::{format_bytes_exact, format_significant};

/// A progress printer for the probes: one line per probe on stderr, nothing when `quiet`.
pub(crate) fn probe_progress(quiet: bool) -> impl FnMut(ProbeProgress<'_>) {
    move |p: ProbeProgress<'_>| {
        if !quiet {
            eprintln!(
                "probing [{}/{}] {} ({} working set): {}",
                p.done + 1,
                p.total,
                p.level,
                format_bytes_exact(p.working_set),
                p.probe
            );
            let _ = std::io::stderr().flush();
        }
    }
}

/// `median (low–high)` scaled by `scale`.
fn cell(interval: &Interval, scale: f64) -> String {
    format!(
        "{} ({}–{})",
        format_significant(interval.median * scale),
        format_significant(interval.low * scale),
        format_significant(interval.high * scale)
    )
}

/// The probes' table, its provenance line first and the skipped levels after.
pub(crate) fn model_table(model: &MachineModel) -> String {
    let mut out = format!(
        "time model of {} (measured: medians of each probe's samples, their range in brackets; load average {} when probing began)\n",
        model.cpu_model,
        model
            .load_average
            .map_or_else(|| "unknown".into(), |l| format!("{l:.2}"))
    );
    let levels: Vec<_> = model.levels.iter().chain([&model.memory]).collect();
    let gb = 1e-9;
    let columns = [
        Column::new(
            "level",
            Align::Left,
            levels.iter().map(|l| l.name.clone()).collect(),
        ),
        Column::new(
            "working set",
            Align::Right,
            levels
                .iter()
                .map(|l| format_bytes_exact(l.working_set))
                .collect(),
        ),
        Column::new(
            "read GB/s",
            Align::Right,
            levels
                .iter()
                .map(|l| cell(&l.read_bytes_per_s, gb))
                .collect(),
        ),
        Column::new(
            "write GB/s",
            Align::Right,
            levels
                .iter()
                .map(|l| cell(&l.write_bytes_per_s, gb))
                .collect(),
        ),
        Column::new(
            "copy GB/s",
            Align::Right,
            levels
                .iter()
                .map(|l| cell(&l.copy_bytes_per_s, gb))
                .collect(),
        ),
        Column::new(
            "latency ns",
            Align::Right,
            levels.iter().map(|l| cell(&l.latency_ns, 1.0)).collect(),
        ),
    ];
    out.push_str(&table(&columns).render("  "));
    for s in &model.skipped {
        out.push_str(&format!(
            "  {} ({}) not probed, its traffic priced as memory: {}\n",
            s.name,
            format_bytes_exact(s.size),
            s.reason
        ));
    }
    out
}
