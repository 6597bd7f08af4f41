//! The verdict as text: the one-line headline and the Markdown section (method paragraph and
//! row table) that `stridelab gate` prints and appends to a CI job summary.

use std::fmt::Write as _;

use super::verdict::{GateRow, GateVerdict, Track, Verdict};

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Verdict::Unchanged => "ok",
            Verdict::Regression => "**REGRESSION**",
            Verdict::Unconfirmed => "regression, unconfirmed",
            Verdict::Improvement => "improvement",
            Verdict::Failed => "**FAILED**",
            Verdict::Reference => "reference",
            Verdict::NotCompared => "not compared",
            Verdict::New => "new",
        }
    }
}

impl GateVerdict {
    /// The one-line outcome (`PASS` / `FAIL — …`).
    pub fn headline(&self) -> String {
        let failing = self.regressed.len();
        let mut text = if self.pass {
            "PASS".to_string()
        } else {
            format!(
                "FAIL — {failing} failing row(s): {} simulated, {} timing, {} failed point(s)",
                self.deterministic_regressions, self.timing_regressions, self.failures
            )
        };
        if self.improvements > 0 {
            let _ = write!(
                text,
                "; {} improvement(s) (update the baseline)",
                self.improvements
            );
        }
        if self.unconfirmed_timing_regressions > 0 {
            let _ = write!(
                text,
                "; {} unconfirmed timing regression(s) ignored",
                self.unconfirmed_timing_regressions
            );
        }
        if self.machine_warning.is_some() {
            text.push_str("; WARNING: the baseline comes from another CPU model");
        }
        text
    }

    /// The verdict as a Markdown section for a CI job summary. With `all_rows` false, only
    /// rows that are not plain passes are listed (plus a count of the rest).
    pub fn to_markdown(&self, baseline_label: &str, all_rows: bool) -> String {
        let mut md = String::new();
        let _ = writeln!(md, "## stridelab gate: {}\n", self.headline());
        md.push_str(&self.method_paragraph(baseline_label));
        if let Some(warning) = &self.machine_warning {
            let _ = writeln!(md, "**Warning:** {warning}.\n");
        }
        let shown: Vec<&GateRow> = self
            .rows
            .iter()
            .filter(|r| all_rows || !matches!(r.verdict, Verdict::Unchanged | Verdict::Reference))
            .collect();
        let hidden = self.rows.len() - shown.len();
        // No header without rows: an empty table reads as a rendering fault.
        if !shown.is_empty() {
            let _ = writeln!(
                md,
                "| kernel | params | metric | baseline | current | change | CI | own time: change [CI] | verdict |"
            );
            let _ = writeln!(md, "|---|---|---|---:|---:|---:|---|---|---|");
            for r in shown {
                md.push_str(&table_row(r));
            }
            md.push('\n');
        }
        match (hidden, self.rows.len()) {
            (0, _) => {}
            (h, total) if h == total => {
                let _ = writeln!(
                    md,
                    "All {h} row(s) unchanged or reference (`--all-rows` lists them)."
                );
            }
            (h, _) => {
                let _ = writeln!(
                    md,
                    "{h} more row(s) unchanged or reference (`--all-rows` lists them)."
                );
            }
        }
        md
    }

    /// What was compared and how, in one paragraph (with its trailing blank line).
    fn method_paragraph(&self, baseline_label: &str) -> String {
        format!(
            "Baseline `{baseline_label}`. Deterministic track: simulated misses per level on {} \
             (tolerance {}). Timing track: time as a ratio to a same-run copy/read reference; \
             a regression only when the whole {:.0}% bootstrap CI ({} resamples, seed {}) of \
             the change lies beyond ±{}, and so does the CI of the point's own time (with per-round reference samples each sample is \
             divided by its paired reference sample; an older document's reference enters \
             with its median); points without a reference are divided by the run's speed: \
             {}.\n\n",
            self.geometry,
            if self.sim_tolerance == 0.0 {
                "0: exact match".to_string()
            } else {
                percent(self.sim_tolerance)
            },
            self.confidence * 100.0,
            self.resamples,
            self.seed,
            percent(self.threshold),
            match self.run_speed {
                Some(f) => format!(
                    "this run's references took {f:.3}× the baseline's time (median of {})",
                    self.run_speed_references
                ),
                None => "no interleaved references, so the suite's read/copy point".into(),
            },
        )
    }
}

/// One line of the Markdown table.
fn table_row(r: &GateRow) -> String {
    let value = |v: Option<f64>| match (v, r.track) {
        (None, _) => "-".to_string(),
        (Some(x), Track::Deterministic) => format!("{x:.0}"),
        (Some(x), Track::Timing) if x >= 1000.0 => format!("{x:.0}"),
        (Some(x), Track::Timing) => format!("{x:.4}"),
    };
    let change = r.change.map(signed_percent).unwrap_or_else(|| "-".into());
    let interval = |ci: Option<(f64, f64)>| {
        ci.map(|(l, h)| format!("[{}, {}]", signed_percent(l), signed_percent(h)))
            .unwrap_or_else(|| "-".into())
    };
    let own = match r.own_change {
        Some(c) => format!("{} {}", signed_percent(c), interval(r.own_ci)),
        None => "-".into(),
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
    format!(
        "| {} | {}{} | {} | {} | {} | {} | {} | {} | {} |\n",
        r.kernel,
        r.params,
        threads,
        r.metric,
        value(r.baseline),
        value(r.current),
        change,
        interval(r.ci),
        own,
        verdict
    )
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
    fn percentages_keep_their_sign_and_infinity() {
        assert_eq!(percent(0.1), "10%");
        assert_eq!(percent(0.025), "2.5%");
        assert_eq!(signed_percent(0.123), "+12.3%");
        assert_eq!(signed_percent(-0.05), "-5.0%");
        assert_eq!(signed_percent(f64::INFINITY), "+∞");
        assert_eq!(signed_percent(f64::NEG_INFINITY), "-∞");
    }

    #[test]
    fn plain_passes_are_counted_unless_all_rows_are_asked_for() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let more_misses = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 9);
        let v = compare(&base, &more_misses, &CompareOptions::default(), None).unwrap();
        let short = v.to_markdown("b.json", false);
        let listed = |md: &str| md.lines().filter(|l| l.starts_with("| row-sum")).count();
        assert_eq!(listed(&short), 1, "{short}");
        assert!(short.contains("| L1d misses (simulated) | 7 | 9 | +28.6% |"));
        assert!(
            short.contains("2 more row(s) unchanged or reference"),
            "{short}"
        );
        let full = v.to_markdown("b.json", true);
        assert_eq!(listed(&full), 2, "{full}");
        assert!(!full.contains("more row(s)"));
        // Everything passes: no table at all, only the count.
        let same = compare(&base, &base, &CompareOptions::default(), None).unwrap();
        let quiet = same.to_markdown("b.json", false);
        assert!(!quiet.contains("| kernel |"), "{quiet}");
        assert!(
            quiet.contains("All 4 row(s) unchanged or reference"),
            "{quiet}"
        );
    }
}
