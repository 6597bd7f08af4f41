//! Figure 20: your own loop nests (the `loop` kernel) side by side — time per access (timed)
//! and misses per access at each simulated level, each nest labelled by its `name`, with
//! sentences derived from those numbers: the fastest and slowest nest, whether the slower of
//! two nests misses more, and which nests miss mostly by conflict.
//! One figure of the report, built from records alone.

use super::common::{estimate_bars, records_or_omit};
use super::{Built, FigureDef, Outcome, Table, cell, est_cell, misses_per_access, prov_timed};
use crate::chart::{Axis, BarPanel, BarSeries, Figure, Panel, colour_for};
use crate::claims::{Claim, SAME_SPEED, slower_or_faster};
use crate::data;
use stridelab_core::results::{PointRecord, ResultsDocument};
use stridelab_core::units::format_count;

/// Figure 20: the run's loop nests.
pub const FIGURE: FigureDef = FigureDef {
    id: "fig20-loops",
    title: "Your loop nests",
    section: "loops",
    build: loops,
};

/// Longest nest name a bar is labelled with (longer ones are cut, the table has them whole).
const LABEL_CHARS: usize = 40;

/// A conflict share of a level's misses from which a nest is named as missing by conflict.
const MOSTLY: f64 = 0.5;

/// One nest: its record and its label.
struct Nest<'d> {
    record: &'d PointRecord,
    label: String,
}

fn loops(doc: &ResultsDocument) -> Outcome {
    let recs = match records_or_omit(
        &FIGURE,
        doc,
        |r| r.kernel == "loop",
        "no `loop` points in this results file",
    ) {
        Ok(recs) => recs,
        Err(outcome) => return outcome,
    };
    let nests: Vec<Nest> = recs
        .into_iter()
        .map(|record| Nest {
            label: label(record),
            record,
        })
        .collect();
    let levels: Vec<String> = data::data_levels(doc)
        .iter()
        .map(|l| l.name.clone())
        .collect();
    let categories: Vec<String> = nests.iter().map(|n| n.label.clone()).collect();
    let times: Vec<_> = nests
        .iter()
        .map(|n| data::ns_per_element(n.record))
        .collect();
    let misses: Vec<BarSeries> = levels
        .iter()
        .enumerate()
        .map(|(li, name)| BarSeries {
            name: name.clone(),
            colour: colour_for(name, li),
            values: nests
                .iter()
                .map(|n| misses_per_access(n.record, li))
                .collect(),
            ci: vec![None; nests.len()],
        })
        .collect();
    let height = (nests.len() as u32 * 30 * levels.len().max(1) as u32 + 110).max(240);
    Outcome::Drawn(Box::new(Built {
        figure: Figure {
            id: FIGURE.id.into(),
            title: "Your loop nests: time and misses per access".into(),
            provenance: format!(
                "{}; misses per load or store at each level, one cold run of the same stream \
                 (simulated)",
                prov_timed(doc)
            ),
            panels: vec![
                Panel::Bars(panel(
                    "ns per access (timed)",
                    &categories,
                    vec![estimate_bars("time".into(), colour_for("time", 0), &times)],
                )),
                Panel::Bars(panel("misses per access (simulated)", &categories, misses)),
            ],
            panel_width: 560,
            panel_height: height,
        },
        tables: vec![table(&nests, &levels)],
        look_for: look_for(&nests, &levels),
        notes: Vec::new(),
    }))
}

/// The nest's `name` (cut to [`LABEL_CHARS`]), with its thread count when more than one.
fn label(record: &PointRecord) -> String {
    let name = data::text(record, "name")
        .or_else(|| data::text(record, "nest"))
        .unwrap_or("loop");
    let mut label: String = name.chars().take(LABEL_CHARS).collect();
    if name.chars().count() > LABEL_CHARS {
        label.push('…');
    }
    if record.threads > 1 {
        label.push_str(&format!(" · {} threads", record.threads));
    }
    label
}

fn panel(title: &str, categories: &[String], series: Vec<BarSeries>) -> BarPanel {
    BarPanel {
        title: title.into(),
        categories: categories.to_vec(),
        value_axis: Axis::linear(title),
        series,
        stacked: false,
        vlines: Vec::new(),
    }
}

fn look_for(nests: &[Nest], levels: &[String]) -> Vec<Claim> {
    let mut claims = vec![Claim::guide(
        "loops.reading",
        "Each row is one of your nests (the `loop` kernel), labelled by its name: on the left, \
         its time per load or store of its body (timed); on the right, the misses of one cold \
         run of the very stream it timed, per access, at each level (simulated).",
    )];
    let timed: Vec<(&Nest, f64)> = nests
        .iter()
        .filter_map(|n| data::ns_per_element(n.record).map(|e| (n, e.value)))
        .collect();
    if let Some(claim) = extremes(&timed) {
        claims.push(claim);
    }
    if let Some(claim) = misses_follow_time(&timed, levels) {
        claims.push(claim);
    }
    claims.push(conflicts(nests, levels));
    claims
}

/// The fastest and the slowest timed nest.
fn extremes(timed: &[(&Nest, f64)]) -> Option<Claim> {
    if timed.len() < 2 {
        return None;
    }
    let by = |a: &&(&Nest, f64), b: &&(&Nest, f64)| a.1.total_cmp(&b.1);
    let fast = timed.iter().min_by(by)?;
    let slow = timed.iter().max_by(by)?;
    Some(Claim::derived(
        "loops.extremes",
        format!(
            "Fastest: {}, {} ns per access; slowest: {}, {} ns per access, {} (timed).",
            fast.0.label,
            cell(Some(fast.1)),
            slow.0.label,
            cell(Some(slow.1)),
            slower_or_faster(slow.1, fast.1)
        ),
    ))
}

/// Over the pairs of nests whose times differ by more than [`SAME_SPEED`], at each level, how
/// often the slower one has more simulated misses per access.
fn misses_follow_time(timed: &[(&Nest, f64)], levels: &[String]) -> Option<Claim> {
    let mut pairs = Vec::new();
    for (i, a) in timed.iter().enumerate() {
        for b in &timed[i + 1..] {
            let (slow, fast) = if a.1 > b.1 { (a, b) } else { (b, a) };
            if slow.1 > fast.1 * SAME_SPEED {
                pairs.push((slow.0.record, fast.0.record));
            }
        }
    }
    if pairs.is_empty() {
        return None;
    }
    let parts: Vec<String> = levels
        .iter()
        .enumerate()
        .filter_map(|(li, name)| {
            let counted: Vec<bool> = pairs
                .iter()
                .filter_map(|(slow, fast)| {
                    Some(misses_per_access(slow, li)? > misses_per_access(fast, li)?)
                })
                .collect();
            (!counted.is_empty()).then(|| {
                let more = counted.iter().filter(|&&m| m).count();
                format!("at {name} in {more} of {}", counted.len())
            })
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(Claim::derived(
        "loops.misses-follow-time",
        format!(
            "Of the {} pairs of nests whose times differ by more than {:.0}%, the slower one \
             misses more per access {} (simulated).",
            pairs.len(),
            (SAME_SPEED - 1.0) * 100.0,
            parts.join(", ")
        ),
    ))
}

/// The nests whose misses at some level are mostly conflict misses, or that none are.
fn conflicts(nests: &[Nest], levels: &[String]) -> Claim {
    let mut named = Vec::new();
    for nest in nests {
        for (li, name) in levels.iter().enumerate() {
            let Some(level) = data::sim_level(nest.record, li) else {
                continue;
            };
            if level.misses > 0 && level.conflict as f64 >= MOSTLY * level.misses as f64 {
                named.push(format!(
                    "{}: {} of its {} {name} misses ({:.0}%)",
                    nest.label,
                    format_count(level.conflict),
                    format_count(level.misses),
                    100.0 * level.conflict as f64 / level.misses as f64
                ));
            }
        }
    }
    if named.is_empty() {
        return Claim::derived(
            "loops.conflicts",
            format!(
                "No nest misses mostly by conflict at any level (under {:.0}% of each level's \
                 misses are conflict misses, simulated).",
                MOSTLY * 100.0
            ),
        );
    }
    Claim::derived(
        "loops.conflicts",
        format!(
            "Conflict misses (lines that would fit the cache but fall in too few sets) are most \
             of the misses of {} (simulated); `stridelab sim --loop` re-simulates padded \
             leading dimensions for such a nest.",
            named.join("; ")
        ),
    )
}

/// Every nest whole: its text and arrays, accesses, time, and misses per access per level.
fn table(nests: &[Nest], levels: &[String]) -> Table {
    let mut headers: Vec<String> = [
        "name",
        "nest",
        "arrays",
        "threads",
        "accesses",
        "ns per access",
    ]
    .map(String::from)
    .to_vec();
    headers.extend(levels.iter().map(|l| format!("{l} misses per access")));
    headers.extend(levels.iter().map(|l| format!("{l} conflict misses")));
    let rows = nests
        .iter()
        .map(|n| {
            let r = n.record;
            let text = |key| data::text(r, key).unwrap_or("—").to_string();
            let mut row = vec![
                text("name"),
                text("nest"),
                text("arrays"),
                r.threads.to_string(),
                r.work
                    .as_ref()
                    .map_or("—".into(), |w| format_count(w.elements)),
                est_cell(data::ns_per_element(r)),
            ];
            row.extend((0..levels.len()).map(|li| cell(misses_per_access(r, li))));
            row.extend((0..levels.len()).map(|li| {
                data::sim_level(r, li).map_or("—".into(), |l| format_count(l.conflict))
            }));
            row
        })
        .collect();
    Table {
        caption: "Every nest: ns per access (timed, CI), misses per access and conflict misses \
                  at each level (simulated, one cold run)"
            .into(),
        headers,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stridelab_core::results::SimulatedLevel;

    fn level(name: &str, accesses: u64, misses: u64, conflict: u64) -> SimulatedLevel {
        SimulatedLevel {
            name: name.into(),
            size: 32768,
            ways: 8,
            line: 64,
            sets: 64,
            loads: accesses,
            stores: 0,
            load_misses: misses,
            store_misses: 0,
            misses,
            miss_rate: misses as f64 / accesses as f64,
            compulsory: misses - conflict,
            capacity: 0,
            conflict,
        }
    }

    /// A nest record with `ns` per access and `levels` simulated.
    fn nest(name: &str, ns: f64, levels: Vec<SimulatedLevel>) -> PointRecord {
        let doc: ResultsDocument = serde_json::from_str(include_str!(
            "../../../../tests/fixtures/results_small.json"
        ))
        .unwrap();
        let mut r = doc
            .records
            .iter()
            .find(|r| r.timing.is_some() && r.simulated.is_some())
            .unwrap()
            .clone();
        r.kernel = "loop".into();
        r.params.clear();
        r.params.insert(
            "name".into(),
            stridelab_core::vocab::ParamValue::Text(name.into()),
        );
        let timing = r.timing.as_mut().unwrap();
        timing.ns_per_element = ns;
        timing.ns_per_run.median = ns;
        r.simulated.as_mut().unwrap().levels = levels;
        r
    }

    #[test]
    fn the_sentences_come_from_the_nests_numbers() {
        let fast = nest(
            "row-sum",
            0.5,
            vec![level("L1d", 1000, 125, 0), level("L2", 125, 125, 0)],
        );
        let slow = nest(
            "col-sum",
            6.0,
            vec![level("L1d", 1000, 1000, 0), level("L2", 1000, 125, 0)],
        );
        let conflicted = nest(
            "transpose",
            3.0,
            vec![level("L1d", 1000, 400, 300), level("L2", 400, 100, 0)],
        );
        let records = [fast, slow, conflicted];
        let nests: Vec<Nest> = records
            .iter()
            .map(|r| Nest {
                record: r,
                label: label(r),
            })
            .collect();
        let claims = look_for(&nests, &["L1d".into(), "L2".into()]);
        let text = |id: &str| claims.iter().find(|c| c.id == id).unwrap().text();
        assert!(
            text("loops.extremes").contains("Fastest: row-sum, 0.500 ns"),
            "{}",
            text("loops.extremes")
        );
        assert!(text("loops.extremes").contains("col-sum, 6 ns per access, 12× slower"));
        // Three pairs; at L1d the slower always misses more; at L2 only col-sum over transpose
        // (125 > 100): transpose misses less than row-sum there, and col-sum ties row-sum.
        let follow = text("loops.misses-follow-time");
        assert!(
            follow.contains("Of the 3 pairs") && follow.contains("at L1d in 3 of 3"),
            "{follow}"
        );
        assert!(follow.contains("at L2 in 1 of 3"), "{follow}");
        let conflicts = text("loops.conflicts");
        assert!(
            conflicts.contains("transpose: 300 of its 400 L1d misses (75%)"),
            "{conflicts}"
        );
        assert!(!conflicts.contains("row-sum"), "{conflicts}");
    }

    #[test]
    fn long_names_are_cut_and_the_table_keeps_them() {
        let long = "x".repeat(60);
        let r = nest(&long, 1.0, vec![level("L1d", 10, 1, 0)]);
        assert_eq!(label(&r).chars().count(), LABEL_CHARS + 1);
        let nests = [Nest {
            record: &r,
            label: label(&r),
        }];
        assert_eq!(table(&nests, &["L1d".into()]).rows[0][0], long);
    }
}
