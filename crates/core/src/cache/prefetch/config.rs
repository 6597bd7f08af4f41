//! [`PrefetchConfig`]: the parameters of the hardware-prefetch model, each preset's values and
//! where they come from, and the choice for this machine by CPU vendor.
//!
//! The values are textbook parameters from the vendors' optimisation manuals, not measured on
//! any machine; a value no manual gives is named in [`PrefetchConfig::assumptions`], which the
//! output prints beside the counts.

use serde::Serialize;
use thiserror::Error;

/// Bytes of the page no prefetch crosses: hardware prefetchers work on physical addresses and
/// stop at the 4 KiB page edge, since the next virtual page may map anywhere.
pub const PAGE_BYTES: u64 = 4096;

/// Most stream-table entries a configuration may have (real tables hold 16 to 64).
pub const MAX_STREAM_ENTRIES: u32 = 4096;

/// The parameters of the model (`docs/simulator.md`, "Hardware prefetch").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PrefetchConfig {
    /// What the values describe (`intel-golden-cove`, `this machine (GenuineIntel)`, …).
    pub name: String,
    /// The cache level prefetches fill (`L2`): the model simulates it twice, without and with
    /// prefetch, fed the demand lines that miss every level above it.
    pub fill_level: String,
    /// Next-line prefetcher: a demand miss at the fill level to line L fetches L+1 when L+1
    /// lies in the same 4 KiB page.
    pub next_line: bool,
    /// Stream/stride prefetcher: entries of its stream table, one per 4 KiB page being walked,
    /// replaced least recently used first; 0 turns it off.
    pub stream_entries: u32,
    /// Accesses at one line step within a page (the first included) that train an entry:
    /// with 3, lines L, L+s, L+2s train it at L+2s.
    pub train_accesses: u32,
    /// How far a trained stream prefetches: every line up to `distance` steps ahead of the
    /// demand access not yet prefetched by the stream, never past the page's edge.
    pub distance: u32,
    /// Where the values come from.
    pub source: String,
    /// The values no source gives, each in words.
    pub assumptions: Vec<String>,
}

/// Why a configuration cannot be simulated.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrefetchConfigError {
    #[error("the prefetch model's stream table needs 0 to {MAX_STREAM_ENTRIES} entries, not {0}")]
    Entries(u32),
    #[error("a stream trains after at least 2 accesses at one step, not {0}")]
    Train(u32),
    #[error("a stream prefetches 1 to 4096 lines ahead, not {0}")]
    Distance(u32),
    #[error("the prefetch model has no parameters for preset `{0}`")]
    UnknownPreset(String),
}

impl PrefetchConfig {
    /// Refuses values the model cannot take (checked before any state is allocated).
    pub fn check(&self) -> Result<(), PrefetchConfigError> {
        if self.stream_entries > MAX_STREAM_ENTRIES {
            return Err(PrefetchConfigError::Entries(self.stream_entries));
        }
        if self.train_accesses < 2 {
            return Err(PrefetchConfigError::Train(self.train_accesses));
        }
        if !(1..=4096).contains(&self.distance) {
            return Err(PrefetchConfigError::Distance(self.distance));
        }
        Ok(())
    }

    /// The model's parameters for one of `Geometry::preset`'s presets.
    pub fn preset(name: &str) -> Result<Self, PrefetchConfigError> {
        match name {
            "intel-golden-cove" => Ok(intel(name)),
            // The preset's machine is an Intel Xeon guest: the streamer Intel documents for
            // every core since Sandy Bridge.
            "design-vm" => Ok(intel(name)),
            "amd-zen4" => Ok(amd(name)),
            "apple-m1-firestorm" => Ok(apple(name)),
            _ => Err(PrefetchConfigError::UnknownPreset(name.to_string())),
        }
    }

    /// The parameters for this machine, chosen by the CPU vendor CPUID reports: Intel's or
    /// AMD's textbook values, else Intel's as a generic stream prefetcher. Not measured: no
    /// timing or counter of this machine enters them.
    pub fn for_this_machine() -> Self {
        let vendor = cpu_vendor();
        let name = format!(
            "this machine ({})",
            vendor.as_deref().unwrap_or("vendor unknown")
        );
        let mut config = match vendor.as_deref() {
            Some("AuthenticAMD") | Some("HygonGenuine") => amd(&name),
            Some("GenuineIntel") => intel(&name),
            _ => {
                let mut generic = intel(&name);
                generic.assumptions.push(
                    "no CPUID vendor this model knows: Intel's streamer stands in for the \
                     machine's prefetchers"
                        .to_string(),
                );
                generic
            }
        };
        config.assumptions.push(
            "chosen by CPU vendor: textbook parameters of the vendor's cores, not measured on \
             this machine (a VM's host may also turn prefetchers off)"
                .to_string(),
        );
        config
    }
}

/// Intel's L2 streamer and L2 spatial prefetcher.
fn intel(name: &str) -> PrefetchConfig {
    PrefetchConfig {
        name: name.to_string(),
        fill_level: "L2".to_string(),
        next_line: true,
        stream_entries: 32,
        train_accesses: 3,
        distance: 20,
        source: "Intel 64 and IA-32 Architectures Optimization Reference Manual (\"Data \
                 Prefetching\"): the L2 streamer tracks 32 streams within 4 KiB pages, \
                 prefetches up to 20 lines ahead and fills the L2; the L2 spatial prefetcher \
                 fetches a line's neighbour"
            .to_string(),
        assumptions: vec![
            "training after 3 accesses at one step: the manual gives no count".to_string(),
            "one stream per page: the manual allows one forward and one backward".to_string(),
            "next-line fetches L+1; the spatial prefetcher completes the 128-byte pair".to_string(),
        ],
    }
}

/// AMD Zen's L2 stream prefetcher and L2 up/down (next-line) prefetcher.
fn amd(name: &str) -> PrefetchConfig {
    PrefetchConfig {
        name: name.to_string(),
        fill_level: "L2".to_string(),
        next_line: true,
        stream_entries: 32,
        train_accesses: 3,
        distance: 20,
        source: "AMD Software Optimization Guide for Family 19h Processors (pub. 57647, \
                 \"Hardware Prefetching\"): an L2 stream prefetcher fetching sequential lines \
                 ascending or descending and an L2 up/down prefetcher fetching the next or \
                 previous line, both filling the L2 (the L1 stride prefetcher is left out)"
            .to_string(),
        assumptions: vec![
            "32 stream entries, training after 3 accesses, 20 lines ahead: AMD publishes none \
             of them (Intel's values)"
                .to_string(),
        ],
    }
}

/// Apple's prefetchers are not documented at all.
fn apple(name: &str) -> PrefetchConfig {
    PrefetchConfig {
        name: name.to_string(),
        fill_level: "L2".to_string(),
        next_line: true,
        stream_entries: 32,
        train_accesses: 3,
        distance: 20,
        source: "no vendor documentation: Apple publishes no prefetcher parameters".to_string(),
        assumptions: vec![
            "every value assumed (Intel's streamer's), with 128-byte lines: 32 lines a page"
                .to_string(),
        ],
    }
}

/// CPUID's vendor string (`GenuineIntel`, `AuthenticAMD`, …).
#[cfg(target_arch = "x86_64")]
fn cpu_vendor() -> Option<String> {
    raw_cpuid::CpuId::new()
        .get_vendor_info()
        .map(|v| v.as_str().to_string())
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_vendor() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::{Geometry, PRESET_NAMES};

    #[test]
    fn every_geometry_preset_has_parameters_that_check_and_name_a_level_it_has() {
        for name in PRESET_NAMES {
            let config = PrefetchConfig::preset(name).unwrap();
            config.check().unwrap();
            let geometry = Geometry::preset(name).unwrap();
            assert!(geometry.level(&config.fill_level).is_some(), "{name}");
            assert!(!config.source.is_empty() && !config.assumptions.is_empty());
        }
        assert!(PrefetchConfig::preset("nope").is_err());
    }

    #[test]
    fn this_machine_says_its_values_are_not_measured() {
        let config = PrefetchConfig::for_this_machine();
        config.check().unwrap();
        assert!(config.name.starts_with("this machine ("));
        assert!(
            config
                .assumptions
                .iter()
                .any(|a| a.contains("not measured"))
        );
    }

    #[test]
    fn bad_values_are_refused() {
        let good = PrefetchConfig::preset("amd-zen4").unwrap();
        type Case = (fn(&mut PrefetchConfig), PrefetchConfigError);
        let cases: [Case; 3] = [
            (
                |c| c.stream_entries = 5000,
                PrefetchConfigError::Entries(5000),
            ),
            (|c| c.train_accesses = 1, PrefetchConfigError::Train(1)),
            (|c| c.distance = 0, PrefetchConfigError::Distance(0)),
        ];
        for (change, want) in cases {
            let mut config = good.clone();
            change(&mut config);
            assert_eq!(config.check(), Err(want));
        }
    }
}
