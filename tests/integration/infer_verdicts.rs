//! The verdict rule of `stridelab infer` on capacities (agrees / disagrees / uncertain at the
//! edges of the bar), the report's headline naming a disagreement only when the verdict says
//! so, and older documents (no intervals, no confidence floor) read without a claim they
//! cannot back.

use stridelab::report::infer::headline;
use stridelab::results::infer_doc::{
    CAPACITY_TOLERANCE, InferReport, MAX_DISAGREEING_WIDTH, Verdict, capacity_verdict,
};

/// One case: value, `[low, high]`, reported, expected verdict, why.
type Case = (Option<f64>, [f64; 2], Option<f64>, Verdict, &'static str);

const KIB: f64 = 1024.0;
const MIB: f64 = 1024.0 * 1024.0;

#[test]
fn capacity_verdicts_at_the_edges_of_the_bar() {
    use Verdict::*;
    let t = CAPACITY_TOLERANCE;
    let w = MAX_DISAGREEING_WIDTH;
    // (value, [low, high], reported, verdict, why)
    let table: [Case; 16] = [
        (
            Some(MIB),
            [0.8 * MIB, 1.25 * MIB],
            Some(MIB),
            Agrees,
            "value on the mark",
        ),
        (
            Some(0.76 * MIB),
            [0.6 * MIB, 0.9 * MIB],
            Some(MIB),
            Agrees,
            "value just within the tolerance",
        ),
        (
            Some(0.74 * MIB),
            [0.6 * MIB, 0.9 * MIB],
            Some(MIB),
            Uncertain,
            "just outside the tolerance, reported within the widened interval",
        ),
        (
            Some(1.3 * MIB),
            [1.2 * MIB, 1.4 * MIB],
            Some(MIB),
            Uncertain,
            "reported just inside the widened interval (1.2 / 1.25 < 1)",
        ),
        (
            Some(1.5 * MIB),
            [1.3 * MIB, 1.7 * MIB],
            Some(MIB),
            Disagrees,
            "tight interval wholly above the widened reported size",
        ),
        (
            Some(0.4 * MIB),
            [0.3 * MIB, 0.5 * MIB],
            Some(MIB),
            Disagrees,
            "tight interval wholly below",
        ),
        (
            Some(0.5 * MIB),
            [0.3 * MIB, 0.3 * MIB * w],
            Some(MIB),
            Disagrees,
            "interval exactly one octave wide",
        ),
        (
            Some(0.5 * MIB),
            [0.3 * MIB, 0.3 * MIB * w * 1.01],
            Some(MIB),
            Uncertain,
            "interval just over one octave",
        ),
        (
            Some(1.7 * MIB),
            [0.56 * MIB, 5.0 * MIB],
            Some(MIB),
            Uncertain,
            "wide interval around the reported size",
        ),
        (
            Some(5.0 * MIB),
            [2.5 * MIB, 10.0 * MIB],
            Some(32.0 * MIB),
            Uncertain,
            "wide interval below: no claim",
        ),
        (
            Some(2.0 * MIB),
            [0.0, 2.0 * MIB],
            Some(32.0 * MIB),
            Disagrees,
            "upper bound far below",
        ),
        (
            Some(2.0 * MIB),
            [0.0, 32.0 * MIB * (1.0 - t) * 1.01],
            Some(32.0 * MIB),
            Uncertain,
            "a round's bound near the reported size",
        ),
        (
            Some(64.0 * MIB),
            [0.0, 64.0 * MIB],
            Some(32.0 * MIB),
            Uncertain,
            "a bound above cannot confirm",
        ),
        (
            Some(MIB),
            [0.8 * MIB, 1.25 * MIB],
            None,
            NotReported,
            "nothing reported",
        ),
        (None, [0.0, 0.0], Some(MIB), NotInferred, "nothing inferred"),
        (
            Some(32.0 * KIB),
            [30.0 * KIB, 36.0 * KIB],
            Some(48.0 * KIB),
            Disagrees,
            "a sharp L1 step at 32 KiB against 48 KiB",
        ),
    ];
    for (value, interval, reported, expected, why) in table {
        assert_eq!(
            capacity_verdict(value, interval, reported),
            expected,
            "{why}: {value:?} in {interval:?} vs {reported:?}"
        );
    }
}

fn fixture() -> serde_json::Value {
    let path = format!("{}/tests/fixtures/infer.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn read(doc: &serde_json::Value) -> InferReport {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("infer.json");
    std::fs::write(&path, serde_json::to_string(doc).unwrap()).unwrap();
    InferReport::read(&path).unwrap()
}

#[test]
fn an_older_document_loads_without_an_unbacked_disagreement() {
    let doc = fixture();
    assert_eq!(doc["schema"], 1, "the fixture predates intervals");
    let llc = doc["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["key"] == "llc_size")
        .unwrap();
    assert_eq!(llc["verdict"], "disagrees", "stored as a disagreement");
    let report = read(&doc);
    let llc = report
        .parameters
        .iter()
        .find(|p| p.key == "llc_size")
        .unwrap();
    assert_eq!(llc.verdict, Verdict::Uncertain);
    assert!(
        llc.note
            .as_deref()
            .unwrap_or("")
            .contains("without an interval")
    );
    let line = report
        .parameters
        .iter()
        .find(|p| p.key == "line_size")
        .unwrap();
    assert_eq!(line.verdict, Verdict::Agrees, "other verdicts are kept");
    let text = headline(&report);
    assert!(!text.contains("Disagreements"), "{text}");
    assert!(
        text.contains("Uncertain") && text.contains("LLC size"),
        "{text}"
    );
    assert!(text.contains("The bar:"), "the bar is stated: {text}");
}

#[test]
fn the_headline_names_a_disagreement_only_when_the_verdict_does() {
    let mut doc = fixture();
    doc["schema"] = 2.into();
    let params = doc["parameters"].as_array_mut().unwrap();
    for p in params.iter_mut() {
        if p["key"] == "l2_size" {
            p["verdict"] = "uncertain".into();
            p["interval"] = serde_json::json!([576.0 * KIB, 5.0 * MIB]);
        }
        if p["key"] == "llc_size" {
            // A disagreement with the confidence a verdict needs.
            p["verdict"] = "disagrees".into();
            p["interval"] = serde_json::json!([0.0, 2.0 * MIB]);
            p["confidence"] = 0.9.into();
        }
    }
    let report = read(&doc);
    let text = headline(&report);
    assert!(
        text.contains("Disagreements with the system's claim: LLC size below 2 MiB"),
        "{text}"
    );
    assert!(text.contains("L2 size between 576 KiB and 5 MiB"), "{text}");
    assert!(
        !text.contains("Disagreements with the system's claim: L2"),
        "{text}"
    );
    // The same document with nothing disagreeing says so, and still states the bar.
    let mut calm = report.clone();
    for p in &mut calm.parameters {
        if p.verdict != Verdict::NotReported {
            p.verdict = Verdict::Agrees;
        }
    }
    let text = headline(&calm);
    assert!(text.starts_with("Every inferred parameter"), "{text}");
    assert!(text.contains("The bar:"), "{text}");
}

#[test]
fn a_malformed_interval_is_refused_with_its_field() {
    let mut doc = fixture();
    doc["schema"] = 2.into();
    doc["parameters"][4]["interval"] = serde_json::json!([2.0 * MIB, MIB]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("infer.json");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let err = InferReport::read(&path).unwrap_err().to_string();
    assert!(err.contains("parameters[4].interval"), "{err}");
}

/// The recorded document (Zen 4 VM, load ≈ 7) as a reader shows it: every agreement or
/// disagreement below the confidence floor reads as uncertain, its note saying what it was
/// recorded as and its confidence; the confident verdicts stay.
#[test]
fn a_recorded_verdict_below_the_confidence_floor_reads_as_uncertain() {
    let report = read(&fixture());
    // (key, recorded verdict, recorded confidence, verdict read)
    let table = [
        ("line_size", "agrees", "1.00", Verdict::Agrees),
        ("l1d_size", "agrees", "0.96", Verdict::Agrees),
        ("l1d_ways", "agrees", "0.96", Verdict::Agrees),
        ("l2_size", "agrees", "0.14", Verdict::Uncertain),
        (
            "l1_dtlb_reach",
            "not_reported",
            "1.00",
            Verdict::NotReported,
        ),
    ];
    for (key, recorded, confidence, read_as) in table {
        let p = report.parameters.iter().find(|p| p.key == key).unwrap();
        assert_eq!(p.verdict, read_as, "{key}: {p:#?}");
        assert_eq!(format!("{:.2}", p.confidence), confidence, "{key}");
        let held = p.note.as_deref().unwrap_or("").contains(&format!(
            "uncertain, not \"{recorded}\": confidence {confidence} is below the 0.50"
        ));
        // 0.5: the floor (`MIN_VERDICT_CONFIDENCE`) the README states.
        assert_eq!(held, p.confidence < 0.5, "{key}: {:?}", p.note);
    }
    let text = headline(&report);
    assert!(
        text.contains("L2 size (system: 1 MiB; confidence 0.14)"),
        "{text}"
    );
    assert!(!text.contains("Every inferred parameter"), "{text}");
}
