//! The planner's wisdom: the measured winner of every copy class planned on this machine, and
//! the file that keeps it between runs (as FFTW keeps its wisdom).
//!
//! A file holds one machine's plans (its CPU model and the cache sizes the engine plans for):
//! timings from another CPU say nothing about this one, so a foreign file is ignored with a
//! warning, as is a corrupt one. Every schedule is range-checked on load, because a schedule
//! sizes the engine's buffers and loops. The file is only ever replaced whole (written to a
//! temporary beside it, then renamed), and never when it held something this build could not
//! read: the engine does not overwrite what it did not write.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::plan::{CacheSizes, Plan, Tuning};

/// The machine a planner's measurements belong to: a wisdom file records it, and a file of
/// another machine is not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// The CPU's model name (`/proc/cpuinfo`'s, or CPUID's brand string).
    pub cpu_model: String,
    /// The cache sizes the planner plans for.
    pub caches: CacheSizes,
}

/// The `format` field of every wisdom file.
const FORMAT: &str = "stridelab-wisdom";
/// The layout of the file this build reads and writes, and of the kernels its plans were
/// timed on: raised when a schedule's kernels change (2: AVX2 streams from registers; 3: AVX2
/// joins lines across destination rows that start mid-line), since a plan timed on kernels
/// this build no longer runs is not a measurement of it.
const VERSION: u32 = 3;
/// Larger files are refused unread: a few hundred plans take tens of KiB.
const MAX_FILE_BYTES: u64 = 4 << 20;
/// More plans than any suite needs; a file beyond it is refused.
const MAX_PLANS: usize = 10_000;

/// Why a wisdom file was not used.
#[derive(Debug, Error)]
pub enum WisdomError {
    #[error("cannot read {path}: {cause}")]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{path} is {bytes} bytes, more than a wisdom file's {MAX_FILE_BYTES}")]
    TooLarge { path: PathBuf, bytes: u64 },
    #[error("{path} is not a wisdom file: {cause}")]
    Parse {
        path: PathBuf,
        cause: serde_json::Error,
    },
    #[error(
        "{path} is format `{format}` version {version}; this build reads `{FORMAT}` version {VERSION}"
    )]
    Version {
        path: PathBuf,
        format: String,
        version: u32,
    },
    #[error("{path} was planned on another machine ({theirs}); this one is {ours}")]
    Foreign {
        path: PathBuf,
        theirs: String,
        ours: String,
    },
    #[error("{path}: plan {index}: {problem}")]
    BadPlan {
        path: PathBuf,
        index: usize,
        problem: BadPlan,
    },
    #[error("cannot write {path}: {cause}")]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "wisdom file {path}: the directory {dir} does not exist; create it first or choose \
         another path (stridelab creates no directory for a path it is given)"
    )]
    MissingDirectory { path: PathBuf, dir: PathBuf },
}

/// What is wrong with one plan of a wisdom file.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BadPlan {
    #[error("{name} {value} is not a multiple of 8 in 8..={max}")]
    Knob {
        name: &'static str,
        value: usize,
        max: usize,
    },
    #[error("prefetch_steps {0} exceeds 64")]
    PrefetchSteps(usize),
    #[error("{name} {bytes} exceeds 1 MiB")]
    PrefetchBytes { name: &'static str, bytes: usize },
    #[error("a schedule name must have 1 to 64 bytes")]
    Name,
    #[error("planning_s is not a non-negative number")]
    PlanningTime,
    #[error("the class has no threads or a line offset ≥ 8")]
    Class,
    #[error("more than {MAX_PLANS} plans")]
    TooMany,
}

/// The machine a file's timings belong to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MachineKey {
    pub cpu_model: String,
    pub l1d_bytes: usize,
    pub l2_bytes: usize,
    pub llc_bytes: usize,
}

impl MachineKey {
    /// The key of `machine`: its CPU model and the sizes the engine plans for.
    pub(crate) fn of(machine: &Machine) -> MachineKey {
        MachineKey {
            cpu_model: machine.cpu_model.clone(),
            l1d_bytes: machine.caches.l1d_bytes,
            l2_bytes: machine.caches.l2_bytes,
            llc_bytes: machine.caches.llc_bytes,
        }
    }

    fn describe(&self) -> String {
        format!(
            "{}, L1d {} B, L2 {} B, LLC {} B",
            self.cpu_model, self.l1d_bytes, self.l2_bytes, self.llc_bytes
        )
    }
}

/// What makes two copies the same planning problem: the coalesced loop nest (shapes and
/// strides), where the source starts within its cache line, and the thread count.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CopyClass {
    pub plan: Plan,
    /// The view's offset modulo a line's 8 elements (buffers start on a line).
    pub src_line_offset: usize,
    pub threads: usize,
}

/// A schedule: the engine's knobs, named, as a file stores them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// Which candidate family it came from (`in-cache`, `stream-tiles`, `stream-walk`, …).
    pub name: String,
    pub tuning: Tuning,
}

impl Schedule {
    pub(crate) fn new(name: &str, tuning: Tuning) -> Schedule {
        Schedule {
            name: name.to_string(),
            tuning,
        }
    }

    /// The ranges the candidates stay in, so a file cannot ask for a huge stage or a loop
    /// that never advances.
    fn check(&self) -> Result<(), BadPlan> {
        let t = &self.tuning;
        let multiple_of_8 = |name: &'static str, value: usize, max: usize| {
            if value == 0 || !value.is_multiple_of(8) || value > max {
                Err(BadPlan::Knob { name, value, max })
            } else {
                Ok(())
            }
        };
        multiple_of_8("panel", t.panel, 4096)?;
        multiple_of_8("tile_rows", t.tile_rows, 256)?;
        multiple_of_8("batch_rows", t.batch_rows, 256)?;
        if t.prefetch_steps > 64 {
            return Err(BadPlan::PrefetchSteps(t.prefetch_steps));
        }
        for (name, bytes) in [
            ("tile_prefetch_bytes", t.tile_prefetch_bytes),
            ("batch_prefetch_bytes", t.batch_prefetch_bytes),
        ] {
            if bytes > 1 << 20 {
                return Err(BadPlan::PrefetchBytes { name, bytes });
            }
        }
        if self.name.is_empty() || self.name.len() > 64 {
            return Err(BadPlan::Name);
        }
        Ok(())
    }
}

/// One candidate's median trial time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trial {
    pub schedule: String,
    pub median_ns: u64,
    pub runs: usize,
}

/// The planner's verdict on one copy class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Verdict {
    pub class: CopyClass,
    pub schedule: Schedule,
    /// Wall time the planning took, in seconds.
    pub planning_s: f64,
    /// Bytes of destination each trial wrote.
    pub trial_bytes: usize,
    pub trials: Vec<Trial>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WisdomFile {
    format: String,
    version: u32,
    machine: MachineKey,
    plans: Vec<Verdict>,
}

/// The plans known in this process, and the file they are kept in.
#[derive(Debug)]
pub(crate) struct Wisdom {
    pub machine: MachineKey,
    pub plans: HashMap<CopyClass, Verdict>,
    /// Where new plans are saved; `None` keeps them in memory only.
    pub file: Option<PathBuf>,
    /// Whether the file's missing directories are created on save (the default location
    /// only: a path the user named must have its directory already).
    pub creates_directory: bool,
}

impl Wisdom {
    /// An empty wisdom for `machine`, saved to `file` if given.
    pub(crate) fn empty(machine: MachineKey, file: Option<PathBuf>) -> Wisdom {
        Wisdom {
            machine,
            plans: HashMap::new(),
            file,
            creates_directory: false,
        }
    }

    /// The wisdom in `path` (none yet if the file does not exist). On an error the caller
    /// keeps its plans in memory and leaves the file alone.
    pub(crate) fn load(path: &Path, machine: MachineKey) -> Result<Wisdom, WisdomError> {
        let io = |cause| WisdomError::Read {
            path: path.to_path_buf(),
            cause,
        };
        let bytes = match fs::metadata(path) {
            Ok(meta) => meta.len(),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Wisdom::empty(machine, Some(path.to_path_buf())));
            }
            Err(err) => return Err(io(err)),
        };
        if bytes > MAX_FILE_BYTES {
            return Err(WisdomError::TooLarge {
                path: path.to_path_buf(),
                bytes,
            });
        }
        let text = fs::read_to_string(path).map_err(io)?;
        let file = parse(path, &text, &machine)?;
        let plans = file
            .plans
            .into_iter()
            .map(|verdict| (verdict.class.clone(), verdict))
            .collect();
        Ok(Wisdom {
            machine,
            plans,
            file: Some(path.to_path_buf()),
            creates_directory: false,
        })
    }

    /// Writes every plan to the file, replacing it whole.
    pub(crate) fn save(&self) -> Result<(), WisdomError> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        let write = |cause| WisdomError::Write {
            path: path.clone(),
            cause,
        };
        let mut plans: Vec<Verdict> = self.plans.values().cloned().collect();
        plans.sort_by_cached_key(|v| serde_json::to_string(&v.class).unwrap_or_default());
        let file = WisdomFile {
            format: FORMAT.into(),
            version: VERSION,
            machine: self.machine.clone(),
            plans,
        };
        let text = serde_json::to_string_pretty(&file).map_err(|e| write(e.into()))?;
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = dir.unwrap_or(Path::new("."));
        if self.creates_directory {
            fs::create_dir_all(dir).map_err(write)?;
        }
        let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(write)?;
        temp.write_all(text.as_bytes()).map_err(write)?;
        temp.write_all(b"\n").map_err(write)?;
        temp.persist(path).map_err(|err| write(err.error))?;
        Ok(())
    }
}

/// Checks a file's text: format, version, machine and every schedule's ranges.
fn parse(path: &Path, text: &str, machine: &MachineKey) -> Result<WisdomFile, WisdomError> {
    let file: WisdomFile = serde_json::from_str(text).map_err(|cause| WisdomError::Parse {
        path: path.to_path_buf(),
        cause,
    })?;
    if file.format != FORMAT || file.version != VERSION {
        return Err(WisdomError::Version {
            path: path.to_path_buf(),
            format: file.format,
            version: file.version,
        });
    }
    if &file.machine != machine {
        return Err(WisdomError::Foreign {
            path: path.to_path_buf(),
            theirs: file.machine.describe(),
            ours: machine.describe(),
        });
    }
    let bad = |index, problem| WisdomError::BadPlan {
        path: path.to_path_buf(),
        index,
        problem,
    };
    if file.plans.len() > MAX_PLANS {
        return Err(bad(MAX_PLANS, BadPlan::TooMany));
    }
    for (index, verdict) in file.plans.iter().enumerate() {
        verdict
            .schedule
            .check()
            .map_err(|problem| bad(index, problem))?;
        if !(verdict.planning_s.is_finite() && verdict.planning_s >= 0.0) {
            return Err(bad(index, BadPlan::PlanningTime));
        }
        if verdict.class.threads == 0 || verdict.class.src_line_offset >= 8 {
            return Err(bad(index, BadPlan::Class));
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> MachineKey {
        MachineKey {
            cpu_model: "Test CPU".into(),
            l1d_bytes: 48 << 10,
            l2_bytes: 2 << 20,
            llc_bytes: 2 << 20,
        }
    }

    fn verdict(panel: usize) -> Verdict {
        Verdict {
            class: CopyClass {
                plan: Plan::new(&[64, 64], &[1, 64]),
                src_line_offset: 0,
                threads: 1,
            },
            schedule: Schedule::new(
                "stream-tiles",
                Tuning {
                    panel,
                    ..Tuning::for_caches(1 << 30, 1, crate::TEST_CACHES)
                },
            ),
            planning_s: 0.01,
            trial_bytes: 1 << 20,
            trials: vec![],
        }
    }

    #[test]
    fn a_saved_wisdom_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("wisdom.json");
        let mut wisdom = Wisdom::load(&path, machine()).unwrap();
        assert!(wisdom.plans.is_empty());
        let v = verdict(512);
        wisdom.plans.insert(v.class.clone(), v.clone());
        // A named file's missing directory is not created; the default location's is.
        assert!(matches!(wisdom.save(), Err(WisdomError::Write { .. })));
        assert!(!path.parent().unwrap().exists());
        wisdom.creates_directory = true;
        wisdom.save().unwrap();
        let back = Wisdom::load(&path, machine()).unwrap();
        assert_eq!(back.plans.get(&v.class), Some(&v));
        // Only the file itself is left: the temporary was renamed onto it.
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    }

    #[test]
    fn corrupt_foreign_and_hostile_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wisdom.json");
        let good = |plans: Vec<Verdict>, machine: MachineKey| {
            serde_json::to_string(&WisdomFile {
                format: FORMAT.into(),
                version: VERSION,
                machine,
                plans,
            })
            .unwrap()
        };
        let other = MachineKey {
            cpu_model: "Other CPU".into(),
            ..machine()
        };
        let cases: Vec<(String, &str)> = vec![
            ("{not json".into(), "is not a wisdom file"),
            ("[]".into(), "is not a wisdom file"),
            (
                good(vec![], machine())
                    .replace(&format!("\"version\":{VERSION}"), "\"version\":99"),
                "version 99",
            ),
            (good(vec![verdict(512)], other), "another machine"),
            (good(vec![verdict(0)], machine()), "panel 0"),
            (
                good(vec![verdict(1 << 40)], machine()),
                "panel 1099511627776",
            ),
            (good(vec![verdict(12)], machine()), "panel 12"),
        ];
        for (text, expected) in cases {
            fs::write(&path, &text).unwrap();
            let err = Wisdom::load(&path, machine()).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }
}
