//! Figure 2: misses and time vs the number of L1 sets the stride really uses.
//! One figure of the report, built from records alone.

use std::collections::BTreeSet;

use super::conflict::{Probe, k_colour, probes, warm_miss_words};
use super::{Built, FigureDef, Outcome, Table, misses_per_access, omitted, prov_sim, prov_timed};
use crate::chart::{Axis, Figure, LinePanel, Panel, RefLine, Series, SeriesKind, XY};
use crate::claims::{Claim, slower_or_faster, value_range};
use crate::data;
use stridelab_core::results::model::LONG_RUN_ACCESSES;
use stridelab_core::results::{CacheLevel, ResultsDocument};

/// Figure 2: misses and time vs the number of L1 sets the stride really uses.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig02-sets-used",
    title: "Miss rate and time vs sets used",
    section: "conflict",
    build: sets_used,
};

fn sets_used(doc: &ResultsDocument) -> Outcome {
    let probes = probes(doc);
    let levels = data::data_levels(doc);
    let Some(l1) = levels.first() else {
        return omitted(&FIGURE, "no cache geometry recorded");
    };
    if probes.is_empty() {
        return omitted(&FIGURE, "no `conflict` probe points in this results file");
    }
    if !probes.iter().any(|p| p.model(0).is_some()) {
        return omitted(
            &FIGURE,
            format!(
                "its x axis is the set model's count of sets used, and {}",
                data::no_model_reason(doc)
            ),
        );
    }
    let sets: BTreeSet<u64> = probes
        .iter()
        .filter_map(|p| p.model(0).map(|m| m.sets_used))
        .collect();
    if sets.len() < 2 {
        return omitted(
            &FIGURE,
            format!(
                "it draws misses and time against the number of {} sets a stride uses, and \
                 every probe here uses {} (model)",
                l1.name,
                sets.first().map_or_else(|| "—".into(), |n| n.to_string())
            ),
        );
    }
    let ks: Vec<u64> = probes
        .iter()
        .map(|p| p.k)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let (miss_series, time_series) = series(&probes, &ks);
    let x_label = format!("{} sets the K loads use (model, of {})", l1.name, l1.sets);
    let vlines = ways_lines(&ks, u64::from(l1.ways));
    let mut time_vlines = vlines.clone();
    time_vlines.iter_mut().for_each(|v| v.label.clear());
    let x_axis = || Axis {
        from_zero: false,
        ticks: crate::chart::TickFormat::Integer,
        ..Axis::linear(&x_label)
    };
    let panels = vec![
        Panel::Lines(LinePanel {
            title: format!("{} misses per load (simulated)", l1.name),
            x: x_axis(),
            y: Axis::fraction("misses per load"),
            series: miss_series,
            vlines,
            hlines: Vec::new(),
        }),
        Panel::Lines(LinePanel {
            title: "time per load (timed)".into(),
            x: x_axis(),
            y: Axis::linear("ns per load"),
            series: time_series,
            vlines: time_vlines,
            hlines: Vec::new(),
        }),
    ];
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Miss rate and time vs the number of sets a stride really uses".into(),
            provenance: format!(
                "x: {} (distinct {} sets of K accesses); left: {}; right: {}",
                data::model_provenance(probes.first().map(|p| p.record)),
                l1.name,
                prov_sim(doc),
                prov_timed(doc)
            ),
            panels,
            panel_width: 600,
            panel_height: 380,
        },
        tables: vec![set_table(&probes, l1)],
        look_for: look_for(&probes, l1),
        notes: Vec::new(),
    }))
}

/// Where K lines have room in the sets the stride uses (sets × ways ≥ K) against where they
/// do not: their simulated misses and timed ns per load, compared in numbers.
fn look_for(probes: &[Probe], l1: &CacheLevel) -> Vec<Claim> {
    let ways = u64::from(l1.ways);
    let (fit, short): (Vec<&Probe>, Vec<&Probe>) = probes
        .iter()
        .filter(|p| p.model(0).is_some())
        .partition(|p| p.model(0).is_some_and(|m| m.sets_used * ways >= p.k));
    let ns =
        |ps: &[&Probe]| -> Vec<f64> { ps.iter().filter_map(|p| p.ns.map(|e| e.value)).collect() };
    let (ns_fit, ns_short) = (ns(&fit), ns(&short));
    let mut claims = Vec::new();
    if short.is_empty() {
        claims.push(Claim::derived(
            "conflict.sets-room",
            format!(
                "Every probe's K lines have room in the sets its stride uses ({ways} ways a \
                 set), and they {} (simulated).",
                warm_miss_words(&fit)
            ),
        ));
    } else {
        let which = short
            .iter()
            .map(|p| (p.k, p.model(0).map_or(0, |m| m.sets_used)))
            .collect::<std::collections::BTreeSet<_>>()
            .iter()
            .map(|(k, s)| format!("K = {k} in {s} set{}", if *s == 1 { "" } else { "s" }))
            .collect::<Vec<_>>()
            .join(", ");
        let time = match (data::median(&ns_short), data::median(&ns_fit)) {
            (Some(a), Some(b)) => {
                let apart = ns_short.iter().copied().fold(f64::INFINITY, f64::min)
                    > ns_fit.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                format!(
                    " and take {} ns per load against {} ns where the lines have room \
                     (timed; medians {}{})",
                    value_range(&ns_short),
                    value_range(&ns_fit),
                    slower_or_faster(a, b),
                    if apart {
                        ""
                    } else {
                        "; the two ranges overlap"
                    }
                )
            }
            _ => String::new(),
        };
        claims.push(Claim::derived(
            "conflict.sets-room",
            format!(
                "Where the K lines have no room in the sets the stride uses ({which}, {ways} \
                 ways each) they {} (simulated){time}; where they have room they {}.",
                warm_miss_words(&short),
                warm_miss_words(&fit)
            ),
        ));
    }
    claims.push(Claim::guide(
        "conflict.fig02-drawing",
        "A dashed line marks ⌈K / ways⌉ sets, the fewest that hold K lines; each K is drawn a \
         little beside its whole number of sets so equal values stay visible.",
    ));
    claims
}

/// Per K: simulated misses and timed ns per load against the recorded sets used (one point
/// per x; several strides using as many sets are averaged). Sets used is a count, so the
/// points are markers, not a line, and each K sits a little beside the next (by
/// [`K_OFFSET`]) so that equal values stay visible side by side.
fn series(probes: &[Probe], ks: &[u64]) -> (Vec<Series>, Vec<Series>) {
    let mut miss_series = Vec::new();
    let mut time_series = Vec::new();
    let centre = (ks.len() as f64 - 1.0) / 2.0;
    for (index, &k) in ks.iter().enumerate() {
        let colour = k_colour(ks, k);
        let shift = (index as f64 - centre) * K_OFFSET;
        let mut m: Vec<XY> = Vec::new();
        let mut t: Vec<XY> = Vec::new();
        for p in probes.iter().filter(|p| p.k == k) {
            let Some(x) = p.model(0).map(|m| m.sets_used as f64 + shift) else {
                continue;
            };
            if let Some(v) = misses_per_access(p.record, 0) {
                m.push(XY::new(x, v));
            }
            if let Some(e) = p.ns {
                t.push(XY::with_ci(x, e.value, e.ci()));
            }
        }
        for pts in [&mut m, &mut t] {
            merge_equal_x(pts);
        }
        let named = |points| Series {
            name: format!("K={k}"),
            colour,
            kind: SeriesKind::Markers,
            points,
        };
        miss_series.push(named(m));
        time_series.push(named(t));
    }
    (miss_series, time_series)
}

/// How far apart neighbouring K are drawn around their whole number of sets.
const K_OFFSET: f64 = 0.06;

/// Sorts by x and keeps one point per x (the mean; its interval dropped).
fn merge_equal_x(pts: &mut Vec<XY>) {
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    let mut merged: Vec<XY> = Vec::new();
    for p in pts.iter() {
        match merged.last_mut() {
            Some(last) if last.x == p.x => {
                last.y = (last.y + p.y) / 2.0;
                last.ci = None;
            }
            _ => merged.push(*p),
        }
    }
    *pts = merged;
}

/// Where K lines just fit: `⌈K / ways⌉` sets hold them.
fn ways_lines(ks: &[u64], ways: u64) -> Vec<RefLine> {
    let needed: BTreeSet<u64> = ks.iter().map(|k| k.div_ceil(ways)).collect();
    needed
        .iter()
        .map(|&s| RefLine {
            at: s as f64,
            label: format!(
                "{s} set{} {} lines",
                if s == 1 { " holds" } else { "s hold" },
                s * ways
            ),
            // Mid-height, between the misses at 1 and at 0, where no marker sits.
            label_y: Some(0.55),
        })
        .collect()
}

/// The set/GCD model per stride, as recorded with a probe of that stride.
fn set_table(probes: &[Probe], l1: &CacheLevel) -> Table {
    let mut strides: Vec<(i64, Option<&Probe>)> = Vec::new();
    for s in probes
        .iter()
        .map(|p| p.stride_bytes)
        .collect::<BTreeSet<_>>()
    {
        let with_model = probes
            .iter()
            .find(|p| p.stride_bytes == s && p.model(0).is_some());
        strides.push((s, with_model));
    }
    let dash = || "—".to_string();
    let rows = strides
        .into_iter()
        .map(|(s, probe)| {
            let m = probe.and_then(|p| p.model(0));
            vec![
                format!("{s} B"),
                match m {
                    Some(m) => m
                        .stride_lines
                        .map(|l| l.to_string())
                        .unwrap_or_else(|| "not a whole number of lines".into()),
                    None => dash(),
                },
                m.and_then(|m| m.gcd)
                    .map(|g| g.to_string())
                    .unwrap_or_else(dash),
                m.and_then(|m| m.closed_form_sets)
                    .map(|n| n.to_string())
                    .unwrap_or_else(dash),
                m.map(|m| m.long_run_sets.to_string()).unwrap_or_else(dash),
            ]
        })
        .collect();
    Table {
        caption: format!(
            "The set/GCD model for {} ({} sets, {} B lines)",
            l1.name, l1.sets, l1.line
        ),
        headers: vec![
            "stride".into(),
            "stride in lines".into(),
            "gcd(lines, sets)".into(),
            "sets / gcd (closed form)".into(),
            format!("sets touched by {LONG_RUN_ACCESSES} accesses (enumerated)"),
        ],
        rows,
    }
}
