//! The pieces of `stridelab layout`'s explanation that need only a view's metadata: the
//! chain-of-steps table, the index formula and ranges, the contiguity verdicts, the values
//! nested like NumPy prints them, the strip of storage cells with their visit order, the caret
//! under a parse error and the `--help` list of JSON error kinds.

use std::fmt::Write as _;

use crate::layout::Layout;
use crate::layout::contiguity::{self, Order};
use crate::layout::error::ErrorKind;
use crate::layout::expr::StepResult;

/// Storages up to this many cells get a strip of touched cells...
pub const STRIP_MAX_CELLS: usize = 64;
/// ...when the view has at most this many elements (the strip walks every one of them).
pub const STRIP_MAX_VISITS: usize = 1 << 16;
pub const STRIP_CELLS_PER_ROW: usize = 16;
/// Views up to this many elements print all their values.
pub const VALUES_MAX_SHOWN: usize = 256;

/// The `--help` paragraph listing the JSON error kinds, built from the kinds themselves.
pub fn error_kinds_help() -> String {
    let mut text = String::from(
        "With --json, an error prints {\"error\": {\"kind\": KIND, \"message\": TEXT}} and exits 2. \
         KIND is one of:\n",
    );
    for kind in ErrorKind::ALL {
        let _ = writeln!(text, "  {:<18} {}", kind.as_str(), kind.describe());
    }
    text
}

/// The expression with a caret under `column` (1-based, in characters).
pub fn caret(text: &str, column: usize) -> String {
    let pad = " ".repeat(column.saturating_sub(1));
    format!("  {text}\n  {pad}^\n")
}

/// `loc = 0 + 1·i0 + 4·i1`
pub fn formula(layout: &Layout) -> String {
    let mut f = format!("loc = {}", layout.offset());
    for (k, &s) in layout.strides().iter().enumerate() {
        let sign = if s < 0 { '-' } else { '+' };
        let _ = write!(f, " {sign} {}·i{k}", s.unsigned_abs());
    }
    f
}

pub fn ranges(layout: &Layout) -> String {
    if layout.ndim() == 0 {
        return "(a single element: no indices)".to_string();
    }
    let parts: Vec<String> = layout
        .shape()
        .iter()
        .enumerate()
        .map(|(k, n)| format!("0 ≤ i{k} < {n}"))
        .collect();
    format!("for {}", parts.join(", "))
}

pub fn contiguity_line(layout: &Layout, order: Order) -> String {
    match contiguity::check(layout, order) {
        Ok(()) if layout.numel() == 0 => "yes (an empty view is contiguous)".to_string(),
        Ok(()) => {
            let walk = match order {
                Order::C => "last",
                Order::F => "first",
            };
            format!(
                "yes: walking from the {walk} dim, each stride is the product of the sizes \
                 walked before it (size-1 dims ignored)"
            )
        }
        Err(broken) => format!("no: {}", broken.explain(order)),
    }
}

/// The values nested like NumPy prints them. An empty view prints `[]` without visiting its
/// dims (a shape of `[huge, 0]` would otherwise loop over `huge` empty rows); otherwise every
/// dim is at least 1, so the walk costs at most `values.len() × ndim` steps.
pub fn nested_values(shape: &[usize], values: &[i64]) -> String {
    if values.is_empty() {
        return format!("[] (no elements: shape {shape:?})");
    }
    fn rec(shape: &[usize], values: &[i64], depth: usize, out: &mut String) {
        match shape {
            [] => {
                let _ = write!(out, "{}", values[0]);
            }
            [_] => {
                let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                let _ = write!(out, "[{}]", items.join(", "));
            }
            [n, rest @ ..] => {
                let chunk = values.len() / (*n).max(1);
                out.push('[');
                for k in 0..*n {
                    if k > 0 {
                        out.push_str(",\n");
                        out.push_str(&" ".repeat(depth + 1));
                    }
                    rec(rest, &values[k * chunk..(k + 1) * chunk], depth + 1, out);
                }
                out.push(']');
            }
        }
    }
    let mut out = String::new();
    rec(shape, values, 0, &mut out);
    out
}

/// A strip of the storage: each cell's value and when the view visits it.
pub fn storage_strip(storage: &[i64], layout: &Layout) -> String {
    let mut first_visit: Vec<Option<usize>> = vec![None; storage.len()];
    let mut visits = vec![0usize; storage.len()];
    for (order, offset) in layout.offsets().enumerate() {
        first_visit[offset].get_or_insert(order);
        visits[offset] += 1;
    }
    let touched = visits.iter().filter(|&&v| v > 0).count();
    let repeated = visits.iter().any(|&v| v > 1);
    let mut out = format!(
        "storage cells ({} of {} touched; the visit row gives the order in which the view reads \
         each cell, · = untouched{})\n",
        touched,
        storage.len(),
        if repeated {
            ", n+ = first read at n and read again later"
        } else {
            ""
        }
    );
    let width = storage.len().max(layout.numel()).to_string().len().max(2) + 2;
    for start in (0..storage.len()).step_by(STRIP_CELLS_PER_ROW) {
        let end = (start + STRIP_CELLS_PER_ROW).min(storage.len());
        let mut cell = String::from("  cell  ");
        let mut value = String::from("  value ");
        let mut visit = String::from("  visit ");
        for i in start..end {
            let _ = write!(cell, "{i:>width$}");
            let _ = write!(value, "{:>width$}", storage[i]);
            let mark = match (first_visit[i], visits[i]) {
                (None, _) => "·".to_string(),
                (Some(v), 1) => v.to_string(),
                (Some(v), _) => format!("{v}+"),
            };
            let _ = write!(visit, "{mark:>width$}");
        }
        let _ = writeln!(out, "{cell}\n{value}\n{visit}");
        if end < storage.len() {
            out.push('\n');
        }
    }
    out
}

/// The chain of steps as a table: one row per step with its shape, strides, offset and
/// whether it viewed or copied.
pub fn chain_table(steps: &[StepResult]) -> String {
    let mut out = String::new();
    let rows: Vec<[String; 5]> = steps
        .iter()
        .enumerate()
        .map(|(k, step)| {
            let what = if k == 0 {
                "storage 0..N".to_string()
            } else if step.copied {
                "COPY (new storage)".to_string()
            } else if !step.writable {
                "view, read-only".to_string()
            } else {
                "view".to_string()
            };
            [
                step.text.clone(),
                format!("{:?}", step.layout.shape()),
                format!("{:?}", step.layout.strides()),
                step.layout.offset().to_string(),
                what,
            ]
        })
        .collect();
    let header = ["step", "shape", "strides", "offset", ""];
    let widths: Vec<usize> = (0..5)
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in std::iter::once(header.map(String::from)).chain(rows) {
        let mut line = String::from(" ");
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            let _ = write!(line, " {cell}{}", " ".repeat(pad));
            if c < 4 {
                line.push(' ');
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_formula_and_ranges_of_a_transpose() {
        let layout = Layout::new(vec![4, 3], vec![1, 4], 0, 12).unwrap();
        assert_eq!(formula(&layout), "loc = 0 + 1·i0 + 4·i1");
        assert_eq!(ranges(&layout), "for 0 ≤ i0 < 4, 0 ≤ i1 < 3");
        assert!(contiguity_line(&layout, Order::C).starts_with("no: "));
        assert!(contiguity_line(&layout, Order::F).starts_with("yes: walking from the first"));
    }

    #[test]
    fn values_nest_like_numpy_and_an_empty_view_prints_its_shape() {
        assert_eq!(nested_values(&[2, 2], &[0, 1, 2, 3]), "[[0, 1],\n [2, 3]]");
        assert_eq!(
            nested_values(&[5, 0], &[]),
            "[] (no elements: shape [5, 0])"
        );
        assert_eq!(caret("abc", 3), "  abc\n    ^\n");
    }

    #[test]
    fn the_strip_marks_untouched_and_repeated_cells() {
        let layout = Layout::new(vec![2, 2], vec![0, 2], 0, 3).unwrap();
        let strip = storage_strip(&[10, 11, 12], &layout);
        assert!(strip.contains("(2 of 3 touched"), "{strip}");
        assert!(strip.contains("n+ = first read at n"), "{strip}");
        assert!(strip.contains('·'), "{strip}");
    }

    #[test]
    fn the_help_lists_every_error_kind() {
        let help = error_kinds_help();
        for kind in ErrorKind::ALL {
            assert!(help.contains(kind.as_str()), "{help}");
        }
    }
}
