//! What this CPU reports of its data TLB through CPUID: AMD's leaves 0x8000_0005 (L1) and
//! 0x8000_0006 (L2), entries and associativity per page size; Intel's deterministic address
//! translation leaf 0x18, ways and sets per level and the page sizes each maps. Intel parts
//! without leaf 0x18 describe their TLBs only in leaf 2's descriptor bytes, which this does
//! not decode, and a VM may zero every TLB field (the lab's Intel Xeon KVM guest does): both
//! report nothing, and [`super::choose`] lets a preset stand in and says so.

/// One data-TLB level for one page size, as CPUID reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportedTlb {
    /// 1 for the first-level data TLB, 2 for the second-level (often unified) TLB.
    pub level: u8,
    /// The page size its entries map, in bytes.
    pub page_bytes: u64,
    pub entries: u64,
    /// None where the leaf gives no usable associativity (AMD's "see another leaf" codes).
    pub ways: Option<u32>,
    /// The leaf, as `0x8000_0005`.
    pub leaf: &'static str,
}

/// The CPU's vendor string (`GenuineIntel`, `AuthenticAMD`), on x86.
pub fn vendor() -> Option<String> {
    #[cfg(target_arch = "x86_64")]
    {
        raw_cpuid::CpuId::new()
            .get_vendor_info()
            .map(|v| v.as_str().to_string())
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

/// Ways from an associativity field: fully associative is `entries` ways; the codes that
/// name no count are `None`.
#[cfg(target_arch = "x86_64")]
fn ways_of(assoc: raw_cpuid::Associativity, entries: u64) -> Option<u32> {
    use raw_cpuid::Associativity::{DirectMapped, FullyAssociative, NWay};
    match assoc {
        DirectMapped => Some(1),
        NWay(n) => Some(u32::from(n)),
        FullyAssociative => u32::try_from(entries).ok(),
        _ => None,
    }
}

/// Every data-TLB level and page size (4 KiB, 2 MiB) CPUID reports with a nonzero entry
/// count, sorted by page size then level, one per (page, level).
pub fn reported() -> Vec<ReportedTlb> {
    #[cfg(target_arch = "x86_64")]
    {
        let cpuid = raw_cpuid::CpuId::new();
        let mut out = Vec::new();
        let mut push = |level: u8, page_bytes: u64, entries: u64, ways, leaf| {
            if entries > 0 {
                out.push(ReportedTlb {
                    level,
                    page_bytes,
                    entries,
                    ways,
                    leaf,
                });
            }
        };
        if let Some(l1) = cpuid.get_l1_cache_and_tlb_info() {
            let leaf = "0x8000_0005";
            let (e4, e2) = (
                u64::from(l1.dtlb_4k_size()),
                u64::from(l1.dtlb_2m_4m_size()),
            );
            push(
                1,
                4 << 10,
                e4,
                ways_of(l1.dtlb_4k_associativity(), e4),
                leaf,
            );
            push(
                1,
                2 << 20,
                e2,
                ways_of(l1.dtlb_2m_4m_associativity(), e2),
                leaf,
            );
            // Leaf 0x8000_0006's TLB fields are AMD's only (reserved on Intel).
            if let Some(l2) = cpuid.get_l2_l3_cache_and_tlb_info() {
                let leaf = "0x8000_0006";
                let (e4, e2) = (
                    u64::from(l2.dtlb_4k_size()),
                    u64::from(l2.dtlb_2m_4m_size()),
                );
                push(
                    2,
                    4 << 10,
                    e4,
                    ways_of(l2.dtlb_4k_associativity(), e4),
                    leaf,
                );
                push(
                    2,
                    2 << 20,
                    e2,
                    ways_of(l2.dtlb_2m_4m_associativity(), e2),
                    leaf,
                );
            }
        } else if let Some(dat) = cpuid.get_deterministic_address_translation_info() {
            use raw_cpuid::DatType;
            for d in dat {
                let data = matches!(
                    d.cache_type(),
                    DatType::DataTLB | DatType::UnifiedTLB | DatType::LoadOnly
                );
                if !data {
                    continue;
                }
                let entries = u64::from(d.ways()) * u64::from(d.sets());
                let ways = Some(u32::from(d.ways())).filter(|&w| w > 0);
                if d.has_4k_entries() {
                    push(d.cache_level(), 4 << 10, entries, ways, "0x18");
                }
                if d.has_2mb_entries() {
                    push(d.cache_level(), 2 << 20, entries, ways, "0x18");
                }
            }
        }
        out.sort_by_key(|l| (l.page_bytes, l.level));
        out.dedup_by_key(|l| (l.page_bytes, l.level));
        out
    }
    #[cfg(not(target_arch = "x86_64"))]
    Vec::new()
}
