//! Figure 5: working-set latency of the pointer chase, with the cache sizes as vertical lines.
//! One figure of the report, built from records alone.

use super::{
    Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, omitted, prov_timed,
};
use crate::chart::format_number;
use crate::chart::{
    Axis, Figure, LinePanel, PALETTE, Panel, RefLine, Series, SeriesKind, XY, format_bytes,
};
use crate::claims::{Claim, Verdict};
use crate::data;
use stridelab_core::results::tlb::{DtlbLevel, manifest_dtlb};
use stridelab_core::results::{CacheLevel, PointRecord, ResultsDocument};

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

/// Consecutive working sets whose latency differs by at least this factor are a step.
const STEP: f64 = 1.5;

/// Where the latency steps up between consecutive working sets, and whether each recorded
/// cache size (in the measured span) has a step near it — the textbook's plateaus and steps.
fn latency_claims(points: &[XY], levels: &[CacheLevel], dtlb_marked: bool) -> Vec<Claim> {
    let steps: Vec<(f64, f64, f64, f64)> = points
        .windows(2)
        .filter(|w| w[1].y >= STEP * w[0].y)
        .map(|w| (w[0].x, w[1].x, w[0].y, w[1].y))
        .collect();
    let step_text = |&(x0, x1, y0, y1): &(f64, f64, f64, f64)| {
        format!(
            "{}→{} ({} → {} ns)",
            format_bytes(x0),
            format_bytes(x1),
            format_number(y0),
            format_number(y1)
        )
    };
    let mut claims = vec![Claim::derived(
        "latency.steps",
        if steps.is_empty() {
            format!(
                "No two neighbouring working sets differ by {STEP}× or more in latency (timed)."
            )
        } else {
            format!(
                "The latency steps up (≥ {STEP}× between neighbouring working sets) at {} \
                 (timed).",
                steps.iter().map(step_text).collect::<Vec<_>>().join(", ")
            )
        },
    )];
    let (low, high) = match (points.first(), points.last()) {
        (Some(a), Some(b)) => (a.x, b.x),
        _ => return claims,
    };
    // A step "near" a size: it starts within a factor of 2 below the size and ends within a
    // factor of 4 above it (the sizes of a sweep are a factor of 2 apart).
    let near = |size: f64| {
        steps
            .iter()
            .find(|s| s.0 >= size / 2.0 && s.0 <= size && s.1 <= size * 4.0)
    };
    let (inside, outside): (Vec<&CacheLevel>, Vec<&CacheLevel>) = levels
        .iter()
        .partition(|l| (l.size as f64) >= low && (l.size as f64) * 2.0 <= high);
    let verdicts: Vec<(String, bool)> = inside
        .iter()
        .map(|l| match near(l.size as f64) {
            Some(s) => (
                format!("{}: step at {}", data::level_label(l), step_text(s)),
                true,
            ),
            None => (format!("{}: no step near it", data::level_label(l)), false),
        })
        .collect();
    let agreeing = verdicts.iter().filter(|v| v.1).count();
    let mut verdict = Verdict::of_counts(verdicts.len(), agreeing);
    let mut observed = verdicts
        .into_iter()
        .map(|v| v.0)
        .collect::<Vec<_>>()
        .join("; ");
    let unexplained: Vec<String> = steps
        .iter()
        .filter(|s| {
            !levels
                .iter()
                .any(|l| near(l.size as f64).is_some_and(|n| std::ptr::eq(n, *s)))
        })
        .map(step_text)
        .collect();
    if !unexplained.is_empty() {
        // Steps where no recorded level ends: the recorded geometry misses a level.
        if verdict == Verdict::Agrees {
            verdict = Verdict::Partly;
        }
        observed.push_str(&format!(
            "{}steps near no recorded size: {}",
            if observed.is_empty() { "" } else { "; " },
            unexplained.join(", ")
        ));
    }
    if !outside.is_empty() {
        observed.push_str(&format!(
            "{}{} outside the measured working sets (up to {})",
            if observed.is_empty() { "" } else { "; " },
            outside
                .iter()
                .map(|l| data::level_label(l))
                .collect::<Vec<_>>()
                .join(", "),
            format_bytes(high)
        ));
    }
    claims.push(Claim::textbook(
        "latency.levels",
        "the time per load holds a plateau while the working set fits a level and steps up \
         just after each cache size (dashed).",
        verdict,
        observed,
    ));
    if dtlb_marked {
        claims.push(Claim::guide(
            "latency.dtlb",
            "A DTLB mark is its entries × page size from CPUID: past it, a chase on pages of \
             that size pays page walks (the table's last column gives the process's memory on \
             huge pages).",
        ));
    }
    claims
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
    if points.len() < 2 {
        // One working set is no curve, and the cache sizes beside it say nothing.
        let p = points.first();
        return omitted(
            &FIGURE,
            format!(
                "it draws the latency against the working set, and this file times one \
                 working set only ({}: {} ns per load)",
                p.map_or_else(|| "—".into(), |p| format_bytes(p.x)),
                p.map_or_else(|| "—".into(), |p| format_number(p.y))
            ),
        );
    }
    let mut vlines: Vec<RefLine> = levels
        .iter()
        .map(|l| RefLine {
            at: l.size as f64,
            label: data::level_label(l),
            label_y: None,
        })
        .collect();
    let span = (
        points.first().map_or(1.0, |p| p.x),
        points.last().map_or(1.0, |p| p.x),
    );
    let low = points.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let (marks, mut notes) = dtlb_marks(doc, span);
    let vlines_dtlb = marks.clone();
    vlines.extend(marks);
    notes.extend(data::level_notes(&levels));
    place_labels(&mut vlines, &points, low);
    let look_for = latency_claims(&points, &levels, !vlines_dtlb.is_empty());
    let rows = recs
        .iter()
        .map(|r| {
            vec![
                format_bytes(data::int(r, "bytes").unwrap_or(0) as f64),
                est_cell(data::ns_per_element(r)),
                cell(misses_per_access(r, 0)),
                cell(misses_per_access(r, 1)),
                cell(misses_per_access(r, 2)),
                r.huge_pages
                    .as_ref()
                    .and_then(|h| h.anon_huge_bytes)
                    .map(|b| format_bytes(b as f64))
                    .unwrap_or_else(|| "—".into()),
            ]
        })
        .collect();
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Working-set latency (random pointer chase)".into(),
            provenance: format!(
                "{}; dashed lines: cache sizes from the recorded geometry and the DTLB's reach \
                 (entries × page) from CPUID",
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
                "process on huge pages (AnonHugePages)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for,
        notes,
    }))
}
