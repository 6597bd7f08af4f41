//! Read-only accessors over a results document: parameters, timed estimates with their
//! confidence intervals, simulated levels and the cache geometry the run recorded.
//!
//! Every figure and table reads records through these, so "a point has numbers" means the same
//! thing everywhere: its checksum verified, it has timing, and no error row.

use stridelab_core::results::{
    CacheKind, CacheLevel, ChecksumOutcome, LevelModel, PatternPrediction, PointRecord,
    ResultsDocument, SimulatedLevel, ViewFacts,
};
use stridelab_core::vocab::ParamValue;

/// A median with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Estimate {
    pub fn ci(&self) -> Option<(f64, f64)> {
        (self.low.is_finite() && self.high.is_finite()).then_some((self.low, self.high))
    }

    /// `1.23 (1.20–1.27)`, or `—` for a value that is not a finite number.
    pub fn display(&self) -> String {
        if !self.value.is_finite() {
            return "—".into();
        }
        let v = super::chart::format_number(self.value);
        match self.ci() {
            Some((lo, hi)) => format!(
                "{v} ({}–{})",
                super::chart::format_number(lo),
                super::chart::format_number(hi)
            ),
            None => v,
        }
    }
}

/// An integer parameter.
pub fn int(record: &PointRecord, name: &str) -> Option<u64> {
    match record.params.get(name)? {
        ParamValue::Int(i) => Some(*i),
        ParamValue::Text(t) => t.parse().ok(),
    }
}

/// A text parameter.
pub fn text<'a>(record: &'a PointRecord, name: &str) -> Option<&'a str> {
    match record.params.get(name)? {
        ParamValue::Text(t) => Some(t.as_str()),
        ParamValue::Int(_) => None,
    }
}

/// The record's element type (`dtype`; f64 for kernels without one) and its bytes.
pub fn element(record: &PointRecord) -> (&str, u32) {
    match text(record, "dtype") {
        Some("f32") => ("f32", 4),
        Some(other) => (other, 8),
        None => ("f64", 8),
    }
}

/// Whether a point has trustworthy timed numbers.
pub fn has_timing(record: &PointRecord) -> bool {
    record.error.is_none()
        && record.checksum.status == ChecksumOutcome::Ok
        && record
            .timing
            .as_ref()
            .is_some_and(|t| t.ns_per_element.is_finite() && t.ns_per_element > 0.0)
}

/// Timed nanoseconds per element (per access for probes), with the CI scaled from ns/run.
pub fn ns_per_element(record: &PointRecord) -> Option<Estimate> {
    if !has_timing(record) {
        return None;
    }
    let t = record.timing.as_ref()?;
    let s = t.ns_per_run;
    let scale = if s.median > 0.0 {
        t.ns_per_element / s.median
    } else {
        f64::NAN
    };
    Some(Estimate {
        value: t.ns_per_element,
        low: s.ci_low * scale,
        high: s.ci_high * scale,
    })
}

/// Timed aggregate GB/s with its CI.
pub fn gb_per_s(record: &PointRecord) -> Option<Estimate> {
    if !has_timing(record) {
        return None;
    }
    let t = record.timing.as_ref()?;
    let value = t.gb_per_s.filter(|v| v.is_finite() && *v > 0.0)?;
    let (low, high) = t.gb_per_s_ci.unwrap_or((f64::NAN, f64::NAN));
    Some(Estimate { value, low, high })
}

/// Same-run fraction of the reference copy/read bandwidth.
pub fn reference_ratio(record: &PointRecord) -> Option<f64> {
    if !has_timing(record) {
        return None;
    }
    record
        .reference
        .as_ref()
        .map(|r| r.ratio)
        .filter(|r| r.is_finite() && *r > 0.0)
}

/// The simulated level at position `index` (0 = L1).
pub fn sim_level(record: &PointRecord, index: usize) -> Option<&SimulatedLevel> {
    record.simulated.as_ref()?.levels.get(index)
}

/// Accesses the level saw (loads + stores).
pub fn accesses(level: &SimulatedLevel) -> u64 {
    level.loads + level.stores
}

/// Records of one kernel, in suite order.
pub fn of_kernel<'a>(
    doc: &'a ResultsDocument,
    kernel: &'a str,
) -> impl Iterator<Item = &'a PointRecord> {
    doc.records
        .iter()
        .filter(move |r| r.kernel == kernel && r.sweep.is_none())
}

/// The records of the geometry sweep of level `level` (they belong to the sweep figures, so
/// [`of_kernel`] leaves them out).
pub fn sweep_of<'a>(
    doc: &'a ResultsDocument,
    preset: Option<&'a str>,
    level: &'a str,
) -> impl Iterator<Item = &'a PointRecord> {
    doc.records.iter().filter(move |r| {
        r.sweep
            .as_ref()
            .is_some_and(|s| s.level == level && s.preset.as_deref() == preset)
    })
}

/// The preset a record was simulated on instead of the run's geometry, if any.
pub fn simulated_preset(record: &PointRecord) -> Option<&str> {
    record.sweep.as_ref()?.preset.as_deref()
}

/// The data levels `record` was simulated on, rebuilt from its simulated counts.
pub fn simulated_levels(record: &PointRecord) -> Vec<CacheLevel> {
    record
        .simulated
        .iter()
        .flat_map(|s| &s.levels)
        .filter_map(|l| stridelab_core::results::validate::simulated_geometry(l).ok())
        .collect()
}

/// The data cache levels of the run: the simulated hierarchy if any record has one (the
/// geometry the misses were counted on), else the manifest's detected data levels.
pub fn data_levels(doc: &ResultsDocument) -> Vec<CacheLevel> {
    // Records simulated on a preset's geometry describe another machine.
    let manifest = manifest_levels(doc);
    if let Some(record) = doc
        .records
        .iter()
        .find(|r| r.simulated.is_some() && simulated_preset(r).is_none())
    {
        // The recorded-geometry constructor: the same rules the document was validated by;
        // the manifest's warnings follow a level it describes, so an implausible level stays
        // marked wherever a figure uses it.
        let mut levels = simulated_levels(record);
        for level in &mut levels {
            if let Some(described) = manifest.iter().find(|m| same_geometry(m, level)) {
                level.warnings.clone_from(&described.warnings);
            }
        }
        return levels;
    }
    manifest
        .into_iter()
        .filter(|l| l.kind != CacheKind::Instruction)
        .collect()
}

/// Whether two levels have the same name and shape (the manifest's and the simulated one).
fn same_geometry(a: &CacheLevel, b: &CacheLevel) -> bool {
    (a.name.as_str(), a.size, a.ways, a.line) == (b.name.as_str(), b.size, b.ways, b.line)
}

/// Whether the run recorded a warning that this level's geometry is implausible (a VM's
/// invented size, say); such a level is marked wherever the report shows or uses it.
pub fn implausible(level: &CacheLevel) -> bool {
    level.warnings.iter().any(|w| w.starts_with("implausible"))
}

/// `L3 480 MiB (implausible)`: a level's name and size, marked when its geometry is doubtful.
pub fn level_label(level: &CacheLevel) -> String {
    format!(
        "{} {}{}",
        level.name,
        super::chart::format_bytes(level.size as f64),
        level_mark(level)
    )
}

/// ` (implausible)` or ` (warning)` for a level with recorded warnings, else nothing.
pub fn level_mark(level: &CacheLevel) -> &'static str {
    if implausible(level) {
        " (implausible)"
    } else if level.warnings.is_empty() {
        ""
    } else {
        " (warning)"
    }
}

/// Every cache level in the manifest (instruction caches included), rebuilt through the
/// recorded-geometry constructor; none when the manifest's list breaks its rules (a document
/// read from disk was already refused for that).
pub fn manifest_levels(doc: &ResultsDocument) -> Vec<CacheLevel> {
    stridelab_core::results::validate::manifest_levels(&doc.info).unwrap_or_default()
}

/// `L1d 32 KiB 8-way 64 sets 64 B; L2 …`: the geometry a simulation used, for provenance lines.
pub fn geometry_summary(levels: &[CacheLevel]) -> String {
    if levels.is_empty() {
        return "no geometry recorded".into();
    }
    levels
        .iter()
        .map(|l| {
            format!(
                "{} {}-way {} sets {} B",
                level_label(l),
                l.ways,
                l.sets,
                l.line
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The recorded warnings of the levels a figure uses, one note each (`L3: implausible: …`).
pub fn level_notes(levels: &[CacheLevel]) -> Vec<String> {
    levels
        .iter()
        .flat_map(|l| l.warnings.iter().map(move |w| format!("{}: {w}", l.name)))
        .map(|w| {
            format!(
                "Recorded geometry warning — {w}. Figures that use this level mark it and \
                 its simulated misses describe the recorded geometry, not necessarily the machine."
            )
        })
        .collect()
}

/// A short name for the machine a document was recorded on.
pub fn machine_label(doc: &ResultsDocument) -> String {
    let cpu = doc
        .info
        .get("cpu_model")
        .and_then(|v| v.as_str())
        .unwrap_or("unknown CPU");
    let cpus = doc
        .info
        .get("logical_cpus")
        .and_then(|v| v.as_u64())
        .map(|n| format!(", {n} CPUs"))
        .unwrap_or_default();
    format!("{cpu}{cpus}")
}

/// The set model's prediction recorded with `record` for its strided pattern.
pub fn pattern(record: &PointRecord) -> Option<&PatternPrediction> {
    record.model.as_ref()?.pattern.as_ref()
}

/// The set model recorded with `record` at level `index` (0 = innermost).
pub fn model_level(record: &PointRecord, index: usize) -> Option<&LevelModel> {
    pattern(record)?.levels.get(index)
}

/// The layout model's facts recorded with a view kernel's record.
pub fn view_facts(record: &PointRecord) -> Option<&ViewFacts> {
    record.model.as_ref()?.view.as_ref()
}

/// Where the simulated stream of `record` differs from the timed one, as recorded.
pub fn simulation_note(record: &PointRecord) -> Option<&str> {
    record.model.as_ref()?.simulation_note.as_deref()
}

/// Why a figure has no model overlay for `doc`: a schema-1 file predates recorded model
/// predictions; a newer one simply has none for these points.
pub fn no_model_reason(doc: &ResultsDocument) -> &'static str {
    if doc.records.iter().any(|r| r.model.is_some()) {
        "these points have no recorded model prediction"
    } else if doc.schema < stridelab_core::results::model::FIRST_SCHEMA_WITH_MODEL {
        "this results file predates recorded model predictions (schema 1)"
    } else {
        "this results file has no recorded model predictions"
    }
}

/// `model recorded with the points (buffer at 0x100000000)`: the provenance of recorded
/// predictions, naming where the simulator placed the pattern.
pub fn model_provenance(record: Option<&PointRecord>) -> String {
    match record.and_then(pattern) {
        Some(p) => format!("model recorded with the points (buffer at 0x{:x})", p.base),
        None => "model recorded with the points".into(),
    }
}

/// Median of finite values (None when there are none).
pub use stridelab_core::stats::median_of_finite as median;
