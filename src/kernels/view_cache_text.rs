//! `stridelab layout --cache`'s explanation of a [`ViewCache`] in the seeds' plain voice:
//! strides in bytes and lines, per dimension the gcd with the set count and the sets its walk
//! touches, the whole view's sets and lines, the busiest set against the ways, a verdict, the
//! padding that spreads a conflicting 2-D walk, and a strip of the sets shaded by lines.

use std::fmt::Write as _;

use crate::kernels::view_cache::ViewCache;

/// Shades of the set strip, from no line to the busiest set.
const SHADES: &[u8] = b" .:-=+*#%@";

/// Cells per row of the strip; more sets than [`STRIP_MAX_CELLS`] share a cell.
const STRIP_ROW: usize = 64;
const STRIP_MAX_CELLS: usize = 1024;

/// The cache section appended to `layout`'s explanation.
pub fn cache_text(c: &ViewCache) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cache     {} {}, {}-way, {} sets of {} B lines; {} B per element",
        c.level,
        crate::units::format_size_exact(c.size),
        c.ways,
        c.sets,
        c.line,
        c.itemsize
    );
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
    for (k, d) in c.dims.iter().enumerate() {
        let gcd = match d.gcd_with_sets {
            Some(g) => format!(
                "gcd({}, {}) = {g}",
                lines_of(d.stride_bytes, c.line),
                c.sets
            ),
            None => "not a whole number of lines".to_string(),
        };
        let _ = writeln!(
            out,
            "dim {k}     {} elements {} B apart: {gcd}; the walk touches {} of {} sets, {}",
            d.size,
            d.stride_bytes,
            d.sets_touched,
            c.sets,
            lines_word(d.lines_touched)
        );
    }
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
    for line in verdicts(c) {
        let _ = writeln!(out, "verdict   {line}");
    }
    if let Some(p) = &c.padding {
        let _ = writeln!(
            out,
            "padding   a leading dimension of {} elements ({} lines, coprime with {} sets) \
             spreads that walk over {} sets",
            p.ld,
            lines_of(
                i128::from(p.ld as i64) * i128::from(c.itemsize as i64),
                c.line
            ),
            c.sets,
            p.sets_touched
        );
    }
    simulated_line(&mut out, c);
    if let Some(set_lines) = &c.set_lines {
        out.push_str(&set_strip(set_lines, c.ways));
    }
    out
}

/// The simulated C-order walk's counts, or why it did not run.
fn simulated_line(out: &mut String, c: &ViewCache) {
    match (&c.simulated, &c.simulated_note) {
        (Some(s), _) => {
            let capped = if s.capped {
                format!(" (capped: the first {} accesses only)", s.limit)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "simulated a C-order walk, LRU, cold: {} accesses, {} misses ({} compulsory, {} \
                 capacity, {} conflict){capped}",
                s.accesses, s.misses, s.compulsory, s.capacity, s.conflict
            );
        }
        (None, Some(note)) => {
            let _ = writeln!(out, "simulated not run: {note}");
        }
        (None, None) => {}
    }
}

/// A byte stride in lines: whole, or with its fraction.
fn lines_of(bytes: i128, line: u64) -> String {
    let line = i128::from(line as i64);
    if bytes % line == 0 {
        (bytes / line).to_string()
    } else {
        format!("{:.3}", bytes as f64 / line as f64)
    }
}

/// `n lines`, or `1 line`.
fn lines_word(n: u64) -> String {
    if n == 1 {
        "1 line".to_string()
    } else {
        format!("{n} lines")
    }
}

/// The walk a dimension stands for, in words.
fn walk_name(ndim: usize, k: usize) -> String {
    match (ndim, k) {
        (2, 0) => "a walk down a column".to_string(),
        (2, 1) => "a walk along a row".to_string(),
        (1, 0) => "the walk".to_string(),
        _ => format!("a walk along dim {k}"),
    }
}

/// One sentence per conflicting walk, or one saying the view fits.
fn verdicts(c: &ViewCache) -> Vec<String> {
    let capacity = c.sets * c.ways;
    let mut out = Vec::new();
    for (k, d) in c.dims.iter().enumerate() {
        let Some(max) = d.max_lines_per_set else {
            continue;
        };
        if max <= c.ways {
            continue;
        }
        let held = (c.ways * d.sets_touched).min(d.lines_touched);
        let why = if d.lines_touched <= capacity {
            "every access is a conflict miss in an LRU cache".to_string()
        } else if held < capacity {
            format!(
                "every access misses in an LRU cache, and conflicts start after {held} lines, \
                 long before the cache's {capacity} lines are used"
            )
        } else {
            format!("more lines than the cache holds ({capacity}): capacity misses")
        };
        out.push(format!(
            "{} touches {} of {} sets; {} ways hold {held} of its {} lines: {why}",
            walk_name(c.dims.len(), k),
            d.sets_touched,
            c.sets,
            c.ways,
            d.lines_touched
        ));
    }
    if out.is_empty() {
        match (c.fits, c.lines_touched) {
            (Some(true), Some(lines)) => out.push(format!(
                "the view's {lines} lines fit ({} ways per set): after one pass every access hits",
                c.ways
            )),
            (Some(false), Some(lines)) => out.push(format!(
                "no single walk overfills a set, but the whole view's {lines} lines do: a second \
                 pass misses where a set holds more than {} lines",
                c.ways
            )),
            _ => {}
        }
    }
    out
}

/// One cell per set (or per group of sets, the busiest of the group), shaded by distinct lines
/// from ' ' (none) to '@' (the busiest set), 64 cells per row.
pub fn set_strip(set_lines: &[u64], ways: u64) -> String {
    let group = set_lines.len().div_ceil(STRIP_MAX_CELLS).max(1);
    let cells: Vec<u64> = set_lines
        .chunks(group)
        .map(|g| g.iter().copied().max().unwrap_or(0))
        .collect();
    let max = cells.iter().copied().max().unwrap_or(0);
    let top = SHADES.len() as u64 - 1;
    let mut out = String::new();
    let per = if group == 1 {
        "one cell per set".to_string()
    } else {
        format!("one cell per {group} sets")
    };
    let _ = writeln!(
        out,
        "sets ({per}; ' ' no line .. '@' {}; {ways} ways)",
        lines_word(max)
    );
    for row in cells.chunks(STRIP_ROW) {
        let text: String = row
            .iter()
            .map(|&n| {
                let shade = if n == 0 || max == 0 {
                    0
                } else {
                    (n * top).div_ceil(max).clamp(1, top)
                };
                SHADES[shade as usize] as char
            })
            .collect();
        let _ = writeln!(out, "  |{text}|");
    }
    out
}
