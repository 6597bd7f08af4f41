//! Report directories stridelab owns. A report directory carries a manifest
//! ([`MANIFEST`]) naming every file stridelab wrote there; only those files are ever replaced or
//! removed, so a report never costs the user a file.
//!
//! [`claim`] decides, before anything is written, whether a directory may receive a report: it
//! may be missing (its parent must exist for a directory the user named; only the tool's own
//! locations under `reports/`, [`claim_default`], may have missing parents created), empty, a directory whose manifest lists every entry, or a report written by a
//! build from before manifests (an `index.html` titled "stridelab report" among image, JSON and
//! CSV files only). Anything else is refused with the names of the files in the way.
//!
//! [`Claim::stage`] creates a staging directory *inside* the report directory
//! (`.stridelab-render.XXXXXX.tmp`, a locked temporary of `results/temporaries.rs`, so the files
//! later move by rename on one file system); [`Staging::publish`] moves the files in
//! (`index.html` last), removes the files of the previous report that the new one no longer has
//! and rewrites the manifest. A staging directory is removed when dropped unpublished; one left
//! by a killed process is removed by the next claim, and one another process holds makes the
//! claim refuse the directory ([`ReportError::Busy`]).
#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ReportError;
use stridelab_core::results::output::{Parents, check_parent};
use stridelab_core::results::temporaries::{self, LockedDir};

/// The manifest file of a report directory.
pub const MANIFEST: &str = ".stridelab-report.json";

/// Name stem of the staging directory: `.stridelab-render.XXXXXX.tmp`.
const STAGING: &str = "stridelab-render";

/// The page written last, so a reader sees the new page only once its figures are in place.
const INDEX: &str = "index.html";

/// Extensions of the files an earlier build (without manifests) wrote into a report directory.
const LEGACY_EXTENSIONS: &[&str] = &["html", "png", "svg", "json", "csv"];

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    written_by: String,
    files: BTreeSet<String>,
}

/// Where `stridelab report` writes without `--out`.
pub const DEFAULT_RENDER_DIR: &str = "reports/rendered";

/// A directory checked to receive a report.
#[derive(Debug, Clone)]
pub struct Claim {
    dir: PathBuf,
    existed: bool,
    /// Whether missing parents of `dir` may be created.
    parents: Parents,
    /// Files of the report already there (from its manifest).
    old: BTreeSet<String>,
}

impl Claim {
    /// The report directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ReportError {
    super::io(action, path)
}

/// Checks that `dir`, a directory the user named, may receive a report (see the module doc):
/// when it is missing, its parent must exist. Writes nothing but removes the staging and
/// manifest temporaries a killed process left.
pub fn claim(dir: &Path) -> Result<Claim, ReportError> {
    claim_with(dir, Parents::MustExist)
}

/// [`claim`] for a location the tool owns (`reports/latest`, `reports/<stamp>`): missing
/// parents are created when the report is staged.
pub fn claim_default(dir: &Path) -> Result<Claim, ReportError> {
    claim_with(dir, Parents::MayCreate)
}

/// `--out DIR` as given ([`claim`]), else [`DEFAULT_RENDER_DIR`] ([`claim_default`]).
pub fn claim_out(out: Option<&Path>) -> Result<Claim, ReportError> {
    match out {
        Some(dir) => claim(dir),
        None => claim_default(Path::new(DEFAULT_RENDER_DIR)),
    }
}

fn claim_with(dir: &Path, parents: Parents) -> Result<Claim, ReportError> {
    let meta = match fs::metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            check_parent("report directory", dir, parents)?;
            return Ok(Claim {
                dir: dir.to_path_buf(),
                existed: false,
                parents,
                old: BTreeSet::new(),
            });
        }
        Err(e) => return Err(io("inspect", dir)(e)),
    };
    if !meta.is_dir() {
        return Err(ReportError::NotADirectory {
            path: dir.to_path_buf(),
        });
    }
    let mut held = temporaries::sweep(dir, STAGING);
    held.extend(temporaries::sweep(dir, MANIFEST));
    if let Some(held) = held.first() {
        return Err(ReportError::Busy {
            path: dir.to_path_buf(),
            held: held
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into(),
        });
    }
    let mut entries = BTreeSet::new();
    let mut not_files = BTreeSet::new();
    for entry in fs::read_dir(dir).map_err(io("list", dir))? {
        let entry = entry.map_err(io("list", dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == MANIFEST {
            continue;
        }
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            not_files.insert(name.clone());
        }
        entries.insert(name);
    }
    let manifest_path = dir.join(MANIFEST);
    let old = if manifest_path.exists() {
        let manifest = read_manifest(&manifest_path).ok_or_else(|| ReportError::NotOwned {
            path: dir.to_path_buf(),
            reason: format!("its {MANIFEST} is not a stridelab report manifest"),
        })?;
        let foreign: Vec<&String> = entries
            .iter()
            .filter(|n| !manifest.files.contains(*n) || not_files.contains(*n))
            .collect();
        if !foreign.is_empty() {
            return Err(ReportError::NotOwned {
                path: dir.to_path_buf(),
                reason: format!(
                    "it holds files stridelab did not write ({})",
                    list(&foreign)
                ),
            });
        }
        manifest.files
    } else if entries.is_empty() {
        BTreeSet::new()
    } else if not_files.is_empty() && is_legacy_report(dir, &entries) {
        entries
    } else {
        let all: Vec<&String> = entries.iter().collect();
        return Err(ReportError::NotOwned {
            path: dir.to_path_buf(),
            reason: format!(
                "it is not empty and has no {MANIFEST} (it holds {})",
                list(&all)
            ),
        });
    };
    check_parent("report directory", &dir.join(INDEX), Parents::MustExist)?;
    Ok(Claim {
        dir: dir.to_path_buf(),
        existed: true,
        parents,
        old,
    })
}

/// `a, b, c and 4 more`.
fn list(names: &[&String]) -> String {
    const SHOWN: usize = 5;
    let mut text = names
        .iter()
        .take(SHOWN)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

fn read_manifest(path: &Path) -> Option<Manifest> {
    let text = fs::read_to_string(path).ok()?;
    let manifest: Manifest = serde_json::from_str(&text).ok()?;
    // A name with a separator could point outside the directory.
    let safe = manifest
        .files
        .iter()
        .all(|f| !f.is_empty() && !f.contains('/') && f != "." && f != "..");
    (manifest.written_by == "stridelab" && safe).then_some(manifest)
}

/// A report written before manifests existed: only report-like files and a stridelab page.
fn is_legacy_report(dir: &Path, entries: &BTreeSet<String>) -> bool {
    let report_like = entries.iter().all(|name| {
        Path::new(name)
            .extension()
            .is_some_and(|e| LEGACY_EXTENSIONS.contains(&e.to_string_lossy().as_ref()))
    });
    report_like
        && entries.contains(INDEX)
        && fs::read_to_string(dir.join(INDEX))
            .is_ok_and(|page| page.contains("<title>stridelab report"))
}

impl Claim {
    /// Checks the directory again (it may have changed since the claim, e.g. while measuring),
    /// creates it when missing (with its parents only at a location the tool owns) and makes
    /// the staging directory inside it.
    pub fn stage(&self) -> Result<Staging, ReportError> {
        let fresh = claim_with(&self.dir, self.parents)?;
        let created = !fresh.existed;
        if created {
            let made = match self.parents {
                Parents::MustExist => fs::create_dir(&self.dir),
                Parents::MayCreate => fs::create_dir_all(&self.dir),
            };
            made.map_err(io("create directory", &self.dir))?;
        }
        let tmp = match temporaries::dir_in(&self.dir, STAGING) {
            Ok(tmp) => tmp,
            Err(e) => {
                if created {
                    let _ = fs::remove_dir(&self.dir);
                }
                return Err(io("create a staging directory in", &self.dir)(e));
            }
        };
        Ok(Staging {
            dir: self.dir.clone(),
            tmp,
            old: fresh.old,
            created,
            done: false,
        })
    }
}

/// A report being written: files go into [`Staging::path`] until [`Staging::publish`].
#[derive(Debug)]
pub struct Staging {
    dir: PathBuf,
    tmp: LockedDir,
    old: BTreeSet<String>,
    created: bool,
    done: bool,
}

impl Staging {
    /// The staging directory to write the report's files into.
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// Moves the staged files into the report directory and returns their names.
    pub fn publish(mut self) -> Result<Vec<String>, ReportError> {
        let mut files = Vec::new();
        let tmp = self.tmp.path().to_path_buf();
        for entry in fs::read_dir(&tmp).map_err(io("list", &tmp))? {
            let entry = entry.map_err(io("list", &tmp))?;
            if entry.file_type().is_ok_and(|t| t.is_file()) {
                files.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        // index.html last: the page appears once everything it shows is in place.
        files.sort_by_key(|f| (f == INDEX, f.clone()));
        let new: BTreeSet<String> = files.iter().cloned().collect();
        // The manifest names old and new files first, so a crash mid-way still leaves a
        // directory recognised as stridelab's.
        let union: BTreeSet<String> = self.old.union(&new).cloned().collect();
        self.write_manifest(&union)?;
        for name in &files {
            let (from, to) = (tmp.join(name), self.dir.join(name));
            fs::rename(&from, &to).map_err(io("move into place", &to))?;
        }
        for name in self.old.difference(&new) {
            let path = self.dir.join(name);
            match fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(io("remove", &path)(e));
                }
                _ => {}
            }
        }
        self.write_manifest(&new)?;
        self.done = true;
        fs::remove_dir_all(&tmp).map_err(io("remove", &tmp))?;
        Ok(files)
    }

    fn write_manifest(&self, files: &BTreeSet<String>) -> Result<(), ReportError> {
        let manifest = Manifest {
            written_by: "stridelab".into(),
            files: files.clone(),
        };
        let text = serde_json::to_string_pretty(&manifest).map_err(|e| ReportError::Io {
            action: "serialise",
            path: self.dir.join(MANIFEST),
            cause: std::io::Error::other(e),
        })?;
        stridelab_core::results::write_atomic(&self.dir.join(MANIFEST), text.as_bytes())?;
        Ok(())
    }
}

impl Drop for Staging {
    /// An unpublished report leaves nothing: the staging directory goes, and so does the report
    /// directory when this staging created it and it is still empty.
    fn drop(&mut self) {
        // Before the report directory, which must be empty to go; the `LockedDir` dropped
        // after this finds its directory gone.
        let _ = fs::remove_dir_all(self.tmp.path());
        if !self.done && self.created {
            let _ = fs::remove_dir(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn publish(dir: &Path, files: &[(&str, &str)]) -> Result<Vec<String>, ReportError> {
        let staging = claim(dir)?.stage()?;
        for (name, text) in files {
            fs::write(staging.path().join(name), text).unwrap();
        }
        staging.publish()
    }

    #[test]
    fn a_report_replaces_only_its_own_files() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("r");
        publish(&dir, &[("index.html", "1"), ("a.png", "1")]).unwrap();
        publish(&dir, &[("index.html", "2"), ("b.png", "2")]).unwrap();
        assert_eq!(fs::read_to_string(dir.join("index.html")).unwrap(), "2");
        assert!(
            !dir.join("a.png").exists(),
            "a file of the old report stays"
        );
        assert!(dir.join("b.png").exists());
        let names: BTreeSet<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
    }

    #[test]
    fn foreign_files_refuse_the_directory_before_anything_is_written() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("r");
        publish(&dir, &[("index.html", "1")]).unwrap();
        fs::write(dir.join("notes.txt"), "mine").unwrap();
        let err = publish(&dir, &[("index.html", "2")]).unwrap_err();
        assert!(err.to_string().contains("notes.txt"), "{err}");
        assert_eq!(fs::read_to_string(dir.join("index.html")).unwrap(), "1");
        let plain = root.path().join("plain");
        fs::create_dir(&plain).unwrap();
        fs::write(plain.join("index.html"), "not a report").unwrap();
        assert!(matches!(claim(&plain), Err(ReportError::NotOwned { .. })));
    }

    #[test]
    fn an_unpublished_staging_leaves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("r");
        let staging = claim(&dir).unwrap().stage().unwrap();
        fs::write(staging.path().join("index.html"), "x").unwrap();
        drop(staging);
        assert!(!dir.exists());
    }

    /// A staging directory some process holds refuses the directory; one nobody holds (a
    /// killed process's) goes with the next report.
    #[test]
    fn a_held_staging_refuses_the_directory_and_an_abandoned_one_goes() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("r");
        publish(&dir, &[("index.html", "1")]).unwrap();
        let held = claim(&dir).unwrap().stage().unwrap();
        let err = claim(&dir).unwrap_err();
        assert!(matches!(err, ReportError::Busy { .. }), "{err}");
        drop(held);
        let abandoned = dir.join(".stridelab-render.abc123.tmp");
        fs::create_dir(&abandoned).unwrap();
        fs::write(abandoned.join("index.html"), "half").unwrap();
        publish(&dir, &[("index.html", "2")]).unwrap();
        assert!(!abandoned.exists());
        assert_eq!(fs::read_to_string(dir.join("index.html")).unwrap(), "2");
    }

    #[test]
    fn a_named_directory_needs_its_parent_and_a_default_one_may_create_it() {
        let root = tempfile::tempdir().unwrap();
        let deep = root.path().join("a/b/r");
        let err = claim(&deep).unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "`{}` does not exist",
                root.path().join("a/b").display()
            )),
            "{err}"
        );
        assert!(
            !root.path().join("a").exists(),
            "the check created a directory"
        );
        let staging = claim_default(&deep).unwrap().stage().unwrap();
        fs::write(staging.path().join("index.html"), "x").unwrap();
        staging.publish().unwrap();
        assert!(deep.join("index.html").is_file());
    }

    #[test]
    fn a_report_from_before_manifests_is_adopted() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("latest");
        fs::create_dir(&dir).unwrap();
        fs::write(
            dir.join("index.html"),
            "<title>stridelab report — x</title>",
        )
        .unwrap();
        fs::write(dir.join("old.png"), "x").unwrap();
        publish(&dir, &[("index.html", "new")]).unwrap();
        assert!(!dir.join("old.png").exists());
    }
}
