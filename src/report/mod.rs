//! The report: figures (plotters, embedded DejaVu font, PNG + SVG) and one self-contained HTML
//! page rendered from results documents. It reads only records and never measures.
//!
//! [`render`] writes a complete report directory — `index.html`, every figure, the results as
//! JSON and CSV — into a temporary sibling directory and renames it into place, so a reader
//! never sees a half-written report. Several documents render side by side (one column per
//! machine).
#![forbid(unsafe_code)]

pub mod chart;
pub mod data;
pub mod figures;
pub mod findings;
pub mod infer;
pub mod page;

use std::fs;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::results::{ResultsDocument, ResultsError, csv::to_csv};

use figures::Outcome;

/// Why a report could not be rendered.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReportError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("figure `{figure}`: {message}")]
    Figure { figure: String, message: String },
    #[error("no results file given")]
    NoInput,
    #[error("`{path}` is not a `stridelab infer --json` report: {message}")]
    Infer { path: PathBuf, message: String },
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ReportError {
    let path = path.to_path_buf();
    move |source| ReportError::Io {
        action,
        path,
        source,
    }
}

/// One results document to render, with where it came from.
#[derive(Debug, Clone)]
pub struct ReportInput {
    pub path: PathBuf,
    pub doc: ResultsDocument,
    /// `stridelab infer --json` output stored beside the results file, if any.
    pub infer: Option<crate::cache::infer::InferReport>,
}

impl ReportInput {
    /// Reads and validates a results file (errors name the offending field).
    pub fn read(path: &Path) -> Result<Self, ReportError> {
        Ok(Self {
            path: path.to_path_buf(),
            doc: ResultsDocument::read(path)?,
            infer: infer::read_beside(path)?,
        })
    }
}

/// A report section: an anchor, a title, the kernels it explains and its figure builders.
pub struct SectionDef {
    pub anchor: &'static str,
    pub title: &'static str,
    pub kernels: &'static [&'static str],
    pub figures: &'static [fn(&ResultsDocument) -> Outcome],
}

/// The sections in page order (the conflict probes hold the headline figure).
pub const SECTIONS: &[SectionDef] = &[
    SectionDef {
        anchor: "conflict",
        title: "Power-of-two strides and cache sets",
        kernels: &["conflict"],
        figures: &[
            figures::miss_rate_vs_stride,
            figures::sets_used,
            figures::conflict_heatmap,
        ],
    },
    SectionDef {
        anchor: "stride",
        title: "Time per access vs step",
        kernels: &["stride-sum"],
        figures: &[figures::stride_sweep],
    },
    SectionDef {
        anchor: "traverse",
        title: "Row vs column order",
        kernels: &["row-sum", "col-sum"],
        figures: &[figures::row_vs_column],
    },
    SectionDef {
        anchor: "latency",
        title: "Working-set latency",
        kernels: &["chase"],
        figures: &[figures::working_set],
    },
    SectionDef {
        anchor: "transpose",
        title: "Transposes and copies",
        kernels: &["transpose"],
        figures: &[figures::transposes],
    },
    SectionDef {
        anchor: "view",
        title: "Views: diagonal, flip, sub-sample",
        kernels: &["view-sum"],
        figures: &[figures::views],
    },
    SectionDef {
        anchor: "blocked",
        title: "Blocked (tile-major) layouts",
        kernels: &["tiled-sum", "to-tiles"],
        figures: &[figures::blocked],
    },
    SectionDef {
        anchor: "bandwidth",
        title: "Bandwidth vs threads",
        kernels: &["copy", "read"],
        figures: &[figures::threads],
    },
    SectionDef {
        anchor: "three-c",
        title: "Where the misses come from (3C)",
        kernels: &[],
        figures: &[figures::three_c],
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

/// Renders a report for `inputs` (one column per machine) into `out`, replacing it atomically.
pub fn render(inputs: &[ReportInput], out: &Path) -> Result<RenderedReport, ReportError> {
    if inputs.is_empty() {
        return Err(ReportError::NoInput);
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(io("create directory", &parent))?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    if tmp.exists() {
        fs::remove_dir_all(&tmp).map_err(io("remove stale", &tmp))?;
    }
    fs::create_dir_all(&tmp).map_err(io("create directory", &tmp))?;
    let result = render_into(inputs, &tmp);
    let (figures, omitted) = match result {
        Ok(v) => v,
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    replace_dir(&tmp, out)?;
    Ok(RenderedReport {
        dir: out.to_path_buf(),
        index: out.join("index.html"),
        figures,
        omitted,
    })
}

/// Moves the finished `tmp` directory to `out`; an existing `out` is moved aside first and
/// removed only after the new one is in place.
pub fn replace_dir(tmp: &Path, out: &Path) -> Result<(), ReportError> {
    let old = out.with_file_name(format!(
        ".{}.old-{}",
        out.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let had_old = out.exists();
    if had_old {
        if old.exists() {
            fs::remove_dir_all(&old).map_err(io("remove stale", &old))?;
        }
        fs::rename(out, &old).map_err(io("move aside", out))?;
    }
    if let Err(e) = fs::rename(tmp, out) {
        if had_old {
            let _ = fs::rename(&old, out);
        }
        let _ = fs::remove_dir_all(tmp);
        return Err(io("rename into", out)(e));
    }
    if had_old {
        fs::remove_dir_all(&old).map_err(io("remove", &old))?;
    }
    Ok(())
}

fn render_into(
    inputs: &[ReportInput],
    dir: &Path,
) -> Result<(Vec<String>, Vec<String>), ReportError> {
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
            for build in section.figures {
                let mut outcome = build(&input.doc);
                match &mut outcome {
                    Outcome::Drawn(built) => {
                        built.figure.id.push_str(&suffix);
                        built.figure.render(dir)?;
                        figure_files.push(format!("{}.png", built.figure.id));
                        figure_files.push(format!("{}.svg", built.figure.id));
                    }
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
                crate::results::write_atomic(
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
        crate::results::write_atomic(&dir.join(&csv_name), to_csv(&input.doc).as_bytes())?;
        views.push(MachineView {
            label: data::machine_label(&input.doc),
            input,
            suffix,
            findings: findings::findings(&input.doc),
            sections,
            json_name,
            csv_name,
            infer: infer_built,
        });
    }
    let html = page::render_page(&views);
    let index = dir.join("index.html");
    fs::write(&index, html).map_err(io("write", &index))?;
    Ok((figure_files, omitted))
}

/// A UTC time stamp without a date library: `2026-11-22 10:34:23 UTC` (human) or
/// `20261122T103423Z` (for directory names, sortable).
pub fn utc_stamp(unix_s: u64, human: bool) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    if human {
        format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02} UTC")
    } else {
        format!("{year:04}{month:02}{day:02}T{h:02}{m:02}{s:02}Z")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps_match_known_dates() {
        let cases: &[(u64, &str, &str)] = &[
            (0, "19700101T000000Z", "1970-01-01 00:00:00 UTC"),
            (951_782_400, "20000229T000000Z", "2000-02-29 00:00:00 UTC"),
            (1_795_343_663, "20261122T103423Z", "2026-11-22 10:34:23 UTC"),
        ];
        for (t, compact, human) in cases {
            assert_eq!(utc_stamp(*t, false), *compact);
            assert_eq!(utc_stamp(*t, true), *human);
        }
    }

    #[test]
    fn replacing_a_directory_keeps_only_the_new_one() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("latest");
        for content in ["old", "new"] {
            let tmp = root.path().join(format!(".tmp-{content}"));
            fs::create_dir_all(&tmp).unwrap();
            fs::write(tmp.join("index.html"), content).unwrap();
            replace_dir(&tmp, &out).unwrap();
        }
        assert_eq!(fs::read_to_string(out.join("index.html")).unwrap(), "new");
        let left: Vec<_> = fs::read_dir(root.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "leftovers: {left:?}");
    }
}
