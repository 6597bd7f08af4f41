//! Findings for any grid a user runs: for a kernel no dedicated finding speaks of, the points
//! that differ in one parameter only are comparable with each other (same kernel, same other
//! parameters, same threads, one run), and the largest ratio among them is a finding —
//! `ld=1032 took 0.234× the time of ld=1024`. So a summary says what a custom grid measured
//! instead of "no finding".

use stridelab_core::results::{PointRecord, ResultsDocument};
use stridelab_core::vocab::{ParamValue, Params, format_params};

use super::chart::format_number;
use super::claims::Claim;
use super::data;

/// The largest same-run ratio along one parameter of one kernel's grid.
pub struct Comparison {
    /// The sentence, derived from the two points it names.
    pub claim: Claim,
    /// The slowest point's time over the fastest's (≥ 1).
    pub spread: f64,
    /// The report section that explains the kernel.
    pub section: &'static str,
}

/// Parameters that do not change what is measured, left out of a grid's name.
const INCIDENTAL: [&str; 4] = ["seed", "reps", "deopt", "line"];

/// One comparable set: the points of a kernel equal in everything but `key`.
struct Line<'a> {
    key: &'a str,
    /// The parameters the points share (without `key`).
    shared: Params,
    points: Vec<(&'a ParamValue, f64, &'a PointRecord)>,
}

impl Line<'_> {
    fn fastest(&self) -> (&ParamValue, f64, &PointRecord) {
        *self
            .points
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("a line has points")
    }

    fn slowest(&self) -> (&ParamValue, f64, &PointRecord) {
        *self
            .points
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .expect("a line has points")
    }

    fn spread(&self) -> f64 {
        self.slowest().1 / self.fastest().1
    }
}

/// The comparable sets of `kernel`'s timed points, one per (parameter, other values).
fn lines<'a>(doc: &'a ResultsDocument, kernel: &'a str) -> Vec<Line<'a>> {
    let timed: Vec<(&PointRecord, f64)> = data::of_kernel(doc, kernel)
        .filter_map(|r| Some((r, data::ns_per_element(r)?.value)))
        .filter(|(_, ns)| ns.is_finite() && *ns > 0.0)
        .collect();
    let mut out: Vec<(usize, Line)> = Vec::new();
    for &(r, ns) in &timed {
        for (key, value) in &r.params {
            let mut shared = r.params.clone();
            shared.remove(key);
            let line = out
                .iter_mut()
                .find(|(threads, l)| *threads == r.threads && l.key == key && l.shared == shared);
            match line {
                Some((_, l)) if l.points.iter().any(|p| p.0 == value) => {}
                Some((_, l)) => l.points.push((value, ns, r)),
                None => out.push((
                    r.threads,
                    Line {
                        key,
                        shared,
                        points: vec![(value, ns, r)],
                    },
                )),
            }
        }
    }
    out.into_iter()
        .map(|(_, l)| l)
        .filter(|l| l.points.len() >= 2)
        .collect()
}

/// `key=value`, an expression in backticks.
fn word(key: &str, value: &ParamValue) -> String {
    match value {
        ParamValue::Text(t) if key == "expr" => format!("`{t}`"),
        _ => format!("{key}={value}"),
    }
}

/// The section that explains `kernel`, else the summary.
fn section_of(kernel: &str) -> &'static str {
    super::SECTIONS
        .iter()
        .find(|s| s.kernels.contains(&kernel))
        .map_or("summary", |s| s.anchor)
}

/// The largest same-run ratio along one parameter, for every timed kernel not in `covered`,
/// largest first.
pub fn comparisons(doc: &ResultsDocument, covered: &[&str]) -> Vec<Comparison> {
    let mut kernels: Vec<&str> = doc
        .records
        .iter()
        .map(|r| r.kernel.as_str())
        .filter(|k| !covered.contains(k))
        .collect();
    kernels.sort_unstable();
    kernels.dedup();
    let mut out: Vec<Comparison> = kernels
        .into_iter()
        .filter_map(|kernel| {
            let lines = lines(doc, kernel);
            let line = lines
                .iter()
                .max_by(|a, b| a.spread().total_cmp(&b.spread()))?;
            Some(comparison(kernel, line))
        })
        .collect();
    out.sort_by(|a, b| b.spread.total_cmp(&a.spread));
    out
}

fn comparison(kernel: &str, line: &Line) -> Comparison {
    let (fast, fast_ns, fast_r) = line.fastest();
    let (slow, slow_ns, slow_r) = line.slowest();
    let same_work = fast_r.work.map(|w| w.elements) == slow_r.work.map(|w| w.elements);
    let shared = format_params(
        line.shared
            .iter()
            .filter(|(k, _)| !INCIDENTAL.contains(&k.as_str())),
    );
    let threads = match fast_r.threads {
        1 => String::new(),
        n => format!(", {n} threads"),
    };
    let name = format!("{kernel} {shared}").trim_end().to_string();
    Comparison {
        claim: Claim::derived(
            "finding.grid",
            format!(
                "{name}{threads}: {} took {}× the time{} of {} ({} against {} ns per \
                 element, timed; the fastest and the slowest of the {} values of {} timed).",
                word(line.key, fast),
                format_number(fast_ns / slow_ns),
                if same_work { "" } else { " per element" },
                word(line.key, slow),
                format_number(fast_ns),
                format_number(slow_ns),
                line.points.len(),
                line.key
            ),
        ),
        spread: slow_ns / fast_ns,
        section: section_of(kernel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorded small run cut to its tiled-sum points, each timed at `ns` per element.
    fn tiled(ns: &[(&str, f64)]) -> ResultsDocument {
        let mut doc: ResultsDocument =
            serde_json::from_str(include_str!("../../../tests/fixtures/results_small.json"))
                .unwrap();
        let template = doc
            .records
            .iter()
            .find(|r| r.kernel == "tiled-sum")
            .unwrap()
            .clone();
        doc.records = ns
            .iter()
            .enumerate()
            .map(|(i, &(order, ns))| {
                let mut r = template.clone();
                r.index = i;
                r.params
                    .insert("order".into(), ParamValue::Text(order.into()));
                r.timing.as_mut().unwrap().ns_per_element = ns;
                r
            })
            .collect();
        doc
    }

    #[test]
    fn a_grid_along_one_parameter_gives_its_largest_ratio() {
        let doc = tiled(&[("row", 0.3), ("col", 1.5)]);
        let found = comparisons(&doc, &[]);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].claim.text(),
            "tiled-sum B=32 n=256: order=row took 0.200× the time of order=col (0.300 against \
             1.50 ns per element, timed; the fastest and the slowest of the 2 values of order \
             timed)."
        );
        assert_eq!(found[0].section, "blocked");
        assert!((found[0].spread - 5.0).abs() < 1e-9);
        // A kernel a dedicated finding covers, or one point alone, gives none.
        assert!(comparisons(&doc, &["tiled-sum"]).is_empty());
        assert!(comparisons(&tiled(&[("row", 0.3)]), &[]).is_empty());
    }
}
