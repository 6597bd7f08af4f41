//! Figure 13: the geometry sweep's misses per load by gcd(stride in lines, sets) and K: one
//! heat map per swept level, a cell per (gcd, K) holding the mean simulated misses of every
//! stride of that gcd, and a mark where the set model predicts misses (sets / gcd × ways < K).

use super::sweep::{SweepPoint, SweptLevel, points, preset_note, swept_levels};
use super::{Built, FigureDef, Outcome, Table, cell, omitted, prov_sim};
use crate::chart::{ColourScale, Figure, HeatPanel, Panel};
use crate::claims::{Claim, Verdict};
use stridelab_core::results::ResultsDocument;

/// Figure 13: miss rate against the gcd of the stride in lines and the sets.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig13-sweep-miss-rate-vs-gcd",
    title: "Miss rate vs gcd(stride in lines, sets)",
    section: "conflict",
    build: sweep_vs_gcd,
};

/// Strides of one gcd class "behave alike" when their simulated misses per load differ by at
/// most this much.
const ALIKE: f64 = 0.01;

/// The mark of a cell where the set model predicts misses.
const MODEL_MARK: &str = "▲";

fn sweep_vs_gcd(doc: &ResultsDocument) -> Outcome {
    let levels = swept_levels(doc);
    if levels.is_empty() {
        return omitted(&FIGURE, "no geometry sweep in this results file");
    }
    let mut panels = Vec::new();
    let mut tables = Vec::new();
    let mut look_for = Vec::new();
    for swept in &levels {
        let pts = points(doc, swept);
        let classes = Classes::of(&pts);
        panels.push(Panel::Heat(classes.panel(swept)));
        tables.push(classes.table(swept));
        look_for.push(classes.onset_claim(swept));
    }
    look_for.push(alike_claim(doc, &levels));
    let figure = Figure {
        id: FIGURE.id.into(),
        title: "Misses per load by gcd(stride in lines, sets) and K: every stride of the sweep"
            .into(),
        provenance: format!(
            "{}; a cell is the mean over the strides of its gcd class; \"{MODEL_MARK}\": the \
             recorded model predicts misses (K > (sets / gcd) × ways){}",
            prov_sim(doc),
            preset_note(&levels)
        ),
        panels,
        panel_width: 560,
        panel_height: 300,
    };
    Outcome::Drawn(Box::new(Built {
        figure,
        tables,
        look_for,
        notes: Vec::new(),
    }))
}

/// The sweep points of one level grouped by (gcd, K).
struct Classes<'p> {
    gcds: Vec<u64>,
    ks: Vec<u64>,
    points: &'p [SweepPoint],
}

impl<'p> Classes<'p> {
    fn of(points: &'p [SweepPoint]) -> Self {
        Self {
            gcds: super::common::distinct(points.iter().map(|p| p.gcd)),
            ks: super::common::distinct(points.iter().map(|p| p.k)),
            points,
        }
    }

    fn members(&self, gcd: u64, k: u64) -> impl Iterator<Item = &SweepPoint> {
        self.points.iter().filter(move |p| p.gcd == gcd && p.k == k)
    }

    /// (min, max, mean) of the simulated warm misses of a class.
    fn simulated(&self, gcd: u64, k: u64) -> Option<(f64, f64, f64)> {
        let warm: Vec<f64> = self.members(gcd, k).filter_map(|p| p.warm).collect();
        if warm.is_empty() {
            return None;
        }
        let lo = warm.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = warm.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some((lo, hi, warm.iter().sum::<f64>() / warm.len() as f64))
    }

    /// Whether the model recorded with a class's points predicts misses there.
    fn model_misses(&self, gcd: u64, k: u64) -> bool {
        self.members(gcd, k)
            .filter_map(|p| p.model)
            .any(|m| m > 0.0)
    }

    fn panel(&self, swept: &SweptLevel) -> HeatPanel {
        let level = &swept.level;
        let mut marks = Vec::new();
        for (c, &g) in self.gcds.iter().enumerate() {
            for (r, &k) in self.ks.iter().enumerate() {
                if self.model_misses(g, k) {
                    marks.push((c, r, MODEL_MARK.to_string()));
                }
            }
        }
        HeatPanel {
            title: format!(
                "{}: {} sets × {} ways",
                swept.name(),
                level.sets,
                level.ways
            ),
            x_label: format!(
                "gcd(stride in lines, {}) → sets used = {} / gcd",
                level.sets, level.sets
            ),
            y_label: "K (lines walked)".into(),
            columns: self.gcds.iter().map(u64::to_string).collect(),
            rows: self.ks.iter().map(u64::to_string).collect(),
            values: (self.ks.iter())
                .map(|&k| {
                    self.gcds
                        .iter()
                        .map(|&g| self.simulated(g, k).map(|s| s.2))
                        .collect()
                })
                .collect(),
            value_label: format!("{} misses/load (sim)", level.name),
            divider: None,
            marks,
            scale: ColourScale::Linear(0.0, 1.0),
        }
    }

    /// Per K, the smallest gcd at which the simulation misses, beside the model's onset.
    fn onset_claim(&self, swept: &SweptLevel) -> Claim {
        let level = &swept.level;
        let parts: Vec<String> = self
            .ks
            .iter()
            .map(|&k| {
                let simulated = self
                    .gcds
                    .iter()
                    .find(|&&g| self.simulated(g, k).is_some_and(|s| s.2 > 0.0));
                let model = self.gcds.iter().find(|&&g| self.model_misses(g, k));
                match (simulated, model) {
                    (Some(s), Some(m)) if s == m => format!("K = {k} from gcd {s} (model: {m})"),
                    (Some(s), Some(m)) => format!("K = {k} from gcd {s} (model: from {m})"),
                    (Some(s), None) => format!("K = {k} from gcd {s} (model: never)"),
                    (None, Some(m)) => format!("K = {k} never (model: from {m})"),
                    (None, None) => format!("K = {k} never (model: never)"),
                }
            })
            .collect();
        Claim::derived(
            "sweep.onset",
            format!(
                "{}: misses start at {} (simulated; {} sets of {} ways, so gcd g leaves {} / g \
                 sets for K lines).",
                swept.name(),
                parts.join(", "),
                level.sets,
                level.ways,
                level.sets
            ),
        )
    }

    /// Per gcd and K: how many strides, the sets they use, and the range of simulated misses
    /// beside the model (one value: the model depends on the gcd alone).
    fn table(&self, swept: &SweptLevel) -> Table {
        let mut rows = Vec::new();
        for &g in &self.gcds {
            for &k in &self.ks {
                let of: Vec<&SweepPoint> = self.members(g, k).collect();
                let Some(first) = of.first() else { continue };
                let range = self.simulated(g, k);
                let models =
                    super::common::distinct(of.iter().filter_map(|p| p.model.map(f64::to_bits)));
                rows.push(vec![
                    g.to_string(),
                    first.sets_used.to_string(),
                    k.to_string(),
                    of.len().to_string(),
                    format!(
                        "{} – {}",
                        cell(range.map(|r| r.0)),
                        cell(range.map(|r| r.1))
                    ),
                    match models.as_slice() {
                        [one] => cell(Some(f64::from_bits(*one))),
                        [] => "—".into(),
                        _ => "varies".into(),
                    },
                ]);
            }
        }
        Table {
            caption: format!(
                "{} sweep by gcd: the strides of each gcd class",
                swept.name()
            ),
            headers: [
                "gcd(stride, sets)",
                "sets / gcd (model)",
                "K",
                "strides",
                "misses/load (sim, min – max)",
                "misses/load (model)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }
    }
}

/// The textbook's "only the gcd decides": within each (gcd, K) class of every level, do the
/// strides' simulated misses agree?
fn alike_claim(doc: &ResultsDocument, levels: &[SweptLevel]) -> Claim {
    let mut classes = 0;
    let mut spread: Vec<String> = Vec::new();
    for swept in levels {
        let pts = points(doc, swept);
        let c = Classes::of(&pts);
        for &g in &c.gcds {
            for &k in &c.ks {
                let Some((lo, hi, _)) = c.simulated(g, k) else {
                    continue;
                };
                classes += 1;
                if hi - lo > ALIKE {
                    spread.push(format!(
                        "{} gcd {g} K = {k}: {}–{}",
                        swept.name(),
                        cell(Some(lo)),
                        cell(Some(hi))
                    ));
                }
            }
        }
    }
    let verdict = Verdict::of_counts(classes, classes - spread.len());
    let observed = if spread.is_empty() {
        format!(
            "in all {classes} (gcd, K) classes the strides' simulated misses agree within \
             {ALIKE} per load"
        )
    } else {
        format!(
            "{} of {classes} classes spread by more than {ALIKE}: {}",
            spread.len(),
            spread.join("; ")
        )
    };
    Claim::textbook(
        "sweep.gcd-decides",
        "only gcd(stride in lines, sets) decides how many sets a walk uses, so strides as \
         different as 3 and 125 lines behave alike.",
        verdict,
        observed,
    )
}
