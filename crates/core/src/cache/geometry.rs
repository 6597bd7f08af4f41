//! Cache geometry: what each cache level looks like (size, ways, line, sets, sharing), where
//! that description came from (sysfs, CPUID, a `--cache` override or a named preset), and
//! warnings for values no real part has.
//!
//! Detection (`geometry/detect.rs`) reads `/sys/devices/system/cpu/cpu0/cache/index*/` (under
//! a root that tests point at a fake tree) and, on x86-64, cross-checks every level against
//! CPUID's deterministic cache parameters (leaf 4 on Intel, 0x8000_001D on AMD), listing
//! disagreements instead of hiding them. Sets need not be a power of two: the simulator indexes
//! with `line address mod sets`. Which levels a command simulates (this machine's or a preset's,
//! with `--cache` levels on top) is `geometry/choice.rs`'s.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::units::{format_size_exact, parse_size};

mod choice;
mod detect;
pub use choice::{ChosenGeometry, GeometryBase, GeometryChoice, level_warnings, warning_lines};
#[cfg(test)]
use detect::compare_levels;

/// What a cache level holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheKind {
    Data,
    Instruction,
    Unified,
}

impl fmt::Display for CacheKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CacheKind::Data => "data",
            CacheKind::Instruction => "instruction",
            CacheKind::Unified => "unified",
        })
    }
}

/// Where a level's description came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GeometrySource {
    /// `/sys/devices/system/cpu/cpu0/cache/index*`.
    Sysfs,
    /// CPUID deterministic cache parameters (x86 only; used when sysfs is missing).
    Cpuid,
    /// A `--cache NAME=SIZE,WAYS,LINE` given by the user.
    Override,
    /// One of [`PRESET_NAMES`].
    Preset,
}

impl fmt::Display for GeometrySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GeometrySource::Sysfs => "sysfs",
            GeometrySource::Cpuid => "cpuid",
            GeometrySource::Override => "override",
            GeometrySource::Preset => "preset",
        })
    }
}

/// Why a geometry is invalid (a simulator cannot be built from it) or an override unparsable.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GeometryError {
    #[error("{name}: {field} must be greater than zero")]
    Zero { name: String, field: &'static str },
    #[error("{name}: line size {line} B is not a power of two of at least 2 B")]
    LineNotPowerOfTwo { name: String, line: u64 },
    #[error("{name}: size {size} B is not divisible by ways × line = {ways} × {line}")]
    SizeNotDivisible {
        name: String,
        size: u64,
        ways: u64,
        line: u64,
    },
    #[error("{name}: value {value} is too large")]
    TooLarge { name: String, value: u64 },
    #[error(
        "bad cache override `{text}`: {reason} (expected NAME=SIZE,WAYS,LINE such as L1d=48K,12,64)"
    )]
    BadOverride { text: String, reason: String },
    #[error("unknown cache level name `{0}` (expected L1d, L1i, L2, L3 or L4)")]
    UnknownLevelName(String),
    #[error("unknown preset `{name}`; known presets: {known}")]
    UnknownPreset { name: String, known: String },
    #[error(
        "--cache gives {0} twice; give each level once (it replaces the base geometry's {0} or \
         adds one)"
    )]
    DuplicateLevel(String),
    #[error(
        "--cache {0}: an instruction cache; data accesses never reach it, so it is not simulated"
    )]
    InstructionLevel(String),
    #[error("no cache levels to simulate (detection found none and none were given)")]
    Empty,
    #[error("{name}: recorded {sets} sets, but size / (ways × line) = {computed}")]
    SetsMismatch {
        name: String,
        sets: u64,
        computed: u64,
    },
    #[error("{name}: recorded level {recorded}, but the name says level {implied}")]
    LevelMismatch {
        name: String,
        recorded: u64,
        implied: u8,
    },
    #[error("{name}: {field} {value} is above the {limit} a recorded geometry may have")]
    BeyondRecordedLimit {
        name: String,
        field: &'static str,
        value: u64,
        limit: u64,
    },
}

/// Bounds on a geometry read back from a document: far above any shipped part (64 ways,
/// 256 B lines, about a million sets), far below what the report's per-set tables and the set
/// model can afford to enumerate for every point.
pub const MAX_RECORDED_SETS: u64 = 1 << 24;
/// See [`MAX_RECORDED_SETS`].
pub const MAX_RECORDED_WAYS: u64 = 1 << 12;
/// See [`MAX_RECORDED_SETS`].
pub const MAX_RECORDED_LINE: u64 = 1 << 16;

/// One cache level. `sets = size / (ways × line)` always holds for a constructed level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLevel {
    /// `L1d`, `L1i`, `L2`, `L3`, ...
    pub name: String,
    pub level: u8,
    pub kind: CacheKind,
    /// Bytes.
    pub size: u64,
    pub ways: u32,
    /// Line size in bytes (a power of two).
    pub line: u32,
    /// Number of sets; need not be a power of two.
    pub sets: u32,
    /// The CPUs sharing this cache as the kernel lists them (e.g. `0-1`), if known.
    pub shared_cpus: Option<String>,
    pub source: GeometrySource,
    /// Implausible values and source disagreements, in words.
    pub warnings: Vec<String>,
}

/// The largest cache instance a shipped x86 or Arm part has room for (rule 2 of
/// [`CacheLevel::plausibility_warnings`]): a level reported larger is a hypervisor's invention.
pub const MAX_PLAUSIBLE_INSTANCE: u64 = 128 << 20;

impl CacheLevel {
    /// Builds a level, checking the rules every simulated cache must satisfy:
    ///
    /// 1. size, ways and line are greater than zero;
    /// 2. the line size is a power of two of at least 2 B (with 1-byte lines, the line of the
    ///    address space's last byte would be u64::MAX, the simulator's empty-way marker);
    /// 3. size is divisible by ways × line (so sets is a whole number);
    /// 4. ways and sets fit in 32 bits.
    ///
    /// Plausibility is checked separately ([`CacheLevel::plausibility_warnings`]).
    pub fn new(
        name: &str,
        kind: CacheKind,
        size: u64,
        ways: u64,
        line: u64,
        source: GeometrySource,
    ) -> Result<Self, GeometryError> {
        let level = level_number(name)?;
        let err_name = || name.to_string();
        // Rule 1.
        for (field, value) in [("size", size), ("ways", ways), ("line size", line)] {
            if value == 0 {
                return Err(GeometryError::Zero {
                    name: err_name(),
                    field,
                });
            }
        }
        // Rule 2.
        if !line.is_power_of_two() || line < 2 {
            return Err(GeometryError::LineNotPowerOfTwo {
                name: err_name(),
                line,
            });
        }
        // Rule 3.
        let way_line = ways.checked_mul(line).ok_or(GeometryError::TooLarge {
            name: err_name(),
            value: ways,
        })?;
        if !size.is_multiple_of(way_line) {
            return Err(GeometryError::SizeNotDivisible {
                name: err_name(),
                size,
                ways,
                line,
            });
        }
        // Rule 4.
        let sets = size / way_line;
        let to_u32 = |value: u64| {
            u32::try_from(value).map_err(|_| GeometryError::TooLarge {
                name: err_name(),
                value,
            })
        };
        Ok(Self {
            name: name.to_string(),
            level,
            kind,
            size,
            ways: to_u32(ways)?,
            line: to_u32(line)?,
            sets: to_u32(sets)?,
            shared_cpus: None,
            source,
            warnings: Vec::new(),
        })
    }

    /// Rebuilds a level recorded in a document through [`CacheLevel::new`] (the rules live
    /// geometry obeys), then checks what the record adds: the recorded `sets` and `level` agree
    /// with the ones the constructor derives, and sets, ways and line stay within
    /// [`MAX_RECORDED_SETS`], [`MAX_RECORDED_WAYS`] and [`MAX_RECORDED_LINE`].
    pub fn recorded(
        name: &str,
        kind: CacheKind,
        size: u64,
        ways: u64,
        line: u64,
        sets: Option<u64>,
        source: GeometrySource,
    ) -> Result<Self, GeometryError> {
        let beyond = |field: &'static str, value: u64, limit: u64| {
            (value > limit).then(|| GeometryError::BeyondRecordedLimit {
                name: name.to_string(),
                field,
                value,
                limit,
            })
        };
        // Checked before the constructor so a huge value is named as such, not as a remainder.
        if let Some(err) = beyond("ways", ways, MAX_RECORDED_WAYS)
            .or_else(|| beyond("line size", line, MAX_RECORDED_LINE))
        {
            return Err(err);
        }
        let level = Self::new(name, kind, size, ways, line, source)?;
        if let Some(sets) = sets
            && sets != u64::from(level.sets)
        {
            return Err(GeometryError::SetsMismatch {
                name: name.to_string(),
                sets,
                computed: u64::from(level.sets),
            });
        }
        match beyond("sets", u64::from(level.sets), MAX_RECORDED_SETS) {
            Some(err) => Err(err),
            None => Ok(level),
        }
    }

    /// Number of lines the level holds (`sets × ways`).
    pub fn lines(&self) -> u64 {
        u64::from(self.sets) * u64::from(self.ways)
    }

    /// Bytes covered by one way (`sets × line`): addresses this far apart share a set.
    pub fn set_span(&self) -> u64 {
        u64::from(self.sets) * u64::from(self.line)
    }

    /// Number of CPUs in `shared_cpus` (a kernel cpu list such as `0-3,8-11`), if parsable.
    pub fn shared_cpu_count(&self) -> Option<usize> {
        self.shared_cpus.as_deref().and_then(count_cpu_list)
    }

    /// Values no shipped part has, each rule with the evidence behind it. A warning means
    /// "do not trust this level's numbers", not "invalid": the level is still simulated.
    ///
    /// 1. A private cache (L1, L2) selects its set with low address bits, so its set count is a
    ///    power of two. Shared last-level caches are sliced, and sysfs reports the total of all
    ///    slices (e.g. 30 MiB 12-way = 40 960 sets on an i9-12900K), so they are exempt.
    /// 2. No cache instance on a shipped x86 or Arm part exceeds 128 MiB: the largest are 96 MiB
    ///    per CCD (AMD 3D V-Cache) and 120 MB (IBM Power10, not x86/Arm). sysfs describes one
    ///    instance, so a larger value is a hypervisor's invention.
    /// 3. Level-1 caches are at most 256 KiB (largest shipped L1d: 128 KiB on Apple P-cores).
    /// 4. Line sizes outside 32..=256 B have not shipped in this century.
    /// 5. Associativity above 64 ways is not used by any set-associative CPU cache.
    pub fn plausibility_warnings(&self) -> Vec<String> {
        const MAX_INSTANCE: u64 = MAX_PLAUSIBLE_INSTANCE;
        const MAX_L1: u64 = 256 << 10;
        let mut warnings = Vec::new();
        if self.level <= 2 && !self.sets.is_power_of_two() {
            warnings.push(format!(
                "implausible: {} sets is not a power of two, but a private L{} indexes sets with \
                 address bits (rule 1)",
                self.sets, self.level
            ));
        }
        if self.size > MAX_INSTANCE {
            warnings.push(format!(
                "implausible: {} in one cache instance; no shipped x86/Arm part has more than \
                 96 MiB per instance (rule 2) — likely a hypervisor artefact",
                format_size_exact(self.size)
            ));
        }
        if self.level == 1 && self.size > MAX_L1 {
            warnings.push(format!(
                "implausible: {} level-1 cache; the largest shipped is 128 KiB (rule 3)",
                format_size_exact(self.size)
            ));
        }
        if !(32..=256).contains(&self.line) {
            warnings.push(format!(
                "implausible: {} B lines; real parts use 32–256 B (rule 4)",
                self.line
            ));
        }
        if self.ways > 64 {
            warnings.push(format!(
                "implausible: {} ways; no CPU cache has more than 64 (rule 5)",
                self.ways
            ));
        }
        warnings
    }
}

impl fmt::Display for CacheLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}-way {} sets {} B lines ({})",
            self.name,
            format_size_exact(self.size),
            self.ways,
            self.sets,
            self.line,
            self.source
        )
    }
}

/// The level number implied by a name (`L1d` → 1, `L3` → 3).
fn level_number(name: &str) -> Result<u8, GeometryError> {
    let unknown = || GeometryError::UnknownLevelName(name.to_string());
    let digits = name
        .strip_prefix('L')
        .or_else(|| name.strip_prefix('l'))
        .ok_or_else(unknown)?;
    let digits = digits.trim_end_matches(['d', 'D', 'i', 'I']);
    match digits.parse::<u8>() {
        Ok(level @ 1..=4) => Ok(level),
        _ => Err(unknown()),
    }
}

/// Canonical name and kind for a user-written level name (`l1D` → (`L1d`, Data)).
fn canonical_name(name: &str) -> Result<(String, CacheKind), GeometryError> {
    let level = level_number(name)?;
    let lower = name.to_ascii_lowercase();
    if level == 1 {
        if lower.ends_with('d') {
            Ok(("L1d".into(), CacheKind::Data))
        } else if lower.ends_with('i') {
            Ok(("L1i".into(), CacheKind::Instruction))
        } else {
            Err(GeometryError::UnknownLevelName(name.to_string()))
        }
    } else if lower.ends_with('d') || lower.ends_with('i') {
        Err(GeometryError::UnknownLevelName(name.to_string()))
    } else {
        Ok((format!("L{level}"), CacheKind::Unified))
    }
}

/// Counts the CPUs in a kernel cpu list (`0-3,8`) → 5.
fn count_cpu_list(list: &str) -> Option<usize> {
    let mut count = 0;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi): (usize, usize) = (lo.parse().ok()?, hi.parse().ok()?);
                count += hi.checked_sub(lo)? + 1;
            }
            None => {
                part.parse::<usize>().ok()?;
                count += 1;
            }
        }
    }
    Some(count)
}

/// Parses one `--cache` override: `NAME=SIZE,WAYS,LINE`, e.g. `L1d=48K,12,64`.
pub fn parse_cache_override(text: &str) -> Result<CacheLevel, GeometryError> {
    let bad = |reason: &str| GeometryError::BadOverride {
        text: text.to_string(),
        reason: reason.to_string(),
    };
    let (name, spec) = text.split_once('=').ok_or_else(|| bad("missing `=`"))?;
    let (name, kind) = canonical_name(name.trim())?;
    let fields: Vec<&str> = spec.split(',').collect();
    let [size, ways, line] = fields.as_slice() else {
        return Err(bad("expected three comma-separated fields"));
    };
    let size = parse_size(size)
        .ok()
        .ok_or_else(|| bad("SIZE is not a number with K/M/G suffix"))?;
    let ways = ways
        .trim()
        .parse::<u64>()
        .map_err(|_| bad("WAYS is not a whole number"))?;
    let line = line
        .trim()
        .parse::<u64>()
        .map_err(|_| bad("LINE is not a whole number"))?;
    let mut level = CacheLevel::new(&name, kind, size, ways, line, GeometrySource::Override)?;
    level.warnings = level.plausibility_warnings();
    Ok(level)
}

/// The names [`Geometry::preset`] accepts.
pub const PRESET_NAMES: &[&str] = &[
    "design-vm",
    "intel-golden-cove",
    "amd-zen4",
    "apple-m1-firestorm",
];

/// A machine's cache levels, plus what detection had to say about them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Geometry {
    pub levels: Vec<CacheLevel>,
    /// Disagreements between sysfs and CPUID and other detection notes.
    pub notes: Vec<String>,
}

impl Geometry {
    /// A named preset of a real machine (see [`PRESET_NAMES`]).
    pub fn preset(name: &str) -> Result<Self, GeometryError> {
        // (name, kind, size, ways, line) per level.
        type Row = (&'static str, CacheKind, u64, u64, u64);
        const K: u64 = 1 << 10;
        const M: u64 = 1 << 20;
        use CacheKind::{Data, Instruction, Unified};
        let rows: &[Row] = match name {
            // The `design-vm` preset's machine (2 vCPU KVM): L1d 48 KiB 12-way,
            // L2 2 MiB 16-way, both with 64 B lines; its "480 MiB L3" is a VM artefact and
            // left out. This is the regression gate's fixed geometry.
            "design-vm" => &[
                ("L1d", Data, 48 * K, 12, 64),
                ("L2", Unified, 2 * M, 16, 64),
            ],
            // Intel Core i9-12900K P-core (Golden Cove): L1d 48 KiB 12-way, L1i 32 KiB 8-way,
            // L2 1.25 MiB 10-way, L3 30 MiB 12-way shared (40 960 sets: 10 slices). Source:
            // Intel 64 and IA-32 Architectures Optimization Reference Manual (Golden Cove
            // section) and CPUID leaf 4 dumps of the i9-12900K (InstLatx64).
            "intel-golden-cove" => &[
                ("L1i", Instruction, 32 * K, 8, 64),
                ("L1d", Data, 48 * K, 12, 64),
                ("L2", Unified, 1280 * K, 10, 64),
                ("L3", Unified, 30 * M, 12, 64),
            ],
            // AMD Zen 4 core (Ryzen 7000 / EPYC 9004): L1d 32 KiB 8-way, L1i 32 KiB 8-way,
            // L2 1 MiB 8-way, L3 32 MiB 16-way per CCD. Source: AMD Software Optimization Guide
            // for AMD Family 19h Processors (pub. 57647), section 2.
            "amd-zen4" => &[
                ("L1i", Instruction, 32 * K, 8, 64),
                ("L1d", Data, 32 * K, 8, 64),
                ("L2", Unified, M, 8, 64),
                ("L3", Unified, 32 * M, 16, 64),
            ],
            // Apple M1 P-core (Firestorm): L1d 128 KiB, L1i 192 KiB, L2 12 MiB shared by the
            // P-cluster, 128 B lines (sysctl hw.l1dcachesize, hw.l2cachesize,
            // hw.cachelinesize on macOS). Associativity is not published: 8-way L1d and
            // 12-way L2 are from Dougall Johnson's reverse-engineered Firestorm notes.
            "apple-m1-firestorm" => &[
                ("L1i", Instruction, 192 * K, 6, 128),
                ("L1d", Data, 128 * K, 8, 128),
                ("L2", Unified, 12 * M, 12, 128),
            ],
            _ => {
                return Err(GeometryError::UnknownPreset {
                    name: name.to_string(),
                    known: PRESET_NAMES.join(", "),
                });
            }
        };
        let mut levels = Vec::with_capacity(rows.len());
        for &(level_name, kind, size, ways, line) in rows {
            let mut level =
                CacheLevel::new(level_name, kind, size, ways, line, GeometrySource::Preset)?;
            level.warnings = level.plausibility_warnings();
            levels.push(level);
        }
        Ok(Self {
            levels,
            notes: vec![format!("preset {name}")],
        })
    }

    /// The levels a data access goes through, innermost first (instruction caches dropped).
    pub fn data_levels(&self) -> Vec<CacheLevel> {
        self.levels
            .iter()
            .filter(|l| l.kind != CacheKind::Instruction)
            .cloned()
            .collect()
    }

    /// Looks a level up by name (`L1d`, `L2`, ...).
    pub fn level(&self, name: &str) -> Option<&CacheLevel> {
        self.levels.iter().find(|l| l.name == name)
    }

    fn sort_levels(&mut self) {
        // Instruction before data at L1, like sysfs index order; otherwise by level.
        self.levels
            .sort_by_key(|l| (l.level, l.kind != CacheKind::Instruction));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    /// (index, level, type, size, ways, sets, line, shared_cpu_list) of one fake sysfs entry.
    type SysfsRow<'a> = (u32, u32, &'a str, &'a str, u32, u32, u32, &'a str);

    /// Writes a fake `cpu0/cache` tree.
    pub(crate) fn fake_sysfs(rows: &[SysfsRow]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for &(index, level, kind, size, ways, sets, line, shared) in rows {
            let d = dir.path().join(format!("index{index}"));
            fs::create_dir(&d).unwrap();
            for (file, value) in [
                ("level", level.to_string()),
                ("type", kind.to_string()),
                ("size", size.to_string()),
                ("ways_of_associativity", ways.to_string()),
                ("number_of_sets", sets.to_string()),
                ("coherency_line_size", line.to_string()),
                ("shared_cpu_list", shared.to_string()),
            ] {
                fs::write(d.join(file), format!("{value}\n")).unwrap();
            }
        }
        dir
    }

    /// The `design-vm` preset's machine: 48 KiB L1d, 2 MiB L2, and the "480 MiB 16-way 491 520-set" L3.
    fn design_vm_tree() -> tempfile::TempDir {
        fake_sysfs(&[
            (0, 1, "Data", "48K", 12, 64, 64, "0"),
            (1, 1, "Instruction", "32K", 8, 64, 64, "0"),
            (2, 2, "Unified", "2048K", 16, 2048, 64, "0"),
            (3, 3, "Unified", "491520K", 16, 491520, 64, "0-1"),
        ])
    }

    #[test]
    fn design_vm_l3_is_flagged_and_l1_l2_are_not() {
        let tree = design_vm_tree();
        let g = Geometry::from_sysfs(tree.path());
        assert_eq!(g.levels.len(), 4, "{g:?}");
        let l1 = g.level("L1d").unwrap();
        assert_eq!((l1.size, l1.ways, l1.sets, l1.line), (48 << 10, 12, 64, 64));
        assert!(l1.warnings.is_empty(), "{:?}", l1.warnings);
        assert!(g.level("L2").unwrap().warnings.is_empty());
        let l3 = g.level("L3").unwrap();
        assert_eq!((l3.size, l3.sets), (480 << 20, 491_520));
        assert_eq!(l3.shared_cpu_count(), Some(2));
        assert!(
            l3.warnings.iter().any(|w| w.contains("rule 2")),
            "{:?}",
            l3.warnings
        );
        assert_eq!(g.data_levels().len(), 3);
    }

    #[test]
    fn this_machines_zen4_tree_is_plausible() {
        let tree = fake_sysfs(&[
            (0, 1, "Data", "32K", 8, 64, 64, "0"),
            (1, 1, "Instruction", "32K", 8, 64, 64, "0"),
            (2, 2, "Unified", "1024K", 8, 2048, 64, "0"),
            (3, 3, "Unified", "32768K", 16, 32768, 64, "0-1"),
        ]);
        let g = Geometry::from_sysfs(tree.path());
        for level in &g.levels {
            assert!(level.warnings.is_empty(), "{level}: {:?}", level.warnings);
            assert_eq!(level.source, GeometrySource::Sysfs);
        }
    }

    #[test]
    fn sliced_l3_with_non_power_of_two_sets_is_plausible() {
        let g = Geometry::preset("intel-golden-cove").unwrap();
        let l3 = g.level("L3").unwrap();
        assert_eq!(l3.sets, 40_960);
        assert!(l3.warnings.is_empty(), "{:?}", l3.warnings);
    }

    #[test]
    fn private_l2_with_non_power_of_two_sets_is_flagged() {
        let level = parse_cache_override("L2=1536K,16,64").unwrap();
        assert_eq!(level.sets, 1536);
        assert!(level.warnings.iter().any(|w| w.contains("rule 1")));
    }

    #[test]
    fn sysfs_sets_disagreeing_with_size_is_a_warning() {
        let tree = fake_sysfs(&[(0, 1, "Data", "32K", 8, 128, 64, "0")]);
        let g = Geometry::from_sysfs(tree.path());
        assert!(g.levels[0].warnings[0].contains("number_of_sets = 128"));
    }

    #[test]
    fn missing_and_broken_sysfs_become_notes() {
        let g = Geometry::from_sysfs(Path::new("/nonexistent/cache"));
        assert!(g.levels.is_empty());
        assert_eq!(g.notes.len(), 1);
        let tree = fake_sysfs(&[(0, 1, "Data", "32K", 7, 64, 64, "0")]);
        let g = Geometry::from_sysfs(tree.path());
        assert!(g.levels.is_empty());
        assert!(g.notes[0].contains("not divisible"), "{:?}", g.notes);
    }

    #[test]
    fn overrides_parse_with_suffixes() {
        let table = [
            ("L1d=48K,12,64", "L1d", 48 << 10, 12, 64, 64),
            ("l2=2M,16,64", "L2", 2 << 20, 16, 64, 2048),
            ("L3=1G,16,64", "L3", 1 << 30, 16, 64, 1 << 20),
            ("L1d=32768,8,64", "L1d", 32 << 10, 8, 64, 64),
            ("L1d=48KiB,12,64", "L1d", 48 << 10, 12, 64, 64),
        ];
        for (text, name, size, ways, line, sets) in table {
            let l = parse_cache_override(text).unwrap();
            assert_eq!(
                (l.name.as_str(), l.size, l.ways, l.line, l.sets),
                (name, size, ways, line, sets),
                "{text}"
            );
            assert_eq!(l.source, GeometrySource::Override);
        }
    }

    #[test]
    fn invalid_overrides_name_the_rule() {
        type Check = fn(&GeometryError) -> bool;
        let table: [(&str, Check); 9] = [
            ("L1d=0,12,64", |e| {
                matches!(e, GeometryError::Zero { field: "size", .. })
            }),
            ("L1d=48K,0,64", |e| {
                matches!(e, GeometryError::Zero { field: "ways", .. })
            }),
            ("L1d=48K,12,48", |e| {
                matches!(e, GeometryError::LineNotPowerOfTwo { line: 48, .. })
            }),
            ("L1d=48K,12,1", |e| {
                matches!(e, GeometryError::LineNotPowerOfTwo { line: 1, .. })
            }),
            ("L1d=48K,7,64", |e| {
                matches!(e, GeometryError::SizeNotDivisible { .. })
            }),
            ("L1d=48K,12", |e| {
                matches!(e, GeometryError::BadOverride { .. })
            }),
            ("L1d48K,12,64", |e| {
                matches!(e, GeometryError::BadOverride { .. })
            }),
            ("L9=48K,12,64", |e| {
                matches!(e, GeometryError::UnknownLevelName(_))
            }),
            ("L1=48K,12,64", |e| {
                matches!(e, GeometryError::UnknownLevelName(_))
            }),
        ];
        for (text, check) in table {
            let err = parse_cache_override(text).unwrap_err();
            assert!(check(&err), "{text}: {err}");
        }
        let msg = parse_cache_override("L1d=48K,7,64")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("not divisible by ways × line"), "{msg}");
    }

    #[test]
    fn presets_are_valid_and_design_vm_matches_design_md() {
        for name in PRESET_NAMES {
            let g = Geometry::preset(name).unwrap();
            assert!(!g.data_levels().is_empty());
            for l in &g.levels {
                assert_eq!(l.source, GeometrySource::Preset);
                assert!(l.warnings.is_empty(), "{name} {l}: {:?}", l.warnings);
            }
        }
        let g = Geometry::preset("design-vm").unwrap();
        let l1 = g.level("L1d").unwrap();
        assert_eq!((l1.size, l1.ways, l1.sets, l1.line), (48 << 10, 12, 64, 64));
        assert!(matches!(
            Geometry::preset("pentium"),
            Err(GeometryError::UnknownPreset { .. })
        ));
    }

    #[test]
    fn cross_check_lists_each_disagreeing_field() {
        let a = parse_cache_override("L1d=48K,12,64").unwrap();
        let b = parse_cache_override("L1d=32K,8,64").unwrap();
        let l2 = parse_cache_override("L2=1M,8,64").unwrap();
        let out = compare_levels(&[a], &[b, l2]);
        let text: Vec<&str> = out.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(text.len(), 3, "{text:?}");
        assert!(text[0].contains("size"));
        assert!(text[1].contains("ways"));
        assert!(text[2].contains("sysfs does not"));
    }

    #[test]
    fn cpu_lists_count() {
        assert_eq!(count_cpu_list("0-1"), Some(2));
        assert_eq!(count_cpu_list("0-3,8,10-11"), Some(7));
        assert_eq!(count_cpu_list("x"), None);
    }
}
