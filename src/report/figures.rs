//! The eleven figures of the report, built from records (never from the machine): each
//! builder returns the figure, the table of numbers behind it and what to look for — or says
//! why it was omitted when the results hold no data for it.
//!
//! Provenance is part of every figure: `timed` (wall clock), `simulated` (with the geometry)
//! and `model` (the analytic set/GCD model of `crate::cache::model`), drawn dashed.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::cache::geometry::CacheLevel;
use crate::cache::model;
use crate::kernels::spec::format_params;
use crate::results::{PointRecord, ResultsDocument};

use super::chart::{
    Axis, BarPanel, BarSeries, Figure, HeatPanel, LinePanel, PALETTE, Panel, RefLine, Series,
    SeriesKind, XY, colour_for, format_bytes, format_number,
};
use super::data::{self, Estimate};

/// Where buffer 0 of every kernel sits in the simulated address space (`(k+1)·2^32`).
const SIM_BASE: u64 = 1 << 32;

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
    /// What to look for, in one or two sentences (may quote numbers computed from the data).
    pub look_for: String,
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

fn omitted(id: &'static str, title: &'static str, reason: impl Into<String>) -> Outcome {
    Outcome::Omitted {
        id,
        title,
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

/// `kernel key=value …` without the parameters that do not change what is measured.
pub fn point_label(r: &PointRecord) -> String {
    let params = format_params(
        r.params
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "seed" | "reps" | "deopt" | "line")),
    );
    format!("{} {params}", r.kernel).trim().to_string()
}

/// A compact name for a point in a long list (figure 11): the parameters that tell points
/// of the suite apart, defaults left out.
pub fn short_label(r: &PointRecord) -> String {
    let int = |k: &str| data::int(r, k).unwrap_or(0);
    match r.kernel.as_str() {
        "row-sum" | "col-sum" => {
            let ld = data::int(r, "ld").filter(|&ld| ld != int("cols"));
            format!(
                "{} {}×{}{}",
                r.kernel,
                int("rows"),
                int("cols"),
                ld.map(|ld| format!(" ld={ld}")).unwrap_or_default()
            )
        }
        "transpose" => {
            let variant = data::text(r, "variant").unwrap_or("?");
            format!(
                "transpose {variant} {}×{}{}",
                int("rows"),
                int("cols"),
                if variant == "blocked" {
                    format!(" B={}", int("B"))
                } else {
                    String::new()
                }
            )
        }
        "view-sum" => {
            let expr = data::text(r, "expr").unwrap_or("");
            format!(
                "view {}",
                view_label(expr).0.split("  ").next().unwrap_or(expr)
            )
        }
        _ => point_label(r),
    }
}

/// Predicted misses per access at each level for a warm, repeated cyclic pass over `count`
/// lines `stride` bytes apart under LRU: a line misses at a level iff its set there holds more
/// lines (among those that reached the level) than the level has ways — the set/GCD model
/// applied level by level.
pub fn predicted_cyclic_misses(levels: &[CacheLevel], stride: i64, count: u64) -> Vec<f64> {
    let line_of = |i: u64, line: u32| {
        SIM_BASE.wrapping_add((i as i64).wrapping_mul(stride) as u64) >> line.trailing_zeros()
    };
    let mut reaching: Vec<u64> = (0..count).collect();
    let mut out = Vec::new();
    for level in levels {
        let sets = u64::from(level.sets.max(1));
        let mut lines_of: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for &i in &reaching {
            lines_of.entry(line_of(i, level.line)).or_default().push(i);
        }
        let mut per_set: HashMap<u64, u64> = HashMap::new();
        for line in lines_of.keys() {
            *per_set.entry(line % sets).or_default() += 1;
        }
        let mut missing = Vec::new();
        for (line, accesses) in &lines_of {
            if per_set[&(line % sets)] > u64::from(level.ways) {
                missing.extend(accesses);
            }
        }
        out.push(if count == 0 {
            0.0
        } else {
            missing.len() as f64 / count as f64
        });
        reaching = missing;
    }
    out
}

/// One conflict probe record.
struct Probe<'a> {
    stride_bytes: i64,
    k: u64,
    ns: Option<Estimate>,
    record: &'a PointRecord,
}

/// The conflict probes of one mode (`lat` preferred: dependent loads show latency).
fn probes(doc: &ResultsDocument) -> Vec<Probe<'_>> {
    let all: Vec<&PointRecord> = data::of_kernel(doc, "conflict").collect();
    let mode = if all.iter().any(|r| data::text(r, "mode") == Some("lat")) {
        Some("lat")
    } else {
        all.first().and_then(|r| data::text(r, "mode"))
    };
    all.into_iter()
        .filter(|r| data::text(r, "mode") == mode)
        .filter_map(|r| {
            Some(Probe {
                stride_bytes: data::int(r, "stride")? as i64 * 8,
                k: data::int(r, "count")?,
                ns: data::ns_per_element(r),
                record: r,
            })
        })
        .collect()
}

/// Global misses per access at level `index` (misses there / accesses the kernel made).
fn misses_per_access(r: &PointRecord, index: usize) -> Option<f64> {
    let first = data::sim_level(r, 0)?;
    let level = data::sim_level(r, index)?;
    let accesses = data::accesses(first);
    (accesses > 0).then(|| level.misses as f64 / accesses as f64)
}

fn k_colour(ks: &[u64], k: u64) -> super::chart::Colour {
    let i = ks.iter().position(|&x| x == k).unwrap_or(0);
    PALETTE[i % PALETTE.len()]
}

/// Figure 1: simulated misses per access vs stride, per level, one series per K, with the
/// model's prediction dashed.
pub fn miss_rate_vs_stride(doc: &ResultsDocument) -> Outcome {
    const ID: &str = "fig01-miss-rate-vs-stride";
    const TITLE: &str = "Miss rate vs stride";
    let probes = probes(doc);
    if probes.is_empty() {
        return omitted(ID, TITLE, "no `conflict` probe points in this results file");
    }
    if !probes.iter().any(|p| p.record.simulated.is_some()) {
        return omitted(ID, TITLE, "the conflict probes have no simulated misses");
    }
    let levels = data::data_levels(doc);
    let ks: Vec<u64> = probes
        .iter()
        .map(|p| p.k)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let strides: Vec<i64> = probes
        .iter()
        .map(|p| p.stride_bytes)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // The probes cluster around a few power-of-two strides with ±1 controls: one category per
    // stride keeps 4088/4096/4104 B apart, which a log axis would draw on top of each other.
    let position = |s: i64| strides.iter().position(|&x| x == s).unwrap_or(0) as f64;
    let stride_names: Vec<String> = strides.iter().map(|s| format!("{s} B")).collect();
    let mut panels = Vec::new();
    for (li, level) in levels.iter().enumerate().take(2) {
        let mut series = Vec::new();
        for (ki, &k) in ks.iter().enumerate() {
            let colour = k_colour(&ks, k);
            // Equal miss rates would hide each other: shift each K a little sideways.
            let shift = (ki as f64 - (ks.len() as f64 - 1.0) / 2.0) * 0.06;
            let mut pts: Vec<XY> = probes
                .iter()
                .filter(|p| p.k == k)
                .filter_map(|p| {
                    Some(XY::new(
                        position(p.stride_bytes) + shift,
                        misses_per_access(p.record, li)?,
                    ))
                })
                .collect();
            pts.sort_by(|a, b| a.x.total_cmp(&b.x));
            series.push(Series {
                name: format!("K={k}"),
                colour,
                kind: SeriesKind::Data,
                points: pts,
            });
            let model_pts = strides
                .iter()
                .map(|&s| {
                    XY::new(
                        position(s) + shift,
                        predicted_cyclic_misses(&levels, s, k)
                            .get(li)
                            .copied()
                            .unwrap_or(0.0),
                    )
                })
                .collect();
            series.push(Series {
                name: String::new(),
                colour,
                kind: SeriesKind::Model,
                points: model_pts,
            });
        }
        series.push(Series {
            name: "model (dashed, colour = K)".into(),
            colour: PALETTE[6],
            kind: SeriesKind::Model,
            points: Vec::new(),
        });
        panels.push(Panel::Lines(LinePanel {
            title: format!(
                "{}: {} sets × {} ways, {} B lines",
                level.name, level.sets, level.ways, level.line
            ),
            x: Axis::categories(
                &format!(
                    "stride (bytes); sets × line = {}",
                    format_bytes(level.set_span() as f64)
                ),
                stride_names.clone(),
            ),
            y: Axis::fraction(&format!("{} misses per load", level.name)),
            series,
            vlines: Vec::new(),
            hlines: Vec::new(),
        }));
    }
    let l1 = levels.first();
    let mut rows = Vec::new();
    let mut sorted: Vec<&Probe> = probes.iter().collect();
    sorted.sort_by_key(|p| (p.stride_bytes, p.k));
    for p in &sorted {
        let predicted = predicted_cyclic_misses(&levels, p.stride_bytes, p.k);
        let sets_used =
            l1.map(|l| model::distinct_sets(SIM_BASE, p.stride_bytes, p.k, l.line, l.sets));
        let onset = l1.and_then(|l| {
            model::conflict_onset(
                SIM_BASE,
                p.stride_bytes,
                l.line,
                l.sets,
                l.ways,
                l.lines() + 1,
            )
        });
        rows.push(vec![
            format!("{} B", p.stride_bytes),
            p.k.to_string(),
            sets_used
                .zip(l1)
                .map(|(u, l)| format!("{u} of {}", l.sets))
                .unwrap_or_else(|| "—".into()),
            onset
                .map(|k| k.to_string())
                .unwrap_or_else(|| "none".into()),
            cell(misses_per_access(p.record, 0)),
            cell(predicted.first().copied()),
            cell(misses_per_access(p.record, 1)),
            cell(predicted.get(1).copied()),
            est_cell(p.ns),
        ]);
    }
    let figure = Figure {
        id: ID.into(),
        title: "Miss rate vs stride: K loads at one stride, repeated".into(),
        provenance: format!(
            "{}; dashed: model (lines in sets holding more than `ways` lines miss)",
            prov_sim(doc)
        ),
        panels,
        panel_width: 640,
        panel_height: 380,
    };
    let look_for = match l1 {
        Some(l) => format!(
            "Strides that are a multiple of {} (sets × line of {}) put every load into one set: \
             as soon as K exceeds the {} ways, every load misses. The ±1-element controls spread \
             over many sets and keep missing nothing — same K, same bytes.",
            format_bytes(l.set_span() as f64),
            l.name,
            l.ways
        ),
        None => "Power-of-two strides pile into few sets; the ±1 controls do not.".into(),
    };
    Outcome::Drawn(Box::new(Built {
        figure,
        tables: vec![Table {
            caption: "Conflict probes: model, simulation and timing per stride and K".into(),
            headers: [
                "stride",
                "K",
                "L1 sets used (model)",
                "L1 conflict onset K (model)",
                "L1 misses/load (sim)",
                "L1 misses/load (model)",
                "L2 misses/load (sim)",
                "L2 misses/load (model)",
                "ns/load (timed, CI)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for,
        notes: Vec::new(),
    }))
}

/// Figure 2: misses and time vs the number of L1 sets the stride really uses.
pub fn sets_used(doc: &ResultsDocument) -> Outcome {
    const ID: &str = "fig02-sets-used";
    const TITLE: &str = "Miss rate and time vs sets used";
    let probes = probes(doc);
    let levels = data::data_levels(doc);
    let Some(l1) = levels.first() else {
        return omitted(ID, TITLE, "no cache geometry recorded");
    };
    if probes.is_empty() {
        return omitted(ID, TITLE, "no `conflict` probe points in this results file");
    }
    let ks: Vec<u64> = probes
        .iter()
        .map(|p| p.k)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let used = |p: &Probe| model::distinct_sets(SIM_BASE, p.stride_bytes, p.k, l1.line, l1.sets);
    let mut miss_series = Vec::new();
    let mut time_series = Vec::new();
    for &k in &ks {
        let colour = k_colour(&ks, k);
        let mut m: Vec<XY> = Vec::new();
        let mut t: Vec<XY> = Vec::new();
        for p in probes.iter().filter(|p| p.k == k) {
            let x = used(p) as f64;
            if let Some(v) = misses_per_access(p.record, 0) {
                m.push(XY::new(x, v));
            }
            if let Some(e) = p.ns {
                t.push(XY::with_ci(x, e.value, e.ci()));
            }
        }
        // Several strides can use the same number of sets: keep one point per x (the mean).
        for pts in [&mut m, &mut t] {
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
        miss_series.push(Series {
            name: format!("K={k}"),
            colour,
            kind: SeriesKind::Data,
            points: m,
        });
        time_series.push(Series {
            name: format!("K={k}"),
            colour,
            kind: SeriesKind::Data,
            points: t,
        });
    }
    let ways = u64::from(l1.ways);
    let needed: BTreeSet<u64> = ks.iter().map(|k| k.div_ceil(ways)).collect();
    let vlines: Vec<RefLine> = needed
        .iter()
        .map(|&s| RefLine {
            at: s as f64,
            label: format!(
                "{s} set{} {} lines",
                if s == 1 { " holds" } else { "s hold" },
                s * ways
            ),
        })
        .collect();
    let x_label = format!("{} sets the K loads use (model, of {})", l1.name, l1.sets);
    let mut time_vlines = vlines.clone();
    time_vlines.iter_mut().for_each(|v| v.label.clear());
    let panels = vec![
        Panel::Lines(LinePanel {
            title: format!("{} misses per load (simulated)", l1.name),
            x: Axis {
                from_zero: false,
                ticks: super::chart::TickFormat::Integer,
                ..Axis::linear(&x_label)
            },
            y: Axis::fraction("misses per load"),
            series: miss_series,
            vlines,
            hlines: Vec::new(),
        }),
        Panel::Lines(LinePanel {
            title: "time per load (timed)".into(),
            x: Axis {
                from_zero: false,
                ticks: super::chart::TickFormat::Integer,
                ..Axis::linear(&x_label)
            },
            y: Axis::linear("ns per load"),
            series: time_series,
            vlines: time_vlines,
            hlines: Vec::new(),
        }),
    ];
    let mut rows = Vec::new();
    let strides: BTreeSet<i64> = probes.iter().map(|p| p.stride_bytes).collect();
    let line = i64::from(l1.line);
    for s in strides {
        let lines = (s % line == 0).then_some(s / line);
        rows.push(vec![
            format!("{s} B"),
            lines
                .map(|l| l.to_string())
                .unwrap_or_else(|| "not a whole number of lines".into()),
            lines
                .map(|l| model::gcd(l.unsigned_abs(), u64::from(l1.sets)).to_string())
                .unwrap_or_else(|| "—".into()),
            model::closed_form_sets(s, l1.line, l1.sets)
                .map(|n| n.to_string())
                .unwrap_or_else(|| "—".into()),
            model::distinct_sets(SIM_BASE, s, 4096, l1.line, l1.sets).to_string(),
        ]);
    }
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Miss rate and time vs the number of sets a stride really uses".into(),
            provenance: format!(
                "x: model (distinct {} sets of K accesses); left: {}; right: {}",
                l1.name,
                prov_sim(doc),
                prov_timed(doc)
            ),
            panels,
            panel_width: 600,
            panel_height: 380,
        },
        tables: vec![Table {
            caption: format!(
                "The set/GCD model for {} ({} sets, {} B lines)",
                l1.name, l1.sets, l1.line
            ),
            headers: [
                "stride",
                "stride in lines",
                "gcd(lines, sets)",
                "sets / gcd (closed form)",
                "sets touched by 4096 accesses (enumerated)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: format!(
            "Left of a dashed line, K lines do not fit into the sets the stride uses \
             ({} ways each): misses and time jump. Right of it the same K loads fit.",
            l1.ways
        ),
        notes: Vec::new(),
    }))
}

/// Figure 3: the conflict-probe heat map, stride (with ±1 controls) × K → ns per load.
pub fn conflict_heatmap(doc: &ResultsDocument) -> Outcome {
    const ID: &str = "fig03-conflict-heatmap";
    const TITLE: &str = "Conflict-probe heat map";
    let probes = probes(doc);
    let timed: Vec<&Probe> = probes.iter().filter(|p| p.ns.is_some()).collect();
    if timed.is_empty() {
        return omitted(
            ID,
            TITLE,
            "no timed `conflict` probe points in this results file",
        );
    }
    let levels = data::data_levels(doc);
    let strides: Vec<i64> = timed
        .iter()
        .map(|p| p.stride_bytes)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let ks: Vec<u64> = timed
        .iter()
        .map(|p| p.k)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let value = |s: i64, k: u64| {
        timed
            .iter()
            .find(|p| p.stride_bytes == s && p.k == k)
            .and_then(|p| p.ns.map(|e| e.value))
    };
    let values: Vec<Vec<Option<f64>>> = ks
        .iter()
        .map(|&k| strides.iter().map(|&s| value(s, k)).collect())
        .collect();
    let l1 = levels.first();
    let conflicting = |s: i64| l1.is_some_and(|l| s % l.set_span() as i64 == 0);
    // A cell the set model says fits the L1 (no predicted L1 miss) but that is at least twice
    // as slow as the typical fitting cell is slowed by something else — the data TLB when the
    // K loads sit on K different pages.
    let fits_l1 = |s: i64, k: u64| predicted_cyclic_misses(&levels, s, k).first() == Some(&0.0);
    let fitting: Vec<f64> = strides
        .iter()
        .flat_map(|&s| ks.iter().map(move |&k| (s, k)))
        .filter(|&(s, k)| fits_l1(s, k))
        .filter_map(|(s, k)| value(s, k))
        .collect();
    let typical = data::median(&fitting);
    let mut marks = Vec::new();
    for (c, &s) in strides.iter().enumerate() {
        for (r, &k) in ks.iter().enumerate() {
            if fits_l1(s, k)
                && let (Some(v), Some(t)) = (value(s, k), typical)
                && v >= 2.0 * t
            {
                marks.push((c, r, "not L1: TLB?".to_string()));
            }
        }
    }
    let divider = l1.and_then(|l| {
        ks.iter()
            .position(|&k| k > u64::from(l.ways))
            .map(|r| (r, format!("{} ways = {}", l.name, l.ways)))
    });
    let columns: Vec<String> = strides
        .iter()
        .map(|&s| {
            if conflicting(s) {
                format!("{s} B")
            } else {
                format!("{s} B (ctl)")
            }
        })
        .collect();
    let panel = HeatPanel {
        title: "ns per dependent load".into(),
        x_label: "stride (bytes); ctl = ±1-element control".into(),
        y_label: "K (loads in the cycle)".into(),
        columns,
        rows: ks.iter().map(|k| k.to_string()).collect(),
        values,
        value_label: "ns per load (timed)".into(),
        divider,
        marks: marks.clone(),
    };
    let mut rows = Vec::new();
    for &k in &ks {
        let mut row = vec![k.to_string()];
        for &s in &strides {
            row.push(est_cell(
                timed
                    .iter()
                    .find(|p| p.stride_bytes == s && p.k == k)
                    .and_then(|p| p.ns),
            ));
        }
        rows.push(row);
    }
    let mut headers = vec!["K".to_string()];
    headers.extend(strides.iter().map(|s| format!("{s} B")));
    let tlb_note = if marks.is_empty() {
        "No cell slowed down where the L1 model says the lines fit, so no TLB cliff shows at \
         these strides and K."
            .to_string()
    } else {
        format!(
            "{} cell(s) are ≥ 2× slower than the typical cell that fits the L1 ({} ns) although \
             the model says their lines fit the L1 sets (marked \"not L1: TLB?\"): the data TLB, \
             not the cache.",
            marks.len(),
            typical.map(format_number).unwrap_or_default()
        )
    };
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Conflict probes: stride × K".into(),
            provenance: format!(
                "{}; ways from the recorded geometry ({})",
                prov_timed(doc),
                data::geometry_summary(&levels[..levels.len().min(1)])
            ),
            panels: vec![Panel::Heat(panel)],
            panel_width: 1000,
            panel_height: 420,
        },
        tables: vec![Table {
            caption: "ns per load (timed, median and CI)".into(),
            headers,
            rows,
        }],
        look_for: format!(
            "Below the red line K fits the ways of one set; above it, power-of-two columns turn \
             dark while their controls stay light. {tlb_note}"
        ),
        notes: Vec::new(),
    }))
}

/// Figure 4: time per access vs step (`stride-sum`).
pub fn stride_sweep(doc: &ResultsDocument) -> Outcome {
    const ID: &str = "fig04-stride-sweep";
    const TITLE: &str = "Time per access vs step";
    let recs: Vec<&PointRecord> = data::of_kernel(doc, "stride-sum")
        .filter(|r| data::int(r, "stride").is_some())
        .collect();
    if recs.iter().all(|r| data::ns_per_element(r).is_none()) {
        return omitted(
            ID,
            TITLE,
            "no timed `stride-sum` points in this results file",
        );
    }
    let levels = data::data_levels(doc);
    let bytes = |r: &PointRecord| data::int(r, "stride").unwrap_or(0) as f64 * 8.0;
    let mut timed: Vec<XY> = recs
        .iter()
        .filter_map(|r| {
            let e = data::ns_per_element(r)?;
            Some(XY::with_ci(bytes(r), e.value, e.ci()))
        })
        .collect();
    timed.sort_by(|a, b| a.x.total_cmp(&b.x));
    let mut sim_series = Vec::new();
    for (li, level) in levels.iter().enumerate().take(3) {
        let mut pts: Vec<XY> = recs
            .iter()
            .filter_map(|r| Some(XY::new(bytes(r), misses_per_access(r, li)?)))
            .collect();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        if !pts.is_empty() {
            sim_series.push(Series {
                name: format!("{} (sim)", level.name),
                colour: PALETTE[li + 1],
                kind: SeriesKind::Data,
                points: pts,
            });
        }
    }
    let line = levels.first().map(|l| f64::from(l.line)).unwrap_or(64.0);
    let xs: Vec<f64> = timed.iter().map(|p| p.x).collect();
    sim_series.push(Series {
        name: "model: min(1, step / line)".into(),
        colour: PALETTE[0],
        kind: SeriesKind::Model,
        points: xs
            .iter()
            .map(|&x| XY::new(x, (x / line).min(1.0)))
            .collect(),
    });
    let page = doc
        .info
        .get("page_size")
        .and_then(|v| v.as_u64())
        .unwrap_or(4096) as f64;
    let vlines = vec![
        RefLine {
            at: line,
            label: format!("line {}", format_bytes(line)),
        },
        RefLine {
            at: page,
            label: format!("page {}", format_bytes(page)),
        },
    ];
    let panels = vec![
        Panel::Lines(LinePanel {
            title: "time per element read (timed)".into(),
            x: Axis::log2_bytes("step (bytes, log2)"),
            y: Axis::linear("ns per element"),
            series: vec![Series {
                name: "stride-sum".into(),
                colour: PALETTE[0],
                kind: SeriesKind::Data,
                points: timed,
            }],
            vlines: vlines.clone(),
            hlines: Vec::new(),
        }),
        Panel::Lines(LinePanel {
            title: "misses per element (simulated)".into(),
            x: Axis::log2_bytes("step (bytes, log2)"),
            y: Axis::linear("misses per element read"),
            series: sim_series,
            vlines,
            hlines: Vec::new(),
        }),
    ];
    let mut sorted = recs.clone();
    sorted.sort_by_key(|r| data::int(r, "stride"));
    let rows = sorted
        .iter()
        .map(|r| {
            vec![
                format!("{} B", bytes(r)),
                data::int(r, "len")
                    .map(|l| format_bytes(l as f64 * 8.0))
                    .unwrap_or_else(|| "—".into()),
                est_cell(data::ns_per_element(r)),
                cell(data::gb_per_s(r).map(|e| e.value)),
                cell(misses_per_access(r, 0)),
                cell(misses_per_access(r, 1)),
            ]
        })
        .collect();
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Time per access vs step".into(),
            provenance: format!(
                "left: {}; right: {}; dashed: model",
                prov_timed(doc),
                prov_sim(doc)
            ),
            panels,
            panel_width: 600,
            panel_height: 380,
        },
        tables: vec![Table {
            caption: "stride-sum: one element every `step` bytes".into(),
            headers: [
                "step",
                "buffer",
                "ns/element (timed, CI)",
                "GB/s of useful data",
                "L1 misses/element (sim)",
                "L2 misses/element (sim)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: format!(
            "Below the {} line size, neighbouring elements share a line: cost grows with the \
             step. From one line per element on, every access is a miss and the curve flattens \
             — until page and TLB effects add another step.",
            format_bytes(line)
        ),
        notes: Vec::new(),
    }))
}

/// Figure 5: working-set latency of the pointer chase, with the cache sizes as vertical lines.
pub fn working_set(doc: &ResultsDocument) -> Outcome {
    const ID: &str = "fig05-working-set";
    const TITLE: &str = "Working-set latency";
    let mut recs: Vec<&PointRecord> = data::of_kernel(doc, "chase")
        .filter(|r| data::int(r, "bytes").is_some() && data::ns_per_element(r).is_some())
        .collect();
    if recs.is_empty() {
        return omitted(ID, TITLE, "no timed `chase` points in this results file");
    }
    recs.sort_by_key(|r| data::int(r, "bytes"));
    let levels = data::data_levels(doc);
    let points: Vec<XY> = recs
        .iter()
        .filter_map(|r| {
            let e = data::ns_per_element(r)?;
            Some(XY::with_ci(data::int(r, "bytes")? as f64, e.value, e.ci()))
        })
        .collect();
    let vlines = levels
        .iter()
        .map(|l| RefLine {
            at: l.size as f64,
            label: format!("{} {}", l.name, format_bytes(l.size as f64)),
        })
        .collect();
    let rows = recs
        .iter()
        .map(|r| {
            vec![
                format_bytes(data::int(r, "bytes").unwrap_or(0) as f64),
                est_cell(data::ns_per_element(r)),
                cell(misses_per_access(r, 0)),
                cell(misses_per_access(r, 1)),
                cell(misses_per_access(r, 2)),
            ]
        })
        .collect();
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Working-set latency (random pointer chase)".into(),
            provenance: format!(
                "{}; dashed lines: cache sizes from the recorded geometry",
                prov_timed(doc)
            ),
            panels: vec![Panel::Lines(LinePanel {
                title: "ns per dependent load vs working set".into(),
                x: Axis::log2_bytes("working set (bytes, log2)"),
                y: Axis::log10("ns per load (log)"),
                series: vec![Series {
                    name: "chase".into(),
                    colour: PALETTE[0],
                    kind: SeriesKind::Data,
                    points,
                }],
                vlines,
                hlines: Vec::new(),
            })],
            panel_width: 1000,
            panel_height: 420,
        },
        tables: vec![Table {
            caption: "Pointer chase: one dependent load per line, random order".into(),
            headers: [
                "working set",
                "ns/load (timed, CI)",
                "L1 misses/load (sim)",
                "L2 misses/load (sim)",
                "L3 misses/load (sim)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: "Plateaus where the working set fits a level, steps just after each dashed \
                   size. A step that lands far from a dashed line means the recorded geometry \
                   (or the VM's claim) is off."
            .into(),
        notes: Vec::new(),
    }))
}

/// One square-matrix traversal point.
struct Traversal<'a> {
    order: &'a str,
    /// Columns (the row length): 2^k or 2^k+1.
    n: u64,
    rows: u64,
    padded_ld: Option<u64>,
    record: &'a PointRecord,
}

fn traversals(doc: &ResultsDocument) -> Vec<Traversal<'_>> {
    doc.records
        .iter()
        .filter(|r| r.kernel == "row-sum" || r.kernel == "col-sum")
        .filter_map(|r| {
            let rows = data::int(r, "rows")?;
            let cols = data::int(r, "cols")?;
            let ld = data::int(r, "ld").unwrap_or(cols);
            Some(Traversal {
                order: if r.kernel == "row-sum" { "row" } else { "col" },
                n: cols,
                rows,
                padded_ld: (ld != cols).then_some(ld),
                record: r,
            })
        })
        .collect()
}

/// Figure 6: row vs column order vs matrix size, at 2^k and 2^k+1.
pub fn row_vs_column(doc: &ResultsDocument) -> Outcome {
    const ID: &str = "fig06-row-vs-column";
    const TITLE: &str = "Row vs column order";
    let trav = traversals(doc);
    let plain: Vec<&Traversal> = trav.iter().filter(|t| t.padded_ld.is_none()).collect();
    if !plain
        .iter()
        .any(|t| data::ns_per_element(t.record).is_some())
    {
        return omitted(
            ID,
            TITLE,
            "no timed `row-sum`/`col-sum` points in this results file",
        );
    }
    let levels = data::data_levels(doc);
    // Plot n = 2^k and 2^k+1 at the same x (2^k) so the pair sits side by side.
    let base_of = |n: u64| if n.is_power_of_two() { n } else { n - 1 };
    let kind_of = |n: u64| if n.is_power_of_two() { "2^k" } else { "2^k+1" };
    let mut time = Vec::new();
    let colours = [
        ("row", "2^k", PALETTE[0]),
        ("col", "2^k", PALETTE[1]),
        ("row", "2^k+1", PALETTE[5]),
        ("col", "2^k+1", PALETTE[3]),
    ];
    for (order, kind, colour) in colours {
        let mut pts: Vec<XY> = plain
            .iter()
            .filter(|t| {
                t.order == order
                    && kind_of(t.n) == kind
                    && (t.n.is_power_of_two() || (t.n - 1).is_power_of_two())
            })
            .filter_map(|t| {
                let e = data::ns_per_element(t.record)?;
                Some(XY::with_ci(base_of(t.n) as f64, e.value, e.ci()))
            })
            .collect();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        if !pts.is_empty() {
            time.push(Series {
                name: format!("{order} order, n = {kind}"),
                colour,
                kind: SeriesKind::Data,
                points: pts,
            });
        }
    }
    let ns = |order: &str, n: u64| {
        plain
            .iter()
            .find(|t| t.order == order && t.n == n)
            .and_then(|t| data::ns_per_element(t.record))
            .map(|e| e.value)
    };
    let ns_values: BTreeSet<u64> = plain.iter().map(|t| t.n).collect();
    let mut ratio = Vec::new();
    let mut sim = Vec::new();
    for (kind, colour) in [("2^k", PALETTE[1]), ("2^k+1", PALETTE[3])] {
        let mut r_pts = Vec::new();
        let mut s_pts = Vec::new();
        for &n in ns_values.iter().filter(|&&n| kind_of(n) == kind) {
            if let (Some(c), Some(r)) = (ns("col", n), ns("row", n)) {
                r_pts.push(XY::new(base_of(n) as f64, c / r));
            }
            if let Some(t) = plain.iter().find(|t| t.order == "col" && t.n == n)
                && let Some(m) = misses_per_access(t.record, 0)
            {
                s_pts.push(XY::new(base_of(n) as f64, m));
            }
        }
        ratio.push(Series {
            name: format!("col / row, n = {kind}"),
            colour,
            kind: SeriesKind::Data,
            points: r_pts,
        });
        sim.push(Series {
            name: format!("col order, n = {kind} (sim)"),
            colour,
            kind: SeriesKind::Data,
            points: s_pts,
        });
    }
    if let Some(l1) = levels.first() {
        // Model: one column is `rows` loads n·8 B apart; its lines are reused by the next
        // columns (8 f64 share a line) only if they all stay in the sets they map to — else
        // every element misses.
        let pts: Vec<XY> = plain
            .iter()
            .filter(|t| t.order == "col" && t.n.is_power_of_two())
            .map(|t| {
                let stride = t.padded_ld.unwrap_or(t.n) as i64 * 8;
                let fits =
                    model::conflict_onset(SIM_BASE, stride, l1.line, l1.sets, l1.ways, t.rows + 1)
                        .is_none_or(|k| k > t.rows);
                let per_line = 8.0 / f64::from(l1.line);
                XY::new(t.n as f64, if fits { per_line } else { 1.0 })
            })
            .collect();
        sim.push(Series {
            name: format!(
                "model, n = 2^k: 1/8 if a column stays in its {} sets",
                l1.name
            ),
            colour: PALETTE[6],
            kind: SeriesKind::Model,
            points: pts,
        });
    }
    let x = || Axis::log2("columns n (log2; 2^k+1 drawn at 2^k)");
    let panels = vec![
        Panel::Lines(LinePanel {
            title: "time per element (timed)".into(),
            x: x(),
            y: Axis::log10("ns per element (log)"),
            series: time,
            vlines: Vec::new(),
            hlines: Vec::new(),
        }),
        Panel::Lines(LinePanel {
            title: "column / row time (timed, same run)".into(),
            x: x(),
            y: Axis::linear("slowdown of column order (×)"),
            series: ratio,
            vlines: Vec::new(),
            hlines: vec![RefLine {
                at: 1.0,
                label: "no difference".into(),
            }],
        }),
        Panel::Lines(LinePanel {
            title: format!(
                "{} misses per element, column order",
                levels.first().map(|l| l.name.as_str()).unwrap_or("L1")
            ),
            x: x(),
            y: Axis::linear("misses per element"),
            series: sim,
            vlines: Vec::new(),
            hlines: Vec::new(),
        }),
    ];
    let mut sorted: Vec<&Traversal> = trav.iter().collect();
    sorted.sort_by_key(|t| (t.n, t.padded_ld, t.order));
    let rows = sorted
        .iter()
        .map(|t| {
            let ld = t.padded_ld.unwrap_or(t.n);
            vec![
                t.record.kernel.clone(),
                format!("{}×{}", t.rows, t.n),
                ld.to_string(),
                levels
                    .first()
                    .map(|l| {
                        let stride = if t.order == "col" { ld as i64 * 8 } else { 8 };
                        format!(
                            "{} of {}",
                            model::distinct_sets(SIM_BASE, stride, t.rows, l.line, l.sets),
                            l.sets
                        )
                    })
                    .unwrap_or_else(|| "—".into()),
                est_cell(data::ns_per_element(t.record)),
                cell(misses_per_access(t.record, 0)),
                cell(misses_per_access(t.record, 1)),
            ]
        })
        .collect();
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Row vs column order, at n = 2^k and 2^k+1".into(),
            provenance: format!(
                "{}; right: {}; dashed: model",
                prov_timed(doc),
                prov_sim(doc)
            ),
            panels,
            panel_width: 470,
            panel_height: 380,
        },
        tables: vec![Table {
            caption: "Square f64 matrices summed in row or column order (ld = leading dimension)"
                .into(),
            headers: [
                "kernel",
                "matrix",
                "ld",
                "L1 sets one pass uses (model)",
                "ns/element (timed, CI)",
                "L1 misses/element (sim)",
                "L2 misses/element (sim)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: "Column order is slow once a column's lines no longer stay cached until the \
                   next column; at n = 2^k the lines of one column also share few sets, so the \
                   slowdown starts earlier and is larger than at n = 2^k+1 (or with ld padded)."
            .into(),
        notes: Vec::new(),
    }))
}

/// Figure 7: transposes and copies — GB/s and the fraction of the same-run best copy.
pub fn transposes(doc: &ResultsDocument) -> Outcome {
    const ID: &str = "fig07-transpose";
    const TITLE: &str = "Transpose and copies";
    let recs: Vec<&PointRecord> = data::of_kernel(doc, "transpose")
        .filter(|r| data::gb_per_s(r).is_some())
        .collect();
    if recs.is_empty() {
        return omitted(
            ID,
            TITLE,
            "no timed `transpose` points in this results file",
        );
    }
    let size = |r: &PointRecord| {
        format!(
            "{}×{}",
            data::int(r, "rows").unwrap_or(0),
            data::int(r, "cols").unwrap_or(0)
        )
    };
    let mut sizes: Vec<(u64, String)> = recs
        .iter()
        .map(|r| (data::int(r, "rows").unwrap_or(0), size(r)))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    sizes.dedup();
    let categories: Vec<String> = sizes.iter().map(|(_, s)| s.clone()).collect();
    let variants: Vec<String> = {
        let order = ["naive-read", "naive-write", "blocked", "fast"];
        let mut v: Vec<String> = recs
            .iter()
            .filter_map(|r| data::text(r, "variant").map(String::from))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        v.sort_by_key(|x| order.iter().position(|o| o == x).unwrap_or(order.len()));
        v
    };
    // The default block size only (a sweep over B gets its own panel).
    let default_b = |r: &PointRecord| data::int(r, "B");
    let b_values: BTreeSet<u64> = recs
        .iter()
        .filter(|r| data::text(r, "variant") == Some("blocked"))
        .filter_map(|r| default_b(r))
        .collect();
    let main_b = recs
        .iter()
        .filter(|r| data::text(r, "variant") == Some("blocked"))
        .filter_map(|r| default_b(r))
        .next();
    let pick = |variant: &str, cat: &str| {
        recs.iter().find(|r| {
            data::text(r, "variant") == Some(variant)
                && size(r) == cat
                && (variant != "blocked" || default_b(r) == main_b)
        })
    };
    let mut gbs = Vec::new();
    let mut frac = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        let colour = colour_for(v, i);
        let found: Vec<Option<&&PointRecord>> = categories.iter().map(|c| pick(v, c)).collect();
        gbs.push(BarSeries {
            name: v.clone(),
            colour,
            values: found
                .iter()
                .map(|r| r.and_then(|r| data::gb_per_s(r)).map(|e| e.value))
                .collect(),
            ci: found
                .iter()
                .map(|r| r.and_then(|r| data::gb_per_s(r)).and_then(|e| e.ci()))
                .collect(),
        });
        frac.push(BarSeries {
            name: v.clone(),
            colour,
            values: found
                .iter()
                .map(|r| r.and_then(|r| data::reference_ratio(r)))
                .collect(),
            ci: vec![None; categories.len()],
        });
    }
    let mut panels = vec![
        Panel::Bars(BarPanel {
            title: "bandwidth (timed)".into(),
            categories: categories.clone(),
            value_axis: Axis::linear("GB/s (bytes read + written)"),
            series: gbs,
            stacked: false,
            vlines: Vec::new(),
        }),
        Panel::Bars(BarPanel {
            title: "fraction of the same-run best copy".into(),
            categories: categories.clone(),
            value_axis: Axis::linear("transpose GB/s ÷ copy GB/s"),
            series: frac,
            stacked: false,
            vlines: vec![RefLine {
                at: 1.0,
                label: "copy".into(),
            }],
        }),
    ];
    let mut notes = Vec::new();
    if b_values.len() >= 2 {
        let mut series = Vec::new();
        for (i, (n, cat)) in sizes.iter().enumerate() {
            let mut pts: Vec<XY> = recs
                .iter()
                .filter(|r| data::text(r, "variant") == Some("blocked") && size(r) == *cat)
                .filter_map(|r| {
                    let e = data::gb_per_s(r)?;
                    Some(XY::with_ci(default_b(r)? as f64, e.value, e.ci()))
                })
                .collect();
            pts.sort_by(|a, b| a.x.total_cmp(&b.x));
            series.push(Series {
                name: format!("blocked, n = {n}"),
                colour: PALETTE[(i + 2) % PALETTE.len()],
                kind: SeriesKind::Data,
                points: pts,
            });
        }
        panels.push(Panel::Lines(LinePanel {
            title: "block-size sweep (timed)".into(),
            x: Axis::log2("block size B (elements, log2)"),
            y: Axis::linear("GB/s"),
            series,
            vlines: Vec::new(),
            hlines: Vec::new(),
        }));
    } else {
        notes.push(
            "Block-size sweep omitted: this results file has the blocked transpose at a single \
             block size (run a suite with several `B` values, e.g. the full suite)."
                .to_string(),
        );
    }
    let approximated: BTreeSet<(&str, &str)> = recs
        .iter()
        .filter_map(|r| Some((data::text(r, "variant")?, simulation_note(r)?)))
        .collect();
    for (variant, note) in approximated {
        notes.push(format!("Simulated misses of `{variant}`: {note}."));
    }
    let mut sorted = recs.clone();
    sorted.sort_by_key(|r| {
        (
            data::int(r, "rows"),
            data::text(r, "variant").map(String::from),
            data::int(r, "B"),
        )
    });
    let rows = sorted
        .iter()
        .map(|r| {
            let reference = r.reference.as_ref();
            let variant = data::text(r, "variant").unwrap_or("?");
            vec![
                variant.to_string(),
                size(r),
                // Only the blocked loops use B (the others carry the parameter's default).
                data::int(r, "B")
                    .filter(|_| variant == "blocked")
                    .map(|b| b.to_string())
                    .unwrap_or_else(|| "—".into()),
                est_cell(data::gb_per_s(r)),
                cell(reference.map(|c| c.reference_gb_per_s)),
                reference
                    .map(|c| c.best_variant.clone())
                    .unwrap_or_else(|| "—".into()),
                cell(data::reference_ratio(r)),
                cell(misses_per_access(r, 0)),
            ]
        })
        .collect();
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Transposes as copies: bandwidth and fraction of a plain copy".into(),
            provenance: format!(
                "{}; reference copy measured interleaved in the same run",
                prov_timed(doc)
            ),
            panels,
            panel_width: 470,
            panel_height: 360,
        },
        tables: vec![Table {
            caption: "Transpose variants (GB/s counts bytes read + written)".into(),
            headers: [
                "variant",
                "matrix",
                "B",
                "GB/s (timed, CI)",
                "same-run copy GB/s",
                "copy variant",
                "fraction of copy",
                "L1 misses/element (sim)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: "A transpose reads or writes one of its matrices by columns: the naive loops \
                   get a small fraction of a copy. Blocking keeps a tile of both matrices in \
                   cache; the fraction of copy is the number that survives a different machine."
            .into(),
        notes,
    }))
}

/// Where the simulated stream of `r` differs from the one its timing measured (the
/// catalogue's note for the record's resolved parameters; none for unknown kernels).
fn simulation_note(r: &PointRecord) -> Option<&'static str> {
    let spec = crate::kernels::find(&r.kernel).ok()?;
    crate::kernels::simulation_note(spec, &r.params)
}

/// A short name for a view expression and its shape/strides (from the layout model).
fn view_label(expr: &str) -> (String, Option<bool>) {
    let short = expr
        .find(".view(")
        .and_then(|i| expr[i..].find(')').map(|j| &expr[i + j + 1..]))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(expr);
    match crate::layout::expr::evaluate_layout(expr) {
        Ok((layout, _)) => (
            format!(
                "{short}  shape {:?} strides {:?}",
                layout.shape(),
                layout.strides()
            ),
            Some(layout.is_c_contiguous()),
        ),
        Err(_) => (short.to_string(), None),
    }
}

/// Figure 8: views — ns per element vs a contiguous walk of the same count.
pub fn views(doc: &ResultsDocument) -> Outcome {
    const ID: &str = "fig08-views";
    const TITLE: &str = "Views";
    let recs: Vec<&PointRecord> = data::of_kernel(doc, "view-sum")
        .filter(|r| data::text(r, "expr").is_some() && data::ns_per_element(r).is_some())
        .collect();
    if recs.is_empty() {
        return omitted(ID, TITLE, "no timed `view-sum` points in this results file");
    }
    let info: Vec<(&PointRecord, String, Option<bool>)> = recs
        .iter()
        .map(|r| {
            let (label, contiguous) = view_label(data::text(r, "expr").unwrap_or(""));
            (*r, label, contiguous)
        })
        .collect();
    let elements = |r: &PointRecord| r.work.map(|w| w.elements);
    let control = |r: &PointRecord| {
        info.iter()
            .find(|(c, _, contiguous)| *contiguous == Some(true) && elements(c) == elements(r))
            .and_then(|(c, _, _)| data::ns_per_element(c))
    };
    let categories: Vec<String> = info.iter().map(|(_, l, _)| l.clone()).collect();
    let value = |want: bool| {
        info.iter()
            .map(|(r, _, c)| {
                (c.unwrap_or(false) == want)
                    .then(|| data::ns_per_element(r).map(|e| e.value))
                    .flatten()
            })
            .collect::<Vec<_>>()
    };
    let ci = |want: bool| {
        info.iter()
            .map(|(r, _, c)| {
                (c.unwrap_or(false) == want)
                    .then(|| data::ns_per_element(r).and_then(|e| e.ci()))
                    .flatten()
            })
            .collect::<Vec<_>>()
    };
    let panel = BarPanel {
        title: "ns per element (timed)".into(),
        categories,
        value_axis: Axis::linear("ns per element"),
        series: vec![
            BarSeries {
                name: "strided view".into(),
                colour: PALETTE[0],
                values: value(false),
                ci: ci(false),
            },
            BarSeries {
                name: "contiguous walk (control)".into(),
                colour: PALETTE[2],
                values: value(true),
                ci: ci(true),
            },
        ],
        stacked: true,
        vlines: Vec::new(),
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
                cell(misses_per_access(r, 0)),
            ]
        })
        .collect();
    let height = (recs.len() as u32 * 34 + 110).max(260);
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Views: the same sum over differently strided views".into(),
            provenance: format!(
                "{}; shapes and strides from the layout model (elements)",
                prov_timed(doc)
            ),
            panels: vec![Panel::Bars(panel)],
            panel_width: 1100,
            panel_height: height,
        },
        tables: vec![Table {
            caption: "View walks; the control is the contiguous walk with the same element count"
                .into(),
            headers: [
                "expression",
                "shape / strides (elements)",
                "C-contiguous",
                "elements",
                "ns/element (timed, CI)",
                "× contiguous control",
                "L1 misses/element (sim)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: "A view only rewrites shape and strides, so its cost per element is set by \
                   its innermost stride: a diagonal (stride n+1) touches a new line per element; \
                   a flip walks backwards at stride −1 and should cost about what a forward walk \
                   costs."
            .into(),
        notes: Vec::new(),
    }))
}

/// Figure 9: tile-major (blocked) vs row-major layout, in row and column order.
pub fn blocked(doc: &ResultsDocument) -> Outcome {
    const ID: &str = "fig09-blocked";
    const TITLE: &str = "Blocked vs row-major";
    let tiled: Vec<&PointRecord> = data::of_kernel(doc, "tiled-sum")
        .filter(|r| data::ns_per_element(r).is_some())
        .collect();
    if tiled.is_empty() {
        return omitted(
            ID,
            TITLE,
            "no timed `tiled-sum` points in this results file",
        );
    }
    let trav = traversals(doc);
    let orders = ["row", "col"];
    let categories: Vec<String> = vec!["row order".into(), "column order".into()];
    let ns_tiled = |o: &str| {
        tiled
            .iter()
            .find(|r| data::text(r, "order") == Some(o))
            .and_then(|r| data::ns_per_element(r))
    };
    let n = data::int(tiled[0], "n");
    let b = data::int(tiled[0], "B");
    let ns_major = |o: &str| {
        trav.iter()
            .find(|t| t.order == o && Some(t.n) == n && Some(t.rows) == n && t.padded_ld.is_none())
            .and_then(|t| data::ns_per_element(t.record))
    };
    let series = vec![
        BarSeries {
            name: format!("row-major {}×{}", n.unwrap_or(0), n.unwrap_or(0)),
            colour: colour_for("row-major", 0),
            values: orders
                .iter()
                .map(|o| ns_major(o).map(|e| e.value))
                .collect(),
            ci: orders
                .iter()
                .map(|o| ns_major(o).and_then(|e| e.ci()))
                .collect(),
        },
        BarSeries {
            name: format!("tile-major, {}×{} tiles", b.unwrap_or(0), b.unwrap_or(0)),
            colour: colour_for("tile-major", 2),
            values: orders
                .iter()
                .map(|o| ns_tiled(o).map(|e| e.value))
                .collect(),
            ci: orders
                .iter()
                .map(|o| ns_tiled(o).and_then(|e| e.ci()))
                .collect(),
        },
    ];
    let mut rows = Vec::new();
    for (o, name) in orders.iter().zip(&categories) {
        rows.push(vec![
            name.clone(),
            est_cell(ns_major(o)),
            est_cell(ns_tiled(o)),
            cell(ns_major(o).zip(ns_tiled(o)).map(|(a, t)| a.value / t.value)),
        ]);
    }
    let mut tables = vec![Table {
        caption: format!(
            "Sum of an n = {} matrix: row-major vs tile-major (ns per element, timed)",
            n.unwrap_or(0)
        ),
        headers: ["order", "row-major", "tile-major", "row-major ÷ tile-major"]
            .map(String::from)
            .to_vec(),
        rows,
    }];
    let conversions: Vec<&PointRecord> = data::of_kernel(doc, "to-tiles").collect();
    if !conversions.is_empty() {
        tables.push(Table {
            caption: "Converting row-major to tile-major (a strided copy)".into(),
            headers: ["point", "GB/s (timed, CI)", "fraction of same-run copy"]
                .map(String::from)
                .to_vec(),
            rows: conversions
                .iter()
                .map(|r| {
                    vec![
                        point_label(r),
                        est_cell(data::gb_per_s(r)),
                        cell(data::reference_ratio(r)),
                    ]
                })
                .collect(),
        });
    }
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Blocked (tile-major) vs row-major layout".into(),
            provenance: prov_timed(doc),
            panels: vec![Panel::Bars(BarPanel {
                title: "ns per element (timed)".into(),
                categories,
                value_axis: Axis::linear("ns per element"),
                series,
                stacked: false,
                vlines: Vec::new(),
            })],
            panel_width: 1000,
            panel_height: 260,
        },
        tables,
        look_for: "In tile-major storage a tile is contiguous, so walking the tiles in column \
                   order stays nearly as fast as row order; in row-major storage column order \
                   pays a line per element."
            .into(),
        notes: Vec::new(),
    }))
}

/// Figure 10: bandwidth vs threads (pinned), with perfect scaling dashed.
pub fn threads(doc: &ResultsDocument) -> Outcome {
    const ID: &str = "fig10-threads";
    const TITLE: &str = "Bandwidth vs threads";
    let recs: Vec<&PointRecord> = doc
        .records
        .iter()
        .filter(|r| r.kernel == "copy" || r.kernel == "read")
        .filter(|r| data::gb_per_s(r).is_some())
        .collect();
    if recs.is_empty() {
        return omitted(
            ID,
            TITLE,
            "no timed `copy`/`read` points in this results file",
        );
    }
    let counts: Vec<usize> = recs
        .iter()
        .map(|r| r.threads)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let pos = |t: usize| counts.iter().position(|&c| c == t).unwrap_or(0) as f64;
    let mut series = Vec::new();
    let mut rows = Vec::new();
    for kernel in ["copy", "read"] {
        let mut ks: Vec<&&PointRecord> = recs.iter().filter(|r| r.kernel == kernel).collect();
        if ks.is_empty() {
            continue;
        }
        ks.sort_by_key(|r| r.threads);
        let colour = colour_for(kernel, 0);
        series.push(Series {
            name: format!("{kernel} (timed)"),
            colour,
            kind: SeriesKind::Data,
            points: ks
                .iter()
                .filter_map(|r| {
                    let e = data::gb_per_s(r)?;
                    Some(XY::with_ci(pos(r.threads), e.value, e.ci()))
                })
                .collect(),
        });
        if let Some(one) = ks
            .iter()
            .find(|r| r.threads == 1)
            .and_then(|r| data::gb_per_s(r))
        {
            series.push(Series {
                name: format!("{kernel}: perfect scaling"),
                colour,
                kind: SeriesKind::Model,
                points: ks
                    .iter()
                    .map(|r| XY::new(pos(r.threads), one.value * r.threads as f64))
                    .collect(),
            });
        }
        for r in &ks {
            let pinned = r.pinning.threads.iter().filter(|t| t.pinned).count();
            rows.push(vec![
                point_label(r),
                r.threads.to_string(),
                format!("{pinned} of {}", r.pinning.threads.len()),
                est_cell(data::gb_per_s(r)),
            ]);
        }
    }
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: "Bandwidth vs threads (one buffer per pinned thread)".into(),
            provenance: format!(
                "{}; dashed: one thread's bandwidth × threads",
                prov_timed(doc)
            ),
            panels: vec![Panel::Lines(LinePanel {
                title: "aggregate bandwidth".into(),
                x: Axis::categories("threads", counts.iter().map(|c| c.to_string()).collect()),
                y: Axis::linear("GB/s (all threads, read + written)"),
                series,
                vlines: Vec::new(),
                hlines: Vec::new(),
            })],
            panel_width: 900,
            panel_height: 380,
        },
        tables: vec![Table {
            caption: "Copy and read bandwidth per thread count".into(),
            headers: ["point", "threads", "pinned", "GB/s (timed, CI)"]
                .map(String::from)
                .to_vec(),
            rows,
        }],
        look_for: "Where the solid line leaves the dashed one, the threads share a bottleneck \
                   (memory bandwidth, a shared cache or, in a VM, the host)."
            .into(),
        notes: Vec::new(),
    }))
}

/// Figure 11: the 3C split (compulsory / capacity / conflict) of L1 misses per kernel.
pub fn three_c(doc: &ResultsDocument) -> Outcome {
    const ID: &str = "fig11-3c";
    const TITLE: &str = "3C breakdown";
    use crate::kernels::spec::Family;
    let recs: Vec<&PointRecord> = doc
        .records
        .iter()
        .filter(|r| {
            matches!(
                r.family,
                Family::Traverse | Family::Transpose | Family::Blocked | Family::View
            )
        })
        .filter(|r| data::sim_level(r, 0).is_some_and(|l| data::accesses(l) > 0))
        .collect();
    if recs.is_empty() {
        return omitted(
            ID,
            TITLE,
            "no simulated misses for traversal, transpose, view or blocked kernels",
        );
    }
    fn l1(r: &PointRecord) -> Option<&crate::results::SimulatedLevel> {
        data::sim_level(r, 0)
    }
    let per = |r: &PointRecord, f: fn(&crate::results::SimulatedLevel) -> u64| {
        l1(r).map(|l| f(l) as f64 / data::accesses(l) as f64)
    };
    let categories: Vec<String> = recs.iter().map(|r| short_label(r)).collect();
    type Part = (&'static str, fn(&crate::results::SimulatedLevel) -> u64);
    let parts: [Part; 3] = [
        ("compulsory", |l| l.compulsory),
        ("capacity", |l| l.capacity),
        ("conflict", |l| l.conflict),
    ];
    let series = parts
        .iter()
        .enumerate()
        .map(|(i, (name, f))| BarSeries {
            name: (*name).into(),
            colour: colour_for(name, i),
            values: recs.iter().map(|r| per(r, *f)).collect(),
            ci: vec![None; recs.len()],
        })
        .collect();
    let level_name = recs
        .first()
        .and_then(|r| l1(r))
        .map(|l| l.name.clone())
        .unwrap_or_else(|| "L1".into());
    let rows = recs
        .iter()
        .zip(&categories)
        .map(|(r, c)| {
            let l = l1(r);
            vec![
                c.clone(),
                l.map(|l| data::accesses(l).to_string()).unwrap_or_default(),
                l.map(|l| l.misses.to_string()).unwrap_or_default(),
                l.map(|l| l.compulsory.to_string()).unwrap_or_default(),
                l.map(|l| l.capacity.to_string()).unwrap_or_default(),
                l.map(|l| l.conflict.to_string()).unwrap_or_default(),
                r.simulated
                    .as_ref()
                    .map(|s| format!("{} ({})", s.scope.kind, s.start))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    let height = (recs.len() as u32 * 24 + 110).max(300);
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: ID.into(),
            title: format!("Where the {level_name} misses come from: the 3C split"),
            provenance: format!(
                "{}; compulsory = first touch, capacity = a fully associative LRU cache of the same size misses too, conflict = the rest",
                prov_sim(doc)
            ),
            panels: vec![Panel::Bars(BarPanel {
                title: format!("{level_name} misses per access, stacked"),
                categories,
                value_axis: Axis::linear("misses per access"),
                series,
                stacked: true,
                vlines: Vec::new(),
            })],
            panel_width: 1100,
            panel_height: height,
        },
        tables: vec![Table {
            caption: format!("{level_name} misses by cause (simulated counts)"),
            headers: [
                "point",
                "accesses",
                "misses",
                "compulsory",
                "capacity",
                "conflict",
                "scope",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: "Conflict misses (red) are the ones a different address — padding, a ±1 \
                   leading dimension — removes; capacity misses need a smaller working set or \
                   blocking."
            .into(),
        notes: Vec::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::parse_cache_override;

    #[test]
    fn cyclic_prediction_follows_the_set_model() {
        // 32 KiB 8-way, 64 sets, 64 B lines: 4096 B uses one set.
        let l1 = parse_cache_override("L1d=32K,8,64").unwrap();
        let l2 = parse_cache_override("L2=1M,8,64").unwrap();
        let levels = [l1, l2];
        // (stride, K, expected L1, expected L2)
        let cases: &[(i64, u64, f64, f64)] = &[
            (4096, 8, 0.0, 0.0),
            (4096, 9, 1.0, 0.0),
            (4104, 24, 0.0, 0.0),
            (4088, 24, 0.0, 0.0),
            (64, 512, 0.0, 0.0),
            (4096, 16, 1.0, 0.0),
        ];
        for &(s, k, e1, e2) in cases {
            let p = predicted_cyclic_misses(&levels, s, k);
            assert_eq!(p, vec![e1, e2], "stride {s} K {k}");
        }
        // 4096 lines at a stride of one line overflow a 512-line L1 in every set.
        assert_eq!(predicted_cyclic_misses(&levels, 64, 4096)[0], 1.0);
    }
}
