//! Runs compared on the page: a run against the earlier runs of its points (the main job), and
//! runs given together (`report --in A --in B`), each later one against the first. Both follow
//! `results::history`'s rule: a change counts only beyond the run-to-run noise learnt from
//! earlier runs on the same machine, never from one run's own interval; without such runs the
//! table says it cannot tell yet.
#![forbid(unsafe_code)]

use stridelab_core::results::ResultsDocument;
use stridelab_core::results::history::{
    Basis, PointChange, RunComparison, Verdict, compare_runs, machine_differs, signed_percent,
};

use super::ReportInput;
use super::chart::format_number;
use super::claims::Claim;
use super::figures::Table;

/// The CPU model a run recorded.
fn cpu_model(doc: &ResultsDocument) -> &str {
    doc.info
        .get("cpu_model")
        .and_then(|v| v.as_str())
        .unwrap_or("unknown CPU")
}

/// The comparison of input `other` (labelled `other_label`) against the first input: a
/// sentence and the table of matched points; `None` when no point matches. The noise comes from
/// the runs before `other` on its machine: the other inputs and `other.earlier`.
pub fn comparison(
    base: &ReportInput,
    base_label: &str,
    inputs: &[ReportInput],
    other: &ReportInput,
    other_label: &str,
) -> Option<(Claim, Table)> {
    let mut history: Vec<&ResultsDocument> = inputs
        .iter()
        .map(|i| &i.doc)
        .chain(other.earlier.iter())
        .filter(|d| d.started_unix_s < other.doc.started_unix_s)
        .collect();
    history.sort_by_key(|d| d.started_unix_s);
    history.dedup_by_key(|d| (d.started_unix_s, d.wall_s.to_bits()));
    let source = if other.earlier.is_empty() {
        "the runs given".to_string()
    } else {
        format!("the runs given and {}", other.earlier_source)
    };
    match compare_runs(
        (&base.doc, base_label.to_string()),
        &other.doc,
        &history,
        source,
    ) {
        Ok(found) if found.rows.is_empty() => None,
        Ok(found) => Some(rendered(&found, other_label, base_label)),
        Err(_) => other_machine(&base.doc, base_label, &other.doc, other_label),
    }
}

/// The comparison of a run with the earlier runs of its points (the main job's), for the page.
pub fn against_earlier(found: &RunComparison, label: &str) -> Option<(Claim, Table)> {
    (!found.rows.is_empty()).then(|| rendered(found, label, &found.baseline))
}

fn rendered(found: &RunComparison, other_label: &str, base_label: &str) -> (Claim, Table) {
    let claim = Claim::derived(
        "compare.summary",
        format!(
            "{other_label}, {}. {} (timed).",
            found.headline(),
            capitalised(&found.noise_sentence())
        ),
    );
    let table = Table {
        caption: format!("{other_label} against {base_label}: matched points"),
        headers: vec![
            "point".into(),
            "judged on".into(),
            "before (timed)".into(),
            "now (timed)".into(),
            "change".into(),
            "interval (± run-to-run noise)".into(),
            "verdict".into(),
        ],
        rows: by_verdict(found).into_iter().map(row).collect(),
    };
    (claim, table)
}

/// The rows called changed first (slower, then faster), then the rest, each in suite order.
fn by_verdict(found: &RunComparison) -> Vec<&PointChange> {
    let rank = |v: &Verdict| match v {
        Verdict::Slower => 0,
        Verdict::Faster => 1,
        Verdict::WithinNoise => 2,
        Verdict::CannotTell => 3,
    };
    let mut rows: Vec<&PointChange> = found.rows.iter().collect();
    rows.sort_by_key(|r| (rank(&r.verdict), r.index));
    rows
}

fn row(change: &PointChange) -> Vec<String> {
    let value = |v: f64| match &change.basis {
        Basis::Reference(_) => format!("{}×", format_number(v)),
        Basis::OwnTime | Basis::RunSpeed => format!("{} ns/elem", format_number(v)),
    };
    vec![
        change.key.clone(),
        change.basis.label(),
        value(change.before),
        value(change.now),
        signed_percent(change.change),
        change
            .interval
            .map(|(lo, hi)| format!("{} … {}", signed_percent(lo), signed_percent(hi)))
            .unwrap_or_else(|| "—".into()),
        change.verdict.words().to_string(),
    ]
}

/// Runs of two machines: their times stand side by side, but no ratio between them is judged.
fn other_machine(
    base: &ResultsDocument,
    base_label: &str,
    other: &ResultsDocument,
    other_label: &str,
) -> Option<(Claim, Table)> {
    let why = machine_differs(base, other)?;
    Some((
        Claim::derived(
            "compare.other-machine",
            format!(
                "{other_label} and {base_label} are not compared: {why}. Each run's own \
                 sections stand side by side above."
            ),
        ),
        Table {
            caption: format!("{other_label} against {base_label}"),
            headers: vec!["first run".into(), "second run".into()],
            rows: vec![vec![cpu_model(base).into(), cpu_model(other).into()]],
        },
    ))
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
