//! The sentences about one walk of a view on one cache level: which walk it is, what the set
//! model expects of it, its simulated passes, the verdict those counts support — plus the
//! [`Sentence`] a renderer labels and the small phrases every sentence of `explain` shares.
//!
//! Every number a sentence states comes from the data it words (a [`WalkReport`], the level's
//! [`ViewCache`]); the verdicts are [`PassVerdict`]s derived from the simulated counts.

use std::fmt::Write as _;

use crate::explain::cache::{DimCache, ViewCache};
use crate::explain::walks::{
    Expected, MAX_PASS_ACCESSES, PassMisses, PassVerdict, WalkKind, WalkModel, WalkReport,
};
use crate::units::{
    format_count_from_five_digits as grouped, format_in_lines as lines_of, format_size_exact,
};

/// What a sentence of a level's explanation is about, so a renderer can label and indent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// A level's geometry, or why it is not explained.
    Cache,
    /// Why the level's geometry is doubtful, and what replaces it.
    Warning,
    /// What the walks add up to (a level that adds nothing), or how they were simulated.
    Walks,
    Strides,
    /// The whole view's lines and sets.
    View,
    /// The legend of the strip of sets ([`crate::explain::strip`]).
    Sets,
    /// One row of the strip's cells.
    StripRow,
    /// Which walk the sentences that follow are about (numbered from 1).
    Walk(usize),
    /// What the set model expects of the walk.
    Model,
    /// The simulated counts of pass 1 or 2.
    Pass(u32),
    Note,
    Verdict,
    /// Where the simulator's counts contradict the set model.
    Differs,
    /// The padding advice of the level.
    Padding,
    /// A walk (numbered from 1) under the padded or copied storage.
    ChangedWalk(usize),
    /// What a contiguous copy would do instead.
    Instead,
}

/// One sentence of an explanation and what it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    pub topic: Topic,
    pub text: String,
}

pub(crate) fn said(topic: Topic, text: impl Into<String>) -> Sentence {
    Sentence {
        topic,
        text: text.into(),
    }
}

/// The sentences about walk `k` (from 0) of `c`: which, the model, the passes, the verdicts, a
/// disagreement if any.
pub fn walk_sentences(c: &ViewCache, k: usize, w: &WalkReport) -> Vec<Sentence> {
    let mut out = vec![said(Topic::Walk(k + 1), walk_title(c, w))];
    if let Some(model) = &w.model {
        out.push(said(Topic::Model, model_text(c, w, model)));
    }
    if let Some(p) = &w.first_pass {
        out.push(said(Topic::Pass(1), first_pass_counts(w, p)));
    }
    if let Some(p) = &w.second_pass {
        out.push(said(Topic::Pass(2), pass_counts(p)));
    }
    if w.capped {
        out.push(said(
            Topic::Note,
            format!(
                "{} simulated: the walk makes {} accesses, more than {} per pass",
                if w.first_pass.is_some() {
                    "pass 2 not"
                } else {
                    "not"
                },
                grouped(w.accesses),
                grouped(MAX_PASS_ACCESSES)
            ),
        ));
    }
    if let Some(note) = &w.simulated_note {
        out.push(said(Topic::Note, note.as_str()));
    }
    for v in &w.verdict {
        let mut text = verdict_text(c, w.model.as_ref(), v);
        if w.capped {
            text = text.replacen("pass 1", "pass 1 (as far as simulated)", 1);
        }
        out.push(said(Topic::Verdict, text));
    }
    if let Some(d) = &w.disagreement {
        out.push(said(
            Topic::Differs,
            format!("the simulator disagrees with the set model: {d}"),
        ));
    }
    out
}

/// Pass 1's counts; of a capped walk, the part simulated.
pub fn first_pass_counts(w: &WalkReport, p: &PassMisses) -> String {
    let counts = pass_counts(p);
    if !w.capped {
        return counts;
    }
    let misses = counts
        .split_once(", ")
        .map_or(counts.clone(), |(_, m)| m.to_string());
    format!(
        "the first {} of {} accesses: {misses}",
        grouped(MAX_PASS_ACCESSES),
        grouped(w.accesses)
    )
}

/// Which walk, in the view's own index names, and why its repetition matters.
pub fn walk_title(c: &ViewCache, w: &WalkReport) -> String {
    let ndim = c.dims.len();
    match w.walk {
        WalkKind::ViewOrder => {
            let order = match ndim {
                0 => "its one element".to_string(),
                1 => "i0 = 0, 1, …".to_string(),
                n => format!("C order, i{} fastest", n - 1),
            };
            let only = w
                .dim
                .filter(|_| ndim > 1)
                .map(|d| format!("; only dim {d} moves"))
                .unwrap_or_default();
            format!("the view's own order ({order}{only}), twice from a cold cache")
        }
        WalkKind::RepeatedDim { dim } => {
            let mut title = format!("{}, twice from a cold cache", dim_walk_name(ndim, dim));
            if let Some(j) = w.neighbour_in_same_lines {
                let _ = write!(
                    title,
                    ": the next {} lies in the same lines, so a loop over it repeats this walk",
                    neighbour_name(ndim, j)
                );
            }
            title
        }
    }
}

fn dim_walk_name(ndim: usize, dim: usize) -> String {
    match (ndim, dim) {
        (2, 0) => "down a column (dim 0, i1 = 0)".to_string(),
        (2, 1) => "along a row (dim 1, i0 = 0)".to_string(),
        _ => format!("along dim {dim} (every other index 0)"),
    }
}

fn neighbour_name(ndim: usize, dim: usize) -> String {
    match (ndim, dim) {
        (2, 1) => "column (i1 + 1)".to_string(),
        (2, 0) => "row (i0 + 1)".to_string(),
        _ => format!("index along dim {dim}"),
    }
}

/// The model's counts of a walk and what it expects of its passes.
pub fn model_text(c: &ViewCache, w: &WalkReport, m: &WalkModel) -> String {
    let mut text = String::new();
    if let Some(d) = w.dim.map(|d| &c.dims[d]) {
        let _ = write!(text, "{}; ", step_text(c, d));
    }
    let _ = write!(
        text,
        "{} in {} of {} sets, at most {} per set for {} ways; ",
        lines_word(m.lines),
        m.sets_touched,
        c.sets,
        m.max_lines_per_set,
        c.ways
    );
    if w.walk == WalkKind::ViewOrder {
        text.push_str(if m.in_address_order {
            "in address order: pass 1 should miss once per line, "
        } else {
            "out of address order: "
        });
    }
    text.push_str(&expectation_text(m, c.ways));
    text
}

/// `256 elements 2 KiB = 32 lines apart: gcd(32, 64) = 32 → 64/32 = 2 sets`
fn step_text(c: &ViewCache, d: &DimCache) -> String {
    let bytes = d.stride_bytes.unsigned_abs();
    let direction = if d.stride_bytes < 0 {
        ", descending"
    } else {
        ""
    };
    let lines = lines_of(d.stride_bytes.abs(), c.line);
    let mut text = format!(
        "{} elements {} = {lines} lines apart{direction}",
        grouped(d.size as u64),
        format_size_exact(bytes),
    );
    if let Some(g) = d.gcd_with_sets {
        let _ = write!(
            text,
            ": gcd({lines}, {}) = {g} → {}/{g} = {}",
            c.sets,
            c.sets,
            sets_word(c.sets / g)
        );
    }
    text
}

fn expectation_text(m: &WalkModel, ways: u64) -> String {
    match m.second_pass {
        Expected::Exactly { misses: 0, .. } => "pass 2 should hit on every access".to_string(),
        Expected::Exactly {
            misses,
            capacity,
            conflict,
        } => {
            let which = if misses == m.lines {
                format!("all {}", lines_word(misses))
            } else {
                format!(
                    "the {} of the {} over {ways} ways",
                    lines_word(misses),
                    sets_word(m.overfull_sets)
                )
            };
            format!(
                "pass 2 should miss on {which} ({})",
                classes(conflict, capacity)
            )
        }
        Expected::AtLeast { misses } => format!(
            "pass 2 should miss at least {} times ({} over {ways} ways)",
            grouped(misses),
            sets_word(m.overfull_sets)
        ),
    }
}

/// `256 conflict`, `8192 capacity`, or both.
fn classes(conflict: u64, capacity: u64) -> String {
    match (conflict, capacity) {
        (c, 0) => format!("{} conflict", grouped(c)),
        (0, p) => format!("{} capacity", grouped(p)),
        (c, p) => format!("{} conflict, {} capacity", grouped(c), grouped(p)),
    }
}

/// A pass's accesses and misses, the misses split into their three classes.
pub fn pass_counts(p: &PassMisses) -> String {
    let mut text = format!(
        "{} accesses, {} {}",
        grouped(p.accesses),
        grouped(p.misses),
        if p.misses == 1 { "miss" } else { "misses" }
    );
    if p.misses > 0 {
        let _ = write!(
            text,
            " ({} compulsory, {} capacity, {} conflict)",
            grouped(p.compulsory),
            grouped(p.capacity),
            grouped(p.conflict)
        );
    }
    text
}

/// The sentence a verdict stands for, with the model's counts as its reasons.
pub fn verdict_text(c: &ViewCache, m: Option<&WalkModel>, v: &PassVerdict) -> String {
    let cache_lines = c.sets * c.ways;
    match *v {
        PassVerdict::FirstTouchesOnly { lines, reuse_hits } => {
            let mut text = format!(
                "pass 1: every miss is a first touch; each of the {} is fetched once",
                lines_word(lines)
            );
            if reuse_hits > 0 {
                let _ = write!(
                    text,
                    ", and the other {} accesses find their line there",
                    grouped(reuse_hits)
                );
            }
            text
        }
        PassVerdict::Refetched {
            first_touches,
            conflict,
            capacity,
        } => {
            let mut parts = Vec::new();
            if conflict > 0 {
                parts.push(format!(
                    "{} conflict (their set had evicted them while the cache had room)",
                    grouped(conflict)
                ));
            }
            if capacity > 0 {
                parts.push(format!(
                    "{} capacity (more than the cache's {} lines were used before the walk came \
                     back)",
                    grouped(capacity),
                    grouped(cache_lines)
                ));
            }
            format!(
                "pass 1: besides {} first touches, {} accesses miss on lines fetched earlier in \
                 the pass: {}",
                grouped(first_touches),
                grouped(conflict + capacity),
                parts.join(", ")
            )
        }
        PassVerdict::AllHit { .. } => format!(
            "pass 2 hits on every access: no set holds more than {} of the walk's lines",
            c.ways
        ),
        PassVerdict::EveryAccessConflict { .. } => match m {
            Some(m) => format!(
                "every access of pass 2 is a conflict miss: the walk's {} would fit the cache's \
                 {}, but they fall in {}, which hold{} {}",
                lines_word(m.lines),
                grouped(cache_lines),
                sets_word(m.sets_touched),
                if m.sets_touched == 1 { "s" } else { "" },
                grouped(m.sets_touched * c.ways)
            ),
            None => "every access of pass 2 is a conflict miss".to_string(),
        },
        PassVerdict::Misses {
            accesses,
            misses,
            conflict,
            capacity,
        } => misses_text(c, m, accesses, misses, conflict, capacity),
    }
}

/// Pass 2 missed on some accesses: how many, of which class, and the model's reasons.
fn misses_text(
    c: &ViewCache,
    m: Option<&WalkModel>,
    accesses: u64,
    misses: u64,
    conflict: u64,
    capacity: u64,
) -> String {
    let cache_lines = c.sets * c.ways;
    let head = if misses == accesses {
        format!(
            "every access of pass 2 misses ({})",
            classes(conflict, capacity)
        )
    } else {
        format!(
            "pass 2 misses {} of {} accesses ({})",
            grouped(misses),
            grouped(accesses),
            classes(conflict, capacity)
        )
    };
    let mut reasons = Vec::new();
    if let Some(m) = m {
        if conflict > 0 && m.overfull_sets > 0 {
            reasons.push(format!(
                "{} get more than {} lines ({} at most), so LRU evicts each before the walk \
                 comes back",
                sets_word(m.overfull_sets),
                c.ways,
                m.max_lines_per_set
            ));
        }
        if capacity > 0 && m.lines > cache_lines {
            reasons.push(format!(
                "the walk's {} are more than the cache's {}",
                lines_word(m.lines),
                grouped(cache_lines)
            ));
        }
    }
    if reasons.is_empty() {
        head
    } else {
        format!("{head}: {}", reasons.join("; "))
    }
}

/// `n lines`, or `1 line`, the count grouped.
pub(crate) fn lines_word(n: u64) -> String {
    if n == 1 {
        "1 line".to_string()
    } else {
        format!("{} lines", grouped(n))
    }
}

pub(crate) fn sets_word(n: u64) -> String {
    if n == 1 {
        "1 set".to_string()
    } else {
        format!("{} sets", grouped(n))
    }
}
