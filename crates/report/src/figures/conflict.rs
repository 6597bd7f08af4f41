//! What the conflict-probe figures (1–3) share: the probe records and the set model's
//! predictions recorded with them.

use crate::chart::PALETTE;
use crate::claims::Claim;
use crate::data::{self, Estimate};
use stridelab_core::results::{CacheLevel, LevelModel, PointRecord, ResultsDocument};

/// Predicted misses per access at each level for a warm, repeated cyclic pass of `k` loads
/// `stride` bytes apart, as recorded with the probe of that stride and K (empty when no such
/// probe carries a prediction).
pub fn predicted_cyclic_misses(probes: &[Probe], stride: i64, k: u64) -> Vec<f64> {
    probes
        .iter()
        .filter(|p| p.stride_bytes == stride && p.k == k)
        .find_map(|p| {
            let levels = &data::pattern(p.record)?.levels;
            levels
                .iter()
                .map(|l| l.cyclic_misses_per_access)
                .collect::<Option<Vec<f64>>>()
        })
        .unwrap_or_default()
}

/// One conflict probe record.
pub(super) struct Probe<'a> {
    pub(super) stride_bytes: i64,
    pub(super) k: u64,
    pub(super) ns: Option<Estimate>,
    pub(super) record: &'a PointRecord,
}

/// The conflict probes of one mode (`lat` preferred: dependent loads show latency).
pub(super) fn probes(doc: &ResultsDocument) -> Vec<Probe<'_>> {
    let all: Vec<&PointRecord> = data::of_kernel(doc, "conflict").collect();
    let mode = if all.iter().any(|r| data::text(r, "mode") == Some("lat")) {
        Some("lat")
    } else {
        all.first().and_then(|r| data::text(r, "mode"))
    };
    all.into_iter()
        .filter(|r| data::text(r, "mode") == mode)
        .filter_map(|r| {
            Some(Probe {
                stride_bytes: data::int(r, "stride")? as i64 * 8,
                k: data::int(r, "count")?,
                ns: data::ns_per_element(r),
                record: r,
            })
        })
        .collect()
}

impl Probe<'_> {
    /// The set model recorded with this probe at level `index`.
    pub(super) fn model(&self, index: usize) -> Option<&LevelModel> {
        data::model_level(self.record, index)
    }
}

pub(super) fn k_colour(ks: &[u64], k: u64) -> crate::chart::Colour {
    let i = ks.iter().position(|&x| x == k).unwrap_or(0);
    PALETTE[i % PALETTE.len()]
}

/// The probes at strides that are a multiple of `span` bytes (sets × line: every slot in one
/// set), or, with `multiples` false, the ±1-element controls beside them.
pub(super) fn at_multiples<'p, 'a>(
    probes: &'p [Probe<'a>],
    span: u64,
    multiples: bool,
) -> Vec<&'p Probe<'a>> {
    probes
        .iter()
        .filter(|p| (p.stride_bytes.unsigned_abs() % span.max(1) == 0) == multiples)
        .collect()
}

/// `4088 B, 4104 B`: the distinct strides of some probes.
pub(super) fn stride_list(probes: &[&Probe]) -> String {
    super::common::distinct(probes.iter().map(|p| p.stride_bytes))
        .iter()
        .map(|s| format!("{s} B"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "miss nothing once warm", "miss on every load once warm" or "miss 0.200–0.500 per load once
/// warm": simulated first-level misses after the first pass, in words.
pub(super) fn warm_miss_words(probes: &[&Probe]) -> String {
    let warm: Vec<f64> = probes
        .iter()
        .filter_map(|p| super::warm_misses_per_load(p.record, 0))
        .collect();
    if warm.is_empty() {
        return "have no simulated misses".into();
    }
    let lo = warm.iter().copied().fold(f64::INFINITY, f64::min);
    if warm.iter().all(|&w| w == 0.0) {
        "miss nothing once warm".into()
    } else if lo >= 0.99 {
        "miss on every load once warm".into()
    } else {
        format!(
            "miss {} per load once warm",
            crate::claims::value_range(&warm)
        )
    }
}

/// The ±1-element controls in numbers: the sets the model says they use, whether those sets
/// have the ways for their K lines, and their simulated misses — no adjective the data do not
/// give ("many sets" would be false where K slots 8 B apart in the line share a set).
pub(super) fn controls_claim(probes: &[Probe], l1: &CacheLevel) -> Option<Claim> {
    let controls = at_multiples(probes, l1.set_span(), false);
    if controls.is_empty() {
        return None;
    }
    let strides = stride_list(&controls);
    let sets: Vec<u64> = controls
        .iter()
        .filter_map(|p| p.model(0).map(|m| m.sets_used))
        .collect();
    let misses = warm_miss_words(&controls);
    if sets.is_empty() {
        return Some(Claim::derived(
            "conflict.controls",
            format!(
                "The ±1-element controls ({strides}) {misses} at {} (simulated); this file \
                 records no set model, so the sets they use are not shown.",
                l1.name
            ),
        ));
    }
    let few = sets
        .iter()
        .max()
        .is_some_and(|&hi| hi * 8 <= u64::from(l1.sets));
    let ways = u64::from(l1.ways);
    // Capacity of the sets a control uses against its K (sets used × ways ≥ K is needed for
    // the lines to stay; the simulation says whether they do).
    let short: Vec<u64> = controls
        .iter()
        .filter(|p| p.model(0).is_some_and(|m| m.sets_used * ways < p.k))
        .map(|p| p.k)
        .collect();
    let room = if short.is_empty() {
        format!(
            "their sets × {ways} ways have room for every K up to {}",
            controls.iter().map(|p| p.k).max().unwrap_or(0)
        )
    } else {
        format!(
            "at K = {} their sets × {ways} ways have no room for K lines",
            crate::claims::count_range(short)
        )
    };
    Some(Claim::derived(
        "conflict.controls",
        format!(
            "The ±1-element controls ({strides}) use {}{} of the {} {} sets (model); {room}, \
             and they {misses} (simulated).",
            if few { "only " } else { "" },
            crate::claims::count_range(sets.iter().copied()),
            l1.sets,
            l1.name,
        ),
    ))
}

/// The conflicting strides in numbers: the sets they use and their misses below and above
/// the ways.
pub(super) fn multiples_claim(probes: &[Probe], l1: &CacheLevel) -> Option<Claim> {
    let multiples = at_multiples(probes, l1.set_span(), true);
    if multiples.is_empty() {
        return None;
    }
    let ways = u64::from(l1.ways);
    let (within, beyond): (Vec<&Probe>, Vec<&Probe>) = multiples.iter().partition(|p| p.k <= ways);
    let used: Vec<u64> = multiples
        .iter()
        .filter_map(|p| p.model(0).map(|m| m.sets_used))
        .collect();
    let sets = if used.is_empty() {
        ",".to_string()
    } else {
        format!(
            " the K loads use {} of the {} sets (model);",
            crate::claims::count_range(used),
            l1.sets
        )
    };
    let ks = |ps: &[&Probe]| {
        super::common::distinct(ps.iter().map(|p| p.k))
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !within.is_empty() {
        parts.push(format!(
            "with K = {} (≤ {ways} ways) they {}",
            ks(&within),
            warm_miss_words(&within)
        ));
    }
    if !beyond.is_empty() {
        parts.push(format!(
            "with K = {} they {}",
            ks(&beyond),
            warm_miss_words(&beyond)
        ));
    }
    Some(Claim::derived(
        "conflict.multiples",
        format!(
            "At multiples of {} (sets × line of {}: {}){sets} {} (simulated).",
            crate::chart::format_bytes(l1.set_span() as f64),
            l1.name,
            stride_list(&multiples),
            parts.join("; ")
        ),
    ))
}
