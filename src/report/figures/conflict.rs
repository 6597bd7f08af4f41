//! What the conflict-probe figures (1–3) share: the probe records and the set model's
//! predictions recorded with them.

use crate::report::chart::PALETTE;
use crate::report::data::{self, Estimate};
use crate::results::{LevelModel, PointRecord, ResultsDocument};

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

pub(super) fn k_colour(ks: &[u64], k: u64) -> crate::report::chart::Colour {
    let i = ks.iter().position(|&x| x == k).unwrap_or(0);
    PALETTE[i % PALETTE.len()]
}
