//! The one geometry a command simulates, and how it is chosen: a base (this machine's detected
//! data levels, or one named preset's) with single levels replaced or added by `--cache`.
//! `sim`, `run` (and so the main job's suite), `info` and the results document all read the
//! same [`ChosenGeometry`], so a level's warnings travel with it to every place it is used.
//!
//! A level with warnings (e.g. the "480 MiB" L3 a hypervisor reports) is **simulated as given
//! and marked**, never silently resized or dropped: substituting a size would print numbers for
//! a cache nobody described. The user replaces it explicitly (`--cache L3=8M,16,64`) or picks
//! a preset; every consumer names the level and the reason.

use std::path::{Path, PathBuf};

use super::{CacheKind, CacheLevel, Geometry, GeometryError, GeometrySource};
use crate::units::format_size_exact;

/// What the user asked for: at most one preset as the base (else this machine's geometry),
/// and `--cache` levels, each replacing the base's level of that name or adding one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GeometryChoice {
    /// A name from [`super::PRESET_NAMES`]; `None`: this machine's detected levels.
    pub preset: Option<String>,
    /// Parsed `--cache NAME=SIZE,WAYS,LINE` levels, each name at most once.
    pub caches: Vec<CacheLevel>,
    /// Read this machine's geometry from this `cpu0/cache`-like tree instead of
    /// `/sys/devices/system/cpu/cpu0/cache` (tests point it at a fixture).
    pub sysfs_root: Option<PathBuf>,
}

/// Where the base of a chosen geometry came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GeometryBase {
    /// This machine's detected levels (sysfs, CPUID).
    Machine,
    /// The levels read from a sysfs-like tree that is not this machine's.
    SysfsTree(PathBuf),
    /// A named preset.
    Preset(String),
}

/// The data levels a command simulates, innermost first, each with its `source` and
/// `warnings`, plus what it was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChosenGeometry {
    pub base: GeometryBase,
    pub levels: Vec<CacheLevel>,
    /// The base's levels a `--cache` level of the same name replaced.
    pub replaced: Vec<CacheLevel>,
}

impl GeometryChoice {
    /// A choice of one preset and nothing else.
    pub fn preset(name: &str) -> Self {
        Self {
            preset: Some(name.to_string()),
            ..Self::default()
        }
    }

    /// Whether the user replaced any of this machine's geometry.
    pub fn is_given(&self) -> bool {
        self.preset.is_some() || !self.caches.is_empty()
    }

    /// This machine's geometry as detection sees it, or the tree at `sysfs_root` (with a note
    /// saying so, and no CPUID cross-check: CPUID describes this CPU, not the tree's).
    pub fn detect(&self) -> Geometry {
        match &self.sysfs_root {
            Some(root) => Geometry::from_sysfs_tree(root),
            None => Geometry::detect(),
        }
    }

    /// The geometry to simulate, detecting this machine's only when no preset replaces it.
    pub fn choose(&self) -> Result<ChosenGeometry, GeometryError> {
        let machine = if self.preset.is_some() {
            Geometry::default()
        } else {
            self.detect()
        };
        self.resolve(&machine)
    }

    /// The geometry to simulate on top of `machine` (used only without a preset):
    ///
    /// 1. the base is the preset's data levels, else `machine`'s;
    /// 2. each `--cache` level replaces the base's level of the same name in place, or is
    ///    added; levels stay ordered innermost first;
    /// 3. a name given twice in `--cache` is an error (which one would win is not obvious), and
    ///    so is an instruction cache (no data access reaches it);
    /// 4. no levels at all is an error.
    pub fn resolve(&self, machine: &Geometry) -> Result<ChosenGeometry, GeometryError> {
        // Rule 1.
        let (base, mut levels) = match &self.preset {
            Some(name) => (
                GeometryBase::Preset(name.clone()),
                Geometry::preset(name)?.data_levels(),
            ),
            None => (
                match &self.sysfs_root {
                    Some(root) => GeometryBase::SysfsTree(root.clone()),
                    None => GeometryBase::Machine,
                },
                machine.data_levels(),
            ),
        };
        // Rule 3.
        for (i, level) in self.caches.iter().enumerate() {
            if self.caches[..i].iter().any(|l| l.name == level.name) {
                return Err(GeometryError::DuplicateLevel(level.name.clone()));
            }
            if level.kind == CacheKind::Instruction {
                return Err(GeometryError::InstructionLevel(level.name.clone()));
            }
        }
        // Rule 2.
        let mut replaced = Vec::new();
        for level in &self.caches {
            match levels.iter_mut().find(|l| l.name == level.name) {
                Some(existing) => replaced.push(std::mem::replace(existing, level.clone())),
                None => levels.push(level.clone()),
            }
        }
        levels.sort_by_key(|l| l.level);
        // Rule 4.
        if levels.is_empty() {
            return Err(GeometryError::Empty);
        }
        Ok(ChosenGeometry {
            base,
            levels,
            replaced,
        })
    }
}

impl ChosenGeometry {
    /// One preset's data levels, unchanged.
    pub fn preset(name: &str) -> Result<Self, GeometryError> {
        GeometryChoice::preset(name).resolve(&Geometry::default())
    }

    /// Whether these levels differ from this machine's detected ones (a preset or `--cache`).
    pub fn is_override(&self) -> bool {
        matches!(self.base, GeometryBase::Preset(_))
            || self
                .levels
                .iter()
                .any(|l| l.source == GeometrySource::Override)
    }

    /// The preset the base came from, if any.
    pub fn preset_name(&self) -> Option<&str> {
        match &self.base {
            GeometryBase::Preset(name) => Some(name),
            _ => None,
        }
    }

    /// Where each level came from: `L1d, L3 from this machine (sysfs); L2 from --cache
    /// (replacing this machine's 2 MiB 16-way)`.
    pub fn describe(&self) -> String {
        let base_label = match &self.base {
            GeometryBase::Machine => {
                let mut sources: Vec<String> = self
                    .levels
                    .iter()
                    .filter(|l| l.source != GeometrySource::Override)
                    .map(|l| l.source.to_string())
                    .collect();
                sources.dedup();
                format!("this machine ({})", sources.join(", "))
            }
            GeometryBase::SysfsTree(root) => format!("the sysfs tree {}", root.display()),
            GeometryBase::Preset(name) => format!("preset {name}"),
        };
        let owner = match &self.base {
            GeometryBase::Preset(_) => "the preset's",
            GeometryBase::Machine => "this machine's",
            GeometryBase::SysfsTree(_) => "the tree's",
        };
        let names = |levels: &[&CacheLevel]| -> String {
            levels
                .iter()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (overrides, from_base): (Vec<&CacheLevel>, Vec<&CacheLevel>) = self
            .levels
            .iter()
            .partition(|l| l.source == GeometrySource::Override);
        let mut parts = Vec::new();
        if !from_base.is_empty() {
            parts.push(format!("{} from {base_label}", names(&from_base)));
        }
        for level in overrides {
            let how = match self.replaced.iter().find(|r| r.name == level.name) {
                Some(old) => format!(
                    "replacing {owner} {} {}-way",
                    format_size_exact(old.size),
                    old.ways
                ),
                None if from_base.is_empty() => "no other level known".to_string(),
                None => "added".to_string(),
            };
            parts.push(format!("{} from --cache ({how})", level.name));
        }
        parts.join("; ")
    }

    /// One line per warning of every level, naming the level: `L3 300 MiB 20-way (sysfs):
    /// implausible: …`. Empty when every level is trusted.
    pub fn warnings(&self) -> Vec<String> {
        self.levels.iter().flat_map(level_warnings).collect()
    }
}

/// `warning: <w>` for each of `warnings` (from [`ChosenGeometry::warnings`]), then one line
/// saying that `what_uses_them` uses those levels as given and how to replace them; empty
/// when there are none.
pub fn warning_lines(warnings: &[String], what_uses_them: &str) -> Vec<String> {
    if warnings.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<String> = warnings.iter().map(|w| format!("warning: {w}")).collect();
    lines.push(format!(
        "warning: {what_uses_them} as given; --cache NAME=SIZE,WAYS,LINE replaces one level, \
         --preset NAME all of them"
    ));
    lines
}

/// `L3 300 MiB 20-way (sysfs): <warning>` for each of `level`'s warnings.
pub fn level_warnings(level: &CacheLevel) -> Vec<String> {
    level
        .warnings
        .iter()
        .map(|warning| {
            format!(
                "{} {} {}-way ({}): {warning}",
                level.name,
                format_size_exact(level.size),
                level.ways,
                level.source
            )
        })
        .collect()
}

impl Geometry {
    /// The levels under `root` (a `cpu0/cache`-like tree), with a note that they are not this
    /// machine's.
    pub fn from_sysfs_tree(root: &Path) -> Self {
        let mut geometry = Self::from_sysfs(root);
        geometry.notes.push(format!(
            "read from {} (not this machine's sysfs; no CPUID cross-check)",
            root.display()
        ));
        geometry
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_cache_override;
    use super::*;

    fn machine() -> Geometry {
        let mut l3 = CacheLevel::new(
            "L3",
            CacheKind::Unified,
            300 << 20,
            20,
            64,
            GeometrySource::Sysfs,
        )
        .unwrap();
        l3.warnings = l3.plausibility_warnings();
        let level = |name, kind, size, ways| {
            CacheLevel::new(name, kind, size, ways, 64, GeometrySource::Sysfs).unwrap()
        };
        Geometry {
            levels: vec![
                level("L1i", CacheKind::Instruction, 32 << 10, 8),
                level("L1d", CacheKind::Data, 48 << 10, 12),
                level("L2", CacheKind::Unified, 2 << 20, 16),
                l3,
            ],
            notes: Vec::new(),
        }
    }

    fn choice(preset: Option<&str>, caches: &[&str]) -> GeometryChoice {
        GeometryChoice {
            preset: preset.map(str::to_string),
            caches: caches
                .iter()
                .map(|c| parse_cache_override(c).unwrap())
                .collect(),
            sysfs_root: None,
        }
    }

    /// (level name, size, source) of each chosen level.
    fn summary(chosen: &ChosenGeometry) -> Vec<(String, u64, GeometrySource)> {
        chosen
            .levels
            .iter()
            .map(|l| (l.name.clone(), l.size, l.source))
            .collect()
    }

    #[test]
    fn cache_levels_replace_or_add_on_top_of_the_base() {
        use GeometrySource::{Override, Preset, Sysfs};
        const K: u64 = 1 << 10;
        const M: u64 = 1 << 20;
        // (preset, --cache levels, the `caches:` description) → (name, size, source) per level.
        type Row = (Option<&'static str>, &'static [&'static str], &'static str);
        type Levels = &'static [(&'static str, u64, GeometrySource)];
        let table: [(Row, Levels); 5] = [
            (
                (None, &[], "L1d, L2, L3 from this machine (sysfs)"),
                &[
                    ("L1d", 48 * K, Sysfs),
                    ("L2", 2 * M, Sysfs),
                    ("L3", 300 * M, Sysfs),
                ],
            ),
            (
                (
                    None,
                    &["L2=1M,8,64"],
                    "L1d, L3 from this machine (sysfs); L2 from --cache (replacing this \
                     machine's 2 MiB 16-way)",
                ),
                &[
                    ("L1d", 48 * K, Sysfs),
                    ("L2", M, Override),
                    ("L3", 300 * M, Sysfs),
                ],
            ),
            (
                (
                    Some("amd-zen4"),
                    &["L1d=48K,12,64"],
                    "L2, L3 from preset amd-zen4; L1d from --cache (replacing the preset's \
                     32 KiB 8-way)",
                ),
                &[
                    ("L1d", 48 * K, Override),
                    ("L2", M, Preset),
                    ("L3", 32 * M, Preset),
                ],
            ),
            (
                (
                    Some("design-vm"),
                    &["L4=64M,16,64", "L3=8M,16,64"],
                    "L1d, L2 from preset design-vm; L3 from --cache (added); L4 from --cache \
                     (added)",
                ),
                &[
                    ("L1d", 48 * K, Preset),
                    ("L2", 2 * M, Preset),
                    ("L3", 8 * M, Override),
                    ("L4", 64 * M, Override),
                ],
            ),
            (
                (Some("amd-zen4"), &[], "L1d, L2, L3 from preset amd-zen4"),
                &[
                    ("L1d", 32 * K, Preset),
                    ("L2", M, Preset),
                    ("L3", 32 * M, Preset),
                ],
            ),
        ];
        for ((preset, caches, described), expected) in table {
            let chosen = choice(preset, caches).resolve(&machine()).unwrap();
            let expected: Vec<_> = expected
                .iter()
                .map(|&(n, s, src)| (n.to_string(), s, src))
                .collect();
            assert_eq!(summary(&chosen), expected, "{preset:?} {caches:?}");
            assert_eq!(chosen.describe(), described);
            assert_eq!(chosen.is_override(), preset.is_some() || !caches.is_empty());
        }
    }

    #[test]
    fn an_implausible_level_keeps_its_size_and_its_warning() {
        let chosen = choice(None, &[]).resolve(&machine()).unwrap();
        let l3 = &chosen.levels[2];
        assert_eq!(l3.size, 300 << 20, "simulated as given, not resized");
        let warnings = chosen.warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("L3 300 MiB 20-way (sysfs): implausible: "),
            "{warnings:?}"
        );
        // Replacing it removes the warning with the level.
        let fixed = choice(None, &["L3=8M,16,64"]).resolve(&machine()).unwrap();
        assert!(fixed.warnings().is_empty());
    }

    #[test]
    fn a_level_given_twice_and_no_levels_at_all_are_errors() {
        let twice = choice(None, &["L2=1M,8,64", "l2=2M,16,64"]).resolve(&machine());
        assert_eq!(twice, Err(GeometryError::DuplicateLevel("L2".into())));
        assert!(
            GeometryError::DuplicateLevel("L2".into())
                .to_string()
                .contains("--cache gives L2 twice"),
        );
        assert_eq!(
            choice(None, &[]).resolve(&Geometry::default()),
            Err(GeometryError::Empty)
        );
        let only = choice(None, &["L1d=32K,8,64"])
            .resolve(&Geometry::default())
            .unwrap();
        assert_eq!(only.describe(), "L1d from --cache (no other level known)");
        assert!(matches!(
            choice(Some("pentium"), &[]).resolve(&machine()),
            Err(GeometryError::UnknownPreset { .. })
        ));
        assert_eq!(
            choice(None, &["L1i=32K,8,64"]).resolve(&machine()),
            Err(GeometryError::InstructionLevel("L1i".into()))
        );
    }
}
