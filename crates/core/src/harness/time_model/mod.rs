//! The time model: this machine's probes ([`probe`]), kept between runs in
//! `machine-model.json` as the copy planner keeps its wisdom, and the prediction each timed
//! point records from them ([`predict`](mod@predict)).
//!
//! The file holds one machine's probes, keyed by its CPU model and data-cache geometry: a file
//! of another machine is ignored with a note (the probes run again, kept in memory, the file
//! left as it is); a file that is not a machine model, or one whose numbers break a rule, is
//! refused with an error naming the problem, never overwritten. The file is only ever
//! replaced whole (a temporary beside it, renamed onto it).

pub mod predict;
pub mod probe;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use thiserror::Error;

use crate::cache::cpu::cpu_model;
use crate::cache::geometry::Geometry;
use crate::harness::why::controls::controls_for;
use crate::results::ResultsDocument;
use crate::results::time_model::{MachineModel, check_machine_model};
pub use predict::predict;
pub use probe::{ProbeError, ProbeProgress, measure_machine_model};

/// Larger files are refused unread: a model takes about 4 KiB.
pub const MAX_MODEL_FILE_BYTES: u64 = 1 << 20;

/// The file name in the user's cache directory.
pub const MODEL_FILE_NAME: &str = "machine-model.json";

/// Where the probes are kept, as the command line chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoice {
    /// No model: no probes, no predictions.
    Off,
    /// Probe, and keep the figures in memory only (no cache directory here).
    Memory,
    /// A file the user named: its directory must exist.
    File(PathBuf),
    /// The default file, whose missing directories are created on the first save.
    DefaultFile(PathBuf),
}

/// `$XDG_CACHE_HOME/stridelab/machine-model.json`, else `$HOME/.cache/stridelab/…`.
pub fn default_model_path() -> Option<PathBuf> {
    let non_empty = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    let base = non_empty("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| non_empty("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("stridelab").join(MODEL_FILE_NAME))
}

impl ModelChoice {
    /// `FILE`, `off`, or the default location (`None`).
    pub fn from_flag(flag: Option<PathBuf>) -> ModelChoice {
        match flag {
            Some(path) if path.as_os_str() == "off" => ModelChoice::Off,
            Some(path) => ModelChoice::File(path),
            None => default_model_path().map_or(ModelChoice::Memory, ModelChoice::DefaultFile),
        }
    }
}

/// Why a machine-model file cannot be used or written.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ModelFileError {
    #[error("cannot read the machine model {path}: {cause}")]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "the machine model {path} is {bytes} bytes, more than a model file's {MAX_MODEL_FILE_BYTES}; \
         it is not one stridelab wrote: move it aside or name another file with --model"
    )]
    TooLarge { path: PathBuf, bytes: u64 },
    #[error(
        "{path} is not a stridelab machine model ({message}); it was left as it is: move it \
         aside or name another file with --model"
    )]
    Corrupt { path: PathBuf, message: String },
    #[error(
        "the machine model {path}: `{field}` {message}; it was left as it is: move it aside or \
         name another file with --model"
    )]
    Invalid {
        path: PathBuf,
        field: String,
        message: String,
    },
    #[error(
        "machine model {path}: the directory {dir} does not exist; create it first or choose \
         another path (stridelab creates no directory for a path it is given)"
    )]
    MissingDirectory { path: PathBuf, dir: PathBuf },
    #[error("cannot write the machine model {path}: {cause}")]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
}

/// What a readable model file held.
#[derive(Debug)]
pub enum Stored {
    /// No file yet.
    Missing,
    /// This machine's probes.
    Usable(Box<MachineModel>),
    /// Another machine's (CPU or geometry): described for the note.
    Foreign(String),
}

/// Reads and checks `path` against this machine's key.
pub fn load_model_file(path: &Path, machine: &Geometry) -> Result<Stored, ModelFileError> {
    let io = |cause| ModelFileError::Read {
        path: path.to_path_buf(),
        cause,
    };
    let bytes = match fs::metadata(path) {
        Ok(meta) => meta.len(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Stored::Missing),
        Err(err) => return Err(io(err)),
    };
    if bytes > MAX_MODEL_FILE_BYTES {
        return Err(ModelFileError::TooLarge {
            path: path.to_path_buf(),
            bytes,
        });
    }
    let text = fs::read_to_string(path).map_err(io)?;
    let model: MachineModel =
        serde_json::from_str(&text).map_err(|err| ModelFileError::Corrupt {
            path: path.to_path_buf(),
            message: err.to_string(),
        })?;
    check_machine_model(&model, "model").map_err(|(field, message)| ModelFileError::Invalid {
        path: path.to_path_buf(),
        field,
        message,
    })?;
    let cpu = cpu_model().unwrap_or_else(|| "unknown".into());
    let geometry = probe::geometry_key(machine);
    if model.cpu_model != cpu || model.geometry != geometry {
        let describe = |cpu: &str, g: &[crate::results::time_model::GeometryKey]| {
            let levels: Vec<String> = g
                .iter()
                .map(|l| format!("{} {} B", l.name, l.size))
                .collect();
            format!("{cpu}, {}", levels.join(", "))
        };
        return Ok(Stored::Foreign(format!(
            "{} was probed on another machine ({}); this one is {}",
            path.display(),
            describe(&model.cpu_model, &model.geometry),
            describe(&cpu, &geometry)
        )));
    }
    Ok(Stored::Usable(Box::new(model)))
}

/// Checks, before anything is measured, that a named file's directory exists.
pub fn check_model_directory(choice: &ModelChoice) -> Result<(), ModelFileError> {
    if let ModelChoice::File(path) = choice {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = dir.unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(ModelFileError::MissingDirectory {
                path: path.clone(),
                dir: dir.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Writes `model` to `path` whole (a temporary beside it, renamed onto it).
pub fn save_model_file(
    path: &Path,
    model: &MachineModel,
    creates_directory: bool,
) -> Result<(), ModelFileError> {
    let write = |cause| ModelFileError::Write {
        path: path.to_path_buf(),
        cause,
    };
    let text = serde_json::to_string_pretty(model).map_err(|e| write(e.into()))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let dir = dir.unwrap_or(Path::new("."));
    if creates_directory {
        fs::create_dir_all(dir).map_err(write)?;
    }
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(write)?;
    temp.write_all(text.as_bytes()).map_err(write)?;
    temp.write_all(b"\n").map_err(write)?;
    temp.persist(path).map_err(|err| write(err.error))?;
    Ok(())
}

/// Why a command could not get its model.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TimeModelError {
    #[error(transparent)]
    File(#[from] ModelFileError),
    #[error(transparent)]
    Probe(#[from] ProbeError),
}

/// The model a command prices with, and what it says about where it came from.
#[derive(Debug)]
pub struct ObtainedModel {
    pub model: Option<MachineModel>,
    /// Sentences for the user: the file read, probed and saved, or ignored and why.
    pub notes: Vec<String>,
}

/// The model `choice` names: read from its file, or probed now (with `remeasure`, probed again
/// even when the file has this machine's) and saved where the file is this lab's to write.
pub fn obtain_model(
    choice: &ModelChoice,
    machine: &Geometry,
    remeasure: bool,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(ProbeProgress<'_>),
) -> Result<ObtainedModel, TimeModelError> {
    let (path, creates_directory) = match choice {
        ModelChoice::Off => {
            return Ok(ObtainedModel {
                model: None,
                notes: vec![],
            });
        }
        ModelChoice::Memory => (None, false),
        ModelChoice::File(path) => (Some(path.as_path()), false),
        ModelChoice::DefaultFile(path) => (Some(path.as_path()), true),
    };
    check_model_directory(choice)?;
    let mut notes = Vec::new();
    let stored = match path {
        Some(path) => load_model_file(path, machine)?,
        None => Stored::Missing,
    };
    let writable = match stored {
        Stored::Usable(model) if !remeasure => {
            notes.push(format!(
                "time model: the probes in {} (measured on this machine)",
                path.map(|p| p.display().to_string()).unwrap_or_default()
            ));
            return Ok(ObtainedModel {
                model: Some(*model),
                notes,
            });
        }
        Stored::Usable(_) | Stored::Missing => path,
        Stored::Foreign(why) => {
            notes.push(format!(
                "time model: {why}; probed again, kept in memory, the file left as it is"
            ));
            None
        }
    };
    let cpu = cpu_model().unwrap_or_else(|| "unknown".into());
    let model = measure_machine_model(machine, &cpu, stop, progress)?;
    match writable {
        Some(path) => {
            save_model_file(path, &model, creates_directory)?;
            notes.push(format!(
                "time model: probed this machine, saved to {}",
                path.display()
            ));
        }
        None if path.is_none() => notes
            .push("time model: probed this machine, kept in memory (no cache directory)".into()),
        None => {}
    }
    Ok(ObtainedModel {
        model: Some(model),
        notes,
    })
}

/// How far from its estimate a claimed point must be (either way) to be named far off, with
/// the controls `stridelab why` would run on it: the report's band too.
pub const FAR_OFF: f64 = 2.0;

/// Records `model`'s prediction in every timed record of `doc`, and its probes once; a claimed
/// point beyond [`FAR_OFF`] also gets the controls `why` runs on it (`cpus`: the CPUs a second
/// thread could use, as `why` is told).
pub fn annotate(doc: &mut ResultsDocument, model: &MachineModel, cpus: usize) {
    for record in &mut doc.records {
        record.time_model = predict(record, model);
        let far = |ratio: f64| !(1.0 / FAR_OFF..=FAR_OFF).contains(&ratio);
        let Some(prediction) = record.time_model.as_mut() else {
            continue;
        };
        if prediction.claimed_ratio().is_some_and(far) {
            let words: Vec<(String, String)> = record
                .params
                .iter()
                .map(|(k, v)| (k.clone(), v.to_string()))
                .collect();
            let line = record
                .simulated
                .as_ref()
                .and_then(|s| s.levels.first())
                .map_or(64, |l| l.line);
            let (run, _) = controls_for(&record.kernel, &record.params, &words, line, cpus);
            prediction.why_controls = run.into_iter().map(|c| c.change).collect();
        }
    }
    doc.time_model_probes = Some(model.clone());
}

#[cfg(test)]
mod tests;
