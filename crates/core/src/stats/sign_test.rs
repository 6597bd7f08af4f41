//! The sign test of a paired shift and its distribution-free interval for the median: the
//! regression gate's default statistic, because it counts a wild round as one vote, where the
//! signed-rank test gives it the largest rank.
//!
//! For n paired differences and a shift δ, the statistic is the number of differences above δ;
//! without a shift beyond δ it is at most Binomial(n, ½). So:
//! 1. the one-sided p-value that the median exceeds δ is P(X ≥ k) for k differences above δ;
//! 2. the interval at one-sided level a is [x₍ₖ₎, x₍ₙ₋ₖ₊₁₎] of the sorted differences, with k
//!    the largest count whose lower tail P(X ≤ k − 1) is at most a, so its lower end lies
//!    above δ exactly when the p-value of δ is at most a (tested below);
//! 3. the estimate is the median of the differences.
//!
//! The binomial tail is exact for any n; ties with δ (not expected of timing ratios) count half.

#![forbid(unsafe_code)]

use super::signed_rank::{count_interval, count_p_above};

/// The exact null distribution of the sign statistic for `n` pairs.
#[derive(Debug, Clone)]
pub struct SignTest {
    /// `cdf[k]` = P(X ≤ k) for X ~ Binomial(n, ½), k in 0..=n.
    cdf: Vec<f64>,
}

impl SignTest {
    /// The distribution for `n` pairs by Pascal's recursion halved at every step,
    /// P_r(k) = (P_{r−1}(k) + P_{r−1}(k − 1)) / 2, which stays within f64 for any n.
    pub fn new(n: usize) -> Self {
        let mut p = vec![0.0; n + 1];
        p[0] = 1.0;
        for r in 1..=n {
            for k in (1..=r).rev() {
                p[k] = (p[k] + p[k - 1]) / 2.0;
            }
            p[0] /= 2.0;
        }
        let mut sum = 0.0f64;
        let cdf = p
            .into_iter()
            .map(|q| {
                sum += q;
                sum.min(1.0)
            })
            .collect();
        Self { cdf }
    }

    /// The one-sided p-value that the median exceeds `delta`: P(X ≥ k) for the k of the
    /// `sorted` differences above `delta` (one equal to it counts half, rounded down).
    pub fn p_above(&self, sorted: &[f64], delta: f64) -> f64 {
        count_p_above(&self.cdf, sorted, delta)
    }

    /// The interval of the median at one-sided level `a` (see the module doc); unbounded when
    /// `n` pairs cannot reach `a` (2⁻ⁿ > a).
    pub fn interval(&self, sorted: &[f64], a: f64) -> (f64, f64) {
        count_interval(&self.cdf, sorted, a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{median_of_sorted, sorted};
    use proptest::prelude::*;

    fn binomial_cdf(n: u32, k: u32) -> f64 {
        let choose =
            |n: u32, k: u32| (0..k).fold(1.0, |c, i| c * f64::from(n - i) / f64::from(i + 1));
        (0..=k).map(|i| choose(n, i)).sum::<f64>() / 2f64.powi(n as i32)
    }

    #[test]
    fn the_distribution_is_the_binomial_and_known_table_values() {
        for n in 0..=40u32 {
            let t = SignTest::new(n as usize);
            for k in 0..=n {
                let expected = binomial_cdf(n, k);
                assert!((t.cdf[k as usize] - expected).abs() < 1e-12, "n={n} k={k}");
            }
        }
        // Two-sided 5% critical values of the sign test: n = 10 → 1, n = 30 → 9.
        assert!(SignTest::new(10).cdf[1] <= 0.025 && SignTest::new(10).cdf[2] > 0.025);
        assert!(SignTest::new(30).cdf[9] <= 0.025 && SignTest::new(30).cdf[10] > 0.025);
        // Large n stays finite and sums to one.
        let big = SignTest::new(500);
        assert!((big.cdf[500] - 1.0).abs() < 1e-9 && big.cdf[0] > 0.0);
    }

    #[test]
    fn a_wild_difference_is_one_vote() {
        // Nine differences near +0.1 and one at −5: the sign test still sees 9 of 10 above
        // the floor; the p-value is P(X ≥ 9) = 11/1024.
        let mut x = vec![0.1; 9];
        x.push(-5.0);
        let x = sorted(&x);
        let t = SignTest::new(10);
        assert!((t.p_above(&x, 0.01) - 11.0 / 1024.0).abs() < 1e-15);
        assert_eq!(t.p_above(&x, 0.2), 1.0);
        assert_eq!(t.interval(&x, 0.0005), (f64::NEG_INFINITY, f64::INFINITY));
    }

    proptest! {
        /// The interval and the test agree: its lower end lies above δ exactly when the
        /// one-sided p-value of δ is at most the level; the median lies inside.
        #[test]
        fn the_interval_is_the_test_inverted(
            x in prop::collection::vec(-1.0f64..1.0, 1..60),
            delta in -0.5f64..0.5,
            a in 0.0005f64..0.2,
        ) {
            let x = sorted(&x);
            let t = SignTest::new(x.len());
            let (low, high) = t.interval(&x, a);
            prop_assert_eq!(low > delta, t.p_above(&x, delta) <= a);
            prop_assert!(low <= high);
            let median = median_of_sorted(&x);
            prop_assert!(low <= median && median <= high);
        }
    }
}
