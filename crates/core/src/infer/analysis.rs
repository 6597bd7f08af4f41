//! The analysis of `stridelab infer`: latency curves in, cache parameters out.
//!
//! The probes in [`super::probe`] produce latency curves (median ns per dependent access, as
//! [`Point`]s of the infer document); this module turns them into parameters, each with the
//! points behind it and a confidence. No timing, no I/O, no unsafe: every rule here is tested
//! on synthetic curves.
//!
//! - **Capacities** ([`capacity_edges`]): the working-set curve is split into plateaus by
//!   optimal change-point segmentation (least squares on log latency, a penalty scaled by the
//!   curve's own noise — no fixed latency thresholds). Between two plateaus, the transition
//!   (last point of the faster plateau to first of the slower) is the capacity's interval and
//!   its geometric centre the capacity. A flat stretch shorter than [`CapacitySettings::min_plateau_octaves`] inside a
//!   rising transition is a pause in it, not a level.
//! - **Line size** ([`line_size`]): in the pair probe `A → A+s`, the second access is a hit
//!   while `s` is below the line and a miss from the line on: one step up, at the line.
//! - **L1 ways and sets** ([`jump_capacity`], [`fit_ways_sets`]): for each stride, the number of
//!   slots that fit before the latency jumps; a set-associative model predicts
//!   `ways · sets / gcd(stride/line, sets)` — the sets need not be a power of two — and the
//!   model that explains the most strides wins. Strides whose `+line` control jumps too are
//!   not set conflicts and are left out.
//! - **TLB reach** ([`tlb_reach`]): one line in each of K pages jumps once K exceeds the L1 data
//!   TLB; the same lines packed into a few pages (the control) must not.
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

use crate::cache::model::gcd;
use crate::results::infer_doc::{CapacityAnalysis, Edge, Jump, Plateau, Point, StrideObservation};
// Nearest-rank statistics: every level and spread here is a measured value, never a mean.
use crate::stats::{nearest_rank as quantile, upper_median as median};

/// The curve of one round only (sample `round` of every point that has it).
pub fn round_curve(points: &[Point], round: usize) -> Vec<Point> {
    points
        .iter()
        .filter_map(|p| p.samples.get(round).map(|&ns| Point::exact(p.x, ns)))
        .collect()
}

/// The noise of a curve in log latency: a robust scale (MAD) of successive differences, floored
/// at 1.5 % because no real plateau is flatter than that on a shared machine.
pub fn log_noise(points: &[Point]) -> f64 {
    let ys: Vec<f64> = points.iter().map(|p| p.ns.ln()).collect();
    let diffs: Vec<f64> = ys.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    if diffs.is_empty() {
        return 0.015;
    }
    (1.4826 * median(&diffs) / std::f64::consts::SQRT_2).max(0.015)
}

/// A run of consecutive points `[start, end)` of a curve, with its level (mean log latency).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub mean_ln: f64,
}

impl Segment {
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    pub fn ns(&self) -> f64 {
        self.mean_ln.exp()
    }
}

/// Optimal partitioning of `ys` into constant segments: minimises the total squared error plus
/// `penalty` per segment (exact dynamic programme, O(n²); curves have < 200 points).
pub fn segment(ys: &[f64], penalty: f64) -> Vec<Segment> {
    let n = ys.len();
    if n == 0 {
        return Vec::new();
    }
    let mut sum = vec![0.0; n + 1];
    let mut sum_sq = vec![0.0; n + 1];
    for (i, &y) in ys.iter().enumerate() {
        sum[i + 1] = sum[i] + y;
        sum_sq[i + 1] = sum_sq[i] + y * y;
    }
    let sse = |a: usize, b: usize| {
        let len = (b - a) as f64;
        let s = sum[b] - sum[a];
        (sum_sq[b] - sum_sq[a] - s * s / len).max(0.0)
    };
    let mut best = vec![f64::INFINITY; n + 1];
    let mut cut = vec![0usize; n + 1];
    best[0] = -penalty;
    for end in 1..=n {
        for start in 0..end {
            let cost = best[start] + penalty + sse(start, end);
            if cost < best[end] {
                best[end] = cost;
                cut[end] = start;
            }
        }
    }
    let mut segments = Vec::new();
    let mut end = n;
    while end > 0 {
        let start = cut[end];
        segments.push(Segment {
            start,
            end,
            mean_ln: (sum[end] - sum[start]) / (end - start) as f64,
        });
        end = start;
    }
    segments.reverse();
    segments
}

/// How the capacity analysis reads a working-set curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapacitySettings {
    /// A segment needs this many points to count as a plateau (a cache level).
    pub min_plateau_points: usize,
    /// Segmentation penalty in units of noise² (per segment).
    pub penalty_per_noise2: f64,
    /// Neighbouring plateaus closer than this latency ratio are one level split by noise.
    pub merge_ratio: f64,
    /// A plateau's points must repeat: the median of their relative spreads (IQR / median over
    /// the rounds) may not exceed this. In a transition the set is partly resident and rounds
    /// disagree; on a plateau every round finds the data in the same level.
    pub max_plateau_spread: f64,
    /// An interior plateau (one between a faster and a slower one) must span at least this
    /// many octaves of working set to count as a level: a real level is flat from the previous
    /// capacity up to its own, while the rise through a smeared transition (random page
    /// colours, a cache shared with a busy neighbour) can pause for a few points.
    pub min_plateau_octaves: f64,
}

impl Default for CapacitySettings {
    fn default() -> Self {
        Self {
            min_plateau_points: 3,
            penalty_per_noise2: 12.0,
            merge_ratio: 1.25,
            max_plateau_spread: 0.2,
            min_plateau_octaves: 1.0 / 3.0,
        }
    }
}

/// Finds plateaus and capacity edges in a working-set curve (points sorted by bytes).
///
/// 1. Segment the log latencies (penalty = `penalty_per_noise2` · noise²).
/// 2. Segments with at least `min_plateau_points` points whose rounds agree (median spread ≤
///    `max_plateau_spread`) are plateaus; the rest is transition.
/// 3. Neighbouring plateaus within `merge_ratio` of each other are merged (noise split one);
///    an interior plateau shorter than `min_plateau_octaves` that lies between a faster and a
///    slower one is dropped: it is a pause in one transition, not a level.
/// 4. Between consecutive plateaus, the transition runs from the last point of the faster
///    plateau to the first of the slower one: the capacity's interval; the capacity is its
///    geometric centre. A sharp LRU step puts the whole transition next to the capacity; where
///    pages land on random physical colours, misses start well before the capacity and end
///    well after it, roughly symmetrically in log size. Where the next level is itself
///    contended (an LLC shared with busy neighbours), the far end drifts out and the interval
///    widens with it: the verdict then says uncertain rather than trusting the centre.
/// 5. Confidence = step height over noise (saturating at 8 noise units) × the fraction of the
///    transition that rises monotonically × 0.75 if either plateau is short (< 2 · minimum)
///    ÷ the width of the transition in octaves beyond one.
pub fn capacity_edges(points: &[Point], settings: CapacitySettings) -> CapacityAnalysis {
    let noise = log_noise(points);
    let ys: Vec<f64> = points.iter().map(|p| p.ns.ln()).collect();
    let segments = segment(&ys, settings.penalty_per_noise2 * noise * noise);
    let stable = |s: &Segment| {
        let spreads: Vec<f64> = points[s.start..s.end].iter().map(|p| p.spread).collect();
        median(&spreads) <= settings.max_plateau_spread
    };
    let mut plateaus: Vec<(usize, usize)> = Vec::new();
    for s in segments
        .iter()
        .filter(|s| s.len() >= settings.min_plateau_points && stable(s))
    {
        let level = |a: usize, b: usize| median(&ys[a..b]);
        if let Some(last) = plateaus.last_mut()
            && (level(s.start, s.end) - level(last.0, last.1)).abs() < settings.merge_ratio.ln()
        {
            last.1 = s.end;
            continue;
        }
        plateaus.push((s.start, s.end));
    }
    let plateaus = drop_pauses(points, &ys, plateaus, settings.min_plateau_octaves);
    let plateaus: Vec<Plateau> = plateaus
        .into_iter()
        .map(|(start, end)| Plateau {
            start,
            end,
            from_bytes: points[start].x,
            to_bytes: points[end - 1].x,
            ns: median(&ys[start..end]).exp(),
        })
        .collect();
    let edges = plateaus
        .windows(2)
        .filter(|w| w[1].ns > w[0].ns)
        .map(|w| edge_between(points, &ys, &w[0], &w[1], noise, settings))
        .collect();
    CapacityAnalysis {
        plateaus,
        edges,
        noise,
    }
}

fn edge_between(
    points: &[Point],
    ys: &[f64],
    fast: &Plateau,
    slow: &Plateau,
    noise: f64,
    settings: CapacitySettings,
) -> Edge {
    let first = fast.end - 1;
    let last = slow.start;
    let (last_inside, first_outside) = (points[first].x, points[last].x);
    let step = slow.ns.ln() - fast.ns.ln();
    let height = (step / (8.0 * noise)).min(1.0);
    let rises = (first..last)
        .filter(|&i| ys[i + 1] >= ys[i] - noise)
        .count();
    let monotone = rises as f64 / (last - first) as f64;
    let short = fast.end - fast.start < 2 * settings.min_plateau_points
        || slow.end - slow.start < 2 * settings.min_plateau_points;
    let octaves = (first_outside / last_inside).log2();
    let confidence = height * monotone * if short { 0.75 } else { 1.0 } / octaves.max(1.0);
    Edge {
        capacity_bytes: (last_inside * first_outside).sqrt(),
        last_inside,
        first_outside,
        faster_ns: fast.ns,
        slower_ns: slow.ns,
        confidence,
    }
}

/// Drops interior plateaus that span fewer than `min_octaves` and lie between a faster and a
/// slower plateau (their level strictly between the neighbours'), repeatedly, so a transition
/// that paused for a few points is one transition.
fn drop_pauses(
    points: &[Point],
    ys: &[f64],
    mut plateaus: Vec<(usize, usize)>,
    min_octaves: f64,
) -> Vec<(usize, usize)> {
    let level = |p: &(usize, usize)| median(&ys[p.0..p.1]);
    let octaves = |p: &(usize, usize)| (points[p.1 - 1].x / points[p.0].x).log2();
    while let Some(i) = (1..plateaus.len().saturating_sub(1)).find(|&i| {
        let (before, here, after) = (&plateaus[i - 1], &plateaus[i], &plateaus[i + 1]);
        octaves(here) < min_octaves && level(before) < level(here) && level(here) < level(after)
    }) {
        plateaus.remove(i);
    }
    plateaus
}

/// The median curve without round `round` (for leave-one-out consistency: an estimate that
/// hangs on one round is fragile).
pub fn leave_one_out(points: &[Point], round: usize) -> Vec<Point> {
    points
        .iter()
        .map(|p| {
            let rest: Vec<f64> = p
                .samples
                .iter()
                .enumerate()
                .filter(|&(r, _)| r != round)
                .map(|(_, &v)| v)
                .collect();
            if rest.is_empty() {
                p.clone()
            } else {
                Point::from_samples(p.x, &rest)
            }
        })
        .collect()
}

/// The edges of a capacity analysis named by level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelEdges {
    pub l1: Option<Edge>,
    pub l2: Option<Edge>,
    /// The last cache step before the slowest plateau, when it is not the L1's or the L2's
    /// (`None`: no separate level beyond the L2 was seen — e.g. no visible L3).
    pub llc: Option<Edge>,
    /// Steps between the L2 and the LLC that fit no named level (shown, not hidden).
    pub unlabelled: Vec<Edge>,
}

impl LevelEdges {
    /// Without a separate LLC step, the working set at which the curve reached its slowest
    /// plateau bounds any LLC from above (the first point of the last transition's far side).
    pub fn llc_upper_bound(&self) -> Option<f64> {
        match (&self.llc, &self.l2) {
            (None, Some(l2)) => Some(l2.first_outside),
            _ => None,
        }
    }
}

/// Names the edges: the first is the L1's, the second the L2's, the last (if a third exists)
/// the last-level cache's; anything in between is unlabelled.
pub fn label_levels(edges: &[Edge]) -> LevelEdges {
    let mut it = edges.iter().cloned();
    let l1 = it.next();
    let l2 = it.next();
    let mut rest: Vec<Edge> = it.collect();
    let llc = rest.pop();
    LevelEdges {
        l1,
        l2,
        llc,
        unlabelled: rest,
    }
}

/// A parameter read off a step: the value and how sure the step was.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepEstimate {
    pub value: f64,
    pub confidence: f64,
}

/// Line size from the pair probe (`x` = distance of the second access in bytes): the split
/// into a low and a high group (medians, least absolute deviation in log latency) that
/// explains the curve best; the line is the first distance of the high group.
///
/// Confidence: how many points sit on the right side of the geometric middle of the two
/// groups (all of them = 1) × step height over noise (saturating at 8 noise units). `None`
/// when fewer than 3 points or no upward step.
pub fn line_size(points: &[Point]) -> Option<StepEstimate> {
    let split = best_step(points)?;
    let ys: Vec<f64> = points.iter().map(|p| p.ns.ln()).collect();
    let low = median(&ys[..split]);
    let high = median(&ys[split..]);
    let noise = log_noise(points);
    let middle = (low + high) / 2.0;
    let right_side = ys[..split].iter().filter(|&&y| y < middle).count()
        + ys[split..].iter().filter(|&&y| y >= middle).count();
    let confidence =
        (right_side as f64 / ys.len() as f64) * ((high - low) / (8.0 * noise)).min(1.0);
    Some(StepEstimate {
        value: points[split].x,
        confidence,
    })
}

/// The split index (first index of the high group) of the best single upward step, if any.
fn best_step(points: &[Point]) -> Option<usize> {
    if points.len() < 3 {
        return None;
    }
    let ys: Vec<f64> = points.iter().map(|p| p.ns.ln()).collect();
    let deviation = |v: &[f64]| {
        let m = median(v);
        v.iter().map(|y| (y - m).abs()).sum::<f64>()
    };
    (1..ys.len())
        .filter(|&k| median(&ys[k..]) > median(&ys[..k]))
        .min_by(|&a, &b| {
            let cost = |k: usize| deviation(&ys[..k]) + deviation(&ys[k..]);
            cost(a).total_cmp(&cost(b))
        })
}

/// The smallest step ratio counted as a jump (an L1 hit to an L2 hit is 3× or more on every
/// CPU we know; noise on a busy machine stays well under 1.3×).
pub const MIN_JUMP_RATIO: f64 = 1.3;

/// Finds the first jump in a curve over K (sorted by x): the baseline is the median of the
/// first few points, the reference the 90th percentile; if they differ by at least
/// [`MIN_JUMP_RATIO`], the jump is the first point above their geometric middle that is
/// followed by another point above it (one outlier is not a jump). `fits` is the x before it.
pub fn jump_capacity(points: &[Point]) -> Jump {
    let at_least = points.last().map_or(0, |p| p.x as usize);
    if points.len() < 2 {
        return Jump::None { at_least };
    }
    let ns: Vec<f64> = points.iter().map(|p| p.ns).collect();
    let base = median(&ns[..ns.len().min(4)]);
    let mut sorted = ns.clone();
    sorted.sort_by(f64::total_cmp);
    let reference = quantile(&sorted, 0.9);
    if reference < base * MIN_JUMP_RATIO {
        return Jump::None { at_least };
    }
    let middle = (base * reference).sqrt();
    for i in 1..ns.len() {
        let confirmed = i + 1 == ns.len() || ns[i + 1] > middle;
        if ns[i] > middle && confirmed {
            return Jump::At {
                fits: points[i - 1].x as usize,
                first_slow: points[i].x as usize,
            };
        }
    }
    Jump::None { at_least }
}

/// What a stride's pair of curves says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StrideVerdict {
    /// The probe jumped and the control did not (or only much later): an L1 set conflict.
    SetConflict,
    /// Both jumped at about the same K: pages or TLB, not the L1 sets.
    NotSetConflict,
    /// Neither jumped: the slots all fit (a lower bound).
    AllFit,
    /// The control jumped but not the probe: noise.
    Inconsistent,
}

impl StrideObservation {
    /// The ±control rule: a jump is an L1 set conflict only if the control, whose slots fall
    /// into different sets, holds at least twice as many slots.
    pub fn verdict(&self) -> StrideVerdict {
        match (self.probe, self.control) {
            (Jump::At { fits, .. }, Jump::None { .. }) if fits > 0 => StrideVerdict::SetConflict,
            (Jump::At { fits, .. }, Jump::At { fits: control, .. })
                if control >= 2 * fits.max(1) =>
            {
                StrideVerdict::SetConflict
            }
            (Jump::At { .. }, _) => StrideVerdict::NotSetConflict,
            (Jump::None { .. }, Jump::None { .. }) => StrideVerdict::AllFit,
            (Jump::None { .. }, Jump::At { .. }) => StrideVerdict::Inconsistent,
        }
    }
}

/// A set-associative model of the L1 fitted to the conflict probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaysSetsFit {
    pub ways: usize,
    pub sets: usize,
    pub line: usize,
    /// Fraction of usable strides the model explains (exact = 1, off by one slot = ½).
    pub confidence: f64,
    /// Strides used (set conflicts and all-fit lower bounds).
    pub strides_used: usize,
    /// The best model with a different (ways, sets), and its score, for the evidence.
    pub runner_up: Option<(usize, usize, f64)>,
}

/// How many distinct lines at `stride_lines` an L1 with `ways` × `sets` holds:
/// `ways · sets / gcd(stride_lines, sets)` — the stride only reaches that many sets.
pub fn predicted_fit(ways: usize, sets: usize, stride_lines: usize) -> usize {
    ways * (sets / gcd(stride_lines as u64, sets as u64) as usize)
}

/// The largest set count and way count searched.
pub const MAX_SETS: usize = 8192;
pub const MAX_WAYS: usize = 64;

/// Fits (ways, sets) to the conflict observations for a known line size: every model with
/// `sets ≤ MAX_SETS`, `ways ≤ MAX_WAYS` is scored on each stride that is a multiple of the line
/// and is a set conflict (exact predicted fit = 1, off by one = ½) or an all-fit lower bound
/// (1 if the model predicts at least that many). The best score wins; ties go to the smaller
/// cache, then to fewer sets (the simplest model that explains the data). `None` without any
/// set-conflict stride.
pub fn fit_ways_sets(observations: &[StrideObservation], line: usize) -> Option<WaysSetsFit> {
    if line == 0 {
        return None;
    }
    let usable: Vec<(usize, StrideVerdict, Jump)> = observations
        .iter()
        .filter(|o| o.stride_bytes % line == 0 && o.stride_bytes > 0)
        .map(|o| (o.stride_bytes / line, o.verdict(), o.probe))
        .filter(|(_, v, _)| matches!(v, StrideVerdict::SetConflict | StrideVerdict::AllFit))
        .collect();
    if !usable
        .iter()
        .any(|(_, v, _)| *v == StrideVerdict::SetConflict)
    {
        return None;
    }
    let score = |ways: usize, sets: usize| -> f64 {
        usable
            .iter()
            .map(|&(m, _, jump)| {
                let predicted = predicted_fit(ways, sets, m);
                match jump {
                    Jump::At { fits, .. } if fits == predicted => 1.0,
                    Jump::At { fits, .. } if fits.abs_diff(predicted) == 1 => 0.5,
                    Jump::At { .. } => 0.0,
                    Jump::None { at_least } if predicted >= at_least => 1.0,
                    Jump::None { .. } => 0.0,
                }
            })
            .sum()
    };
    // Best first: higher score, then the smaller cache, then fewer sets.
    let order = |a: &(f64, usize, usize), b: &(f64, usize, usize)| {
        b.0.total_cmp(&a.0)
            .then((a.1 * a.2, a.2).cmp(&(b.1 * b.2, b.2)))
    };
    let mut best: Option<(f64, usize, usize)> = None;
    let mut runner_up: Option<(f64, usize, usize)> = None;
    for sets in 1..=MAX_SETS {
        for ways in 1..=MAX_WAYS {
            let candidate = (score(ways, sets), ways, sets);
            if best.is_none_or(|b| order(&candidate, &b).is_lt()) {
                runner_up = best;
                best = Some(candidate);
            } else if runner_up.is_none_or(|r| order(&candidate, &r).is_lt()) {
                runner_up = Some(candidate);
            }
        }
    }
    let (s, ways, sets) = best?;
    let runner_up = runner_up.map(|(score, w, st)| (w, st, score));
    Some(WaysSetsFit {
        ways,
        sets,
        line,
        confidence: s / usable.len() as f64,
        strides_used: usable.len(),
        runner_up,
    })
}

/// The L1 data-TLB reach, from the page-spread curve and its packed control (x = pages).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TlbEstimate {
    /// Pages that still fit (the last point before the jump).
    pub entries: usize,
    /// The first page count that was slow.
    pub first_slow: usize,
    /// `entries · page_bytes`.
    pub reach_bytes: usize,
    /// True when the control stayed flat past the jump: the jump is the TLB, not the cache.
    pub is_tlb: bool,
    pub confidence: f64,
}

/// Reads the TLB reach: the spread curve must jump and the packed control must not (or only
/// at twice the page count); otherwise the jump is flagged as not a TLB effect. Confidence =
/// 1 for a clean TLB jump, ½ when the spread points right after the jump scatter more than
/// 20 %, 0.3 when the control contradicts it. `None` when the spread curve never jumps.
pub fn tlb_reach(spread: &[Point], packed: &[Point], page_bytes: usize) -> Option<TlbEstimate> {
    let Jump::At { fits, first_slow } = jump_capacity(spread) else {
        return None;
    };
    let control = jump_capacity(packed);
    let is_tlb = match control {
        Jump::None { .. } => true,
        Jump::At { fits: c, .. } => c >= 2 * fits,
    };
    let after: Vec<&Point> = spread
        .iter()
        .filter(|p| p.x as usize >= first_slow)
        .take(3)
        .collect();
    let scattered = after.iter().any(|p| p.spread > 0.2);
    let confidence = if !is_tlb {
        0.3
    } else if scattered {
        0.5
    } else {
        1.0
    };
    Some(TlbEstimate {
        entries: fits,
        first_slow,
        reach_bytes: fits * page_bytes,
        is_tlb,
        confidence,
    })
}

/// The fraction of `values` within `tolerance` (relative) of their median: agreement across
/// rounds.
pub fn agreement(values: &[f64], tolerance: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let m = median(values);
    values
        .iter()
        .filter(|&&v| (v - m).abs() <= tolerance * m.abs() + 1e-9)
        .count() as f64
        / values.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(xs: &[f64], f: impl Fn(f64) -> f64) -> Vec<Point> {
        xs.iter().map(|&x| Point::exact(x, f(x))).collect()
    }

    #[test]
    fn segmentation_finds_exact_steps() {
        let ys = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 3.0, 3.0];
        let s = segment(&ys, 0.1);
        let bounds: Vec<(usize, usize)> = s.iter().map(|s| (s.start, s.end)).collect();
        assert_eq!(bounds, vec![(0, 3), (3, 7), (7, 9)]);
        assert_eq!(
            segment(&ys, 100.0).len(),
            1,
            "a huge penalty keeps one segment"
        );
        assert!(segment(&[], 1.0).is_empty());
    }

    #[test]
    fn point_median_and_spread() {
        let p = Point::from_samples(1.0, &[5.0, 1.0, 2.0, 100.0, 3.0]);
        assert_eq!(p.ns, 3.0);
        assert!((p.spread - (5.0 - 2.0) / 3.0).abs() < 1e-12);
        assert_eq!(p.samples.len(), 5);
    }

    #[test]
    fn jump_rules() {
        let xs: Vec<f64> = (1..=20).map(|k| k as f64).collect();
        let step = curve(&xs, |k| if k <= 8.0 { 1.4 } else { 4.9 });
        assert_eq!(
            jump_capacity(&step),
            Jump::At {
                fits: 8,
                first_slow: 9
            }
        );
        let flat = curve(&xs, |_| 1.4);
        assert_eq!(jump_capacity(&flat), Jump::None { at_least: 20 });
        let mut outlier = flat.clone();
        outlier[5].ns = 9.0;
        assert_eq!(
            jump_capacity(&outlier),
            Jump::None { at_least: 20 },
            "one outlier is not a jump"
        );
        let mut late = step.clone();
        late[3].ns = 8.0;
        assert_eq!(
            jump_capacity(&late),
            Jump::At {
                fits: 8,
                first_slow: 9
            },
            "an isolated early outlier is skipped"
        );
    }

    #[test]
    fn stride_verdicts_follow_the_control_rule() {
        let at = |fits| Jump::At {
            fits,
            first_slow: fits + 1,
        };
        let none = Jump::None { at_least: 40 };
        let obs = |probe, control| StrideObservation {
            stride_bytes: 4096,
            probe,
            control,
        };
        assert_eq!(obs(at(8), none).verdict(), StrideVerdict::SetConflict);
        assert_eq!(obs(at(8), at(32)).verdict(), StrideVerdict::SetConflict);
        assert_eq!(obs(at(8), at(9)).verdict(), StrideVerdict::NotSetConflict);
        assert_eq!(obs(none, none).verdict(), StrideVerdict::AllFit);
        assert_eq!(obs(none, at(5)).verdict(), StrideVerdict::Inconsistent);
    }

    #[test]
    fn predicted_fit_uses_the_gcd() {
        // Seed 004: 64 sets, a stride of 16 lines reaches 64 / gcd(16, 64) = 4 sets.
        assert_eq!(predicted_fit(8, 64, 16), 32);
        assert_eq!(predicted_fit(8, 64, 64), 8);
        assert_eq!(predicted_fit(8, 64, 48), 32);
        assert_eq!(predicted_fit(12, 48, 16), 36);
        assert_eq!(predicted_fit(8, 64, 65), 512);
    }

    #[test]
    fn agreement_counts_values_near_the_median() {
        assert_eq!(agreement(&[64.0, 64.0, 64.0, 128.0], 0.0), 0.75);
        assert_eq!(agreement(&[], 0.1), 0.0);
    }

    #[test]
    fn labels_name_first_second_and_last() {
        let e = |c: f64| Edge {
            capacity_bytes: c,
            last_inside: c,
            first_outside: c,
            faster_ns: 1.0,
            slower_ns: 2.0,
            confidence: 1.0,
        };
        let two = label_levels(&[e(1.0), e(2.0)]);
        assert!(two.llc.is_none());
        let four = label_levels(&[e(1.0), e(2.0), e(3.0), e(4.0)]);
        assert_eq!(four.llc.map(|e| e.capacity_bytes), Some(4.0));
        assert_eq!(four.unlabelled.len(), 1);
    }
}
