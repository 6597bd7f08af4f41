//! The run summary's tables, footnotes and warning lines, rendered from built documents.

use super::*;
use crate::harness::catalogue_link::{find, resolve_params};
use crate::results::schema::tests::sample_document;
use crate::results::test_docs::simulated_l1;
use crate::results::{Precision, PrecisionWarning, Timing};

fn recorded_fixture() -> ResultsDocument {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/gate/recorded.json"
    );
    ResultsDocument::read(std::path::Path::new(path), &crate::kernels::CATALOGUE_RULES).unwrap()
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// One timed, simulated record of `kernel` per argument list.
fn points(kernel: &str, rows: &[&[(&str, &str)]]) -> ResultsDocument {
    let mut doc = sample_document();
    let template = doc.records[0].clone();
    doc.records = rows
        .iter()
        .enumerate()
        .map(|(index, args)| {
            let args: Vec<(String, String)> = args
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let mut r = template.clone();
            r.index = index;
            r.kernel = kernel.into();
            r.params = resolve_params(find(kernel).unwrap(), &args).unwrap();
            r.simulated = Some(simulated_l1(16));
            r
        })
        .collect();
    doc.suite.points = rows.len();
    doc
}

#[test]
fn a_grid_is_cut_into_tables_whose_labels_name_what_varies() {
    // dtype × stride: one table per dtype, rows labelled by stride alone.
    let grid = points(
        "stride-sum",
        &[
            &[("len", "4M"), ("stride", "1")],
            &[("len", "4M"), ("stride", "8")],
            &[("len", "8M"), ("stride", "1"), ("dtype", "f32")],
            &[("len", "8M"), ("stride", "8"), ("dtype", "f32")],
        ],
    );
    let tables = blocks(&grid.records);
    assert_eq!(tables.len(), 2);
    assert_eq!(tables[0].labels, ["stride=1 (8 B)", "stride=8 (64 B)"]);
    assert_eq!(tables[1].labels, ["stride=1 (4 B)", "stride=8 (32 B)"]);
    assert_eq!(
        tables[1].shared,
        ["dtype=f32", "len=8388608 (32 MiB)", "1 thread"]
    );
    // count × stride fits one label: one table.
    let probes = points(
        "conflict",
        &[
            &[("count", "8"), ("stride", "512")],
            &[("count", "8"), ("stride", "513")],
            &[("count", "16"), ("stride", "512")],
        ],
    );
    let tables = blocks(&probes.records);
    assert_eq!(tables.len(), 1);
    assert_eq!(tables[0].labels[2], "count=16 stride=512 (4 KiB)");
    // Another kernel starts another table; a lone record labels nothing.
    let mut mixed = probes.clone();
    mixed.records.extend(grid.records.into_iter().take(1));
    let tables = blocks(&mixed.records);
    assert_eq!(tables.len(), 2);
    assert_eq!(tables[1].labels, [""]);
    let text = run_summary(&mixed, false);
    assert!(
        text.contains("stride-sum: dtype=f64 len=4194304 (32 MiB) stride=1 (8 B) · 1 thread"),
        "{text}"
    );
}

#[test]
fn a_grid_over_long_expressions_is_one_table_with_aliases_and_a_legend() {
    let a = "arange(1048576).view(1024,1024).T";
    let b = "arange(1048576).view(1024,1024).flip(0)";
    let mut views = points(
        "view-sum",
        &[&[("expr", a)], &[("expr", b)], &[("expr", a)]],
    );
    for (r, ns) in views.records.iter_mut().zip([6.6, 0.25, 6.6]) {
        r.timing.as_mut().unwrap().ns_per_element = ns;
    }
    let tables = blocks(&views.records);
    assert_eq!(tables.len(), 1, "one table for one kernel's grid");
    assert_eq!(tables[0].labels, ["expr #1", "expr #2", "expr #1"]);
    assert_eq!(
        tables[0].legend,
        [format!("expr #1 = {a}"), format!("expr #2 = {b}")]
    );
    assert_eq!(tables[0].full_labels[1], format!("expr={b}"));
    let text = run_summary(&views, false);
    for needle in [
        "expr #2",
        "26.4× faster",
        &format!("  expr #1 = {a}\n"),
        &format!("  expr #2 = {b}\n"),
    ] {
        assert!(text.contains(needle), "missing `{needle}` in\n{text}");
    }
    assert!(widest(&text) <= MAX_WIDTH, "{text}");
    // Labels that fit spelled out are not aliased.
    let fit = points("view-sum", &[&[("expr", a)], &[("expr", "arange(128)")]]);
    assert_eq!(
        blocks(&fit.records)[0].labels,
        [format!("expr={a}"), "expr=arange(128)".to_string()]
    );
    assert!(blocks(&fit.records)[0].legend.is_empty());
}

/// Conflict probes at strides 511, 512, 513 timed at `ns_per_run`, with `warnings`.
fn conflict_probes(ns_per_run: [f64; 3], warnings: &[PrecisionWarning]) -> ResultsDocument {
    let mut doc = points(
        "conflict",
        &[
            &[("stride", "511"), ("count", "16")],
            &[("stride", "512"), ("count", "16")],
            &[("stride", "513"), ("count", "16")],
        ],
    );
    for (r, ns) in doc.records.iter_mut().zip(ns_per_run) {
        let t: &mut Timing = r.timing.as_mut().unwrap();
        t.ns_per_run.median = ns;
        t.ns_per_element = ns / 1600.0;
        t.gb_per_s = None;
        t.precision = Some(Precision {
            target_relative_ci: 0.005,
            outliers: None,
            drift: None,
            warnings: warnings.to_vec(),
        });
    }
    doc.records[1].simulated = Some(simulated_l1(1600));
    doc
}

#[test]
fn shared_parameters_go_to_the_header_and_rows_name_what_varies_in_exact_bytes() {
    let text = run_summary(&conflict_probes([1011.0, 3620.0, 858.0], &[]), false);
    for needle in [
        "conflict: count=16 mode=thr reps=100 seed=1 · 1 thread\n",
        "stride=511 (4,088 B)",
        "stride=512 (4 KiB)",
        "stride=513 (4,104 B)",
        "1.01 µs",
        "858 ns",
        "(first)",
        "3.58× slower",
        "1.18× faster",
        "1,600 (0)",
        "L1d miss",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in\n{text}");
    }
    assert!(!text.contains("4.0 KiB"), "{text}");
    // No precision warnings: no `!` column, no legend.
    assert!(!text.contains("!:"), "{text}");
    assert!(widest(&text) <= MAX_WIDTH, "{text}");
}

#[test]
fn precision_warnings_are_marked_and_explained() {
    let warnings = [PrecisionWarning::CiTargetMissed, PrecisionWarning::Drift];
    let text = run_summary(&conflict_probes([1000.0; 3], &warnings), false);
    assert!(text.contains("ci drift"), "{text}");
    assert!(
        text.contains("ci = the 95% CI ended wider than --target-ci"),
        "{text}"
    );
    assert!(
        text.contains("drift = the samples trend with time"),
        "{text}"
    );
    assert!(!text.contains("out ="), "{text}");
}

#[test]
fn a_warning_line_per_kind_names_the_points_as_their_table_does() {
    let clean = conflict_probes([1000.0; 3], &[]);
    assert!(precision_warnings(&clean).is_empty());
    let missed = conflict_probes([1000.0; 3], &[PrecisionWarning::CiTargetMissed]);
    let lines = precision_warnings(&missed);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let text = lines[0].replace("\n  ", " ");
    for needle in [
        "warning: 3 of 3 timed points missed the CI target",
        "(conflict stride=511 (4,088 B): CI ",
        "wide, target 0.500%;",
        "Raise --sampling-budget",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in {text}");
    }
    assert!(lines[0].lines().all(|l| l.chars().count() <= NOTE_WIDTH));
    let mut one = conflict_probes([1000.0; 3], &[PrecisionWarning::Outliers]);
    one.records.truncate(1);
    let lines = precision_warnings(&one);
    assert!(
        lines[0].starts_with("warning: the point has statistical outliers"),
        "{lines:?}"
    );
}

#[test]
fn a_quiet_summary_is_the_headline_alone() {
    let doc = recorded_fixture();
    let quiet = run_summary(&doc, true);
    assert_eq!(quiet.lines().count(), 1, "{quiet}");
    assert!(
        quiet.starts_with(&format!("suite {} (", doc.suite.name)),
        "{quiet}"
    );
    let full = run_summary(&doc, false);
    assert!(full.lines().count() >= doc.records.len() + 3, "{full}");
    assert!(full.contains("vs first"), "{full}");
}

#[test]
fn a_document_from_an_older_build_renders_within_the_width_without_marks() {
    let doc = recorded_fixture();
    assert!(
        doc.records
            .iter()
            .all(|r| r.timing.as_ref().is_none_or(|t| t.precision.is_none()))
    );
    let text = run_summary(&doc, false);
    assert!(widest(&text) <= MAX_WIDTH, "{text}");
    assert!(!text.contains("!:"), "{text}");
}
