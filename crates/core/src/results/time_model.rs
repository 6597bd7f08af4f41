//! The time model as data: this machine's per-level probes (bandwidths and load-to-use
//! latency, each a median with the range of its samples), kept in `machine-model.json` and
//! copied once into a results document, and the prediction a timed point records from them
//! (`records[i].time_model`), in the spirit of kerncraft's ECM and Roofline models.
//!
//! Both are documents read from disk, so both are checked here, once, on load: every time and
//! bandwidth finite and positive, every interval ordered, every list bounded, so the report and
//! `run` draw them without re-checking.

use serde::{Deserialize, Serialize};

use crate::results::Provenance;

/// The `format` field of a machine-model file.
pub const MODEL_FORMAT: &str = "stridelab-machine-model";
/// The layout of the file this build reads and writes.
pub const MODEL_VERSION: u32 = 1;
/// Most cache levels a model or a prediction lists (deeper hierarchies do not exist).
pub const MAX_TIME_MODEL_LEVELS: usize = 8;
/// Longest words a model or a prediction carries (a reason, a CPU model, a level name).
pub const MAX_TEXT: usize = 400;

/// A measured figure: the median over the probe's samples and the samples' range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interval {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// The median and range of `samples` (none: `None`).
    pub fn of(samples: &[f64]) -> Option<Interval> {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Interval {
            median,
            low: sorted[0],
            high: sorted[n - 1],
        })
    }

    /// The same figure for one value (tests, synthetic files).
    pub const fn exact(value: f64) -> Interval {
        Interval {
            median: value,
            low: value,
            high: value,
        }
    }

    fn check(&self, at: &str) -> Result<(), (String, String)> {
        let ok = [self.median, self.low, self.high]
            .iter()
            .all(|v| v.is_finite() && *v > 0.0);
        if !ok || self.low > self.median || self.median > self.high {
            return Err((
                at.to_string(),
                format!(
                    "{:?} ≤ {:?} ≤ {:?} is not an ordered interval of finite numbers > 0",
                    self.low, self.median, self.high
                ),
            ));
        }
        Ok(())
    }
}

/// One level's probes: what the lab measured with a working set sized for that level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelProbes {
    /// `L1d`, `L2`, `L3`, … or `memory`.
    pub name: String,
    /// The level's capacity in bytes (0 for memory).
    pub size: u64,
    /// The working set every probe of this level walked, in bytes.
    pub working_set: u64,
    /// `read` (sixteen independent accumulators): bytes per second.
    pub read_bytes_per_s: Interval,
    /// The fill probe (stores only): bytes per second.
    pub write_bytes_per_s: Interval,
    /// `copy` (the platform copy), bytes read plus bytes written per second.
    pub copy_bytes_per_s: Interval,
    /// `chase` (dependent loads, one per line): nanoseconds per load.
    pub latency_ns: Interval,
}

/// A level of the geometry the probes skipped, and why (a VM's implausible L3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkippedLevel {
    pub name: String,
    pub size: u64,
    pub reason: String,
}

/// A cache level as the model file's key records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeometryKey {
    pub name: String,
    pub size: u64,
    pub ways: u64,
    pub line: u64,
}

/// This machine's probes, as `machine-model.json` keeps them and a results document records
/// them (`time_model_probes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineModel {
    /// Always [`MODEL_FORMAT`].
    pub format: String,
    /// Always [`MODEL_VERSION`] for files this build writes.
    pub version: u32,
    /// Always `measured`: every figure was timed by the lab on this machine.
    pub source: Provenance,
    /// The CPU the probes ran on (with the geometry, the file's key).
    pub cpu_model: String,
    /// The machine's data-cache levels when the probes ran.
    pub geometry: Vec<GeometryKey>,
    /// When the probes ran, seconds since the Unix epoch (UTC).
    pub measured_unix_s: u64,
    /// The 1-minute load average when they began (other work on the machine), if known.
    pub load_average: Option<f64>,
    /// The probed cache levels, innermost first.
    pub levels: Vec<LevelProbes>,
    /// Main memory's probes (`name` = `memory`).
    pub memory: LevelProbes,
    /// Levels of the geometry not probed, with the reason.
    #[serde(default)]
    pub skipped: Vec<SkippedLevel>,
}

/// Which bound a point's estimate takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimeRule {
    /// Independent loads and stores: the traffic at each level's measured bandwidth.
    Bandwidth,
    /// Dependent loads: each access waits for the one before, paying its level's latency.
    Latency,
}

/// The traffic one level supplied in one run, and what it costs at that level's probes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelTraffic {
    /// The supplying level (`L1d`: the core's own loads and stores; `memory`: the last
    /// level's misses).
    pub level: String,
    /// Whose probes priced it (a level the probes skipped is priced as memory).
    pub priced_as: String,
    /// Loads this level served (L1d: element loads; below: lines).
    pub loads: f64,
    /// Stores this level served (as `loads`).
    pub stores: f64,
    /// Bytes moved: loads and stores times the element size (L1d) or the line size.
    pub bytes: f64,
    /// The bytes at this level's read and write bandwidth, in ns.
    pub bandwidth_ns: f64,
    /// Every access served here paying this level's latency, in ns.
    pub latency_ns: f64,
}

/// The model's figures for one run of a point, in ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeBounds {
    /// The bandwidth bound with every level's transfers overlapped: the largest level's time.
    pub overlapped_ns: f64,
    /// The bandwidth bound with no overlap: the sum of the levels' times.
    pub non_overlapped_ns: f64,
    /// Every access paying its level's latency, one after another.
    pub latency_ns: f64,
    /// The estimate the rule picks, with the probes' medians.
    pub estimate_ns: f64,
    /// The same estimate with every probe at its fastest and its slowest sample.
    pub estimate_low_ns: f64,
    pub estimate_high_ns: f64,
}

/// What the time model says of one timed point (`records[i].time_model`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimePrediction {
    /// Always [`Provenance::Model`]: derived from probes and simulated counts.
    pub source: Provenance,
    /// Whether the model claims to apply to this point.
    pub applies: bool,
    /// The rule followed, or why the model disowns the point.
    pub reason: String,
    /// The bound the estimate takes (`None` where nothing could be priced).
    pub rule: Option<TimeRule>,
    pub bounds: Option<TimeBounds>,
    /// Per supplying level, innermost first.
    #[serde(default)]
    pub traffic: Vec<LevelTraffic>,
    /// The point's measured median time per run over the estimate.
    pub measured_over_model: Option<f64>,
    /// For a claimed point beyond 2× of its estimate: the controls `stridelab why` runs on it
    /// (each as its change reads: `huge pages`, `ld=1025`), so the report can name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why_controls: Vec<String>,
}

impl TimePrediction {
    /// The ratio where the model claims the point, else `None`.
    pub fn claimed_ratio(&self) -> Option<f64> {
        self.measured_over_model.filter(|_| self.applies)
    }
}

type Problem = (String, String);

fn problem(at: impl Into<String>, message: impl Into<String>) -> Problem {
    (at.into(), message.into())
}

fn non_negative(at: &str, value: f64) -> Result<(), Problem> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(problem(at, format!("{value:?} is not a finite number ≥ 0")))
    }
}

fn positive(at: &str, value: f64) -> Result<(), Problem> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(problem(at, format!("{value:?} is not a finite number > 0")))
    }
}

fn text(at: &str, value: &str) -> Result<(), Problem> {
    if value.is_empty() || value.chars().count() > MAX_TEXT {
        return Err(problem(at, format!("must have 1 to {MAX_TEXT} characters")));
    }
    Ok(())
}

fn check_probes(p: &LevelProbes, at: &str) -> Result<(), Problem> {
    text(&format!("{at}.name"), &p.name)?;
    if p.working_set == 0 {
        return Err(problem(format!("{at}.working_set"), "must be > 0"));
    }
    p.read_bytes_per_s
        .check(&format!("{at}.read_bytes_per_s"))?;
    p.write_bytes_per_s
        .check(&format!("{at}.write_bytes_per_s"))?;
    p.copy_bytes_per_s
        .check(&format!("{at}.copy_bytes_per_s"))?;
    p.latency_ns.check(&format!("{at}.latency_ns"))
}

/// Checks a machine model read from disk or a results document: `Err((field, message))`.
pub fn check_machine_model(m: &MachineModel, at: &str) -> Result<(), Problem> {
    if m.format != MODEL_FORMAT || m.version != MODEL_VERSION {
        return Err(problem(
            format!("{at}.format"),
            format!(
                "format `{}` version {}; this build reads `{MODEL_FORMAT}` version {MODEL_VERSION}",
                m.format, m.version
            ),
        ));
    }
    if m.source != Provenance::Measured {
        return Err(problem(format!("{at}.source"), "must be `measured`"));
    }
    text(&format!("{at}.cpu_model"), &m.cpu_model)?;
    if m.levels.len() > MAX_TIME_MODEL_LEVELS || m.geometry.len() > MAX_TIME_MODEL_LEVELS {
        return Err(problem(
            format!("{at}.levels"),
            format!("more than {MAX_TIME_MODEL_LEVELS} levels"),
        ));
    }
    if m.skipped.len() > MAX_TIME_MODEL_LEVELS {
        return Err(problem(format!("{at}.skipped"), "too many levels"));
    }
    for (i, s) in m.skipped.iter().enumerate() {
        text(&format!("{at}.skipped[{i}].name"), &s.name)?;
        text(&format!("{at}.skipped[{i}].reason"), &s.reason)?;
    }
    if let Some(load) = m.load_average {
        non_negative(&format!("{at}.load_average"), load)?;
    }
    for (i, level) in m.levels.iter().enumerate() {
        check_probes(level, &format!("{at}.levels[{i}]"))?;
    }
    check_probes(&m.memory, &format!("{at}.memory"))
}

/// Checks one record's prediction: `Err((field, message))`.
pub fn check_prediction(p: &TimePrediction, at: &str) -> Result<(), Problem> {
    if p.source != Provenance::Model {
        return Err(problem(format!("{at}.source"), "must be `model`"));
    }
    text(&format!("{at}.reason"), &p.reason)?;
    if p.traffic.len() > MAX_TIME_MODEL_LEVELS + 1 {
        return Err(problem(format!("{at}.traffic"), "too many levels"));
    }
    for (i, t) in p.traffic.iter().enumerate() {
        let at = format!("{at}.traffic[{i}]");
        text(&format!("{at}.level"), &t.level)?;
        text(&format!("{at}.priced_as"), &t.priced_as)?;
        for (name, v) in [
            ("loads", t.loads),
            ("stores", t.stores),
            ("bytes", t.bytes),
            ("bandwidth_ns", t.bandwidth_ns),
            ("latency_ns", t.latency_ns),
        ] {
            non_negative(&format!("{at}.{name}"), v)?;
        }
    }
    if let Some(b) = &p.bounds {
        let at = format!("{at}.bounds");
        for (name, v) in [
            ("overlapped_ns", b.overlapped_ns),
            ("non_overlapped_ns", b.non_overlapped_ns),
            ("latency_ns", b.latency_ns),
        ] {
            non_negative(&format!("{at}.{name}"), v)?;
        }
        Interval {
            median: b.estimate_ns,
            low: b.estimate_low_ns,
            high: b.estimate_high_ns,
        }
        .check(&format!("{at}.estimate_ns"))?;
        if b.overlapped_ns > b.non_overlapped_ns * (1.0 + 1e-9) {
            return Err(problem(
                format!("{at}.overlapped_ns"),
                "exceeds the non-overlapped bound",
            ));
        }
    }
    if let Some(r) = p.measured_over_model {
        positive(&format!("{at}.measured_over_model"), r)?;
        if p.bounds.is_none() {
            return Err(problem(
                format!("{at}.measured_over_model"),
                "a ratio without a model estimate",
            ));
        }
    }
    if p.applies && (p.bounds.is_none() || p.rule.is_none()) {
        return Err(problem(
            format!("{at}.applies"),
            "the model claims a point it has no estimate for",
        ));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
