//! What the geometry-sweep figures (12 and 13) share: one point per sweep record of a level,
//! with its stride in lines, the gcd and sets used the model recorded, the simulated warm
//! misses per load and the model's steady-state prediction.

use super::conflict::k_colour;
use crate::chart::{Series, SeriesKind, XY};
use crate::data::{self, Estimate};
use stridelab_core::results::{CacheLevel, PointRecord, ResultsDocument};

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
                stridelab_core::units::format_bytes(l.size as f64),
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
        warm: super::warm_misses_per_load(r, li),
        model: model.cyclic_misses_per_access,
        ns: data::ns_per_element(r),
    })
}

/// Per K: the simulated points (filled markers) and the model (hollow markers) at `x` of each
/// point (a log axis), each K shifted a little sideways so equal values do not hide each
/// other; no line joins points, since strides between them were not measured. With
/// `misses_only`, a point is drawn where it misses (simulated or predicted) and the strides
/// where no K misses at all become one grey rug along zero, so that a hundred zeros do not
/// merge into a bar under the rings.
pub(super) fn marker_series(
    points: &[SweepPoint],
    x: impl Fn(&SweepPoint) -> f64,
    with_model: bool,
    misses_only: bool,
) -> Vec<Series> {
    let ks = super::common::distinct(points.iter().map(|p| p.k));
    let mut series = Vec::new();
    let drawn = |v: Option<f64>| v.filter(|&v| !misses_only || v > 0.0);
    for (ki, &k) in ks.iter().enumerate() {
        let shift = ((ki as f64 - (ks.len() as f64 - 1.0) / 2.0) * 0.08).exp2();
        let x = |p: &SweepPoint| x(p) * shift;
        let of_k = || points.iter().filter(move |p| p.k == k);
        series.push(Series {
            name: format!("K={k} (simulated)"),
            colour: k_colour(&ks, k),
            kind: SeriesKind::Markers,
            points: of_k()
                .filter_map(|p| Some(XY::new(x(p), drawn(p.warm)?)))
                .collect(),
        });
        if with_model {
            series.push(Series {
                name: format!("K={k} (model)"),
                colour: k_colour(&ks, k),
                kind: SeriesKind::ModelMarkers,
                points: of_k()
                    .filter_map(|p| Some(XY::new(x(p), drawn(p.model)?)))
                    .collect(),
            });
        }
    }
    if misses_only {
        let quiet = quiet_positions(points, &x);
        series.push(Series {
            name: format!("no K misses ({} strides)", quiet.len()),
            colour: crate::chart::PALETTE[6],
            kind: SeriesKind::Rug,
            points: quiet.into_iter().map(|x| XY::new(x, 0.0)).collect(),
        });
    }
    series
}

/// The x positions (one per stride) where no K misses, simulated or modelled.
fn quiet_positions(points: &[SweepPoint], x: &impl Fn(&SweepPoint) -> f64) -> Vec<f64> {
    let mut xs: Vec<f64> = Vec::new();
    for p in points {
        let stride_quiet = points
            .iter()
            .filter(|q| q.stride_lines == p.stride_lines)
            .all(|q| q.warm.unwrap_or(0.0) == 0.0 && q.model.unwrap_or(0.0) == 0.0);
        let at = x(p);
        if stride_quiet && !xs.contains(&at) {
            xs.push(at);
        }
    }
    xs
}

/// Per K, the strides (in lines) whose warm walk misses in the simulation, with the smallest
/// gcd among them; and how many points equal the model (within 0.01 misses per load).
pub(super) struct SweepSummary {
    pub(super) strides: usize,
    /// (K, strides that miss, smallest gcd among them)
    pub(super) missing: Vec<(u64, usize, Option<u64>)>,
    pub(super) equal_model: usize,
    pub(super) with_model: usize,
}

impl SweepSummary {
    pub(super) fn of(points: &[SweepPoint]) -> Self {
        let ks = super::common::distinct(points.iter().map(|p| p.k));
        let missing = ks
            .iter()
            .map(|&k| {
                let miss: Vec<&SweepPoint> = points
                    .iter()
                    .filter(|p| p.k == k && p.warm.is_some_and(|w| w > 0.0))
                    .collect();
                (k, miss.len(), miss.iter().map(|p| p.gcd).min())
            })
            .collect();
        let compared: Vec<(f64, f64)> = points
            .iter()
            .filter_map(|p| Some((p.warm?, p.model?)))
            .collect();
        Self {
            strides: super::common::distinct(points.iter().map(|p| p.stride_lines)).len(),
            missing,
            equal_model: compared
                .iter()
                .filter(|(w, m)| (w - m).abs() <= 0.01)
                .count(),
            with_model: compared.len(),
        }
    }
}
