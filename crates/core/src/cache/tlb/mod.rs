//! The data TLB: its levels' geometry (from CPUID, a preset, or a preset standing in where
//! CPUID says nothing), and a simulator of it beside the cache simulator.
//!
//! - [`TlbLevel`], [`PageSize`]: one level for one page size (entries, ways, where from).
//! - [`cpuid`]: what this CPU reports (AMD's leaves 0x8000_0005/6, Intel's leaf 0x18).
//! - [`preset`]: the TLB table of the cache presets, each value's source beside it.
//! - [`choose`]: the levels a run simulates, and why they are those.
//! - [`sim`] (fast) and [`reference`](mod@reference) (the executable definition): an [`AccessSink`] that
//!   translates every access's pages through the levels, set-associative LRU; a miss at a
//!   level goes to the next, a miss at the last is a page walk.
//!
//! [`AccessSink`]: super::AccessSink
#![forbid(unsafe_code)]

use serde::Serialize;
use thiserror::Error;

pub mod cpuid;
pub mod preset;
pub mod reference;
pub mod sim;
#[cfg(test)]
mod tests;

pub use sim::{PageFootprint, TlbCounts, TlbSim};

/// Most entries one simulated TLB level may have (the largest parts have a few thousand).
pub const MAX_TLB_ENTRIES: u32 = 1 << 16;

/// The page size one TLB run translates with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PageSize {
    /// 4 KiB pages, the default of every x86 OS.
    #[serde(rename = "4k")]
    Small,
    /// 2 MiB pages (transparent or explicit huge pages).
    #[serde(rename = "2m")]
    Huge,
}

impl PageSize {
    /// The page size's bytes.
    pub const fn bytes(self) -> u64 {
        1 << self.shift()
    }

    /// log2 of [`PageSize::bytes`].
    pub const fn shift(self) -> u32 {
        match self {
            PageSize::Small => 12,
            PageSize::Huge => 21,
        }
    }

    /// `4 KiB` or `2 MiB`.
    pub const fn label(self) -> &'static str {
        match self {
            PageSize::Small => "4 KiB",
            PageSize::Huge => "2 MiB",
        }
    }

    /// The other page size of the two.
    pub const fn other(self) -> PageSize {
        match self {
            PageSize::Small => PageSize::Huge,
            PageSize::Huge => PageSize::Small,
        }
    }

    /// The page size of `bytes`, if it is one of the two.
    pub const fn of_bytes(bytes: u64) -> Option<PageSize> {
        match bytes {
            4096 => Some(PageSize::Small),
            0x20_0000 => Some(PageSize::Huge),
            _ => None,
        }
    }
}

/// Why TLB levels cannot be built or chosen.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TlbError {
    #[error(
        "TLB level {name}: {entries} entries in {ways} ways do not make whole sets \
         (entries must be a positive multiple of ways, at most {MAX_TLB_ENTRIES})"
    )]
    BadShape {
        name: String,
        entries: u32,
        ways: u32,
    },
    #[error("the {preset} preset has no data TLB table: {why}")]
    PresetWithoutTlb { preset: String, why: &'static str },
    #[error("unknown preset `{0}` for the TLB (known: {known})", known = preset::TLB_PRESET_NAMES.join(", "))]
    UnknownPreset(String),
    #[error(
        "this CPU reports no data TLB through CPUID and is not an x86 part with a preset to \
         stand in; name one with --preset"
    )]
    NothingToStandIn,
}

/// One TLB level for one page size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TlbLevel {
    /// `L1 DTLB` or `STLB` (the second-level TLB).
    pub name: String,
    pub page: PageSize,
    pub entries: u32,
    /// Equal to `entries` when fully associative.
    pub ways: u32,
    /// Where the entries and ways came from (`cpuid 0x8000_0005`, `preset amd-zen4`, …).
    pub source: String,
}

impl TlbLevel {
    /// A level, refused unless `entries` is a positive multiple of `ways` within
    /// [`MAX_TLB_ENTRIES`].
    pub fn new(
        name: &str,
        page: PageSize,
        entries: u32,
        ways: u32,
        source: String,
    ) -> Result<Self, TlbError> {
        if ways == 0 || entries == 0 || !entries.is_multiple_of(ways) || entries > MAX_TLB_ENTRIES {
            return Err(TlbError::BadShape {
                name: name.to_string(),
                entries,
                ways,
            });
        }
        Ok(Self {
            name: name.to_string(),
            page,
            entries,
            ways,
            source,
        })
    }

    pub fn sets(&self) -> u32 {
        self.entries / self.ways
    }

    pub fn fully_associative(&self) -> bool {
        self.ways == self.entries
    }

    /// Bytes the level maps: entries × page size.
    pub fn reach(&self) -> u64 {
        u64::from(self.entries) * self.page.bytes()
    }
}

/// The levels a run simulates and, when they are not all this CPU's own report, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TlbChoice {
    pub levels: Vec<TlbLevel>,
    /// Where the levels came from, in words (a stand-in preset says so here).
    pub origin: String,
}

/// The TLB levels for `page`: `preset`'s table when one is named (the caches simulated are
/// that machine's, so is its TLB), else what this CPU reports, a level's missing ways (or the
/// whole TLB, where CPUID reports none) taken from the preset of the CPU's vendor and said so.
pub fn choose(page: PageSize, preset: Option<&str>) -> Result<TlbChoice, TlbError> {
    if let Some(name) = preset {
        return Ok(TlbChoice {
            levels: preset::levels(name, page)?,
            origin: format!("the {name} preset's TLB table"),
        });
    }
    choose_from(page, &cpuid::reported(), cpuid::vendor().as_deref())
}

/// [`choose`] without a preset, from a CPUID report and vendor string (testable anywhere).
pub fn choose_from(
    page: PageSize,
    reported: &[cpuid::ReportedTlb],
    vendor: Option<&str>,
) -> Result<TlbChoice, TlbError> {
    let stand_in = match vendor {
        Some("AuthenticAMD") => Some("amd-zen4"),
        Some("GenuineIntel") => Some("intel-golden-cove"),
        _ => None,
    };
    let for_page: Vec<&cpuid::ReportedTlb> = reported
        .iter()
        .filter(|r| r.page_bytes == page.bytes() && r.entries > 0)
        .collect();
    if for_page.is_empty() {
        let Some(stand_in) = stand_in else {
            return Err(TlbError::NothingToStandIn);
        };
        return Ok(TlbChoice {
            levels: preset::levels(stand_in, page)?,
            origin: format!(
                "CPUID reports no data TLB for {} pages here; the {stand_in} preset's table \
                 stands in (this CPU's vendor is {})",
                page.label(),
                vendor.unwrap_or("unknown")
            ),
        });
    }
    let stand_in_levels = match stand_in {
        Some(name) => preset::levels(name, page)?,
        None => Vec::new(),
    };
    let mut levels = Vec::new();
    let mut borrowed = Vec::new();
    for r in for_page {
        let name = level_name(r.level);
        let entries = u32::try_from(r.entries).unwrap_or(u32::MAX);
        let (ways, source) = match r.ways {
            Some(ways) => (ways, format!("cpuid {}", r.leaf)),
            None => {
                let from_preset = stand_in_levels
                    .iter()
                    .find(|l| l.name == name && l.ways > 0 && entries.is_multiple_of(l.ways));
                match (from_preset, stand_in) {
                    (Some(l), Some(preset)) => {
                        borrowed.push(format!("{name}'s ways from the {preset} preset"));
                        (
                            l.ways,
                            format!("cpuid {} (entries), preset {preset} (ways)", r.leaf),
                        )
                    }
                    _ => {
                        borrowed.push(format!("{name} assumed fully associative"));
                        (
                            entries,
                            format!(
                                "cpuid {} (entries; ways assumed: fully associative)",
                                r.leaf
                            ),
                        )
                    }
                }
            }
        };
        levels.push(TlbLevel::new(name, page, entries, ways, source)?);
    }
    let origin = if borrowed.is_empty() {
        "this CPU's CPUID".to_string()
    } else {
        format!(
            "this CPU's CPUID, which reports no ways for every level: {}",
            borrowed.join("; ")
        )
    };
    Ok(TlbChoice { levels, origin })
}

/// The name of TLB level `level` (1: the first-level data TLB, else the second-level TLB).
pub fn level_name(level: u8) -> &'static str {
    if level <= 1 { "L1 DTLB" } else { "STLB" }
}
