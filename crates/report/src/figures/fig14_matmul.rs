//! Figure 14: the loop orders of `matmul` — time per multiply-add (timed) and L1 misses per
//! inner iteration (simulated) at every recorded n, beside the textbook prediction per order.
//!
//! The textbook prediction is arithmetic on the record's own parameters and geometry, not a
//! model run: per inner iteration each operand costs 0 misses (the same element every
//! iteration), e = element bytes / line bytes (walked along a row: one miss per line) or 1
//! (walked down a column: a new line every iteration). It assumes nothing survives between
//! inner loops except what the inner loop reuses, which holds once a column's lines no longer
//! fit in L1.

use super::common::{distinct, estimate_bars};
use super::{Built, FigureDef, Outcome, Table, cell, est_cell, omitted, prov_sim, prov_timed};
use crate::chart::{Axis, BarPanel, BarSeries, Figure, Panel, colour_for};
use crate::claims::{Claim, Verdict, slower_or_faster};
use crate::data::{self, Estimate};
use stridelab_core::results::{PointRecord, ResultsDocument};

/// Figure 14: matrix multiplication loop orders.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig14-matmul",
    title: "Matrix multiplication loop orders",
    section: "matmul",
    build,
};

/// The orders in the order they are drawn: the three pairs that share an inner loop, then
/// the blocked ikj.
const ORDERS: [&str; 7] = ["ijk", "jik", "ikj", "kij", "jki", "kji", "blocked"];

/// Bytes per element of a record (`dtype`, f64 when absent).
fn element_bytes(record: &PointRecord) -> u64 {
    match data::text(record, "dtype") {
        Some("f32") => 4,
        Some("f16") => 2,
        Some("u8") => 1,
        _ => 8,
    }
}

/// Textbook misses per inner iteration of A, B and C for `order`, with `e` = element bytes ÷
/// line bytes; `None` for blocked (it depends on the tile and the cache).
pub fn textbook(order: &str, e: f64) -> Option<[f64; 3]> {
    match order {
        // k innermost: A along its row, B down its column, C one cell kept in a register.
        "ijk" | "jik" => Some([e, 1.0, 0.0]),
        // j innermost: A one element, B and C along their rows.
        "ikj" | "kij" => Some([0.0, e, e]),
        // i innermost: A and C down their columns, B one element.
        "jki" | "kji" => Some([1.0, 0.0, 1.0]),
        _ => None,
    }
}

/// Simulated L1 misses per multiply-add. The simulation may cover a prefix of the run (the
/// access cap), so iterations are scaled by the fraction of the run's accesses it saw.
fn misses_per_iteration(record: &PointRecord) -> Option<f64> {
    let level = data::sim_level(record, 0)?;
    let work = record.work?;
    let total = (work.bytes_read + work.bytes_written) / element_bytes(record);
    let iterations = work.elements as f64 * data::accesses(level) as f64 / total.max(1) as f64;
    (iterations > 0.0).then(|| level.misses as f64 / iterations)
}

/// `e` of a record: element bytes ÷ the simulated L1 line (64 B when nothing was simulated).
fn line_fraction(record: &PointRecord) -> f64 {
    let line = data::sim_level(record, 0).map_or(64, |l| l.line.max(1));
    element_bytes(record) as f64 / line as f64
}

/// The first record of each order at size `n` (the default tile comes first in the suites).
fn by_order<'d>(records: &[&'d PointRecord], n: u64) -> Vec<Option<&'d PointRecord>> {
    ORDERS
        .iter()
        .map(|order| {
            records
                .iter()
                .copied()
                .find(|r| data::int(r, "n") == Some(n) && data::text(r, "order") == Some(order))
        })
        .collect()
}

fn build(doc: &ResultsDocument) -> Outcome {
    let records: Vec<&PointRecord> = data::of_kernel(doc, "matmul").collect();
    if records.is_empty() {
        return omitted(&FIGURE, "no `matmul` points in this results file");
    }
    let sizes = distinct(records.iter().filter_map(|r| data::int(r, "n")));
    let categories: Vec<String> = ORDERS.iter().map(|o| o.to_string()).collect();
    let Series {
        times: time_series,
        misses: mut miss_series,
        rows,
    } = series(&records, &sizes);
    let e = line_fraction(records[0]);
    miss_series.push(BarSeries {
        name: "textbook (model)".into(),
        colour: colour_for("model", sizes.len()),
        values: ORDERS
            .iter()
            .map(|o| textbook(o, e).map(|m| m.iter().sum()))
            .collect(),
        ci: vec![None; ORDERS.len()],
    });
    let look_for = look_for(&records, sizes.last().copied());
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: FIGURE.title.into(),
            provenance: format!(
                "{}; {}; textbook: misses per inner iteration from each order's strides",
                prov_timed(doc),
                prov_sim(doc)
            ),
            panels: vec![
                bars("ns per multiply-add (timed)", &categories, time_series),
                bars(
                    "L1 misses per multiply-add (simulated) and textbook",
                    &categories,
                    miss_series,
                ),
            ],
            panel_width: 470,
            panel_height: 300,
        },
        tables: vec![Table {
            caption: format!(
                "C = A·B per loop order: time and L1 misses per multiply-add; textbook misses \
                 per inner iteration with e = element ÷ line = {}",
                cell(Some(e))
            ),
            headers: [
                "n",
                "order",
                "ns per multiply-add (timed, CI)",
                "L1 misses per multiply-add (simulated)",
                "textbook A",
                "textbook B",
                "textbook C",
                "textbook total",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }],
        look_for,
        notes: Vec::new(),
    }))
}

/// The bars of both panels (one series per n) and the table's rows.
struct Series {
    times: Vec<BarSeries>,
    misses: Vec<BarSeries>,
    rows: Vec<Vec<String>>,
}

fn series(records: &[&PointRecord], sizes: &[u64]) -> Series {
    let mut out = Series {
        times: Vec::new(),
        misses: Vec::new(),
        rows: Vec::new(),
    };
    for (index, &n) in sizes.iter().enumerate() {
        let points = by_order(records, n);
        let times: Vec<Option<Estimate>> = points
            .iter()
            .map(|r| r.and_then(data::ns_per_element))
            .collect();
        let misses: Vec<Option<f64>> = points
            .iter()
            .map(|r| r.and_then(misses_per_iteration))
            .collect();
        let colour = colour_for("", index);
        out.times
            .push(estimate_bars(format!("n = {n}"), colour, &times));
        out.misses.push(BarSeries {
            name: format!("n = {n} (simulated)"),
            colour,
            ci: vec![None; misses.len()],
            values: misses.clone(),
        });
        for ((order, record), (time, miss)) in
            ORDERS.iter().zip(&points).zip(times.iter().zip(&misses))
        {
            if let Some(record) = record {
                out.rows.push(table_row(n, order, record, *time, *miss));
            }
        }
    }
    out
}

fn bars(title: &str, categories: &[String], series: Vec<BarSeries>) -> Panel {
    Panel::Bars(BarPanel {
        title: title.into(),
        categories: categories.to_vec(),
        value_axis: Axis::linear(title.split(" (").next().unwrap_or(title)),
        series,
        stacked: false,
        vlines: Vec::new(),
    })
}

fn table_row(
    n: u64,
    order: &str,
    record: &PointRecord,
    time: Option<Estimate>,
    misses: Option<f64>,
) -> Vec<String> {
    let model = textbook(order, line_fraction(record));
    let part = |k: usize| cell(model.map(|m| m[k]));
    vec![
        n.to_string(),
        order.to_string(),
        est_cell(time),
        cell(misses),
        part(0),
        part(1),
        part(2),
        cell(model.map(|m| m.iter().sum())),
    ]
}

/// At the largest n: the spread of the six plain orders, and the simulated misses per
/// multiply-add held against the textbook's per order.
fn look_for(records: &[&PointRecord], largest: Option<u64>) -> Vec<Claim> {
    let at_largest: Vec<(&str, &PointRecord)> = largest
        .map(|n| by_order(records, n))
        .unwrap_or_default()
        .into_iter()
        .zip(ORDERS)
        .filter(|(_, order)| *order != "blocked")
        .filter_map(|(r, order)| Some((order, r?)))
        .collect();
    let times: Vec<(&str, f64)> = at_largest
        .iter()
        .filter_map(|(order, r)| Some((*order, data::ns_per_element(r)?.value)))
        .collect();
    let fastest = times.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1));
    let slowest = times.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1));
    let mut claims = vec![Claim::guide(
        "matmul.orders",
        "The same n³ multiply-adds in six orders: the innermost index decides the strides — j \
         innermost (ikj, kij) walks rows of B and C, k innermost (ijk, jik) a column of B, i \
         innermost (jki, kji) columns of A and C.",
    )];
    if let (Some(f), Some(s), Some(n)) = (fastest, slowest, largest) {
        claims.push(Claim::derived(
            "matmul.spread",
            format!(
                "At n = {n}, {} is {} than {} ({} vs {} ns per multiply-add, timed).",
                s.0,
                slower_or_faster(s.1, f.1),
                f.0,
                cell(Some(s.1)),
                cell(Some(f.1))
            ),
        ));
    }
    let compared: Vec<(&str, f64, f64)> = at_largest
        .iter()
        .filter_map(|(order, r)| {
            let book: f64 = textbook(order, line_fraction(r))?.iter().sum();
            Some((*order, misses_per_iteration(r)?, book))
        })
        .collect();
    let close = compared
        .iter()
        .filter(|(_, sim, book)| (sim - book).abs() <= TEXTBOOK_TOLERANCE * book.max(0.05))
        .count();
    // The textbook counts hold once a column's n lines no longer fit the first level.
    let column_fits = at_largest.first().and_then(|(_, r)| {
        let level = data::sim_level(r, 0)?;
        let column = largest? * level.line;
        Some((column <= level.size, column, level.size, level.name.clone()))
    });
    let verdict = if column_fits.as_ref().is_some_and(|c| c.0) {
        Verdict::Untested
    } else {
        Verdict::of_counts(compared.len(), close)
    };
    let precondition = match &column_fits {
        Some((true, column, size, name)) => format!(
            "; the precondition does not hold here: a column's {} lines ({}) fit the {} {name}",
            largest.unwrap_or(0),
            crate::chart::format_bytes(*column as f64),
            crate::chart::format_bytes(*size as f64)
        ),
        _ => String::new(),
    };
    claims.push(Claim::textbook(
        "matmul.textbook",
        "once a column's lines no longer fit in L1, misses per multiply-add are 2e, 1 + e and 2 \
         for j, k and i innermost (e = element ÷ line).",
        verdict,
        format!(
            "at n = {}: {} (simulated against textbook; within {:.0}% at {close} of {}){precondition}",
            largest.unwrap_or(0),
            compared
                .iter()
                .map(|(o, sim, book)| format!("{o} {} vs {}", cell(Some(*sim)), cell(Some(*book))))
                .collect::<Vec<_>>()
                .join(", "),
            TEXTBOOK_TOLERANCE * 100.0,
            compared.len()
        ),
    ));
    claims
}

/// The simulated misses per multiply-add "follow the textbook" within this fraction of it.
const TEXTBOOK_TOLERANCE: f64 = 0.25;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_misses_follow_the_inner_strides() {
        let e = 8.0 / 64.0;
        assert_eq!(textbook("ijk", e), Some([0.125, 1.0, 0.0]));
        assert_eq!(textbook("kij", e), Some([0.0, 0.125, 0.125]));
        assert_eq!(textbook("kji", e), Some([1.0, 0.0, 1.0]));
        assert_eq!(textbook("blocked", e), None);
        // f32 halves the row-walking operands' share, not the column walks'.
        assert_eq!(textbook("ikj", 4.0 / 64.0), Some([0.0, 0.0625, 0.0625]));
    }
}
