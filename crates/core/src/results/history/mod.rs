//! A run against earlier runs of the same points on the same machine: for every point the change
//! since a baseline run (the previous run, or a named one), with an interval, judged against the
//! run-to-run noise those earlier runs show — never against one run's own confidence interval,
//! which says nothing of how far a second run lands (machine state moves whole runs).
//!
//! The rules:
//! 1. Only runs on the same CPU model and detected cache geometry are compared or used for the
//!    noise (timings do not carry across machines).
//! 2. A point's figure is its time ÷ the copy or read of the same bytes timed interleaved with it
//!    in the same run, where the point has such a reference (machine speed cancels, so it is far
//!    steadier across runs than raw time); otherwise its median time per element ÷ its run's
//!    speed, which the references give ([`figure`]). Each row says which ([`Basis`]).
//! 3. The noise of a point is learnt from the earlier runs only (module `noise`): how much its figure
//!    spread over them gives a band a run's change lies in 99% of the time when nothing changed.
//!    A change counts when it lies beyond that band; its interval is the change ± the band.
//! 4. Without two earlier runs holding a point there is nothing to learn the noise from: the row
//!    says the lab cannot tell yet, never "more than noise".

#![forbid(unsafe_code)]

mod figure;
mod noise;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use figure::{Basis, Figure, figure, figures_of, run_speeds};
pub use noise::{BAND_CONFIDENCE, BAND_FLOOR, NoiseEstimate, PointNoise};

use crate::results::ResultsDocument;
use crate::results::compare::{point_key, timing_not_comparable};

/// A change of the machine's own speed between the two runs (by their references) that the
/// headline mentions: smaller ones are within what back-to-back quiet runs show.
const SPEED_WORTH_SAYING: f64 = 0.05;

/// Most earlier runs the noise is learnt from (the newest): enough pairs for a stable band, and
/// recent enough to describe the machine as it is now.
pub const HISTORY_WINDOW: usize = 10;

/// Why `other` cannot stand beside `current` (another CPU model or cache geometry), if so.
pub fn machine_differs(other: &ResultsDocument, current: &ResultsDocument) -> Option<String> {
    timing_not_comparable(other, current).map(|(_, why)| why)
}

/// The verdict on one point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Slower beyond the noise band: the whole interval lies above no change.
    Slower,
    /// Faster beyond the noise band.
    Faster,
    /// The interval holds no change.
    WithinNoise,
    /// No noise estimate for this point (fewer than two earlier runs hold it).
    CannotTell,
}

impl Verdict {
    pub fn words(&self) -> &'static str {
        match self {
            Verdict::Slower => "slower",
            Verdict::Faster => "faster",
            Verdict::WithinNoise => "within noise",
            Verdict::CannotTell => "cannot tell yet",
        }
    }
}

/// One point of the current run against the baseline run.
#[derive(Debug, Clone, PartialEq)]
pub struct PointChange {
    pub key: String,
    /// The current record's index in its document.
    pub index: usize,
    pub basis: Basis,
    /// The figure as a reader sees it ([`Figure::shown`]) in the baseline and now.
    pub before: f64,
    pub now: f64,
    /// The change of the judged figure ([`Figure::value`]): `now / before − 1`, each divided by
    /// its run's speed for [`Basis::RunSpeed`].
    pub change: f64,
    /// The change's interval (relative, like `change`): the change ± the point's noise band.
    pub interval: Option<(f64, f64)>,
    pub verdict: Verdict,
}

/// The current run against a baseline run, with the noise it was judged by.
#[derive(Debug, Clone, PartialEq)]
pub struct RunComparison {
    /// What the baseline is, in words (`the previous run (FILE, TIME)`, `baseline NAME`).
    pub baseline: String,
    /// The noise learnt from the earlier runs, if any pair of them held a compared point.
    pub noise: Option<NoiseEstimate>,
    /// Earlier runs on this machine the noise could draw on (before the window cut them).
    pub earlier_runs: usize,
    /// Where the earlier runs were found, in words (`reports/`).
    pub noise_source: String,
    pub rows: Vec<PointChange>,
    /// Timed points of the current run the baseline does not hold.
    pub unmatched: usize,
    /// How much faster (−) or slower (+) the machine ran now than in the baseline run, by the
    /// references ([`run_speeds`]); `None` when a run had none.
    pub speed_change: Option<f64>,
}

/// Compares `current` with `baseline`, judging each matched point against the noise the
/// `history` runs show (earlier runs, oldest first; `baseline` may be one of them). Runs of
/// another machine in `history` are dropped (rule 1); a `baseline` of another machine is the
/// error returned.
pub fn compare_runs(
    baseline: (&ResultsDocument, String),
    current: &ResultsDocument,
    history: &[&ResultsDocument],
    noise_source: String,
) -> Result<RunComparison, String> {
    let (base_doc, baseline_label) = baseline;
    if let Some(why) = machine_differs(base_doc, current) {
        return Err(why);
    }
    let same_machine: Vec<&ResultsDocument> = history
        .iter()
        .copied()
        .filter(|doc| machine_differs(doc, current).is_none())
        .collect();
    let window = &same_machine[same_machine.len().saturating_sub(HISTORY_WINDOW)..];
    // Every run whose speed is measured together: the window, the baseline, the current run.
    let mut runs: Vec<&ResultsDocument> = window.to_vec();
    if !window.iter().any(|d| std::ptr::eq(*d, base_doc)) {
        runs.push(base_doc);
    }
    runs.push(current);
    let speeds = run_speeds(&runs);
    let figures: Vec<BTreeMap<String, Figure>> = runs
        .iter()
        .enumerate()
        .map(|(i, doc)| figures_of(doc, speeds.as_ref().map(|s| s[i])))
        .collect();
    let (now, history) = figures.split_last().expect("the current run");
    let base_at = runs
        .iter()
        .position(|d| std::ptr::eq(*d, base_doc))
        .unwrap_or(0);
    let before = &figures[base_at];
    let compared: BTreeMap<String, Basis> = now
        .iter()
        .filter(|(key, fig)| before.get(*key).is_some_and(|b| b.basis == fig.basis))
        .map(|(key, fig)| (key.clone(), fig.basis.clone()))
        .collect();
    let noise = NoiseEstimate::learn(&history[..window.len()], &compared);
    let index_of: BTreeMap<String, usize> = current
        .records
        .iter()
        .map(|r| (point_key(r), r.index))
        .collect();
    let mut rows: Vec<PointChange> = compared
        .keys()
        .map(|key| judge(key, index_of[key], &before[key], &now[key], noise.as_ref()))
        .collect();
    rows.sort_by_key(|r| r.index);
    Ok(RunComparison {
        baseline: baseline_label,
        noise,
        earlier_runs: same_machine.len(),
        noise_source,
        unmatched: now.len() - rows.len(),
        rows,
        speed_change: speeds.map(|s| (s[runs.len() - 1] - s[base_at]).exp() - 1.0),
    })
}

/// Rule 3 for one point.
fn judge(
    key: &str,
    index: usize,
    before: &Figure,
    now: &Figure,
    noise: Option<&NoiseEstimate>,
) -> PointChange {
    let log_change = (now.value / before.value).ln();
    let band = noise.and_then(|n| n.band(key));
    let (interval, verdict) = match band {
        None => (None, Verdict::CannotTell),
        Some(band) => {
            let (low, high) = (log_change - band, log_change + band);
            let verdict = if low > 0.0 {
                Verdict::Slower
            } else if high < 0.0 {
                Verdict::Faster
            } else {
                Verdict::WithinNoise
            };
            (Some((low.exp() - 1.0, high.exp() - 1.0)), verdict)
        }
    };
    PointChange {
        key: key.to_string(),
        index,
        basis: now.basis.clone(),
        before: before.shown,
        now: now.shown,
        change: log_change.exp() - 1.0,
        interval,
        verdict,
    }
}

impl RunComparison {
    /// How many rows have `verdict`.
    pub fn count(&self, verdict: &Verdict) -> usize {
        self.rows.iter().filter(|r| &r.verdict == verdict).count()
    }

    /// The sentence that sums the comparison up, from its counts.
    pub fn headline(&self) -> String {
        let n = self.rows.len();
        let cannot = self.count(&Verdict::CannotTell);
        let against = format!("against {}", self.baseline);
        if n == 0 {
            return format!("{against}: no timed point matches");
        }
        if cannot == n {
            return format!(
                "{against}: {n} matched point{} — cannot tell yet whether any changed: the \
                 run-to-run noise is learnt from earlier runs of the same points on this machine, \
                 and {} (run again to add one)",
                plural(n),
                match self.earlier_runs {
                    0 => "no earlier run holds them; two are needed".to_string(),
                    1 => "only one earlier run holds them; two are needed".to_string(),
                    k => format!("no two of the {k} earlier runs hold the same point"),
                }
            );
        }
        let slower = self.count(&Verdict::Slower);
        let faster = self.count(&Verdict::Faster);
        let mut text = format!(
            "{against}: {slower} of {n} matched point{} slower beyond the run-to-run noise, \
             {faster} faster, {} within it",
            plural(n),
            self.count(&Verdict::WithinNoise)
        );
        if cannot > 0 {
            text.push_str(&format!(
                "; {cannot} cannot be judged yet (no two earlier runs hold them)"
            ));
        }
        if let Some(speed) = self.speed_change.filter(|s| s.abs() >= SPEED_WORTH_SAYING) {
            text.push_str(&format!(
                "; the same-run copies and reads themselves took {} {} than in the baseline run, \
                 so the machine was in another state",
                percent(speed.abs()),
                if speed > 0.0 { "longer" } else { "less time" }
            ));
        }
        text
    }

    /// Where the noise came from and how large it is, and how points without a reference were
    /// put on one footing, in one or two sentences.
    pub fn noise_sentence(&self) -> String {
        let Some(noise) = &self.noise else {
            return format!(
                "run-to-run noise: no estimate yet ({} earlier run{} of these points on this \
                 machine in {}; it takes two)",
                self.earlier_runs,
                plural(self.earlier_runs),
                self.noise_source
            );
        };
        let median = noise.median_band();
        let median = if median > SHOWN_LIMIT {
            "wider than ±1000%: too few runs yet to resolve much".to_string()
        } else {
            format!("±{}", percent(median))
        };
        let mut text = format!(
            "run-to-run noise: learnt from the {} newest earlier run{} on this CPU model and \
             cache geometry in {}; each point's band is the {:.0}% prediction bound for a new \
             run's change given how much the point spread over them (Student's t, ln scale); the \
             median band is {median}",
            noise.runs,
            plural(noise.runs),
            self.noise_source,
            BAND_CONFIDENCE * 100.0,
        );
        let speed_adjusted = self.rows.iter().any(|r| r.basis == Basis::RunSpeed);
        if let (true, Some(speed)) = (speed_adjusted, self.speed_change) {
            text.push_str(&format!(
                ". Points without a same-run reference are judged on time per element ÷ the \
                 run's speed, the median change of every reference copy and read: this run's \
                 references took {} {} than the baseline's",
                percent(speed.abs()),
                if speed > 0.0 { "longer" } else { "less time" }
            ));
        }
        text
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Changes beyond this many times the baseline print as a bound: with two or three earlier runs a
/// band can be thousands of percent wide, and its digits say nothing.
const SHOWN_LIMIT: f64 = 10.0;

/// `+4.1%`, `−12%`: a relative change with two significant digits, signed; `> +1000%` beyond
/// ten times the baseline.
pub fn signed_percent(change: f64) -> String {
    if change > SHOWN_LIMIT {
        return format!("> +{}", percent(SHOWN_LIMIT));
    }
    let sign = if change < 0.0 { "−" } else { "+" };
    format!("{sign}{}", percent(change.abs()))
}

/// `4.1%`, `12%`, `0.3%`: a non-negative fraction as a percentage, two significant digits;
/// `over 1000%` beyond [`SHOWN_LIMIT`].
fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if fraction > SHOWN_LIMIT {
        format!("over {:.0}%", SHOWN_LIMIT * 100.0)
    } else if p >= 10.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}
