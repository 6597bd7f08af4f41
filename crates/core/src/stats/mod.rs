//! Robust statistics of timing samples: median, min, max, MAD, percentiles and a seeded
//! bootstrap confidence interval of the median (criterion's method, deterministic given the
//! samples), outlier and drift detectors (`precision`), the paired sign and signed-rank tests
//! with Holm's correction (`sign_test`, `signed_rank`), plus the crate's one seeded generator
//! ([`SplitMix64`]).
//! Every median in this crate is computed by the functions here (the copy engine, a crate of
//! its own, takes the upper median of its trial times itself): [`median_of_sorted`] (the mean
//! of the two middle values) for samples, [`upper_median`] where the median must be one of the
//! measured values. Ground floor: it imports nothing from the rest of the crate.

#![forbid(unsafe_code)]

pub mod precision;
mod rng;
pub mod sign_test;
pub mod signed_rank;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use rng::SplitMix64;

/// Why samples could not be summarised.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum StatsError {
    #[error("no samples to summarise")]
    Empty,
    #[error("sample {index} is not a finite number")]
    NotFinite { index: usize },
}

/// Robust summary of a set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad: f64,
    /// Bootstrap percentile confidence interval of the median.
    pub ci_low: f64,
    pub ci_high: f64,
}

impl Summary {
    /// Width of the confidence interval relative to the median (0 when the median is 0).
    pub fn relative_ci_width(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.ci_high - self.ci_low) / self.median
        }
    }
}

/// How the confidence interval is computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootstrapSettings {
    pub resamples: usize,
    pub seed: u64,
    /// Confidence level, e.g. 0.95.
    pub confidence: f64,
}

impl Default for BootstrapSettings {
    fn default() -> Self {
        Self {
            resamples: 2000,
            seed: 0x5717_1DE1_AB00_0001,
            confidence: 0.95,
        }
    }
}

/// Median of a sorted, non-empty slice (mean of the two middle values for even lengths).
pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// A sorted copy of `values` (total order, so a NaN sorts to an end instead of panicking).
pub fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// The median of `samples` (any order).
pub fn median(samples: &[f64]) -> Result<f64, StatsError> {
    let sorted = sorted_finite(samples)?;
    Ok(median_of_sorted(&sorted))
}

/// The median of the finite values among `values`; `None` when there are none.
pub fn median_of_finite(values: &[f64]) -> Option<f64> {
    let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    (!finite.is_empty()).then(|| median_of_sorted(&sorted(&finite)))
}

/// The nearest-rank median: the upper of the two middle values for even lengths, NaN for none.
/// The cache inference reads plateaus with it, so a level is always a measured value.
pub fn upper_median(values: &[f64]) -> f64 {
    upper_median_of_sorted(&sorted(values)).unwrap_or(f64::NAN)
}

/// [`upper_median`] of values already sorted, of any type (integer times too); `None` for none.
pub fn upper_median_of_sorted<T: Copy>(sorted: &[T]) -> Option<T> {
    sorted.get(sorted.len() / 2).copied()
}

/// The `q` quantile (0..=1) of sorted values by nearest rank; NaN for none.
pub fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn sorted_finite(samples: &[f64]) -> Result<Vec<f64>, StatsError> {
    if samples.is_empty() {
        return Err(StatsError::Empty);
    }
    if let Some(index) = samples.iter().position(|x| !x.is_finite()) {
        return Err(StatsError::NotFinite { index });
    }
    Ok(sorted(samples))
}

/// The median of one bootstrap resample of `samples` (non-empty), drawn with `rng.below`, found
/// by selection (linear) rather than a sort: the same value as sorting would give.
pub fn resampled_median(samples: &[f64], rng: &mut SplitMix64) -> f64 {
    let mut resample: Vec<f64> = (0..samples.len())
        .map(|_| samples[rng.below(samples.len())])
        .collect();
    let n = resample.len();
    let (below, &mut upper, _) = resample.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        upper
    } else {
        let lower = below
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .unwrap_or(upper);
        (lower + upper) / 2.0
    }
}

/// Summarises samples: median, min, max, MAD and the bootstrap CI of the median.
pub fn summarize(samples: &[f64], bootstrap: BootstrapSettings) -> Result<Summary, StatsError> {
    let sorted = sorted_finite(samples)?;
    let n = sorted.len();
    let median = median_of_sorted(&sorted);
    let mut deviations: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let mad = median_of_sorted(&deviations);

    let (ci_low, ci_high) = if n == 1 || bootstrap.resamples == 0 {
        (median, median)
    } else {
        let mut rng = SplitMix64::new(bootstrap.seed);
        let mut medians = Vec::with_capacity(bootstrap.resamples);
        let mut resample = vec![0.0; n];
        for _ in 0..bootstrap.resamples {
            for slot in resample.iter_mut() {
                *slot = sorted[rng.below(n)];
            }
            resample.sort_by(f64::total_cmp);
            medians.push(median_of_sorted(&resample));
        }
        medians.sort_by(f64::total_cmp);
        let tail = (1.0 - bootstrap.confidence.clamp(0.0, 1.0)) / 2.0;
        (
            percentile_of_sorted(&medians, tail),
            percentile_of_sorted(&medians, 1.0 - tail),
        )
    };
    Ok(Summary {
        n,
        median,
        min: sorted[0],
        max: sorted[n - 1],
        mad,
        ci_low,
        ci_high,
    })
}

/// Linear-interpolated percentile (`q` in 0..=1) of a sorted, non-empty slice.
pub fn percentile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let fraction = position - below as f64;
    sorted[below] + (sorted[above] - sorted[below]) * fraction
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The upper median is one of the values: the middle one, or the upper of the two middle
    /// ones; the same as the nearest-rank 0.5 quantile, for floats and integers alike.
    #[test]
    fn the_upper_median_is_the_upper_middle_value() {
        let cases: [(&[u64], Option<u64>); 5] = [
            (&[], None),
            (&[7], Some(7)),
            (&[1, 9], Some(9)),
            (&[1, 2, 9], Some(2)),
            (&[1, 2, 8, 9], Some(8)),
        ];
        for (sorted, want) in cases {
            assert_eq!(upper_median_of_sorted(sorted), want, "{sorted:?}");
            let floats: Vec<f64> = sorted.iter().map(|&v| v as f64).collect();
            let rank = nearest_rank(&floats, 0.5);
            assert_eq!(want.map(|v| v as f64), (!rank.is_nan()).then_some(rank));
            assert_eq!(upper_median(&floats).to_bits(), rank.to_bits());
        }
    }

    #[test]
    fn median_min_max_mad_on_hand_computed_samples() {
        let cases: &[(&[f64], f64, f64)] = &[
            (&[3.0, 1.0, 2.0], 2.0, 1.0),
            (&[1.0, 2.0, 3.0, 4.0], 2.5, 1.0),
            (&[5.0], 5.0, 0.0),
            (&[1.0, 1.0, 1.0, 100.0], 1.0, 0.0),
            (&[10.0, 12.0, 11.0, 50.0, 9.0], 11.0, 1.0),
        ];
        for &(samples, median, mad) in cases {
            let s = summarize(samples, BootstrapSettings::default()).unwrap();
            assert_eq!(s.median, median, "{samples:?}");
            assert_eq!(s.mad, mad, "{samples:?}");
            assert_eq!(s.n, samples.len());
            assert_eq!(s.min, samples.iter().cloned().fold(f64::INFINITY, f64::min));
            assert_eq!(
                s.max,
                samples.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
            );
        }
    }

    #[test]
    fn ci_contains_the_median_is_deterministic_and_ignores_one_outlier() {
        let samples: Vec<f64> = (0..30)
            .map(|i| 100.0 + ((i * 7) % 11) as f64 * 0.1)
            .chain([1000.0])
            .collect();
        let a = summarize(&samples, BootstrapSettings::default()).unwrap();
        let b = summarize(&samples, BootstrapSettings::default()).unwrap();
        assert_eq!(a, b, "same seed, same interval");
        assert!(a.ci_low <= a.median && a.median <= a.ci_high);
        assert!(
            a.ci_high < 102.0,
            "an outlier must not drag the median's CI: {a:?}"
        );
        assert!(a.relative_ci_width() < 0.02);
    }

    #[test]
    fn ci_narrows_with_more_samples_and_is_zero_for_constant_samples() {
        let constant = summarize(&[4.0; 12], BootstrapSettings::default()).unwrap();
        assert_eq!((constant.ci_low, constant.ci_high), (4.0, 4.0));
        let mut rng = SplitMix64::new(1);
        let noisy = |n: usize, rng: &mut SplitMix64| -> Vec<f64> {
            (0..n)
                .map(|_| 100.0 + (rng.next_u64() % 1000) as f64 / 100.0)
                .collect()
        };
        let few = summarize(&noisy(10, &mut rng), BootstrapSettings::default()).unwrap();
        let many = summarize(&noisy(1000, &mut rng), BootstrapSettings::default()).unwrap();
        assert!(many.ci_high - many.ci_low < few.ci_high - few.ci_low);
        // The true median of 100 + U[0, 10) is 105.
        assert!(many.ci_low < 105.5 && many.ci_high > 104.5, "{many:?}");
    }

    #[test]
    fn empty_and_non_finite_samples_are_errors() {
        assert_eq!(
            summarize(&[], BootstrapSettings::default()),
            Err(StatsError::Empty)
        );
        assert_eq!(
            summarize(&[1.0, f64::NAN], BootstrapSettings::default()),
            Err(StatsError::NotFinite { index: 1 })
        );
    }
}
