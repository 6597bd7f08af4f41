//! `stridelab layout`'s cache part, in the seeds' plain voice: where the levels came from, then
//! each level's sentences (`explain::sentences`), every one behind the label of its topic. The
//! sentences and every number in them are the library's; this file only labels and lays out.

use std::fmt::Write as _;

use crate::explain::levels::GeometryExplanation;
use crate::explain::sentences::level_sentences;
use crate::explain::words::{Sentence, Topic};

/// The cache part of `layout`'s explanation: where the levels came from, then each level.
pub fn geometry_text(explained: &GeometryExplanation) -> String {
    let mut out = format!("\ncaches    {}\n", explained.geometry_source);
    for entry in &explained.caches {
        out.push('\n');
        out.push_str(&render(&level_sentences(entry)));
    }
    out
}

/// One line per sentence, behind its topic's label (ten columns, walk details indented).
fn render(sentences: &[Sentence]) -> String {
    let mut out = String::new();
    for s in sentences {
        let label = match s.topic {
            Topic::Cache => "cache     ".to_string(),
            Topic::Warning => "warning   ".to_string(),
            Topic::Walks => "walks     ".to_string(),
            Topic::Strides => "strides   ".to_string(),
            Topic::View => "view      ".to_string(),
            Topic::Sets => "sets      ".to_string(),
            Topic::StripRow => {
                let _ = writeln!(out, "  |{}|", s.text);
                continue;
            }
            Topic::Walk(n) => format!("walk {n}    "),
            Topic::Model => "  model   ".to_string(),
            Topic::Pass(n) => format!("  pass {n}  "),
            Topic::Note => "  note    ".to_string(),
            Topic::Verdict => "  verdict ".to_string(),
            Topic::Differs => "  differs ".to_string(),
            Topic::Padding => "padding   ".to_string(),
            Topic::ChangedWalk(n) => format!("  walk {n}  "),
            Topic::Instead => "instead   ".to_string(),
        };
        out.push_str(&label);
        out.push_str(&s.text);
        out.push('\n');
    }
    out
}
