//! A run against an earlier one, as `run` and the main job print it: the headline, where the
//! noise came from, and a table of the points (all of them up to [`ALL_ROWS`], else the ones
//! that changed beyond noise).

use std::fmt::Write as _;

use crate::cli::text::table::{Align, TextTable, wrap};
use crate::results::history::{Basis, PointChange, RunComparison, Verdict, signed_percent};
use crate::units::{format_duration_ns, format_significant};

/// Up to this many compared points every row is printed; beyond it only changed ones.
const ALL_ROWS: usize = 25;

const WIDTH: usize = 100;
const INDENT: &str = "  ";

/// The comparison as text (`quiet`: the headline only).
pub fn comparison_text(comparison: &RunComparison, quiet: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        wrap(&comparison.headline(), WIDTH, INDENT).trim_end()
    );
    if quiet {
        return out;
    }
    let _ = writeln!(
        out,
        "{}",
        wrap(&comparison.noise_sentence(), WIDTH, INDENT).trim_end()
    );
    let all = comparison.rows.len() <= ALL_ROWS;
    let shown: Vec<&PointChange> = comparison
        .rows
        .iter()
        .filter(|r| all || matches!(r.verdict, Verdict::Slower | Verdict::Faster))
        .take(ALL_ROWS)
        .collect();
    if shown.is_empty() {
        return out;
    }
    // The words every listed point shares go above the table once, so rows show what varies.
    let shared: Vec<&str> = shown[0]
        .key
        .split(' ')
        .filter(|word| shown.iter().all(|r| r.key.split(' ').any(|w| w == *word)))
        .collect();
    if shown.len() > 1 && !shared.is_empty() {
        let _ = writeln!(out, "{INDENT}points: {} …", shared.join(" "));
    }
    let label = |key: &str| {
        let own: Vec<&str> = key.split(' ').filter(|w| !shared.contains(w)).collect();
        if shown.len() > 1 && !own.is_empty() {
            own.join(" ")
        } else {
            key.to_string()
        }
    };
    let mut table = TextTable::new(&[
        ("point", Align::Left),
        ("judged on", Align::Left),
        ("before", Align::Right),
        ("now", Align::Right),
        ("change", Align::Right),
        ("interval", Align::Right),
        ("verdict", Align::Left),
    ]);
    for row in &shown {
        table.push(vec![
            label(&row.key),
            row.basis.label(),
            value(&row.basis, row.before),
            value(&row.basis, row.now),
            signed_percent(row.change),
            row.interval
                .map(|(lo, hi)| format!("{} … {}", signed_percent(lo), signed_percent(hi)))
                .unwrap_or_else(|| "-".into()),
            row.verdict.words().to_string(),
        ]);
    }
    out.push_str(&table.render(INDENT));
    let hidden = comparison.rows.len() - shown.len();
    if hidden > 0 {
        let _ = writeln!(
            out,
            "{INDENT}({hidden} more point(s) within noise or not judged yet, not listed)"
        );
    }
    out
}

fn value(basis: &Basis, value: f64) -> String {
    match basis {
        Basis::Reference(_) => format!("{}×", format_significant(value)),
        Basis::OwnTime | Basis::RunSpeed => format_duration_ns(value),
    }
}

/// What a run prints after its summary about earlier runs: the notes, then the comparison or
/// why there is none (`quiet`: the headline only).
pub fn history_text(
    outcome: Option<Result<RunComparison, String>>,
    notes: &[String],
    quiet: bool,
) -> String {
    let mut out = String::new();
    for note in notes {
        let _ = writeln!(out, "{}", wrap(note, WIDTH, INDENT).trim_end());
    }
    match outcome {
        Some(Ok(comparison)) => out.push_str(&comparison_text(&comparison, quiet)),
        Some(Err(why)) => {
            let _ = writeln!(out, "not compared with the baseline: {why}");
        }
        None => {}
    }
    out
}
