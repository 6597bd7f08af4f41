//! What the analytic models predicted for one point, recorded beside what was measured and
//! simulated (schema 2): the set/GCD model of the kernel's strided pattern per data-cache
//! level, the facts of a view kernel's view, and where the simulated stream differs from the
//! timed one. The harness computes these when it measures the point, for the geometry and base
//! address the simulator used, so a reader draws them without re-deriving anything.
//!
//! Validation on load ([`check_model`]) keeps every number within the recorded geometry, so a
//! reader can trust a prediction as much as a simulated count.

use serde::{Deserialize, Serialize};

use crate::cache::geometry::{CacheKind, CacheLevel, GeometryError, GeometrySource};
use crate::results::Provenance;

/// The first results schema whose records carry model predictions.
pub const FIRST_SCHEMA_WITH_MODEL: u32 = 2;

/// Accesses of the "long run" each level records the sets of (the sets a pattern cycles
/// through when it repeats far beyond one pass).
pub const LONG_RUN_ACCESSES: u64 = 4096;

/// Most cache levels one prediction may list (deeper hierarchies do not exist).
pub const MAX_MODEL_LEVELS: usize = 8;

/// Most dimensions a recorded view may have.
pub const MAX_VIEW_DIMS: usize = 64;

/// The model's predictions for one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrediction {
    /// Always [`Provenance::Model`]: derived, not measured.
    pub source: Provenance,
    /// Which model made the predictions, in words.
    pub model: String,
    /// The kernel's strided pattern and the set model per level (`None`: the kernel has none,
    /// e.g. the random pointer chase).
    pub pattern: Option<PatternPrediction>,
    /// Shape, strides and contiguity of the view a view kernel sums.
    pub view: Option<ViewFacts>,
    /// Where the simulated address stream differs from the timed kernel's (`None`: the same).
    pub simulation_note: Option<String>,
}

/// `count` accesses `stride_bytes` apart from `base`, and what the set model says of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternPrediction {
    /// What the pattern is, in words ("one column: 512 elements 4096 B apart").
    pub description: String,
    /// The kernel buffer the pattern walks.
    pub buffer: u64,
    /// Byte address of the first access in the simulator's address space.
    pub base: u64,
    pub stride_bytes: i64,
    pub count: u64,
    /// One entry per simulated data-cache level, innermost first.
    pub levels: Vec<LevelModel>,
}

/// The set model at one cache level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelModel {
    pub name: String,
    pub size: u64,
    pub ways: u64,
    pub line: u64,
    pub sets: u64,
    /// Distinct sets the `count` accesses touch (enumerated).
    pub sets_used: u64,
    /// The stride in lines, when it is a whole number of lines.
    pub stride_lines: Option<i64>,
    /// `gcd(|stride in lines|, sets)`, when the stride is a whole number of lines.
    pub gcd: Option<u64>,
    /// `sets / gcd`: the sets an unbounded run cycles through (whole-line strides only).
    pub closed_form_sets: Option<u64>,
    /// Distinct sets `LONG_RUN_ACCESSES` accesses of the pattern touch (enumerated).
    pub long_run_sets: u64,
    /// The access count at which more than `ways` distinct lines share a set: the set
    /// overflow onset (searched up to `max(count, lines) + 1` accesses; `None`: none found).
    /// The name predates the wording: a repeat's misses from there on are conflict misses only
    /// while the lines fit the level (`cache::model::RepeatMisses`), capacity misses beyond.
    pub conflict_onset: Option<u64>,
    /// Misses per access of a warm, repeated pass over the `count` accesses under LRU (`None`
    /// when the pattern is too long to enumerate).
    pub cyclic_misses_per_access: Option<f64>,
}

/// A view's layout, as the layout model evaluates its expression.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewFacts {
    pub shape: Vec<u64>,
    /// Strides in elements.
    pub strides: Vec<i64>,
    /// Whether the view walks its elements in C (row-major) order without gaps.
    pub c_contiguous: bool,
    /// The sets of the innermost simulated level the view's elements touch (absent in older
    /// files, and where that level is too large to list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sets: Option<ViewSets>,
}

/// Longest level name a record may carry (geometry names are `L1d`, `L2`, ...).
pub const MAX_LEVEL_NAME: usize = 16;

/// Whether `name` can be a cache level's name: 1..=16 printable characters.
pub(crate) fn short_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_LEVEL_NAME && !name.chars().any(char::is_control)
}

/// How a view's elements spread over the sets of one cache level (8-byte elements, storage
/// starting on a line boundary, as the simulator places it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewSets {
    pub level: String,
    pub sets: u64,
    pub ways: u64,
    /// Sets a walk along the innermost dimension touches (every other index at 0): what one
    /// inner loop of a C-order walk cycles through.
    pub inner_sets_touched: u64,
    /// Sets all of the view's elements touch.
    pub sets_touched: u64,
    pub lines_touched: u64,
    /// The most distinct lines any one set receives.
    pub max_lines_per_set: u64,
}

impl LevelModel {
    /// The level's geometry, rebuilt through [`CacheLevel::recorded`] (the rules live
    /// geometry obeys).
    pub fn geometry(&self) -> Result<CacheLevel, GeometryError> {
        let kind = if self.name.starts_with("L1") {
            CacheKind::Data
        } else {
            CacheKind::Unified
        };
        CacheLevel::recorded(
            &self.name,
            kind,
            self.size,
            self.ways,
            self.line,
            Some(self.sets),
            GeometrySource::Override,
        )
    }
}

/// A rule a recorded prediction breaks: the JSON path below the record and the rule.
pub type ModelInvalid = (String, String);

/// Checks a recorded prediction; `at` is its JSON path (`records[3].model`).
pub fn check_model(m: &ModelPrediction, at: &str) -> Result<(), ModelInvalid> {
    if m.source != Provenance::Model {
        return Err((format!("{at}.source"), "must be `model`".into()));
    }
    if let Some(p) = &m.pattern {
        check_pattern(p, &format!("{at}.pattern"))?;
    }
    if let Some(v) = &m.view {
        let at = format!("{at}.view");
        if v.shape.len() != v.strides.len() {
            return Err((
                format!("{at}.strides"),
                "shape and strides differ in length".into(),
            ));
        }
        if v.shape.len() > MAX_VIEW_DIMS {
            return Err((
                format!("{at}.shape"),
                format!("more than {MAX_VIEW_DIMS} dimensions"),
            ));
        }
        if let Some(sets) = &v.sets {
            check_view_sets(sets, &format!("{at}.sets"))?;
        }
    }
    Ok(())
}

/// A view's set counts are counts of one real level: at least one set, no more sets touched
/// than the level has or than lines touched, no set holding more lines than were touched.
fn check_view_sets(v: &ViewSets, at: &str) -> Result<(), ModelInvalid> {
    let rules: [(&str, bool, &str); 5] = [
        ("level", short_name(&v.level), "must be a short level name"),
        (
            "sets",
            v.sets >= 1 && v.ways >= 1,
            "sets and ways must be at least 1",
        ),
        (
            "sets_touched",
            (1..=v.sets).contains(&v.sets_touched) && v.sets_touched <= v.lines_touched,
            "must lie in 1..=sets and be at most the lines touched",
        ),
        (
            "inner_sets_touched",
            (1..=v.sets_touched).contains(&v.inner_sets_touched),
            "must lie in 1..=sets_touched",
        ),
        (
            "max_lines_per_set",
            v.max_lines_per_set >= 1 && v.max_lines_per_set <= v.lines_touched,
            "must lie in 1..=lines_touched",
        ),
    ];
    match rules.iter().find(|(_, ok, _)| !ok) {
        Some((field, _, rule)) => Err((format!("{at}.{field}"), (*rule).into())),
        None => Ok(()),
    }
}

fn check_pattern(p: &PatternPrediction, at: &str) -> Result<(), ModelInvalid> {
    if p.levels.is_empty() || p.levels.len() > MAX_MODEL_LEVELS {
        return Err((
            format!("{at}.levels"),
            format!("must list 1..={MAX_MODEL_LEVELS} levels"),
        ));
    }
    for (i, level) in p.levels.iter().enumerate() {
        check_level(level, p, &format!("{at}.levels[{i}]"))?;
    }
    Ok(())
}

fn check_level(l: &LevelModel, p: &PatternPrediction, at: &str) -> Result<(), ModelInvalid> {
    l.geometry().map_err(|e| (at.to_string(), e.to_string()))?;
    let whole = p.stride_bytes.unsigned_abs().is_multiple_of(l.line);
    let within = |v: Option<u64>| v.is_none_or(|v| (1..=l.sets).contains(&v));
    let rules: [(&str, bool, &str); 7] = [
        (
            "sets_used",
            l.sets_used <= l.sets && l.sets_used <= p.count && (p.count == 0) == (l.sets_used == 0),
            "must be at most the sets and the accesses (and zero only without accesses)",
        ),
        (
            "long_run_sets",
            (1..=l.sets).contains(&l.long_run_sets),
            "must be in 1..=sets",
        ),
        (
            "stride_lines",
            l.stride_lines.is_some() == whole
                && l.stride_lines.is_none_or(|s| {
                    s.unsigned_abs().checked_mul(l.line) == Some(p.stride_bytes.unsigned_abs())
                }),
            "must be the stride in lines exactly when the stride is a whole number of lines",
        ),
        (
            "gcd",
            within(l.gcd) && l.gcd.is_some() == whole,
            "must be in 1..=sets for whole-line strides",
        ),
        (
            "closed_form_sets",
            within(l.closed_form_sets) && l.closed_form_sets.is_some() == whole,
            "must be in 1..=sets for whole-line strides",
        ),
        (
            "conflict_onset",
            l.conflict_onset.is_none_or(|k| k > l.ways),
            "must be above the ways (a set holds `ways` lines)",
        ),
        (
            "cyclic_misses_per_access",
            l.cyclic_misses_per_access
                .is_none_or(|v| v.is_finite() && (0.0..=1.0).contains(&v)),
            "must be a finite fraction in [0, 1]",
        ),
    ];
    for (field, holds, message) in rules {
        if !holds {
            return Err((format!("{at}.{field}"), message.into()));
        }
    }
    Ok(())
}
