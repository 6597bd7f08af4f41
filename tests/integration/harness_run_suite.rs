//! The library entry point `harness::run_suite`: progress events, error rows, and a stop request
//! that keeps the finished points and marks the document interrupted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use stridelab::harness::{MethodOptions, Progress, RunOptions, Suite, run_suite};
use stridelab::results::{ChecksumOutcome, ResultsDocument, RunStatus};

fn fast_options() -> RunOptions {
    RunOptions {
        method: MethodOptions {
            warmup: Duration::from_millis(2),
            min_sample: Duration::from_millis(1),
            samples: 10,
            ..MethodOptions::default()
        },
        simulation_access_cap: 1 << 16,
        ..RunOptions::on(crate::common::detected_levels(), crate::common::planner())
    }
}

const SUITE: &str = r#"
name = "tiny"
description = "test"

[[point]]
kernel = "row-sum"
params = { rows = [16, 17], cols = 16 }

[[point]]
kernel = "conflict"
params = { stride = [512, 513], count = 16, mode = "lat", reps = 10 }
"#;

#[test]
fn every_point_gets_a_record_with_statistics_and_progress_events() {
    let plan = Suite::parse(SUITE, "tiny.toml")
        .unwrap()
        .plan(None, &crate::common::detected_levels())
        .unwrap();
    assert_eq!(plan.points.len(), 4);
    let stop = AtomicBool::new(false);
    let (mut started, mut finished) = (0, 0);
    let doc = run_suite(&plan, &fast_options(), &stop, &mut |event| match event {
        Progress::Started { .. } => started += 1,
        Progress::Finished { .. } => finished += 1,
    })
    .unwrap();
    assert_eq!((started, finished), (4, 4));
    assert_eq!(doc.status, RunStatus::Complete);
    assert_eq!(doc.records.len(), 4);
    for r in &doc.records {
        assert_eq!(r.checksum.status, ChecksumOutcome::Ok, "{r:?}");
        let t = r.timing.as_ref().expect("timing");
        assert!(t.samples_ns_per_run.len() >= 10);
        assert!(t.ns_per_run.ci_low <= t.ns_per_run.median);
        assert!(t.ns_per_run.median <= t.ns_per_run.ci_high);
        assert_eq!(r.pinning.threads.len(), 1);
    }
    // row-sum is a bandwidth kernel: it carries a same-run ratio to the read reference.
    let ratio = doc.records[0].reference.as_ref().expect("reference");
    assert_eq!(ratio.reference, "read");
    assert!(ratio.ratio > 0.0);
}

#[test]
fn a_stop_request_keeps_finished_points_and_marks_the_document() {
    let plan = Suite::parse(SUITE, "tiny.toml")
        .unwrap()
        .plan(None, &crate::common::detected_levels())
        .unwrap();
    let stop = AtomicBool::new(false);
    let doc = run_suite(&plan, &fast_options(), &stop, &mut |event| {
        if let Progress::Finished { index: 1, .. } = event {
            stop.store(true, Ordering::SeqCst);
        }
    })
    .unwrap();
    assert_eq!(doc.status, RunStatus::Interrupted);
    assert_eq!(doc.records.len(), 2);
    assert_eq!(doc.suite.points, 4);
    // The interrupted document round-trips through a file.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    doc.write_atomic(&path).unwrap();
    let back = ResultsDocument::read(&path, &stridelab::kernels::CATALOGUE_RULES).unwrap();
    assert_eq!(back.records.len(), 2);
    assert_eq!(back.status, RunStatus::Interrupted);
}
