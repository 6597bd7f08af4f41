//! Small pieces several figure builders share: the distinct values of a sweep, the records a
//! figure draws (or why it is left out), and a bar series of timed estimates.

use std::collections::BTreeSet;

use super::{FigureDef, Outcome, omitted};
use crate::chart::{BarSeries, Colour};
use crate::data::Estimate;
use stridelab_core::results::{PointRecord, ResultsDocument};

/// The distinct values, smallest first (the swept strides, K, thread counts of a figure).
pub(super) fn distinct<T: Ord>(values: impl IntoIterator<Item = T>) -> Vec<T> {
    values
        .into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The records of `doc` that `keep` accepts, in document order (geometry sweeps aside: they
/// have figures of their own); when there are none, the
/// `figure` omitted for `reason`.
pub(super) fn records_or_omit<'d>(
    figure: &FigureDef,
    doc: &'d ResultsDocument,
    keep: impl Fn(&PointRecord) -> bool,
    reason: &str,
) -> Result<Vec<&'d PointRecord>, Outcome> {
    let recs: Vec<&PointRecord> = doc
        .records
        .iter()
        .filter(|r| r.sweep.is_none() && keep(r))
        .collect();
    if recs.is_empty() {
        Err(omitted(figure, reason))
    } else {
        Ok(recs)
    }
}

/// A bar series of estimates, one per category: the medians as bars, their CIs as whiskers.
pub(super) fn estimate_bars(
    name: String,
    colour: Colour,
    estimates: &[Option<Estimate>],
) -> BarSeries {
    BarSeries {
        name,
        colour,
        values: estimates.iter().map(|e| e.map(|e| e.value)).collect(),
        ci: estimates.iter().map(|e| e.and_then(|e| e.ci())).collect(),
    }
}
