//! What each stage of `infer` hands to the parameters: the curves and fits of the probes, and
//! what the system reports for the same levels. Plain data, so the run (which fills it) and the
//! parameters (which read it) share it without importing each other.

use crate::cache::geometry::{CacheKind, CacheLevel, Geometry};
use crate::results::infer_doc::{CapacityAnalysis, ConflictCurves, Point};
use crate::results::tlb::DtlbLevel;

use super::analysis::{LevelEdges, StepEstimate, TlbEstimate, WaysSetsFit};

/// What the working-set sweep found.
pub struct CapacityStage {
    pub curve: Vec<Point>,
    pub analysis: CapacityAnalysis,
    pub levels: LevelEdges,
}

/// What the line-pair probe found.
pub struct LineStage {
    pub curve: Vec<Point>,
    pub line: Option<StepEstimate>,
    pub region: usize,
}

/// What the conflict strides found, with the model fitted on all rounds and on each alone.
pub struct ConflictStage {
    pub curves: Vec<ConflictCurves>,
    pub fit: Option<WaysSetsFit>,
    pub round_fits: Vec<Option<(usize, usize)>>,
}

/// What the TLB probe and its control found.
pub struct TlbStage {
    pub spread: Vec<Point>,
    pub packed: Vec<Point>,
    pub tlb: Option<TlbEstimate>,
}

/// What the system reports (sysfs, cross-checked with CPUID by [`Geometry::detect`]; the data
/// TLB from CPUID, as the machine manifest records it) for the levels `infer` measures; each
/// absent when the system does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reported {
    pub l1d: Option<CacheLevel>,
    pub l2: Option<CacheLevel>,
    /// The highest data/unified level above the L2.
    pub llc: Option<CacheLevel>,
    /// The first-level data TLB for the pages the TLB probe spreads its lines over.
    pub l1_dtlb: Option<DtlbLevel>,
}

/// The first-level data TLB's entries for pages of `page` bytes, out of the levels CPUID
/// reports (`harness::machine::dtlb_levels`).
pub fn reported_l1_dtlb(levels: &[DtlbLevel], page: u64) -> Option<DtlbLevel> {
    levels
        .iter()
        .find(|l| l.level == 1 && l.page == page)
        .cloned()
}

/// Picks the L1d, the L2 and the last level above the L2 out of a geometry.
pub fn reported_levels(geometry: &Geometry) -> Reported {
    let data = geometry.data_levels();
    let at = |level: u8| data.iter().find(|l| l.level == level).cloned();
    Reported {
        l1d: data
            .iter()
            .find(|l| l.level == 1 && l.kind == CacheKind::Data)
            .cloned(),
        l2: at(2),
        llc: data
            .iter()
            .filter(|l| l.level > 2)
            .max_by_key(|l| l.level)
            .cloned(),
        l1_dtlb: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_levels_pick_l1d_l2_and_the_last_level() {
        let zen4 = reported_levels(&Geometry::preset("amd-zen4").unwrap());
        assert_eq!(
            zen4.l1d.map(|l| (l.size, l.ways, l.sets)),
            Some((32 << 10, 8, 64))
        );
        assert_eq!(zen4.l2.map(|l| l.size), Some(1 << 20));
        assert_eq!(zen4.llc.map(|l| l.size), Some(32 << 20));
        let design_vm = reported_levels(&Geometry::preset("design-vm").unwrap());
        assert!(
            design_vm.llc.is_none(),
            "no L3 listed: nothing to compare the LLC with"
        );
        assert_eq!(reported_levels(&Geometry::default()), Reported::default());
    }

    #[test]
    fn the_l1_dtlb_is_the_first_level_for_the_probes_pages() {
        let level = |level: u8, page: u64, entries: u64| DtlbLevel {
            level,
            page,
            entries,
            source: "cpuid 0x8000_0005".into(),
        };
        // A Zen 3 as CPUID describes it: L1 64 × 4 KiB and 64 × 2 MiB, L2 2048 × 4 KiB.
        let zen3 = [
            level(1, 4 << 10, 64),
            level(2, 4 << 10, 2048),
            level(1, 2 << 20, 64),
        ];
        // (levels, page, entries found)
        let cases: [(&[DtlbLevel], u64, Option<u64>); 4] = [
            (&zen3, 4 << 10, Some(64)),
            (&zen3, 2 << 20, Some(64)),
            (&zen3[1..2], 4 << 10, None),
            (&[], 4 << 10, None),
        ];
        for (levels, page, entries) in cases {
            assert_eq!(
                reported_l1_dtlb(levels, page).map(|l| l.entries),
                entries,
                "{page}"
            );
        }
    }
}
