//! The summary at the top of the page: candidate findings computed from the records (each a
//! same-run ratio), ranked by how large the effect is on this machine; the page shows the top
//! three. Every number in a sentence comes from the data — nothing here is a fixed claim.

use stridelab_core::results::{PointRecord, ResultsDocument};

use super::chart::format_number;
use super::claims::{Claim, slower_or_faster};
use super::{data, grid, padding};

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
    /// The kernels whose points it compares.
    pub kernels: &'static [&'static str],
}

/// Every finding the data supports, largest effect first; the kernels no finding above
/// speaks of get the largest same-run ratio along their grid ([`grid::comparisons`]) after
/// them.
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
    .chain(padding(doc))
    .filter(|f| f.magnitude.is_finite() && f.magnitude > 0.0)
    .collect();
    out.sort_by(|a, b| {
        b.about_strides
            .cmp(&a.about_strides)
            .then(b.magnitude.total_cmp(&a.magnitude))
    });
    let covered: Vec<&str> = out.iter().flat_map(|f| f.kernels.iter().copied()).collect();
    out.extend(
        grid::comparisons(doc, &covered)
            .into_iter()
            .map(|c| Finding {
                claim: c.claim,
                magnitude: c.spread,
                section: c.section,
                about_strides: true,
                kernels: &[],
            }),
    );
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
        kernels: &["conflict"],
    })
}

/// An unpadded matrix walked by columns, with the row walk of the same matrix beside it.
struct ColumnAndRow<'a> {
    rows: u64,
    cols: u64,
    dtype: &'a str,
    col_ns: f64,
    row_ns: f64,
}

impl ColumnAndRow<'_> {
    fn ratio(&self) -> f64 {
        self.col_ns / self.row_ns
    }
}

/// Every unpadded matrix this run summed both by columns and by rows.
fn columns_and_rows(doc: &ResultsDocument) -> Vec<ColumnAndRow<'_>> {
    let unpadded = |r: &PointRecord, cols: u64| data::int(r, "ld").is_none_or(|ld| ld == cols);
    data::of_kernel(doc, "col-sum")
        .filter_map(|c| {
            let rows = data::int(c, "rows")?;
            let cols = data::int(c, "cols")?;
            let dtype = data::element(c).0;
            if !unpadded(c, cols) {
                return None;
            }
            let r = data::of_kernel(doc, "row-sum").find(|r| {
                data::int(r, "rows") == Some(rows)
                    && data::int(r, "cols") == Some(cols)
                    && data::element(r).0 == dtype
                    && r.threads == c.threads
                    && unpadded(r, cols)
            })?;
            Some(ColumnAndRow {
                rows,
                cols,
                dtype,
                col_ns: ns(c)?,
                row_ns: ns(r)?,
            })
        })
        .collect()
}

fn row_vs_column(doc: &ResultsDocument) -> Option<Finding> {
    let pairs = columns_and_rows(doc);
    let worst = pairs
        .iter()
        .filter(|p| p.cols.is_power_of_two())
        .max_by(|a, b| a.ratio().total_cmp(&b.ratio()))?;
    let (rows, cols, dtype) = (worst.rows, worst.cols, worst.dtype);
    let plus = pairs
        .iter()
        .find(|p| p.rows == rows && p.cols == cols + 1 && p.dtype == dtype)
        .map(|p| {
            format!(
                "; at {}×{} it is {}",
                p.rows,
                p.cols,
                slower_or_faster(p.ratio(), 1.0)
            )
        })
        .unwrap_or_default();
    Some(Finding {
        claim: Claim::derived(
            "finding.row-vs-column",
            format!(
                "Summing a {rows}×{cols} {dtype} matrix by columns (col-sum, {} ns per element) \
                 is {} than by rows (row-sum of the same matrix, {} ns, timed){plus}.",
                format_number(worst.col_ns),
                slower_or_faster(worst.ratio(), 1.0),
                format_number(worst.row_ns)
            ),
        ),
        magnitude: worst.ratio(),
        section: "traverse",
        about_strides: true,
        kernels: &["row-sum", "col-sum"],
    })
}

/// One finding per matrix timed at several leading dimensions: the fastest `ld` measured.
fn padding(doc: &ResultsDocument) -> Vec<Finding> {
    padding::groups(doc)
        .iter()
        .map(|g| {
            let slowest = g.points.iter().map(|p| p.run.value).fold(0.0, f64::max);
            Finding {
                claim: Claim::derived("finding.padding", padding::measured_sentence(g)),
                magnitude: slowest / g.best().run.value,
                section: "traverse",
                about_strides: true,
                kernels: &["row-sum", "col-sum"],
            }
        })
        .collect()
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
        kernels: &["transpose"],
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
        kernels: &["chase"],
    })
}

fn stride(doc: &ResultsDocument) -> Option<Finding> {
    let line = data::data_levels(doc).first().map(|l| u64::from(l.line))?;
    // (step in bytes, buffer length, ns) of the f64 walks: the contiguous one must read the
    // same buffer as the one-per-line one.
    let pts: Vec<(u64, Option<u64>, f64)> = data::of_kernel(doc, "stride-sum")
        .filter(|r| data::element(r).0 == "f64")
        .filter_map(|r| Some((data::int(r, "stride")? * 8, data::int(r, "len"), ns(r)?)))
        .collect();
    let at_line = pts.iter().find(|p| p.0 == line)?;
    let unit = pts.iter().find(|p| p.0 == 8 && p.1 == at_line.1)?;
    let ratio = at_line.2 / unit.2;
    Some(Finding {
        claim: Claim::derived(
            "finding.stride",
            format!(
                "Reading one f64 per {line} B line (stride-sum) costs {} ns per element, {} \
                 than stride-sum's contiguous walk of the same buffer, stride 1 ({} ns, timed).",
                format_number(at_line.2),
                slower_or_faster(at_line.2, unit.2),
                format_number(unit.2)
            ),
        ),
        magnitude: ratio,
        section: "stride",
        about_strides: true,
        kernels: &["stride-sum"],
    })
}

/// A view-sum point: its expression, whether it is C-contiguous, its element count and time.
struct ViewWalk<'a> {
    expr: &'a str,
    contiguous: Option<bool>,
    elements: Option<u64>,
    ns: f64,
    record: &'a PointRecord,
}

fn view(doc: &ResultsDocument) -> Option<Finding> {
    let walks: Vec<ViewWalk> = data::of_kernel(doc, "view-sum")
        .filter_map(|r| {
            Some(ViewWalk {
                expr: data::text(r, "expr")?,
                contiguous: data::view_facts(r).map(|v| v.c_contiguous),
                elements: r.work.map(|w| w.elements),
                ns: ns(r)?,
                record: r,
            })
        })
        .collect();
    let (walk, control) = walks
        .iter()
        .filter(|w| w.contiguous == Some(false))
        .filter_map(|w| {
            let control = walks
                .iter()
                .find(|c| c.contiguous == Some(true) && c.elements == w.elements)?;
            Some((w, control))
        })
        .max_by(|a, b| (a.0.ns / a.1.ns).total_cmp(&(b.0.ns / b.1.ns)))?;
    Some(Finding {
        claim: Claim::derived(
            "finding.view",
            format!(
                "Summing the view `{}` costs {} ns per element, {} than view-sum's contiguous \
                 walk of the same element count, `{}` ({} ns, timed).{}",
                walk.expr,
                format_number(walk.ns),
                slower_or_faster(walk.ns, control.ns),
                control.expr,
                format_number(control.ns),
                same_walk_as_col_sum(doc, walk.record)
            ),
        ),
        magnitude: walk.ns / control.ns,
        section: "view",
        about_strides: true,
        kernels: &["view-sum"],
    })
}

/// When the view walks its storage as a timed col-sum walks a matrix (shape `[cols, rows]`,
/// strides `[1, ld]`), a sentence saying so, with that walk's time and the row-sum baseline
/// its own finding uses: the two ratios differ because their baselines do.
fn same_walk_as_col_sum(doc: &ResultsDocument, view: &PointRecord) -> String {
    let Some(facts) = data::view_facts(view) else {
        return String::new();
    };
    let (&[cols, rows], &[1, ld]) = (facts.shape.as_slice(), facts.strides.as_slice()) else {
        return String::new();
    };
    let dtype = data::element(view).0;
    let Some(pair) = columns_and_rows(doc).into_iter().find(|p| {
        p.rows == rows && p.cols == cols && i64::try_from(p.cols) == Ok(ld) && p.dtype == dtype
    }) else {
        return String::new();
    };
    format!(
        " It walks its storage as col-sum {rows}×{cols} does ({} ns per element there); the \
         row-vs-column finding holds that walk against row-sum of the same matrix ({} ns): {}. \
         The two ratios differ in their baselines.",
        format_number(pair.col_ns),
        format_number(pair.row_ns),
        slower_or_faster(pair.col_ns, pair.row_ns)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::padding::tests::padded_doc;
    use stridelab_core::vocab::ParamValue;

    fn small() -> ResultsDocument {
        serde_json::from_str(include_str!("../../../tests/fixtures/results_small.json")).unwrap()
    }

    fn texts(doc: &ResultsDocument, id: &str) -> Vec<String> {
        findings(doc)
            .iter()
            .filter(|f| f.claim.id == id)
            .map(|f| f.claim.text())
            .collect()
    }

    /// The small run with its 512×512 row and column walks copied to `n`×`n`.
    fn with_square(mut doc: ResultsDocument, n: u64) -> ResultsDocument {
        let copies: Vec<PointRecord> = doc
            .records
            .iter()
            .filter(|r| {
                matches!(r.kernel.as_str(), "row-sum" | "col-sum")
                    && data::int(r, "cols") == Some(512)
            })
            .cloned()
            .collect();
        for mut r in copies {
            for key in ["rows", "cols", "ld"] {
                r.params.insert(key.into(), ParamValue::Int(n));
            }
            doc.records.push(r);
        }
        doc
    }

    #[test]
    fn each_ratio_names_its_baseline() {
        // (document, finding, words it must hold)
        let cases: Vec<(ResultsDocument, &str, &str)> = vec![
            (
                small(),
                "finding.row-vs-column",
                "Summing a 512×512 f64 matrix by columns (col-sum, 7.29 ns per element) is \
                 26.6× slower than by rows (row-sum of the same matrix, 0.274 ns, timed)",
            ),
            (
                small(),
                "finding.stride",
                "than stride-sum's contiguous walk of the same buffer, stride 1 (0.281 ns, timed)",
            ),
            (
                small(),
                "finding.view",
                "than view-sum's contiguous walk of the same element count, `arange(65536)` \
                 (0.510 ns, timed).",
            ),
            // The transposed view walks its storage as col-sum does: said, with both baselines.
            (
                with_square(small(), 256),
                "finding.view",
                "It walks its storage as col-sum 256×256 does (7.29 ns per element there); the \
                 row-vs-column finding holds that walk against row-sum of the same matrix \
                 (0.274 ns): 26.6× slower. The two ratios differ in their baselines.",
            ),
        ];
        for (doc, id, words) in cases {
            let found = texts(&doc, id);
            assert_eq!(found.len(), 1, "{id}: {found:?}");
            assert!(found[0].contains(words), "{id}: {}", found[0]);
        }
        // Without a col-sum of the view's shape, no such sentence.
        assert!(!texts(&small(), "finding.view")[0].contains("walks its storage"));
    }

    #[test]
    fn a_leading_dimension_sweep_alone_gives_a_finding() {
        // col-sum at four ld and nothing else of its family: no row-sum to compare with.
        let mut doc = padded_doc(&[
            (512, 7.7, 262_144),
            (513, 4.7, 33_216),
            (520, 1.8, 33_216),
            (528, 3.9, 33_216),
        ]);
        doc.records.retain(|r| r.kernel == "col-sum");
        let found = findings(&doc);
        assert_eq!(
            found.len(),
            1,
            "{:?}",
            found.iter().map(|f| f.claim.text()).collect::<Vec<_>>()
        );
        assert_eq!(found[0].claim.id, "finding.padding");
        assert!(
            found[0]
                .claim
                .text()
                .contains("ld=520 was fastest: 1.80 ms a run against 7.70 ms at ld=512"),
            "{}",
            found[0].claim.text()
        );
    }
}
