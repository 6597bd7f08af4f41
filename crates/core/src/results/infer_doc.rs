//! The `stridelab infer --json` document: plain data (latency curves, the inferred parameters,
//! the capacity analysis) and the rules every reader relies on, checked once on load.
//!
//! It lives with the other records because two floors above read it: `infer` writes it and the
//! report renders the copy stored beside a results file; neither may import the other.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One measured point of a latency curve: `x` (bytes, slots or pages) and the median ns/access.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub x: f64,
    /// Median ns per access over the samples.
    pub ns: f64,
    /// Interquartile range of the samples relative to the median (0 = perfectly repeatable).
    pub spread: f64,
    /// The samples, in round order (round r of every point was measured in the same pass).
    pub samples: Vec<f64>,
}

impl Point {
    pub fn from_samples(x: f64, samples: &[f64]) -> Self {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let ns = quantile(&sorted, 0.5);
        let spread = if ns > 0.0 {
            (quantile(&sorted, 0.75) - quantile(&sorted, 0.25)) / ns
        } else {
            0.0
        };
        Self {
            x,
            ns,
            spread,
            samples: samples.to_vec(),
        }
    }

    /// A point without samples (synthetic curves, tests).
    pub fn exact(x: f64, ns: f64) -> Self {
        Self {
            x,
            ns,
            spread: 0.0,
            samples: vec![ns],
        }
    }
}

/// The `q` quantile of sorted values by nearest rank (the infer analysis's statistic).
pub use crate::stats::nearest_rank as quantile;

/// A latency plateau: points `[start, end)`, their median latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    pub start: usize,
    pub end: usize,
    pub from_bytes: f64,
    pub to_bytes: f64,
    pub ns: f64,
}

/// A transition between two plateaus: the capacity of the faster level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    /// The geometric centre of the transition, √(last_inside · first_outside), in bytes.
    pub capacity_bytes: f64,
    /// The last point of the faster plateau and the first point of the slower one (bytes):
    /// the transition, the capacity's interval.
    pub last_inside: f64,
    pub first_outside: f64,
    pub faster_ns: f64,
    pub slower_ns: f64,
    /// 0..1: step height over noise, monotonicity and width of the transition (the capacity
    /// analysis of `stridelab infer` documents the rule).
    pub confidence: f64,
}

/// The plateaus of a working-set curve and the edges between them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityAnalysis {
    pub plateaus: Vec<Plateau>,
    pub edges: Vec<Edge>,
    /// Noise of the curve (log latency units).
    pub noise: f64,
}

/// Where a slot-count curve (`x` = K = 1, 2, …) jumps: K slots fit, K+1 do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Jump {
    /// The latency jumped: `fits` slots stayed fast, the next point was slow.
    At { fits: usize, first_slow: usize },
    /// No jump up to the last point: at least `at_least` slots fit.
    None { at_least: usize },
}

impl Jump {
    /// The number of slots that fit, if a jump was seen.
    pub fn fits(self) -> Option<usize> {
        match self {
            Jump::At { fits, .. } => Some(fits),
            Jump::None { .. } => None,
        }
    }
}

/// One conflict-probe stride: what fitted at `stride` and at its control `stride + line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrideObservation {
    pub stride_bytes: usize,
    pub probe: Jump,
    pub control: Jump,
}

/// How an inferred value compares with what the system reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Agrees,
    /// The evidence clears the bar for a disagreement (see [`capacity_verdict`]).
    Disagrees,
    /// Neither: the interval is too wide to confirm or refute what the system reports, or the
    /// confidence is below [`MIN_VERDICT_CONFIDENCE`] (the note says which).
    Uncertain,
    /// The system reports nothing to compare with.
    NotReported,
    /// The inference found no value (the evidence says why).
    NotInferred,
}

impl Verdict {
    /// Exact comparison (line size, ways, sets, L1 size).
    pub fn exact(inferred: Option<f64>, reported: Option<f64>) -> Self {
        Self::within(inferred, reported, 0.0)
    }

    /// Agrees when `|inferred − reported| ≤ tolerance · reported`.
    pub fn within(inferred: Option<f64>, reported: Option<f64>, tolerance: f64) -> Self {
        match (inferred, reported) {
            (None, _) => Verdict::NotInferred,
            (Some(_), None) => Verdict::NotReported,
            (Some(i), Some(r)) if (i - r).abs() <= tolerance * r.abs() + 1e-9 => Verdict::Agrees,
            (Some(_), Some(_)) => Verdict::Disagrees,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::Disagrees => "disagrees",
            Verdict::Uncertain => "uncertain",
            Verdict::NotReported => "not reported",
            Verdict::NotInferred => "not inferred",
        }
    }
}

/// The bar a capacity must clear before `infer` states a disagreement, in words (printed and
/// rendered beside the verdicts).
pub const DISAGREEMENT_BAR: &str = "a capacity disagrees only when what the system reports \
     lies outside the interval widened by 25 % and the interval spans at most one octave \
     (high ≤ 2 × low); an upper bound disagrees only when every leave-one-round-out bound is \
     below the reported size by more than 25 %; anything else not within 25 % is uncertain; \
     the L1 DTLB reach agrees when CPUID's entries lie between the last page count that fit \
     and the first that was slow, and disagrees when they lie more than 25 % outside; any \
     agreement or disagreement with a confidence below 0.5 is uncertain";

/// The least confidence a parameter needs for "agrees" or "disagrees": below it the rule's
/// own evidence is weak or most rounds give another value (confidence is the rule's own
/// confidence × the share of rounds that give the same value), so the comparison with what
/// the system reports confirms or refutes nothing.
pub const MIN_VERDICT_CONFIDENCE: f64 = 0.5;

/// Relative tolerance of a capacity read off a latency curve.
pub const CAPACITY_TOLERANCE: f64 = 0.25;
/// The widest interval (high / low) that may support a disagreement: one octave.
pub const MAX_DISAGREEING_WIDTH: f64 = 2.0;

/// The verdict on a capacity with its interval `[low, high]` (see [`DISAGREEMENT_BAR`]):
/// - agrees: the value within the tolerance of the reported size and the reported size inside
///   the interval widened by the tolerance;
/// - disagrees: the reported size outside the widened interval, and the interval at most
///   [`MAX_DISAGREEING_WIDTH`] wide (an upper bound, `low` = 0, counts as tight: its `high` is
///   already the largest bound of every round);
/// - uncertain: anything else.
pub fn capacity_verdict(value: Option<f64>, interval: [f64; 2], reported: Option<f64>) -> Verdict {
    let (Some(v), Some(r)) = (value, reported) else {
        return Verdict::within(value, reported, 0.0);
    };
    let [low, high] = interval;
    let widened = low / (1.0 + CAPACITY_TOLERANCE) <= r && r <= high * (1.0 + CAPACITY_TOLERANCE);
    let upper_bound = low == 0.0;
    if !upper_bound && widened && (v - r).abs() <= CAPACITY_TOLERANCE * r {
        return Verdict::Agrees;
    }
    let outside = if upper_bound {
        high < r * (1.0 - CAPACITY_TOLERANCE)
    } else {
        !widened
    };
    let tight = upper_bound || high <= MAX_DISAGREEING_WIDTH * low;
    if outside && tight {
        Verdict::Disagrees
    } else {
        Verdict::Uncertain
    }
}

/// The verdict on the L1 DTLB's reach: the probe saw `interval` = [the last page count that
/// fit, the one before the first slow count] (in bytes: pages × page size); what CPUID reports
/// agrees inside it, disagrees more than [`CAPACITY_TOLERANCE`] outside it, and is uncertain
/// between (the probe's page counts step by several pages).
pub fn tlb_verdict(value: Option<f64>, interval: [f64; 2], reported: Option<f64>) -> Verdict {
    let (Some(_), Some(r)) = (value, reported) else {
        return Verdict::within(value, reported, 0.0);
    };
    let [low, high] = interval;
    if low <= r && r <= high {
        Verdict::Agrees
    } else if r < low / (1.0 + CAPACITY_TOLERANCE) || r > high * (1.0 + CAPACITY_TOLERANCE) {
        Verdict::Disagrees
    } else {
        Verdict::Uncertain
    }
}

/// One inferred parameter, as printed and serialised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    /// Stable key: `line_size`, `l1d_size`, `l1d_ways`, `l1d_sets`, `l2_size`, `llc_size`,
    /// `l1_dtlb_reach`.
    pub key: String,
    /// Human name, e.g. "L1d ways".
    pub name: String,
    /// `bytes`, `ways`, `sets`.
    pub unit: String,
    pub value: Option<f64>,
    /// True when `value` only bounds the parameter from above (printed as "< value").
    #[serde(default)]
    pub is_upper_bound: bool,
    /// Always "timed": no counters are involved.
    pub source: String,
    /// 0..1 (heuristic, see the module docs): the rule's own confidence × agreement across
    /// the probe's rounds.
    pub confidence: f64,
    /// What the system reports (sysfs), if anything.
    pub reported: Option<f64>,
    pub verdict: Verdict,
    /// Where the value lies, `[low, high]` in its unit, for values read off a latency curve:
    /// the transition and the spread of the leave-one-round-out estimates (an upper bound has
    /// `low` = 0). Absent for exact parameters and in documents that predate intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
    /// True for TLB parameters (a TLB, not a cache).
    pub is_tlb: bool,
    /// The measured points behind the value, in words (e.g. "stride 4096 B: 8 fit, 9 slow").
    pub evidence: Vec<String>,
    pub note: Option<String>,
}

impl Parameter {
    /// Holds the verdict to [`MIN_VERDICT_CONFIDENCE`]: an agreement or disagreement with less
    /// confidence becomes uncertain, and the note says what the comparison alone gave, the
    /// confidence and what it is made of (`basis`, e.g. "the step's own 0.62 × the same value
    /// in 0 of 7 leave-one-round-out curves"; `None` for a document read back).
    pub fn hold_to_confidence(&mut self, basis: Option<&str>) {
        if !matches!(self.verdict, Verdict::Agrees | Verdict::Disagrees)
            || self.confidence >= MIN_VERDICT_CONFIDENCE
        {
            return;
        }
        let made_of = basis.map_or(String::new(), |b| format!(" ({b})"));
        let why = format!(
            "uncertain, not \"{}\": confidence {:.2} is below the {MIN_VERDICT_CONFIDENCE:.2} \
             a verdict needs{made_of}",
            self.verdict.label(),
            self.confidence
        );
        self.verdict = Verdict::Uncertain;
        self.note = Some(match self.note.take() {
            Some(n) => format!("{why}; {n}"),
            None => why,
        });
    }
}

/// One conflict-probe stride's two curves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConflictCurves {
    pub stride_bytes: usize,
    pub control_stride_bytes: usize,
    pub probe: Vec<Point>,
    pub control: Vec<Point>,
    pub observation: StrideObservation,
}

/// Every curve `infer` measured (all timed, median ns/access), for figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct InferCurves {
    /// x = working-set bytes.
    pub capacity: Vec<Point>,
    /// x = distance of the second access of a pair, bytes.
    pub line_pairs: Vec<Point>,
    pub conflict: Vec<ConflictCurves>,
    /// x = pages, one line in each.
    pub tlb_spread: Vec<Point>,
    /// x = lines packed into few pages (the control).
    pub tlb_packed: Vec<Point>,
}

/// The whole result of `stridelab infer`: what the report renders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InferReport {
    /// Schema version of this record.
    pub schema: u32,
    pub parameters: Vec<Parameter>,
    pub curves: InferCurves,
    pub capacity: Option<CapacityAnalysis>,
    /// Seconds the whole inference took, and the budget it had.
    pub elapsed_s: f64,
    pub budget_s: f64,
    /// Conditions that colour the numbers (huge pages granted, pinning, rounds run, load).
    pub conditions: Vec<String>,
}

/// The version of [`InferReport`]'s layout: 2 adds capacity intervals and the `uncertain`
/// verdict.
pub const INFER_SCHEMA: u32 = 2;
/// The oldest layout this build reads: a schema-1 document loads, but a capacity it says
/// "disagrees" with no interval behind it is read as uncertain (see [`InferReport::read`]).
pub const OLDEST_INFER_SCHEMA: u32 = 1;

/// Most curve points an infer document may carry (a default run measures a few hundred).
pub const MAX_INFER_POINTS: usize = 1 << 16;

/// Why an infer document could not be read. Exhaustive: the report maps every cause to its
/// own error, and a new cause must be mapped there too.
#[derive(Debug, Error)]
pub enum InferDocError {
    #[error("cannot read `{path}`: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// Not JSON, or not the document's layout (serde's message).
    #[error("`{path}` is not a `stridelab infer --json` report: {message}")]
    Parse { path: PathBuf, message: String },
    /// Well-formed but breaking a rule of [`validate`]; `field` is its JSON path.
    #[error(
        "`{path}` is not a `stridelab infer --json` report: field `{field}` is invalid: {message}"
    )]
    Invalid {
        path: PathBuf,
        field: String,
        message: String,
    },
}

impl InferReport {
    /// Reads and validates an infer document (errors name the file and, for a broken rule, the
    /// JSON path of the offending field).
    pub fn read(path: &Path) -> Result<Self, InferDocError> {
        let text = std::fs::read_to_string(path).map_err(|cause| InferDocError::Io {
            path: path.to_path_buf(),
            cause,
        })?;
        let report: InferReport =
            serde_json::from_str(&text).map_err(|e| InferDocError::Parse {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        validate(&report).map_err(|(field, message)| InferDocError::Invalid {
            path: path.to_path_buf(),
            field,
            message,
        })?;
        Ok(report.without_unsupported_claims())
    }

    /// The document with every disagreement that has no interval behind it (documents from
    /// before intervals) and every verdict below [`MIN_VERDICT_CONFIDENCE`] (documents from
    /// before the floor) turned into "uncertain", with a note saying so: a reader never shows
    /// a claim that did not clear [`DISAGREEMENT_BAR`].
    pub fn without_unsupported_claims(mut self) -> Self {
        for p in &mut self.parameters {
            if p.verdict == Verdict::Disagrees && p.interval.is_none() && p.unit == "bytes" {
                p.verdict = Verdict::Uncertain;
                let old = "recorded as \"disagrees\" without an interval (an older document): \
                           read as uncertain";
                p.note = Some(match p.note.take() {
                    Some(n) => format!("{n}; {old}"),
                    None => old.to_string(),
                });
            }
            p.hold_to_confidence(None);
        }
        self
    }
}

/// The rules the readers rely on, checked once on load: the schema this build reads, finite
/// non-negative times, confidences in [0, 1], curve points at a finite x > 0 (the figures' axes
/// are logarithmic) with a finite time ≥ 0, and a bounded number of points. The error is
/// `(JSON path, what is wrong)`.
pub fn validate(report: &InferReport) -> Result<(), (String, String)> {
    let bad = |field: String, message: String| Err((field, message));
    if !(OLDEST_INFER_SCHEMA..=INFER_SCHEMA).contains(&report.schema) {
        return bad(
            "schema".into(),
            format!(
                "{}; this build reads {OLDEST_INFER_SCHEMA} to {INFER_SCHEMA}",
                report.schema
            ),
        );
    }
    for (field, v) in [
        ("elapsed_s", report.elapsed_s),
        ("budget_s", report.budget_s),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return bad(field.into(), format!("{v} is not a finite number ≥ 0"));
        }
    }
    for (i, p) in report.parameters.iter().enumerate() {
        let at = format!("parameters[{i}]");
        if !(p.confidence.is_finite() && (0.0..=1.0).contains(&p.confidence)) {
            return bad(format!("{at}.confidence"), "must lie in [0, 1]".into());
        }
        for (name, v) in [("value", p.value), ("reported", p.reported)] {
            if let Some(v) = v
                && !(v.is_finite() && v >= 0.0)
            {
                return bad(
                    format!("{at}.{name}"),
                    format!("{v} is not a finite number ≥ 0"),
                );
            }
        }
        if let Some([low, high]) = p.interval
            && !(low.is_finite() && high.is_finite() && 0.0 <= low && low <= high)
        {
            return bad(
                format!("{at}.interval"),
                format!("[{low}, {high}] is not finite with 0 ≤ low ≤ high"),
            );
        }
    }
    validate_curves(&report.curves)
}

fn validate_curves(c: &InferCurves) -> Result<(), (String, String)> {
    let mut curves: Vec<(String, &[Point])> = vec![
        ("curves.capacity".into(), &c.capacity),
        ("curves.line_pairs".into(), &c.line_pairs),
        ("curves.tlb_spread".into(), &c.tlb_spread),
        ("curves.tlb_packed".into(), &c.tlb_packed),
    ];
    for (i, k) in c.conflict.iter().enumerate() {
        curves.push((format!("curves.conflict[{i}].probe"), &k.probe));
        curves.push((format!("curves.conflict[{i}].control"), &k.control));
    }
    let total: usize = curves.iter().map(|(_, pts)| pts.len()).sum();
    if total > MAX_INFER_POINTS {
        return Err((
            "curves".into(),
            format!("{total} points, more than the {MAX_INFER_POINTS} a report may have"),
        ));
    }
    for (at, points) in curves {
        for (i, p) in points.iter().enumerate() {
            if !(p.x.is_finite() && p.x > 0.0) {
                return Err((
                    format!("{at}[{i}].x"),
                    format!("{} is not finite and > 0", p.x),
                ));
            }
            if !(p.ns.is_finite() && p.ns >= 0.0) {
                return Err((
                    format!("{at}[{i}].ns"),
                    format!("{} is not finite and ≥ 0", p.ns),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(Verdict::exact(Some(64.0), Some(64.0)), Verdict::Agrees);
        assert_eq!(Verdict::exact(Some(128.0), Some(64.0)), Verdict::Disagrees);
        assert_eq!(
            Verdict::within(Some(1.2e6), Some(1.0e6), 0.25),
            Verdict::Agrees
        );
        assert_eq!(
            Verdict::within(Some(2.0e6), Some(32.0e6), 0.25),
            Verdict::Disagrees
        );
        assert_eq!(Verdict::within(Some(1.0), None, 0.25), Verdict::NotReported);
        assert_eq!(Verdict::within(None, Some(1.0), 0.25), Verdict::NotInferred);
    }

    #[test]
    fn tlb_verdicts_bracket_the_reported_entries() {
        use Verdict::*;
        let page = 4096.0;
        // (fits, last page before the first slow count, reported entries, verdict)
        let cases = [
            (64.0, 67.0, Some(64.0), Agrees),
            (72.0, 75.0, Some(72.0), Agrees),
            (68.0, 71.0, Some(64.0), Uncertain),
            (52.0, 55.0, Some(64.0), Uncertain),
            (48.0, 51.0, Some(64.0), Disagrees),
            (128.0, 131.0, Some(64.0), Disagrees),
            (64.0, 67.0, None, NotReported),
        ];
        for (fits, last, reported, verdict) in cases {
            let interval = [fits * page, last * page];
            assert_eq!(
                tlb_verdict(Some(fits * page), interval, reported.map(|e: f64| e * page)),
                verdict,
                "{fits}–{last} pages vs {reported:?}"
            );
        }
        assert_eq!(tlb_verdict(None, [0.0, 0.0], Some(page)), NotInferred);
    }

    #[test]
    fn a_verdict_below_the_confidence_floor_is_uncertain_and_says_why() {
        use Verdict::*;
        // (verdict, confidence, verdict held to the floor)
        let cases = [
            (Agrees, 0.0, Uncertain),
            (Agrees, 0.49, Uncertain),
            (Agrees, 0.5, Agrees),
            (Disagrees, 0.375, Uncertain),
            (Disagrees, 0.96, Disagrees),
            (Uncertain, 0.1, Uncertain),
            (NotReported, 0.0, NotReported),
            (NotInferred, 0.0, NotInferred),
        ];
        for (verdict, confidence, held) in cases {
            let mut p = Parameter {
                key: "l2_size".into(),
                name: "L2 size".into(),
                unit: "bytes".into(),
                value: Some(414.8 * 1024.0),
                is_upper_bound: false,
                source: "timed".into(),
                confidence,
                reported: Some(512.0 * 1024.0),
                verdict,
                interval: Some([384.0 * 1024.0, 448.0 * 1024.0]),
                is_tlb: false,
                evidence: Vec::new(),
                note: Some("earlier note".into()),
            };
            p.hold_to_confidence(Some("the step's own 0.62 × the same in 0 of 7 curves"));
            assert_eq!(p.verdict, held, "{verdict:?} at {confidence}");
            let note = p.note.unwrap();
            if held != verdict {
                assert!(
                    note.starts_with(&format!(
                        "uncertain, not \"{}\": confidence {confidence:.2} is below the 0.50 a \
                         verdict needs (the step's own 0.62 × the same in 0 of 7 curves); \
                         earlier note",
                        verdict.label()
                    )),
                    "{note}"
                );
            } else {
                assert_eq!(note, "earlier note");
            }
        }
    }

    fn minimal() -> InferReport {
        InferReport {
            schema: INFER_SCHEMA,
            parameters: Vec::new(),
            curves: InferCurves {
                capacity: vec![Point::exact(4096.0, 1.0), Point::exact(8192.0, 1.1)],
                ..InferCurves::default()
            },
            capacity: None,
            elapsed_s: 1.0,
            budget_s: 10.0,
            conditions: Vec::new(),
        }
    }

    #[test]
    fn validation_names_the_field_that_breaks_a_rule() {
        assert_eq!(validate(&minimal()), Ok(()));
        let mut r = minimal();
        r.curves.capacity[1].x = 0.0;
        assert_eq!(validate(&r).unwrap_err().0, "curves.capacity[1].x");
        let mut r = minimal();
        r.schema = INFER_SCHEMA + 1;
        assert_eq!(validate(&r).unwrap_err().0, "schema");
        let mut r = minimal();
        r.budget_s = f64::INFINITY;
        assert_eq!(validate(&r).unwrap_err().0, "budget_s");
        let mut r = minimal();
        r.curves.tlb_spread = vec![Point::exact(1.0, 1.0); MAX_INFER_POINTS];
        assert_eq!(validate(&r).unwrap_err().0, "curves");
    }

    #[test]
    fn read_reports_the_file_and_the_broken_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("infer.json");
        let mut r = minimal();
        r.curves.capacity[0].ns = -1.0;
        std::fs::write(&path, serde_json::to_string(&r).unwrap()).unwrap();
        let err = InferReport::read(&path).unwrap_err();
        assert!(
            matches!(&err, InferDocError::Invalid { field, .. } if field == "curves.capacity[0].ns")
        );
        assert!(err.to_string().contains("infer.json"));
        std::fs::write(&path, "{").unwrap();
        assert!(matches!(
            InferReport::read(&path),
            Err(InferDocError::Parse { .. })
        ));
        std::fs::write(&path, serde_json::to_string(&minimal()).unwrap()).unwrap();
        assert_eq!(InferReport::read(&path).unwrap(), minimal());
    }
}
