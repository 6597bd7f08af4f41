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

/// The levels a sweep in `doc` was derived from, innermost first, with their index in the
/// simulated hierarchy.
pub(super) fn swept_levels(doc: &ResultsDocument) -> Vec<(usize, CacheLevel)> {
    data::data_levels(doc)
        .into_iter()
        .enumerate()
        .filter(|(_, l)| data::sweep_of(doc, &l.name).next().is_some())
        .collect()
}

/// The sweep points of level `li` (`level`), in record order.
pub(super) fn points(doc: &ResultsDocument, li: usize, level: &CacheLevel) -> Vec<SweepPoint> {
    data::sweep_of(doc, &level.name)
        .filter_map(|r| point(r, li))
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
