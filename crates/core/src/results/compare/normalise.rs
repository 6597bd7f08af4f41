//! What the timing track divides a point's time by: the same-run references of a document,
//! the normaliser chosen per point (paired per round, interleaved median, the run's speed, or a
//! reference point) and how each enters the bootstrap.

use std::collections::BTreeMap;

use super::matching::Matched;
use crate::results::{ChecksumOutcome, PointRecord, ResultsDocument};
use crate::stats::{SplitMix64, median_of_sorted, resampled_median, sorted};

/// The same-run reference points of a document (`read`, `copy`), by kernel name.
pub(super) struct References<'a> {
    by_name: BTreeMap<&'static str, &'a PointRecord>,
}

impl<'a> References<'a> {
    pub(super) fn of(doc: &'a ResultsDocument) -> Self {
        let mut by_name = BTreeMap::new();
        for name in ["read", "copy"] {
            if let Some(r) = doc.records.iter().find(|r| {
                r.kernel == name && r.timing.is_some() && r.checksum.status == ChecksumOutcome::Ok
            }) {
                by_name.insert(name, r);
            }
        }
        Self { by_name }
    }

    /// Whether `record` is one of these reference points itself.
    pub(super) fn is_reference(&self, record: &PointRecord) -> bool {
        ["read", "copy"].iter().any(|n| {
            record.kernel == *n && self.by_name.get(n).is_some_and(|p| p.index == record.index)
        })
    }
}

/// How a point's time is normalised.
pub(super) enum Normaliser<'a> {
    /// The runner's interleaved reference with its per-round samples: each kernel sample is
    /// divided by the reference sample timed right after it, so swings of machine speed slower
    /// than a round cancel sample by sample.
    Paired { name: String, samples: &'a [f64] },
    /// The runner's interleaved reference: its median time for the point's bytes (documents
    /// without per-round reference samples).
    Interleaved { name: String, ns: f64 },
    /// A point without its own reference: the run's speed relative to the baseline's
    /// ([`RunSpeed`]; 1 for the baseline itself).
    RunSpeed { factor: f64 },
    /// A reference point of the same run, resampled like the kernel (when the run has no
    /// interleaved references at all).
    Point {
        name: &'static str,
        samples: &'a [f64],
    },
}

/// How fast the current run's machine was relative to the baseline's: the median, over every
/// point with an interleaved copy/read reference in both runs, of the reference's time now ÷
/// then. Points timed without their own reference (probes, chases, strides) are divided by it:
/// one reference point timed once would carry all of its own noise into them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RunSpeed {
    pub(super) factor: f64,
    pub(super) references: usize,
}

fn interleaved_ns(record: &PointRecord) -> Option<f64> {
    let timing = record.timing.as_ref()?;
    let reference = record.reference.as_ref()?;
    let ns = timing.ns_per_run.median * reference.ratio;
    (ns.is_finite() && ns > 0.0).then_some(ns)
}

pub(super) fn run_speed(matched: &[Matched<'_>]) -> Option<RunSpeed> {
    let mut factors: Vec<f64> = matched
        .iter()
        .filter_map(|(cur, base)| Some(interleaved_ns(cur)? / interleaved_ns((*base)?)?))
        .collect();
    if factors.is_empty() {
        return None;
    }
    factors.sort_by(f64::total_cmp);
    Some(RunSpeed {
        factor: median_of_sorted(&factors),
        references: factors.len(),
    })
}

/// How `record`'s time is normalised: `speed` is the run's speed factor (1 for the baseline),
/// `None` when the run has no interleaved references.
pub(super) fn normaliser<'a>(
    record: &'a PointRecord,
    refs: &References<'a>,
    speed: Option<f64>,
) -> Option<Normaliser<'a>> {
    let timing = record.timing.as_ref()?;
    if let Some(reference) = &record.reference
        && reference.samples_ns_per_run.len() == timing.samples_ns_per_run.len()
    {
        return Some(Normaliser::Paired {
            name: reference.reference.clone(),
            samples: &reference.samples_ns_per_run,
        });
    }
    if let Some(reference) = &record.reference
        && reference.ratio.is_finite()
        && reference.ratio > 0.0
    {
        // ratio = kernel GB/s ÷ reference GB/s, so the reference's time for the kernel's
        // bytes is the kernel's median time × ratio.
        return Some(Normaliser::Interleaved {
            name: reference.reference.clone(),
            ns: timing.ns_per_run.median * reference.ratio,
        });
    }
    if let Some(factor) = speed {
        return Some(Normaliser::RunSpeed { factor });
    }
    let writes = record.work.is_some_and(|w| w.bytes_written > 0);
    let name = if writes { "copy" } else { "read" };
    let point = refs.by_name.get(name)?;
    Some(Normaliser::Point {
        name,
        samples: &point.timing.as_ref()?.samples_ns_per_run,
    })
}

/// Samples one resample draws from a normaliser (its own resampled samples, if any).
pub(super) fn normaliser_len(n: &Normaliser<'_>) -> usize {
    match n {
        Normaliser::Point { samples, .. } => samples.len(),
        _ => 0,
    }
}

/// A point's samples as the timing track compares them: divided sample by sample by a paired
/// reference (whose quotient then needs no further normalising), else as timed.
pub(super) fn paired_quotients(kernel: &[f64], n: &Normaliser<'_>) -> Vec<f64> {
    match n {
        Normaliser::Paired { samples, .. } => kernel
            .iter()
            .zip(samples.iter())
            .map(|(k, r)| k / r)
            .collect(),
        _ => kernel.to_vec(),
    }
}

/// The reference's median time (1 for paired samples: their quotients are already divided).
pub(super) fn reference_median(n: &Normaliser<'_>) -> f64 {
    match n {
        Normaliser::Paired { .. } => 1.0,
        Normaliser::Interleaved { ns, .. } | Normaliser::RunSpeed { factor: ns } => *ns,
        Normaliser::Point { samples, .. } => median_of_sorted(&sorted(samples)),
    }
}

/// One bootstrap draw of the reference (constant unless it is a resampled point).
pub(super) fn resampled_reference(n: &Normaliser<'_>, rng: &mut SplitMix64) -> f64 {
    match n {
        Normaliser::Paired { .. } => 1.0,
        Normaliser::Interleaved { ns, .. } | Normaliser::RunSpeed { factor: ns } => *ns,
        Normaliser::Point { samples, .. } => resampled_median(samples, rng),
    }
}
