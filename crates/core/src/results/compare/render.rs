//! The verdict as text: the one-line headline (which says what each track judged) and the
//! Markdown section (method paragraph, what the run cost, advice, row table) that `stridelab
//! gate` prints and appends to a CI job summary.

use std::fmt::Write as _;

use super::verdict::{
    BaseBuildCost, GateMethod, GateRow, GateVerdict, PairedStatistic, Track, Verdict,
};
use crate::units::{format_bytes, format_wall_seconds};

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Verdict::Unchanged => "ok",
            Verdict::Regression => "**REGRESSION**",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Improvement => "improvement",
            Verdict::Failed => "**FAILED**",
            Verdict::Reference => "reference",
            Verdict::NotCompared => "not compared",
            Verdict::New => "new",
        }
    }
}

impl GateVerdict {
    /// The one-line outcome: `PASS` or `FAIL — …`, then what each track judged.
    pub fn headline(&self) -> String {
        let mut text = if self.pass {
            "PASS".to_string()
        } else {
            format!(
                "FAIL — {} failing row(s): {} simulated, {} timing, {} failed point(s)",
                self.regressed.len(),
                self.deterministic_regressions,
                self.timing_regressions,
                self.failures
            )
        };
        let _ = write!(
            text,
            "; {}; {}",
            self.timing_summary(),
            self.simulated_summary()
        );
        text
    }

    /// What the timing track judged, in words.
    fn timing_summary(&self) -> String {
        if let GateMethod::StoredBaseline {
            timing_not_comparable: Some(_),
            timing_differs_in,
            ..
        } = &self.method
        {
            let what = timing_differs_in.map_or("another machine", |d| d.label());
            return format!("timing not judged (the baseline comes from {what})");
        }
        let mut text = format!(
            "timing: {} of {} point(s) judged",
            self.timing_judged, self.timing_rows
        );
        let unchanged = self
            .rows
            .iter()
            .filter(|r| r.track == Track::Timing && r.verdict == Verdict::Unchanged)
            .count();
        let parts: Vec<String> = [
            (self.timing_regressions, "regressed"),
            (unchanged, "unchanged"),
            (self.inconclusive, "inconclusive"),
            (self.improvements, "improved"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if !parts.is_empty() {
            let _ = write!(text, " ({})", parts.join(", "));
        }
        text
    }

    /// What the simulated track compared, in words.
    fn simulated_summary(&self) -> String {
        format!(
            "simulated misses: {} row(s) compared, {} more than before",
            self.simulated_judged, self.deterministic_regressions
        )
    }

    /// The verdict as a Markdown section for a CI job summary. With `all_rows` false, rows that
    /// are plain passes are counted instead of listed, except that every point's paired timing
    /// row is always shown (its estimate and interval are the result).
    pub fn to_markdown(&self, all_rows: bool) -> String {
        let mut md = String::new();
        let _ = writeln!(md, "## stridelab gate: {}\n", self.headline());
        md.push_str(&self.method_paragraph());
        if let GateMethod::PairedBuilds {
            measured_s,
            rounds_context,
            base_build,
            ..
        } = &self.method
        {
            let budget = rounds_context.as_ref().map(|c| c.budget_s);
            md.push_str(&cost_paragraph(base_build.as_ref(), *measured_s, budget));
        }
        for advice in &self.advice {
            let tries: Vec<String> = advice.try_next.iter().map(|t| format!("`{t}`")).collect();
            let _ = write!(md, "**What to do.** {}", advice.text);
            if !tries.is_empty() {
                let _ = write!(md, " Try: {}.", tries.join("; "));
            }
            md.push_str("\n\n");
        }
        let paired = matches!(self.method, GateMethod::PairedBuilds { .. });
        let shown: Vec<&GateRow> = self
            .rows
            .iter()
            .filter(|r| {
                all_rows
                    || (paired && r.track == Track::Timing)
                    || !matches!(r.verdict, Verdict::Unchanged | Verdict::Reference)
            })
            .collect();
        let hidden = self.rows.len() - shown.len();
        // No header without rows: an empty table reads as a rendering fault.
        if !shown.is_empty() {
            if paired {
                md.push_str("| kernel | params | metric | base | candidate | change | interval | rounds | verdict |\n");
                md.push_str("|---|---|---|---:|---:|---:|---|---:|---|\n");
            } else {
                md.push_str("| kernel | params | metric | baseline | current | change | CI | own time: change [CI] | verdict |\n");
                md.push_str("|---|---|---|---:|---:|---:|---|---|---|\n");
            }
            for r in shown {
                md.push_str(&table_row(r, paired));
            }
            md.push('\n');
        }
        if hidden > 0 {
            let count = if hidden == self.rows.len() {
                format!("All {hidden}")
            } else {
                format!("{hidden} more")
            };
            let _ = writeln!(
                md,
                "{count} row(s) unchanged or reference (`--all-rows` lists them)."
            );
        }
        md
    }

    /// What was compared and how, in one paragraph (with its trailing blank line).
    fn method_paragraph(&self) -> String {
        let simulated = format!(
            "Deterministic track: simulated misses per level on {} (tolerance {}).",
            self.geometry,
            if self.sim_tolerance == 0.0 {
                "0: exact match".to_string()
            } else {
                percent(self.sim_tolerance)
            }
        );
        match &self.method {
            GateMethod::StoredBaseline {
                baseline,
                threshold,
                confidence,
                resamples,
                seed,
                run_speed,
                run_speed_references,
                timing_not_comparable,
                ..
            } => {
                let timing = match timing_not_comparable {
                    Some(why) => format!("Timing track: not compared — {why}."),
                    None => format!(
                        "Timing track: time as a ratio to a same-run copy/read reference; a \
                         regression only when the whole {:.0}% bootstrap CI ({resamples} \
                         resamples, seed {seed}) of the change lies beyond ±{}, and so does the \
                         CI of the point's own time; points without a reference are divided \
                         by the run's speed: {}.",
                        confidence * 100.0,
                        percent(*threshold),
                        match run_speed {
                            Some(f) => format!(
                                "this run's references took {f:.3}× the baseline's time \
                                 (median of {run_speed_references})"
                            ),
                            None =>
                                "no interleaved references, so the suite's read/copy point".into(),
                        }
                    ),
                };
                format!("Baseline `{baseline}`. {simulated} {timing}\n\n")
            }
            GateMethod::PairedBuilds {
                base,
                candidate,
                options,
                seed,
                rounds_min,
                rounds_max,
                measured_s,
                stopped,
                ..
            } => {
                let rounds = if rounds_min == rounds_max {
                    rounds_min.to_string()
                } else {
                    format!("{rounds_min}–{rounds_max}")
                };
                let stopped = stopped
                    .as_ref()
                    .map(|s| format!(" {s}."))
                    .unwrap_or_default();
                format!(
                    "Base {base}; candidate {candidate}. {simulated} Timing track: {rounds} \
                     rounds in {measured_s:.0} s, each one fresh process per build and point, \
                     in a balanced order shuffled with seed {seed}; per point the {} of the \
                     paired ratios candidate ÷ base and their {} interval, Holm-corrected over \
                     the timed points at family-wise level {} (the interval's confidence per \
                     point in brackets); a regression \
                     when the interval lies above the {} noise floor and the estimate above the \
                     {} threshold, unchanged when the interval ends below the threshold.{stopped}\n\n",
                    match options.statistic {
                        PairedStatistic::Sign => "median",
                        PairedStatistic::SignedRank => "Hodges–Lehmann estimate",
                    },
                    match options.statistic {
                        PairedStatistic::Sign => "sign-test",
                        PairedStatistic::SignedRank => "signed-rank",
                    },
                    options.alpha,
                    percent(options.floor),
                    percent(options.threshold),
                )
            }
        }
    }
}

/// What the run cost (paragraph with its trailing blank line): the base build's time and what
/// it keeps on disk with how to remove it (`--base REV` only), and the rounds' time against
/// the budget.
fn cost_paragraph(build: Option<&BaseBuildCost>, rounds_s: f64, budget_s: Option<f64>) -> String {
    let rounds = match budget_s {
        Some(b) => format!(
            "rounds {} (--time-budget {b:.0} s)",
            format_wall_seconds(rounds_s)
        ),
        None => format!("rounds {}", format_wall_seconds(rounds_s)),
    };
    let Some(b) = build else {
        return format!("**Time.** A prebuilt base binary; {rounds}.\n\n");
    };
    let built = if b.reused {
        "reused from an earlier run (0 s)".to_string()
    } else {
        format_wall_seconds(b.build_s)
    };
    format!(
        "**Time.** Base build {built}; {rounds}. **Disk.** Kept base builds and their shared \
         cargo target directory take {} in `{}`; a later run against the same commit reuses \
         its build; `rm -rf {}` removes them all (the next `--base` run builds again).\n\n",
        format_bytes(b.kept_bytes as f64),
        b.kept_in,
        b.kept_in
    )
}

/// One line of the Markdown table.
fn table_row(r: &GateRow, paired: bool) -> String {
    let value = |v: Option<f64>| match (v, r.track) {
        (None, _) => "-".to_string(),
        (Some(x), Track::Deterministic) => format!("{x:.0}"),
        (Some(x), Track::Timing) if paired => format_ns(x),
        (Some(x), Track::Timing) if x >= 1000.0 => format!("{x:.0}"),
        (Some(x), Track::Timing) => format!("{x:.4}"),
    };
    let change = r.change.map(signed_percent).unwrap_or_else(|| "-".into());
    let interval = |ci: Option<(f64, f64)>| {
        ci.map(|(l, h)| format!("[{}, {}]", signed_percent(l), signed_percent(h)))
            .unwrap_or_else(|| "-".into())
    };
    let verdict = match &r.note {
        Some(note) => format!("{} ({note})", r.verdict.label()),
        None => r.verdict.label().to_string(),
    };
    let threads = if r.threads == 1 {
        String::new()
    } else {
        format!(" ×{}", r.threads)
    };
    let (seventh, eighth) = if paired {
        let confidence = r
            .level
            .map(|a| format!(" ({})", percent(1.0 - 2.0 * a)))
            .unwrap_or_default();
        let rounds = r
            .rounds
            .map(|n| n.to_string())
            .unwrap_or_else(|| "-".into());
        (format!("{}{confidence}", interval(r.ci)), rounds)
    } else {
        let own = match r.own_change {
            Some(c) => format!("{} {}", signed_percent(c), interval(r.own_ci)),
            None => "-".into(),
        };
        (interval(r.ci), own)
    };
    format!(
        "| {} | {}{} | {} | {} | {} | {} | {} | {} | {} |\n",
        r.kernel,
        r.params,
        threads,
        r.metric,
        value(r.baseline),
        value(r.current),
        change,
        seventh,
        eighth,
        verdict
    )
}

/// A time in ns with the unit that keeps 3–4 significant digits: `465 ns`, `12.3 µs`.
fn format_ns(ns: f64) -> String {
    match ns {
        x if x >= 1e6 => format!("{:.2} ms", x / 1e6),
        x if x >= 1e4 => format!("{:.1} µs", x / 1e3),
        x if x >= 1e3 => format!("{:.2} µs", x / 1e3),
        x => format!("{x:.0} ns"),
    }
}

fn percent(x: f64) -> String {
    format!("{}%", (x * 1000.0).round() / 10.0)
}

fn signed_percent(x: f64) -> String {
    if x.is_infinite() {
        return if x > 0.0 { "+∞" } else { "-∞" }.into();
    }
    format!("{:+.1}%", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::compare::test_fixtures::{document, noisy};
    use crate::results::compare::{CompareOptions, compare};

    #[test]
    fn numbers_keep_their_sign_infinity_and_unit() {
        assert_eq!(percent(0.1), "10%");
        assert_eq!(percent(0.025), "2.5%");
        assert_eq!(signed_percent(0.123), "+12.3%");
        assert_eq!(signed_percent(-0.05), "-5.0%");
        assert_eq!(signed_percent(f64::INFINITY), "+∞");
        assert_eq!(signed_percent(f64::NEG_INFINITY), "-∞");
        let times = [
            (465.3, "465 ns"),
            (1853.8, "1.85 µs"),
            (217_190.0, "217.2 µs"),
        ];
        for (ns, text) in times {
            assert_eq!(format_ns(ns), text);
        }
        assert_eq!(format_ns(779_021.0), "779.0 µs");
        assert_eq!(format_ns(2_500_000.0), "2.50 ms");
    }

    #[test]
    fn plain_passes_are_counted_unless_all_rows_are_asked_for() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let more_misses = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 9);
        let v = compare(&base, &more_misses, &CompareOptions::default()).unwrap();
        let short = v.to_markdown(false);
        let listed = |md: &str| md.lines().filter(|l| l.starts_with("| row-sum")).count();
        assert_eq!(listed(&short), 1, "{short}");
        assert!(short.contains("| L1d misses (simulated) | 7 | 9 | +28.6% |"));
        assert!(
            short.contains("2 more row(s) unchanged or reference"),
            "{short}"
        );
        let full = v.to_markdown(true);
        assert_eq!(listed(&full), 2, "{full}");
        assert!(!full.contains("more row(s)"));
        // Everything passes: no table at all, only the count.
        let same = compare(&base, &base, &CompareOptions::default()).unwrap();
        let quiet = same.to_markdown(false);
        assert!(!quiet.contains("| kernel |"), "{quiet}");
        assert!(
            quiet.contains("All 4 row(s) unchanged or reference"),
            "{quiet}"
        );
    }

    #[test]
    fn the_cost_paragraph_says_what_the_base_build_took_and_what_it_keeps() {
        let built = BaseBuildCost {
            build_s: 334.2,
            reused: false,
            kept_in: "target/gate-base".into(),
            kept_bytes: 860_000_000,
        };
        let reused = BaseBuildCost {
            build_s: 0.0,
            reused: true,
            ..built.clone()
        };
        // (base build, rounds' seconds, budget, what the paragraph must say)
        type Case = (
            Option<BaseBuildCost>,
            f64,
            Option<f64>,
            &'static [&'static str],
        );
        let cases: [Case; 3] = [
            (
                Some(built),
                118.4,
                Some(120.0),
                &[
                    "**Time.** Base build 5 min 34 s; rounds 1 min 58 s (--time-budget 120 s).",
                    "take 820.2 MiB in `target/gate-base`",
                    "`rm -rf target/gate-base` removes them all",
                ],
            ),
            (
                Some(reused),
                30.0,
                Some(60.0),
                &["Base build reused from an earlier run (0 s); rounds 30 s (--time-budget 60 s)."],
            ),
            (
                None,
                12.0,
                None,
                &["**Time.** A prebuilt base binary; rounds 12 s.\n\n"],
            ),
        ];
        for (build, rounds_s, budget, says) in cases {
            let text = cost_paragraph(build.as_ref(), rounds_s, budget);
            for part in says {
                assert!(text.contains(part), "{part}: {text}");
            }
        }
    }

    #[test]
    fn the_headline_says_what_each_track_judged() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let v = compare(&base, &base, &CompareOptions::default()).unwrap();
        assert_eq!(
            v.headline(),
            "PASS; timing: 1 of 1 point(s) judged (1 unchanged); simulated misses: 2 row(s) \
             compared, 0 more than before"
        );
    }
}
