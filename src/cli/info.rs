//! `stridelab info [--json] [--preset NAME] [--cache NAME=SIZE,WAYS,LINE]...`: describe this
//! machine (CPU, caches with source and warnings, pages, pinning, perf events, build) as a
//! table or one JSON object, and with `--preset`/`--cache` the hierarchy `sim` and `run` would
//! simulate.

use std::process::ExitCode;

use anyhow::Context;

use crate::cache::geometry::{CacheLevel, ChosenGeometry};
use crate::cli::common::CacheArgs;
use crate::harness::machine::MachineInfo;
use crate::harness::measure::counters::EventAvailability;
use crate::units::format_size_exact;

#[derive(Debug, clap::Args)]
pub struct InfoArgs {
    /// Print one JSON object (the machine manifest results files embed).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub cache: CacheArgs,
}

pub fn run(args: InfoArgs) -> anyhow::Result<ExitCode> {
    let choice = args.cache.choice();
    let detected = choice.detect();
    let chosen = if choice.is_given() {
        let chosen = choice
            .resolve(&detected)
            .context("choosing the cache levels to simulate")?;
        Some(chosen)
    } else {
        None
    };
    let info = match &chosen {
        Some(chosen) => MachineInfo::for_geometry(detected, chosen),
        None => MachineInfo::collect_with(detected, None),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        print!("{}", render_table(&info, chosen.as_ref()));
    }
    Ok(ExitCode::SUCCESS)
}

fn render_table(info: &MachineInfo, chosen: Option<&ChosenGeometry>) -> String {
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
