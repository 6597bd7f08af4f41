//! One build's child process measuring one gate point (`stridelab gate --suite POINT.toml
//! --save-baseline - …`, a command every build since the stored-baseline gate understands), and
//! why such a process can fail to give a usable record ([`ChildRunError`]).

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use thiserror::Error;

use crate::kernels::CATALOGUE_RULES;
use crate::kernels::slowdown::SLOWDOWN_VAR;
use crate::results::compare::GATE_MANIFEST_KEY;
use crate::results::{ChecksumOutcome, PointError, PointRecord, ResultsDocument, ResultsError};

/// A build the rounds run.
pub(super) struct Build {
    pub(super) role: &'static str,
    pub(super) binary: PathBuf,
    /// How the verdict names it.
    pub(super) label: String,
    /// The base never runs with an injected slowdown from the environment.
    pub(super) clear_slowdown: bool,
}

/// Why one build's process gave no usable record of a point: the base's ends the gate, the
/// candidate's fails the point (its text becomes the verdict's note).
#[derive(Debug, Error)]
pub enum ChildRunError {
    // Causes are part of the message (fields not named `source`) so error chains do not repeat them.
    #[error("cannot run `{}`: {error}", binary.display())]
    Spawn { binary: PathBuf, error: io::Error },
    /// `tail` is the process's last stderr lines (at most five).
    #[error("the {role} process exited with {code:?}: {}", tail.join(" / "))]
    Exited {
        role: &'static str,
        code: Option<i32>,
        tail: Vec<String>,
    },
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("{0} records for one point")]
    RecordCount(usize),
    /// The record's own error (stage and message).
    #[error("{}: {}", .0.stage, .0.message)]
    PointFailed(PointError),
    #[error("checksum {0:?}")]
    Checksum(ChecksumOutcome),
}

/// Runs one build on one point file with `(sample ms, samples)`: its one record and how it
/// measured (`info.gate`), or why not.
pub(super) fn measure(
    build: &Build,
    file: &Path,
    (sample_ms, samples): (f64, usize),
) -> Result<(PointRecord, serde_json::Value), ChildRunError> {
    let mut command = Command::new(&build.binary);
    command
        .arg("gate")
        .arg("--suite")
        .arg(file)
        .args(["--save-baseline", "-", "--baseline-runs", "1", "--quiet"])
        .args(["--sample-ms", &sample_ms.to_string()])
        .args(["--samples", &samples.to_string()])
        .stdin(Stdio::null());
    if build.clear_slowdown {
        command.env_remove(SLOWDOWN_VAR);
    }
    let out = command.output().map_err(|error| ChildRunError::Spawn {
        binary: build.binary.clone(),
        error,
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut tail: Vec<String> = stderr.lines().rev().take(5).map(String::from).collect();
        tail.reverse();
        return Err(ChildRunError::Exited {
            role: build.role,
            code: out.status.code(),
            tail,
        });
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let origin = PathBuf::from(format!("(the {} build's results)", build.role));
    let doc = ResultsDocument::from_json(&text, &origin, &CATALOGUE_RULES)?;
    let info = doc.info.get(GATE_MANIFEST_KEY).cloned().unwrap_or_default();
    let [record] = <[PointRecord; 1]>::try_from(doc.records)
        .map_err(|records| ChildRunError::RecordCount(records.len()))?;
    if let Some(error) = &record.error {
        return Err(ChildRunError::PointFailed(error.clone()));
    }
    if record.checksum.status != ChecksumOutcome::Ok {
        return Err(ChildRunError::Checksum(record.checksum.status));
    }
    Ok((record, info))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::gate::GateError;

    /// A child's failure reads as it did when it was a string: the base's ends the gate with
    /// it, the candidate's is the verdict's note.
    #[test]
    fn child_failures_keep_their_words() {
        let exited = ChildRunError::Exited {
            role: "candidate",
            code: Some(2),
            tail: vec!["error: one".into(), "error: two".into()],
        };
        assert_eq!(
            exited.to_string(),
            "the candidate process exited with Some(2): error: one / error: two"
        );
        let failed = ChildRunError::PointFailed(PointError {
            stage: "prepare".into(),
            message: "too big".into(),
        });
        assert_eq!(failed.to_string(), "prepare: too big");
        assert_eq!(
            ChildRunError::Checksum(ChecksumOutcome::Mismatch).to_string(),
            "checksum Mismatch"
        );
        assert_eq!(
            ChildRunError::RecordCount(2).to_string(),
            "2 records for one point"
        );
        let base = GateError::BaseFailed {
            point: "p".into(),
            error: ChildRunError::RecordCount(0),
        };
        assert_eq!(
            base.to_string(),
            "the base build failed to measure `p`: 0 records for one point"
        );
        let drift = GateError::BaseDrift { point: "p".into() };
        assert_eq!(
            drift.to_string(),
            "the base build failed to measure `p`: its simulated misses differ between rounds"
        );
    }
}
