//! The machine manifest every results file embeds: CPU, caches (with source and warnings),
//! page size, transparent huge pages, whether pinning works, which perf events open, and the
//! compiler that built the binary.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cache::cpu::cpu_model;
use crate::cache::geometry::{CacheLevel, ChosenGeometry, Geometry};
use crate::harness::measure::counters::{EventProbe, probe_events};
use crate::results::tlb::DtlbLevel;

/// The rustc that compiled this crate, if the build environment recorded it. Cargo does not
/// expose the compiler version without a build script (`CARGO_PKG_RUST_VERSION` is the MSRV),
/// and the crate has none, so a build may set `STRIDELAB_RUSTC_VERSION`; otherwise
/// [`BuildInfo::current`] asks the `rustc` on PATH at run time and says so.
const RUSTC_VERSION: Option<&str> = option_env!("STRIDELAB_RUSTC_VERSION");

/// Everything a report needs to describe where numbers came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    /// `model name` from /proc/cpuinfo (or CPUID's brand string), if found.
    pub cpu_model: Option<String>,
    pub logical_cpus: usize,
    /// The detected levels (sysfs / CPUID), instruction caches included.
    pub caches: Vec<CacheLevel>,
    /// Detection notes (e.g. sysfs/CPUID disagreements).
    pub cache_notes: Vec<String>,
    /// The levels simulated for this run when they differ from `caches` (overrides/presets);
    /// each level's `source` says which (`preset` or `override`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_caches: Option<Vec<CacheLevel>>,
    /// The preset `simulated_caches` is based on, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_preset: Option<String>,
    pub page_size: u64,
    /// The data TLB's entries per level and page size, from CPUID (empty: CPUID did not say).
    #[serde(default)]
    pub dtlb: Vec<DtlbLevel>,
    /// The selected mode from /sys/kernel/mm/transparent_hugepage/enabled (`always`,
    /// `madvise`, `never`), if readable.
    pub thp_mode: Option<String>,
    pub pinning: PinningStatus,
    pub perf_events: Vec<EventProbe>,
    pub build: BuildInfo,
    pub os: String,
    pub arch: String,
}

/// Whether threads can be pinned to a core here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinningStatus {
    pub works: bool,
    /// What was tried and, on failure, what went wrong.
    pub detail: String,
}

/// How the binary was built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInfo {
    pub crate_version: String,
    /// `debug` or `release` (from `debug_assertions`).
    pub profile: String,
    /// `rustc --version` of the compiler, if known.
    pub rustc: Option<String>,
    /// Where `rustc` came from: `build-env` (recorded at build time, exact) or
    /// `path-at-runtime` (the rustc on PATH when this ran: usually, not surely, the builder).
    pub rustc_source: Option<String>,
    /// Target features compiled in that matter for kernels (e.g. `avx2`, `avx512f`).
    pub target_features: Vec<String>,
}

impl MachineInfo {
    /// The manifest of a run simulated on `chosen` (detected as `machine`): its levels are
    /// recorded as `simulated_caches` (and its preset) when they are not the machine's.
    pub fn for_geometry(machine: Geometry, chosen: &ChosenGeometry) -> Self {
        let mut info = Self::collect_with(machine, None);
        if chosen.is_override() {
            info.simulated_caches = Some(chosen.levels.clone());
            info.simulated_preset = chosen.preset_name().map(str::to_string);
        }
        info
    }

    /// Collects the manifest for this machine, whose caches the process detected once as
    /// `geometry`. `simulated` is the hierarchy a run simulates when overrides or presets
    /// replaced the detected one (None otherwise).
    pub fn collect_with(geometry: Geometry, simulated: Option<Vec<CacheLevel>>) -> Self {
        Self {
            cpu_model: cpu_model(),
            logical_cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            caches: geometry.levels,
            cache_notes: geometry.notes,
            simulated_caches: simulated,
            simulated_preset: None,
            page_size: page_size(),
            dtlb: dtlb_levels(),
            thp_mode: thp_mode(Path::new("/sys/kernel/mm/transparent_hugepage/enabled")),
            pinning: probe_pinning(),
            perf_events: probe_events(),
            build: BuildInfo::current(),
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
        }
    }
}

/// The data TLB's levels as CPUID reports them (`cache::tlb::cpuid`, which reads AMD's leaves
/// 0x8000_0005/6 and Intel's leaf 0x18), in the manifest's form: entries per level and page
/// size, the leaf as the source. Empty where CPUID says nothing (Intel parts without leaf
/// 0x18, many VMs); the report then says the reach is unknown.
pub fn dtlb_levels() -> Vec<DtlbLevel> {
    crate::cache::tlb::cpuid::reported()
        .into_iter()
        .map(|r| DtlbLevel {
            level: r.level,
            page: r.page_bytes,
            entries: r.entries,
            source: format!("cpuid {}", r.leaf),
        })
        .collect()
}

impl BuildInfo {
    pub fn current() -> Self {
        let mut target_features = Vec::new();
        macro_rules! feature {
            ($name:literal) => {
                if cfg!(target_feature = $name) {
                    target_features.push($name.to_string());
                }
            };
        }
        feature!("sse4.2");
        feature!("avx");
        feature!("avx2");
        feature!("fma");
        feature!("avx512f");
        feature!("neon");
        let (rustc, rustc_source) = match RUSTC_VERSION {
            Some(version) => (Some(version.to_string()), Some("build-env".to_string())),
            None => match rustc_on_path() {
                Some(version) => (Some(version), Some("path-at-runtime".to_string())),
                None => (None, None),
            },
        };
        Self {
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            profile: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
            .to_string(),
            rustc,
            rustc_source,
            target_features,
        }
    }
}

fn rustc_on_path() -> Option<String> {
    let output = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn page_size() -> u64 {
    u64::try_from(page_size::get()).unwrap_or(4096)
}

/// Reads the bracketed choice from a THP control file (`always [madvise] never` → `madvise`).
fn thp_mode(path: &Path) -> Option<String> {
    parse_thp_mode(&fs::read_to_string(path).ok()?)
}

fn parse_thp_mode(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

/// Pins a short-lived thread to the first available core (the caller's affinity is untouched).
fn probe_pinning() -> PinningStatus {
    let Some(cores) = core_affinity::get_core_ids() else {
        return PinningStatus {
            works: false,
            detail: "core_affinity could not list cores".into(),
        };
    };
    let Some(&first) = cores.first() else {
        return PinningStatus {
            works: false,
            detail: "no cores listed".into(),
        };
    };
    let count = cores.len();
    let pinned = std::thread::scope(|s| {
        s.spawn(move || core_affinity::set_for_current(first))
            .join()
            .unwrap_or(false)
    });
    PinningStatus {
        works: pinned,
        detail: if pinned {
            format!("pinned a thread to core {} of {count}", first.id)
        } else {
            format!("setting affinity to core {} failed", first.id)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thp_mode_is_the_bracketed_word() {
        assert_eq!(
            parse_thp_mode("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            parse_thp_mode("[always] madvise never").as_deref(),
            Some("always")
        );
        assert_eq!(parse_thp_mode("garbage"), None);
    }

    #[test]
    fn manifest_round_trips_through_json() {
        let info = MachineInfo::collect_with(Geometry::detect(), None);
        assert!(info.logical_cpus >= 1);
        assert!(info.page_size >= 4096);
        let json = serde_json::to_string(&info).unwrap();
        let back: MachineInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back, info);
    }
}
