//! Everything `stridelab layout` says about a view on one cache level, as [`Sentence`]s in the
//! order it says them: the level's geometry and warnings, the strides in bytes and lines, the
//! whole view's sets and lines (and the strip of sets), then each walk a verdict is about
//! ([`walk_sentences`]) and the padding advice ([`padding_sentences`]); or, for a level that
//! adds nothing to the levels above ([`LevelBrief`]), the one sentence saying so.
//!
//! Every number is the [`LevelReport`]'s; a renderer only labels the sentences by their
//! [`Topic`] and lays them out.

use crate::explain::levels::LevelEntry;
use crate::explain::padding_words::padding_sentences;
use crate::explain::report::{LevelBrief, LevelReport};
use crate::explain::strip::set_strip;
use crate::explain::words::{
    Sentence, Topic, first_pass_counts, lines_word, pass_counts, said, walk_sentences,
};
use crate::units::{format_in_lines as lines_of, format_size_exact};

/// The sentences of one level of a chosen geometry: explained, or why it is not.
pub fn level_sentences(entry: &LevelEntry) -> Vec<Sentence> {
    match entry {
        LevelEntry::Explained(report) => report_sentences(report),
        LevelEntry::Unavailable {
            level, unavailable, ..
        } => vec![said(Topic::Cache, format!("{level}: {unavailable}"))],
    }
}

/// The sentences of one explained level: in full, or its geometry and the brief.
pub fn report_sentences(report: &LevelReport) -> Vec<Sentence> {
    let c = &report.cache;
    let mut out = vec![said(
        Topic::Cache,
        format!(
            "{} {}, {}-way, {} sets of {} B lines ({}); {} B per element",
            c.level,
            format_size_exact(c.size),
            c.ways,
            c.sets,
            c.line,
            lines_word(c.sets * c.ways),
            c.itemsize
        ),
    )];
    for warning in &report.warnings {
        out.push(said(Topic::Warning, warning.as_str()));
    }
    if !report.warnings.is_empty() {
        out.push(said(
            Topic::Warning,
            format!(
                "{0} is explained as given; --cache {0}=SIZE,WAYS,LINE replaces it",
                c.level
            ),
        ));
    }
    if let Some(brief) = &report.brief {
        out.push(said(Topic::Walks, brief_text(report, brief)));
        return out;
    }
    let bytes: Vec<String> = c.strides_bytes.iter().map(|b| b.to_string()).collect();
    let lines: Vec<String> = c
        .strides_bytes
        .iter()
        .map(|&b| lines_of(b, c.line))
        .collect();
    out.push(said(
        Topic::Strides,
        format!(
            "[{}] bytes = [{}] lines",
            bytes.join(", "),
            lines.join(", ")
        ),
    ));
    let view = match (c.sets_touched, c.lines_touched, c.max_lines_per_set) {
        (Some(sets), Some(lines), Some(max)) => format!(
            "touches {} in {sets} of {} sets; the busiest set gets {} for {} ways",
            lines_word(lines),
            c.sets,
            lines_word(max),
            c.ways
        ),
        _ => c
            .counts_note
            .as_deref()
            .unwrap_or("not computed")
            .to_string(),
    };
    out.push(said(Topic::View, view));
    if let Some(set_lines) = &c.set_lines {
        let strip = set_strip(set_lines, c.ways);
        out.push(said(Topic::Sets, strip.legend));
        out.extend(strip.rows.into_iter().map(|row| said(Topic::StripRow, row)));
    }
    if !report.walks.is_empty() {
        out.push(said(
            Topic::Walks,
            format!(
                "each simulated on {} alone (LRU; misses split into compulsory, capacity, \
                 conflict)",
                c.level
            ),
        ));
    }
    for (k, walk) in report.walks.iter().enumerate() {
        out.extend(walk_sentences(c, k, walk));
    }
    if let Some(advice) = &report.padding {
        out.extend(padding_sentences(c, advice));
    }
    out
}

/// The one sentence of a level that adds nothing to the levels above, with the counts that
/// say so.
pub fn brief_text(report: &LevelReport, brief: &LevelBrief) -> String {
    let c = &report.cache;
    match brief {
        LevelBrief::AllFit { walks } => {
            let view = match (c.lines_touched, c.max_lines_per_set) {
                (Some(lines), Some(most)) => format!(
                    "the view's {} take at most {most} of a set's {} ways; ",
                    lines_word(lines),
                    c.ways
                ),
                _ => String::new(),
            };
            let each = match walks {
                1 => "its walk".to_string(),
                n => format!("each of its {n} walks"),
            };
            format!("every walk fits: {view}pass 2 of {each} hits on every access (simulated)")
        }
        LevelBrief::SameAs { level } => {
            let walks: Vec<String> = report
                .walks
                .iter()
                .enumerate()
                .map(|(k, w)| {
                    let mut passes = Vec::new();
                    if let Some(p) = &w.first_pass {
                        passes.push(format!("pass 1: {}", first_pass_counts(w, p)));
                    }
                    match &w.second_pass {
                        Some(p) => passes.push(format!("pass 2: {}", pass_counts(p))),
                        None if w.capped => passes.push("pass 2 not simulated".to_string()),
                        None => {}
                    }
                    format!("walk {} {}", k + 1, passes.join(", "))
                })
                .collect();
            format!(
                "the same counts as on {level} (simulated): {}",
                walks.join("; ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::cache::tests::{level, steps_of};
    use crate::explain::padding::ViewChain;
    use crate::explain::report::explain;

    /// The sentences of `text` (f64 elements) on one `--cache`-given level.
    fn said_of(text: &str, size: u64, ways: u64, line: u64) -> Vec<Sentence> {
        let (steps, layout) = steps_of(text);
        let chain = ViewChain {
            text,
            steps: &steps,
        };
        report_sentences(&explain(&layout, &chain, 8, &level(size, ways, line)).unwrap())
    }

    fn topics(sentences: &[Sentence]) -> Vec<Topic> {
        let mut topics: Vec<Topic> = sentences.iter().map(|s| s.topic).collect();
        topics.dedup();
        topics
    }

    #[test]
    fn a_conflicting_transpose_is_said_walk_by_walk_then_padded() {
        // 256×256 f64 transposed on a 32 KiB 8-way L1d of 64 B lines: a column's 256 lines
        // fall in 2 of 64 sets, so pass 2 misses by conflict and padding is advised.
        let said = said_of("arange(256*256).view(256,256).T", 32 << 10, 8, 64);
        let order = topics(&said);
        let at = |t: Topic| order.iter().position(|&o| o == t);
        assert_eq!(order[..3], [Topic::Cache, Topic::Strides, Topic::View]);
        assert!(at(Topic::Walk(1)) < at(Topic::Walk(2)), "{order:?}");
        assert!(at(Topic::Walk(2)) < at(Topic::Padding), "{order:?}");
        // Each changed walk is one said before the advice, under its own number.
        let padding = at(Topic::Padding).unwrap();
        let changed: Vec<usize> = order[padding..]
            .iter()
            .filter_map(|t| match t {
                Topic::ChangedWalk(n) => Some(*n),
                _ => None,
            })
            .collect();
        assert!(!changed.is_empty(), "{order:?}");
        assert!(
            changed.iter().all(|&n| at(Topic::Walk(n)) < Some(padding)),
            "{order:?}"
        );
        assert!(
            said.iter().any(|s| s.topic == Topic::Verdict
                && s.text.contains("conflict")
                && !s.text.contains("pass 1 (as far as simulated)")),
            "{said:?}"
        );
        assert!(
            said[0].text.starts_with("L1d 32 KiB, 8-way, 64 sets"),
            "{said:?}"
        );
    }

    #[test]
    fn a_small_view_fits_and_nothing_is_advised() {
        let said = said_of("arange(12).view(3,4).T", 32 << 10, 8, 64);
        assert!(said.iter().all(|s| s.topic != Topic::Padding), "{said:?}");
        assert!(
            said.iter()
                .any(|s| s.topic == Topic::Verdict && s.text.starts_with("pass 2 hits on every")),
            "{said:?}"
        );
    }
}
