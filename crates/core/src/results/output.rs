//! Output-path policy: every file a command writes is checked before any work starts, and no
//! write ever destroys something stridelab did not create.
//!
//! - `-` means stdout. An existing character device or FIFO (`/dev/stdout`, a named pipe) is
//!   written in place, never renamed over; a block device, a socket or a directory is refused.
//! - A new file needs a writable directory, probed by creating and removing a temporary file, so
//!   a read-only location fails before measuring. The directory of a path the user named must
//!   exist: stridelab creates no directory it was not asked for ([`Parents::MustExist`]). Only a
//!   default location the tool owns (`reports/…`, the wisdom cache) may be created, when the
//!   file is written ([`Parents::MayCreate`], [`FileTarget::Default`]); then its nearest
//!   existing ancestor is probed.
//! - No two outputs, and no output and input, may be the same file (same inode, or the same
//!   resolved path when the file does not exist yet).
//! - A file is written through a temporary beside it that becomes the file by rename
//!   (`results/temporaries.rs`): removed on failure, and a killed process's leftover is removed by
//!   the next write of that file.
#![forbid(unsafe_code)]

use std::fs;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

use thiserror::Error;

/// The file name that means stdout.
pub const STDOUT: &str = "-";

/// Why an output path cannot be used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum OutputError {
    #[error("{role} `{path}` is a directory; give a file name inside it instead")]
    IsDirectory { role: &'static str, path: PathBuf },
    #[error("{role} `{path}` is a {kind}; stridelab writes regular files, stdout (`-`) or pipes")]
    Unsupported {
        role: &'static str,
        path: PathBuf,
        kind: &'static str,
    },
    #[error(
        "{role} `{path}`: the directory `{dir}` does not exist; create it first or choose \
         another path (stridelab creates no directory for a path it is given)"
    )]
    MissingDirectory {
        role: &'static str,
        path: PathBuf,
        dir: PathBuf,
    },
    #[error("{role} `{path}`: `{ancestor}` is not a directory")]
    ParentNotDirectory {
        role: &'static str,
        path: PathBuf,
        ancestor: PathBuf,
    },
    #[error("{role} `{path}`: cannot create files in `{dir}`: {error}; choose a writable location")]
    NotWritable {
        role: &'static str,
        path: PathBuf,
        dir: PathBuf,
        error: std::io::Error,
    },
    #[error(
        "{role} `{path}` and {other_role} `{other}` are the same file; give each output its own file"
    )]
    SameOutput {
        role: &'static str,
        path: PathBuf,
        other_role: &'static str,
        other: PathBuf,
    },
    #[error(
        "{role} `{path}` is the same file as the input {input_role} `{input}`; writing it would destroy the input, so choose another file"
    )]
    OverwritesInput {
        role: &'static str,
        path: PathBuf,
        input_role: &'static str,
        input: PathBuf,
    },
    #[error("{role} and {other_role} both go to stdout (`-`); send one of them to a file")]
    TwoOnStdout {
        role: &'static str,
        other_role: &'static str,
    },
    #[error("cannot {action} `{path}`: {error}")]
    Io {
        action: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
}

/// Where one checked output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileTarget {
    /// `-`: the process's stdout.
    Stdout,
    /// An existing character device or FIFO: opened and written in place.
    Special(PathBuf),
    /// A regular file (existing or not) in an existing directory: written through a temporary
    /// file and a rename.
    File(PathBuf),
    /// A regular file at a default location stridelab owns: written as [`FileTarget::File`],
    /// after creating its missing directories.
    Default(PathBuf),
}

/// Whether an output's missing directories may be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parents {
    /// The user named the path: its directory must exist already.
    MustExist,
    /// A default location stridelab owns: missing directories are created when the file is
    /// written, so the nearest existing ancestor must be a writable directory.
    MayCreate,
}

impl FileTarget {
    /// The path to name in messages (`stdout` for `-`).
    pub fn display(&self) -> String {
        match self {
            FileTarget::Stdout => "stdout".into(),
            FileTarget::Special(p) | FileTarget::File(p) | FileTarget::Default(p) => {
                p.display().to_string()
            }
        }
    }

    /// The regular file written, if the target is one (a default location is one too).
    pub fn path(&self) -> Option<PathBuf> {
        match self {
            FileTarget::File(p) | FileTarget::Default(p) => Some(p.clone()),
            _ => None,
        }
    }

    /// Writes `bytes` as the whole content of the target.
    pub fn write(&self, bytes: &[u8]) -> Result<(), super::ResultsError> {
        match self {
            FileTarget::Stdout => write_stdout(bytes),
            FileTarget::Special(p) | FileTarget::File(p) => super::write_atomic(p, bytes),
            FileTarget::Default(p) => {
                if let Err((path, error)) = self.create_default_directory() {
                    return Err(super::ResultsError::Io {
                        action: "create directory",
                        path,
                        error,
                    });
                }
                super::write_atomic(p, bytes)
            }
        }
    }

    /// Creates the missing directories of a [`FileTarget::Default`] (nothing for the others).
    fn create_default_directory(&self) -> Result<(), (PathBuf, std::io::Error)> {
        if let FileTarget::Default(path) = self
            && let Some(parent) = parent_of(path)
        {
            fs::create_dir_all(&parent).map_err(|error| (parent, error))?;
        }
        Ok(())
    }

    /// Appends `bytes` (a regular file is created when missing).
    pub fn append(&self, bytes: &[u8]) -> Result<(), OutputError> {
        let path = match self {
            FileTarget::Stdout => {
                return write_stdout(bytes).map_err(|e| OutputError::Io {
                    action: "write",
                    path: PathBuf::from("stdout"),
                    error: std::io::Error::other(e.to_string()),
                });
            }
            FileTarget::Special(p) | FileTarget::File(p) | FileTarget::Default(p) => p,
        };
        self.create_default_directory()
            .map_err(|(dir, error)| io("create directory", &dir)(error))?;
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io("open", path))?;
        file.write_all(bytes).map_err(io("write", path))
    }
}

fn write_stdout(bytes: &[u8]) -> Result<(), super::ResultsError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|error| super::ResultsError::Io {
            action: "write",
            path: PathBuf::from("stdout"),
            error,
        })
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> OutputError {
    let path = path.to_path_buf();
    move |error| OutputError::Io {
        action,
        path,
        error,
    }
}

/// What makes two paths the same file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Identity {
    Inode(u64, u64),
    Resolved(PathBuf),
}

fn identity(path: &Path) -> Option<Identity> {
    if let Ok(meta) = fs::metadata(path) {
        return Some(Identity::Inode(meta.dev(), meta.ino()));
    }
    let (ancestor, rest) = nearest_existing(path)?;
    let base = fs::canonicalize(&ancestor).ok()?;
    Some(Identity::Resolved(base.join(rest)))
}

/// The deepest existing ancestor of `path` (`.` for a relative path with none) and the rest;
/// `None` when the missing part steps up (`..`), which no file system can resolve.
fn nearest_existing(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut ancestor = path.to_path_buf();
    let mut rest = Vec::new();
    while ancestor.as_os_str().is_empty() || fs::symlink_metadata(&ancestor).is_err() {
        if ancestor.as_os_str().is_empty() {
            ancestor = PathBuf::from(".");
            break;
        }
        if ancestor.components().next_back() == Some(Component::ParentDir) {
            return None;
        }
        let name = ancestor.file_name()?.to_os_string();
        rest.push(name);
        ancestor = ancestor.parent()?.to_path_buf();
    }
    let rest: PathBuf = rest.iter().rev().collect();
    Some((ancestor, rest))
}

/// The directory a file is written in (`.` for a bare name); `None` for `/`.
fn parent_of(path: &Path) -> Option<PathBuf> {
    match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Some(PathBuf::from(".")),
        Some(p) => Some(p.to_path_buf()),
        None => None,
    }
}

/// Checks that files can be created in `path`'s directory: it must exist
/// ([`Parents::MustExist`]), or its nearest existing ancestor stands in for it
/// ([`Parents::MayCreate`]); that directory must be one where a probe file can be created.
pub fn check_parent(role: &'static str, path: &Path, parents: Parents) -> Result<(), OutputError> {
    let parent = parent_of(path).unwrap_or_else(|| PathBuf::from("/"));
    let ancestor = nearest_existing(&parent).map_or(parent.clone(), |(a, _)| a);
    let meta = fs::metadata(&ancestor).map_err(io("inspect", &ancestor))?;
    if !meta.is_dir() {
        return Err(OutputError::ParentNotDirectory {
            role,
            path: path.to_path_buf(),
            ancestor,
        });
    }
    if ancestor != parent && parents == Parents::MustExist {
        return Err(OutputError::MissingDirectory {
            role,
            path: path.to_path_buf(),
            dir: parent,
        });
    }
    // The probe is removed when dropped.
    match tempfile::Builder::new()
        .prefix(".stridelab-probe.")
        .tempfile_in(&ancestor)
    {
        Ok(_) => Ok(()),
        // tempfile's error names its random file; the cause alone is what the user needs.
        Err(error) => Err(OutputError::NotWritable {
            role,
            path: path.to_path_buf(),
            dir: ancestor,
            error: std::io::Error::from(error.kind()),
        }),
    }
}

/// Classifies one file output without writing it; `parents` says whether its directory may
/// be missing (a default location, then [`FileTarget::Default`]).
pub fn check_file(
    role: &'static str,
    path: &Path,
    parents: Parents,
) -> Result<FileTarget, OutputError> {
    if path.as_os_str() == STDOUT {
        return Ok(FileTarget::Stdout);
    }
    if path.as_os_str().is_empty() || path.components().next_back() == Some(Component::ParentDir) {
        return Err(OutputError::IsDirectory {
            role,
            path: path.to_path_buf(),
        });
    }
    match fs::metadata(path) {
        Ok(meta) => {
            let kind = meta.file_type();
            if kind.is_dir() {
                return Err(OutputError::IsDirectory {
                    role,
                    path: path.to_path_buf(),
                });
            }
            if kind.is_char_device() || kind.is_fifo() {
                return Ok(FileTarget::Special(path.to_path_buf()));
            }
            let unsupported = if kind.is_block_device() {
                Some("block device")
            } else if kind.is_socket() {
                Some("socket")
            } else if !kind.is_file() {
                Some("special file")
            } else {
                None
            };
            if let Some(kind) = unsupported {
                return Err(OutputError::Unsupported {
                    role,
                    path: path.to_path_buf(),
                    kind,
                });
            }
            // A symlink is followed: the file it names is replaced, the link stays.
            let real = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            check_parent(role, &real, Parents::MustExist)?;
            Ok(FileTarget::File(path.to_path_buf()))
        }
        Err(_) => {
            if fs::symlink_metadata(path).is_ok() {
                // A dangling symlink: writing would create its target somewhere unexpected.
                return Err(OutputError::Unsupported {
                    role,
                    path: path.to_path_buf(),
                    kind: "symbolic link to nothing",
                });
            }
            check_parent(role, path, parents)?;
            Ok(match parents {
                Parents::MustExist => FileTarget::File(path.to_path_buf()),
                Parents::MayCreate => FileTarget::Default(path.to_path_buf()),
            })
        }
    }
}

/// The outputs and inputs of one command, checked together before any work starts.
#[derive(Debug, Default)]
pub struct OutputPlan {
    inputs: Vec<(&'static str, PathBuf, Option<Identity>)>,
    outputs: Vec<(&'static str, PathBuf, Option<Identity>)>,
    stdout: Option<&'static str>,
}

impl OutputPlan {
    /// Records a file the command reads (an output must not be it).
    pub fn input(&mut self, role: &'static str, path: &Path) {
        if path.as_os_str() != STDOUT {
            self.inputs.push((role, path.to_path_buf(), identity(path)));
        }
    }

    /// Records that `role` prints to stdout (so no file output may be `-` as well).
    pub fn uses_stdout(&mut self, role: &'static str) -> Result<(), OutputError> {
        if let Some(other_role) = self.stdout {
            return Err(OutputError::TwoOnStdout { role, other_role });
        }
        self.stdout = Some(role);
        Ok(())
    }

    /// Checks one file output the user named against the path rules and everything recorded
    /// so far; its directory must exist.
    pub fn file(&mut self, role: &'static str, path: &Path) -> Result<FileTarget, OutputError> {
        self.checked(role, path, Parents::MustExist)
    }

    /// [`OutputPlan::file`] for a default location stridelab owns, whose missing directories
    /// are created when it is written.
    pub fn default_file(
        &mut self,
        role: &'static str,
        path: &Path,
    ) -> Result<FileTarget, OutputError> {
        self.checked(role, path, Parents::MayCreate)
    }

    fn checked(
        &mut self,
        role: &'static str,
        path: &Path,
        parents: Parents,
    ) -> Result<FileTarget, OutputError> {
        let target = check_file(role, path, parents)?;
        match &target {
            FileTarget::Stdout => self.uses_stdout(role)?,
            FileTarget::Special(_) => {}
            FileTarget::File(_) | FileTarget::Default(_) => {
                let id = identity(path);
                self.check_distinct(role, path, id.as_ref())?;
                self.outputs.push((role, path.to_path_buf(), id));
            }
        }
        Ok(target)
    }

    fn check_distinct(
        &self,
        role: &'static str,
        path: &Path,
        id: Option<&Identity>,
    ) -> Result<(), OutputError> {
        let Some(id) = id else { return Ok(()) };
        for (other_role, other, other_id) in &self.outputs {
            if other_id.as_ref() == Some(id) {
                return Err(OutputError::SameOutput {
                    role,
                    path: path.to_path_buf(),
                    other_role,
                    other: other.clone(),
                });
            }
        }
        for (input_role, input, input_id) in &self.inputs {
            if input_id.as_ref() == Some(id) {
                return Err(OutputError::OverwritesInput {
                    role,
                    path: path.to_path_buf(),
                    input_role,
                    input: input.clone(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_must_differ_from_each_other_and_from_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.json");
        fs::write(&input, "{}").unwrap();
        let mut plan = OutputPlan::default();
        plan.input("--in", &input);
        let same_input = dir.path().join(".").join("in.json");
        assert!(matches!(
            plan.file("--out", &same_input),
            Err(OutputError::OverwritesInput { .. })
        ));
        plan.default_file("--json", &dir.path().join("new/v.json"))
            .unwrap();
        assert!(matches!(
            plan.default_file("--output", &dir.path().join("new").join("v.json")),
            Err(OutputError::SameOutput { .. })
        ));
        assert_eq!(
            plan.file("--a", Path::new("-")).unwrap(),
            FileTarget::Stdout
        );
        assert!(matches!(
            plan.file("--b", Path::new("-")),
            Err(OutputError::TwoOnStdout { .. })
        ));
    }

    #[test]
    fn a_named_path_needs_its_directory_and_a_default_one_may_create_it() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/q.json");
        // (path, parents, the outcome: Ok(target kind) or the missing directory)
        let cases = [
            (dir.path().join("q.json"), Parents::MustExist, Ok("file")),
            (
                deep.clone(),
                Parents::MustExist,
                Err(dir.path().join("a/b")),
            ),
            (deep.clone(), Parents::MayCreate, Ok("default")),
            (
                PathBuf::from("no-such-dir-here/q.json"),
                Parents::MustExist,
                Err(PathBuf::from("no-such-dir-here")),
            ),
        ];
        for (path, parents, want) in cases {
            let got = check_file("--out", &path, parents);
            match (got, want) {
                (Ok(FileTarget::File(_)), Ok("file"))
                | (Ok(FileTarget::Default(_)), Ok("default")) => {}
                (Err(OutputError::MissingDirectory { dir, .. }), Err(want)) => {
                    assert_eq!(dir, want);
                }
                (got, want) => panic!("{}: {got:?}, wanted {want:?}", path.display()),
            }
        }
        // Nothing was created by checking; a default target creates its directories on write.
        assert!(!dir.path().join("a").exists());
        let target = check_file("--out", &deep, Parents::MayCreate).unwrap();
        target.write(b"{}").unwrap();
        assert_eq!(fs::read(&deep).unwrap(), b"{}");
        let message = check_file(
            "--out",
            Path::new("/nonexistent/x.json"),
            Parents::MustExist,
        )
        .unwrap_err()
        .to_string();
        assert!(
            message.contains("`/nonexistent` does not exist"),
            "{message}"
        );
    }

    #[test]
    fn directories_and_unwritable_places_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let named = Parents::MustExist;
        assert!(matches!(
            check_file("--out", dir.path(), named),
            Err(OutputError::IsDirectory { .. })
        ));
        let file = dir.path().join("f");
        fs::write(&file, "x").unwrap();
        assert!(matches!(
            check_file("--out", &file.join("q.json"), named),
            Err(OutputError::ParentNotDirectory { .. })
        ));
        let proc = Path::new("/proc/stridelab-none/q.json");
        assert!(check_file("--out", proc, Parents::MayCreate).is_err());
        assert_eq!(
            check_file("--out", Path::new("/dev/null"), named).unwrap(),
            FileTarget::Special(PathBuf::from("/dev/null"))
        );
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(
            leftovers.len(),
            1,
            "the probe file stays behind: {leftovers:?}"
        );
    }
}
