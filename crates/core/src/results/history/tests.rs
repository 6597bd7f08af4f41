//! The rules of `results::history` on small synthetic runs: which figure a point is judged on,
//! what the noise band is, and the verdicts it gives.

use super::*;
use crate::results::ReferenceComparison;
use crate::results::schema::tests::sample_document;
use crate::vocab::ParamValue;

/// A run of `cpu` started at `started` whose points (`rows` = 0, 1, …) take these times per
/// element; `ratio` gives a point a same-run reference (its GB/s ÷ the copy's).
fn run(cpu: &str, started: u64, times: &[f64], ratios: &[Option<f64>]) -> ResultsDocument {
    let mut doc = sample_document();
    doc.info = serde_json::json!({"cpu_model": cpu});
    doc.started_unix_s = started;
    let template = doc.records[0].clone();
    doc.records = times
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut r = template.clone();
            r.index = i;
            r.params.insert("rows".into(), ParamValue::Int(i as u64));
            r.timing.as_mut().unwrap().ns_per_element = *t;
            r.reference = ratios
                .get(i)
                .copied()
                .flatten()
                .map(|ratio| ReferenceComparison {
                    reference: "copy".into(),
                    bytes: 8,
                    variants: Default::default(),
                    best_variant: "plain".into(),
                    reference_gb_per_s: 1.0,
                    ratio,
                    samples_ns_per_run: Vec::new(),
                });
            r
        })
        .collect();
    doc.suite.points = times.len();
    doc
}

fn compare(
    base: &ResultsDocument,
    current: &ResultsDocument,
    history: &[&ResultsDocument],
) -> RunComparison {
    compare_runs((base, "b".into()), current, history, "here".into()).unwrap()
}

#[test]
fn a_point_is_judged_on_its_reference_ratio_where_it_has_one() {
    let doc = run("X", 1, &[2.0, 3.0], &[Some(0.5), None]);
    let a = figure(&doc.records[0]).unwrap();
    let b = figure(&doc.records[1]).unwrap();
    assert_eq!(a.basis, Basis::Reference("copy".into()));
    assert!((a.value - 2.0).abs() < 1e-12, "time ÷ copy = 1 / ratio");
    assert_eq!(b.basis, Basis::OwnTime);
    assert_eq!(b.value, 3.0);
}

#[test]
fn one_earlier_run_cannot_tell_and_says_so() {
    let a = run("X", 1, &[1.0, 1.0], &[]);
    let b = run("X", 2, &[2.0, 1.0], &[]);
    let c = compare(&a, &b, &[&a]);
    assert!(c.noise.is_none());
    assert!(c.rows.iter().all(|r| r.verdict == Verdict::CannotTell));
    assert!(c.headline().contains("cannot tell yet"), "{}", c.headline());
    assert!(!c.headline().contains("slower beyond"));
}

#[test]
fn each_point_is_judged_by_its_own_spread() {
    // Point 0 moved 10% between the earlier runs, point 1 1%: the same +6% now is within the
    // noise of the first and beyond that of the second once enough runs show how steady it is.
    let times = [
        [1.0, 1.0],
        [1.1, 1.01],
        [1.0, 1.0],
        [1.1, 1.01],
        [1.0, 1.0],
        [1.1, 1.01],
    ];
    let history: Vec<ResultsDocument> = times
        .iter()
        .enumerate()
        .map(|(i, t)| run("X", i as u64 + 1, t, &[]))
        .collect();
    let refs: Vec<&ResultsDocument> = history.iter().collect();
    let now = run("X", 10, &[1.1 * 1.06, 1.01 * 1.06], &[]);
    let c = compare(&history[5], &now, &refs);
    let noise = c.noise.as_ref().unwrap();
    assert_eq!(noise.runs, 6);
    assert!(noise.band(&c.rows[0].key).unwrap() > noise.band(&c.rows[1].key).unwrap());
    assert_eq!(c.rows[0].verdict, Verdict::WithinNoise);
    assert_eq!(c.rows[1].verdict, Verdict::Slower);
}

#[test]
fn verdicts_follow_the_interval() {
    let history: Vec<ResultsDocument> = (0..6)
        .map(|i| {
            let times: &[f64] = if i % 2 == 0 {
                &[1.0, 1.0, 1.0]
            } else {
                &[1.02, 0.99, 1.01]
            };
            run("X", i + 1, times, &[])
        })
        .collect();
    let refs: Vec<&ResultsDocument> = history.iter().collect();
    let now = run("X", 10, &[1.5, 0.7, 1.0], &[]);
    let c = compare(&history[5], &now, &refs);
    let verdicts: Vec<&Verdict> = c.rows.iter().map(|r| &r.verdict).collect();
    assert_eq!(
        verdicts,
        [&Verdict::Slower, &Verdict::Faster, &Verdict::WithinNoise]
    );
    let (lo, hi) = c.rows[0].interval.unwrap();
    assert!(lo > 0.0 && lo < c.rows[0].change && c.rows[0].change < hi);
    assert!(
        c.headline().contains("1 of 3 matched points slower"),
        "{}",
        c.headline()
    );
}

#[test]
fn runs_of_another_machine_neither_compare_nor_teach_the_noise() {
    let h1 = run("Y", 1, &[1.0], &[]);
    let h2 = run("X", 2, &[1.0], &[]);
    let now = run("X", 3, &[1.3], &[]);
    assert!(compare_runs((&h1, "b".into()), &now, &[&h1, &h2], "here".into()).is_err());
    let c = compare(&h2, &now, &[&h1, &h2]);
    assert_eq!(c.earlier_runs, 1);
    assert!(c.noise.is_none(), "one run of this machine: no pair");
}

#[test]
fn a_point_judged_on_another_basis_earlier_is_not_compared() {
    let a = run("X", 1, &[1.0], &[Some(0.5)]);
    let b = run("X", 2, &[1.0], &[None]);
    let c = compare(&a, &b, &[&a]);
    assert!(c.rows.is_empty());
    assert_eq!(c.unmatched, 1);
}
