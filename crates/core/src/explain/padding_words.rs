//! The sentences of a level's padding advice ([`PaddingAdvice`]): which step of the expression
//! lays the storage out in rows and how far apart they are, the padded leading dimension and
//! what each walk's simulated pass 2 does with it, why no padding helps where none does, and
//! what a contiguous copy of the view would do instead. Every count is the advice's own:
//! simulated on the level, never timed.

use std::fmt::Write as _;

use crate::explain::cache::ViewCache;
use crate::explain::padding::{PaddedWalk, PaddingAdvice};
use crate::explain::words::{Sentence, Topic, lines_word, pass_counts, said, sets_word};
use crate::units::{
    format_count_from_five_digits as grouped, format_in_lines as lines_of, format_size_exact,
};

/// The padding advice and, where padding cannot help, what a contiguous copy would do.
pub fn padding_sentences(c: &ViewCache, advice: &PaddingAdvice) -> Vec<Sentence> {
    let mut out = Vec::new();
    match advice {
        PaddingAdvice::Pad {
            rows_step,
            ld,
            padded_ld,
            walks,
        } => {
            out.push(said(
                Topic::Padding,
                format!(
                    "{}. With {} instead ({}, {:.1}% more storage):",
                    rows_text(c, rows_step, *ld),
                    padded_ld,
                    bytes_and_lines(c, *padded_ld),
                    (*padded_ld - *ld) as f64 * 100.0 / *ld as f64
                ),
            ));
            out.extend(changed_walks(c, walks));
        }
        PaddingAdvice::NoRows { alternative } => {
            out.push(said(
                Topic::Padding,
                "no step of the expression lays the storage out in rows: there is no leading \
                 dimension to pad",
            ));
            out.extend(alternative_sentences(c, alternative));
        }
        PaddingAdvice::Unreachable {
            rows_step,
            ld,
            reason,
            alternative,
        } => {
            out.push(said(
                Topic::Padding,
                format!(
                    "{}, but padding them does not reach the walk: {reason}",
                    rows_text(c, rows_step, *ld)
                ),
            ));
            out.extend(alternative_sentences(c, alternative));
        }
        PaddingAdvice::CannotHelp { .. } => out.extend(cannot_help_sentences(c, advice)),
    }
    out
}

/// No leading dimension tried keeps the walks within the ways: the range, why where it can be
/// said (the most sets any leading dimension reached against the sets the lines need), the
/// best one, and the contiguous copy.
fn cannot_help_sentences(c: &ViewCache, advice: &PaddingAdvice) -> Vec<Sentence> {
    let PaddingAdvice::CannotHelp {
        rows_step,
        ld,
        tried_to,
        exhaustive,
        most_sets,
        best_ld,
        best,
        alternative,
    } = advice
    else {
        return Vec::new();
    };
    let range = if *exhaustive {
        format!(
            "from {} to {tried_to} (a whole period of the set pattern)",
            ld + 1
        )
    } else {
        format!(
            "from {} to {tried_to} (as many as the search's budget allows)",
            ld + 1
        )
    };
    let walks: Vec<String> = best
        .iter()
        .map(|w| format!("walk {}", w.walk + 1))
        .collect();
    let mut why = String::new();
    if let (Some(most), [w]) = (most_sets, &best[..]) {
        let step = match w.rows_per_step {
            Some(1) => "a step of 1 row".to_string(),
            Some(r) => format!("a step of {r} rows"),
            None => "the walk".to_string(),
        };
        let _ = write!(why, ": {step} reaches at most {most} of {} sets", c.sets);
        let need = w.lines.div_ceil(c.ways);
        if need > *most {
            let _ = write!(
                why,
                ", and its {} need {} of {} ways",
                lines_word(w.lines),
                sets_word(need),
                c.ways
            );
        }
    }
    let mut out = vec![said(
        Topic::Padding,
        format!(
            "{}. No leading dimension {range} keeps {} within {} lines per set{why}. The best, \
             {best_ld}:",
            rows_text(c, rows_step, *ld),
            walks.join(" and "),
            c.ways
        ),
    )];
    out.extend(changed_walks(c, best));
    out.extend(alternative_sentences(c, alternative));
    out
}

/// `the storage's rows (made by `.view(256,256)`) are 256 elements (2 KiB) apart: its leading dimension`
fn rows_text(c: &ViewCache, rows_step: &str, ld: u64) -> String {
    format!(
        "the storage's rows (made by `{rows_step}`) are {ld} elements ({}) apart: its leading \
         dimension",
        bytes_and_lines(c, ld)
    )
}

/// `2112 B = 33 lines` for a leading dimension of `ld` elements.
fn bytes_and_lines(c: &ViewCache, ld: u64) -> String {
    let bytes = ld * c.itemsize;
    format!(
        "{} = {} lines",
        format_size_exact(bytes),
        lines_of(bytes as i64, c.line)
    )
}

fn alternative_sentences(c: &ViewCache, alternative: &[PaddedWalk]) -> Vec<Sentence> {
    if alternative.is_empty() {
        return Vec::new();
    }
    let mut out = vec![said(
        Topic::Instead,
        "a contiguous copy of the view (`.contiguous()`):",
    )];
    out.extend(changed_walks(c, alternative));
    out
}

fn changed_walks<'a>(
    c: &'a ViewCache,
    walks: &'a [PaddedWalk],
) -> impl Iterator<Item = Sentence> + 'a {
    walks
        .iter()
        .map(|w| said(Topic::ChangedWalk(w.walk + 1), changed_walk_text(c, w)))
}

/// A walk under changed storage: its step, sets and simulated pass 2.
pub fn changed_walk_text(c: &ViewCache, w: &PaddedWalk) -> String {
    let mut text = String::new();
    if let Some(bytes) = w.stride_bytes {
        let rows = match w.rows_per_step {
            Some(1) => "1 row = ".to_string(),
            Some(r) => format!("{r} rows = "),
            None => String::new(),
        };
        let _ = write!(
            text,
            "a step is {rows}{} = {} lines; ",
            format_size_exact(bytes.unsigned_abs()),
            lines_of(bytes.abs(), c.line)
        );
    }
    let _ = write!(
        text,
        "{} in {} of {} sets, at most {} per set for {} ways",
        lines_word(w.lines),
        w.sets_touched,
        c.sets,
        w.max_lines_per_set,
        c.ways
    );
    if let Some(p) = &w.second_pass {
        let _ = write!(text, "; pass 2 simulated: {}", pass_counts(p));
        if let Some(before) = w.misses_before.filter(|&b| b != p.misses) {
            let _ = write!(text, " (was {})", grouped(before));
        }
    }
    text
}
