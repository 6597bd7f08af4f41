//! `stridelab info`'s table: the machine, its caches (detected, and simulated with
//! `--preset`/`--cache`), its data TLB as CPUID reports it, and which perf events open.

use crate::cache::geometry::{CacheLevel, ChosenGeometry};
use crate::harness::machine::MachineInfo;
use crate::harness::measure::counters::EventAvailability;
use crate::results::tlb::DtlbLevel;
use crate::units::format_size_exact;

pub(crate) fn render_table(info: &MachineInfo, chosen: Option<&ChosenGeometry>) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let cpu = info.cpu_model.as_deref().unwrap_or("unknown CPU");
    let _ = writeln!(out, "Machine");
    let _ = writeln!(
        out,
        "  CPU         {cpu} ({} logical CPUs, {}/{})",
        info.logical_cpus, info.os, info.arch
    );
    let _ = writeln!(
        out,
        "  Pages       {} B; transparent huge pages: {}",
        info.page_size,
        info.thp_mode.as_deref().unwrap_or("unknown")
    );
    let _ = writeln!(
        out,
        "  Pinning     {} ({})",
        if info.pinning.works {
            "works"
        } else {
            "unavailable"
        },
        info.pinning.detail
    );
    let b = &info.build;
    let _ = writeln!(
        out,
        "  Build       stridelab {} ({}), {}{}, target features: {}",
        b.crate_version,
        b.profile,
        b.rustc.as_deref().unwrap_or("rustc unknown"),
        b.rustc_source
            .as_deref()
            .map(|s| format!(" [{s}]"))
            .unwrap_or_default(),
        if b.target_features.is_empty() {
            "baseline".to_string()
        } else {
            b.target_features.join(" ")
        }
    );
    let _ = writeln!(out, "\nCaches (detected)");
    render_levels(&mut out, &info.caches);
    for note in &info.cache_notes {
        let _ = writeln!(out, "  note: {note}");
    }
    let doubted: Vec<&str> = info
        .caches
        .iter()
        .filter(|l| l.kind != crate::cache::geometry::CacheKind::Instruction)
        .filter(|l| !l.warnings.is_empty())
        .map(|l| l.name.as_str())
        .collect();
    if !doubted.is_empty() {
        let _ = writeln!(
            out,
            "  note: without --cache or --preset, sim, run and the main job simulate {} as \
             given, marked with the warning; --cache NAME=SIZE,WAYS,LINE replaces one level, \
             --preset NAME all of them",
            doubted.join(", ")
        );
    }
    if let Some(chosen) = chosen {
        let _ = writeln!(
            out,
            "\nSimulated hierarchy with these flags (sim, run): {}",
            chosen.describe()
        );
        render_levels(&mut out, &chosen.levels);
    }
    render_dtlb(&mut out, &info.dtlb);
    let _ = writeln!(out, "\nPerf events (measured counters)");
    for probe in &info.perf_events {
        let kind = if probe.hardware {
            "hardware"
        } else {
            "software"
        };
        let status = match &probe.availability {
            EventAvailability::Available => "available".to_string(),
            EventAvailability::Unavailable(reason) => format!("unavailable: {reason}"),
        };
        let _ = writeln!(out, "  {:<24} {kind:<9} {status}", probe.name);
    }
    out
}

/// The data TLB's levels as CPUID reports them, the rows `info --json` has as `dtlb`.
fn render_dtlb(out: &mut String, levels: &[DtlbLevel]) {
    use std::fmt::Write;
    let _ = writeln!(out, "\nData TLB (CPUID)");
    if levels.is_empty() {
        let _ = writeln!(out, "  (not reported by CPUID on this machine)");
        return;
    }
    let _ = writeln!(
        out,
        "  {:<5} {:>8} {:>8} {:>10}  {:<8}",
        "level", "page", "entries", "reach", "source"
    );
    for l in levels {
        let _ = writeln!(
            out,
            "  {:<5} {:>8} {:>8} {:>10}  {}",
            format!("L{}", l.level),
            format_size_exact(l.page),
            l.entries,
            format_size_exact(l.reach()),
            l.source
        );
    }
}

fn render_levels(out: &mut String, levels: &[CacheLevel]) {
    use std::fmt::Write;
    if levels.is_empty() {
        let _ = writeln!(out, "  (none found)");
        return;
    }
    let _ = writeln!(
        out,
        "  {:<5} {:<12} {:>10} {:>5} {:>8} {:>5}  {:<7} {:<8}",
        "level", "kind", "size", "ways", "sets", "line", "shared", "source"
    );
    for l in levels {
        let _ = writeln!(
            out,
            "  {:<5} {:<12} {:>10} {:>5} {:>8} {:>5}  {:<7} {:<8}",
            l.name,
            l.kind.to_string(),
            format_size_exact(l.size),
            l.ways,
            l.sets,
            format!("{} B", l.line),
            l.shared_cpus.as_deref().unwrap_or("-"),
            l.source.to_string(),
        );
        for warning in &l.warnings {
            let _ = writeln!(out, "        warning: {warning}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every DTLB level the manifest (and so `info --json`) has is a row of the table, and an
    /// empty list says CPUID gave none.
    #[test]
    fn the_table_lists_every_dtlb_level_of_the_manifest() {
        let mut info = MachineInfo::collect(None);
        info.dtlb = vec![
            DtlbLevel {
                level: 1,
                page: 4 << 10,
                entries: 64,
                source: "cpuid 0x8000_0005".into(),
            },
            DtlbLevel {
                level: 2,
                page: 2 << 20,
                entries: 2048,
                source: "cpuid 0x8000_0006".into(),
            },
        ];
        let text = render_table(&info, None);
        assert!(text.contains("\nData TLB (CPUID)\n"), "{text}");
        // (row start, what the row must hold)
        let rows = [
            ("  L1 ", ["4 KiB", "64", "256 KiB", "cpuid 0x8000_0005"]),
            ("  L2 ", ["2 MiB", "2048", "4 GiB", "cpuid 0x8000_0006"]),
        ];
        for (start, cells) in rows {
            let row = text
                .lines()
                .find(|l| l.starts_with(start) && l.contains("cpuid"))
                .unwrap_or_else(|| panic!("no {start:?} DTLB row: {text}"));
            for cell in cells {
                assert!(row.contains(cell), "{cell} in {row}");
            }
        }
        info.dtlb.clear();
        assert!(render_table(&info, None).contains("(not reported by CPUID on this machine)"));
    }
}
