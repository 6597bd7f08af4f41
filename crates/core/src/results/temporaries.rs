//! The temporaries stridelab makes beside its outputs: files that become an output by rename
//! (`tempfile`'s `NamedTempFile::persist`) and a report's staging directory. Each is made by
//! the `tempfile` crate in the output's own directory, so it moves into place on one file
//! system, and is removed when dropped: on every error, panic, or handled Ctrl-C / SIGTERM.
//!
//! Each is named `.{name}.XXXXXX.tmp` after the output it stands for, and its maker holds a
//! `flock` on it for as long as it lives. A SIGKILL leaves the temporary behind but not the lock
//! (the kernel drops a dead process's locks), so [`sweep`] removes what nobody holds and
//! reports what another process is still writing. No process IDs are compared and nothing
//! is removed on a guess: an entry is swept only when its name is exactly that pattern for the
//! output and its lock can be taken.
#![forbid(unsafe_code)]

use std::fs::{self, File, TryLockError};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::{NamedTempFile, TempDir};

/// The end of every temporary's name.
const SUFFIX: &str = ".tmp";

/// Random characters in a temporary's name (tempfile's alphanumerics).
const RANDOM_CHARS: usize = 6;

fn builder(prefix: &str) -> tempfile::Builder<'_, 'static> {
    let mut builder = tempfile::Builder::new();
    builder
        .prefix(prefix)
        .suffix(SUFFIX)
        .rand_bytes(RANDOM_CHARS);
    builder
}

/// A new temporary file in `dir` that is to become `dir/name`, locked while it lives. Its mode
/// is 0o666 less the umask, as `File::create` would make it: results are meant to be read by
/// others (tempfile's own default is 0o600).
pub fn file_in(dir: &Path, name: &str) -> io::Result<NamedTempFile> {
    let prefix = format!(".{name}.");
    let file = builder(&prefix)
        .permissions(fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    file.as_file().try_lock().map_err(io::Error::from)?;
    Ok(file)
}

/// A temporary directory locked while it lives: removed with everything in it when dropped.
#[derive(Debug)]
pub struct LockedDir {
    dir: TempDir,
    /// The open handle that holds the lock.
    _lock: File,
}

impl LockedDir {
    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A new temporary directory in `dir` standing for `dir/name` (a report's staging).
pub fn dir_in(dir: &Path, name: &str) -> io::Result<LockedDir> {
    let prefix = format!(".{name}.");
    let made = builder(&prefix).tempdir_in(dir)?;
    let lock = File::open(made.path())?;
    lock.try_lock().map_err(io::Error::from)?;
    Ok(LockedDir {
        dir: made,
        _lock: lock,
    })
}

/// Whether `entry` is named as a temporary of the output `name` is: `.{name}.XXXXXX.tmp`.
fn is_temporary_of(entry: &str, name: &str) -> bool {
    entry
        .strip_prefix('.')
        .and_then(|rest| rest.strip_prefix(name))
        .and_then(|rest| rest.strip_prefix('.'))
        .and_then(|rest| rest.strip_suffix(SUFFIX))
        .is_some_and(|random| {
            random.len() == RANDOM_CHARS && random.bytes().all(|b| b.is_ascii_alphanumeric())
        })
}

/// Removes the temporaries of the output `name` in `dir` that no process holds (a killed
/// process's) and returns those another process holds, which stay. A symbolic link is never
/// followed or removed; where locks are not supported nothing is removed.
pub fn sweep(dir: &Path, name: &str) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut held = Vec::new();
    for entry in entries.flatten() {
        if !is_temporary_of(&entry.file_name().to_string_lossy(), name) {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if !kind.is_file() && !kind.is_dir() {
            continue;
        }
        let path = entry.path();
        let Ok(handle) = File::open(&path) else {
            continue;
        };
        match handle.try_lock() {
            Ok(()) => {
                let _ = if kind.is_dir() {
                    fs::remove_dir_all(&path)
                } else {
                    fs::remove_file(&path)
                };
            }
            Err(TryLockError::WouldBlock) => held.push(path),
            Err(TryLockError::Error(_)) => {}
        }
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_pattern_is_a_temporary() {
        let cases = [
            (".q.json.aB3xY9.tmp", "q.json", true),
            (".q.json.aB3xY9.tmp", "q", false),
            (".q.json.aB3xY.tmp", "q.json", false),
            (".q.json.aB3-Y9.tmp", "q.json", false),
            ("q.json.aB3xY9.tmp", "q.json", false),
            (".q.json.aB3xY9", "q.json", false),
            (".notes.aB3xY9.tmp", "q.json", false),
            (".q.json.tmp-12", "q.json", false),
        ];
        for (entry, name, want) in cases {
            assert_eq!(is_temporary_of(entry, name), want, "{entry} for {name}");
        }
    }

    /// A temporary nobody holds goes (file or directory); one held stays and is reported, as
    /// does everything not named for the output.
    #[test]
    fn a_sweep_removes_what_nobody_holds_and_reports_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let held_file = file_in(dir.path(), "q.json").unwrap();
        let held_dir = dir_in(dir.path(), "q.json").unwrap();
        let dead_file = dir.path().join(".q.json.abc123.tmp");
        let dead_dir = dir.path().join(".q.json.def456.tmp");
        let other = dir.path().join(".notes.abc123.tmp");
        fs::write(&dead_file, "half").unwrap();
        fs::create_dir(&dead_dir).unwrap();
        fs::write(dead_dir.join("inner"), "half").unwrap();
        fs::write(&other, "keep").unwrap();
        let mut held = sweep(dir.path(), "q.json");
        held.sort();
        let mut want = vec![
            held_file.path().to_path_buf(),
            held_dir.path().to_path_buf(),
        ];
        want.sort();
        assert_eq!(held, want);
        assert!(!dead_file.exists() && !dead_dir.exists());
        assert!(other.exists());
        let (file_path, dir_path) = (
            held_file.path().to_path_buf(),
            held_dir.path().to_path_buf(),
        );
        drop((held_file, held_dir));
        assert!(
            !file_path.exists() && !dir_path.exists(),
            "dropped, removed"
        );
    }

    #[test]
    fn a_temporary_file_becomes_the_output_by_rename() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = file_in(dir.path(), "q.json").unwrap();
        io::Write::write_all(&mut file, b"{}").unwrap();
        file.persist(dir.path().join("q.json")).unwrap();
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["q.json"]);
    }
}
