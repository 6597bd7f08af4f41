//! Figure 8: views — ns per element vs a contiguous walk of the same count.
//! One figure of the report, built from records alone.

use super::common::estimate_bars;
use super::labels::view_label;
use super::{
    Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted, prov_timed,
};
use crate::chart::{Axis, BarPanel, Figure, PALETTE, Panel};
use crate::claims::{Claim, SAME_CURVE, Verdict, slower_or_faster};
use crate::data;
use stridelab_core::results::{PointRecord, ResultsDocument, ViewSets};

/// Figure 8: views — ns per element vs a contiguous walk of the same count.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig08-views",
    title: "Views",
    section: "view",
    build: views,
};

/// A view walk: its record, its label (expression, shape and strides) and whether the view
/// is C-contiguous (None when the layout model cannot tell).
type ViewInfo<'d> = (&'d PointRecord, String, Option<bool>);

fn views(doc: &ResultsDocument) -> Outcome {
    let recs: Vec<&PointRecord> = data::of_kernel(doc, "view-sum")
        .filter(|r| data::text(r, "expr").is_some() && data::ns_per_element(r).is_some())
        .collect();
    if recs.is_empty() {
        return omitted(&FIGURE, "no timed `view-sum` points in this results file");
    }
    let info: Vec<ViewInfo> = recs
        .iter()
        .map(|r| {
            let (label, contiguous) = view_label(r);
            match sets_text(r) {
                Some(sets) => (*r, format!("{label}  {sets}"), contiguous),
                None => (*r, label, contiguous),
            }
        })
        .collect();
    let height = (recs.len() as u32 * 34 + 110).max(260);
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Views: the same sum over differently strided views".into(),
            provenance: format!(
                "{}; shapes, strides (elements) and the L1 sets one walk along the innermost dimension touches \
                 (8 B elements, storage on a line boundary) from the layout model",
                prov_timed(doc)
            ),
            panels: vec![Panel::Bars(panel(&info))],
            panel_width: 1100,
            panel_height: height,
        },
        tables: vec![table(&info)],
        look_for: look_for(&info),
        notes: Vec::new(),
    }))
}

/// Each strided view against the contiguous walk of its element count, and the textbook's
/// expectation for a flipped walk.
fn look_for(info: &[ViewInfo]) -> Vec<Claim> {
    let elements = |r: &PointRecord| r.work.map(|w| w.elements);
    let control = |r: &PointRecord| {
        info.iter()
            .find(|(c, _, contiguous)| *contiguous == Some(true) && elements(c) == elements(r))
            .and_then(|(c, _, _)| data::ns_per_element(c))
    };
    // (expression, inner stride, own ns, control ns)
    let compared: Vec<(&str, Option<i64>, f64, f64)> = info
        .iter()
        .filter(|(_, _, contiguous)| *contiguous == Some(false))
        .filter_map(|(r, _, _)| {
            let inner = data::view_facts(r).and_then(|v| v.strides.last().copied());
            Some((
                data::text(r, "expr")?,
                inner,
                data::ns_per_element(r)?.value,
                control(r)?.value,
            ))
        })
        .collect();
    let mut claims = vec![Claim::guide(
        "view.rewrite",
        "A view only rewrites shape, strides and offset; walking it costs what its strides do \
         to the cache.",
    )];
    if !compared.is_empty() {
        claims.push(Claim::derived(
            "view.ratios",
            format!(
                "Against a contiguous walk of the same element count (timed): {}.",
                compared
                    .iter()
                    .map(|(e, inner, own, base)| format!(
                        "`{e}`{} {}",
                        inner
                            .map(|s| format!(" (inner stride {s})"))
                            .unwrap_or_default(),
                        slower_or_faster(*own, *base)
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        ));
    }
    let flips: Vec<&(&str, Option<i64>, f64, f64)> =
        compared.iter().filter(|c| c.1 == Some(-1)).collect();
    if !flips.is_empty() {
        let close = flips.iter().filter(|c| c.2 / c.3 <= SAME_CURVE).count();
        let verdict = Verdict::of_counts(flips.len(), close);
        claims.push(Claim::textbook(
            "view.flip",
            "a flipped walk (inner stride −1) reads the same lines backwards, which prefetchers \
             follow, so it costs about what a forward walk costs.",
            verdict,
            flips
                .iter()
                .map(|(e, _, own, base)| format!("`{e}` is {}", slower_or_faster(*own, *base)))
                .collect::<Vec<_>>()
                .join("; "),
        ));
    }
    claims
}

/// One stacked bar per view: strided views and contiguous controls in their own colours.
fn panel(info: &[ViewInfo]) -> BarPanel {
    let timed = |want: bool| {
        info.iter()
            .map(|(r, _, c)| {
                (c.unwrap_or(false) == want)
                    .then(|| data::ns_per_element(r))
                    .flatten()
            })
            .collect::<Vec<_>>()
    };
    BarPanel {
        title: "ns per element (timed)".into(),
        categories: info.iter().map(|(_, l, _)| l.clone()).collect(),
        value_axis: Axis::linear("ns per element"),
        series: vec![
            estimate_bars("strided view".into(), PALETTE[0], &timed(false)),
            estimate_bars("contiguous walk (control)".into(), PALETTE[2], &timed(true)),
        ],
        stacked: true,
        vlines: Vec::new(),
    }
}

/// One row per view, with its cost relative to the contiguous walk of the same count.
fn table(info: &[ViewInfo]) -> Table {
    let elements = |r: &PointRecord| r.work.map(|w| w.elements);
    let control = |r: &PointRecord| {
        info.iter()
            .find(|(c, _, contiguous)| *contiguous == Some(true) && elements(c) == elements(r))
            .and_then(|(c, _, _)| data::ns_per_element(c))
    };
    let rows = info
        .iter()
        .map(|(r, label, contiguous)| {
            let own = data::ns_per_element(r);
            let ratio = match (own, control(r)) {
                (Some(a), Some(b)) if *contiguous != Some(true) => Some(a.value / b.value),
                _ => None,
            };
            vec![
                data::text(r, "expr").unwrap_or("").to_string(),
                label.split("  ").nth(1).unwrap_or("—").to_string(),
                match contiguous {
                    Some(true) => "yes".into(),
                    Some(false) => "no".into(),
                    None => "—".into(),
                },
                elements(r)
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "—".into()),
                est_cell(own),
                cell(ratio),
                sets_of(r, |s| s.inner_sets_touched),
                sets_of(r, |s| s.sets_touched),
                cell(misses_per_access(r, 0)),
            ]
        })
        .collect();
    Table {
        caption: "View walks; the control is the contiguous walk with the same element count"
            .into(),
        headers: [
            "expression",
            "shape / strides (elements)",
            "C-contiguous",
            "elements",
            "ns/element (timed, CI)",
            "× contiguous control",
            "L1 sets of one inner walk (model)",
            "L1 sets of the whole view (model)",
            "L1 misses/element (sim)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// "inner walk 1/64 L1d sets" for a view whose record carries its set counts.
fn sets_text(r: &PointRecord) -> Option<String> {
    let sets = data::view_facts(r)?.sets.as_ref()?;
    Some(format!(
        "inner walk {}/{} {} sets",
        sets.inner_sets_touched, sets.sets, sets.level
    ))
}

/// "1 of 64": a count of sets the record's view touches, out of the level's.
fn sets_of(r: &PointRecord, count: impl Fn(&ViewSets) -> u64) -> String {
    match data::view_facts(r).and_then(|v| v.sets.as_ref()) {
        Some(sets) => format!("{} of {}", count(sets), sets.sets),
        None => "—".into(),
    }
}
