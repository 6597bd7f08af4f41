//! What the geometry-sweep figures (12 and 13) share: one point per sweep record of a level,
//! with its stride in lines, the gcd and sets used the model recorded, the simulated warm
//! misses per load and the model's steady-state prediction.

use super::conflict::k_colour;
use crate::report::chart::{Series, SeriesKind, XY};
use crate::report::data::{self, Estimate};
use crate::results::{CacheLevel, PointRecord, ResultsDocument};

/// One sweep record at one level.
pub(super) struct SweepPoint {
    pub(super) stride_lines: u64,
    pub(super) k: u64,
    pub(super) gcd: u64,
    /// `sets / gcd`: the sets the walk cycles through (the model's closed form).
    pub(super) sets_used: u64,
    /// Misses per load after the first pass (the first pass's misses are compulsory): the
    /// simulator's steady state, which the model predicts.
    pub(super) warm: Option<f64>,
    /// The model's misses per load of a warm cyclic pass.
    pub(super) model: Option<f64>,
    pub(super) ns: Option<Estimate>,
}

/// A level some sweep of `doc` was derived from: the run's own or a preset's.
pub(super) struct SweptLevel {
    /// The preset the sweep was simulated on (`None`: the run's geometry).
    pub(super) preset: Option<String>,
    /// The level's index in the hierarchy its records were simulated on.
    pub(super) index: usize,
    pub(super) level: CacheLevel,
}

impl SweptLevel {
    /// "L1d" for the run's level, "L1d of apple-m1-firestorm (preset)" for a preset's.
    pub(super) fn name(&self) -> String {
        match &self.preset {
            Some(p) => format!("{} of {p} (preset)", self.level.name),
            None => self.level.name.clone(),
        }
    }
}

/// The levels the sweeps in `doc` were derived from: the run's, innermost first, then each
/// preset's in the order the records name them.
pub(super) fn swept_levels(doc: &ResultsDocument) -> Vec<SweptLevel> {
    let mut presets: Vec<(Option<String>, Vec<CacheLevel>)> = vec![(None, data::data_levels(doc))];
    for r in &doc.records {
        if let Some(p) = data::simulated_preset(r)
            && !presets.iter().any(|(q, _)| q.as_deref() == Some(p))
        {
            presets.push((Some(p.to_string()), data::simulated_levels(r)));
        }
    }
    let mut out = Vec::new();
    for (preset, levels) in presets {
        for (index, level) in levels.into_iter().enumerate() {
            if data::sweep_of(doc, preset.as_deref(), &level.name)
                .next()
                .is_some()
            {
                out.push(SweptLevel {
                    preset: preset.clone(),
                    index,
                    level,
                });
            }
        }
    }
    out
}

/// The provenance of the preset panels (empty when every sweep ran on the run's geometry).
pub(super) fn preset_note(levels: &[SweptLevel]) -> String {
    let described: Vec<String> = levels
        .iter()
        .filter_map(|s| {
            let l = &s.level;
            Some(format!(
                "{}: {} {}-way, {} sets of {} B",
                s.name(),
                crate::units::format_bytes(l.size as f64),
                l.ways,
                l.sets,
                l.line
            ))
            .filter(|_| s.preset.is_some())
        })
        .collect();
    if described.is_empty() {
        return String::new();
    }
    format!(
        "; simulated on a preset's geometry, not timed: {}",
        described.join("; ")
    )
}

/// The sweep points of `swept`, in record order.
pub(super) fn points(doc: &ResultsDocument, swept: &SweptLevel) -> Vec<SweepPoint> {
    data::sweep_of(doc, swept.preset.as_deref(), &swept.level.name)
        .filter_map(|r| point(r, swept.index))
        .collect()
}

fn point(r: &PointRecord, li: usize) -> Option<SweepPoint> {
    let model = data::model_level(r, li)?;
    let stride_lines = u64::try_from(model.stride_lines?).ok()?;
    Some(SweepPoint {
        stride_lines,
        k: data::int(r, "count")?,
        gcd: model.gcd?,
        sets_used: model.closed_form_sets?,
        warm: warm_misses_per_load(r, li),
        model: model.cyclic_misses_per_access,
        ns: data::ns_per_element(r),
    })
}

/// (misses − compulsory misses) at level `li` over the loads after the first pass (the
/// kernel's loads minus its compulsory misses at the first level).
fn warm_misses_per_load(r: &PointRecord, li: usize) -> Option<f64> {
    let first = data::sim_level(r, 0)?;
    let level = data::sim_level(r, li)?;
    let warm_loads = data::accesses(first).checked_sub(first.compulsory)?;
    let warm_misses = level.misses.checked_sub(level.compulsory)?;
    (warm_loads > 0).then(|| warm_misses as f64 / warm_loads as f64)
}

/// Per K: the simulated points (filled markers) and the model (hollow markers) at `x` of each
/// point (a log axis), each K shifted a little sideways so equal values do not hide each
/// other; no line joins points, since strides between them were not measured.
pub(super) fn marker_series(
    points: &[SweepPoint],
    x: impl Fn(&SweepPoint) -> f64,
    with_model: bool,
) -> Vec<Series> {
    let ks = super::common::distinct(points.iter().map(|p| p.k));
    let mut series = Vec::new();
    for (ki, &k) in ks.iter().enumerate() {
        let shift = ((ki as f64 - (ks.len() as f64 - 1.0) / 2.0) * 0.08).exp2();
        let x = |p: &SweepPoint| x(p) * shift;
        let of_k = || points.iter().filter(move |p| p.k == k);
        series.push(Series {
            name: format!("K={k} (simulated)"),
            colour: k_colour(&ks, k),
            kind: SeriesKind::Markers,
            points: of_k()
                .filter_map(|p| Some(XY::new(x(p), p.warm?)))
                .collect(),
        });
        if with_model {
            series.push(Series {
                name: format!("K={k} (model)"),
                colour: k_colour(&ks, k),
                kind: SeriesKind::ModelMarkers,
                points: of_k()
                    .filter_map(|p| Some(XY::new(x(p), p.model?)))
                    .collect(),
            });
        }
    }
    series
}
