//! Figure 3: the conflict-probe heat map, stride (with ±1 controls) × K → ns per load.
//! One figure of the report, built from records alone.

use super::common::distinct;
use super::conflict::{Probe, predicted_cyclic_misses, probes};
use super::{Built, FigureDef, Outcome, Table, est_cell, omitted, prov_timed};
use crate::chart::{ColourScale, Figure, HeatPanel, Panel, format_bytes, format_number};
use crate::claims::{Claim, value_range};
use crate::data::{self, Estimate};
use stridelab_core::results::{CacheLevel, ResultsDocument};

/// Figure 3: the conflict-probe heat map, stride (with ±1 controls) × K → ns per load.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig03-conflict-heatmap",
    title: "Conflict-probe heat map",
    section: "conflict",
    build: conflict_heatmap,
};

fn conflict_heatmap(doc: &ResultsDocument) -> Outcome {
    let probes = probes(doc);
    let timed: Vec<&Probe> = probes.iter().filter(|p| p.ns.is_some()).collect();
    if timed.is_empty() {
        return omitted(
            &FIGURE,
            "no timed `conflict` probe points in this results file",
        );
    }
    if timed.len() < 2 {
        // A heat map of one cell compares nothing.
        let p = timed[0];
        return omitted(
            &FIGURE,
            format!(
                "one timed probe (K = {} at {} B: {} ns per load) is no stride × K map",
                p.k,
                p.stride_bytes,
                p.ns.map_or_else(|| "—".into(), |e| crate::chart::format_number(e.value))
            ),
        );
    }
    let levels = data::data_levels(doc);
    let l1 = levels.first();
    // The set model predicts no L1 miss for K loads s bytes apart.
    let fits_l1 = |s: i64, k: u64| predicted_cyclic_misses(&probes, s, k).first() == Some(&0.0);
    let conflicting = |s: i64| l1.is_some_and(|l| s % l.set_span() as i64 == 0);
    let grid = Grid::of(&timed);
    let divider = l1.and_then(|l| {
        let row = grid.ks.iter().position(|&k| k > u64::from(l.ways))?;
        Some((row, format!("{} ways = {}", l.name, l.ways)))
    });
    let typical = grid.typical_fitting(&fits_l1);
    let marks = grid.tlb_marks(&fits_l1, typical);
    let mut look_for: Vec<Claim> = l1.map(|l| above_the_ways(&timed, l)).into_iter().collect();
    look_for.push(Claim::derived(
        "conflict.tlb",
        tlb_note(marks.len(), typical),
    ));
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Conflict probes: stride × K".into(),
            provenance: format!(
                "{}; ways from the recorded geometry ({})",
                prov_timed(doc),
                data::geometry_summary(&levels[..levels.len().min(1)])
            ),
            panels: vec![Panel::Heat(grid.panel(&conflicting, divider, marks))],
            panel_width: 1000,
            panel_height: 420,
        },
        tables: vec![grid.table()],
        look_for,
        notes: Vec::new(),
    }))
}

/// The timed probes laid out as a grid: one column per stride, one row per K.
struct Grid<'p, 'd> {
    timed: &'p [&'p Probe<'d>],
    strides: Vec<i64>,
    ks: Vec<u64>,
}

impl<'p, 'd> Grid<'p, 'd> {
    fn of(timed: &'p [&'p Probe<'d>]) -> Self {
        Self {
            timed,
            strides: distinct(timed.iter().map(|p| p.stride_bytes)),
            ks: distinct(timed.iter().map(|p| p.k)),
        }
    }

    fn estimate(&self, s: i64, k: u64) -> Option<Estimate> {
        self.timed
            .iter()
            .find(|p| p.stride_bytes == s && p.k == k)
            .and_then(|p| p.ns)
    }

    fn value(&self, s: i64, k: u64) -> Option<f64> {
        self.estimate(s, k).map(|e| e.value)
    }

    /// The median of the cells the set model says fit the L1 (no predicted L1 miss).
    fn typical_fitting(&self, fits_l1: &dyn Fn(i64, u64) -> bool) -> Option<f64> {
        let fitting: Vec<f64> = self
            .strides
            .iter()
            .flat_map(|&s| self.ks.iter().map(move |&k| (s, k)))
            .filter(|&(s, k)| fits_l1(s, k))
            .filter_map(|(s, k)| self.value(s, k))
            .collect();
        data::median(&fitting)
    }

    /// A cell the set model says fits the L1 but that is at least twice as slow as the
    /// `typical` fitting cell is slowed by something else — the data TLB when the K loads sit
    /// on K different pages.
    fn tlb_marks(
        &self,
        fits_l1: &dyn Fn(i64, u64) -> bool,
        typical: Option<f64>,
    ) -> Vec<(usize, usize, String)> {
        let mut marks = Vec::new();
        for (c, &s) in self.strides.iter().enumerate() {
            for (r, &k) in self.ks.iter().enumerate() {
                if fits_l1(s, k)
                    && let (Some(v), Some(t)) = (self.value(s, k), typical)
                    && v >= 2.0 * t
                {
                    marks.push((c, r, "not L1: TLB?".to_string()));
                }
            }
        }
        marks
    }

    /// The heat map; strides that are not `conflicting` are the ±1 controls, named `(ctl)`.
    fn panel(
        &self,
        conflicting: &dyn Fn(i64) -> bool,
        divider: Option<(usize, String)>,
        marks: Vec<(usize, usize, String)>,
    ) -> HeatPanel {
        let columns = self
            .strides
            .iter()
            .map(|&s| {
                if conflicting(s) {
                    format!("{s} B")
                } else {
                    format!("{s} B (ctl)")
                }
            })
            .collect();
        HeatPanel {
            title: "ns per dependent load".into(),
            x_label: "stride (bytes); ctl = ±1-element control".into(),
            y_label: "K (loads in the cycle)".into(),
            columns,
            rows: self.ks.iter().map(|k| k.to_string()).collect(),
            values: (self.ks.iter())
                .map(|&k| self.strides.iter().map(|&s| self.value(s, k)).collect())
                .collect(),
            value_label: "ns per load (timed)".into(),
            divider,
            marks,
            scale: ColourScale::Log,
        }
    }

    /// The timed cells with their CIs, one row per K.
    fn table(&self) -> Table {
        let mut headers = vec!["K".to_string()];
        headers.extend(self.strides.iter().map(|s| format!("{s} B")));
        let rows = (self.ks.iter())
            .map(|&k| {
                let cells = self.strides.iter().map(|&s| est_cell(self.estimate(s, k)));
                std::iter::once(k.to_string()).chain(cells).collect()
            })
            .collect();
        Table {
            caption: "ns per load (timed, median and CI)".into(),
            headers,
            rows,
        }
    }
}

/// Above the ways (K > ways), the multiples of the set span against their ±1 controls, timed.
fn above_the_ways(timed: &[&Probe], l1: &CacheLevel) -> Claim {
    let ways = u64::from(l1.ways);
    let span = l1.set_span();
    let ns = |multiple: bool| -> Vec<f64> {
        timed
            .iter()
            .filter(|p| p.k > ways && (p.stride_bytes.unsigned_abs() % span == 0) == multiple)
            .filter_map(|p| p.ns.map(|e| e.value))
            .collect()
    };
    let (hot, cold) = (ns(true), ns(false));
    if hot.is_empty() || cold.is_empty() {
        return Claim::derived(
            "conflict.heat",
            format!(
                "No probe above the {ways} ways has both a multiple of {} and a control timed, \
                 so the map has nothing to compare above the line.",
                format_bytes(span as f64)
            ),
        );
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let order = if min(&hot) > max(&cold) {
        "every multiple is slower than every control"
    } else if max(&hot) < min(&cold) {
        "every multiple is faster than every control"
    } else {
        "the two ranges overlap"
    };
    Claim::derived(
        "conflict.heat",
        format!(
            "Above the line (K > {ways}, the {} ways), the multiples of {} take {} ns per load \
             and their ±1 controls {} ns (timed): {order}.",
            l1.name,
            format_bytes(span as f64),
            value_range(&hot),
            value_range(&cold)
        ),
    )
}

/// What the TLB marks say: none, or how many cells and the typical fitting cell's time.
fn tlb_note(marked: usize, typical: Option<f64>) -> String {
    if marked == 0 {
        "No cell slowed down where the L1 model says the lines fit, so no TLB cliff shows at \
         these strides and K."
            .to_string()
    } else {
        format!(
            "{marked} cell(s) are ≥ 2× slower than the typical cell that fits the L1 ({} ns) \
             although the model says their lines fit the L1 sets (marked \"not L1: TLB?\"): \
             the data TLB, not the cache.",
            typical.map(format_number).unwrap_or_default()
        )
    }
}
