//! Judging a control from its rounds: the variant's time per element over the base's in each
//! round, against the noise of the base measured twice per round (the run-to-run noise of
//! this point in this process, not one run's interval), and the simulator's misses per access
//! of both points: whether the set model predicted what the clock saw.

use serde::Serialize;

use super::controls::Factor;
use crate::results::SimulatedMisses;

/// The median of `values` (NaN for none), as the lab computes every median.
pub(super) fn median(values: &[f64]) -> f64 {
    crate::stats::median_of_finite(values).unwrap_or(f64::NAN)
}

/// Relative changes smaller than this (in misses per access) are not a prediction of a change.
pub const MODEL_CHANGE: f64 = 0.10;

/// The smallest noise band a verdict is judged against: two runs agreeing by chance closer
/// than this do not make a 1% change real.
pub const NOISE_FLOOR: f64 = 0.02;

/// Which way time moved, judged against the noise band.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Moved {
    /// Every round beyond the band, below the expectation.
    Faster,
    /// Every round beyond the band, above it.
    Slower,
    /// Within the band.
    Unchanged,
    /// The median beyond the band but not every round: more rounds would tell.
    Unclear,
}

/// The noise band in log-ratio units: the largest |ln(second ÷ first)| of the base measured
/// twice per round, at least [`NOISE_FLOOR`].
pub fn noise_band(base_pairs: &[(f64, f64)]) -> f64 {
    base_pairs
        .iter()
        .map(|(a, b)| (b / a).ln().abs())
        .filter(|x| x.is_finite())
        .fold(NOISE_FLOOR.ln_1p(), f64::max)
}

/// The verdict on per-round `ratios` (variant ÷ base) against `expected` (1 for a control that
/// should change nothing, ½ for a second thread that shares nothing).
pub fn judge(ratios: &[f64], expected: f64, band: f64) -> Moved {
    let logs: Vec<f64> = ratios.iter().map(|r| (r / expected).ln()).collect();
    if logs.is_empty() {
        return Moved::Unclear;
    }
    if logs.iter().all(|&l| l > band) {
        Moved::Slower
    } else if logs.iter().all(|&l| l < -band) {
        Moved::Faster
    } else if median(&logs).abs() > band {
        Moved::Unclear
    } else {
        Moved::Unchanged
    }
}

/// One level's simulated misses per access, base and variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelChange {
    pub level: String,
    pub base: f64,
    pub variant: f64,
}

/// What the simulator said of a control.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum ModelCall {
    /// The simulator has nothing of this factor.
    NotModelled { reason: String },
    /// A point had no simulated misses (cut, or failed).
    NoSimulation,
    /// Both simulated: whether the misses moved as time did.
    Simulated {
        /// Which of the simulator's models gave the levels (`simulated caches`, `… and TLB`).
        model: String,
        levels: Vec<LevelChange>,
        /// Which way the misses moved (`Unchanged` when no level moved by [`MODEL_CHANGE`]).
        misses: Moved,
        agrees: bool,
    },
}

/// Each level's misses per access of the kernel (the first level's loads and stores), so
/// levels compare: a level's own miss rate rises when the level above filters more.
fn per_access(sim: &SimulatedMisses) -> Vec<(String, f64)> {
    let accesses = sim
        .levels
        .first()
        .map_or(1, |l| (l.loads + l.stores).max(1)) as f64;
    sim.levels
        .iter()
        .map(|l| (l.name.clone(), l.misses as f64 / accesses))
        .collect()
}

/// The simulator's call on a control of `factor` whose time `moved`: the caches' misses per
/// access of base and variant, and beside them what a model beyond sets gave (`beyond`: the
/// TLB's levels for the huge-pages control, the prefetch model's for a streams control, or why
/// it could not be simulated).
pub fn model_call(
    factor: Factor,
    moved: Moved,
    base: Option<&SimulatedMisses>,
    variant: Option<&SimulatedMisses>,
    beyond: Option<Result<Vec<LevelChange>, String>>,
) -> ModelCall {
    let mut extra = Vec::new();
    let mut model = "simulated caches";
    match factor {
        Factor::MemoryParallelism => {
            // Without the prefetch model the caches alone still answer (as before it existed).
            if let Some(Ok(levels)) = beyond {
                extra = levels;
                model = "simulated caches and prefetch model";
            }
        }
        Factor::Tlb => match beyond {
            Some(Ok(levels)) => {
                extra = levels;
                model = "simulated caches and TLB";
            }
            Some(Err(reason)) => return ModelCall::NotModelled { reason },
            None => {
                return ModelCall::NotModelled {
                    reason: "the TLB was not simulated".into(),
                };
            }
        },
        Factor::Bandwidth => {
            return ModelCall::NotModelled {
                reason: "the simulator models one core's caches".into(),
            };
        }
        Factor::Alignment => {
            return ModelCall::NotModelled {
                reason:
                    "the simulator places every buffer on a 4 GiB boundary: a shift is timed only"
                        .into(),
            };
        }
        _ => {}
    }
    let (Some(base), Some(variant)) = (base, variant) else {
        return ModelCall::NoSimulation;
    };
    let levels: Vec<LevelChange> = per_access(base)
        .into_iter()
        .zip(per_access(variant))
        .map(|((level, b), (_, v))| LevelChange {
            level,
            base: b,
            variant: v,
        })
        .chain(extra)
        .collect();
    // The outermost level whose misses per access moved decides (its misses cost the most).
    let misses = levels
        .iter()
        .rev()
        .find_map(|l| {
            let change = (l.variant - l.base) / l.base.max(1e-12);
            (change.abs() >= MODEL_CHANGE && (l.variant - l.base).abs() > 1e-6).then_some(
                if change < 0.0 {
                    Moved::Faster
                } else {
                    Moved::Slower
                },
            )
        })
        .unwrap_or(Moved::Unchanged);
    let agrees = match moved {
        Moved::Unclear => false,
        m => m == misses,
    };
    ModelCall::Simulated {
        model: model.into(),
        levels,
        misses,
        agrees,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_every_round_against_the_band() {
        let band = 0.05;
        // (ratios, expected, verdict)
        let cases: [(&[f64], f64, Moved); 7] = [
            (&[0.60, 0.62, 0.58], 1.0, Moved::Faster),
            (&[1.30, 1.25, 1.40], 1.0, Moved::Slower),
            (&[1.01, 0.99, 1.03], 1.0, Moved::Unchanged),
            (&[0.80, 0.82, 1.00], 1.0, Moved::Unclear),
            (&[0.51, 0.49, 0.50], 0.5, Moved::Unchanged),
            (&[0.95, 0.98, 1.00], 0.5, Moved::Slower),
            (&[], 1.0, Moved::Unclear),
        ];
        for (ratios, expected, verdict) in cases {
            assert_eq!(judge(ratios, expected, band), verdict, "{ratios:?}");
        }
    }

    #[test]
    fn the_model_agrees_when_its_misses_move_as_time_did() {
        use crate::results::test_docs::simulated_l1;
        let (few, many) = (simulated_l1(10), simulated_l1(90));
        // (factor, time, base misses, variant misses, agrees, misses moved)
        let cases = [
            (
                Factor::SetsElement,
                Moved::Faster,
                &many,
                &few,
                true,
                Moved::Faster,
            ),
            (
                Factor::SetsElement,
                Moved::Slower,
                &many,
                &few,
                false,
                Moved::Faster,
            ),
            (
                Factor::Capacity,
                Moved::Unchanged,
                &many,
                &many,
                true,
                Moved::Unchanged,
            ),
            (
                Factor::Capacity,
                Moved::Unchanged,
                &few,
                &many,
                false,
                Moved::Slower,
            ),
            (
                Factor::MemoryParallelism,
                Moved::Slower,
                &few,
                &few,
                false,
                Moved::Unchanged,
            ),
        ];
        for (factor, time, base, variant, agrees, misses) in cases {
            match model_call(factor, time, Some(base), Some(variant), None) {
                ModelCall::Simulated {
                    agrees: a,
                    misses: m,
                    ..
                } => assert_eq!((a, m), (agrees, misses), "{factor:?} {time:?}"),
                other => panic!("{factor:?}: {other:?}"),
            }
        }
        assert!(matches!(
            model_call(Factor::Tlb, Moved::Faster, Some(&few), Some(&many), None),
            ModelCall::NotModelled { .. }
        ));
        assert_eq!(
            model_call(Factor::SetsLine, Moved::Faster, None, Some(&many), None),
            ModelCall::NoSimulation
        );
        // Huge pages: the caches' misses do not move, the TLB's page walks decide.
        let walks = |base, variant| {
            Some(Ok(vec![LevelChange {
                level: "STLB".into(),
                base,
                variant,
            }]))
        };
        // (time, page walks per access 4 KiB → 2 MiB, agrees, misses)
        let huge_pages = [
            (Moved::Faster, walks(0.5, 0.0), true, Moved::Faster),
            (Moved::Unchanged, walks(0.5, 0.0), false, Moved::Faster),
            (
                Moved::Unchanged,
                walks(0.001, 0.001),
                true,
                Moved::Unchanged,
            ),
        ];
        for (time, tlb, agrees, misses) in huge_pages {
            match model_call(Factor::Tlb, time, Some(&few), Some(&few), tlb) {
                ModelCall::Simulated {
                    model,
                    agrees: a,
                    misses: m,
                    levels,
                } => {
                    assert_eq!((a, m), (agrees, misses), "{time:?}");
                    assert_eq!(model, "simulated caches and TLB");
                    assert_eq!(levels.last().unwrap().level, "STLB");
                }
                other => panic!("{other:?}"),
            }
        }
        // A streams control: the caches' misses stay, the prefetch model's decide; without
        // the prefetch model the caches alone answer.
        let prefetch = Some(Ok(vec![LevelChange {
            level: "L2 with prefetch".into(),
            base: 0.031,
            variant: 0.002,
        }]));
        match model_call(
            Factor::MemoryParallelism,
            Moved::Faster,
            Some(&few),
            Some(&few),
            prefetch,
        ) {
            ModelCall::Simulated {
                model,
                agrees,
                misses,
                ..
            } => {
                assert_eq!(model, "simulated caches and prefetch model");
                assert_eq!((agrees, misses), (true, Moved::Faster));
            }
            other => panic!("{other:?}"),
        }
        match model_call(
            Factor::MemoryParallelism,
            Moved::Faster,
            Some(&few),
            Some(&few),
            Some(Err("no model".into())),
        ) {
            ModelCall::Simulated { model, agrees, .. } => {
                assert_eq!((model.as_str(), agrees), ("simulated caches", false));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            model_call(
                Factor::Tlb,
                Moved::Faster,
                Some(&few),
                Some(&few),
                Some(Err("no table".into()))
            ),
            ModelCall::NotModelled {
                reason: "no table".into()
            }
        );
    }

    #[test]
    fn the_band_is_the_base_against_itself_with_a_floor() {
        assert!((noise_band(&[(1.0, 1.0), (2.0, 2.0)]) - 0.02f64.ln_1p()).abs() < 1e-12);
        assert!((noise_band(&[(1.0, 1.1), (1.0, 0.95)]) - 1.1f64.ln()).abs() < 1e-12);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
