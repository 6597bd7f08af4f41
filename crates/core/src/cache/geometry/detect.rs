//! Detecting this machine's caches: the sysfs tree under `/sys/devices/system/cpu/cpu0/cache`
//! (or a fake root in tests) and, on x86-64, CPUID's deterministic cache parameters as a
//! cross-check (or the source when sysfs is missing). Disagreements become notes, and so does
//! a sysfs level that cannot be read (`SysfsLevelError`): detection never fails.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::{CacheKind, CacheLevel, Geometry, GeometryError, GeometrySource};
use crate::units::parse_size;

impl Geometry {
    /// Detects this machine's caches: sysfs first, CPUID as cross-check (or fallback on x86).
    pub fn detect() -> Self {
        let mut geometry = Self::from_sysfs(Path::new("/sys/devices/system/cpu/cpu0/cache"));
        cross_check_cpuid(&mut geometry);
        geometry
    }

    /// Reads `index*/` directories under `root` (a real or fake `.../cpu0/cache`). Never fails:
    /// unreadable or invalid entries become notes.
    pub fn from_sysfs(root: &Path) -> Self {
        let mut geometry = Self::default();
        let mut dirs: Vec<PathBuf> = match fs::read_dir(root) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("index"))
                })
                .collect(),
            Err(err) => {
                geometry
                    .notes
                    .push(format!("sysfs: cannot read {}: {err}", root.display()));
                return geometry;
            }
        };
        dirs.sort_by_key(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n["index".len()..].parse::<u32>().ok())
                .unwrap_or(u32::MAX)
        });
        for dir in dirs {
            match read_sysfs_level(&dir) {
                Ok(level) => geometry.levels.push(level),
                Err(reason) => geometry
                    .notes
                    .push(format!("sysfs: {}: {reason}", dir.display())),
            }
        }
        geometry.sort_levels();
        geometry
    }
}

/// Why one `index*/` directory does not describe a cache level. It becomes a note
/// (`sysfs: DIR: …`), so one odd directory never hides the other levels.
#[derive(Debug, Error)]
enum SysfsLevelError {
    // Causes are part of the message (fields not named `source`) so error chains do not repeat them.
    #[error("{file}: {error}")]
    Read {
        file: &'static str,
        error: io::Error,
    },
    #[error("{file}: `{text}` is not a number")]
    NotANumber { file: &'static str, text: String },
    #[error("type: unknown cache type `{0}`")]
    UnknownType(String),
    #[error("size: `{0}` is not a size")]
    NotASize(String),
    #[error(transparent)]
    Geometry(#[from] GeometryError),
    #[error("level {0} out of range")]
    LevelOutOfRange(u64),
}

/// One level from its sysfs directory; the optional files (`number_of_sets`,
/// `shared_cpu_list`) only add warnings and notes, the others must read and parse.
fn read_sysfs_level(dir: &Path) -> Result<CacheLevel, SysfsLevelError> {
    let read = |file: &'static str| -> Result<String, SysfsLevelError> {
        fs::read_to_string(dir.join(file))
            .map(|s| s.trim().to_string())
            .map_err(|error| SysfsLevelError::Read { file, error })
    };
    let number = |file: &'static str| -> Result<u64, SysfsLevelError> {
        let text = read(file)?;
        text.parse::<u64>()
            .map_err(|_| SysfsLevelError::NotANumber { file, text })
    };
    let level = number("level")?;
    let kind = match read("type")?.as_str() {
        "Data" => CacheKind::Data,
        "Instruction" => CacheKind::Instruction,
        "Unified" => CacheKind::Unified,
        other => return Err(SysfsLevelError::UnknownType(other.to_string())),
    };
    let name = match (level, kind) {
        (1, CacheKind::Data) => "L1d".to_string(),
        (1, CacheKind::Instruction) => "L1i".to_string(),
        (1, CacheKind::Unified) => "L1".to_string(),
        (n, _) => format!("L{n}"),
    };
    let size_text = read("size")?;
    let size = parse_size(&size_text).map_err(|_| SysfsLevelError::NotASize(size_text))?;
    let ways = number("ways_of_associativity")?;
    let line = number("coherency_line_size")?;
    // "L1" (unified L1) is not a name `level_number` rejects; kind is kept as read.
    let mut cache = CacheLevel::new(&name, kind, size, ways, line, GeometrySource::Sysfs)?;
    cache.level = u8::try_from(level).map_err(|_| SysfsLevelError::LevelOutOfRange(level))?;
    let mut warnings = Vec::new();
    if let Ok(reported_sets) = number("number_of_sets")
        && reported_sets != u64::from(cache.sets)
    {
        warnings.push(format!(
            "sysfs number_of_sets = {reported_sets} but size / (ways × line) = {}",
            cache.sets
        ));
    }
    cache.shared_cpus = read("shared_cpu_list").ok();
    warnings.extend(cache.plausibility_warnings());
    cache.warnings = warnings;
    Ok(cache)
}

/// Compares detected levels with CPUID; on x86-64 without sysfs, CPUID becomes the source.
#[cfg(target_arch = "x86_64")]
fn cross_check_cpuid(geometry: &mut Geometry) {
    let cpuid_levels = cpuid_levels();
    if cpuid_levels.is_empty() {
        geometry
            .notes
            .push("cpuid: no deterministic cache parameters leaf".into());
        return;
    }
    if geometry.levels.is_empty() {
        geometry.levels = cpuid_levels;
        geometry
            .notes
            .push("sysfs had no caches; levels come from CPUID".into());
        return;
    }
    let disagreements = compare_levels(&geometry.levels, &cpuid_levels);
    for (name, message) in disagreements {
        if let Some(level) = geometry.levels.iter_mut().find(|l| l.name == name) {
            level.warnings.push(message.clone());
        }
        geometry.notes.push(format!("{name}: {message}"));
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn cross_check_cpuid(_geometry: &mut Geometry) {}

/// CPUID's view of the caches (leaf 4 on Intel, 0x8000_001D on AMD).
#[cfg(target_arch = "x86_64")]
fn cpuid_levels() -> Vec<CacheLevel> {
    use raw_cpuid::{CacheType, CpuId};
    let Some(params) = CpuId::new().get_cache_parameters() else {
        return Vec::new();
    };
    let mut levels = Vec::new();
    for p in params {
        let kind = match p.cache_type() {
            CacheType::Data => CacheKind::Data,
            CacheType::Instruction => CacheKind::Instruction,
            CacheType::Unified => CacheKind::Unified,
            _ => continue,
        };
        let name = match (p.level(), kind) {
            (1, CacheKind::Data) => "L1d".to_string(),
            (1, CacheKind::Instruction) => "L1i".to_string(),
            (n, _) => format!("L{n}"),
        };
        let ways = p.associativity() as u64;
        let line = p.coherency_line_size() as u64;
        let size = ways * p.physical_line_partitions() as u64 * line * p.sets() as u64;
        if let Ok(mut level) = CacheLevel::new(&name, kind, size, ways, line, GeometrySource::Cpuid)
        {
            // Used as the geometry where sysfs is missing: as open to doubt as sysfs.
            level.warnings = level.plausibility_warnings();
            levels.push(level);
        }
    }
    levels
}

/// Pairs levels by name and describes every field on which `cpuid` disagrees with `primary`.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn compare_levels(
    primary: &[CacheLevel],
    cpuid: &[CacheLevel],
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for level in primary {
        let Some(other) = cpuid.iter().find(|c| c.name == level.name) else {
            out.push((
                level.name.clone(),
                "CPUID does not report this level".to_string(),
            ));
            continue;
        };
        let fields = [
            ("size", level.size, other.size),
            ("ways", level.ways.into(), other.ways.into()),
            ("line", level.line.into(), other.line.into()),
            ("sets", level.sets.into(), other.sets.into()),
        ];
        for (field, ours, theirs) in fields {
            if ours != theirs {
                out.push((
                    level.name.clone(),
                    format!("sysfs and CPUID disagree on {field}: {ours} vs {theirs}"),
                ));
            }
        }
    }
    for other in cpuid {
        if !primary.iter().any(|l| l.name == other.name) {
            out.push((
                other.name.clone(),
                format!("CPUID reports {other} but sysfs does not"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sysfs level with `broken` (file, text) in place of a good file, or without the file
    /// when the text is `None`: the notes `from_sysfs` gives, and the level's directory.
    fn notes_with(broken: (&str, Option<&str>)) -> (Vec<String>, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("index0");
        fs::create_dir(&dir).unwrap();
        let good = [
            ("level", "1"),
            ("type", "Data"),
            ("size", "32K"),
            ("ways_of_associativity", "8"),
            ("coherency_line_size", "64"),
        ];
        for (file, text) in good {
            let text = if file == broken.0 {
                broken.1
            } else {
                Some(text)
            };
            if let Some(text) = text {
                fs::write(dir.join(file), format!("{text}\n")).unwrap();
            }
        }
        (Geometry::from_sysfs(root.path()).notes, dir)
    }

    /// Each way a level's files can be wrong is one note naming the file, worded as it always was.
    #[test]
    fn a_broken_level_is_a_note_naming_its_file() {
        let missing = io::Error::from_raw_os_error(libc::ENOENT);
        let cases = [
            (
                ("type", Some("Weird")),
                "type: unknown cache type `Weird`".to_string(),
            ),
            (
                ("size", Some("lots")),
                "size: `lots` is not a size".to_string(),
            ),
            (
                ("ways_of_associativity", Some("x")),
                "ways_of_associativity: `x` is not a number".to_string(),
            ),
            (("level", None), format!("level: {missing}")),
            (
                ("coherency_line_size", Some("48")),
                "L1d: line size 48 B is not a power of two of at least 2 B".to_string(),
            ),
        ];
        for (broken, reason) in cases {
            let (notes, dir) = notes_with(broken);
            assert_eq!(notes, [format!("sysfs: {}: {reason}", dir.display())]);
        }
        assert!(notes_with(("none", None)).0.is_empty());
    }
}
