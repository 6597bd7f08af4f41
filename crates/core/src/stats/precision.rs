//! Whether a point's timing samples can be trusted as one distribution: outliers by Tukey's
//! fences, and drift (a trend with the order the samples were taken) by Spearman's rank
//! correlation with the sample index, sized by the medians of the first and last thirds.
//! A median and its bootstrap CI assume samples drawn alike; these say when they were not.

#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

use super::{median_of_sorted, percentile_of_sorted, sorted};

/// Fewest samples whose quartiles mean anything (below it, outliers are not assessed).
pub const MIN_SAMPLES_FOR_OUTLIERS: usize = 4;

/// Fewest samples for a drift test: two in each third.
pub const MIN_SAMPLES_FOR_DRIFT: usize = 6;

/// The floor of the interquartile range, relative to the median, that the fences are built on:
/// a timing whose samples agree to 0.1% would otherwise call a 1% excursion "far out", and no
/// timing on a shared machine is steadier than a percent.
pub const IQR_FLOOR: f64 = 0.01;

/// Samples outside Tukey's fences, Q1 − k·IQR and Q3 + k·IQR (criterion's classification).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outliers {
    /// Beyond the inner fences (k = 1.5) but within the outer ones.
    pub mild: usize,
    /// Beyond the outer fences (k = 3): "far out", something else ran during those samples.
    pub severe: usize,
}

/// Counts the samples beyond Tukey's fences, with the IQR floored at [`IQR_FLOOR`] of the
/// median; `None` below [`MIN_SAMPLES_FOR_OUTLIERS`] samples or with a non-finite one.
pub fn tukey_outliers(samples: &[f64]) -> Option<Outliers> {
    if samples.len() < MIN_SAMPLES_FOR_OUTLIERS || samples.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let sorted = sorted(samples);
    let (q1, q3) = (
        percentile_of_sorted(&sorted, 0.25),
        percentile_of_sorted(&sorted, 0.75),
    );
    let iqr = (q3 - q1).max(IQR_FLOOR * median_of_sorted(&sorted).abs());
    let beyond = |x: f64, k: f64| x < q1 - k * iqr || x > q3 + k * iqr;
    let severe = samples.iter().filter(|&&x| beyond(x, 3.0)).count();
    let mild = samples.iter().filter(|&&x| beyond(x, 1.5)).count() - severe;
    Some(Outliers { mild, severe })
}

/// The two-sided normal quantile a drift's rank correlation must reach (p < 0.01): with ~20
/// samples a point whose samples only wander shows |ρ|·√(n−1) above it about once in a hundred.
pub const DRIFT_Z: f64 = 2.576;

/// How the samples move with the order they were taken in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drift {
    /// Spearman's ρ between sample index and value, in [-1, 1]: +1 every sample slower than the
    /// one before, −1 every one faster.
    pub rank_correlation: f64,
    /// Median of the first third of the samples (in the order taken).
    pub first_third_median: f64,
    /// Median of the last third.
    pub last_third_median: f64,
}

impl Drift {
    /// Whether the trend is beyond chance for `n` samples (|ρ|·√(n−1) ≥ `DRIFT_Z`, the large-n
    /// normal approximation of ρ's null distribution).
    pub fn significant(&self, n: usize) -> bool {
        self.rank_correlation.abs() * ((n.max(1) - 1) as f64).sqrt() >= DRIFT_Z
    }

    /// How far the last third's median moved from the first third's, in the samples' unit.
    pub fn shift(&self) -> f64 {
        self.last_third_median - self.first_third_median
    }
}

/// The trend of `samples` in the order given; `None` below [`MIN_SAMPLES_FOR_DRIFT`] samples
/// or with a non-finite one.
pub fn drift(samples: &[f64]) -> Option<Drift> {
    let n = samples.len();
    if n < MIN_SAMPLES_FOR_DRIFT || samples.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let third = n / 3;
    let median_of = |part: &[f64]| median_of_sorted(&sorted(part));
    Some(Drift {
        rank_correlation: spearman_with_order(samples),
        first_third_median: median_of(&samples[..third]),
        last_third_median: median_of(&samples[n - third..]),
    })
}

/// Spearman's ρ of `values` against their positions 0..n (ties take their mean rank); 0 when
/// every value is equal.
fn spearman_with_order(values: &[f64]) -> f64 {
    let n = values.len();
    let ranks = mean_ranks(values);
    let mean = (n as f64 - 1.0) / 2.0;
    let (mut covariance, mut spread_order, mut spread_ranks) = (0.0, 0.0, 0.0);
    for (position, rank) in ranks.iter().enumerate() {
        let (a, b) = (position as f64 - mean, rank - mean);
        covariance += a * b;
        spread_order += a * a;
        spread_ranks += b * b;
    }
    if spread_ranks == 0.0 {
        0.0
    } else {
        (covariance / (spread_order * spread_ranks).sqrt()).clamp(-1.0, 1.0)
    }
}

/// The rank (0-based) of each value, tied values sharing the mean of their ranks.
fn mean_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        while end + 1 < order.len() && values[order[end + 1]] == values[order[start]] {
            end += 1;
        }
        let shared = (start + end) as f64 / 2.0;
        for &index in &order[start..=end] {
            ranks[index] = shared;
        }
        start = end + 1;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Twenty samples around 100 that wander by ±1% in no order.
    const STEADY: [f64; 20] = [
        100.2, 99.6, 100.9, 99.9, 100.4, 99.1, 100.0, 100.7, 99.5, 100.3, 99.8, 100.6, 99.3, 100.1,
        100.8, 99.7, 100.5, 99.4, 100.0, 99.9,
    ];

    #[test]
    fn tukey_fences_count_mild_and_severe_outliers() {
        let with = |extra: &[f64]| [&STEADY[..], extra].concat();
        // Q1 ≈ 99.65, Q3 ≈ 100.45, IQR 0.8 floored to 1.0 (1% of 100): inner fences 98.15 and
        // 101.95, outer 96.65 and 103.45.
        let cases: &[(&str, Vec<f64>, Option<Outliers>)] = &[
            ("steady samples", STEADY.to_vec(), Some(Outliers::default())),
            (
                "one preempted sample",
                with(&[160.0]),
                Some(Outliers { mild: 0, severe: 1 }),
            ),
            (
                "a mild one high and one far out low",
                with(&[102.5, 90.0]),
                Some(Outliers { mild: 1, severe: 1 }),
            ),
            (
                "a 1% excursion of a 0.1%-tight timing is not an outlier",
                vec![100.0, 100.1, 99.9, 100.05, 99.95, 100.0, 101.0],
                Some(Outliers::default()),
            ),
            ("too few to have quartiles", vec![1.0, 2.0, 100.0], None),
            ("not finite", vec![1.0, 2.0, 3.0, f64::NAN], None),
        ];
        for (what, samples, expected) in cases {
            assert_eq!(tukey_outliers(samples), *expected, "{what}");
        }
    }

    #[test]
    fn drift_is_a_significant_rank_trend_with_its_size() {
        let rising: Vec<f64> = (0..20).map(|i| 100.0 + 2.0 * i as f64).collect();
        let falling: Vec<f64> = rising.iter().rev().copied().collect();
        // A step half way: the machine got busier and stayed so.
        let step: Vec<f64> = STEADY
            .iter()
            .enumerate()
            .map(|(i, x)| if i < 10 { *x } else { x * 1.3 })
            .collect();
        let cases: &[(&str, &[f64], bool)] = &[
            ("steady samples", &STEADY, false),
            ("every sample slower than the last", &rising, true),
            ("every sample faster than the last", &falling, true),
            ("a step up half way", &step, true),
            ("all equal", &[5.0; 12], false),
        ];
        for (what, samples, trending) in cases {
            let d = drift(samples).unwrap();
            assert_eq!(d.significant(samples.len()), *trending, "{what}: {d:?}");
        }
        let d = drift(&rising).unwrap();
        assert_eq!(d.rank_correlation, 1.0);
        // Thirds of 6: 100..110 and 128..138.
        assert_eq!((d.first_third_median, d.last_third_median), (105.0, 133.0));
        assert_eq!(d.shift(), 28.0);
        assert_eq!(drift(&falling).unwrap().rank_correlation, -1.0);
        assert!(drift(&[1.0, 2.0, 3.0, 4.0, 5.0]).is_none());
    }

    #[test]
    fn ties_share_their_mean_rank() {
        assert_eq!(mean_ranks(&[3.0, 1.0, 3.0, 2.0]), vec![2.5, 0.0, 2.5, 1.0]);
        assert_eq!(spearman_with_order(&[1.0, 1.0, 1.0]), 0.0);
    }
}
