//! Where earlier runs are found and named baselines kept, for comparing a run with them
//! (`results::history` judges; this module only reads and writes the files).
//!
//! Earlier runs are the results files stridelab already keeps: `reports/runs/*.json` (`run`'s
//! default output), `reports/<stamp>/results.json` (the main job's reports), `reports/baselines/`
//! (named baselines), and the `.json` files beside an explicit `--out`. A file that does not
//! read as a results document is skipped and counted, never an error: it is not this run's
//! input. A run found twice (a report's copy of a run file) counts once.

#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::results::history::{
    HISTORY_WINDOW, RunComparison, compare_runs, figures_of, machine_differs,
};
use crate::results::output::{FileTarget, OutputError, Parents, check_file};
use crate::results::{ResultsDocument, ResultsError};
use crate::vocab::ParamRules;

/// Where stridelab keeps runs and reports, relative to the working directory.
pub const REPORTS_DIR: &str = "reports";

/// Where named baselines live, under [`REPORTS_DIR`].
const BASELINES_DIR: &str = "baselines";

/// Most candidate files read while looking for earlier runs (newest first): reading a results
/// file costs tens of milliseconds, and a directory of thousands must not stall a run.
const MAX_CANDIDATES: usize = 60;

/// Results files larger than this are not read as history (a quick suite's is ~8 MB).
const MAX_CANDIDATE_BYTES: u64 = 256 << 20;

/// Why a named baseline cannot be used or saved.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BaselineError {
    #[error(
        "baseline name `{0}`: use letters, digits, `.`, `_` and `-` only (at most 64 characters, not starting with `.`)"
    )]
    BadName(String),
    #[error("no baseline named `{name}` (looked for `{path}`); {known}")]
    Missing {
        name: String,
        path: PathBuf,
        known: String,
    },
    #[error("baseline `{name}` cannot be read")]
    Unreadable {
        name: String,
        #[source]
        cause: ResultsError,
    },
    #[error(
        "will not save baseline `{name}`: `{path}` exists and is not a stridelab results file, so stridelab did not write it"
    )]
    NotOurs { name: String, path: PathBuf },
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// The file of baseline `name` under `root` (checked: a plain file name).
pub fn baseline_path(root: &Path, name: &str) -> Result<PathBuf, BaselineError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        return Err(BaselineError::BadName(name.to_string()));
    }
    Ok(root.join(BASELINES_DIR).join(format!("{name}.json")))
}

/// Reads baseline `name` (before anything is measured, so a typo costs nothing).
pub fn load_baseline(
    root: &Path,
    name: &str,
    rules: &dyn ParamRules,
) -> Result<(PathBuf, ResultsDocument), BaselineError> {
    let path = baseline_path(root, name)?;
    if !path.is_file() {
        let known = known_baselines(root);
        let known = if known.is_empty() {
            "none is saved yet: record one with `--save-baseline NAME`".to_string()
        } else {
            format!("saved: {}", known.join(", "))
        };
        return Err(BaselineError::Missing {
            name: name.to_string(),
            path,
            known,
        });
    }
    let doc = ResultsDocument::read(&path, rules).map_err(|cause| BaselineError::Unreadable {
        name: name.to_string(),
        cause,
    })?;
    Ok((path, doc))
}

fn known_baselines(root: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(root.join(BASELINES_DIR)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

/// Checks, before measuring, that baseline `name` can be written: a new file, or one that reads
/// as a stridelab results file (an earlier baseline, which saving replaces).
pub fn plan_baseline_save(
    root: &Path,
    name: &str,
    rules: &dyn ParamRules,
) -> Result<FileTarget, BaselineError> {
    let path = baseline_path(root, name)?;
    if path.exists() && ResultsDocument::read(&path, rules).is_err() {
        return Err(BaselineError::NotOurs {
            name: name.to_string(),
            path,
        });
    }
    Ok(check_file("--save-baseline", &path, Parents::MayCreate)?)
}

/// Earlier runs found for a comparison: usable ones oldest first, and what was passed over.
#[derive(Debug, Default)]
pub struct EarlierRuns {
    pub runs: Vec<(PathBuf, ResultsDocument)>,
    /// Files that did not read as results documents, with why.
    pub unreadable: Vec<(PathBuf, String)>,
    /// Results of another CPU model or cache geometry.
    pub other_machine: usize,
}

/// The runs identified by when they started and how long they took: a report's copy of a run
/// file is the same run.
fn run_identity(doc: &ResultsDocument) -> (u64, u64, String) {
    (
        doc.started_unix_s,
        // Microseconds, not the float's bits: serde_json may read the last bit back differently.
        (doc.wall_s * 1e6).round() as u64,
        doc.suite.name.clone(),
    )
}

/// Finds earlier runs on `current`'s machine that time at least one of its points, newest
/// [`HISTORY_WINDOW`] at most, among the results files under `root` and in `extra_dirs`.
/// `exclude` are files never taken (the run's own output).
pub fn earlier_runs(
    root: &Path,
    extra_dirs: &[PathBuf],
    exclude: &[PathBuf],
    current: &ResultsDocument,
    rules: &dyn ParamRules,
) -> EarlierRuns {
    let wanted: BTreeSet<String> = figures_of(current, None).into_keys().collect();
    let excluded: Vec<PathBuf> = exclude
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let mut seen = BTreeSet::from([run_identity(current)]);
    let mut found = EarlierRuns::default();
    for path in candidates(root, extra_dirs)
        .into_iter()
        .take(MAX_CANDIDATES)
    {
        if found.runs.len() >= HISTORY_WINDOW {
            break;
        }
        if path.canonicalize().is_ok_and(|p| excluded.contains(&p)) {
            continue;
        }
        let doc = match ResultsDocument::read(&path, rules) {
            Ok(doc) => doc,
            Err(err) => {
                found.unreadable.push((path, err.to_string()));
                continue;
            }
        };
        if !seen.insert(run_identity(&doc)) || doc.started_unix_s > current.started_unix_s {
            continue;
        }
        if machine_differs(&doc, current).is_some() {
            found.other_machine += 1;
            continue;
        }
        if figures_of(&doc, None).keys().any(|k| wanted.contains(k)) {
            found.runs.push((path, doc));
        }
    }
    found.runs.sort_by_key(|(_, doc)| doc.started_unix_s);
    found
}

/// Results files that may hold earlier runs, newest first by modification time.
fn candidates(root: &Path, extra_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    let json_in = |dir: &Path, files: &mut Vec<PathBuf>| {
        if let Ok(entries) = fs::read_dir(dir) {
            files.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "json")),
            );
        }
    };
    json_in(&root.join("runs"), &mut files);
    json_in(&root.join(BASELINES_DIR), &mut files);
    if let Ok(entries) = fs::read_dir(root) {
        files.extend(
            entries
                .flatten()
                .map(|e| e.path().join("results.json"))
                .filter(|p| p.is_file()),
        );
    }
    for dir in extra_dirs {
        json_in(dir, &mut files);
    }
    let mut dated: Vec<(std::time::SystemTime, PathBuf)> = files
        .into_iter()
        .filter_map(|p| {
            let meta = fs::metadata(&p).ok()?;
            (meta.is_file() && meta.len() <= MAX_CANDIDATE_BYTES)
                .then(|| Some((meta.modified().ok()?, p)))?
        })
        .collect();
    dated.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    dated.dedup_by(|a, b| a.1 == b.1);
    dated.into_iter().map(|(_, p)| p).collect()
}

/// What a run compares itself with and keeps, settled before anything is measured.
#[derive(Debug)]
pub struct HistoryPlan {
    /// Where earlier runs and baselines are kept ([`REPORTS_DIR`]).
    pub root: PathBuf,
    /// `--baseline NAME`: its name, file and document (read and validated already).
    pub baseline: Option<(String, PathBuf, ResultsDocument)>,
    /// `--save-baseline NAME`: its name and checked file.
    pub save: Option<(String, FileTarget)>,
    /// Directories beside the reports that may hold earlier runs (an explicit `--out`'s).
    pub extra_dirs: Vec<PathBuf>,
    /// Whether to compare at all.
    pub compare: bool,
}

/// What the user asked of history, without its syntax.
#[derive(Debug, Clone, Default)]
pub struct HistoryRequest {
    pub baseline: Option<String>,
    pub save_baseline: Option<String>,
    pub no_compare: bool,
}

impl HistoryPlan {
    /// Settles `request` under `root`; `out` is the run's explicit results file, whose directory
    /// is searched too. A missing or unreadable `--baseline`, or a `--save-baseline` that would
    /// overwrite another file, is an error now, before measuring.
    pub fn settle(
        root: &Path,
        request: &HistoryRequest,
        out: Option<&Path>,
        rules: &dyn ParamRules,
    ) -> Result<Self, BaselineError> {
        let baseline = match &request.baseline {
            Some(name) => {
                let (path, doc) = load_baseline(root, name, rules)?;
                Some((name.clone(), path, doc))
            }
            None => None,
        };
        let save = match &request.save_baseline {
            Some(name) => Some((name.clone(), plan_baseline_save(root, name, rules)?)),
            None => None,
        };
        let extra_dirs = out
            .filter(|p| p.as_os_str() != crate::results::output::STDOUT)
            .and_then(|p| p.parent())
            .map(|d| {
                if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d
                }
            })
            .filter(|d| !d.starts_with(root))
            .map(|d| vec![d.to_path_buf()])
            .unwrap_or_default();
        Ok(Self {
            root: root.to_path_buf(),
            baseline,
            save,
            extra_dirs,
            compare: !request.no_compare,
        })
    }

    /// Compares `current` (written to `own_files`) with the named baseline or the previous run,
    /// judged against the noise of the earlier runs found; `None` when there is nothing to
    /// compare with. The notes say what was passed over.
    pub fn compare(
        &self,
        current: &ResultsDocument,
        own_files: &[PathBuf],
        rules: &dyn ParamRules,
    ) -> (Option<Result<RunComparison, String>>, Vec<String>) {
        if !self.compare {
            return (None, Vec::new());
        }
        let found = earlier_runs(&self.root, &self.extra_dirs, own_files, current, rules);
        let mut notes = Vec::new();
        if !found.unreadable.is_empty() {
            notes.push(format!(
                "note: {} file(s) among the earlier results could not be read and were passed \
                 over (first: {}: {})",
                found.unreadable.len(),
                found.unreadable[0].0.display(),
                found.unreadable[0].1
            ));
        }
        let source = self.describe_source();
        let history: Vec<&ResultsDocument> = found.runs.iter().map(|(_, d)| d).collect();
        let baseline = match &self.baseline {
            Some((name, path, doc)) => {
                Some((doc, format!("baseline `{name}` ({})", describe(path, doc))))
            }
            None => found
                .runs
                .last()
                .map(|(path, doc)| (doc, format!("the previous run ({})", describe(path, doc)))),
        };
        let Some((doc, label)) = baseline else {
            notes.push(format!(
                "no earlier run of these points on this CPU model and cache geometry in {source}{}: \
                 the next run will be compared with this one",
                if found.other_machine > 0 {
                    format!(" ({} from other machines passed over)", found.other_machine)
                } else {
                    String::new()
                }
            ));
            return (None, notes);
        };
        let result = compare_runs((doc, label), current, &history, source);
        (Some(result), notes)
    }

    /// `reports/` (and the `--out` directory), for sentences.
    fn describe_source(&self) -> String {
        let mut dirs = vec![format!("{}/", self.root.display())];
        dirs.extend(self.extra_dirs.iter().map(|d| format!("{}/", d.display())));
        dirs.join(" and ")
    }

    /// Keeps `doc` as the named baseline, if asked; the line saying where.
    pub fn save(&self, doc: &ResultsDocument) -> Result<Option<String>, ResultsError> {
        let Some((name, target)) = &self.save else {
            return Ok(None);
        };
        let mut text = doc.to_json()?;
        text.push('\n');
        target.write(text.as_bytes())?;
        Ok(Some(format!(
            "baseline `{name}` saved: {}",
            target.display()
        )))
    }
}

/// `reports/runs/x.json, started 2026-12-01 22:40:10 UTC`.
fn describe(path: &Path, doc: &ResultsDocument) -> String {
    format!(
        "{}, started {}",
        path.display(),
        crate::units::utc_stamp(doc.started_unix_s, true)
    )
}
