//! The sentences of a `why` report, each from the numbers beside it: a control's effect and
//! the model's call on it, and the verdict over all controls.

use super::ControlOutcome;
use super::controls::{Factor, NotRun};
use super::judge::{ModelCall, Moved};

fn percent(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn range(ratios: &[f64]) -> String {
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{lo:.2}–{hi:.2}")
}

/// `ld=1025: 0.61× the base's time per element (0.58–0.64 over 3 rounds), beyond the base's
/// own ±3.1%: faster. The cache model predicted it (L1d misses per access 1.000 → 0.125).`
pub(super) fn control_sentence(outcome: &ControlOutcome, band: f64) -> String {
    let noise = percent(band.exp() - 1.0);
    let rounds = outcome.ratios.len();
    if rounds == 0 {
        return format!(
            "{}: not timed (no round gave it a time)",
            outcome.control.change
        );
    }
    let expectation = if outcome.expected == 1.0 {
        String::new()
    } else {
        format!(" (×{} if nothing were shared)", outcome.expected)
    };
    let judged = match outcome.moved {
        Moved::Faster => format!("beyond the base's own ±{noise}: faster"),
        Moved::Slower => format!("beyond the base's own ±{noise}: slower"),
        Moved::Unchanged => format!("within the base's own ±{noise}: no effect"),
        Moved::Unclear => format!(
            "the median beyond the base's own ±{noise}, but not every round: unclear (more \
             rounds would tell)"
        ),
    };
    format!(
        "{}: {:.2}× the base's time per element{expectation} ({} over {rounds} round{}), {judged}. {}",
        outcome.control.change,
        outcome.median,
        range(&outcome.ratios),
        if rounds == 1 { "" } else { "s" },
        model_sentence(&outcome.model, outcome.moved)
    )
}

fn model_sentence(model: &ModelCall, moved: Moved) -> String {
    match model {
        ModelCall::NotModelled { reason } => format!("Not a question for the model: {reason}."),
        ModelCall::NoSimulation => "No simulated misses to compare.".into(),
        ModelCall::Simulated {
            model,
            levels,
            misses,
            agrees,
        } => {
            let changes: Vec<String> = levels
                .iter()
                .map(|l| format!("{} {:.3} → {:.3}", l.level, l.base, l.variant))
                .collect();
            let what = match misses {
                Moved::Unchanged => "no level's misses per access moved by 10%",
                Moved::Faster => "fewer misses per access",
                Moved::Slower => "more misses per access",
                Moved::Unclear => "unclear",
            };
            let changes = changes.join(", ");
            if moved == Moved::Unclear {
                return format!("The {model} say: {what} ({changes}).");
            }
            match (*agrees, moved != Moved::Unchanged) {
                (true, _) => format!("The {model} agree: {what} ({changes})."),
                (false, true) => {
                    format!("The {model} do not explain it: {what} ({changes}).")
                }
                (false, false) => format!(
                    "The {model} predicted {what} ({changes}), which did not move time \
                     beyond noise here."
                ),
            }
        }
    }
}

/// The verdict: which factors moved time beyond noise (and whether the model saw each), which
/// did not, which were not run.
pub(super) fn verdict(controls: &[ControlOutcome], not_run: &[NotRun], band: f64) -> Vec<String> {
    let noise = percent(band.exp() - 1.0);
    let moved: Vec<&ControlOutcome> = controls
        .iter()
        .filter(|c| matches!(c.moved, Moved::Faster | Moved::Slower))
        .collect();
    let mut lines = Vec::new();
    if moved.is_empty() {
        lines.push(format!(
            "No control moved time beyond the base's own ±{noise}: none of the factors below \
             explains this point's time."
        ));
    } else {
        lines.push(format!(
            "Time moved beyond the base's own ±{noise} with: {}.",
            by_factor(&moved)
        ));
        for unexplained in moved
            .iter()
            .filter(|c| matches!(c.model, ModelCall::Simulated { agrees: false, .. }))
        {
            lines.push(unexplained_sentence(unexplained, controls));
        }
    }
    let quiet: Vec<&ControlOutcome> = controls
        .iter()
        .filter(|c| c.moved == Moved::Unchanged)
        .collect();
    if !quiet.is_empty() {
        lines.push(format!("Within noise: {}.", by_factor(&quiet)));
    }
    let unclear: Vec<&ControlOutcome> = controls
        .iter()
        .filter(|c| c.moved == Moved::Unclear)
        .collect();
    if !unclear.is_empty() {
        lines.push(format!(
            "Unclear (rounds disagree; run more with --rounds): {}.",
            by_factor(&unclear)
        ));
    }
    for n in not_run {
        lines.push(format!("Not run: {}: {}.", n.factor.words(), n.reason));
    }
    lines
}

/// `cache sets (the leading dimension): ld=1025 0.13×, ld=1032 0.24×; shared bandwidth: …`
fn by_factor(controls: &[&ControlOutcome]) -> String {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for c in controls {
        let words = c.control.factor.words();
        let item = format!("{} {:.2}×", c.control.change, c.median);
        match groups.iter_mut().find(|(w, _)| *w == words) {
            Some((_, items)) => items.push(item),
            None => groups.push((words, vec![item])),
        }
    }
    groups
        .iter()
        .map(|(words, items)| format!("{words}: {}", items.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The largest |ln(ratio ÷ expected)| over a control's rounds: how far it ever moved time.
fn largest_move(c: &ControlOutcome) -> f64 {
    c.ratios
        .iter()
        .map(|r| (r / c.expected).ln().abs())
        .fold(0.0, f64::max)
}

/// For a time change the model's misses do not account for: the textbook candidates, less
/// those whose own control never moved time by half as much (they cannot account for it).
fn unexplained_sentence(unexplained: &ControlOutcome, controls: &[ControlOutcome]) -> String {
    let effect = (unexplained.median / unexplained.expected).ln().abs();
    // A factor is ruled out when it was varied and none of its controls ever moved time by
    // half this effect.
    let ruled_out = |factor: Factor| {
        let mut of_factor = controls.iter().filter(|c| c.control.factor == factor);
        of_factor.clone().next().is_some() && of_factor.all(|c| largest_move(c) < effect / 2.0)
    };
    let candidates: Vec<&str> = [
        (Factor::Tlb, "the TLB"),
        (Factor::Tlb, "physical page placement"),
        (
            Factor::MemoryParallelism,
            "prefetch and memory-level parallelism",
        ),
        (Factor::Alignment, "alignment"),
    ]
    .iter()
    .filter(|(factor, _)| !ruled_out(*factor))
    .map(|(_, words)| *words)
    .collect();
    let excluded: Vec<String> = controls
        .iter()
        .filter(|c| {
            matches!(
                c.control.factor,
                Factor::Tlb | Factor::MemoryParallelism | Factor::Alignment
            ) && ruled_out(c.control.factor)
        })
        .map(|c| {
            format!(
                "{} moved it at most {:.0}%",
                c.control.change,
                (largest_move(c).exp() - 1.0) * 100.0
            )
        })
        .collect();
    let mut sentence = format!(
        "The cache model's misses do not account for {} ({:.2}×): what moved the time lies \
         outside its sets and capacity; textbook candidates: {}",
        unexplained.control.change,
        unexplained.median,
        if candidates.is_empty() {
            "none left".to_string()
        } else {
            candidates.join(", ")
        }
    );
    if !excluded.is_empty() {
        sentence.push_str(&format!(
            " (ruled out: {}, less than half this effect)",
            excluded.join("; ")
        ));
    }
    sentence.push('.');
    sentence
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::why::controls::Control;
    use crate::kernels::spec::BufferShift;

    fn outcome(factor: Factor, change: &str, ratios: &[f64]) -> ControlOutcome {
        ControlOutcome {
            control: Control {
                factor,
                change: change.into(),
                words: Vec::new(),
                threads: 1,
                huge_pages: false,
                shift: BufferShift::default(),
            },
            ratios: ratios.to_vec(),
            median: super::super::judge::median(ratios),
            expected: 1.0,
            moved: Moved::Faster,
            model: ModelCall::NoSimulation,
            sentence: String::new(),
        }
    }

    #[test]
    fn a_factor_is_ruled_out_only_when_none_of_its_controls_moved_half_the_effect() {
        let padded = outcome(Factor::SetsElement, "ld=1025", &[0.5, 0.5]);
        // (the alignment controls' ratios, whether alignment stays a candidate)
        let cases: [(&[f64], &[f64], bool); 3] = [
            (&[1.0, 1.01], &[0.99, 1.0], false),
            (&[1.0, 1.01], &[0.6, 0.62], true),
            (&[0.7, 0.7], &[1.0, 1.0], true),
        ];
        for (line, page, candidate) in cases {
            let controls = [
                padded.clone(),
                outcome(Factor::Alignment, "source +64 B", line),
                outcome(Factor::Alignment, "source +4 KiB", page),
            ];
            let sentence = unexplained_sentence(&padded, &controls);
            let candidates = sentence.split("textbook candidates:").nth(1).unwrap();
            let listed = candidates.split(" (ruled out").next().unwrap();
            assert_eq!(listed.contains("alignment"), candidate, "{sentence}");
            assert_eq!(
                sentence.contains("source +64 B moved it"),
                !candidate,
                "{sentence}"
            );
        }
    }
}
