//! The comparison of runs on recorded quick suites (tests/data/history/, README there): runs of
//! one build made back to back on one machine (A/A) must be called changed at no more than one
//! point in twenty, and a run whose row-sum really was made 10% slower must be caught; runs of
//! another machine kind are never compared.

use std::io::Read;
use std::path::{Path, PathBuf};

use stridelab::kernels::CATALOGUE_RULES;
use stridelab::results::ResultsDocument;
use stridelab::results::history::{RunComparison, Verdict, compare_runs};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/history")
}

fn load(name: &str) -> ResultsDocument {
    let path = data_dir().join(name);
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("fixture"))
        .read_to_string(&mut text)
        .expect("gzip");
    ResultsDocument::from_json(&text, &path, &CATALOGUE_RULES).expect("a valid results document")
}

/// The A/A runs of the Intel kind, oldest first.
fn intel_runs() -> Vec<ResultsDocument> {
    let mut names: Vec<String> = std::fs::read_dir(data_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("intel-aa-"))
        .collect();
    names.sort();
    assert!(names.len() >= 12, "{names:?}");
    names.iter().map(|n| load(n)).collect()
}

/// `current` against the newest of `earlier`, judged by the noise of all of them.
fn against(earlier: &[ResultsDocument], current: &ResultsDocument) -> RunComparison {
    let history: Vec<&ResultsDocument> = earlier.iter().collect();
    let base = earlier.last().unwrap();
    compare_runs(
        (base, "previous".into()),
        current,
        &history,
        "fixtures".into(),
    )
    .unwrap()
}

fn called(c: &RunComparison) -> usize {
    c.count(&Verdict::Slower) + c.count(&Verdict::Faster)
}

fn judged(c: &RunComparison) -> usize {
    c.rows.len() - c.count(&Verdict::CannotTell)
}

#[test]
fn back_to_back_runs_of_one_build_are_called_changed_at_no_more_than_one_point_in_twenty() {
    let runs = intel_runs();
    let (mut total_called, mut total_judged) = (0, 0);
    for k in 2..runs.len() {
        let c = against(&runs[..k], &runs[k]);
        eprintln!("run {}: {}", k + 1, c.headline());
        total_called += called(&c);
        total_judged += judged(&c);
    }
    eprintln!("A/A: {total_called} of {total_judged} judged points called changed");
    assert!(total_judged > 1000, "{total_judged}");
    assert!(
        total_called * 20 <= total_judged,
        "{total_called} of {total_judged} points called changed in A/A runs"
    );
}

#[test]
fn a_run_whose_row_sum_was_made_ten_percent_slower_is_caught_there() {
    let runs = intel_runs();
    let slowed = load("intel-rowsum-plus10.json.gz");
    let c = against(&runs, &slowed);
    let row_sum: Vec<_> = c
        .rows
        .iter()
        .filter(|r| r.key.starts_with("row-sum "))
        .collect();
    let caught = row_sum
        .iter()
        .filter(|r| r.verdict == Verdict::Slower)
        .count();
    for r in &row_sum {
        eprintln!(
            "{} {:+.1}% {:?} {:?}",
            r.key,
            r.change * 100.0,
            r.interval,
            r.verdict
        );
    }
    assert!(!row_sum.is_empty());
    assert!(
        caught * 2 >= row_sum.len(),
        "{caught} of {} row-sum points called slower",
        row_sum.len()
    );
    let others = c.rows.iter().filter(|r| !r.key.starts_with("row-sum "));
    let (n, wrong) = others.fold((0, 0), |(n, w), r| {
        let is_call = matches!(r.verdict, Verdict::Slower | Verdict::Faster);
        (n + 1, w + usize::from(is_call))
    });
    eprintln!(
        "slowed run: {caught} of {} row-sum points caught; {wrong} of {n} others called",
        row_sum.len()
    );
    assert!(
        wrong * 20 <= n,
        "{wrong} of {n} unchanged points called changed"
    );
}

#[test]
fn with_one_earlier_run_the_comparison_cannot_tell_yet() {
    let runs = intel_runs();
    let c = against(&runs[..1], &runs[1]);
    assert_eq!(judged(&c), 0);
    assert!(c.headline().contains("cannot tell yet"), "{}", c.headline());
}

#[test]
fn a_run_of_another_machine_kind_is_not_compared() {
    let runs = intel_runs();
    let amd = load("amd-epyc-milan-2026-12-01.json.gz");
    let history: Vec<&ResultsDocument> = runs.iter().collect();
    let err = compare_runs((&runs[0], "intel".into()), &amd, &history, "f".into()).unwrap_err();
    assert!(err.contains("CPU model"), "{err}");
    // Nor do runs of another machine teach the noise of this one.
    let c = compare_runs((&amd, "amd".into()), &amd, &history, "f".into()).unwrap();
    assert_eq!(c.earlier_runs, 0);
    assert_eq!(judged(&c), 0);
}

/// Writes fixture `name` uncompressed to `path`.
fn unpack(name: &str, path: &Path) {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data_dir().join(name)).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_report_judges_two_runs_by_the_noise_of_the_runs_kept_before_them() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    unpack("intel-aa-11.json.gz", &a);
    unpack("intel-aa-12.json.gz", &b);
    let render = |out: &str| {
        let status = crate::common::stridelab_command()
            .current_dir(dir.path())
            .args(["report", "--in", "a.json", "--in", "b.json", "--out", out])
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        std::fs::read_to_string(dir.path().join(out).join("index.html")).unwrap()
    };
    // Alone, two runs teach no noise: the page says it cannot tell, never "more than noise".
    let alone = render("alone");
    assert!(alone.contains("cannot tell yet"), "no cannot-tell verdict");
    assert!(!alone.contains("intervals are apart"));
    // With the earlier runs kept under reports/runs/, it judges against their noise and says so.
    for i in 1..=10 {
        let name = format!("intel-aa-{i:02}.json.gz");
        unpack(
            &name,
            &dir.path().join(format!("reports/runs/aa-{i:02}.json")),
        );
    }
    let judged = render("judged");
    assert!(
        judged.contains("learnt from the 10 newest earlier runs"),
        "no noise source"
    );
    assert!(
        judged.contains("the runs given and reports/"),
        "no noise source"
    );
    assert!(judged.contains("beyond the run-to-run noise"));
}
