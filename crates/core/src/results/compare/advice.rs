//! What a user can do about a verdict that judged less than it could, derived from the
//! verdict's own numbers: timing not compared with a stored baseline from another machine, and
//! most of a paired run's points still inconclusive when the rounds ended. The gate's decision
//! rules are not touched: advice only reads the verdict.

use super::verdict::{
    Advice, GateMethod, GateVerdict, MachineDifference, RoundsContext, StopCause, Track, Verdict,
};
use crate::stats::{median_of_sorted, sorted};
use crate::units::format_wall_seconds;

/// The most `--time-budget` the gate accepts (seconds); a suggestion never exceeds it.
const MAX_BUDGET_S: f64 = 3600.0;
/// The most `--max-rounds` the gate accepts.
const MAX_ROUNDS_LIMIT: usize = 500;
/// The gate runs one child process at a time: about one CPU of the load average is its own.
const GATE_OWN_LOAD: f64 = 1.0;
/// Scale of the median absolute deviation that estimates a normal standard deviation.
const MAD_TO_SD: f64 = 1.4826;

/// A stored baseline from another machine: timing was not judged, and how to judge it here.
pub(super) fn timing_not_comparable(what: MachineDifference) -> Advice {
    Advice {
        kind: "timing-not-comparable".into(),
        text: format!(
            "Timing was not judged (the baseline comes from {}). To judge timing on this \
             machine, time this build against a build of another revision in the same run \
             (`--base REV`, e.g. origin/main: both are built and measured here), or record a \
             baseline here once (`--save-baseline FILE`) and compare later runs with it \
             (`--baseline FILE`).",
            what.label()
        ),
        try_next: vec![
            "stridelab gate --base origin/main".into(),
            "stridelab gate --save-baseline FILE".into(),
            "stridelab gate --baseline FILE".into(),
        ],
    }
}

/// One inconclusive paired point: its rounds, estimate and round-to-round spread.
struct Undecided {
    rounds: usize,
    change: f64,
    /// Robust spread of its log-ratios (MAD × 1.4826), as a relative change.
    spread: f64,
    /// The fewest rounds whose interval can close at the level the point is held to.
    rounds_needed: usize,
}

/// The fewest rounds n whose exact interval can close at one-sided level `level`: both tests'
/// most extreme outcome has probability 2⁻ⁿ, so below n = log2(1/level) the interval is the
/// whole line whatever the ratios (0 without a level).
fn rounds_needed(level: Option<f64>) -> usize {
    match level {
        Some(a) if a > 0.0 && a < 1.0 => (1.0 / a).log2().ceil() as usize,
        _ => 0,
    }
}

/// When more than half of a paired run's timed points are still inconclusive: how many, after
/// how many rounds, what ended the rounds, how much their ratios varied, and what would decide
/// more of them (a longer budget, sized from this run's time per pair; a quieter machine, with
/// the load average seen). `None` when most points were decided or the verdict is not paired.
pub fn undecided_points(verdict: &GateVerdict) -> Option<Advice> {
    let GateMethod::PairedBuilds {
        options,
        measured_s,
        rounds_context: Some(context),
        ..
    } = &verdict.method
    else {
        return None;
    };
    let timed: Vec<_> = verdict
        .rows
        .iter()
        .filter(|r| r.track == Track::Timing && r.rounds.is_some())
        .collect();
    let undecided: Vec<Undecided> = timed
        .iter()
        .filter(|r| r.verdict == Verdict::Inconclusive)
        .map(|r| Undecided {
            rounds: r.rounds.unwrap_or(0),
            change: r.change.unwrap_or(0.0),
            spread: robust_spread(&r.ratios),
            rounds_needed: rounds_needed(r.level),
        })
        .collect();
    if timed.is_empty() || 2 * undecided.len() <= timed.len() {
        return None;
    }
    let pairs: usize = timed.iter().filter_map(|r| r.rounds).sum();
    let pair_s = measured_s / pairs.max(1) as f64;
    let slower: Vec<&Undecided> = undecided
        .iter()
        .filter(|u| !(u.change <= 0.0 && u.rounds >= 2 * context.first_rounds))
        .collect();
    let could_be_slower = slower.len();
    // Rounds every point that could be slower still lacks before its interval can close.
    let lacking = slower
        .iter()
        .map(|u| u.rounds_needed.saturating_sub(u.rounds))
        .max()
        .unwrap_or(0);
    let mut text = found(&undecided, timed.len(), *measured_s, context);
    if could_be_slower < undecided.len() {
        text.push_str(&format!(
            " {} of them estimate no slowdown at all (≤ 0) after {} rounds or more, and by the \
             gate's rule got no more rounds; {could_be_slower} could still turn out slower.",
            undecided.len() - could_be_slower,
            2 * context.first_rounds
        ));
    }
    if lacking > 0 {
        let needed: Vec<usize> = slower.iter().map(|u| u.rounds_needed).collect();
        let (fewest, most) = (
            needed.iter().min().copied().unwrap_or(0),
            needed.iter().max().copied().unwrap_or(0),
        );
        let range = if fewest == most {
            most.to_string()
        } else {
            format!("{fewest}–{most}")
        };
        text.push_str(&format!(
            " Too few rounds to decide: at the levels these points are held to (Holm over the \
             timed points at α = {}), an interval can only close after {range} rounds (2⁻ⁿ ≤ \
             the level), whatever the ratios.",
            options.alpha
        ));
    }
    let spreads = sorted(&undecided.iter().map(|u| u.spread).collect::<Vec<_>>());
    text.push_str(&format!(
        " Their paired ratios varied by {:.1}% from round to round (the median over these points \
         of each one's robust spread, 1.4826 × the median absolute deviation of its \
         log-ratios), while a point's interval must end below the {:.1}% threshold to rule a \
         slowdown out: the fewer the rounds and the wider that spread, the more points stay \
         undecided.",
        100.0 * median_of_sorted(&spreads),
        100.0 * options.threshold
    ));
    let mut try_next = Vec::new();
    text.push_str(" What would decide more of them:");
    let more_rounds = more_rounds(
        context,
        (could_be_slower, lacking),
        (*measured_s, pair_s),
        &mut try_next,
    );
    text.push_str(&more_rounds);
    text.push_str(&quieter_machine(context));
    Some(Advice {
        kind: "points-undecided".into(),
        text,
        try_next,
    })
}

/// The first sentence: how many points are undecided, their rounds, the time, what stopped.
fn found(undecided: &[Undecided], timed: usize, measured_s: f64, c: &RoundsContext) -> String {
    let fewest = undecided.iter().map(|u| u.rounds).min().unwrap_or(0);
    let most = undecided.iter().map(|u| u.rounds).max().unwrap_or(0);
    let rounds = if fewest == most {
        fewest.to_string()
    } else {
        format!("{fewest}–{most}")
    };
    let ended = match c.stop {
        Some(StopCause::Budget) => format!(
            "; the rounds ended because another would have overrun the {:.0} s --time-budget",
            c.budget_s
        ),
        Some(StopCause::MaxRounds) => format!(
            "; the rounds ended at the {} rounds --max-rounds allows",
            c.max_rounds
        ),
        None => String::new(),
    };
    format!(
        "{} of {timed} timed points are still inconclusive (they pass) after {rounds} rounds \
         each, in {} of rounds{ended}.",
        undecided.len(),
        format_wall_seconds(measured_s)
    )
}

/// More rounds for the points that could still be slower (`could_be_slower`, the most of them
/// `lacking` rounds before an interval can close): a budget of twice this one, or more when
/// the lacking rounds need it, and the rounds it buys at this run's seconds per pair; a higher
/// `--max-rounds` when that is what stopped them.
fn more_rounds(
    c: &RoundsContext,
    (could_be_slower, lacking): (usize, usize),
    (measured_s, pair_s): (f64, f64),
    try_next: &mut Vec<String>,
) -> String {
    if could_be_slower == 0 {
        return " more rounds would go to no point (none could still be slower);".into();
    }
    let round_s = could_be_slower as f64 * pair_s;
    match c.stop {
        Some(StopCause::Budget) if c.budget_s < MAX_BUDGET_S => {
            let for_lacking = ((measured_s + lacking as f64 * round_s) / 10.0).ceil() * 10.0;
            let budget = (2.0 * c.budget_s)
                .max(for_lacking)
                .min(MAX_BUDGET_S)
                .round();
            let extra = ((budget - measured_s) / round_s).floor().max(0.0);
            try_next.push(format!("--time-budget {budget:.0}"));
            format!(
                " a longer budget (`--time-budget {budget:.0}` would give the {could_be_slower} \
                 about {extra:.0} more rounds each, at the {pair_s:.2} s a pair of processes took \
                 here, up to --max-rounds {});",
                c.max_rounds
            )
        }
        Some(StopCause::MaxRounds) if c.max_rounds < MAX_ROUNDS_LIMIT => {
            try_next.push(format!("--max-rounds {MAX_ROUNDS_LIMIT}"));
            format!(
                " more rounds (`--max-rounds {MAX_ROUNDS_LIMIT}`, with a --time-budget that \
                 leaves room for them at {pair_s:.2} s a pair);"
            )
        }
        _ => String::new(),
    }
}

/// A quieter machine, with the load average the rounds saw.
fn quieter_machine(c: &RoundsContext) -> String {
    let load = match (c.load_before, c.load_after) {
        (Some(before), Some(after)) => Some((before, after)),
        (Some(one), None) | (None, Some(one)) => Some((one, one)),
        (None, None) => None,
    };
    let Some((before, after)) = load else {
        return " a quieter machine, with fewer jobs running beside the gate.".into();
    };
    let busiest = before.max(after);
    let seen = format!(
        "the 1-minute load average was {before:.1} when the rounds started and {after:.1} when \
         they ended, on {} logical CPUs, of which the gate's one process at a time keeps about \
         one busy",
        c.logical_cpus
    );
    if busiest >= GATE_OWN_LOAD + 0.5 {
        format!(
            " a quieter machine, or fewer concurrent jobs ({seen}: other work shared the CPUs)."
        )
    } else {
        format!(
            " a quieter machine ({seen}: little other work ran here, so the variation came from \
             the machine itself or, on a VM, its host)."
        )
    }
}

/// 1.4826 × the median absolute deviation of the log-ratios, as a relative change (0 with
/// fewer than two ratios).
fn robust_spread(ratios: &[f64]) -> f64 {
    let logs: Vec<f64> = ratios
        .iter()
        .filter(|r| r.is_finite() && **r > 0.0)
        .map(|r| r.ln())
        .collect();
    if logs.len() < 2 {
        return 0.0;
    }
    let centre = median_of_sorted(&sorted(&logs));
    let deviations = sorted(&logs.iter().map(|x| (x - centre).abs()).collect::<Vec<_>>());
    (MAD_TO_SD * median_of_sorted(&deviations)).exp_m1()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::compare::test_fixtures::document;
    use crate::results::compare::verdict::{GateRow, PairedOptions, PairedStatistic};

    fn row(verdict: Verdict, rounds: usize, change: f64, ratios: &[f64]) -> GateRow {
        let doc = document(&[100.0], &[50.0], 7);
        let mut r = GateRow::of(&doc.records[0], Track::Timing, "time", verdict, None);
        r.rounds = Some(rounds);
        r.change = Some(change);
        r.ratios = ratios.to_vec();
        r
    }

    fn paired(rows: Vec<GateRow>, context: RoundsContext, measured_s: f64) -> GateVerdict {
        let method = GateMethod::PairedBuilds {
            base: "base".into(),
            candidate: "candidate".into(),
            options: PairedOptions {
                threshold: 0.025,
                floor: 0.01,
                alpha: 0.01,
                sim_tolerance: 0.0,
                statistic: PairedStatistic::Sign,
            },
            seed: 1,
            rounds_min: 12,
            rounds_max: 40,
            measured_s,
            stopped: None,
            rounds_context: Some(context),
            base_build: None,
        };
        GateVerdict::tally(rows, method, 0.0, "preset".into())
    }

    fn context(stop: Option<StopCause>, load: Option<f64>) -> RoundsContext {
        RoundsContext {
            budget_s: 120.0,
            first_rounds: 12,
            max_rounds: 300,
            stop,
            load_before: load,
            load_after: load,
            logical_cpus: 2,
        }
    }

    /// Ratios whose log-ratios deviate from their median (0) by ±d in equal numbers (one
    /// exactly on it when `rounds` is odd): their median absolute deviation is d.
    fn spread_of(d: f64, rounds: usize) -> Vec<f64> {
        (0..rounds)
            .map(|i| match (i + 1 == rounds && rounds % 2 == 1, i % 2) {
                (true, _) => 1.0,
                (false, 0) => d.exp(),
                (false, _) => (-d).exp(),
            })
            .collect()
    }

    #[test]
    fn the_spread_is_the_scaled_mad_of_the_log_ratios() {
        assert_eq!(robust_spread(&[1.0]), 0.0);
        assert_eq!(robust_spread(&[1.1, 1.1, 1.1]), 0.0);
        let s = robust_spread(&spread_of(0.04, 20));
        assert!((s - (MAD_TO_SD * 0.04).exp_m1()).abs() < 1e-12, "{s}");
    }

    #[test]
    fn advice_only_when_most_points_are_undecided_and_from_the_runs_numbers() {
        use Verdict::*;
        let noisy = spread_of(0.05, 27);
        let undecided = |n: usize| -> Vec<GateRow> {
            (0..n)
                .map(|i| row(Inconclusive, 27, 0.01 * i as f64, &noisy))
                .collect()
        };
        let decided = |n: usize| -> Vec<GateRow> {
            (0..n)
                .map(|_| row(Unchanged, 12, 0.0, &spread_of(0.005, 12)))
                .collect()
        };
        // (undecided, decided, advice given)
        for (u, d, given) in [(10, 3, true), (7, 6, true), (6, 7, false), (0, 13, false)] {
            let mut rows = undecided(u);
            rows.extend(decided(d));
            let v = paired(rows, context(Some(StopCause::Budget), Some(3.4)), 118.0);
            assert_eq!(
                undecided_points(&v).is_some(),
                given,
                "{u} undecided of {}",
                u + d
            );
        }
        let mut rows = undecided(10);
        rows.extend(decided(3));
        let v = paired(rows, context(Some(StopCause::Budget), Some(3.4)), 118.0);
        let advice = undecided_points(&v).unwrap();
        let text = &advice.text;
        assert!(
            text.starts_with("10 of 13 timed points are still inconclusive"),
            "{text}"
        );
        assert!(
            text.contains("after 27 rounds each, in 1 min 58 s of rounds"),
            "{text}"
        );
        assert!(text.contains("overrun the 120 s --time-budget"), "{text}");
        let spread = 100.0 * (MAD_TO_SD * 0.05).exp_m1();
        assert!(text.contains(&format!("varied by {spread:.1}%")), "{text}");
        assert!(text.contains("below the 2.5% threshold"), "{text}");
        // 118 s for 10·27 + 3·12 = 306 pairs: 0.39 s a pair; 122 more seconds for the 9 points
        // whose estimate is above 0 (one is exactly 0 after 27 ≥ 24 rounds): 35 rounds each.
        assert!(
            text.contains("1 of them estimate no slowdown at all"),
            "{text}"
        );
        assert!(
            text.contains(
                "`--time-budget 240` would give the 9 about 35 more rounds each, at the 0.39 s"
            ),
            "{text}"
        );
        assert!(
            text.contains("load average was 3.4") && text.contains("other work shared the CPUs"),
            "{text}"
        );
        assert_eq!(advice.try_next, vec!["--time-budget 240".to_string()]);
    }

    #[test]
    fn too_few_rounds_for_the_level_are_named_and_the_budget_sized_to_reach_it() {
        // (level, rounds an interval needs)
        for (level, needed) in [(0.01 / 13.0, 11), (0.01, 7), (0.5, 1), (1.0, 0)] {
            assert_eq!(rounds_needed(Some(level)), needed, "{level}");
        }
        assert_eq!(rounds_needed(None), 0);
        // 13 points after 6 rounds in 28 s (a 15 s budget cannot stop the first rounds), the
        // strictest held to 0.01/13: 11 rounds needed, 5 lacking at 13 × 0.36 s a round.
        let rows: Vec<GateRow> = (0..13)
            .map(|i| {
                let mut r = row(Verdict::Inconclusive, 6, 0.003, &spread_of(0.01, 6));
                r.level = Some(0.01 / (13 - i) as f64);
                r
            })
            .collect();
        let mut c = context(Some(StopCause::Budget), Some(8.1));
        c.budget_s = 15.0;
        c.first_rounds = 6;
        let advice = undecided_points(&paired(rows, c, 28.0)).unwrap();
        let text = &advice.text;
        assert!(text.contains("can only close after 7–11 rounds"), "{text}");
        // 28 s + 5 rounds × 13 × 28/78 s = 51.3 s → 60 s; (60 − 28) / 4.67 s: 6 more rounds.
        assert!(
            text.contains("`--time-budget 60` would give the 13 about 6 more rounds each"),
            "{text}"
        );
        assert_eq!(advice.try_next, vec!["--time-budget 60".to_string()]);
    }

    #[test]
    fn what_stopped_the_rounds_picks_the_remedy() {
        let rows: Vec<GateRow> = (0..4)
            .map(|_| row(Verdict::Inconclusive, 300, 0.01, &spread_of(0.08, 300)))
            .collect();
        // (stop, load, what the text says, what to try)
        type Case = (
            Option<StopCause>,
            Option<f64>,
            &'static str,
            &'static [&'static str],
        );
        let cases: [Case; 4] = [
            (
                Some(StopCause::MaxRounds),
                Some(0.9),
                "`--max-rounds 500`",
                &["--max-rounds 500"],
            ),
            (
                Some(StopCause::MaxRounds),
                Some(0.9),
                "little other work ran here",
                &["--max-rounds 500"],
            ),
            (
                Some(StopCause::Budget),
                None,
                "fewer jobs running beside the gate",
                &["--time-budget 240"],
            ),
            (None, Some(5.0), "other work shared the CPUs", &[]),
        ];
        for (stop, load, says, tries) in cases {
            let v = paired(rows.clone(), context(stop, load), 100.0);
            let advice = undecided_points(&v).unwrap();
            assert!(
                advice.text.contains(says),
                "{stop:?} {load:?}: {}",
                advice.text
            );
            assert_eq!(advice.try_next, tries, "{stop:?} {load:?}");
        }
        // Every undecided point shows no slowdown after twice the first rounds: more rounds
        // would go to none, so no budget is suggested.
        let settled: Vec<GateRow> = (0..4)
            .map(|_| row(Verdict::Inconclusive, 24, -0.01, &spread_of(0.08, 24)))
            .collect();
        let v = paired(settled, context(None, Some(1.0)), 30.0);
        let advice = undecided_points(&v).unwrap();
        assert!(
            advice.text.contains("4 of them estimate no slowdown"),
            "{}",
            advice.text
        );
        assert!(
            advice.text.contains("none could still be slower"),
            "{}",
            advice.text
        );
        assert!(advice.try_next.is_empty());
    }

    #[test]
    fn another_machine_names_what_differs_and_both_ways_to_judge_timing_here() {
        for what in [
            MachineDifference::CpuModel,
            MachineDifference::CacheGeometry,
        ] {
            let advice = timing_not_comparable(what);
            assert!(advice.text.contains(what.label()), "{}", advice.text);
            assert!(
                advice
                    .try_next
                    .iter()
                    .any(|c| c.contains("--base origin/main"))
            );
            assert!(
                advice
                    .try_next
                    .iter()
                    .any(|c| c.contains("--save-baseline FILE"))
            );
        }
    }
}
