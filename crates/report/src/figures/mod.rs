//! The figures of the report, built from records (never from the machine): each
//! builder returns the figure, the table of numbers behind it and what to look for — or says
//! why it was omitted when the results hold no data for it.
//!
//! Provenance is part of every figure: `timed` (wall clock), `simulated` (with the geometry)
//! and `model` (the set/GCD model's predictions the harness recorded with each point), drawn
//! dashed. A figure never runs a model itself: a file without recorded predictions (schema 1)
//! gets the measured data and a note saying so.
//!
//! Each figure lives in its own file as a [`FigureDef`] descriptor; [`REGISTRY`] lists them in
//! figure order, and a report section draws the registered figures that name it. A new
//! figure is one new file and one line in the registry.

mod common;
mod conflict;
mod conversion;
pub mod fig01_miss_rate_vs_stride;
pub(crate) mod fig02_sets_used;
pub(crate) mod fig03_conflict_heatmap;
pub(crate) mod fig04_stride_sweep;
pub(crate) mod fig05_working_set;
pub(crate) mod fig06_row_vs_column;
pub(crate) mod fig07_transpose;
pub(crate) mod fig08_views;
pub(crate) mod fig09_blocked;
pub(crate) mod fig10_threads;
pub(crate) mod fig11_three_c;
pub mod fig12_sweep_vs_stride;
pub mod fig13_sweep_vs_gcd;
pub(crate) mod fig14_matmul;
pub(crate) mod fig15_channels;
pub(crate) mod fig16_jagged;
pub(crate) mod fig17_element_types;
pub(crate) mod fig19_padding;
pub(crate) mod fig20_loops;
pub(crate) mod fig21_time_model;
mod labels;
mod sweep;

use crate::chart::{Figure, format_number};
use crate::claims::Claim;
use crate::data::{self, Estimate};
use stridelab_core::results::{PointRecord, ResultsDocument};

pub use labels::point_label;

/// One figure of the report: a stable id (its file name), a title, the section it belongs to
/// and a builder that reads only the results document.
pub struct FigureDef {
    /// The file stem of the figure (`fig01-miss-rate-vs-stride`).
    pub id: &'static str,
    /// The title shown above the figure.
    pub title: &'static str,
    /// The anchor of the report section that shows the figure.
    pub section: &'static str,
    /// The figure with its tables, or why it was omitted.
    pub build: fn(&ResultsDocument) -> Outcome,
}

/// Every figure, in figure order.
pub const REGISTRY: &[&FigureDef] = &[
    &fig01_miss_rate_vs_stride::FIGURE,
    &fig02_sets_used::FIGURE,
    &fig03_conflict_heatmap::FIGURE,
    &fig12_sweep_vs_stride::FIGURE,
    &fig13_sweep_vs_gcd::FIGURE,
    &fig04_stride_sweep::FIGURE,
    &fig17_element_types::FIGURE,
    &fig05_working_set::FIGURE,
    &fig06_row_vs_column::FIGURE,
    &fig19_padding::FIGURE,
    &fig07_transpose::FIGURE,
    &fig08_views::FIGURE,
    &fig09_blocked::FIGURE,
    &fig10_threads::FIGURE,
    &fig11_three_c::FIGURE,
    &fig14_matmul::FIGURE,
    &fig15_channels::FIGURE,
    &fig16_jagged::FIGURE,
    &fig20_loops::FIGURE,
    &fig21_time_model::FIGURE,
];

/// The registered figures of one section, in figure order.
pub fn of_section(anchor: &str) -> impl Iterator<Item = &'static FigureDef> + '_ {
    REGISTRY
        .iter()
        .copied()
        .filter(move |f| f.section == anchor)
}

/// A table of numbers behind a figure; every cell is already formatted (no NaN, no inf).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub caption: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A figure that could be drawn, with its table and reading guide.
#[derive(Debug, Clone)]
pub struct Built {
    pub figure: Figure,
    pub tables: Vec<Table>,
    /// What to look for: sentences derived from the drawn data, or textbook expectations with
    /// this run's verdict (see `crate::claims`).
    pub look_for: Vec<Claim>,
    /// Parts left out (e.g. "no block-size sweep in this file").
    pub notes: Vec<String>,
}

/// One figure slot of a section.
#[derive(Debug, Clone)]
pub enum Outcome {
    Drawn(Box<Built>),
    Omitted {
        id: &'static str,
        title: &'static str,
        reason: String,
    },
}

fn omitted(figure: &FigureDef, reason: impl Into<String>) -> Outcome {
    Outcome::Omitted {
        id: figure.id,
        title: figure.title,
        reason: reason.into(),
    }
}

/// A cell for an optional number.
fn cell(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map(format_number)
        .unwrap_or_else(|| "—".into())
}

fn est_cell(e: Option<Estimate>) -> String {
    e.map(|e| e.display()).unwrap_or_else(|| "—".into())
}

/// `timed: wall clock, median of 10 samples, 95% bootstrap CI`.
fn prov_timed(doc: &ResultsDocument) -> String {
    format!(
        "timed: wall clock, median of {} samples ({}% bootstrap CI in the table)",
        doc.method.samples,
        (doc.method.confidence * 100.0).round()
    )
}

fn prov_sim(doc: &ResultsDocument) -> String {
    format!(
        "simulated: {} (LRU, cachegrind semantics)",
        data::geometry_summary(&data::data_levels(doc))
    )
}

/// Global misses per access at level `index` (misses there / accesses the kernel made).
fn misses_per_access(r: &PointRecord, index: usize) -> Option<f64> {
    let first = data::sim_level(r, 0)?;
    let level = data::sim_level(r, index)?;
    let accesses = data::accesses(first);
    (accesses > 0).then(|| level.misses as f64 / accesses as f64)
}

/// (misses − compulsory misses) at level `li` over the loads after the first pass (the
/// kernel's loads minus its compulsory misses at the first level): the steady state of a
/// repeated walk, which the set model predicts.
fn warm_misses_per_load(r: &PointRecord, li: usize) -> Option<f64> {
    let first = data::sim_level(r, 0)?;
    let level = data::sim_level(r, li)?;
    let warm_loads = data::accesses(first).checked_sub(first.compulsory)?;
    let warm_misses = level.misses.checked_sub(level.compulsory)?;
    (warm_loads > 0).then(|| warm_misses as f64 / warm_loads as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SECTIONS;

    fn small() -> ResultsDocument {
        serde_json::from_str(include_str!(
            "../../../../tests/fixtures/results_small.json"
        ))
        .unwrap()
    }

    /// The small run cut to the records `keep` accepts.
    fn only(keep: impl Fn(&PointRecord) -> bool) -> ResultsDocument {
        let mut doc = small();
        doc.records.retain(|r| keep(r));
        doc
    }

    #[test]
    fn a_grid_of_one_point_omits_the_figures_it_cannot_draw_and_says_why() {
        let one_probe = only(|r| {
            r.kernel == "conflict"
                && data::int(r, "count") == Some(8)
                && data::int(r, "stride") == Some(512)
        });
        let one_chase = only(|r| r.kernel == "chase" && data::int(r, "bytes") == Some(16384));
        // (document, figure, words its reason holds)
        let cases: &[(&ResultsDocument, &FigureDef, &str)] = &[
            (
                &one_probe,
                &fig01_miss_rate_vs_stride::FIGURE,
                "every K fits the sets its stride uses",
            ),
            (
                &one_probe,
                &fig02_sets_used::FIGURE,
                "every probe here uses 1",
            ),
            (
                &one_probe,
                &fig03_conflict_heatmap::FIGURE,
                "one timed probe (K = 8 at 4096 B",
            ),
            (
                &one_chase,
                &fig05_working_set::FIGURE,
                "one working set only (16 KiB",
            ),
        ];
        for &(doc, figure, words) in cases {
            match (figure.build)(doc) {
                Outcome::Omitted { reason, .. } => {
                    assert!(reason.contains(words), "{}: {reason}", figure.id)
                }
                Outcome::Drawn(_) => panic!("{}: drawn from one point", figure.id),
            }
        }
    }

    #[test]
    fn a_grid_over_the_tile_size_draws_every_tile_size() {
        let mut doc = only(|r| r.kernel == "tiled-sum");
        let template = doc.records[0].clone();
        for b in [8, 16] {
            let mut r = template.clone();
            r.params
                .insert("B".into(), stridelab_core::vocab::ParamValue::Int(b));
            doc.records.push(r);
        }
        let Outcome::Drawn(built) = (fig09_blocked::FIGURE.build)(&doc) else {
            panic!("omitted");
        };
        let crate::chart::Panel::Bars(bars) = &built.figure.panels[0] else {
            panic!("a bar panel");
        };
        let names: Vec<&str> = bars.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "tile-major, 32×32 tiles",
                "tile-major, 8×8 tiles",
                "tile-major, 16×16 tiles"
            ]
        );
        // No row-major walk of that matrix in the file: no empty row-major series.
        assert!(
            bars.series
                .iter()
                .all(|s| s.values.iter().any(Option::is_some))
        );
        assert_eq!(built.tables.len(), 3);
    }

    #[test]
    fn every_registered_figure_names_a_section_and_a_unique_id() {
        let mut ids = std::collections::BTreeSet::new();
        for f in REGISTRY {
            assert!(ids.insert(f.id), "duplicate figure id {}", f.id);
            assert!(
                SECTIONS.iter().any(|s| s.anchor == f.section),
                "{} names no section ({})",
                f.id,
                f.section
            );
        }
        let drawn: usize = SECTIONS.iter().map(|s| of_section(s.anchor).count()).sum();
        assert_eq!(drawn, REGISTRY.len());
    }
}
