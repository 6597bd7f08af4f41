//! Figure 15's NCHW → NHWC conversions (`to-nhwc`): the copy engine (`fast`) beside the naive
//! element-by-element copies (`naive-write`, `naive-read`) at each shape and element type, as
//! one table and the derived sentence comparing them. Records from before the variants
//! existed read as `fast` (the catalogue's default, filled in on load).

use super::{Table, cell, est_cell};
use crate::chart::{BarSeries, colour_for};
use crate::claims::{Claim, slower_or_faster};
use crate::data;
use crate::figures::common::estimate_bars;
use stridelab_core::results::{PointRecord, ResultsDocument};

/// The variants in table order: the engine first, the naive copies beside it.
const VARIANTS: [&str; 3] = ["fast", "naive-write", "naive-read"];

/// The variant of a conversion record.
fn variant(r: &PointRecord) -> &str {
    data::text(r, "variant").unwrap_or("fast")
}

/// What a conversion's variants are compared at: shape, element type and threads.
type Shape = (Vec<Option<u64>>, String, usize);

fn shape(r: &PointRecord) -> Shape {
    let dims = ["n", "c", "h", "w"].map(|d| data::int(r, d)).to_vec();
    let dtype = data::text(r, "dtype").unwrap_or("f64").to_string();
    (dims, dtype, r.threads)
}

/// `2×64×56×56 f64` (and `, 2 threads` when more than one).
fn shape_label((dims, dtype, threads): &Shape) -> String {
    let dims: Vec<String> = dims
        .iter()
        .map(|d| d.map_or("?".into(), |d| d.to_string()))
        .collect();
    let threads = if *threads > 1 {
        format!(", {threads} threads")
    } else {
        String::new()
    };
    format!("{} {dtype}{threads}", dims.join("×"))
}

/// The conversions grouped by shape (in record order), each group's records in
/// [`VARIANTS`] order (any other variant last).
fn groups(doc: &ResultsDocument) -> Vec<(Shape, Vec<&PointRecord>)> {
    let mut groups: Vec<(Shape, Vec<&PointRecord>)> = Vec::new();
    for r in data::of_kernel(doc, "to-nhwc") {
        let key = shape(r);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    for (_, members) in &mut groups {
        members.sort_by_key(|r| {
            VARIANTS
                .iter()
                .position(|v| *v == variant(r))
                .unwrap_or(VARIANTS.len())
        });
    }
    groups
}

/// The engine's time per element in a group, if it was timed there.
fn fast_ns(members: &[&PointRecord]) -> Option<f64> {
    members
        .iter()
        .find(|r| variant(r) == "fast")
        .and_then(|r| data::ns_per_element(r))
        .map(|e| e.value)
}

/// The bars of the conversions' panel: one category per shape, one series per variant
/// measured, ns per element (timed, CI); `None` without any conversion.
pub(super) fn bars(doc: &ResultsDocument) -> Option<(Vec<String>, Vec<BarSeries>)> {
    let groups = groups(doc);
    if groups.is_empty() {
        return None;
    }
    let categories = groups.iter().map(|(key, _)| shape_label(key)).collect();
    let mut names: Vec<&str> = VARIANTS.to_vec();
    for (_, members) in &groups {
        for r in members {
            if !names.contains(&variant(r)) {
                names.push(variant(r));
            }
        }
    }
    let series = names
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let times: Vec<_> = groups
                .iter()
                .map(|(_, members)| {
                    members
                        .iter()
                        .find(|r| variant(r) == *name)
                        .and_then(|r| data::ns_per_element(r))
                })
                .collect();
            let measured = groups
                .iter()
                .any(|(_, members)| members.iter().any(|r| variant(r) == *name));
            measured.then(|| estimate_bars(name.to_string(), colour_for(name, i), &times))
        })
        .collect();
    Some((categories, series))
}

/// Every conversion, the naive variants beside the engine at their shape; `None` without any.
pub(super) fn table(
    doc: &ResultsDocument,
    misses: fn(&PointRecord) -> Option<f64>,
) -> Option<Table> {
    let groups = groups(doc);
    let rows: Vec<Vec<String>> = groups
        .iter()
        .flat_map(|(key, members)| {
            let fast = fast_ns(members);
            members.iter().map(move |r| {
                let ns = data::ns_per_element(r).map(|e| e.value);
                vec![
                    shape_label(key),
                    variant(r).to_string(),
                    est_cell(data::gb_per_s(r)),
                    cell(data::reference_ratio(r)),
                    cell(ns.zip(fast).map(|(ns, fast)| ns / fast)),
                    cell(misses(r)),
                ]
            })
        })
        .collect();
    (!rows.is_empty()).then(|| Table {
        caption: "Converting nchw to nhwc at every shape measured (n×c×h×w, element type): the \
                  copy engine (fast, f64 only) and the naive element-by-element copies \
                  (naive-write: the destination in order, the source read through the permuted \
                  strides; naive-read: the reverse); time ÷ fast is the ns per element over the \
                  engine's at the same shape and type (timed), — where the engine was not run"
            .into(),
        headers: [
            "shape",
            "variant",
            "GB/s (timed, CI)",
            "fraction of same-run copy",
            "time ÷ fast",
            "L1 misses per element (simulated)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    })
}

/// At each shape where the engine and a naive variant were both timed: the engine's time
/// against each naive one's, in words; `None` where no shape has both.
pub(super) fn claim(doc: &ResultsDocument) -> Option<Claim> {
    let mut parts = Vec::new();
    for (key, members) in groups(doc) {
        let Some(fast) = fast_ns(&members) else {
            continue;
        };
        for r in members.iter().filter(|r| variant(r) != "fast") {
            if let Some(naive) = data::ns_per_element(r) {
                parts.push(format!(
                    "to-nhwc {}: the copy engine {} than {} ({} vs {} ns per element, timed)",
                    shape_label(&key),
                    slower_or_faster(fast, naive.value),
                    variant(r),
                    cell(Some(fast)),
                    cell(Some(naive.value))
                ));
            }
        }
    }
    (!parts.is_empty())
        .then(|| Claim::derived("tensor.conversion", format!("{}.", parts.join("; "))))
}
