//! The sentences of a simulated loop nest (`harness::sim::loops`), each built from the numbers
//! printed beside it: what a reference's innermost step is, which reference takes a level's
//! conflict misses and in which sets, and what the best padded leading dimension did when it
//! was re-simulated.

use crate::cache::geometry::CacheLevel;
use crate::harness::sim::loops_report::{PaddingOutput, ReferenceOutput};
use crate::layout::loops::{ArrayDecl, Declared};
use crate::units::{format_count, format_count_signed, format_in_lines, format_share};

/// `a[j, i] walks a column: 8,192 B (128 lines) per j` — the step in bytes and in the first
/// level's lines, and which dim of the array it moves along (`moved`: the dims whose index
/// the innermost loop changes).
pub fn stride_sentence(
    reference: &str,
    inner: &str,
    stride_bytes: i64,
    moved: &[usize],
    array: &ArrayDecl,
    levels: &[CacheLevel],
) -> String {
    if stride_bytes == 0 {
        return format!("{reference} stays on one element while {inner} runs (step 0 B)");
    }
    let line = levels.first().map_or(64, |l| u64::from(l.line));
    let walks = match (moved, &array.declared, array.shape.len()) {
        ([0], Declared::Shape { .. }, 2) => "walks a column".to_string(),
        ([d], Declared::Shape { .. }, n) if d + 1 == n => "walks a row".to_string(),
        ([d], _, _) => format!("walks dim {d} of {}", array.name),
        _ => "steps".to_string(),
    };
    let bytes = format_count_signed(stride_bytes);
    if stride_bytes.unsigned_abs() < line {
        format!(
            "{reference} {walks}: {bytes} B per {inner}, {} of a {line} B line, so \
             consecutive iterations share lines",
            format_in_lines(stride_bytes.abs(), line)
        )
    } else {
        format!(
            "{reference} {walks}: {bytes} B = {} lines of {line} B per {inner}, a new line \
             every iteration",
            format_in_lines(stride_bytes, line)
        )
    }
}

/// Per level with conflict misses: the reference that takes most of them, its share, and
/// the sets they fall in. Empty when the references were not counted.
pub fn reference_findings(references: &[ReferenceOutput], levels: &[CacheLevel]) -> Vec<String> {
    let mut findings = Vec::new();
    if references.iter().all(|r| r.levels.is_empty()) {
        return findings;
    }
    for (k, level) in levels.iter().enumerate() {
        let total: u64 = references.iter().map(|r| r.levels[k].conflict).sum();
        let Some(top) = references.iter().max_by_key(|r| r.levels[k].conflict) else {
            continue;
        };
        if total == 0 {
            continue;
        }
        let counts = &top.levels[k];
        let sets: Vec<String> = counts
            .top_conflict_sets
            .iter()
            .map(|(set, n)| format!("set {set} ×{}", format_count(*n)))
            .collect();
        findings.push(format!(
            "{}: {} (statement {}) takes {} of the nest's {} conflict misses ({}), in {} of \
             {} sets (most: {})",
            level.name,
            top.reference,
            top.statement,
            format_count(counts.conflict),
            format_count(total),
            format_share(counts.conflict, total),
            format_count(counts.conflict_sets),
            format_count(u64::from(level.sets)),
            sets.join(", ")
        ));
    }
    if findings.is_empty() {
        findings.push("no reference has a conflict miss on any level (simulated)".to_string());
    }
    findings
}

/// What the padding search found for one array, from its re-simulated counts.
pub fn padding_sentence(
    output: &PaddingOutput,
    array: &ArrayDecl,
    levels: &[CacheLevel],
) -> String {
    let before: u64 = output.conflict_before.iter().sum();
    let per_level = |conflict: &[u64]| -> String {
        levels
            .iter()
            .zip(conflict)
            .map(|(l, c)| format!("{} {}", l.name, format_count(*c)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(best) = output.best.map(|k| &output.candidates[k]) else {
        if output.candidates.is_empty() {
            return format!(
                "padding {}: not searched, re-simulating a candidate would pass the access budget",
                array.name
            );
        }
        let tried: Vec<String> = output.candidates.iter().map(|c| c.ld.to_string()).collect();
        return format!(
            "padding {}: none of ld = {} reduces the nest's {} conflict misses (simulated)",
            array.name,
            tried.join(", "),
            format_count(before)
        );
    };
    let added = best.ld - output.ld;
    let after: u64 = best.conflict.iter().sum();
    let misses_before: u64 = output.misses_before.iter().sum();
    let misses_after: u64 = best.misses.iter().sum();
    format!(
        "padding {}: ld = {} instead of {} (+{}, +{} B per row) cuts the nest's \
         conflict misses from {} to {} ({} → {}) and all its misses from {} to {}, summed over \
         the levels (simulated)",
        array.name,
        best.ld,
        output.ld,
        if added == 1 {
            "1 element".to_string()
        } else {
            format!("{} elements", format_count(added as u64))
        },
        format_count(added as u64 * array.itemsize),
        format_count(before),
        format_count(after),
        per_level(&output.conflict_before),
        per_level(&best.conflict),
        format_count(misses_before),
        format_count(misses_after)
    )
}
