//! Suites as data: the built-in `quick`, `full` and `gate` suites (TOML files under `suites/`,
//! embedded at build time) and user TOML files with the same schema, expanded into a validated
//! [`Plan`] of points before anything runs.
//!
//! Schema (unknown keys are errors that name their line):
//! ```toml
//! name = "quick"
//! description = "what the suite is for"
//! threads = [1]                  # default thread counts; "all" = 1..=available CPUs
//!
//! [[point]]
//! kernel = "col-sum"
//! params = { rows = 1024, cols = 1024, ld = [1024, 1025] }   # a list is a grid axis
//! cases = [{ n = 64 }, { n = 65 }]     # optional: explicit parameter sets, each × the grid
//! threads = [1, "all"]                 # optional: overrides the suite's thread counts
//! max_accesses = 1073741824            # optional: this point's per-run limit (rule 6)
//!
//! [[point]]                            # a geometry sweep (`harness::suite::sweep`): strides and K
//! kernel = "conflict"                  # derived from a level of the simulated geometry
//! params = { mode = "lat", reps = 16 }
//! sweep = { level = "L1d", ways = [2, 4], tail = 8, timed = 4 }
//! # preset = "apple-m1-firestorm" in a sweep: that machine's level, simulated only
//! ```
//! Rules, checked in [`Suite::plan`]:
//! 1. every point names a kernel of the catalogue;
//! 2. every parameter set resolves under the kernel's rules (`resolve_params`);
//! 3. thread counts lie in `1..=available CPUs`;
//! 4. the plan is not empty;
//! 5. the plan has at most [`PlanLimits::max_points`] points, counted (checked products of
//!    the axis lengths, cases and thread counts) before any grid is expanded;
//! 6. no point's single run makes more than [`PlanLimits::max_accesses_per_run`] loads and
//!    stores (estimated from its parameters, `kernels::estimate_accesses`), so every run is
//!    short enough for a stop request to take effect between runs; a point may declare a
//!    larger limit of its own, up to [`MAX_POINT_ACCESSES`].

pub mod reach;
pub mod sweep;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use thiserror::Error;

use crate::cache::geometry::CacheLevel;
use crate::harness::measure::pin::cpu_count;
use crate::kernels::args::{KernelWordError, parse_kernel_words};
use crate::kernels::estimate_accesses;
use crate::kernels::spec::{KernelError, KernelSpec, ParamKind, Params};
use crate::results::SweepInfo;

use crate::harness::suite::reach::{ReachSpec, reach_sizes};
use crate::harness::suite::sweep::{SweepSpec, expand, preset_levels};

use super::catalogue_link::{find, resolve_params};

/// The built-in suites: name, TOML text.
pub const BUILTIN_SUITES: &[(&str, &str)] = &[
    ("quick", include_str!("../../../../../suites/quick.toml")),
    ("full", include_str!("../../../../../suites/full.toml")),
    ("gate", include_str!("../../../../../suites/gate.toml")),
    ("loops", include_str!("../../../../../suites/loops.toml")),
];

/// Points a plan may have by default (rule 5): far more than any built-in suite, far fewer
/// than would take the planner itself long to build.
pub const DEFAULT_MAX_POINTS: u64 = 10_000;

/// Loads and stores one run may make by default (rule 6): 2^28, about 0.7 s of L2-bound
/// probe loads here, so Ctrl-C, polled between runs, takes effect within a second.
pub const DEFAULT_MAX_ACCESSES_PER_RUN: u64 = 1 << 28;

/// The limits [`Suite::plan_on`] checks before building or running anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanLimits {
    pub max_points: u64,
    pub max_accesses_per_run: u64,
}

impl Default for PlanLimits {
    fn default() -> Self {
        Self {
            max_points: DEFAULT_MAX_POINTS,
            max_accesses_per_run: DEFAULT_MAX_ACCESSES_PER_RUN,
        }
    }
}

/// Why a suite could not be read or planned.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SuiteError {
    // Causes are part of the message (fields not named `source`) so error chains do not repeat them.
    #[error("cannot read suite file `{path}`: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("suite `{origin}`: {message}")]
    Parse { origin: String, message: String },
    #[error("{}kernel `{kernel}`: {error}", where_(origin, *line))]
    Kernel {
        origin: String,
        line: usize,
        kernel: String,
        error: Box<KernelError>,
    },
    #[error("{}{message}", where_(origin, *line))]
    Invalid {
        origin: String,
        line: usize,
        message: String,
    },
    #[error(
        "unknown suite `{0}`: use quick, full, gate, loops or a path to a TOML file (a path must exist)"
    )]
    Unknown(String),
    #[error(transparent)]
    Words(#[from] KernelWordError),
}

/// `suite `x`, line 3: ` — or nothing for `--kernel` suites, which have no file.
fn where_(origin: &str, line: usize) -> String {
    if origin == "command-line" {
        String::new()
    } else {
        format!("suite `{origin}`, line {line}: ")
    }
}

/// A parameter value in a suite file: one value or a list (a grid axis).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum GridValue {
    Int(i64),
    Text(String),
    List(Vec<ScalarValue>),
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ScalarValue {
    Int(i64),
    Text(String),
}

impl ScalarValue {
    fn as_arg(&self) -> String {
        match self {
            ScalarValue::Int(i) => i.to_string(),
            ScalarValue::Text(t) => t.clone(),
        }
    }
}

impl GridValue {
    fn values(&self) -> Vec<String> {
        match self {
            GridValue::Int(i) => vec![i.to_string()],
            GridValue::Text(t) => vec![t.clone()],
            GridValue::List(items) => items.iter().map(ScalarValue::as_arg).collect(),
        }
    }
}

/// A thread count: a number or `"all"`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ThreadCount {
    Count(i64),
    Word(String),
}

/// A suite as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub threads: Option<Vec<ThreadCount>>,
    #[serde(default, rename = "point")]
    pub points: Vec<SuitePoint>,
    /// Where the suite came from: `builtin`, `file:PATH` or `command-line` (not in the file).
    #[serde(skip)]
    pub source: String,
    #[serde(skip)]
    text: String,
    /// Positional values given on the command line (`--kernel row-sum 64 64`).
    #[serde(skip)]
    positional: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuitePoint {
    pub kernel: toml::Spanned<String>,
    #[serde(default)]
    pub params: BTreeMap<String, GridValue>,
    #[serde(default)]
    pub cases: Vec<BTreeMap<String, ScalarValue>>,
    #[serde(default)]
    pub threads: Option<Vec<ThreadCount>>,
    /// Strides and slot counts derived from a level of the geometry (see `harness::suite::sweep`).
    #[serde(default)]
    pub sweep: Option<SweepSpec>,
    /// Sizes doubling to past the last-level cache (see `harness::suite::reach`).
    #[serde(default)]
    pub reach: Option<ReachSpec>,
    /// This point's own per-run access limit, when it must exceed the run's (`matmul n=512`
    /// makes 3 × 2^27 accesses a run); at most [`MAX_POINT_ACCESSES`], so a suite file cannot
    /// plan unbounded work.
    #[serde(default)]
    pub max_accesses: Option<u64>,
}

/// The largest per-run access limit a suite point may declare (2^31: minutes, not hours).
pub const MAX_POINT_ACCESSES: u64 = 1 << 31;

/// A point's `max_accesses` above [`MAX_POINT_ACCESSES`]: refused, so a suite file cannot plan
/// unbounded work.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("max_accesses = {0} is above the largest a point may declare ({MAX_POINT_ACCESSES})")]
pub struct MaxAccessesTooLarge(pub u64);

/// A point's per-run access limit: its own `max_accesses` when it declares one (never below
/// the run's), else the run's.
fn point_access_limit(point: &SuitePoint, limits: &PlanLimits) -> Result<u64, MaxAccessesTooLarge> {
    match point.max_accesses {
        Some(own) if own > MAX_POINT_ACCESSES => Err(MaxAccessesTooLarge(own)),
        Some(own) => Ok(own.max(limits.max_accesses_per_run)),
        None => Ok(limits.max_accesses_per_run),
    }
}

/// One point of a plan: a resolved kernel, its parameters and a thread count.
#[derive(Debug, Clone)]
pub struct PlannedPoint {
    pub spec: &'static KernelSpec,
    pub params: Params,
    /// The `key=value` words the point was planned from, as written (before defaults): what
    /// another build of the lab is given to plan the same point with its own catalogue.
    pub args: Vec<(String, String)>,
    pub threads: usize,
    /// Set on the points of a geometry sweep; `timed = false` points are simulated only.
    pub sweep: Option<SweepInfo>,
    /// The data levels to simulate instead of the run's (a sweep on a preset's geometry).
    pub levels: Option<Vec<CacheLevel>>,
}

impl PlannedPoint {
    /// Whether the point is timed (every point but a sweep's simulated-only ones).
    pub fn timed(&self) -> bool {
        self.sweep.as_ref().is_none_or(|s| s.timed)
    }
}

/// A validated suite, ready to run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub source: String,
    pub description: String,
    pub points: Vec<PlannedPoint>,
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Expands `key = [a, b]` axes into every combination (in key order, last key fastest).
fn cartesian(axes: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (key, values) in axes {
        let mut next = Vec::with_capacity(combos.len() * values.len());
        for combo in &combos {
            for value in values {
                let mut c = combo.clone();
                c.push((key.clone(), value.clone()));
                next.push(c);
            }
        }
        combos = next;
    }
    combos
}

/// Why a thread-count list cannot be used.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ThreadListError {
    #[error("thread count `{0}` is neither a number nor `all`")]
    NotACount(String),
    #[error("thread count {count} is outside 1..={cpus} (the CPUs available to this process)")]
    OutOfRange { count: i64, cpus: usize },
    #[error("the thread list is empty")]
    Empty,
}

/// Parses a thread-count list (`1,2` or `all`) as the CLI's `--threads` takes it.
pub fn parse_thread_list(text: &str) -> Result<Vec<ThreadCount>, ThreadListError> {
    text.split(',')
        .map(|t| t.trim())
        .map(|t| {
            if t == "all" {
                Ok(ThreadCount::Word(t.into()))
            } else {
                t.parse::<i64>()
                    .map(ThreadCount::Count)
                    .map_err(|_| ThreadListError::NotACount(t.to_string()))
            }
        })
        .collect()
}

/// Resolves thread counts against the CPUs available (rule 3).
pub fn resolve_threads(counts: &[ThreadCount], cpus: usize) -> Result<Vec<usize>, ThreadListError> {
    let mut out = Vec::new();
    for count in counts {
        match count {
            ThreadCount::Count(n) if *n >= 1 && (*n as usize) <= cpus => out.push(*n as usize),
            ThreadCount::Count(n) => {
                return Err(ThreadListError::OutOfRange { count: *n, cpus });
            }
            ThreadCount::Word(w) if w == "all" => out.extend(1..=cpus),
            ThreadCount::Word(w) => return Err(ThreadListError::NotACount(w.clone())),
        }
    }
    out.dedup();
    if out.is_empty() {
        return Err(ThreadListError::Empty);
    }
    Ok(out)
}

impl Suite {
    /// Parses a suite from TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, SuiteError> {
        let mut suite: Suite = toml::from_str(text).map_err(|e| SuiteError::Parse {
            origin: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        suite.text = text.to_string();
        suite.source = origin.to_string();
        Ok(suite)
    }

    /// A built-in suite by name.
    pub fn builtin(name: &str) -> Option<Self> {
        BUILTIN_SUITES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| {
                let mut suite = Self::parse(text, name).expect("built-in suites parse");
                suite.source = "builtin".into();
                suite
            })
    }

    /// `quick`, `full`, `gate` or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Self, SuiteError> {
        if let Some(suite) = Self::builtin(name_or_path) {
            return Ok(suite);
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            return Err(SuiteError::Unknown(name_or_path.to_string()));
        }
        let text = std::fs::read_to_string(path).map_err(|error| SuiteError::Io {
            path: name_or_path.to_string(),
            error,
        })?;
        let mut suite = Self::parse(&text, name_or_path)?;
        suite.source = format!("file:{name_or_path}");
        Ok(suite)
    }

    /// A one-kernel suite from the command line, read by `kernels::args::parse_kernel_words`:
    /// `key=a,b,c` values are grid axes (commas inside brackets belong to the value), other
    /// words are positional; a parameter named twice is refused (`KernelWordError`).
    pub fn from_command_line(kernel: &str, args: &[String]) -> Result<Self, SuiteError> {
        let mut params = BTreeMap::new();
        let mut positional = Vec::new();
        for word in parse_kernel_words(args)? {
            if word.key.is_empty() {
                positional.extend(word.values);
            } else {
                let items = word.values.into_iter().map(ScalarValue::Text).collect();
                params.insert(word.key, GridValue::List(items));
            }
        }
        Ok(Suite {
            name: "command-line".into(),
            description: format!("stridelab run --kernel {kernel} {}", args.join(" ")),
            threads: None,
            points: vec![SuitePoint {
                kernel: toml::Spanned::new(0..0, kernel.to_string()),
                params,
                cases: Vec::new(),
                threads: None,
                sweep: None,
                max_accesses: None,
                reach: None,
            }],
            source: "command-line".into(),
            text: String::new(),
            // Positional values keep their order through the empty key (catalogue rule 1).
            positional,
        })
    }

    /// Expands and validates every point (rules 1–6, default limits) without running anything,
    /// for the data-cache `levels` the run simulates (a `sweep` derives its strides from them).
    /// `threads_override` replaces every point's thread counts (the CLI's `--threads`).
    pub fn plan(
        &self,
        threads_override: Option<&[ThreadCount]>,
        levels: &[CacheLevel],
    ) -> Result<Plan, SuiteError> {
        self.plan_on(threads_override, PlanLimits::default(), levels)
    }

    /// [`Suite::plan`] with explicit limits (rules 5 and 6).
    pub fn plan_on(
        &self,
        threads_override: Option<&[ThreadCount]>,
        limits: PlanLimits,
        levels: &[CacheLevel],
    ) -> Result<Plan, SuiteError> {
        let cpus = cpu_count();
        let origin = self.source_label();
        let default_threads = vec![ThreadCount::Count(1)];
        let mut points = Vec::new();
        let mut planned: u64 = 0;
        for point in &self.points {
            let line = line_of(&self.text, point.kernel.span().start);
            let kernel_name = point.kernel.get_ref();
            let spec = find(kernel_name).map_err(|source| SuiteError::Kernel {
                origin: origin.clone(),
                line,
                kernel: kernel_name.clone(),
                error: Box::new(source),
            })?;
            let thread_spec = threads_override
                .or(point.threads.as_deref())
                .or(self.threads.as_deref())
                .unwrap_or(&default_threads);
            let invalid = |message| SuiteError::Invalid {
                origin: origin.clone(),
                line,
                message,
            };
            let threads = resolve_threads(thread_spec, cpus).map_err(|e| invalid(e.to_string()))?;
            let mut axes: Vec<(String, Vec<String>)> = point
                .params
                .iter()
                .map(|(k, v)| (k.clone(), v.values()))
                .collect();
            axes.extend(reach_axis(point, levels).map_err(invalid)?);
            let swept = sweep_cases(point, levels).map_err(invalid)?;
            let run_limit =
                point_access_limit(point, &limits).map_err(|e| invalid(e.to_string()))?;
            let simulated_levels = swept.as_ref().and_then(|s| s.levels.clone());
            let cases: Vec<Vec<(String, String)>> = if let Some(swept) = &swept {
                swept.cases.iter().map(|(case, _)| case.clone()).collect()
            } else if point.cases.is_empty() {
                vec![Vec::new()]
            } else {
                point
                    .cases
                    .iter()
                    .map(|case| case.iter().map(|(k, v)| (k.clone(), v.as_arg())).collect())
                    .collect()
            };
            set_twice(point, &cases, swept.is_some()).map_err(invalid)?;
            // Rule 5, before anything is expanded.
            let mut lengths = std::iter::once(cases.len())
                .chain(axes.iter().map(|(_, values)| values.len()))
                .chain(std::iter::once(threads.len()));
            planned = lengths
                .try_fold(1u64, |total, n| total.checked_mul(n as u64))
                .and_then(|size| planned.checked_add(size))
                .unwrap_or(u64::MAX);
            if planned > limits.max_points {
                return Err(SuiteError::Invalid {
                    origin: origin.clone(),
                    line,
                    message: grid_too_large(planned, &axes, cases.len(), limits.max_points),
                });
            }
            for (case_index, case) in cases.iter().enumerate() {
                let sweep = swept.as_ref().map(|s| s.cases[case_index].1.clone());
                for combo in cartesian(&axes) {
                    let mut args: Vec<(String, String)> = self
                        .positional
                        .iter()
                        .map(|v| (String::new(), v.clone()))
                        .collect();
                    args.extend(case.iter().cloned());
                    args.extend(combo);
                    let params =
                        resolve_params(spec, &args).map_err(|source| SuiteError::Kernel {
                            origin: origin.clone(),
                            line,
                            kernel: kernel_name.clone(),
                            error: Box::new(source),
                        })?;
                    check_run_size(spec, &params, run_limit).map_err(|error| {
                        SuiteError::Kernel {
                            origin: origin.clone(),
                            line,
                            kernel: kernel_name.clone(),
                            error: Box::new(error),
                        }
                    })?;
                    for &t in &threads {
                        points.push(PlannedPoint {
                            spec,
                            params: params.clone(),
                            args: args.clone(),
                            threads: t,
                            sweep: sweep.clone(),
                            levels: simulated_levels.clone(),
                        });
                    }
                }
            }
        }
        if points.is_empty() {
            return Err(SuiteError::Invalid {
                origin,
                line: 1,
                message: "the suite has no points (add a [[point]] table)".into(),
            });
        }
        Ok(Plan {
            name: self.name.clone(),
            source: self.source.clone(),
            description: self.description.clone(),
            points,
        })
    }

    fn source_label(&self) -> String {
        if self.source == "builtin" {
            self.name.clone()
        } else {
            self.source
                .strip_prefix("file:")
                .unwrap_or(&self.source)
                .to_string()
        }
    }
}

/// A sweep point's expansion: its cases (`stride` and `count` words) with their record tags,
/// and the levels its points are simulated on (a preset's; `None`: the run's).
struct SweepCases {
    cases: Vec<(Vec<(String, String)>, SweepInfo)>,
    levels: Option<Vec<CacheLevel>>,
}

/// The expansion of a point's `sweep` table; `None` for a point without one. A sweep replaces
/// `cases`.
fn sweep_cases(point: &SuitePoint, levels: &[CacheLevel]) -> Result<Option<SweepCases>, String> {
    let Some(spec) = &point.sweep else {
        return Ok(None);
    };
    if !point.cases.is_empty() {
        return Err("a point has either `cases` or a `sweep`, not both".into());
    }
    let preset = preset_levels(spec).map_err(|e| e.to_string())?;
    let cases = expand(spec, preset.as_deref().unwrap_or(levels))
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|p| {
            let words = vec![
                ("stride".to_string(), p.stride_elements.to_string()),
                ("count".to_string(), p.count.to_string()),
            ];
            (words, p.info)
        })
        .collect();
    Ok(Some(SweepCases {
        cases,
        levels: preset,
    }))
}

/// A parameter a case (or a sweep) sets that `params` sets too: the later would silently win,
/// so the point is refused naming both values.
fn set_twice(
    point: &SuitePoint,
    cases: &[Vec<(String, String)>],
    swept: bool,
) -> Result<(), String> {
    let twice = cases.iter().flatten().find_map(|(key, value)| {
        let in_params = point.params.get(key)?;
        Some((key, in_params.values().join(", "), value))
    });
    match twice {
        Some((key, in_params, value)) => Err(format!(
            "`{key}` is set twice: `params` gives {in_params}, and {} gives {value}; set it in \
             one place",
            if swept { "the `sweep`" } else { "a case" }
        )),
        None => Ok(()),
    }
}

/// The size axis of a point's `reach` table, derived from `levels`; `None` without one.
fn reach_axis(
    point: &SuitePoint,
    levels: &[CacheLevel],
) -> Result<Option<(String, Vec<String>)>, String> {
    let Some(spec) = &point.reach else {
        return Ok(None);
    };
    if point.params.contains_key(&spec.param) || point.sweep.is_some() {
        return Err(format!(
            "a `reach` sets `{}`: the point may neither set it in `params` nor have a `sweep`",
            spec.param
        ));
    }
    let sizes = reach_sizes(spec, levels).map_err(|e| e.to_string())?;
    Ok(Some((
        spec.param.clone(),
        sizes.iter().map(u64::to_string).collect(),
    )))
}

/// Rule 5's message: the size, how it arose and the limit.
fn grid_too_large(size: u64, axes: &[(String, Vec<String>)], cases: usize, limit: u64) -> String {
    let mut factors: Vec<String> = axes
        .iter()
        .filter(|(_, values)| values.len() > 1)
        .map(|(key, values)| format!("{} values of `{key}`", values.len()))
        .collect();
    if cases > 1 {
        factors.push(format!("{cases} cases"));
    }
    let size = if size == u64::MAX {
        "more than 2^64".to_string()
    } else {
        size.to_string()
    };
    format!(
        "the plan would have {size} points ({}), more than the limit of {limit}; \
         split the grid into smaller runs",
        if factors.is_empty() {
            "thread counts".to_string()
        } else {
            factors.join(" × ")
        }
    )
}

/// Rule 6 for one resolved point.
pub fn check_run_size(
    spec: &KernelSpec,
    params: &Params,
    max_accesses: u64,
) -> Result<(), KernelError> {
    let accesses = estimate_accesses(spec, params)?;
    if accesses > max_accesses {
        return Err(KernelError::InvalidParam {
            param: spec
                .params
                .iter()
                .filter(|p| !matches!(p.kind, ParamKind::Choice(_)) && p.name != "seed")
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join("/"),
            message: format!(
                "one run makes an estimated {accesses} loads and stores ({}), more than the \
                 limit of {max_accesses} per run; `--max-accesses N` raises it",
                crate::units::format_bytes_tenths(accesses.saturating_mul(8))
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_errors_that_name_the_line() {
        let text = "name = \"x\"\n\n[[point]]\nkernel = \"row-sum\"\nparms = { rows = 1 }\n";
        let err = Suite::parse(text, "x.toml").unwrap_err().to_string();
        assert!(err.contains("line 5"), "{err}");
        assert!(err.contains("parms"), "{err}");
    }

    #[test]
    fn a_parameter_set_twice_is_refused_naming_both_values() {
        // (the point's tables, what the message names)
        let cases = [
            (
                "params = { n = 64 }\ncases = [{ n = 65 }]",
                "`n` is set twice: `params` gives 64, and a case gives 65",
            ),
            (
                "params = { stride = [8, 16], mode = \"lat\" }\nsweep = { level = \"L1d\", ways = [2] }",
                "`stride` is set twice: `params` gives 8, 16, and the `sweep` gives",
            ),
        ];
        let levels = crate::cache::geometry::Geometry::preset("design-vm")
            .unwrap()
            .levels;
        for (tables, want) in cases {
            let kernel = if tables.contains("sweep") {
                "conflict"
            } else {
                "matmul"
            };
            let text = format!("name = \"x\"\n[[point]]\nkernel = \"{kernel}\"\n{tables}\n");
            let suite = Suite::parse(&text, "x.toml").unwrap();
            let err = suite
                .plan_on(None, PlanLimits::default(), &levels)
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{err}");
            assert!(err.contains("line 3"), "{err}");
        }
        // TOML itself refuses a key written twice in one table.
        let text =
            "name = \"x\"\n[[point]]\nkernel = \"row-sum\"\nparams = { rows = 1, rows = 2 }\n";
        let err = Suite::parse(text, "x.toml").unwrap_err().to_string();
        assert!(err.contains("duplicate key"), "{err}");
    }

    #[test]
    fn command_line_words_given_twice_are_refused() {
        let words: Vec<String> = ["rows=1024", "cols=1024,2048", "cols=4"]
            .map(String::from)
            .to_vec();
        let err = Suite::from_command_line("row-sum", &words).unwrap_err();
        assert!(matches!(err, SuiteError::Words(_)), "{err}");
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let text = "name = \"x\"\n[[point]]\nkernel = \"row-sum\n";
        let err = Suite::parse(text, "x.toml").unwrap_err().to_string();
        assert!(err.contains("line 3"), "{err}");
    }

    #[test]
    fn grids_expand_to_every_combination_in_order() {
        let axes = vec![
            ("a".to_string(), vec!["1".to_string(), "2".to_string()]),
            ("b".to_string(), vec!["x".to_string(), "y".to_string()]),
        ];
        let combos = cartesian(&axes);
        assert_eq!(combos.len(), 4);
        assert_eq!(
            combos[1],
            vec![("a".into(), "1".into()), ("b".into(), "y".into())]
        );
        assert_eq!(cartesian(&[]), vec![Vec::<(String, String)>::new()]);
    }

    #[test]
    fn thread_lists_are_checked_against_the_cpus() {
        // (list, CPUs, expected counts; None = rejected)
        let cases: &[(&str, usize, Option<Vec<usize>>)] = &[
            ("1", 2, Some(vec![1])),
            ("all", 2, Some(vec![1, 2])),
            ("1,2", 2, Some(vec![1, 2])),
            ("0", 2, None),
            ("3", 2, None),
            ("many", 2, None),
        ];
        for (text, cpus, expected) in cases {
            let got = parse_thread_list(text).and_then(|t| resolve_threads(&t, *cpus));
            assert_eq!(got.ok(), *expected, "{text}");
        }
    }
}
