//! The summary at the top of the page: candidate findings computed from the records (each a
//! same-run ratio), ranked by how large the effect is on this machine; the page shows the top
//! three. Every number in a sentence comes from the data — nothing here is a fixed claim.

use crate::results::{PointRecord, ResultsDocument};

use super::chart::format_number;
use super::claims::{Claim, slower_or_faster};
use super::data;

/// One computed finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The sentence shown in the summary (derived from the records).
    pub claim: Claim,
    /// Size of the effect (a slowdown factor ≥ 1), used to rank findings.
    pub magnitude: f64,
    /// Anchor of the section with the evidence.
    pub section: &'static str,
    /// Whether the finding is about an access pattern (stride, order, view, layout) rather
    /// than general context such as DRAM latency; those rank first.
    pub about_strides: bool,
}

/// Every finding the data supports, largest effect first.
pub fn findings(doc: &ResultsDocument) -> Vec<Finding> {
    let mut out: Vec<Finding> = [
        conflict(doc),
        row_vs_column(doc),
        transpose(doc),
        latency(doc),
        stride(doc),
        view(doc),
    ]
    .into_iter()
    .flatten()
    .filter(|f| f.magnitude.is_finite() && f.magnitude > 0.0)
    .collect();
    out.sort_by(|a, b| {
        b.about_strides
            .cmp(&a.about_strides)
            .then(b.magnitude.total_cmp(&a.magnitude))
    });
    out
}

fn ns(r: &PointRecord) -> Option<f64> {
    data::ns_per_element(r).map(|e| e.value)
}

/// "a stride of 4096 B uses 1 of 64 L1 sets: 3.2× slower than 4104 B".
fn conflict(doc: &ResultsDocument) -> Option<Finding> {
    let l1 = data::data_levels(doc).into_iter().next()?;
    // (stride, K, mode, ns, L1 sets used as recorded by the set model)
    let probes: Vec<(i64, u64, &str, f64, Option<u64>)> = data::of_kernel(doc, "conflict")
        .filter_map(|r| {
            Some((
                data::int(r, "stride")? as i64 * 8,
                data::int(r, "count")?,
                data::text(r, "mode").unwrap_or(""),
                ns(r)?,
                data::model_level(r, 0).map(|m| m.sets_used),
            ))
        })
        .collect();
    let span = l1.set_span() as i64;
    let mut best: Option<(f64, usize, usize)> = None;
    for (i, &(s, k, mode, t, _)) in probes.iter().enumerate().filter(|p| p.1.0 % span == 0) {
        // The control: the nearest stride of the same K and mode that is not a multiple.
        let (j, control) = probes
            .iter()
            .enumerate()
            .filter(|p| p.1.1 == k && p.1.2 == mode && p.1.0 % span != 0)
            .min_by_key(|p| (p.1.0 - s).abs())?;
        let ratio = t / control.3;
        if best.is_none_or(|b| ratio > b.0) {
            best = Some((ratio, i, j));
        }
    }
    let (ratio, i, j) = best?;
    let (s, k, mode, t, sets) = probes[i];
    let (c, _, _, tc, csets) = probes[j];
    // The set counts come from the model recorded with the points; a file without them
    // (schema 1) gets the timed comparison alone.
    let (uses, control_uses) = match (sets, csets) {
        (Some(sets), Some(csets)) => (
            format!(" uses {sets} of the {} {} sets (model);", l1.sets, l1.name),
            format!(", which uses {csets}"),
        ),
        _ => (";".to_string(), String::new()),
    };
    // A probe in `lat` mode is a pointer chase: one load waits for the last, so it has one
    // load in flight whatever K is.
    let loads = match mode {
        "lat" => "dependent loads (a pointer chase)",
        "thr" => "independent loads",
        _ => "loads",
    };
    Some(Finding {
        claim: Claim::derived(
            "finding.conflict",
            format!(
                "A cycle of K = {k} {loads} at a stride of {s} B{uses} each load takes {} ns, \
                 {} than at {c} B{control_uses} ({} ns, timed).",
                format_number(t),
                slower_or_faster(t, tc),
                format_number(tc)
            ),
        ),
        magnitude: ratio,
        section: "conflict",
        about_strides: true,
    })
}

fn row_vs_column(doc: &ResultsDocument) -> Option<Finding> {
    // (rows, cols, col/row time) for every unpadded matrix summed both ways.
    let pairs: Vec<(u64, u64, f64)> = data::of_kernel(doc, "col-sum")
        .filter_map(|c| {
            let rows = data::int(c, "rows")?;
            let cols = data::int(c, "cols")?;
            if data::int(c, "ld").is_some_and(|ld| ld != cols) {
                return None;
            }
            let r = data::of_kernel(doc, "row-sum").find(|r| {
                data::int(r, "rows") == Some(rows)
                    && data::int(r, "cols") == Some(cols)
                    && data::int(r, "ld").is_none_or(|ld| ld == cols)
            })?;
            Some((rows, cols, ns(c)? / ns(r)?))
        })
        .collect();
    let &(rows, cols, r) = pairs
        .iter()
        .filter(|p| p.1.is_power_of_two())
        .max_by(|a, b| a.2.total_cmp(&b.2))?;
    let plus = pairs
        .iter()
        .find(|p| p.0 == rows && p.1 == cols + 1)
        .map(|p| format!("; at {}×{} it is {}", p.0, p.1, slower_or_faster(p.2, 1.0)))
        .unwrap_or_default();
    Some(Finding {
        claim: Claim::derived(
            "finding.row-vs-column",
            format!(
                "Summing a {rows}×{cols} f64 matrix by columns is {} than by rows \
                 (timed){plus}.",
                slower_or_faster(r, 1.0)
            ),
        ),
        magnitude: r,
        section: "traverse",
        about_strides: true,
    })
}

fn transpose(doc: &ResultsDocument) -> Option<Finding> {
    let ratios: Vec<(String, u64, f64)> = data::of_kernel(doc, "transpose")
        .filter_map(|r| {
            Some((
                data::text(r, "variant")?.to_string(),
                data::int(r, "rows")?,
                data::reference_ratio(r)?,
            ))
        })
        .collect();
    let best = ratios.iter().max_by(|a, b| a.2.total_cmp(&b.2))?;
    let worst = ratios
        .iter()
        .filter(|x| x.1 == best.1)
        .min_by(|a, b| a.2.total_cmp(&b.2))?;
    if worst.0 == best.0 {
        return None;
    }
    Some(Finding {
        claim: Claim::derived(
            "finding.transpose",
            format!(
                "At n = {}, the {} transpose reaches {} of a same-run copy's bandwidth; {} \
                 reaches {} ({}× apart, timed).",
                best.1,
                best.0,
                format_number(best.2),
                worst.0,
                format_number(worst.2),
                format_number(best.2 / worst.2)
            ),
        ),
        magnitude: best.2 / worst.2,
        section: "transpose",
        about_strides: true,
    })
}

fn latency(doc: &ResultsDocument) -> Option<Finding> {
    let pts: Vec<(u64, f64)> = data::of_kernel(doc, "chase")
        .filter_map(|r| Some((data::int(r, "bytes")?, ns(r)?)))
        .collect();
    let small = pts.iter().min_by_key(|p| p.0)?;
    let large = pts.iter().max_by_key(|p| p.0)?;
    if small.0 == large.0 {
        return None;
    }
    let ratio = large.1 / small.1;
    Some(Finding {
        claim: Claim::derived(
            "finding.latency",
            format!(
                "A dependent load costs {} ns when the working set is {} and {} ns at {}: {} \
                 (random pointer chase, timed).",
                format_number(small.1),
                super::chart::format_bytes(small.0 as f64),
                format_number(large.1),
                super::chart::format_bytes(large.0 as f64),
                slower_or_faster(large.1, small.1)
            ),
        ),
        magnitude: ratio,
        section: "latency",
        about_strides: false,
    })
}

fn stride(doc: &ResultsDocument) -> Option<Finding> {
    let line = data::data_levels(doc).first().map(|l| u64::from(l.line))?;
    let pts: Vec<(u64, f64)> = data::of_kernel(doc, "stride-sum")
        .filter_map(|r| Some((data::int(r, "stride")? * 8, ns(r)?)))
        .collect();
    let unit = pts.iter().find(|p| p.0 == 8)?;
    let at_line = pts.iter().find(|p| p.0 == line)?;
    let ratio = at_line.1 / unit.1;
    Some(Finding {
        claim: Claim::derived(
            "finding.stride",
            format!(
                "Reading one f64 per {line} B line costs {} ns per element, {} than a \
                 contiguous walk ({} ns, timed).",
                format_number(at_line.1),
                slower_or_faster(at_line.1, unit.1),
                format_number(unit.1)
            ),
        ),
        magnitude: ratio,
        section: "stride",
        about_strides: true,
    })
}

fn view(doc: &ResultsDocument) -> Option<Finding> {
    let walks: Vec<(String, Option<bool>, Option<u64>, f64)> = data::of_kernel(doc, "view-sum")
        .filter_map(|r| {
            let expr = data::text(r, "expr")?;
            let contiguous = data::view_facts(r).map(|v| v.c_contiguous);
            Some((
                expr.to_string(),
                contiguous,
                r.work.map(|w| w.elements),
                ns(r)?,
            ))
        })
        .collect();
    let (expr, ratio, own, base) = walks
        .iter()
        .filter(|w| w.1 == Some(false))
        .filter_map(|w| {
            let control = walks.iter().find(|c| c.1 == Some(true) && c.2 == w.2)?;
            Some((w.0.clone(), w.3 / control.3, w.3, control.3))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(Finding {
        claim: Claim::derived(
            "finding.view",
            format!(
                "Summing the view `{expr}` costs {} ns per element, {} than a contiguous walk \
                 of the same element count ({} ns, timed).",
                format_number(own),
                slower_or_faster(own, base),
                format_number(base)
            ),
        ),
        magnitude: ratio,
        section: "view",
        about_strides: true,
    })
}
