//! The data-TLB table of the cache presets (`Geometry::preset`'s machines): per preset, level
//! and page size, the entries and ways, each row's source in the comment beside it and in the
//! `source` the run prints. Where a value could not be checked against a published source it
//! says so, here and in `docs/simulator.md`.

use super::{PageSize, TlbError, TlbLevel};
pub use crate::cache::geometry::PRESET_NAMES as TLB_PRESET_NAMES;

/// (level, page, entries, ways, how sure) per row; `how sure` ends the printed source.
type Row = (u8, PageSize, u32, u32, &'static str);

use PageSize::{Huge, Small};

/// Intel Golden Cove (the P-core of Alder Lake and Sapphire Rapids). L1 DTLB for loads: 64
/// entries 4-way for 4 KiB pages, 32 entries 4-way for 2 MiB (Intel 64 and IA-32
/// Architectures Optimization Reference Manual, Golden Cove section; not re-checked here: the
/// searchable copies of the manual were not at hand, and one secondary source gives 96 L1
/// DTLB entries). STLB: 2048 entries shared by 4 KiB and 2 MiB pages (same manual); the
/// manual's 12 ways do not divide 2048 entries into whole sets, so 16 ways (128 sets) are
/// assumed, the STLB shape of the Sunny Cove generation before it.
const GOLDEN_COVE: &[Row] = &[
    (1, Small, 64, 4, "Intel optimization manual"),
    (1, Huge, 32, 4, "Intel optimization manual"),
    (
        2,
        Small,
        2048,
        16,
        "entries: Intel optimization manual; 16 ways assumed",
    ),
    (
        2,
        Huge,
        2048,
        16,
        "entries: Intel optimization manual; 16 ways assumed",
    ),
];

/// AMD Zen 4: L1 DTLB 72 entries, fully associative, every page size; L2 DTLB 3072 entries
/// 24-way for 4 KiB and 2 MiB pages (AMD Software Optimization Guide for AMD Family 19h
/// Processors, pub. 57647, section 2; not re-checked here: the guide was not at hand).
const ZEN4: &[Row] = &[
    (1, Small, 72, 72, "AMD optimization guide 57647"),
    (1, Huge, 72, 72, "AMD optimization guide 57647"),
    (2, Small, 3072, 24, "AMD optimization guide 57647"),
    (2, Huge, 3072, 24, "AMD optimization guide 57647"),
];

/// The rows of preset `name`, or why it has none.
fn rows(name: &str) -> Result<(&'static [Row], &'static str), TlbError> {
    match name {
        "intel-golden-cove" => Ok((GOLDEN_COVE, "")),
        "amd-zen4" => Ok((ZEN4, "")),
        // The design VM (an Intel Xeon KVM guest) zeroes every TLB field of CPUID; its L1d
        // (48 KiB 12-way) and L2 (2 MiB 16-way) are a Sapphire Rapids Golden Cove's, so its
        // table is Golden Cove's, marked as an assumption.
        "design-vm" => Ok((GOLDEN_COVE, "assumed Golden Cove's: ")),
        "apple-m1-firestorm" => Err(TlbError::PresetWithoutTlb {
            preset: name.to_string(),
            why: "its pages are 16 KiB, and the TLB simulation translates 4 KiB or 2 MiB pages",
        }),
        _ => Err(TlbError::UnknownPreset(name.to_string())),
    }
}

/// Preset `name`'s TLB levels for `page`, first level first.
pub fn levels(name: &str, page: PageSize) -> Result<Vec<TlbLevel>, TlbError> {
    let (rows, assumed) = rows(name)?;
    rows.iter()
        .filter(|row| row.1 == page)
        .map(|&(level, page, entries, ways, sure)| {
            let source = format!("preset {name} ({assumed}{sure})");
            TlbLevel::new(super::level_name(level), page, entries, ways, source)
        })
        .collect()
}
