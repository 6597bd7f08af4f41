//! `stridelab info [--json] [--cache NAME=SIZE,WAYS,LINE]... [--preset NAME]...`: describe
//! this machine (CPU, caches with source and warnings, pages, pinning, perf events, build) as
//! a table or one JSON object. Also home of [`CacheArgs`], the `--cache`/`--preset` options
//! every simulating subcommand shares.

use std::process::ExitCode;

use anyhow::Context;

use crate::cache::geometry::{
    CacheLevel, Geometry, LevelSpec, PRESET_NAMES, parse_cache_override, resolve_levels,
};
use crate::harness::counters::EventAvailability;
use crate::harness::machine::MachineInfo;
use crate::units::format_size_exact;

/// `--cache` / `--preset`: the hierarchy to simulate instead of the detected one.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CacheArgs {
    /// A cache level to simulate, NAME=SIZE,WAYS,LINE (SIZE takes K/M/G), e.g. L1d=48K,12,64.
    /// Replaces a preset's level of the same name, otherwise adds a level. Repeatable.
    #[arg(long = "cache", value_name = "NAME=SIZE,WAYS,LINE", value_parser = parse_cache_arg)]
    pub caches: Vec<CacheLevel>,
    /// Simulate a named machine's caches (design-vm, intel-golden-cove, amd-zen4,
    /// apple-m1-firestorm). Repeatable; levels are taken in the order given.
    #[arg(long = "preset", value_name = "NAME", value_parser = parse_preset_arg)]
    pub presets: Vec<String>,
}

fn parse_cache_arg(text: &str) -> Result<CacheLevel, String> {
    parse_cache_override(text).map_err(|err| err.to_string())
}

fn parse_preset_arg(name: &str) -> Result<String, String> {
    if PRESET_NAMES.contains(&name) {
        Ok(name.to_string())
    } else {
        Err(format!("known presets: {}", PRESET_NAMES.join(", ")))
    }
}

impl CacheArgs {
    /// Whether the user replaced the detected hierarchy.
    pub fn is_given(&self) -> bool {
        !self.caches.is_empty() || !self.presets.is_empty()
    }

    /// The specs in effect: presets first (in order), then `--cache` levels, which replace a
    /// preset level of the same name or are appended (clap keeps the two lists apart, so this
    /// fixed order is what "the order given" means across the two options).
    pub fn specs(&self) -> Vec<LevelSpec> {
        self.presets
            .iter()
            .cloned()
            .map(LevelSpec::Preset)
            .chain(self.caches.iter().cloned().map(LevelSpec::Cache))
            .collect()
    }

    /// The data levels to simulate: exactly the given ones, or the detected data levels.
    pub fn resolve(&self, detected: &Geometry) -> anyhow::Result<Vec<CacheLevel>> {
        resolve_levels(detected, &self.specs()).context("choosing the cache levels to simulate")
    }
}

#[derive(Debug, clap::Args)]
pub struct InfoArgs {
    /// Print one JSON object (the machine manifest results files embed).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub cache: CacheArgs,
    /// Read cache geometry from this directory of `index*/` entries instead of
    /// /sys/devices/system/cpu/cpu0/cache (no CPUID cross-check then: it is not this CPU).
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysfs_root: Option<std::path::PathBuf>,
}

pub fn run(args: InfoArgs) -> anyhow::Result<ExitCode> {
    let detected = match &args.sysfs_root {
        Some(root) => {
            let mut geometry = Geometry::from_sysfs(root);
            geometry.notes.push(format!(
                "read from {} (not this machine's sysfs; no CPUID cross-check)",
                root.display()
            ));
            geometry
        }
        None => Geometry::detect(),
    };
    let simulated = if args.cache.is_given() {
        Some(args.cache.resolve(&detected)?)
    } else {
        None
    };
    let info = MachineInfo::collect_with(detected, simulated);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        print!("{}", render_table(&info));
    }
    Ok(ExitCode::SUCCESS)
}

fn render_table(info: &MachineInfo) -> String {
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
    if let Some(levels) = &info.simulated_caches {
        let _ = writeln!(out, "\nSimulated hierarchy (from --cache/--preset)");
        render_levels(&mut out, levels);
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
