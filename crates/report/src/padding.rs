//! Padding a matrix's leading dimension, as this run timed it: the groups of `row-sum` and
//! `col-sum` points that differ only in `ld`, the fastest `ld` of each, and the textbook's
//! "pad by one element" held against them. The summary's padding finding, the padding figure
//! and the row-vs-column figure's reading guide all say what these groups hold, so advice on
//! padding is this machine's measurement or is labelled the textbook's, with its verdict.

use stridelab_core::results::{PointRecord, ResultsDocument};
use stridelab_core::units::{format_count, format_duration_ns};

use super::chart::format_number;
use super::claims::{Claim, SAME_SPEED, Verdict};
use super::data::{self, Estimate};

/// One timed point of a padding group.
pub struct PaddedPoint<'a> {
    pub ld: u64,
    /// Timed nanoseconds per run (the median, with its CI).
    pub run: Estimate,
    pub record: &'a PointRecord,
}

impl PaddedPoint<'_> {
    /// Simulated misses at level `index` for one run, if simulated.
    pub fn misses(&self, index: usize) -> Option<u64> {
        data::sim_level(self.record, index).map(|l| l.misses)
    }
}

/// The timed points of one matrix walk at two or more leading dimensions, by `ld`.
pub struct PaddingGroup<'a> {
    pub kernel: &'a str,
    pub rows: u64,
    pub cols: u64,
    pub points: Vec<PaddedPoint<'a>>,
}

impl PaddingGroup<'_> {
    /// `col-sum 1024×1024` (with the element type when it is not f64).
    pub fn name(&self) -> String {
        let dtype = data::element(self.points[0].record).0;
        let of = if dtype == "f64" {
            String::new()
        } else {
            format!(" {dtype}")
        };
        format!("{} {}×{}{of}", self.kernel, self.rows, self.cols)
    }

    /// The point the others are held against: the unpadded one (`ld = cols`), else the
    /// smallest `ld` timed.
    pub fn baseline(&self) -> &PaddedPoint<'_> {
        self.points
            .iter()
            .find(|p| p.ld == self.cols)
            .unwrap_or(&self.points[0])
    }

    /// The fastest point (the smallest median time per run).
    pub fn best(&self) -> &PaddedPoint<'_> {
        self.points
            .iter()
            .min_by(|a, b| a.run.value.total_cmp(&b.run.value))
            .unwrap_or(&self.points[0])
    }

    /// The textbook's padding: one element more than the row (`ld = cols + 1`), if timed.
    pub fn plus_one(&self) -> Option<&PaddedPoint<'_>> {
        self.points.iter().find(|p| p.ld == self.cols + 1)
    }
}

/// The identity of a matrix walk apart from `ld`: kernel, shape, element type, threads.
fn walk_key(r: &PointRecord) -> Option<(&str, u64, u64, &str, usize)> {
    Some((
        r.kernel.as_str(),
        data::int(r, "rows")?,
        data::int(r, "cols")?,
        data::element(r).0,
        r.threads,
    ))
}

/// Every row-sum/col-sum walk timed at two or more leading dimensions, column order first.
pub fn groups(doc: &ResultsDocument) -> Vec<PaddingGroup<'_>> {
    let mut out: Vec<PaddingGroup> = Vec::new();
    let mut keys = Vec::new();
    for kernel in ["col-sum", "row-sum"] {
        for r in data::of_kernel(doc, kernel) {
            let (Some(key), Some(run)) = (walk_key(r), time_per_run(r)) else {
                continue;
            };
            let ld = data::int(r, "ld").unwrap_or(key.2);
            let point = PaddedPoint { ld, run, record: r };
            match keys.iter().position(|k| *k == key) {
                Some(i) if out[i].points.iter().any(|p| p.ld == ld) => {}
                Some(i) => out[i].points.push(point),
                None => {
                    keys.push(key);
                    out.push(PaddingGroup {
                        kernel: key.0,
                        rows: key.1,
                        cols: key.2,
                        points: vec![point],
                    });
                }
            }
        }
    }
    out.retain(|g| g.points.len() >= 2);
    for g in &mut out {
        g.points.sort_by_key(|p| p.ld);
    }
    out
}

fn time_per_run(r: &PointRecord) -> Option<Estimate> {
    data::ns_per_element(r)?;
    let s = r.timing.as_ref()?.ns_per_run;
    Some(Estimate {
        value: s.median,
        low: s.ci_low,
        high: s.ci_high,
    })
}

fn time(p: &PaddedPoint) -> String {
    format_duration_ns(p.run.value)
}

/// `ld=1025 4.70 ms, ld=1040 3.90 ms`: the points other than `skip`.
fn others(g: &PaddingGroup, skip: &[u64]) -> String {
    g.points
        .iter()
        .filter(|p| !skip.contains(&p.ld))
        .map(|p| format!("ld={} {}", p.ld, time(p)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The simulated misses of the group's first two levels, equal counts together:
/// `simulated misses: L1d 1,048,576 at ld=1024 and 1025; L2 1,048,576 at ld=1024, 131,072 at
/// ld=1025`.
pub fn misses_sentence(g: &PaddingGroup) -> Option<String> {
    let levels: Vec<String> = (0..2).filter_map(|li| level_misses(g, li)).collect();
    (!levels.is_empty()).then(|| format!("Simulated misses: {}", levels.join("; ")))
}

/// One level's misses over the group's points, equal counts together.
fn level_misses(g: &PaddingGroup, li: usize) -> Option<String> {
    let level = data::sim_level(g.points[0].record, li)?.name.clone();
    let mut classes: Vec<(u64, Vec<u64>)> = Vec::new();
    for p in &g.points {
        let m = p.misses(li)?;
        match classes.iter_mut().find(|c| c.0 == m) {
            Some(c) => c.1.push(p.ld),
            None => classes.push((m, vec![p.ld])),
        }
    }
    let parts: Vec<String> = classes
        .iter()
        .map(|(m, lds)| {
            let lds: Vec<String> = lds.iter().map(u64::to_string).collect();
            format!("{} at ld={}", format_count(*m), and_words(&lds))
        })
        .collect();
    Some(format!("{level} {}", parts.join(", ")))
}

/// `a`, `a and b`, `a, b and c`.
fn and_words(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [head @ .., last] => format!("{} and {last}", head.join(", ")),
    }
}

/// What the run measured for one group, the best `ld` first: the summary's padding finding.
pub fn measured_sentence(g: &PaddingGroup) -> String {
    let (base, best) = (g.baseline(), g.best());
    let n = g.points.len();
    let timed = if best.ld == base.ld {
        format!(
            "no other leading dimension timed beat ld={} ({} a run): {}",
            base.ld,
            time(base),
            others(g, &[base.ld])
        )
    } else if best.run.value * SAME_SPEED > base.run.value {
        format!(
            "no other leading dimension timed was more than {:.0}% faster than ld={} ({} a \
             run): {}",
            (SAME_SPEED - 1.0) * 100.0,
            base.ld,
            time(base),
            others(g, &[base.ld])
        )
    } else {
        let rest = others(g, &[base.ld, best.ld]);
        format!(
            "of the {n} leading dimensions timed, ld={} was fastest: {} a run against {} at \
             ld={}, {}× the time{}",
            best.ld,
            time(best),
            time(base),
            base.ld,
            format_number(best.run.value / base.run.value),
            if rest.is_empty() {
                String::new()
            } else {
                format!("; {rest}")
            }
        )
    };
    let misses = misses_sentence(g)
        .map(|m| format!(" {m}."))
        .unwrap_or_default();
    format!("Padding {}: {timed} (timed).{misses}", g.name())
}

/// The textbook's expectation the padding claims hold against the data.
pub const TEXTBOOK: &str = "padding a matrix's rows by one element (ld = cols + 1) spreads a \
     column over every cache set, so a column walk at ld = cols + 1 runs faster than at ld = \
     cols (with cols a power of two).";

/// The textbook's "pad by one element", held against every column walk this run timed at both
/// `ld = cols` and `ld = cols + 1`: it holds where cols + 1 is faster than cols and no slower
/// than the best `ld` timed, in part where it is faster but another `ld` is faster still.
pub fn textbook_claim(groups: &[PaddingGroup]) -> Claim {
    let mut checked = 0;
    let mut full = 0;
    let mut partial = 0;
    let mut observed = Vec::new();
    for g in groups.iter().filter(|g| g.kernel == "col-sum") {
        let (Some(plus), base) = (g.plus_one(), g.baseline()) else {
            continue;
        };
        if base.ld != g.cols {
            continue;
        }
        checked += 1;
        let best = g.best();
        let ratio = plus.run.value / base.run.value;
        let faster = plus.run.value * SAME_SPEED < base.run.value;
        let is_best = plus.run.value <= best.run.value * SAME_SPEED;
        let mut text = format!(
            "{}: ld={} took {}× the time of ld={} ({} against {} a run, timed)",
            g.name(),
            plus.ld,
            format_number(ratio),
            base.ld,
            time(plus),
            time(base)
        );
        match (faster, is_best) {
            (true, true) => {
                full += 1;
                if g.points.len() > 2 {
                    text.push_str(&format!(", the fastest of the {} timed", g.points.len()));
                }
            }
            (true, false) => {
                partial += 1;
                text.push_str(&format!(
                    ", but ld={} was the fastest of the {} timed ({}× the time of ld={})",
                    best.ld,
                    g.points.len(),
                    format_number(best.run.value / base.run.value),
                    base.ld
                ));
            }
            _ => {}
        }
        observed.push(text);
    }
    let verdict = match (checked, full, partial) {
        (0, _, _) => Verdict::Untested,
        (n, f, _) if f == n => Verdict::Agrees,
        (_, 0, 0) => Verdict::Disagrees,
        _ => Verdict::Partly,
    };
    let observed = if checked == 0 {
        untested_words(groups)
    } else {
        observed.join("; ")
    };
    Claim::textbook("padding.textbook", TEXTBOOK, verdict, observed)
}

/// Why the padding advice is untested, and what the run did time.
fn untested_words(groups: &[PaddingGroup]) -> String {
    if groups.is_empty() {
        return "this run timed no matrix walk at a padded leading dimension, so the advice \
                is the textbook's and untested on this machine"
            .into();
    }
    let best: Vec<String> = groups
        .iter()
        .map(|g| format!("{} fastest at ld={}", g.name(), g.best().ld))
        .collect();
    format!(
        "this run timed no column walk at both ld = cols and ld = cols + 1, so that advice is \
         untested on this machine; of the leading dimensions it did time: {} (timed)",
        best.join("; ")
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use stridelab_core::vocab::ParamValue;

    /// The recorded small run with its col-sum 512×512 point timed again at each
    /// (ld, ms per run, simulated L1 misses).
    pub(crate) fn padded_doc(points: &[(u64, f64, u64)]) -> ResultsDocument {
        let mut doc: ResultsDocument =
            serde_json::from_str(include_str!("../../../tests/fixtures/results_small.json"))
                .unwrap();
        let template = doc
            .records
            .iter()
            .find(|r| r.kernel == "col-sum" && data::int(r, "cols") == Some(512))
            .unwrap()
            .clone();
        doc.records.retain(|r| r.kernel != "col-sum");
        for &(ld, ms, misses) in points {
            let mut r = template.clone();
            r.index = doc.records.len();
            r.params.insert("ld".into(), ParamValue::Int(ld));
            let t = r.timing.as_mut().unwrap();
            let elements = t.ns_per_run.median / t.ns_per_element;
            t.ns_per_run.median = ms * 1e6;
            t.ns_per_run.ci_low = ms * 0.98e6;
            t.ns_per_run.ci_high = ms * 1.02e6;
            t.ns_per_element = ms * 1e6 / elements;
            let level = &mut r.simulated.as_mut().unwrap().levels[0];
            level.misses = misses;
            doc.records.push(r);
        }
        doc
    }

    #[test]
    fn the_padding_advice_follows_the_times_measured() {
        // (ld, ms, L1 misses) of a 512×512 column walk; the verdict; words the claim holds.
        let amd_like = [
            (512, 7.7, 262_144),
            (513, 4.7, 33_216),
            (520, 1.8, 33_216),
            (528, 3.9, 33_216),
        ];
        let textbook_wins = [(512, 7.7, 262_144), (513, 1.8, 33_216), (520, 3.0, 33_216)];
        let padding_loses = [(512, 2.0, 262_144), (513, 2.5, 33_216)];
        let no_plus_one = [(512, 7.7, 262_144), (520, 1.8, 33_216)];
        type Case<'a> = (&'a [(u64, f64, u64)], Verdict, &'a str);
        let cases: &[Case] = &[
            (
                &amd_like,
                Verdict::Partly,
                "ld=513 took 0.610× the time of ld=512 (4.70 ms against 7.70 ms a run, timed), \
                 but ld=520 was the fastest of the 4 timed (0.234× the time of ld=512)",
            ),
            (
                &textbook_wins,
                Verdict::Agrees,
                "ld=513 took 0.234× the time of ld=512 (1.80 ms against 7.70 ms a run, timed), \
                 the fastest of the 3 timed",
            ),
            (&padding_loses, Verdict::Disagrees, "ld=513 took 1.25×"),
            (
                &no_plus_one,
                Verdict::Untested,
                "untested on this machine; of the leading dimensions it did time: col-sum \
                 512×512 fastest at ld=520",
            ),
            (&[], Verdict::Untested, "timed no matrix walk at a padded"),
        ];
        for &(points, verdict, words) in cases {
            let doc = padded_doc(points);
            let claim = textbook_claim(&groups(&doc));
            assert_eq!(claim.verdict(), Some(verdict), "{}", claim.text());
            assert!(claim.text().contains(words), "{}", claim.text());
        }
    }

    #[test]
    fn the_measured_sentence_names_the_fastest_padding_and_the_simulated_misses() {
        let doc = padded_doc(&[
            (512, 7.7, 262_144),
            (513, 4.7, 33_216),
            (520, 1.8, 33_216),
            (528, 3.9, 33_216),
        ]);
        let found = groups(&doc);
        assert_eq!(found.len(), 1);
        assert_eq!(
            measured_sentence(&found[0]),
            "Padding col-sum 512×512: of the 4 leading dimensions timed, ld=520 was fastest: \
             1.80 ms a run against 7.70 ms at ld=512, 0.234× the time; ld=513 4.70 ms, ld=528 \
             3.90 ms (timed). Simulated misses: L1d 262,144 at ld=512, 33,216 at ld=513, 520 \
             and 528; L2 262,144 at ld=512, 513, 520 and 528."
        );
        let slower = padded_doc(&[(512, 2.0, 262_144), (513, 2.5, 33_216)]);
        assert_eq!(
            measured_sentence(&groups(&slower)[0]),
            "Padding col-sum 512×512: no other leading dimension timed beat ld=512 (2.00 ms \
             a run): ld=513 2.50 ms (timed). Simulated misses: L1d 262,144 at ld=512, 33,216 \
             at ld=513; L2 262,144 at ld=512 and 513."
        );
        // One leading dimension is no padding group.
        assert!(groups(&padded_doc(&[(512, 2.0, 1)])).is_empty());
    }
}
