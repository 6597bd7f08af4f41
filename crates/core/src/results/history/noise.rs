//! The run-to-run noise of points, learnt from earlier runs of them on one machine.
//!
//! A point's figure varies from run to run with the machine's state far more than one run's
//! confidence interval shows, and by very different amounts for different points (on a 2-vCPU
//! VM's quick suite: 1–2% for a small column sum against its copy, 50–100% for a short pointer
//! chase). So each point's band is its own: with its figure's natural log in m earlier runs
//! having standard deviation s, a new run's figure minus the baseline run's is a difference of
//! two draws, with standard deviation s·√2; the band is Student's t prediction bound at
//! [`BAND_CONFIDENCE`] for m − 1 degrees of freedom,
//!
//! > band = t(1 − α/2, m − 1) · s · √2, and never below [`BAND_FLOOR`],
//!
//! wide while few runs are known (m = 2: 90·s) and narrowing as runs accumulate. Timings have
//! heavier tails than the normal law the bound assumes; the 99% level leaves room for them
//! (docs/measurements.md gives the A/A rate measured with it).

use std::collections::BTreeMap;

use super::{Basis, Figure};

/// The confidence of a band: a point that did not change lies outside it about 1% of the time
/// under the normal law.
pub const BAND_CONFIDENCE: f64 = 0.99;

/// The narrowest band, in ln units (≈ 0.5%): earlier runs that agree to the last digit say
/// nothing of a change below the timer's resolution.
pub const BAND_FLOOR: f64 = 0.005;

/// Student's t quantile at 0.995 (two-sided 99%) for 1..=30 degrees of freedom; beyond, the
/// normal law's 2.576 (2.750 at 30 already, so the step is small).
const T_995: [f64; 30] = [
    63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169, 3.106, 3.055, 3.012,
    2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797, 2.787, 2.779,
    2.771, 2.763, 2.756, 2.750,
];

/// The t quantile for `df` ≥ 1 degrees of freedom.
fn t_quantile(df: usize) -> f64 {
    T_995.get(df.saturating_sub(1)).copied().unwrap_or(2.576)
}

/// One point's noise.
#[derive(Debug, Clone, PartialEq)]
pub struct PointNoise {
    /// Earlier runs that hold the point (m).
    pub runs: usize,
    /// The standard deviation of ln(figure) over them (s).
    pub spread: f64,
    /// The band a change must exceed, in ln units.
    pub band: f64,
}

/// The noise learnt from a window of earlier runs.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseEstimate {
    /// Earlier runs that hold at least one compared point.
    pub runs: usize,
    pub points: BTreeMap<String, PointNoise>,
}

impl NoiseEstimate {
    /// Learns the noise of the `compared` points (key → the basis the comparison judges it on)
    /// from the figures of earlier runs (oldest first); `None` when no two runs hold one of them.
    pub fn learn(
        runs: &[BTreeMap<String, Figure>],
        compared: &BTreeMap<String, Basis>,
    ) -> Option<Self> {
        let holding = |run: &BTreeMap<String, Figure>, key: &String| {
            run.get(key)
                .filter(|fig| compared.get(key) == Some(&fig.basis))
                .map(|fig| fig.value.ln())
        };
        let points: BTreeMap<String, PointNoise> = compared
            .keys()
            .filter_map(|key| {
                let values: Vec<f64> = runs.iter().filter_map(|run| holding(run, key)).collect();
                Some((key.clone(), PointNoise::of(&values)?))
            })
            .collect();
        let runs_holding = runs
            .iter()
            .filter(|run| compared.keys().any(|key| holding(run, key).is_some()))
            .count();
        (!points.is_empty()).then_some(Self {
            runs: runs_holding,
            points,
        })
    }

    /// The band a point is judged by (ln units), `None` for a point no two runs hold.
    pub fn band(&self, key: &str) -> Option<f64> {
        Some(self.points.get(key)?.band)
    }

    /// The median band over the points, as a relative change (`0.04` = ±4%).
    pub fn median_band(&self) -> f64 {
        let bands: Vec<f64> = self.points.values().map(|p| p.band).collect();
        crate::stats::upper_median(&bands).exp() - 1.0
    }
}

impl PointNoise {
    /// The noise of ln-figures `values` from m ≥ 2 runs.
    fn of(values: &[f64]) -> Option<Self> {
        let m = values.len();
        if m < 2 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / m as f64;
        let spread =
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (m - 1) as f64).sqrt();
        let band = (t_quantile(m - 1) * spread * std::f64::consts::SQRT_2).max(BAND_FLOOR);
        Some(Self {
            runs: m,
            spread,
            band,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_band_is_the_t_bound_on_a_difference_of_two_runs() {
        // (ln values, expected band): s of {0, 0.02} is 0.02/√2, so the band is t(1)·0.02.
        let cases: &[(&[f64], f64)] = &[
            (&[0.0, 0.02], 63.657 * 0.02),
            (&[0.0, 0.01, 0.02], 9.925 * 0.01 * std::f64::consts::SQRT_2),
            // Identical runs: the floor.
            (&[0.3, 0.3, 0.3, 0.3], BAND_FLOOR),
        ];
        for (values, want) in cases {
            let noise = PointNoise::of(values).unwrap();
            assert!(
                (noise.band - want).abs() < 1e-9,
                "{values:?}: {}",
                noise.band
            );
            assert_eq!(noise.runs, values.len());
        }
        assert!(PointNoise::of(&[0.1]).is_none(), "one run has no spread");
    }

    #[test]
    fn the_t_quantile_falls_towards_the_normal_one() {
        assert_eq!(t_quantile(1), 63.657);
        assert_eq!(t_quantile(9), 3.250);
        assert_eq!(t_quantile(31), 2.576);
        assert!(T_995.windows(2).all(|w| w[0] > w[1]));
    }
}
