//! Sentences checked against the data they sit beside. A figure's reading guide and the
//! summary's findings are lists of [`Claim`]s: a sentence *derived* from the drawn numbers, a
//! *textbook* expectation with the verdict this run's numbers give it, or a *guide* to how the
//! figure is drawn (true by construction). The verdicts come from the small descriptive
//! statistics here (spread, where a curve levels off, whether two curves agree), computed from
//! the same points the figure draws — never from a fixed expectation.
//!
//! The page renders each claim in an element carrying its id and verdict
//! (`data-claim`, `data-verdict`), so a test can hold every sentence against the data.
#![forbid(unsafe_code)]

use super::chart::format_number;

/// A run of timed values "levels off" when its slowest value is within this factor of its
/// fastest: timing noise on a shared machine moves medians by a few per cent, a cache or TLB
/// step by tens of per cent or more.
pub const LEVEL_SPREAD: f64 = 1.35;

/// Two timed curves "fall on one curve" where they differ by at most this factor at a shared x.
pub const SAME_CURVE: f64 = 1.2;

/// Two times are "about as fast" within this factor; beyond it a ratio is phrased by direction.
pub const SAME_SPEED: f64 = 1.05;

/// How a textbook expectation fares against this run's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Agrees,
    /// Holds at some of the points and not at others (the observed text names which).
    Partly,
    Disagrees,
    /// Too few points to tell (the observed text says what is missing).
    Untested,
}

impl Verdict {
    /// The verdict of an expectation checked at `checked` places, of which `holding` bear it
    /// out: all of them agree, none disagrees, some agree in part, none checked cannot tell.
    pub fn of_counts(checked: usize, holding: usize) -> Self {
        match (checked, holding) {
            (0, _) => Verdict::Untested,
            (n, k) if k >= n => Verdict::Agrees,
            (_, 0) => Verdict::Disagrees,
            _ => Verdict::Partly,
        }
    }

    /// The attribute value the page carries (`data-verdict`).
    pub fn key(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::Partly => "partly",
            Verdict::Disagrees => "disagrees",
            Verdict::Untested => "untested",
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Verdict::Agrees => "this run agrees",
            Verdict::Partly => "this run agrees only in part",
            Verdict::Disagrees => "this run does not agree",
            Verdict::Untested => "this run cannot tell",
        }
    }
}

/// What kind of sentence a claim is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Every statement in it is computed from the data beside it.
    Derived,
    /// The textbook expectation, then what this run shows and the verdict.
    Textbook {
        expectation: String,
        verdict: Verdict,
    },
    /// How the figure is drawn (markers, offsets): a statement about the drawing, not the data.
    Guide,
}

/// One sentence (or two) of a reading guide or a finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// A stable name for tests and anchors (`stride.levels-off`).
    pub id: &'static str,
    pub kind: Kind,
    /// What the data show, with the numbers.
    pub observed: String,
}

impl Claim {
    pub fn derived(id: &'static str, observed: impl Into<String>) -> Self {
        Self {
            id,
            kind: Kind::Derived,
            observed: observed.into(),
        }
    }

    pub fn textbook(
        id: &'static str,
        expectation: impl Into<String>,
        verdict: Verdict,
        observed: impl Into<String>,
    ) -> Self {
        Self {
            id,
            kind: Kind::Textbook {
                expectation: expectation.into(),
                verdict,
            },
            observed: observed.into(),
        }
    }

    pub fn guide(id: &'static str, text: impl Into<String>) -> Self {
        Self {
            id,
            kind: Kind::Guide,
            observed: text.into(),
        }
    }

    /// The verdict of a textbook claim.
    pub fn verdict(&self) -> Option<Verdict> {
        match &self.kind {
            Kind::Textbook { verdict, .. } => Some(*verdict),
            _ => None,
        }
    }

    /// The sentence as the page shows it.
    pub fn text(&self) -> String {
        match &self.kind {
            Kind::Textbook {
                expectation,
                verdict,
            } => format!(
                "Textbook: {} Here: {} — {}.",
                expectation.trim(),
                self.observed.trim().trim_end_matches('.'),
                verdict.words()
            ),
            _ => self.observed.clone(),
        }
    }
}

/// Slowest over fastest of positive finite values (`None` for fewer than two).
pub fn spread(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    if v.len() < 2 {
        return None;
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(hi / lo)
}

/// The smallest x from which every later point lies within [`LEVEL_SPREAD`] of the others
/// (points sorted by x; at least two points in the tail), or `None` when only the last point
/// is left — the curve never levels off.
pub fn levels_off_from(points: &[(f64, f64)]) -> Option<f64> {
    (0..points.len().saturating_sub(1)).find_map(|i| {
        let tail: Vec<f64> = points[i..].iter().map(|p| p.1).collect();
        spread(&tail)
            .filter(|s| *s <= LEVEL_SPREAD)
            .map(|_| points[i].0)
    })
}

/// How two curves compare at the x values they share.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveAgreement {
    /// Shared x values.
    pub shared: usize,
    /// (x, a, b) where the two differ by more than [`SAME_CURVE`].
    pub apart: Vec<(f64, f64, f64)>,
    /// The largest ratio (≥ 1) between them at the shared x values where they agree.
    pub within: f64,
}

impl CurveAgreement {
    pub fn verdict(&self) -> Verdict {
        Verdict::of_counts(self.shared, self.shared - self.apart.len())
    }
}

/// Compares curves `a` and `b` at the x values both have (exact x; the builders use whole
/// byte steps).
pub fn compare_curves(a: &[(f64, f64)], b: &[(f64, f64)]) -> CurveAgreement {
    let mut shared = 0;
    let mut apart = Vec::new();
    let mut within: f64 = 1.0;
    for &(x, ya) in a {
        let Some(&(_, yb)) = b.iter().find(|p| p.0 == x) else {
            continue;
        };
        if !(ya > 0.0 && yb > 0.0) {
            continue;
        }
        shared += 1;
        let ratio = (ya / yb).max(yb / ya);
        if ratio > SAME_CURVE {
            apart.push((x, ya, yb));
        } else {
            within = within.max(ratio);
        }
    }
    CurveAgreement {
        shared,
        apart,
        within,
    }
}

/// `t / base` phrased by direction: "3.62× slower", "2.1× faster", "about as fast (within 5%)".
pub fn slower_or_faster(t: f64, base: f64) -> String {
    let ratio = t / base;
    if !ratio.is_finite() || ratio <= 0.0 {
        return "not comparable".into();
    }
    if ratio >= SAME_SPEED {
        format!("{}× slower", format_number(ratio))
    } else if ratio <= 1.0 / SAME_SPEED {
        format!("{}× faster", format_number(1.0 / ratio))
    } else {
        format!("about as fast (within {:.0}%)", (SAME_SPEED - 1.0) * 100.0)
    }
}

/// `1–4` or `4`: the range of some counts.
pub fn count_range(values: impl IntoIterator<Item = u64>) -> String {
    let v: Vec<u64> = values.into_iter().collect();
    match (v.iter().min(), v.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => lo.to_string(),
        (Some(lo), Some(hi)) => format!("{lo}–{hi}"),
        _ => "—".into(),
    }
}

/// `1.2–4.5` (or one number): the range of some measured values.
pub fn value_range(values: &[f64]) -> String {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if finite.is_empty() {
        "—".into()
    } else if format_number(lo) == format_number(hi) {
        format_number(lo)
    } else {
        format!("{}–{}", format_number(lo), format_number(hi))
    }
}

/// `2.26 → 3.66 → 6.66 ns`: a short run of values in order.
pub fn sequence(values: &[f64], unit: &str) -> String {
    let text = values
        .iter()
        .map(|v| format_number(*v))
        .collect::<Vec<_>>()
        .join(" → ");
    format!("{text} {unit}").trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_and_levelling_off_follow_the_points() {
        assert_eq!(spread(&[2.0, 4.0, 3.0]), Some(2.0));
        assert_eq!(spread(&[2.0]), None);
        assert_eq!(spread(&[0.0, 2.0, f64::NAN]), None);
        // (x, y): this machine's stride-sum from the line on, then a flat one, then a rising one.
        let intel = [
            (64.0, 2.26),
            (128.0, 3.66),
            (256.0, 6.66),
            (512.0, 8.02),
            (1024.0, 6.80),
            (2048.0, 6.75),
            (4096.0, 6.13),
            (8192.0, 7.60),
            (16384.0, 6.59),
        ];
        assert_eq!(levels_off_from(&intel), Some(256.0));
        let flat = [(64.0, 2.0), (128.0, 2.1), (256.0, 2.05)];
        assert_eq!(levels_off_from(&flat), Some(64.0));
        let rising = [(64.0, 1.0), (128.0, 2.0), (256.0, 4.0)];
        assert_eq!(levels_off_from(&rising), None);
        assert_eq!(levels_off_from(&[]), None);
    }

    #[test]
    fn curves_agree_apart_or_partly() {
        let f64s = [(8.0, 0.29), (16.0, 0.71), (64.0, 2.26)];
        let same = [(8.0, 0.30), (16.0, 0.70), (64.0, 2.2), (4.0, 0.1)];
        let one_apart = [(8.0, 2.40), (16.0, 0.78), (64.0, 2.24)];
        let c = compare_curves(&same, &f64s);
        assert_eq!(
            (c.shared, c.apart.len(), c.verdict()),
            (3, 0, Verdict::Agrees)
        );
        let c = compare_curves(&one_apart, &f64s);
        assert_eq!(c.verdict(), Verdict::Partly);
        assert_eq!(c.apart, vec![(8.0, 2.40, 0.29)]);
        let c = compare_curves(&[(8.0, 9.0)], &f64s);
        assert_eq!(c.verdict(), Verdict::Disagrees);
        assert_eq!(
            compare_curves(&[(1.0, 1.0)], &f64s).verdict(),
            Verdict::Untested
        );
    }

    #[test]
    fn verdicts_count_where_an_expectation_holds() {
        let cases = [
            (0, 0, Verdict::Untested),
            (3, 3, Verdict::Agrees),
            (3, 0, Verdict::Disagrees),
            (3, 1, Verdict::Partly),
        ];
        for (checked, holding, want) in cases {
            assert_eq!(
                Verdict::of_counts(checked, holding),
                want,
                "{checked} {holding}"
            );
        }
    }

    #[test]
    fn ratios_are_phrased_by_direction() {
        let cases: &[(f64, f64, &str)] = &[
            (4.56, 1.26, "3.62× slower"),
            (1.0, 2.1, "2.10× faster"),
            (1.0, 1.02, "about as fast (within 5%)"),
            (1.0, 0.0, "not comparable"),
        ];
        for &(t, base, text) in cases {
            assert_eq!(slower_or_faster(t, base), text, "{t} / {base}");
        }
    }

    #[test]
    fn ranges_and_sequences_read_as_written() {
        assert_eq!(count_range([1, 4, 2]), "1–4");
        assert_eq!(count_range([3, 3]), "3");
        assert_eq!(value_range(&[1.26, 4.5, 1.3]), "1.26–4.50");
        assert_eq!(
            sequence(&[2.26, 3.657, 6.659], "ns"),
            "2.26 → 3.66 → 6.66 ns"
        );
    }

    #[test]
    fn a_textbook_claim_names_its_verdict() {
        let c = Claim::textbook(
            "t",
            "the curve levels off.",
            Verdict::Disagrees,
            "it rises 3.5×.",
        );
        assert_eq!(
            c.text(),
            "Textbook: the curve levels off. Here: it rises 3.5× — this run does not agree."
        );
        assert_eq!(Claim::derived("d", "x = 1.").text(), "x = 1.");
    }
}
