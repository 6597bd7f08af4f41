//! What a gate run against a base revision costs the machine, measured: the disk the kept base
//! builds take, the load average around the rounds, and a path as the user would type it.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

/// Bytes a file tree takes on disk: its allocated blocks (as `du` counts them, so sparse and
/// partly written files count what they hold), each file once however many hard links it has
/// (cargo hard-links its outputs), symbolic links not followed. A missing path takes nothing.
pub(crate) fn disk_usage(path: &Path) -> io::Result<u64> {
    let mut seen = HashSet::new();
    tree_usage(path, &mut seen)
}

fn tree_usage(path: &Path, seen: &mut HashSet<(u64, u64)>) -> io::Result<u64> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut total = if first_link(&meta, seen) {
        allocated(&meta)
    } else {
        0
    };
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            total += tree_usage(&entry?.path(), seen)?;
        }
    }
    Ok(total)
}

/// Whether this is the first of a file's hard links met (always, for a file with one link).
#[cfg(unix)]
fn first_link(meta: &std::fs::Metadata, seen: &mut HashSet<(u64, u64)>) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.nlink() <= 1 || meta.is_dir() || seen.insert((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn first_link(_: &std::fs::Metadata, _: &mut HashSet<(u64, u64)>) -> bool {
    true
}

#[cfg(unix)]
fn allocated(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    // `st_blocks` counts 512-byte units whatever the file system's block size.
    meta.blocks() * 512
}

#[cfg(not(unix))]
fn allocated(meta: &std::fs::Metadata) -> u64 {
    meta.len()
}

/// The 1-minute load average (`/proc/loadavg`), where the system has one.
pub(crate) fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    parse_load_average(&text)
}

fn parse_load_average(text: &str) -> Option<f64> {
    text.split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|l: &f64| l.is_finite() && *l >= 0.0)
}

/// Logical CPUs this process may run on.
pub(crate) fn logical_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `path` relative to the current directory when it lies inside it (as the user would type
/// it in a command), else as it is.
pub(crate) fn as_typed(path: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|here| path.strip_prefix(here).ok().map(Path::to_path_buf))
        .filter(|relative| !relative.as_os_str().is_empty())
        .unwrap_or_else(|| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_usage_counts_every_file_below_and_nothing_for_a_missing_path() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(disk_usage(&dir.path().join("none")).unwrap(), 0);
        let empty = disk_usage(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/one"), vec![1u8; 100_000]).unwrap();
        std::fs::write(dir.path().join("a/b/two"), vec![2u8; 300_000]).unwrap();
        let full = disk_usage(dir.path()).unwrap();
        // The two files' 400,000 bytes are allocated; directories add a few blocks at most.
        assert!(full - empty >= 400_000, "{empty} → {full}");
        assert!(full - empty < 400_000 + (1 << 20), "{empty} → {full}");
        // A second hard link to a file (as cargo makes) takes no more disk.
        std::fs::hard_link(dir.path().join("a/b/two"), dir.path().join("a/linked")).unwrap();
        assert_eq!(disk_usage(dir.path()).unwrap(), full);
    }

    #[test]
    fn the_load_average_is_the_first_field() {
        // (text, load)
        let cases = [
            ("0.52 0.58 0.59 1/123 4567\n", Some(0.52)),
            ("5.20 4.1 3.0 2/300 1", Some(5.2)),
            ("", None),
            ("x 1 2", None),
            ("-1 0 0", None),
        ];
        for (text, load) in cases {
            assert_eq!(parse_load_average(text), load, "{text:?}");
        }
    }

    #[test]
    fn a_path_inside_the_current_directory_is_shown_relative() {
        let here = std::env::current_dir().unwrap();
        assert_eq!(
            as_typed(&here.join("target/gate-base")),
            PathBuf::from("target/gate-base")
        );
        assert_eq!(
            as_typed(Path::new("/elsewhere/x")),
            PathBuf::from("/elsewhere/x")
        );
        assert_eq!(as_typed(&here), here);
    }
}
