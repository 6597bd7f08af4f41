//! Paired comparisons without a distribution assumed: Wilcoxon's signed-rank test, the
//! Hodges–Lehmann estimate and interval of a shift, and Holm's step-down correction for testing
//! many points at once. The regression gate judges each point's paired log-ratios with them.
//!
//! Everything rests on the Walsh averages (xᵢ + xⱼ)/2, i ≤ j, of the n paired differences:
//! 1. the signed-rank statistic W⁺ of a shift δ is the number of Walsh averages above δ;
//! 2. the Hodges–Lehmann estimate of the shift is their median;
//! 3. the interval at one-sided level a is [W₍ₖ₎, W₍ₙ₋ₖ₊₁₎] of the sorted averages, with k the
//!    largest count whose lower tail P(W⁺ ≤ k − 1) is at most a, so its lower end lies above δ
//!    exactly when the one-sided p-value of δ is at most a (tested below).
//!
//! The null distribution of W⁺ is exact (the recursion over ranks), so a p-value is right for
//! a handful of rounds as for hundreds; it assumes continuous differences (timing ratios are).

#![forbid(unsafe_code)]

/// The Walsh averages (xᵢ + xⱼ)/2 for i ≤ j, sorted.
pub fn walsh_averages(x: &[f64]) -> Vec<f64> {
    let mut averages = Vec::with_capacity(x.len() * (x.len() + 1) / 2);
    for (i, a) in x.iter().enumerate() {
        for b in &x[i..] {
            averages.push((a + b) / 2.0);
        }
    }
    averages.sort_by(f64::total_cmp);
    averages
}

/// The Hodges–Lehmann estimate of the shift: the median of the sorted Walsh averages (NaN for
/// none).
pub fn hodges_lehmann(walsh: &[f64]) -> f64 {
    if walsh.is_empty() {
        return f64::NAN;
    }
    super::median_of_sorted(walsh)
}

/// The exact null distribution of the signed-rank statistic W⁺ for `n` pairs.
#[derive(Debug, Clone)]
pub struct SignedRank {
    /// `cdf[w]` = P(W⁺ ≤ w), for w in 0..=n(n+1)/2.
    cdf: Vec<f64>,
}

impl SignedRank {
    /// The distribution for `n` pairs: each rank r enters W⁺ with probability ½, so
    /// P_r(w) = (P_{r−1}(w) + P_{r−1}(w − r)) / 2. O(n³) work, a millisecond at n = 100.
    pub fn new(n: usize) -> Self {
        let total = n * (n + 1) / 2;
        let mut p = vec![0.0; total + 1];
        p[0] = 1.0;
        for rank in 1..=n {
            let reach = rank * (rank + 1) / 2;
            for w in (0..=reach).rev() {
                let with = if w >= rank { p[w - rank] } else { 0.0 };
                p[w] = (p[w] + with) / 2.0;
            }
        }
        let mut cdf = Vec::with_capacity(total + 1);
        let mut sum = 0.0f64;
        for q in p {
            sum += q;
            cdf.push(sum.min(1.0));
        }
        Self { cdf }
    }

    /// The smallest one-sided p-value `n` pairs can give (all differences on one side): 2⁻ⁿ.
    #[cfg(test)]
    pub fn smallest_p(&self) -> f64 {
        self.cdf[0]
    }

    /// The one-sided p-value that the shift exceeds `delta`: P(W⁺ ≥ w) for the observed
    /// count w of Walsh averages above `delta` (one equal to it counts half, rounded down).
    pub fn p_above(&self, walsh: &[f64], delta: f64) -> f64 {
        count_p_above(&self.cdf, walsh, delta)
    }

    /// The interval of the shift whose each tail has probability at most `a` (confidence at
    /// least 1 − 2a): infinite ends when `n` pairs cannot reach that level.
    pub fn interval(&self, walsh: &[f64], a: f64) -> (f64, f64) {
        count_interval(&self.cdf, walsh, a)
    }
}

/// The p-value of a statistic that counts the `sorted` values above `delta` (one equal to it
/// counts half, rounded down) and whose null distribution `cdf` (P(X ≤ k), k in 0..=len) is
/// symmetric: P(X ≥ k) = P(X ≤ len − k). Shared by the signed-rank and sign tests.
pub(super) fn count_p_above(cdf: &[f64], sorted: &[f64], delta: f64) -> f64 {
    debug_assert_eq!(sorted.len(), cdf.len() - 1);
    let above = sorted.iter().filter(|&&w| w > delta).count();
    let equal = sorted.iter().filter(|&&w| w == delta).count();
    let observed = above + equal / 2;
    if observed == 0 {
        return 1.0;
    }
    cdf[sorted.len() - observed]
}

/// That test inverted: [x₍ₖ₎, x₍ₗₑₙ₋ₖ₊₁₎] of the `sorted` values with k the largest count whose
/// lower tail P(X ≤ k − 1) is at most `a`; infinite ends when no count reaches `a`.
pub(super) fn count_interval(cdf: &[f64], sorted: &[f64], a: f64) -> (f64, f64) {
    debug_assert_eq!(sorted.len(), cdf.len() - 1);
    let k = cdf.iter().take_while(|&&c| c <= a).count();
    if k == 0 || sorted.is_empty() {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    (sorted[k - 1], sorted[sorted.len() - k])
}

/// One test's place in Holm's step-down procedure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HolmStep {
    /// The level its p-value is held to: α / (m − rank) for the rank-th smallest p (from 0).
    pub level: f64,
    /// Rejected: its p-value and every smaller one met their levels.
    pub rejected: bool,
}

/// Holm's correction of `p` (one per test) at family-wise level `alpha`: the smallest p-value
/// is held to α/m, the next to α/(m − 1), …, and the first one that misses its level stops the
/// rejections. Each test's level is returned even after the stop, so its interval can be shown
/// at the level it was held to.
pub fn holm(p: &[f64], alpha: f64) -> Vec<HolmStep> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut steps = vec![
        HolmStep {
            level: alpha,
            rejected: false,
        };
        m
    ];
    let mut still_rejecting = true;
    for (rank, &index) in order.iter().enumerate() {
        let level = alpha / (m - rank) as f64;
        still_rejecting &= p[index] <= level;
        steps[index] = HolmStep {
            level,
            rejected: still_rejecting,
        };
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// P(W⁺ ≤ w) by enumerating every sign pattern of ranks 1..=n.
    fn brute_cdf(n: usize, w: usize) -> f64 {
        let hits = (0u32..1 << n)
            .filter(|signs| {
                let sum: usize = (0..n).filter(|r| signs >> r & 1 == 1).map(|r| r + 1).sum();
                sum <= w
            })
            .count();
        hits as f64 / f64::from(1u32 << n)
    }

    #[test]
    fn the_exact_distribution_matches_enumeration_and_known_tables() {
        for n in 1..=10 {
            let d = SignedRank::new(n);
            for w in 0..=n * (n + 1) / 2 {
                assert!((d.cdf[w] - brute_cdf(n, w)).abs() < 1e-12, "n={n} w={w}");
            }
            assert!((d.smallest_p() - 0.5f64.powi(n as i32)).abs() < 1e-15);
        }
        // Published critical value: n = 10, one-sided 0.05 → reject for W⁺ ≤ 10 (p = 0.042).
        let d = SignedRank::new(10);
        assert!((d.cdf[10] - 0.0420).abs() < 5e-4, "{}", d.cdf[10]);
        assert!(d.cdf[11] > 0.05);
    }

    #[test]
    fn hodges_lehmann_is_the_median_of_walsh_averages() {
        let cases: &[(&[f64], f64)] = &[
            (&[1.0], 1.0),
            (&[1.0, 3.0], 2.0),
            (&[0.0, 0.0, 0.0, 9.0], 0.0),
            // One outlier moves the mean to 26.5 but the estimate only to 2.75.
            (&[1.0, 2.0, 3.0, 100.0], 2.75),
        ];
        for (x, expected) in cases {
            let w = walsh_averages(x);
            assert_eq!(w.len(), x.len() * (x.len() + 1) / 2);
            assert_eq!(hodges_lehmann(&w), *expected, "{x:?}");
        }
        assert!(hodges_lehmann(&[]).is_nan());
    }

    #[test]
    fn p_values_and_intervals_of_clear_cases() {
        let x: Vec<f64> = (1..=8).map(|i| 0.10 + 0.001 * f64::from(i)).collect();
        let w = walsh_averages(&x);
        let d = SignedRank::new(8);
        // Every difference above 5%: the smallest p 8 pairs can give.
        assert_eq!(d.p_above(&w, 0.05), 0.5f64.powi(8));
        // None above 20%: p = 1.
        assert_eq!(d.p_above(&w, 0.20), 1.0);
        let (low, high) = d.interval(&w, 0.025);
        assert!(low > 0.1 && high < 0.109, "{low} {high}");
        // Eight pairs cannot reach a one-sided level below 2⁻⁸.
        assert_eq!(d.interval(&w, 0.001), (f64::NEG_INFINITY, f64::INFINITY));
    }

    #[test]
    fn holm_holds_the_smallest_p_to_alpha_over_m_and_stops_at_the_first_miss() {
        // (p-values, expected (level, rejected) per test), α = 0.05.
        let steps = holm(&[0.03, 0.001, 0.02, 0.5], 0.05);
        let expected = [
            (0.05 / 2.0, false), // third smallest: 0.03 > 0.025
            (0.05 / 4.0, true),
            (0.05 / 3.0, false), // second smallest: 0.02 > 0.0167, stops here
            (0.05 / 1.0, false),
        ];
        for (step, (level, rejected)) in steps.iter().zip(expected) {
            assert!((step.level - level).abs() < 1e-15, "{steps:?}");
            assert_eq!(step.rejected, rejected, "{steps:?}");
        }
        assert!(holm(&[], 0.05).is_empty());
    }

    proptest! {
        /// The interval and the test agree: its lower end lies above δ exactly when the
        /// one-sided p-value of δ is at most the level.
        #[test]
        fn the_interval_is_the_test_inverted(
            x in prop::collection::vec(-1.0f64..1.0, 1..25),
            delta in -0.5f64..0.5,
            a in 0.0005f64..0.2,
        ) {
            let w = walsh_averages(&x);
            let d = SignedRank::new(x.len());
            let (low, high) = d.interval(&w, a);
            prop_assert_eq!(low > delta, d.p_above(&w, delta) <= a);
            prop_assert!(low <= high);
            let estimate = hodges_lehmann(&w);
            prop_assert!(low <= estimate && estimate <= high);
        }
    }
}
