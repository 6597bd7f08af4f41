//! What the conflict-probe figures (1–3) share: the probe records and the set/GCD model's
//! prediction for a cyclic pass.

use std::collections::{BTreeMap, HashMap};

use super::SIM_BASE;
use crate::cache::geometry::CacheLevel;
use crate::report::chart::PALETTE;
use crate::report::data::{self, Estimate};
use crate::results::{PointRecord, ResultsDocument};

/// Predicted misses per access at each level for a warm, repeated cyclic pass over `count`
/// lines `stride` bytes apart under LRU: a line misses at a level iff its set there holds more
/// lines (among those that reached the level) than the level has ways — the set/GCD model
/// applied level by level.
pub fn predicted_cyclic_misses(levels: &[CacheLevel], stride: i64, count: u64) -> Vec<f64> {
    let line_of = |i: u64, line: u32| {
        SIM_BASE.wrapping_add((i as i64).wrapping_mul(stride) as u64) >> line.trailing_zeros()
    };
    let mut reaching: Vec<u64> = (0..count).collect();
    let mut out = Vec::new();
    for level in levels {
        let sets = u64::from(level.sets.max(1));
        let mut lines_of: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for &i in &reaching {
            lines_of.entry(line_of(i, level.line)).or_default().push(i);
        }
        let mut per_set: HashMap<u64, u64> = HashMap::new();
        for line in lines_of.keys() {
            *per_set.entry(line % sets).or_default() += 1;
        }
        let mut missing = Vec::new();
        for (line, accesses) in &lines_of {
            if per_set[&(line % sets)] > u64::from(level.ways) {
                missing.extend(accesses);
            }
        }
        out.push(if count == 0 {
            0.0
        } else {
            missing.len() as f64 / count as f64
        });
        reaching = missing;
    }
    out
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

pub(super) fn k_colour(ks: &[u64], k: u64) -> crate::report::chart::Colour {
    let i = ks.iter().position(|&x| x == k).unwrap_or(0);
    PALETTE[i % PALETTE.len()]
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::parse_cache_override;

    #[test]
    fn cyclic_prediction_follows_the_set_model() {
        // 32 KiB 8-way, 64 sets, 64 B lines: 4096 B uses one set.
        let l1 = parse_cache_override("L1d=32K,8,64").unwrap();
        let l2 = parse_cache_override("L2=1M,8,64").unwrap();
        let levels = [l1, l2];
        // (stride, K, expected L1, expected L2)
        let cases: &[(i64, u64, f64, f64)] = &[
            (4096, 8, 0.0, 0.0),
            (4096, 9, 1.0, 0.0),
            (4104, 24, 0.0, 0.0),
            (4088, 24, 0.0, 0.0),
            (64, 512, 0.0, 0.0),
            (4096, 16, 1.0, 0.0),
        ];
        for &(s, k, e1, e2) in cases {
            let p = predicted_cyclic_misses(&levels, s, k);
            assert_eq!(p, vec![e1, e2], "stride {s} K {k}");
        }
        // 4096 lines at a stride of one line overflow a 512-line L1 in every set.
        assert_eq!(predicted_cyclic_misses(&levels, 64, 4096)[0], 1.0);
    }
}
