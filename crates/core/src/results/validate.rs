//! The one validation boundary for results documents read from disk: every rule a reader
//! (report, gate) relies on is checked here, once, on load, and a violation is an error naming
//! the JSON path of the offending value.
//!
//! Rules, by part of the document:
//! 1. `info` (free-form JSON elsewhere): `caches` and `simulated_caches`, when present, are lists
//!    of levels that rebuild through [`CacheLevel::recorded`], the constructor live geometry
//!    uses; `gate.preset`, when present, names a known preset; `dtlb`, when present, lists
//!    data-TLB levels with a known page size and a bounded entry count (`results::tlb`).
//! 2. `method`: finite, non-negative durations, a confidence in (0, 1), an access cap ≥ 1.
//! 3. Records: unique indices below `suite.points`; a kernel of the catalogue with its family;
//!    parameters within the catalogue's declared ranges and rules (handed in as
//!    [`ParamRules`], which the catalogue implements, so records never import the kernels);
//!    `threads` in 1..=[`MAX_THREADS`].
//! 4. Timing: 1..=[`MAX_SAMPLES_PER_POINT`] samples, each finite and > 0; `n` equal to their
//!    count; `min`/`max`/`median` those of the samples; `ci_low ≤ median ≤ ci_high`;
//!    `runs_per_sample ≥ 1`; ns/element, GB/s and its CI finite, > 0 and ordered. Paired
//!    reference samples obey the same sample rules and number as many as the point's. The
//!    precision verdict, when present: a target finite and > 0, outlier counts within the
//!    samples, a drift's ρ in [-1, 1] and its thirds' medians finite and > 0, and each warning
//!    once and backed by its number (a missed target by a CI wider than it, outliers by a
//!    far-out sample, drift by a drift section).
//! 5. Simulated counts: each level's geometry as in rule 1; `load_misses + store_misses =
//!    misses`, the 3C split sums to `misses`, misses ≤ accesses, `miss_rate` finite in [0, 1];
//!    `simulated_accesses ≤ run_accesses` and ≤ the method's cap; `kind` and the typed `cut`
//!    agree with the counts.
//! 6. Model predictions (schema 2): provenance `model`; each level's geometry as in rule 1;
//!    sets used, the gcd and the closed form within the level's sets; the conflict onset above
//!    the ways; cyclic misses per access a finite fraction; a view's shape and strides of one
//!    length (see `results::model`).
//!
//! No rule bounds a reader's work beyond these: the report draws recorded numbers and runs no
//! model, so its cost follows the document's size.

use std::collections::BTreeSet;

use serde::Deserialize;

use crate::cache::geometry::{CacheKind, CacheLevel, GeometryError, GeometrySource, PRESET_NAMES};
use crate::results::model::check_model;
use crate::results::time_model::{check_machine_model, check_prediction};
use crate::results::{
    PointRecord, Precision, PrecisionWarning, ResultsDocument, SimulatedLevel, SimulatedMisses,
    SimulationCut, Summary, Timing,
};
use crate::vocab::{ParamRules, RuleBreak};

/// Most timing samples one point may carry. The harness writes at most 1000 per pass-free run
/// and ~3000 for a pooled gate run; the gate's bootstrap resamples every sample thousands of
/// times, so this bounds its cost per point.
pub const MAX_SAMPLES_PER_POINT: usize = 4096;

/// Most measuring threads a point may claim (the harness runs one instance per thread).
pub const MAX_THREADS: usize = 4096;

/// Relative slack for values a reader recomputes from the samples (float summation order).
const RELATIVE_SLACK: f64 = 1e-9;

/// A rule a document breaks: where, and which rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// JSON path of the offending value, e.g. `records[3].timing.samples_ns_per_run`.
    pub field: String,
    pub message: String,
}

fn invalid(field: impl Into<String>, message: impl Into<String>) -> Invalid {
    Invalid {
        field: field.into(),
        message: message.into(),
    }
}

type Checked = Result<(), Invalid>;

/// Checks every rule of the module doc; `rules` are the catalogue's (rule 3).
pub fn validate(doc: &ResultsDocument, rules: &dyn ParamRules) -> Checked {
    finite_at_least("wall_s", doc.wall_s, 0.0)?;
    check_method(doc)?;
    manifest_levels(&doc.info)?;
    check_info(&doc.info)?;
    if let Some(probes) = &doc.time_model_probes {
        check_machine_model(probes, "time_model_probes")
            .map_err(|(field, message)| Invalid { field, message })?;
    }
    if doc.records.len() > doc.suite.points {
        return Err(invalid(
            "suite.points",
            format!(
                "{} points, but the document has {} records",
                doc.suite.points,
                doc.records.len()
            ),
        ));
    }
    let mut indices = BTreeSet::new();
    for (i, record) in doc.records.iter().enumerate() {
        let at = format!("records[{i}]");
        if record.index >= doc.suite.points {
            return Err(invalid(
                format!("{at}.index"),
                format!(
                    "{} is not below the suite's {} points",
                    record.index, doc.suite.points
                ),
            ));
        }
        if !indices.insert(record.index) {
            return Err(invalid(
                format!("{at}.index"),
                format!("{} is used by another record", record.index),
            ));
        }
        check_record(record, &at, doc.method.simulation_access_cap, rules)?;
    }
    Ok(())
}

fn finite_at_least(field: &str, value: f64, min: f64) -> Checked {
    if value.is_finite() && value >= min {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!("{value:?} is not a finite number ≥ {min}"),
        ))
    }
}

fn finite_positive(field: &str, value: f64) -> Checked {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!("{value:?} is not a finite number > 0"),
        ))
    }
}

fn check_method(doc: &ResultsDocument) -> Checked {
    let m = &doc.method;
    finite_at_least("method.warmup_ms", m.warmup_ms, 0.0)?;
    finite_at_least("method.min_sample_ms", m.min_sample_ms, 0.0)?;
    if !(m.confidence.is_finite() && m.confidence > 0.0 && m.confidence < 1.0) {
        return Err(invalid(
            "method.confidence",
            format!("{} is not in (0, 1)", m.confidence),
        ));
    }
    if m.simulation_access_cap == 0 {
        return Err(invalid(
            "method.simulation_access_cap",
            "must be at least 1",
        ));
    }
    Ok(())
}

/// A cache level as the manifest records it (`harness::machine::MachineInfo`).
#[derive(Deserialize)]
struct RecordedLevel {
    name: String,
    level: u64,
    kind: CacheKind,
    size: u64,
    ways: u64,
    line: u64,
    sets: u64,
    shared_cpus: Option<String>,
    source: GeometrySource,
    #[serde(default)]
    warnings: Vec<String>,
}

/// The manifest's `info.caches`, each level rebuilt through [`CacheLevel::recorded`]; empty
/// when the manifest has none.
pub fn manifest_levels(info: &serde_json::Value) -> Result<Vec<CacheLevel>, Invalid> {
    levels_at(info, "caches")
}

fn levels_at(info: &serde_json::Value, key: &str) -> Result<Vec<CacheLevel>, Invalid> {
    let Some(list) = info.get(key) else {
        return Ok(Vec::new());
    };
    let at = format!("info.{key}");
    let Some(list) = list.as_array() else {
        return Err(invalid(at, "must be a list of cache levels"));
    };
    let mut levels = Vec::with_capacity(list.len().min(16));
    for (i, value) in list.iter().enumerate() {
        let at = format!("{at}[{i}]");
        let raw = RecordedLevel::deserialize(value).map_err(|e| invalid(&at, e.to_string()))?;
        let mut level = CacheLevel::recorded(
            &raw.name,
            raw.kind,
            raw.size,
            raw.ways,
            raw.line,
            Some(raw.sets),
            raw.source,
        )
        .map_err(|e| invalid(&at, e.to_string()))?;
        if raw.level != u64::from(level.level) {
            let e = crate::cache::geometry::GeometryError::LevelMismatch {
                name: raw.name,
                recorded: raw.level,
                implied: level.level,
            };
            return Err(invalid(format!("{at}.level"), e.to_string()));
        }
        level.shared_cpus = raw.shared_cpus;
        level.warnings = raw.warnings;
        levels.push(level);
    }
    Ok(levels)
}

fn check_info(info: &serde_json::Value) -> Checked {
    // `null` when a run was given no manifest (library callers, tests).
    if !(info.is_object() || info.is_null()) {
        return Err(invalid(
            "info",
            "must be an object (the machine manifest) or null",
        ));
    }
    levels_at(info, "simulated_caches")?;
    crate::results::tlb::manifest_dtlb(info).map_err(|e| invalid(e.field, e.message))?;
    if let Some(gate) = info.get(crate::results::compare::GATE_MANIFEST_KEY) {
        if !gate.is_object() {
            return Err(invalid("info.gate", "must be an object"));
        }
        if let Some(preset) = gate.get("preset") {
            match preset.as_str() {
                Some(name) if PRESET_NAMES.contains(&name) => {}
                _ => {
                    return Err(invalid(
                        "info.gate.preset",
                        format!(
                            "{preset} is not a known preset ({})",
                            PRESET_NAMES.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check_record(record: &PointRecord, at: &str, cap: u64, rules: &dyn ParamRules) -> Checked {
    rules
        .check(&record.kernel, record.family, &record.params)
        .map_err(|broken| match broken {
            RuleBreak::Kernel(m) => invalid(format!("{at}.kernel"), m),
            RuleBreak::Family(m) => invalid(format!("{at}.family"), m),
            RuleBreak::Params(m) => invalid(format!("{at}.params"), m),
        })?;
    if record.threads == 0 || record.threads > MAX_THREADS {
        return Err(invalid(
            format!("{at}.threads"),
            format!("{} is not in 1..={MAX_THREADS}", record.threads),
        ));
    }
    if let Some(timing) = &record.timing {
        check_timing(timing, &format!("{at}.timing"))?;
    }
    if let Some(reference) = &record.reference {
        let at = format!("{at}.reference");
        finite_positive(&format!("{at}.ratio"), reference.ratio)?;
        finite_positive(
            &format!("{at}.reference_gb_per_s"),
            reference.reference_gb_per_s,
        )?;
        for (name, v) in &reference.variants {
            finite_positive(&format!("{at}.variants.{name}"), *v)?;
        }
        let samples = &reference.samples_ns_per_run;
        if !samples.is_empty() {
            check_samples(samples, &format!("{at}.samples_ns_per_run"))?;
            let own = record.timing.as_ref().map(|t| t.samples_ns_per_run.len());
            if own != Some(samples.len()) {
                return Err(invalid(
                    format!("{at}.samples_ns_per_run"),
                    format!(
                        "{} paired samples for the point's {}",
                        samples.len(),
                        own.unwrap_or(0)
                    ),
                ));
            }
        }
    }
    if let Some(sim) = &record.simulated {
        check_simulated(sim, &format!("{at}.simulated"), cap)?;
    }
    if let Some(model) = &record.model {
        check_model(model, &format!("{at}.model"))
            .map_err(|(field, message)| Invalid { field, message })?;
    }
    if let Some(sweep) = &record.sweep {
        check_sweep(sweep, record, &format!("{at}.sweep"))?;
    }
    if let Some(prediction) = &record.time_model {
        check_prediction(prediction, &format!("{at}.time_model"))
            .map_err(|(field, message)| Invalid { field, message })?;
    }
    Ok(())
}

use super::model::{MAX_LEVEL_NAME, short_name};

/// Longest preset name a sweep tag may carry (`apple-m1-firestorm` is 18).
const MAX_PRESET_NAME: usize = 64;

/// A sweep tag names a short level and is honest about timing: a simulated-only point has
/// no timing section.
fn check_sweep(sweep: &crate::results::SweepInfo, record: &PointRecord, at: &str) -> Checked {
    if !short_name(&sweep.level) {
        return Err(invalid(
            format!("{at}.level"),
            format!("level name must be 1..={MAX_LEVEL_NAME} printable characters"),
        ));
    }
    if let Some(preset) = &sweep.preset
        && (preset.is_empty()
            || preset.len() > MAX_PRESET_NAME
            || preset.chars().any(char::is_control))
    {
        return Err(invalid(
            format!("{at}.preset"),
            format!("preset name must be 1..={MAX_PRESET_NAME} printable characters"),
        ));
    }
    if sweep.preset.is_some() && (sweep.timed || record.timing.is_some()) {
        return Err(invalid(
            format!("{at}.timed"),
            "a point simulated on a preset's geometry cannot be timed",
        ));
    }
    if !sweep.timed && record.timing.is_some() {
        return Err(invalid(
            format!("{at}.timed"),
            "a simulated-only point (timed = false) carries a timing section",
        ));
    }
    Ok(())
}

fn check_samples(samples: &[f64], at: &str) -> Checked {
    if samples.is_empty() {
        return Err(invalid(at, "no samples"));
    }
    if samples.len() > MAX_SAMPLES_PER_POINT {
        return Err(invalid(
            at,
            format!(
                "{} samples, more than the {MAX_SAMPLES_PER_POINT} a point may have",
                samples.len()
            ),
        ));
    }
    if let Some(i) = samples.iter().position(|x| !(x.is_finite() && *x > 0.0)) {
        return Err(invalid(
            format!("{at}[{i}]"),
            format!("{:?} is not a finite time > 0", samples[i]),
        ));
    }
    Ok(())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= RELATIVE_SLACK * a.abs().max(b.abs())
}

fn check_timing(t: &Timing, at: &str) -> Checked {
    let samples_at = format!("{at}.samples_ns_per_run");
    check_samples(&t.samples_ns_per_run, &samples_at)?;
    if t.runs_per_sample == 0 {
        return Err(invalid(
            format!("{at}.runs_per_sample"),
            "must be at least 1",
        ));
    }
    check_summary(
        &t.ns_per_run,
        &t.samples_ns_per_run,
        &format!("{at}.ns_per_run"),
    )?;
    finite_positive(&format!("{at}.ns_per_element"), t.ns_per_element)?;
    if let Some(gb) = t.gb_per_s {
        finite_positive(&format!("{at}.gb_per_s"), gb)?;
        if let Some((low, high)) = t.gb_per_s_ci {
            let ci_at = format!("{at}.gb_per_s_ci");
            finite_positive(&format!("{ci_at}[0]"), low)?;
            finite_positive(&format!("{ci_at}[1]"), high)?;
            if !(low <= gb * (1.0 + RELATIVE_SLACK) && gb <= high * (1.0 + RELATIVE_SLACK)) {
                return Err(invalid(
                    ci_at,
                    format!("[{low}, {high}] does not contain the median {gb}"),
                ));
            }
        }
    } else if t.gb_per_s_ci.is_some() {
        return Err(invalid(
            format!("{at}.gb_per_s_ci"),
            "an interval without `gb_per_s`",
        ));
    }
    if let Some(p) = &t.precision {
        check_precision(p, t, &format!("{at}.precision"))?;
    }
    Ok(())
}

/// Rule 4's precision part: numbers in range, and no warning its numbers do not back.
fn check_precision(p: &Precision, t: &Timing, at: &str) -> Checked {
    finite_positive(&format!("{at}.target_relative_ci"), p.target_relative_ci)?;
    let n = t.samples_ns_per_run.len();
    if let Some(o) = p.outliers
        && o.mild + o.severe > n
    {
        return Err(invalid(
            format!("{at}.outliers"),
            format!("{} outliers among {n} samples", o.mild + o.severe),
        ));
    }
    if let Some(d) = p.drift {
        if !(d.rank_correlation.is_finite() && d.rank_correlation.abs() <= 1.0) {
            return Err(invalid(
                format!("{at}.drift.rank_correlation"),
                format!("{:?} is not in [-1, 1]", d.rank_correlation),
            ));
        }
        finite_positive(
            &format!("{at}.drift.first_third_median"),
            d.first_third_median,
        )?;
        finite_positive(
            &format!("{at}.drift.last_third_median"),
            d.last_third_median,
        )?;
    }
    let warnings_at = format!("{at}.warnings");
    let mut seen = BTreeSet::new();
    for w in &p.warnings {
        if !seen.insert(*w) {
            return Err(invalid(&warnings_at, format!("{w:?} is listed twice")));
        }
        let backed = match w {
            PrecisionWarning::CiTargetMissed => {
                t.ns_per_run.relative_ci_width() > p.target_relative_ci * (1.0 - RELATIVE_SLACK)
            }
            PrecisionWarning::Outliers => p.outliers.is_some_and(|o| o.severe > 0),
            PrecisionWarning::Drift => p.drift.is_some(),
        };
        if !backed {
            return Err(invalid(
                &warnings_at,
                format!("{w:?} is not backed by the recorded numbers"),
            ));
        }
    }
    Ok(())
}

/// The summary must be the one of the samples (`stats::summarize`), up to float slack.
fn check_summary(s: &Summary, samples: &[f64], at: &str) -> Checked {
    if s.n != samples.len() {
        return Err(invalid(
            format!("{at}.n"),
            format!("{} but there are {} samples", s.n, samples.len()),
        ));
    }
    let sorted = crate::stats::sorted(samples);
    let n = sorted.len();
    let median = crate::stats::median_of_sorted(&sorted);
    for (name, value, expected) in [
        ("min", s.min, sorted[0]),
        ("max", s.max, sorted[n - 1]),
        ("median", s.median, median),
    ] {
        if !close(value, expected) {
            return Err(invalid(
                format!("{at}.{name}"),
                format!("{value}, but the samples' {name} is {expected}"),
            ));
        }
    }
    finite_at_least(&format!("{at}.mad"), s.mad, 0.0)?;
    finite_positive(&format!("{at}.ci_low"), s.ci_low)?;
    finite_positive(&format!("{at}.ci_high"), s.ci_high)?;
    let slack = RELATIVE_SLACK * s.median;
    if !(s.ci_low <= s.median + slack && s.median <= s.ci_high + slack) {
        return Err(invalid(
            format!("{at}.ci_low"),
            format!(
                "the interval [{}, {}] does not contain the median {}",
                s.ci_low, s.ci_high, s.median
            ),
        ));
    }
    Ok(())
}

fn level_kind(name: &str) -> CacheKind {
    if name.starts_with("L1") {
        CacheKind::Data
    } else {
        CacheKind::Unified
    }
}

/// A simulated level's geometry, rebuilt through [`CacheLevel::recorded`].
pub fn simulated_geometry(level: &SimulatedLevel) -> Result<CacheLevel, GeometryError> {
    CacheLevel::recorded(
        &level.name,
        level_kind(&level.name),
        level.size,
        level.ways,
        level.line,
        Some(level.sets),
        GeometrySource::Override,
    )
}

fn check_level(l: &SimulatedLevel, at: &str) -> Checked {
    simulated_geometry(l).map_err(|e| invalid(at, e.to_string()))?;
    let accesses = l
        .loads
        .checked_add(l.stores)
        .ok_or_else(|| invalid(format!("{at}.loads"), "loads + stores overflow"))?;
    let sum = |parts: &[u64]| parts.iter().try_fold(0u64, |a, &b| a.checked_add(b));
    let rules: [(&str, bool, &str); 5] = [
        (
            "misses",
            sum(&[l.load_misses, l.store_misses]) == Some(l.misses),
            "load_misses + store_misses must equal misses",
        ),
        (
            "misses",
            sum(&[l.compulsory, l.capacity, l.conflict]) == Some(l.misses),
            "compulsory + capacity + conflict must equal misses",
        ),
        (
            "misses",
            l.misses <= accesses,
            "more misses than loads + stores",
        ),
        (
            "load_misses",
            l.load_misses <= l.loads && l.store_misses <= l.stores,
            "more load (store) misses than loads (stores)",
        ),
        (
            "miss_rate",
            l.miss_rate.is_finite() && (0.0..=1.0).contains(&l.miss_rate),
            "must be a finite fraction in [0, 1]",
        ),
    ];
    for (field, holds, message) in rules {
        if !holds {
            return Err(invalid(format!("{at}.{field}"), message));
        }
    }
    Ok(())
}

/// What stopped a simulation early, for documents written before `scope.cut` existed, from the
/// counts alone: a prefix exactly as long as the access cap is the cap's; a shorter one can
/// only have been cut by the time budget. The free-text `note` is never read.
pub fn legacy_cut(sim: &SimulatedMisses, cap: u64) -> SimulationCut {
    let scope = &sim.scope;
    let shorter = scope
        .run_accesses
        .is_some_and(|run| scope.simulated_accesses < run);
    if scope.kind == "full" && !shorter {
        SimulationCut::None
    } else if scope.simulated_accesses == cap {
        SimulationCut::AccessCap
    } else {
        SimulationCut::TimeBudget
    }
}

/// Fills `scope.cut` of documents from older builds (see [`legacy_cut`]).
pub fn fill_legacy_cuts(doc: &mut ResultsDocument) {
    let cap = doc.method.simulation_access_cap;
    for record in &mut doc.records {
        if let Some(sim) = &mut record.simulated
            && sim.scope.cut.is_none()
        {
            sim.scope.cut = Some(legacy_cut(sim, cap));
        }
    }
}

fn check_simulated(sim: &SimulatedMisses, at: &str, cap: u64) -> Checked {
    let scope = &sim.scope;
    let scope_at = format!("{at}.scope");
    let simulated = scope.simulated_accesses;
    if simulated > cap {
        return Err(invalid(
            format!("{scope_at}.simulated_accesses"),
            format!("{simulated} is above the method's cap of {cap}"),
        ));
    }
    let partial = match scope.run_accesses {
        Some(run) if simulated > run => {
            return Err(invalid(
                format!("{scope_at}.simulated_accesses"),
                format!("{simulated} is more than the run's {run} accesses"),
            ));
        }
        Some(run) => simulated < run,
        None => scope.kind == "prefix",
    };
    let expected_kind = if partial { "prefix" } else { "full" };
    if scope.kind != expected_kind {
        return Err(invalid(
            format!("{scope_at}.kind"),
            format!("`{}`, but the counts make it `{expected_kind}`", scope.kind),
        ));
    }
    let consistent = match scope.cut {
        Some(SimulationCut::None) | None => !partial,
        Some(SimulationCut::AccessCap) => partial && simulated == cap,
        Some(SimulationCut::TimeBudget) => true,
    };
    if !consistent {
        return Err(invalid(
            format!("{scope_at}.cut"),
            format!(
                "{:?} does not fit {simulated} simulated accesses of {:?} (cap {cap})",
                scope.cut, scope.run_accesses
            ),
        ));
    }
    if !matches!(sim.start.as_str(), "cold" | "warm") {
        return Err(invalid(format!("{at}.start"), "must be `cold` or `warm`"));
    }
    if sim.levels.is_empty() {
        return Err(invalid(format!("{at}.levels"), "no levels"));
    }
    for (i, level) in sim.levels.iter().enumerate() {
        check_level(level, &format!("{at}.levels[{i}]"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
