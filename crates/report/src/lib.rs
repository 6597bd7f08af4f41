//! The report: figures (plotters, embedded DejaVu font, PNG + SVG) and one self-contained HTML
//! page rendered from results documents. It reads only records and never measures.
//!
//! [`render`] writes a complete report directory — `index.html`, every figure, the results as
//! JSON and CSV — into a staging directory and moves the files into place (`outdir`): only a
//! new, empty or stridelab-owned directory is written, and only stridelab's own files in it are
//! replaced. Several documents render side by side (one column per machine).
#![forbid(unsafe_code)]

pub mod chart;
pub(crate) mod claims;
pub(crate) mod compare;
pub mod data;
pub mod figures;
pub(crate) mod findings;
pub(crate) mod grid;
pub mod infer;
pub mod outdir;
pub(crate) mod padding;
pub(crate) mod page;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use thiserror::Error;

use stridelab_core::results::output::OutputError;
use stridelab_core::results::{ResultsDocument, ResultsError, csv::to_csv};
use stridelab_core::vocab::ParamRules;

use figures::Outcome;

/// Why a report could not be rendered.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReportError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("cannot {action} `{path}`: {cause}")]
    Io {
        action: &'static str,
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("figure `{figure}`: {message}")]
    Figure { figure: String, message: String },
    #[error("no results file given")]
    NoInput,
    #[error("`{path}` is not a `stridelab infer --json` report: {message}")]
    Infer { path: PathBuf, message: String },
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(
        "report directory `{path}` exists and is not a directory; nothing was written (give a directory name)"
    )]
    NotADirectory { path: PathBuf },
    #[error(
        "will not write a report into `{path}`: {reason}; stridelab writes reports only into a new or empty directory or one of its own earlier reports, so nothing was written (choose another directory or move those files out)"
    )]
    NotOwned { path: PathBuf, reason: String },
    #[error(
        "another stridelab process is writing a report into `{path}` (it holds `{held}` there); wait for it or choose another directory"
    )]
    Busy { path: PathBuf, held: String },
    #[error("interrupted: no report was written")]
    Interrupted,
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ReportError {
    let path = path.to_path_buf();
    move |cause| ReportError::Io {
        action,
        path,
        cause,
    }
}

/// One results document to render, with where it came from.
#[derive(Debug, Clone)]
pub struct ReportInput {
    pub path: PathBuf,
    pub doc: ResultsDocument,
    /// `stridelab infer --json` output stored beside the results file, if any.
    pub infer: Option<stridelab_core::results::infer_doc::InferReport>,
    /// What each kernel does, by name (the catalogue's paragraphs).
    pub explanations: Explanations,
    /// Earlier runs on this run's machine that the caller found (a comparison learns the
    /// run-to-run noise from them), and where, in words.
    pub earlier: Vec<ResultsDocument>,
    pub earlier_source: String,
    /// This run against the earlier runs of its points, as the caller judged it (the main job).
    pub against_earlier: Option<stridelab_core::results::history::RunComparison>,
}

/// One paragraph per kernel name, shown at the top of the sections that measure it; handed in
/// by the caller because the report never imports the kernels.
pub type Explanations = std::collections::BTreeMap<String, String>;

impl ReportInput {
    /// Reads and validates a results file (errors name the offending field); `rules` are the
    /// catalogue's, handed in by the caller because the report never imports the kernels.
    /// `explanations` describe the kernels (see [`Explanations`]).
    pub fn read(
        path: &Path,
        rules: &dyn ParamRules,
        explanations: Explanations,
    ) -> Result<Self, ReportError> {
        Ok(Self {
            path: path.to_path_buf(),
            doc: ResultsDocument::read(path, rules)?,
            infer: infer::read_beside(path)?,
            explanations,
            earlier: Vec::new(),
            earlier_source: String::new(),
            against_earlier: None,
        })
    }
}

/// A report section: an anchor, a title and the kernels it explains; its figures are the
/// registered ones that name its anchor ([`figures::of_section`]).
pub struct SectionDef {
    pub anchor: &'static str,
    pub title: &'static str,
    pub kernels: &'static [&'static str],
    /// Shown only when a run has its points, and otherwise never named as missing: the
    /// section of a user's own kernels, which most runs do not have.
    pub optional: bool,
}

/// The anchor of the time model's section (its intro is the model's, not a kernel's).
pub const TIME_MODEL_ANCHOR: &str = "time-model";

/// The sections in page order (the conflict probes hold the headline figure).
pub const SECTIONS: &[SectionDef] = &[
    SectionDef {
        anchor: "conflict",
        title: "Power-of-two strides and cache sets",
        kernels: &["conflict"],
        optional: false,
    },
    SectionDef {
        anchor: "stride",
        title: "Time per access vs step",
        kernels: &["stride-sum"],
        optional: false,
    },
    SectionDef {
        anchor: "traverse",
        title: "Row vs column order",
        kernels: &["row-sum", "col-sum"],
        optional: false,
    },
    SectionDef {
        anchor: "latency",
        title: "Working-set latency",
        kernels: &["chase"],
        optional: false,
    },
    SectionDef {
        anchor: "transpose",
        title: "Transposes and copies",
        kernels: &["transpose"],
        optional: false,
    },
    SectionDef {
        anchor: "view",
        title: "Views: diagonal, flip, sub-sample",
        kernels: &["view-sum"],
        optional: false,
    },
    SectionDef {
        anchor: "blocked",
        title: "Blocked (tile-major) layouts",
        kernels: &["tiled-sum", "to-tiles"],
        optional: false,
    },
    SectionDef {
        anchor: "tensor",
        title: "Tensor layouts: channels first or last, jagged or flat",
        kernels: &["channel-sum", "stencil3x3", "to-nhwc", "jagged"],
        optional: false,
    },
    SectionDef {
        anchor: "bandwidth",
        title: "Bandwidth vs threads",
        kernels: &["copy", "read"],
        optional: false,
    },
    SectionDef {
        anchor: "three-c",
        title: "Where the misses come from (3C)",
        kernels: &[],
        optional: false,
    },
    SectionDef {
        anchor: "matmul",
        title: "Matrix multiplication loop orders",
        kernels: &["matmul"],
        optional: false,
    },
    SectionDef {
        anchor: "loops",
        title: "Your own loop nests",
        kernels: &["loop"],
        optional: true,
    },
    SectionDef {
        anchor: TIME_MODEL_ANCHOR,
        title: "Measured time against the time model",
        kernels: &[],
        optional: true,
    },
];

/// One machine's rendered content.
pub struct MachineView<'a> {
    pub label: String,
    pub input: &'a ReportInput,
    /// Suffix of this machine's file names (`` for a single input, `-m2` for the second).
    pub suffix: String,
    pub findings: Vec<findings::Finding>,
    /// Per section (in [`SECTIONS`] order), the outcomes of its figures.
    pub sections: Vec<Vec<Outcome>>,
    pub json_name: String,
    pub csv_name: String,
    /// The inferred-geometry figure, when an infer report came with the results.
    pub infer: Option<figures::Built>,
}

/// What [`render`] wrote.
#[derive(Debug, Clone)]
pub struct RenderedReport {
    pub dir: PathBuf,
    pub index: PathBuf,
    /// Figure files (PNG and SVG) relative to `dir`.
    pub figures: Vec<String>,
    /// `id: reason` for every figure left out.
    pub omitted: Vec<String>,
}

/// Renders a report for `inputs` (one column per machine) into `out` (see `outdir` for which
/// directories may be written and what is replaced).
pub fn render(inputs: &[ReportInput], out: &Path) -> Result<RenderedReport, ReportError> {
    let claim = outdir::claim(out)?;
    render_claimed(inputs, &claim, &AtomicBool::new(false))
}

/// Renders into a directory claimed earlier (checked again first); stops with
/// [`ReportError::Interrupted`], leaving nothing behind, once `cancel` is set.
pub fn render_claimed(
    inputs: &[ReportInput],
    claim: &outdir::Claim,
    cancel: &AtomicBool,
) -> Result<RenderedReport, ReportError> {
    if inputs.is_empty() {
        return Err(ReportError::NoInput);
    }
    let staging = claim.stage()?;
    let (figures, omitted) = render_into(inputs, staging.path(), cancel)?;
    if cancel.load(Ordering::SeqCst) {
        return Err(ReportError::Interrupted);
    }
    staging.publish()?;
    let out = claim.dir();
    Ok(RenderedReport {
        dir: out.to_path_buf(),
        index: out.join("index.html"),
        figures,
        omitted,
    })
}

/// Copies the files of the finished report in `src` into the claimed directory (the main job's
/// `reports/latest`).
pub fn copy_report(src: &Path, claim: &outdir::Claim) -> Result<(), ReportError> {
    let staging = claim.stage()?;
    for entry in fs::read_dir(src).map_err(io("list", src))? {
        let entry = entry.map_err(io("list", src))?;
        let name = entry.file_name();
        if entry.file_type().is_ok_and(|t| t.is_file()) && name != outdir::MANIFEST {
            let to = staging.path().join(&name);
            fs::copy(entry.path(), &to).map_err(io("copy", &to))?;
        }
    }
    staging.publish()?;
    Ok(())
}

fn render_into(
    inputs: &[ReportInput],
    dir: &Path,
    cancel: &AtomicBool,
) -> Result<(Vec<String>, Vec<String>), ReportError> {
    let check = || {
        if cancel.load(Ordering::SeqCst) {
            Err(ReportError::Interrupted)
        } else {
            Ok(())
        }
    };
    let labels = run_labels(inputs);
    let mut views = Vec::new();
    let mut figure_files = Vec::new();
    let mut omitted = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let suffix = if inputs.len() == 1 {
            String::new()
        } else {
            format!("-m{}", i + 1)
        };
        let mut sections = Vec::new();
        for section in SECTIONS {
            let mut outcomes = Vec::new();
            for figure in figures::of_section(section.anchor) {
                check()?;
                let mut outcome = (figure.build)(&input.doc);
                match &mut outcome {
                    Outcome::Drawn(built) => {
                        built.figure.id.push_str(&suffix);
                        built.figure.render(dir)?;
                        figure_files.push(format!("{}.png", built.figure.id));
                        figure_files.push(format!("{}.svg", built.figure.id));
                    }
                    // An optional section the run has no points for is not missed.
                    Outcome::Omitted { .. } if section.optional => {}
                    Outcome::Omitted { id, reason, .. } => {
                        omitted.push(format!("{id}{suffix}: {reason}"))
                    }
                }
                outcomes.push(outcome);
            }
            sections.push(outcomes);
        }
        let infer_built = match &input.infer {
            Some(report) => {
                let built = infer::built(report, &suffix);
                if !built.figure.panels.is_empty() {
                    built.figure.render(dir)?;
                    figure_files.push(format!("{}.png", built.figure.id));
                    figure_files.push(format!("{}.svg", built.figure.id));
                }
                let text =
                    serde_json::to_string_pretty(report).map_err(|e| ReportError::Infer {
                        path: infer::path_beside(&input.path),
                        message: e.to_string(),
                    })?;
                stridelab_core::results::write_atomic(
                    &dir.join(format!("infer{suffix}.json")),
                    text.as_bytes(),
                )?;
                Some(built)
            }
            None => None,
        };
        let json_name = format!("results{suffix}.json");
        let csv_name = format!("results{suffix}.csv");
        input.doc.write_atomic(&dir.join(&json_name))?;
        stridelab_core::results::write_atomic(&dir.join(&csv_name), to_csv(&input.doc).as_bytes())?;
        views.push(MachineView {
            label: labels[i].clone(),
            input,
            suffix,
            findings: findings::findings(&input.doc),
            sections,
            json_name,
            csv_name,
            infer: infer_built,
        });
    }
    check()?;
    let mut comparisons: Vec<page::Comparison> = views
        .iter()
        .filter_map(|v| {
            let found = v.input.against_earlier.as_ref()?;
            compare::against_earlier(found, &v.label)
        })
        .collect();
    comparisons.extend(views.iter().skip(1).filter_map(|v| {
        compare::comparison(views[0].input, &views[0].label, inputs, v.input, &v.label)
    }));
    let html = page::render_page(&views, &comparisons);
    let index = dir.join("index.html");
    fs::write(&index, html).map_err(io("write", &index))?;
    Ok((figure_files, omitted))
}

/// A distinct, informative title per run: CPU model, logical CPUs and when it started, then the
/// file name where two runs would read alike, then a number where even those match.
pub fn run_labels(inputs: &[ReportInput]) -> Vec<String> {
    let base: Vec<String> = inputs
        .iter()
        .map(|input| {
            let when = utc_stamp(input.doc.started_unix_s, true);
            format!(
                "{} · {}",
                data::machine_label(&input.doc),
                when.trim_end_matches(" UTC").get(..16).unwrap_or(&when)
            ) + " UTC"
        })
        .collect();
    let mut labels: Vec<String> = base
        .iter()
        .zip(inputs)
        .map(|(label, input)| {
            if base.iter().filter(|b| *b == label).count() > 1 {
                let file = input
                    .path
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default();
                format!("{label} · {file}")
            } else {
                label.clone()
            }
        })
        .collect();
    let snapshot = labels.clone();
    for (i, label) in labels.iter_mut().enumerate() {
        if snapshot.iter().filter(|l| *l == label).count() > 1 {
            label.push_str(&format!(" · run {}", i + 1));
        }
    }
    labels
}

pub use stridelab_core::units::utc_stamp;

#[cfg(test)]
mod tests {
    use super::*;

    fn input(path: &str, cpu: &str, started: u64) -> ReportInput {
        // The recorded small run, relabelled (only its manifest and start are read here).
        let mut doc: ResultsDocument =
            serde_json::from_str(include_str!("../../../tests/fixtures/results_small.json"))
                .unwrap();
        doc.info["cpu_model"] = cpu.into();
        doc.started_unix_s = started;
        ReportInput {
            path: PathBuf::from(path),
            doc,
            infer: None,
            explanations: Explanations::new(),
            earlier: Vec::new(),
            earlier_source: String::new(),
            against_earlier: None,
        }
    }

    #[test]
    fn runs_side_by_side_get_distinct_titles() {
        let labels = |inputs: &[ReportInput]| run_labels(inputs);
        let day = 1_795_343_663;
        let two_cpus = labels(&[
            input("a.json", "Intel Xeon", day),
            input("b.json", "AMD EPYC", day),
        ]);
        assert!(two_cpus[0].starts_with("Intel Xeon") && two_cpus[1].starts_with("AMD EPYC"));
        assert!(two_cpus[0].contains("2026-11-22 10:34 UTC"), "{two_cpus:?}");
        let two_days = labels(&[
            input("a.json", "X", day),
            input("a.json", "X", day + 86_400),
        ]);
        assert_ne!(two_days[0], two_days[1]);
        assert!(!two_days[0].contains("a.json"), "{two_days:?}");
        let same_run = labels(&[input("dir/a.json", "X", day), input("b.json", "X", day)]);
        assert!(same_run[0].ends_with("a.json") && same_run[1].ends_with("b.json"));
        let same_file = labels(&[input("a.json", "X", day), input("a.json", "X", day)]);
        assert!(same_file[0].ends_with("run 1") && same_file[1].ends_with("run 2"));
    }

    #[test]
    fn utc_stamps_match_known_dates() {
        let cases: &[(u64, &str, &str)] = &[
            (0, "19700101T000000Z", "1970-01-01 00:00:00 UTC"),
            (951_782_400, "20000229T000000Z", "2000-02-29 00:00:00 UTC"),
            (1_795_343_663, "20261122T103423Z", "2026-11-22 10:34:23 UTC"),
            (
                u64::MAX,
                "unix18446744073709551615",
                "18446744073709551615 s after 1970 UTC",
            ),
        ];
        for (t, compact, human) in cases {
            assert_eq!(utc_stamp(*t, false), *compact);
            assert_eq!(utc_stamp(*t, true), *human);
        }
    }
}
