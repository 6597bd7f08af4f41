//! Pools several passes of the same suite into one results document: each point's samples
//! (and its paired reference samples) are concatenated across passes and its statistics are
//! recomputed from the pool.
//!
//! Why: on a shared machine the disturbances that move a timing (another tenant's memory
//! traffic, a neighbour's compile on the other vCPU) last from tens of milliseconds to seconds.
//! A point measured in one contiguous block of samples can fall wholly inside one and move by
//! 20–40%; the same number of samples taken in several passes spread over the run puts only a
//! fraction of them inside it, and the median of the pool stays put. The gate measures, and
//! records its baselines, this way.

use thiserror::Error;

use crate::harness::run::runner::timing_of;
use crate::results::{PointRecord, ResultsDocument, RunStatus};
use crate::stats::{BootstrapSettings, StatsError, median};

/// Why passes could not be pooled.
#[derive(Debug, Error, PartialEq)]
pub enum PoolError {
    #[error("no passes to pool")]
    Empty,
    #[error("pass {pass} does not match the first pass at point {index} (`{what}`)")]
    Mismatch {
        pass: usize,
        index: usize,
        what: String,
    },
    // The cause is part of the message (not a `source`) so error chains do not repeat it.
    #[error("point {index}: {error}")]
    Statistics {
        index: usize,
        error: PooledStatsError,
    },
}

/// Why one point's pooled samples give no statistics; the pool refuses rather than record a
/// point whose numbers no longer follow from its samples.
#[derive(Debug, Error, PartialEq)]
pub enum PooledStatsError {
    #[error(transparent)]
    Samples(#[from] StatsError),
    #[error("reference samples are not finite")]
    ReferenceNotFinite,
}

/// One document from `passes` runs of the same suite. A point that failed (or was interrupted)
/// in any pass is taken from the first pass in which it failed, so the failure is never hidden
/// by the other passes; otherwise its samples are pooled. An interrupted pass (fewer points)
/// contributes the points it has and marks the pool interrupted. `wall_s` is the sum.
pub fn pool_passes(
    passes: Vec<ResultsDocument>,
    bootstrap: BootstrapSettings,
) -> Result<ResultsDocument, PoolError> {
    let mut passes = passes.into_iter();
    let mut pooled = passes.next().ok_or(PoolError::Empty)?;
    let rest: Vec<ResultsDocument> = passes.collect();
    for (pass_number, pass) in rest.iter().enumerate() {
        let pass_number = pass_number + 2;
        // An interrupted pass may stop early; every other pass covers the whole suite.
        let complete = pass.status == RunStatus::Complete;
        if pass.records.len() > pooled.records.len()
            || (complete && pass.records.len() != pooled.records.len())
        {
            return Err(PoolError::Mismatch {
                pass: pass_number,
                index: pass.records.len().min(pooled.records.len()),
                what: "number of points".into(),
            });
        }
        if pass.status != RunStatus::Complete {
            pooled.status = pass.status;
        }
        pooled.wall_s += pass.wall_s;
    }
    for index in 0..pooled.records.len() {
        let others: Vec<&PointRecord> = rest.iter().filter_map(|p| p.records.get(index)).collect();
        for (offset, other) in others.iter().enumerate() {
            let first = &pooled.records[index];
            if other.kernel != first.kernel
                || other.params != first.params
                || other.threads != first.threads
            {
                return Err(PoolError::Mismatch {
                    pass: offset + 2,
                    index,
                    what: format!("{} vs {}", first.kernel, other.kernel),
                });
            }
        }
        let record = &mut pooled.records[index];
        if let Some(failed) = others.iter().find(|r| !usable(r))
            && usable(record)
        {
            *record = (*failed).clone();
            continue;
        }
        if !usable(record) {
            continue;
        }
        pool_point(record, &others, bootstrap)
            .map_err(|error| PoolError::Statistics { index, error })?;
    }
    Ok(pooled)
}

/// A point whose numbers can be pooled: measured, checksum fine, no error.
fn usable(record: &PointRecord) -> bool {
    record.error.is_none() && record.timing.is_some()
}

/// Concatenates `others`' samples into `record` and recomputes its timing and reference.
fn pool_point(
    record: &mut PointRecord,
    others: &[&PointRecord],
    bootstrap: BootstrapSettings,
) -> Result<(), PooledStatsError> {
    let Some(timing) = record.timing.as_ref() else {
        return Ok(());
    };
    let first_median = timing.ns_per_run.median;
    // A reference stays paired only when every pass recorded one sample per kernel sample.
    let paired = |r: &PointRecord| {
        matches!((&r.timing, &r.reference), (Some(t), Some(c))
            if c.samples_ns_per_run.len() == t.samples_ns_per_run.len())
    };
    let keep_pairs = paired(record) && others.iter().all(|r| paired(r));
    let mut samples = timing.samples_ns_per_run.clone();
    let mut reference_samples = record
        .reference
        .as_ref()
        .map(|c| c.samples_ns_per_run.clone())
        .unwrap_or_default();
    for other in others {
        if let Some(t) = &other.timing {
            samples.extend_from_slice(&t.samples_ns_per_run);
        }
        if keep_pairs && let Some(c) = &other.reference {
            reference_samples.extend_from_slice(&c.samples_ns_per_run);
        }
    }
    let work = record.work.unwrap_or_default();
    // The pool is judged against the target the passes sampled towards.
    let defaults = crate::harness::MethodOptions::default();
    let method = crate::harness::MethodOptions {
        bootstrap,
        target_relative_ci: timing
            .precision
            .as_ref()
            .map_or(defaults.target_relative_ci, |p| p.target_relative_ci),
        ..defaults
    };
    let pooled = timing_of(
        &samples,
        timing.gb_per_s.is_some(),
        work,
        record.threads,
        &method,
        timing.warmup_runs,
        timing.runs_per_sample,
    )?;
    let pooled_median = pooled.ns_per_run.median;
    record.timing = Some(pooled);
    if let Some(reference) = record.reference.as_mut() {
        if keep_pairs && !reference_samples.is_empty() {
            let (Ok(first_reference), Ok(pooled_reference)) = (
                median(&reference.samples_ns_per_run),
                median(&reference_samples),
            ) else {
                return Err(PooledStatsError::ReferenceNotFinite);
            };
            // ratio = (kernel bytes ÷ kernel ns) ÷ (reference bytes ÷ reference ns); the bytes
            // are the same in every pass, so only the two medians change.
            reference.ratio *=
                (first_median / pooled_median) * (pooled_reference / first_reference);
            reference.reference_gb_per_s *= first_reference / pooled_reference;
            let best = reference.reference_gb_per_s;
            // The other variants' figures were single-pass medians: keep only the one pooled.
            reference
                .variants
                .retain(|name, _| *name == reference.best_variant);
            if let Some(v) = reference.variants.get_mut(&reference.best_variant) {
                *v = best;
            }
            reference.samples_ns_per_run = reference_samples;
        } else {
            // Unpaired: the first pass's reference median stays the yardstick.
            reference.ratio *= first_median / pooled_median;
            reference.samples_ns_per_run.clear();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::CATALOGUE_RULES;
    use crate::results::PointError;
    use std::path::Path;

    fn fixture() -> ResultsDocument {
        let text = include_str!("../../../../../tests/fixtures/results_small.json");
        ResultsDocument::from_json(text, Path::new("results_small.json"), &CATALOGUE_RULES).unwrap()
    }

    /// The fixture with every sample (kernel and paired reference) multiplied by `scale`.
    fn pass(scale: f64, reference_scale: f64) -> ResultsDocument {
        let mut doc = fixture();
        for r in &mut doc.records {
            let Some(t) = r.timing.as_mut() else { continue };
            let n = t.samples_ns_per_run.len();
            t.samples_ns_per_run.iter_mut().for_each(|x| *x *= scale);
            if let Some(c) = r.reference.as_mut() {
                let reference_ns = t.ns_per_run.median * c.ratio;
                c.samples_ns_per_run = vec![reference_ns * reference_scale; n];
            }
        }
        doc
    }

    #[test]
    fn samples_are_concatenated_and_statistics_recomputed() {
        let pooled = pool_passes(vec![pass(1.0, 1.0), pass(3.0, 1.0)], Default::default()).unwrap();
        let first = fixture();
        for (p, f) in pooled.records.iter().zip(&first.records) {
            let (pt, ft) = (p.timing.as_ref().unwrap(), f.timing.as_ref().unwrap());
            assert_eq!(pt.samples_ns_per_run.len(), 2 * ft.samples_ns_per_run.len());
            // Half the pool is 3× the other half, so the median lies between the two halves.
            assert!(pt.ns_per_run.median >= ft.ns_per_run.min, "{}", p.kernel);
            assert!(
                pt.ns_per_run.median <= 3.0 * ft.ns_per_run.max,
                "{}",
                p.kernel
            );
            assert_eq!(pt.ns_per_run.max, 3.0 * ft.ns_per_run.max);
            assert_eq!(pt.ns_per_run.min, ft.ns_per_run.min);
        }
        assert!((pooled.wall_s - 2.0 * first.wall_s).abs() < 1e-9);
    }

    #[test]
    fn the_paired_ratio_follows_the_pooled_medians() {
        // Pass 2: the kernel and its reference both twice as slow, so the ratio is unchanged.
        let pooled = pool_passes(vec![pass(1.0, 1.0), pass(2.0, 2.0)], Default::default()).unwrap();
        let first = pass(1.0, 1.0);
        for (p, f) in pooled.records.iter().zip(&first.records) {
            let (Some(pc), Some(fc)) = (&p.reference, &f.reference) else {
                continue;
            };
            let pt = p.timing.as_ref().unwrap();
            assert_eq!(pc.samples_ns_per_run.len(), pt.samples_ns_per_run.len());
            let kernel = median(&pt.samples_ns_per_run).unwrap();
            let reference = median(&pc.samples_ns_per_run).unwrap();
            let f_kernel = f.timing.as_ref().unwrap().ns_per_run.median;
            let f_reference = median(&fc.samples_ns_per_run).unwrap();
            let expected = fc.ratio * (f_kernel / kernel) * (reference / f_reference);
            assert!(
                (pc.ratio - expected).abs() < 1e-9 * expected,
                "{}",
                p.kernel
            );
            assert_eq!(pc.variants.len(), 1);
        }
    }

    #[test]
    fn a_failure_in_any_pass_is_kept() {
        let mut second = pass(1.0, 1.0);
        second.records[3].error = Some(PointError {
            stage: "checksum".into(),
            message: "wrong result".into(),
        });
        let pooled = pool_passes(vec![pass(1.0, 1.0), second], Default::default()).unwrap();
        assert_eq!(pooled.records[3].error.as_ref().unwrap().stage, "checksum");
        assert!(pooled.records[2].error.is_none());
    }

    #[test]
    fn an_interrupted_pass_contributes_what_it_has() {
        let mut second = pass(1.0, 1.0);
        second.records.truncate(5);
        second.status = RunStatus::Interrupted;
        let pooled = pool_passes(vec![pass(1.0, 1.0), second], Default::default()).unwrap();
        assert_eq!(pooled.status, RunStatus::Interrupted);
        assert_eq!(pooled.records.len(), fixture().records.len());
        let n = |doc: &ResultsDocument, i: usize| {
            doc.records[i]
                .timing
                .as_ref()
                .unwrap()
                .samples_ns_per_run
                .len()
        };
        let first = fixture();
        assert_eq!(n(&pooled, 4), 2 * n(&first, 4));
        assert_eq!(n(&pooled, 5), n(&first, 5));
    }

    #[test]
    fn passes_of_different_suites_are_rejected() {
        let mut other = pass(1.0, 1.0);
        other.records[0].kernel = "col-sum".into();
        let e = pool_passes(vec![pass(1.0, 1.0), other], Default::default()).unwrap_err();
        assert!(matches!(e, PoolError::Mismatch { index: 0, .. }), "{e}");
        let mut shorter = pass(1.0, 1.0);
        shorter.records.pop();
        let e = pool_passes(vec![pass(1.0, 1.0), shorter], Default::default()).unwrap_err();
        assert!(matches!(e, PoolError::Mismatch { .. }), "{e}");
        assert_eq!(
            pool_passes(vec![], Default::default()),
            Err(PoolError::Empty)
        );
    }
}
