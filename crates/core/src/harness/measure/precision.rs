//! The precision verdict of a timed point, as hyperfine warns of its runs: whether the median's
//! CI reached the `--target-ci` the run asked for, whether samples lie beyond Tukey's outer
//! fences, and whether they drift with time. The detectors are `stats::precision`'s; the rules
//! that turn their numbers into warnings, and the words for them, are here.

#![forbid(unsafe_code)]

use crate::results::{Precision, PrecisionWarning, Summary};
use crate::stats::precision::{drift, tukey_outliers};

/// Slack on the CI target: the sampler's quick bootstrap and the recorded full one differ in
/// the last digits, and a CI that stopped at the target must not read as a miss.
const TARGET_SLACK: f64 = 1e-6;

/// The verdict on `samples` (in the order taken) and their `summary`, sampled towards a CI of
/// `target_relative_ci`. The rules:
/// 1. the CI is missed when its width relative to the median exceeds the target;
/// 2. outliers, when at least one sample lies beyond the outer fences (3 IQR): a mild one is
///    expected now and then in any timing, a far-out one means something else ran;
/// 3. drift, when the rank trend is beyond chance *and* the last third's median moved from the
///    first third's by more than the CI is wide: then the CI, which assumes samples drawn
///    alike, understates how much the median depends on when sampling stopped.
pub fn precision_of(samples: &[f64], summary: &Summary, target_relative_ci: f64) -> Precision {
    let outliers = tukey_outliers(samples);
    let drift = drift(samples);
    let mut warnings = Vec::new();
    if summary.relative_ci_width() > target_relative_ci * (1.0 + TARGET_SLACK) {
        warnings.push(PrecisionWarning::CiTargetMissed);
    }
    if outliers.is_some_and(|o| o.severe > 0) {
        warnings.push(PrecisionWarning::Outliers);
    }
    let ci_width = summary.ci_high - summary.ci_low;
    if drift.is_some_and(|d| d.significant(samples.len()) && d.shift().abs() > ci_width) {
        warnings.push(PrecisionWarning::Drift);
    }
    Precision {
        target_relative_ci,
        outliers,
        drift,
        warnings,
    }
}

/// The short mark a table shows for a warning.
pub fn mark(warning: PrecisionWarning) -> &'static str {
    match warning {
        PrecisionWarning::CiTargetMissed => "ci",
        PrecisionWarning::Outliers => "out",
        PrecisionWarning::Drift => "drift",
    }
}

/// What each mark means, for a table's footnote.
pub fn mark_legend(warning: PrecisionWarning) -> &'static str {
    match warning {
        PrecisionWarning::CiTargetMissed => "ci = the 95% CI ended wider than --target-ci",
        PrecisionWarning::Outliers => {
            "out = samples beyond Tukey's outer fences (Q1 − 3·IQR, Q3 + 3·IQR)"
        }
        PrecisionWarning::Drift => {
            "drift = the samples trend with time (Spearman's ρ with sample order, p < 0.01) by \
             more than the CI is wide"
        }
    }
}

/// What a warning line says of the points it names: (one point, several points) — the
/// finding and what to do about it, as hyperfine's warnings do.
pub fn advice(warning: PrecisionWarning) -> (&'static str, &'static str) {
    match warning {
        PrecisionWarning::CiTargetMissed => (
            "missed the CI target: its sampling budget ran out first",
            "missed the CI target: their sampling budget ran out first",
        ),
        PrecisionWarning::Outliers => (
            "has statistical outliers: something else ran during some samples",
            "have statistical outliers: something else ran during some samples",
        ),
        PrecisionWarning::Drift => (
            "drifts: its samples got steadily slower or faster while it ran, so its median \
             depends on when sampling stopped and its CI understates that",
            "drift: their samples got steadily slower or faster while they ran, so their \
             medians depend on when sampling stopped and their CIs understate that",
        ),
    }
}

/// What to do about a warning.
pub fn remedy(warning: PrecisionWarning) -> &'static str {
    match warning {
        PrecisionWarning::CiTargetMissed => "Raise --sampling-budget, or accept the wider CI.",
        PrecisionWarning::Outliers => {
            "The median resists them; re-run on a quiet system before trusting the CI."
        }
        PrecisionWarning::Drift => "Re-run on a quiet system.",
    }
}

/// A relative width as a percentage with two significant digits at least (`2.5%`, `0.50%`).
pub fn percent(fraction: f64) -> String {
    format!("{}%", crate::units::format_significant(100.0 * fraction))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{BootstrapSettings, summarize};

    fn verdict(samples: &[f64], target: f64) -> Vec<PrecisionWarning> {
        let summary = summarize(samples, BootstrapSettings::default()).unwrap();
        precision_of(samples, &summary, target).warnings
    }

    #[test]
    fn each_rule_fires_on_its_own_pattern_and_not_on_steady_samples() {
        use PrecisionWarning::*;
        let steady: Vec<f64> = (0..20)
            .map(|i| 100.0 + [0.3, -0.2, 0.1, -0.4][i % 4])
            .collect();
        let mut preempted = steady.clone();
        preempted[7] = 180.0;
        let ramp: Vec<f64> = (0..20).map(|i| 100.0 + 3.0 * i as f64).collect();
        let cases: &[(&str, &[f64], f64, &[PrecisionWarning])] = &[
            ("steady samples, a loose target", &steady, 0.02, &[]),
            (
                "steady samples, a target no CI reaches",
                &steady,
                1e-6,
                &[CiTargetMissed],
            ),
            ("one preempted sample", &preempted, 0.05, &[Outliers]),
            ("a machine slowing down", &ramp, 1.0, &[Drift]),
        ];
        for (what, samples, target, expected) in cases {
            assert_eq!(verdict(samples, *target), *expected, "{what}");
        }
    }

    #[test]
    fn a_ci_that_stopped_at_the_target_is_not_a_miss() {
        let samples = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0];
        let summary = summarize(&samples, BootstrapSettings::default()).unwrap();
        let exact = summary.relative_ci_width();
        assert!(precision_of(&samples, &summary, exact).warnings.is_empty());
        assert_eq!(
            precision_of(&samples, &summary, exact * 0.9).warnings,
            vec![PrecisionWarning::CiTargetMissed]
        );
    }
}
