//! Figure 5: working-set latency of the pointer chase, with the cache sizes as vertical lines.
//! One figure of the report, built from records alone.

use super::{
    Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted, prov_timed,
};
use crate::report::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY, format_bytes,
};
use crate::report::data;
use crate::results::tlb::{DtlbLevel, manifest_dtlb};
use crate::results::{PointRecord, ResultsDocument};

/// Puts each line's label where the curve is not: at the bottom of the panel (from `low`, the
/// fastest load, upwards) where the nearest point lies in the upper half of the curve's log
/// range, else at the top; neighbours alternate heights so their labels do not overlap.
fn place_labels(lines: &mut [RefLine], points: &[XY], low: f64) {
    let high = points.iter().map(|p| p.y).fold(0.0, f64::max);
    if points.is_empty() || !(low > 0.0 && high > 0.0) {
        return;
    }
    let mid = (low.log10() + high.log10()) / 2.0;
    lines.sort_by(|a, b| a.at.total_cmp(&b.at));
    for (i, line) in lines.iter_mut().enumerate() {
        let nearest = points
            .iter()
            .min_by(|a, b| {
                let d = |p: &XY| (p.x.log2() - line.at.log2()).abs();
                d(a).total_cmp(&d(b))
            })
            .map_or(low, |p| p.y);
        let step = 1.0 + 0.45 * (i % 2) as f64;
        line.label_y = Some(if nearest.log10() > mid {
            low * step
        } else {
            high * 1.15 / step
        });
    }
}

/// Vertical marks at the DTLB's reach (entries × page) for every recorded level whose reach
/// lies within the curve's sizes `span`; notes for reaches off the curve and for a file that
/// records no DTLB.
fn dtlb_marks(doc: &ResultsDocument, span: (f64, f64)) -> (Vec<RefLine>, Vec<String>) {
    let levels: Vec<DtlbLevel> = match manifest_dtlb(&doc.info) {
        Ok(Some(levels)) if !levels.is_empty() => levels,
        Ok(Some(_)) => {
            return (
                Vec::new(),
                vec![
                    "CPUID did not report the data TLB's entries on the \
                 measuring machine: no DTLB reach is marked"
                        .into(),
                ],
            );
        }
        _ => {
            return (
                Vec::new(),
                vec![
                    "this results file predates recorded DTLB sizes: no \
                 DTLB reach is marked"
                        .into(),
                ],
            );
        }
    };
    let mut marks = Vec::new();
    let mut off = Vec::new();
    for l in &levels {
        let reach = l.reach() as f64;
        let name = format!(
            "DTLB L{} {} × {}",
            l.level,
            l.entries,
            format_bytes(l.page as f64)
        );
        if reach >= span.0 && reach <= span.1 {
            marks.push(RefLine {
                at: reach,
                label: format!("{name} = {}", format_bytes(reach)),
                label_y: None,
            });
        } else {
            off.push(format!("{name} = {}", format_bytes(reach)));
        }
    }
    let notes = if off.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "DTLB reaches outside the measured sizes: {}",
            off.join("; ")
        )]
    };
    (marks, notes)
}

/// Figure 5: working-set latency of the pointer chase, with the cache sizes as vertical lines.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig05-working-set",
    title: "Working-set latency",
    section: "latency",
    build: working_set,
};

fn working_set(doc: &ResultsDocument) -> Outcome {
    let mut recs: Vec<&PointRecord> = data::of_kernel(doc, "chase")
        .filter(|r| data::int(r, "bytes").is_some() && data::ns_per_element(r).is_some())
        .collect();
    if recs.is_empty() {
        return omitted(&FIGURE, "no timed `chase` points in this results file");
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
    let mut vlines: Vec<RefLine> = levels
        .iter()
        .map(|l| RefLine {
            at: l.size as f64,
            label: format!("{} {}", l.name, format_bytes(l.size as f64)),
            label_y: None,
        })
        .collect();
    let span = (
        points.first().map_or(1.0, |p| p.x),
        points.last().map_or(1.0, |p| p.x),
    );
    let low = points.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let (marks, notes) = dtlb_marks(doc, span);
    vlines.extend(marks);
    place_labels(&mut vlines, &points, low);
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
            id: FIGURE.id.into(),
            title: "Working-set latency (random pointer chase)".into(),
            provenance: format!(
                "{}; dashed lines: cache sizes from the recorded geometry and the DTLB's reach \
                 (entries × page) from CPUID; buffers on huge pages where granted",
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
                "L1 misses/load (sim, warm)",
                "L2 misses/load (sim, warm)",
                "L3 misses/load (sim, warm)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for: "Plateaus where the working set fits a level, steps just after each dashed \
                   size. A step that lands far from a dashed line means the recorded geometry \
                   (or the VM's claim) is off. The chase runs on 2 MiB pages where the kernel \
                   grants them, so the 4 KiB DTLB reach is where a 4 KiB-page chase would \
                   start paying page walks; past the 2 MiB reach this one does."
            .into(),
        notes,
    }))
}
