//! What `stridelab run` concludes about its results document beside the numbers of its tables,
//! as data and sentences: the headline, each point's problem (a wrong checksum, an error, its
//! precision warnings), the bandwidth a point's loads and stores request, the footnotes that
//! say what each figure is, one finding per kind of precision warning with the points it
//! names and what to do, and the lines about failed points and an interrupted run.
//!
//! A renderer lays these out (tables, wrapping, marks) and names the points; every number and
//! sentence is made here from the document.

use crate::harness::measure::precision::{advice, mark_legend, percent, remedy};
use crate::results::{ChecksumOutcome, PointRecord, PrecisionWarning, ResultsDocument, RunStatus};
use crate::units::format_significant;

/// What each timed figure of a point is, by the header of its column, in column order.
pub const TIMED_FIGURES: [(&str, &str); 7] = [
    ("time/run", "median of the point's samples"),
    (
        "CI",
        "width of the bootstrap 95% CI of that median, relative to it (the width --target-ci \
         sets)",
    ),
    ("time/elem", "time/run per element (per access for probes)"),
    (
        "vs first",
        "time/elem against the table's first row (\"3.58× slower\": each element took 3.58 \
         times as long)",
    ),
    (
        "GB/s",
        "bytes the loads and stores request (element size × accesses, all threads) per second, \
         1 GB = 10⁹ B; a strided walk moves whole cache lines, more than it requests",
    ),
    (
        "vs ref",
        "GB/s against a copy (writing kernels) or read of the same bytes timed in the same run",
    ),
    (
        "÷ model",
        "time/run over the time model's estimate (this machine's probes priced by the \
         simulated traffic, docs/time-model.md); in brackets where the model disowns the point",
    ),
];

/// The `÷ model` cell of a record: measured ÷ model, bracketed where the model disowns the
/// point (`None`: no prediction, or nothing priced).
pub fn measured_over_model_cell(record: &PointRecord) -> Option<String> {
    let p = record.time_model.as_ref()?;
    let ratio = format!("{}×", format_significant(p.measured_over_model?));
    Some(if p.applies {
        ratio
    } else {
        format!("({ratio})")
    })
}

/// One sentence on the time model's agreement over `doc`'s timed points (`None`: no
/// predictions recorded).
pub fn time_model_sentence(doc: &ResultsDocument) -> Option<String> {
    let predictions: Vec<_> = doc
        .records
        .iter()
        .filter_map(|r| r.time_model.as_ref())
        .collect();
    if predictions.is_empty() {
        return None;
    }
    let claimed: Vec<f64> = predictions
        .iter()
        .filter_map(|p| p.claimed_ratio())
        .collect();
    let within = claimed.iter().filter(|r| (0.5..=2.0).contains(*r)).count();
    let disowned = predictions.iter().filter(|p| !p.applies).count();
    Some(format!(
        "time model: {within} of the {} points it claims within 2× of measured; {disowned} \
         disowned (the results file's records[i].time_model.reason says why).",
        claimed.len()
    ))
}

/// The first line of the summary: the suite, how many points, how long, whether interrupted.
pub fn headline(doc: &ResultsDocument) -> String {
    format!(
        "suite {} ({}): {} points in {:.1} s{}",
        doc.suite.name,
        doc.suite.source,
        doc.records.len(),
        doc.wall_s,
        if doc.status == RunStatus::Interrupted {
            " — interrupted"
        } else {
            ""
        }
    )
}

/// Why a point's numbers are wrong, missing or imprecise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PointProblem<'a> {
    /// Its checksum disagreed with the reference computation: its timing times a wrong result.
    WrongChecksum,
    /// It has no timing: it failed at this stage.
    Failed { stage: &'a str },
    /// Its timing carries these precision warnings (none: a clean timing, or no timing).
    Imprecise(&'a [PrecisionWarning]),
}

/// The problem of `r`, the worst first: a wrong checksum, then a failure, then its warnings.
pub fn point_problem(r: &PointRecord) -> PointProblem<'_> {
    if r.checksum.status == ChecksumOutcome::Mismatch {
        return PointProblem::WrongChecksum;
    }
    if let (None, Some(e)) = (&r.timing, &r.error) {
        return PointProblem::Failed { stage: &e.stage };
    }
    PointProblem::Imprecise(
        r.timing
            .as_ref()
            .and_then(|t| t.precision.as_ref())
            .map(|p| p.warnings.as_slice())
            .unwrap_or_default(),
    )
}

/// Bytes the point's loads and stores request per second of its median (all threads), in
/// GB/s: the recorded figure for bandwidth kernels, the same quotient for the others.
pub fn requested_gb_per_s(r: &PointRecord) -> Option<f64> {
    let t = r.timing.as_ref()?;
    t.gb_per_s.or_else(|| {
        let w = r.work?;
        let bytes = (w.bytes_read + w.bytes_written).saturating_mul(r.threads as u64);
        (bytes > 0).then(|| bytes as f64 / t.ns_per_run.median)
    })
}

/// What the tables showed, so the footnotes explain only that.
#[derive(Debug, Clone, Default)]
pub struct Shown {
    /// Headers of the timed columns some table kept.
    pub columns: Vec<String>,
    /// Some table showed simulated misses; some of them of a simulated prefix only.
    pub simulated: bool,
    pub prefix: bool,
    /// The precision warnings some row was marked with.
    pub warnings: Vec<PrecisionWarning>,
}

/// The footnotes: what each figure shown is, the units, the marks shown, and whether hardware
/// counters were available.
pub fn footnotes(doc: &ResultsDocument, shown: &Shown) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    let timed: Vec<String> = TIMED_FIGURES
        .iter()
        .filter(|(header, _)| shown.columns.iter().any(|c| c == header))
        .map(|(header, meaning)| format!("{header} = {meaning}"))
        .collect();
    if !timed.is_empty() {
        notes.push(format!("timed: {}.", timed.join("; ")));
    }
    if shown.simulated {
        let start = doc
            .records
            .iter()
            .find_map(|r| r.simulated.as_ref())
            .map_or("cold", |s| s.start.as_str());
        let mut simulated = format!(
            "simulated: L1d miss … = misses of one {start} run of the kernel's addresses, \
             conflict misses (3C split) in brackets"
        );
        if shown.prefix {
            simulated.push_str("; ≥ = only the first accesses of a long run were simulated");
        }
        simulated.push('.');
        notes.push(simulated);
    }
    notes.extend(time_model_sentence(doc));
    notes.push(
        "units: sizes binary (1 KiB = 1,024 B), in bytes when not a whole KiB, MiB or GiB; \
         counts exact, grouped by commas."
            .into(),
    );
    if !shown.warnings.is_empty() {
        let mut warnings = shown.warnings.clone();
        warnings.sort();
        let legend: Vec<&str> = warnings.iter().map(|w| mark_legend(*w)).collect();
        notes.push(format!("!: {}.", legend.join("; ")));
    }
    if let Some(hw) = doc.records.iter().find_map(|r| r.counters.as_ref())
        && !hw.hardware.available
    {
        notes.push(format!(
            "measured: hardware counters unavailable ({}); software counters in the results file.",
            hw.hardware.reason.as_deref().unwrap_or("no reason given")
        ));
    }
    notes
}

/// Most points a warning line names before it says how many more there are.
const NAMED_POINTS: usize = 4;

/// One point a precision finding names; of a missed CI target, the CI it ended with.
#[derive(Debug, Clone, PartialEq)]
pub struct Flagged {
    /// The record's index.
    pub index: usize,
    /// The CI width relative to the median, and the target (a missed CI target only).
    pub ci: Option<(f64, f64)>,
}

/// One kind of precision warning over a run: which timed points carry it, of how many.
#[derive(Debug, Clone, PartialEq)]
pub struct PrecisionFinding {
    pub kind: PrecisionWarning,
    pub flagged: Vec<Flagged>,
    pub timed: usize,
}

/// One finding per kind of precision warning some timed point of `doc` carries.
pub fn precision_findings(doc: &ResultsDocument) -> Vec<PrecisionFinding> {
    let timed = doc.records.iter().filter(|r| r.timing.is_some()).count();
    let kinds = [
        PrecisionWarning::CiTargetMissed,
        PrecisionWarning::Outliers,
        PrecisionWarning::Drift,
    ];
    kinds
        .into_iter()
        .filter_map(|kind| {
            let flagged: Vec<Flagged> = doc
                .records
                .iter()
                .filter_map(|r| {
                    let t = r.timing.as_ref()?;
                    let p = t.precision.as_ref()?;
                    p.warnings.contains(&kind).then(|| Flagged {
                        index: r.index,
                        ci: (kind == PrecisionWarning::CiTargetMissed)
                            .then(|| (t.ns_per_run.relative_ci_width(), p.target_relative_ci)),
                    })
                })
                .collect();
            (!flagged.is_empty()).then_some(PrecisionFinding {
                kind,
                flagged,
                timed,
            })
        })
        .collect()
}

impl PrecisionFinding {
    /// The warning, as hyperfine warns: what was seen, at which points (named by `name_of`
    /// from a record's index, the first few), and what to do about it.
    pub fn sentence(&self, name_of: impl Fn(usize) -> String) -> String {
        let (one, several) = advice(self.kind);
        let (count, timed) = (self.flagged.len(), self.timed);
        let mut named: Vec<String> = self
            .flagged
            .iter()
            .take(NAMED_POINTS)
            .map(|f| match f.ci {
                Some((width, target)) => format!(
                    "{}: CI {} wide, target {}",
                    name_of(f.index),
                    percent(width),
                    percent(target)
                ),
                None => name_of(f.index),
            })
            .collect();
        if count > NAMED_POINTS {
            named.push(format!("and {} more", count - NAMED_POINTS));
        }
        let subject = if count == 1 && timed == 1 {
            format!("the point {one}")
        } else if count == 1 {
            format!("1 of {timed} timed points {one}")
        } else {
            format!("{count} of {timed} timed points {several}")
        };
        format!(
            "warning: {subject} ({}). {}",
            named.join("; "),
            remedy(self.kind)
        )
    }
}

/// One warning per point that failed or computed a wrong result, with the error recorded.
pub fn failure_sentences(doc: &ResultsDocument) -> Vec<String> {
    doc.records
        .iter()
        .filter(|r| r.checksum.status != ChecksumOutcome::Ok || r.timing.is_none())
        .filter_map(|r| {
            let e = r.error.as_ref()?;
            Some(format!(
                "warning: point {} ({}): {}: {}",
                r.index, r.kernel, e.stage, e.message
            ))
        })
        .collect()
}

/// Of an interrupted run, how many of its points it kept.
pub fn interrupted_sentence(doc: &ResultsDocument) -> Option<String> {
    (doc.status == RunStatus::Interrupted).then(|| {
        format!(
            "interrupted: kept {} of {} points",
            doc.records.len(),
            doc.suite.points
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::schema::tests::sample_document;
    use crate::results::{PointError, Precision};

    /// `n` timed points; point k carries `warnings[k]` (none past the list).
    fn run(n: usize, warnings: &[&[PrecisionWarning]]) -> ResultsDocument {
        let mut doc = sample_document();
        let template = doc.records[0].clone();
        doc.records = (0..n)
            .map(|index| {
                let mut r = template.clone();
                r.index = index;
                r.timing.as_mut().unwrap().precision = Some(Precision {
                    target_relative_ci: 0.005,
                    outliers: None,
                    drift: None,
                    warnings: warnings.get(index).copied().unwrap_or_default().to_vec(),
                });
                r
            })
            .collect();
        doc.suite.points = n;
        doc
    }

    #[test]
    fn a_finding_names_its_points_counts_them_and_says_what_to_do() {
        use PrecisionWarning::*;
        let ci: &[PrecisionWarning] = &[CiTargetMissed];
        let out: &[PrecisionWarning] = &[Outliers];
        // (points, warnings per point, the sentence's start, what it names)
        let cases: [(usize, Vec<&[PrecisionWarning]>, &str, &str); 4] = [
            (
                1,
                vec![out],
                "warning: the point has statistical outliers",
                "(p0).",
            ),
            (
                3,
                vec![&[], out],
                "warning: 1 of 3 timed points has statistical",
                "(p1).",
            ),
            (
                6,
                vec![ci; 6],
                "warning: 6 of 6 timed points missed the CI target: their",
                "(p0: CI ",
            ),
            (
                6,
                vec![out; 6],
                "warning: 6 of 6 timed points have",
                "p3; and 2 more).",
            ),
        ];
        for (n, warnings, start, names) in cases {
            let findings = precision_findings(&run(n, &warnings));
            assert_eq!(findings.len(), 1, "{start}");
            let sentence = findings[0].sentence(|i| format!("p{i}"));
            assert!(sentence.starts_with(start), "{sentence}");
            assert!(sentence.contains(names), "{sentence}");
            assert!(sentence.ends_with(remedy(findings[0].kind)), "{sentence}");
        }
        assert!(precision_findings(&run(3, &[])).is_empty());
    }

    #[test]
    fn a_point_problem_is_the_worst_of_what_went_wrong() {
        let mut doc = run(1, &[&[PrecisionWarning::Drift]]);
        let r = &mut doc.records[0];
        assert_eq!(
            point_problem(r),
            PointProblem::Imprecise(&[PrecisionWarning::Drift])
        );
        r.timing = None;
        r.error = Some(PointError {
            stage: "run".into(),
            message: "boom".into(),
        });
        assert_eq!(point_problem(r), PointProblem::Failed { stage: "run" });
        r.checksum.status = ChecksumOutcome::Mismatch;
        assert_eq!(point_problem(r), PointProblem::WrongChecksum);
        assert_eq!(
            failure_sentences(&doc),
            ["warning: point 0 (row-sum): run: boom"]
        );
    }
}
