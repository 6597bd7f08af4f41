//! Figure 21: every timed point's measured time against the time model's estimate (log-log,
//! the diagonal and the 2× band), from the predictions the run recorded
//! (`records[i].time_model`): points the model claims and lands within 2× of, those it claims
//! and misses (named, each with the `stridelab why` command that runs controls on it), and
//! those it disowns (hollow, grey, with the reason in the table). Its sentences are counted
//! from the drawn points. A file without predictions omits it (its section is optional).

use std::collections::BTreeMap;

use super::{Built, FigureDef, Outcome, Table};
use crate::chart::{Axis, Colour, Figure, LinePanel, PALETTE, Panel, Series, SeriesKind, XY};
use crate::claims::Claim;
use stridelab_core::results::{PointRecord, ResultsDocument};

/// Figure 21: measured against the time model.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig21-time-model",
    title: "Measured time against the time model",
    section: "time-model",
    build: measured_against_model,
};

/// The band a claimed point must land in to count as agreeing: within 2× either way.
const BAND: f64 = 2.0;

/// Most far-off points named one by one (the rest are counted).
const MAX_NAMED: usize = 12;

const GREY: Colour = Colour(150, 150, 150);

/// The palette's slots for far-off kernels: every one but blue (within 2×) and grey.
const FAR_COLOURS: [usize; 8] = [1, 2, 3, 4, 5, 7, 8, 9];

/// One drawn point: its record, the model's estimate and the measured time per run (ns).
struct Drawn<'d> {
    record: &'d PointRecord,
    model_ns: f64,
    measured_ns: f64,
    applies: bool,
}

impl Drawn<'_> {
    fn ratio(&self) -> f64 {
        self.measured_ns / self.model_ns
    }
    fn far(&self) -> bool {
        !(1.0 / BAND..=BAND).contains(&self.ratio())
    }
}

/// `kernel k=v …`, the words `stridelab why` takes.
fn point_words(record: &PointRecord) -> String {
    let mut words = vec![record.kernel.clone()];
    words.extend(record.params.iter().map(|(k, v)| format!("{k}={v}")));
    words.join(" ")
}

fn drawn(doc: &ResultsDocument) -> Vec<Drawn<'_>> {
    doc.records
        .iter()
        .filter_map(|record| {
            let p = record.time_model.as_ref()?;
            let model_ns = p.bounds.as_ref()?.estimate_ns;
            let measured_ns = record.timing.as_ref()?.ns_per_run.median;
            Some(Drawn {
                record,
                model_ns,
                measured_ns,
                applies: p.applies,
            })
        })
        .collect()
}

fn measured_against_model(doc: &ResultsDocument) -> Outcome {
    let points = drawn(doc);
    if points.is_empty() {
        return Outcome::Omitted {
            id: FIGURE.id,
            title: FIGURE.title,
            reason: "no time-model predictions in this results file (run with the model on)".into(),
        };
    }
    let (lo, hi) = points
        .iter()
        .flat_map(|d| [d.model_ns, d.measured_ns])
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let (lo, hi) = (lo / BAND, hi * BAND);
    let line = |name: &str, factor: f64| Series {
        name: name.into(),
        colour: if factor == 1.0 {
            Colour(60, 60, 60)
        } else {
            GREY
        },
        kind: SeriesKind::Model,
        points: vec![XY::new(lo, lo * factor), XY::new(hi, hi * factor)],
    };
    let mut series = vec![
        line("measured = model", 1.0),
        line("2× slower than model", BAND),
        line("2× faster than model", 1.0 / BAND),
    ];
    let as_xy = |d: &Drawn| XY::new(d.model_ns, d.measured_ns);
    let within: Vec<XY> = points
        .iter()
        .filter(|d| d.applies && !d.far())
        .map(as_xy)
        .collect();
    series.push(Series {
        name: "claimed, within 2×".into(),
        colour: PALETTE[0],
        kind: SeriesKind::Markers,
        points: within,
    });
    // Far-off claimed points, one series per kernel: the legend labels them.
    let mut far: BTreeMap<&str, Vec<XY>> = BTreeMap::new();
    for d in points.iter().filter(|d| d.applies && d.far()) {
        far.entry(d.record.kernel.as_str())
            .or_default()
            .push(as_xy(d));
    }
    for (i, (kernel, xy)) in far.into_iter().enumerate() {
        series.push(Series {
            name: format!("claimed, beyond 2×: {kernel}"),
            colour: PALETTE[FAR_COLOURS[i % FAR_COLOURS.len()]],
            kind: SeriesKind::Markers,
            points: xy,
        });
    }
    let disowned: Vec<XY> = points.iter().filter(|d| !d.applies).map(as_xy).collect();
    series.push(Series {
        name: "disowned (reason in the table)".into(),
        colour: GREY,
        kind: SeriesKind::ModelMarkers,
        points: disowned,
    });
    series.retain(|s| !s.points.is_empty());
    // Both axes span the diagonal's ends, so the diagonal runs corner to corner.
    let axis = Axis::log10;
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: FIGURE.title.into(),
            provenance: "timed: median ns per run; model: this machine's probes (measured) \
                         priced by each point's simulated traffic"
                .into(),
            panels: vec![Panel::Lines(LinePanel {
                title: "ns per run: measured against the model's estimate".into(),
                x: axis("model's estimate (ns per run)"),
                y: axis("measured (ns per run)"),
                series,
                vlines: Vec::new(),
                hlines: Vec::new(),
            })],
            panel_width: 760,
            panel_height: 560,
        },
        tables: tables(&points),
        look_for: look_for(&points),
        notes: Vec::new(),
    }))
}

fn tables(points: &[Drawn]) -> Vec<Table> {
    let fmt = |v: f64| crate::chart::format_number(v);
    let mut far: Vec<&Drawn> = points.iter().filter(|d| d.applies && d.far()).collect();
    far.sort_by(|a, b| b.ratio().ln().abs().total_cmp(&a.ratio().ln().abs()));
    let far_rows = far
        .iter()
        .map(|d| {
            vec![
                point_words(d.record),
                fmt(d.measured_ns),
                fmt(d.model_ns),
                fmt(d.ratio()),
                format!("stridelab why {}", point_words(d.record)),
                d.record
                    .time_model
                    .as_ref()
                    .map(|p| p.why_controls.join(", "))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    let mut reasons: BTreeMap<&str, (usize, Vec<&str>)> = BTreeMap::new();
    for d in points.iter().filter(|d| !d.applies) {
        let reason = d
            .record
            .time_model
            .as_ref()
            .map_or("", |p| p.reason.as_str());
        let entry = reasons.entry(reason).or_default();
        entry.0 += 1;
        if !entry.1.contains(&d.record.kernel.as_str()) {
            entry.1.push(&d.record.kernel);
        }
    }
    let mut out = vec![Table {
        caption: "Claimed points beyond 2× of the model, farthest first, with the command that \
                  times each beside controls"
            .into(),
        headers: [
            "point",
            "measured ns",
            "model ns",
            "measured ÷ model",
            "to ask why",
            "the controls it runs",
        ]
        .map(String::from)
        .to_vec(),
        rows: far_rows,
    }];
    out.push(Table {
        caption: "Points the model disowns, by reason".into(),
        headers: ["points", "kernels", "reason"].map(String::from).to_vec(),
        rows: reasons
            .into_iter()
            .map(|(reason, (n, kernels))| vec![n.to_string(), kernels.join(", "), reason.into()])
            .collect(),
    });
    out
}

fn look_for(points: &[Drawn]) -> Vec<Claim> {
    let claimed: Vec<&Drawn> = points.iter().filter(|d| d.applies).collect();
    let within = claimed.iter().filter(|d| !d.far()).count();
    let disowned = points.len() - claimed.len();
    let mut claims = vec![Claim::guide(
        "time-model.guide",
        "Each point is one timed point: across, the time the model predicts from this \
         machine's probes and the point's simulated traffic; up, the time measured. On the \
         diagonal the point behaves as its traffic predicts; above the upper grey line it took \
         more than twice as long, below the lower one less than half.",
    )];
    if claimed.is_empty() {
        claims.push(Claim::derived(
            "time-model.share",
            format!(
                "The model claims none of the {} points it priced.",
                points.len()
            ),
        ));
        return claims;
    }
    let mut ratios: Vec<f64> = claimed.iter().map(|d| d.ratio()).collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    claims.push(Claim::derived(
        "time-model.share",
        format!(
            "{within} of the {} points the model claims ({:.0}%) lie within 2× of it; the \
             median measured ÷ model is {}; it disowns {disowned} more (the table gives why).",
            claimed.len(),
            100.0 * within as f64 / claimed.len() as f64,
            crate::chart::format_number(median),
        ),
    ));
    let mut far: Vec<&&Drawn> = claimed.iter().filter(|d| d.far()).collect();
    if !far.is_empty() {
        far.sort_by(|a, b| b.ratio().ln().abs().total_cmp(&a.ratio().ln().abs()));
        let slower = far.iter().filter(|d| d.ratio() > 1.0).count();
        let named: Vec<String> = far
            .iter()
            .take(MAX_NAMED)
            .map(|d| {
                format!(
                    "{} ({}×)",
                    point_words(d.record),
                    crate::chart::format_number(d.ratio())
                )
            })
            .collect();
        claims.push(Claim::derived(
            "time-model.far-off",
            format!(
                "{} claimed points lie beyond 2×, {slower} slower than the model and {} faster; \
                 the farthest: {}{}. `stridelab why` with a point's words times it beside \
                 controls that each change one factor.",
                far.len(),
                far.len() - slower,
                named.join(", "),
                if far.len() > MAX_NAMED {
                    format!(" and {} more", far.len() - MAX_NAMED)
                } else {
                    String::new()
                }
            ),
        ));
    }
    claims
}

#[cfg(test)]
mod tests {
    use super::*;
    use stridelab_core::results::Provenance;
    use stridelab_core::results::time_model::{TimeBounds, TimePrediction, TimeRule};

    fn small() -> ResultsDocument {
        serde_json::from_str(include_str!(
            "../../../../tests/fixtures/results_small.json"
        ))
        .unwrap()
    }

    fn doc_with(ratios: &[(f64, bool)]) -> ResultsDocument {
        let mut doc = small();
        let template = doc
            .records
            .iter()
            .find(|r| r.timing.is_some())
            .unwrap()
            .clone();
        doc.records = ratios
            .iter()
            .enumerate()
            .map(|(i, &(ratio, applies))| {
                let mut r = template.clone();
                r.index = i;
                let measured = r.timing.as_ref().unwrap().ns_per_run.median;
                let estimate = measured / ratio;
                r.time_model = Some(TimePrediction {
                    source: Provenance::Model,
                    applies,
                    reason: if applies {
                        "independent loads"
                    } else {
                        "compute-bound"
                    }
                    .into(),
                    rule: Some(TimeRule::Bandwidth),
                    bounds: Some(TimeBounds {
                        overlapped_ns: estimate,
                        non_overlapped_ns: estimate,
                        latency_ns: estimate,
                        estimate_ns: estimate,
                        estimate_low_ns: estimate,
                        estimate_high_ns: estimate,
                    }),
                    traffic: vec![],
                    measured_over_model: Some(ratio),
                    why_controls: Vec::new(),
                });
                r
            })
            .collect();
        doc.suite.points = doc.records.len();
        doc
    }

    #[test]
    fn sentences_count_the_drawn_points() {
        // (ratios and claims, the share sentence's start, far-off points named)
        type Case<'a> = (&'a [(f64, bool)], &'a str, usize);
        let cases: &[Case] = &[
            (
                &[(1.0, true), (1.5, true), (0.6, true)],
                "3 of the 3 points",
                0,
            ),
            (
                &[(1.0, true), (3.0, true), (0.2, true), (9.0, false)],
                "1 of the 3 points",
                2,
            ),
            (&[(2.0, true), (0.5, true)], "2 of the 2 points", 0),
        ];
        for (ratios, share, far) in cases {
            let Outcome::Drawn(built) = measured_against_model(&doc_with(ratios)) else {
                panic!("omitted");
            };
            let text: Vec<String> = built.look_for.iter().map(|c| c.text()).collect();
            assert!(text[1].starts_with(share), "{text:?}");
            assert_eq!(built.tables[0].rows.len(), *far, "{text:?}");
            assert_eq!(text.iter().any(|t| t.contains("stridelab why")), *far > 0);
        }
    }

    #[test]
    fn a_file_without_predictions_omits_the_figure() {
        let doc = small();
        assert!(matches!(
            measured_against_model(&doc),
            Outcome::Omitted { .. }
        ));
    }
}
