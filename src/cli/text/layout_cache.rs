//! `stridelab layout`'s cache part, in the seeds' plain voice: where the levels came from, then
//! per level its warnings, the strides in bytes and lines, the whole view's sets and lines (and
//! a strip of the sets shaded by lines), then each walk a verdict is about — which walk, what
//! the set model expects, the simulated passes, the verdict those counts support, any
//! disagreement — and the padding advice; or, for a level the library found adds nothing to
//! the levels above ([`LevelBrief`]), one line saying so.
//!
//! Every number a sentence states comes from the [`LevelReport`] it words: the verdicts are
//! [`PassVerdict`]s derived from the simulated counts printed beside them.

use std::fmt::Write as _;

use crate::kernels::views::cache::{DimCache, ViewCache};
use crate::kernels::views::levels::{GeometryExplanation, LevelEntry};
use crate::kernels::views::padding::{PaddedWalk, PaddingAdvice};
use crate::kernels::views::report::{LevelBrief, LevelReport};
use crate::kernels::views::strip::set_strip;
use crate::kernels::views::walks::{
    Expected, MAX_PASS_ACCESSES, PassMisses, PassVerdict, WalkKind, WalkModel, WalkReport,
};
use crate::units::{
    format_count_from_five_digits as grouped, format_in_lines as lines_of, format_size_exact,
};

/// The cache part of `layout`'s explanation: where the levels came from, then each level.
pub fn geometry_text(explained: &GeometryExplanation) -> String {
    let mut out = format!("\ncaches    {}\n", explained.geometry_source);
    for entry in &explained.caches {
        out.push('\n');
        match entry {
            LevelEntry::Explained(report) => out.push_str(&cache_text(report)),
            LevelEntry::Unavailable {
                level, unavailable, ..
            } => {
                let _ = writeln!(out, "cache     {level}: {unavailable}");
            }
        }
    }
    out
}

/// The cache section of one level: in full, or its header and the brief.
pub fn cache_text(report: &LevelReport) -> String {
    let c = &report.cache;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cache     {} {}, {}-way, {} sets of {} B lines ({}); {} B per element",
        c.level,
        format_size_exact(c.size),
        c.ways,
        c.sets,
        c.line,
        lines_word(c.sets * c.ways),
        c.itemsize
    );
    for warning in &report.warnings {
        let _ = writeln!(out, "warning   {warning}");
    }
    if !report.warnings.is_empty() {
        let _ = writeln!(
            out,
            "warning   {0} is explained as given; --cache {0}=SIZE,WAYS,LINE replaces it",
            c.level
        );
    }
    if let Some(brief) = &report.brief {
        let _ = writeln!(out, "walks     {}", brief_text(report, brief));
        return out;
    }
    let bytes: Vec<String> = c.strides_bytes.iter().map(|b| b.to_string()).collect();
    let lines: Vec<String> = c
        .strides_bytes
        .iter()
        .map(|&b| lines_of(b, c.line))
        .collect();
    let _ = writeln!(
        out,
        "strides   [{}] bytes = [{}] lines",
        bytes.join(", "),
        lines.join(", ")
    );
    match (c.sets_touched, c.lines_touched, c.max_lines_per_set) {
        (Some(sets), Some(lines), Some(max)) => {
            let _ = writeln!(
                out,
                "view      touches {} in {sets} of {} sets; the busiest set gets {} for {} ways",
                lines_word(lines),
                c.sets,
                lines_word(max),
                c.ways
            );
        }
        _ => {
            let note = c.counts_note.as_deref().unwrap_or("not computed");
            let _ = writeln!(out, "view      {note}");
        }
    }
    if let Some(set_lines) = &c.set_lines {
        out.push_str(&set_strip(set_lines, c.ways));
    }
    if !report.walks.is_empty() {
        let _ = writeln!(
            out,
            "walks     each simulated on {} alone (LRU; misses split into compulsory, capacity, \
             conflict)",
            c.level
        );
    }
    for (k, walk) in report.walks.iter().enumerate() {
        walk_text(&mut out, c, k, walk);
    }
    if let Some(advice) = &report.padding {
        padding_text(&mut out, c, advice);
    }
    out
}

/// One walk: which, the model, the passes, the verdicts, a disagreement if any.
fn walk_text(out: &mut String, c: &ViewCache, k: usize, w: &WalkReport) {
    let _ = writeln!(out, "walk {}    {}", k + 1, walk_title(c, w));
    if let Some(model) = &w.model {
        let _ = writeln!(out, "  model   {}", model_text(c, w, model));
    }
    if let Some(p) = &w.first_pass {
        let _ = writeln!(out, "  pass 1  {}", first_pass_counts(w, p));
    }
    if let Some(p) = &w.second_pass {
        let _ = writeln!(out, "  pass 2  {}", pass_counts(p));
    }
    if w.capped {
        let _ = writeln!(
            out,
            "  note    {} simulated: the walk makes {} accesses, more than {} per pass",
            if w.first_pass.is_some() {
                "pass 2 not"
            } else {
                "not"
            },
            grouped(w.accesses),
            grouped(MAX_PASS_ACCESSES)
        );
    }
    if let Some(note) = &w.simulated_note {
        let _ = writeln!(out, "  note    {note}");
    }
    for v in &w.verdict {
        let mut text = verdict_text(c, w.model.as_ref(), v);
        if w.capped {
            text = text.replacen("pass 1", "pass 1 (as far as simulated)", 1);
        }
        let _ = writeln!(out, "  verdict {text}");
    }
    if let Some(d) = &w.disagreement {
        let _ = writeln!(
            out,
            "  differs the simulator disagrees with the set model: {d}"
        );
    }
}

/// Pass 1's counts; of a capped walk, the part simulated.
fn first_pass_counts(w: &WalkReport, p: &PassMisses) -> String {
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

/// The one line of a level that adds nothing to the levels above, with the counts that say so.
fn brief_text(report: &LevelReport, brief: &LevelBrief) -> String {
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

/// Which walk, in the view's own index names, and why its repetition matters.
fn walk_title(c: &ViewCache, w: &WalkReport) -> String {
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
fn model_text(c: &ViewCache, w: &WalkReport, m: &WalkModel) -> String {
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

fn pass_counts(p: &PassMisses) -> String {
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
fn verdict_text(c: &ViewCache, m: Option<&WalkModel>, v: &PassVerdict) -> String {
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

/// The padding advice and, where padding cannot help, what a contiguous copy would do.
fn padding_text(out: &mut String, c: &ViewCache, advice: &PaddingAdvice) {
    match advice {
        PaddingAdvice::Pad {
            rows_step,
            ld,
            padded_ld,
            walks,
        } => {
            let _ = writeln!(
                out,
                "padding   {}. With {} instead ({}, {:.1}% more storage):",
                rows_text(c, rows_step, *ld),
                padded_ld,
                bytes_and_lines(c, *padded_ld),
                (*padded_ld - *ld) as f64 * 100.0 / *ld as f64
            );
            for w in walks {
                let _ = writeln!(out, "  walk {}  {}", w.walk + 1, padded_walk_text(c, w));
            }
        }
        PaddingAdvice::NoRows { alternative } => {
            let _ = writeln!(
                out,
                "padding   no step of the expression lays the storage out in rows: there is no \
                 leading dimension to pad"
            );
            alternative_text(out, c, alternative);
        }
        PaddingAdvice::Unreachable {
            rows_step,
            ld,
            reason,
            alternative,
        } => {
            let _ = writeln!(
                out,
                "padding   {}, but padding them does not reach the walk: {reason}",
                rows_text(c, rows_step, *ld)
            );
            alternative_text(out, c, alternative);
        }
        PaddingAdvice::CannotHelp { .. } => cannot_help_text(out, c, advice),
    }
}

/// No leading dimension tried keeps the walks within the ways: the range, why where it can be
/// said (the most sets any leading dimension reached against the sets the lines need), the
/// best one, and the contiguous copy.
fn cannot_help_text(out: &mut String, c: &ViewCache, advice: &PaddingAdvice) {
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
        return;
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
    let _ = writeln!(
        out,
        "padding   {}. No leading dimension {range} keeps {} within {} lines per set{why}. The \
         best, {best_ld}:",
        rows_text(c, rows_step, *ld),
        walks.join(" and "),
        c.ways
    );
    for w in best {
        let _ = writeln!(out, "  walk {}  {}", w.walk + 1, padded_walk_text(c, w));
    }
    alternative_text(out, c, alternative);
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

fn alternative_text(out: &mut String, c: &ViewCache, alternative: &[PaddedWalk]) {
    if alternative.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "instead   a contiguous copy of the view (`.contiguous()`):"
    );
    for w in alternative {
        let _ = writeln!(out, "  walk {}  {}", w.walk + 1, padded_walk_text(c, w));
    }
}

/// A walk under changed storage: its step, sets and simulated pass 2.
fn padded_walk_text(c: &ViewCache, w: &PaddedWalk) -> String {
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

/// `n lines`, or `1 line`, the count grouped.
fn lines_word(n: u64) -> String {
    if n == 1 {
        "1 line".to_string()
    } else {
        format!("{} lines", grouped(n))
    }
}

fn sets_word(n: u64) -> String {
    if n == 1 {
        "1 set".to_string()
    } else {
        format!("{} sets", grouped(n))
    }
}
