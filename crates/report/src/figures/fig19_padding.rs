//! Figure 19: one matrix walk timed at several leading dimensions — the padding this machine
//! measured best, beside the simulated misses of each, and the textbook's "pad by one element"
//! held against them. Drawn when a row-sum/col-sum walk was timed at two or more `ld`.

use super::{Built, FigureDef, Outcome, Table, est_cell, omitted, prov_sim, prov_timed};
use crate::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, Series, SeriesKind, XY, format_number,
};
use crate::claims::{Claim, SAME_CURVE};
use crate::data;
use crate::padding::{PaddingGroup, groups, measured_sentence, textbook_claim};
use stridelab_core::results::ResultsDocument;
use stridelab_core::units::{format_count, format_duration_ns};

/// Figure 19: time and simulated misses against the leading dimension.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig19-padding",
    title: "Padding the leading dimension",
    section: "traverse",
    build: padding_figure,
};

fn padding_figure(doc: &ResultsDocument) -> Outcome {
    let groups = groups(doc);
    if groups.is_empty() {
        return omitted(
            &FIGURE,
            "no row-sum/col-sum walk was timed at two or more leading dimensions (`ld`)",
        );
    }
    let pads = paddings(&groups);
    let x = || {
        Axis::categories(
            "padding: ld − cols (elements)",
            pads.iter().map(|p| format!("+{p}")).collect(),
        )
    };
    let at = |g: &PaddingGroup, ld: u64| {
        pads.iter()
            .position(|&p| p == ld - g.cols)
            .map_or(0.0, |i| i as f64)
    };
    let colour = |i: usize| PALETTE[(i + 1) % PALETTE.len()];
    let time: Vec<Series> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| Series {
            name: format!("{} (timed)", g.name()),
            colour: colour(i),
            kind: SeriesKind::Markers,
            points: g
                .points
                .iter()
                .filter_map(|p| {
                    let e = data::ns_per_element(p.record)?;
                    Some(XY::with_ci(at(g, p.ld), e.value, e.ci()))
                })
                .collect(),
        })
        .collect();
    let levels = if groups.len() == 1 { 2 } else { 1 };
    let mut misses = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        for li in 0..levels {
            let Some(name) = data::sim_level(g.points[0].record, li).map(|l| l.name.clone()) else {
                continue;
            };
            misses.push(Series {
                name: format!("{} {name} (simulated)", g.name()),
                colour: if li == 0 { colour(i) } else { PALETTE[6] },
                kind: SeriesKind::Markers,
                points: g
                    .points
                    .iter()
                    .filter_map(|p| {
                        let elements = p.record.work?.elements;
                        let m = p.misses(li)?;
                        (elements > 0).then(|| XY::new(at(g, p.ld), m as f64 / elements as f64))
                    })
                    .collect(),
            });
        }
    }
    let mut panels = vec![Panel::Lines(LinePanel {
        title: "time per element (timed)".into(),
        x: x(),
        y: Axis::linear("ns per element"),
        series: time,
        vlines: Vec::new(),
        hlines: Vec::new(),
    })];
    let mut notes = Vec::new();
    if misses.iter().any(|s| !s.points.is_empty()) {
        panels.push(Panel::Lines(LinePanel {
            title: "misses per element (simulated, one cold run)".into(),
            x: x(),
            y: Axis::fraction("misses per element"),
            series: misses,
            vlines: Vec::new(),
            hlines: Vec::new(),
        }));
    } else {
        notes.push("No misses panel: these points have no simulated misses.".to_string());
    }
    let mut look_for: Vec<Claim> = groups
        .iter()
        .map(|g| Claim::derived("padding.measured", measured_sentence(g)))
        .collect();
    look_for.extend(groups.iter().filter_map(same_misses_claim));
    look_for.push(textbook_claim(&groups));
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Padding the leading dimension: time and misses by ld".into(),
            provenance: format!("left: {}; right: {}", prov_timed(doc), prov_sim(doc)),
            panels,
            panel_width: 560,
            panel_height: 360,
        },
        tables: vec![table(&groups)],
        look_for,
        notes,
    }))
}

/// The paddings (ld − cols) any group timed, smallest first.
fn paddings(groups: &[PaddingGroup]) -> Vec<u64> {
    super::common::distinct(
        groups
            .iter()
            .flat_map(|g| g.points.iter().map(move |p| p.ld.saturating_sub(g.cols))),
    )
}

/// Where several leading dimensions have the same simulated misses at every level but their
/// times differ by more than [`SAME_CURVE`]: the simulation cannot rank them, the timing can.
fn same_misses_claim(g: &PaddingGroup) -> Option<Claim> {
    let key = |p: &crate::padding::PaddedPoint| -> Option<Vec<u64>> {
        (0..3)
            .map(|li| p.misses(li))
            .take_while(Option::is_some)
            .collect()
    };
    let mut classes: Vec<(Vec<u64>, Vec<&crate::padding::PaddedPoint>)> = Vec::new();
    for p in &g.points {
        let k = key(p)?;
        match classes.iter_mut().find(|c| c.0 == k) {
            Some(c) => c.1.push(p),
            None => classes.push((k, vec![p])),
        }
    }
    let (misses, points) = classes.into_iter().find(|(k, ps)| {
        let times: Vec<f64> = ps.iter().map(|p| p.run.value).collect();
        !k.is_empty() && crate::claims::spread(&times).is_some_and(|s| s > SAME_CURVE)
    })?;
    let times: Vec<f64> = points.iter().map(|p| p.run.value).collect();
    let lds: Vec<String> = points.iter().map(|p| p.ld.to_string()).collect();
    let levels: Vec<String> = (0..misses.len())
        .filter_map(|li| data::sim_level(points[0].record, li).map(|l| l.name.clone()))
        .collect();
    Some(Claim::derived(
        "padding.same-misses",
        format!(
            "{}: ld={} have the same simulated misses ({} at {}), yet their times per run \
             range {}–{} ms ({}× apart, timed): the simulated misses do not rank these \
             paddings; the timing does.",
            g.name(),
            lds.join(", "),
            misses
                .iter()
                .map(|m| format_count(*m))
                .collect::<Vec<_>>()
                .join(" / "),
            levels.join(" / "),
            format_number(times.iter().copied().fold(f64::INFINITY, f64::min) / 1e6),
            format_number(times.iter().copied().fold(0.0, f64::max) / 1e6),
            format_number(crate::claims::spread(&times).unwrap_or(1.0))
        ),
    ))
}

/// `7.70 ms (7.55–7.85 ms)`: a time per run with its CI.
fn duration(e: &crate::data::Estimate) -> String {
    match e.ci() {
        Some((lo, hi)) => format!(
            "{} ({}–{})",
            format_duration_ns(e.value),
            format_duration_ns(lo),
            format_duration_ns(hi)
        ),
        None => format_duration_ns(e.value),
    }
}

/// One row per point: the matrix, its ld, the storage padding costs, time and misses.
fn table(groups: &[PaddingGroup]) -> Table {
    let rows = groups
        .iter()
        .flat_map(|g| {
            g.points.iter().map(move |p| {
                let pad = p.ld.saturating_sub(g.cols);
                vec![
                    g.name(),
                    p.ld.to_string(),
                    format!(
                        "+{pad} ({}% more storage)",
                        format_number(pad as f64 / g.cols as f64 * 100.0)
                    ),
                    duration(&p.run),
                    est_cell(data::ns_per_element(p.record)),
                    data::model_level(p.record, 0)
                        .map(|m| format!("{} of {}", m.sets_used, m.sets))
                        .unwrap_or_else(|| "—".into()),
                    p.misses(0).map_or_else(|| "—".into(), format_count),
                    p.misses(1).map_or_else(|| "—".into(), format_count),
                ]
            })
        })
        .collect();
    Table {
        caption: "Matrix walks timed at several leading dimensions (ld)".into(),
        headers: [
            "walk",
            "ld",
            "padding",
            "time per run (timed, CI)",
            "ns/element (timed, CI)",
            "L1 sets one pass uses (model)",
            "L1 misses (sim)",
            "L2 misses (sim)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::padding::tests::padded_doc;

    fn claim_ids(outcome: &Outcome) -> Vec<&'static str> {
        match outcome {
            Outcome::Drawn(b) => b.look_for.iter().map(|c| c.id).collect(),
            Outcome::Omitted { .. } => Vec::new(),
        }
    }

    #[test]
    fn a_leading_dimension_sweep_is_drawn_with_what_it_measured() {
        // A column walk timed at four ld, alone: the user's grid.
        let mut doc = padded_doc(&[
            (512, 7.7, 262_144),
            (513, 4.7, 33_216),
            (520, 1.8, 33_216),
            (528, 3.9, 33_216),
        ]);
        doc.records.retain(|r| r.kernel == "col-sum");
        let outcome = (FIGURE.build)(&doc);
        let Outcome::Drawn(built) = &outcome else {
            panic!("omitted: {outcome:?}");
        };
        assert_eq!(built.figure.panels.len(), 2);
        let Panel::Lines(time) = &built.figure.panels[0] else {
            panic!("a line panel");
        };
        assert_eq!(
            time.x.ticks,
            crate::chart::TickFormat::Categories(
                ["+0", "+1", "+8", "+16"].map(String::from).to_vec()
            )
        );
        assert_eq!(time.series[0].points.len(), 4);
        assert_eq!(
            claim_ids(&outcome),
            [
                "padding.measured",
                "padding.same-misses",
                "padding.textbook"
            ]
        );
        let same = &built.look_for[1].text();
        assert!(
            same.contains("ld=513, 520, 528 have the same simulated misses"),
            "{same}"
        );
        assert_eq!(built.tables[0].rows.len(), 4);
        // One leading dimension: nothing to compare, so no figure.
        let one = padded_doc(&[(512, 7.7, 262_144)]);
        assert!(matches!((FIGURE.build)(&one), Outcome::Omitted { .. }));
    }

    #[test]
    fn the_row_vs_column_figure_is_omitted_for_one_size_and_says_why() {
        let mut doc = padded_doc(&[(512, 7.7, 262_144), (520, 1.8, 33_216)]);
        doc.records.retain(|r| r.kernel == "col-sum");
        match (super::super::fig06_row_vs_column::FIGURE.build)(&doc) {
            Outcome::Omitted { reason, .. } => assert!(
                reason.contains("one row length only (n = 512 columns)")
                    && reason.contains("drawn in the padding figure"),
                "{reason}"
            ),
            Outcome::Drawn(_) => panic!("one size drawn as a curve against the size"),
        }
    }
}
