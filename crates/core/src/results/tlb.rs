//! The data TLB as the machine manifest records it (`info.dtlb`): per level and page size, the
//! entries CPUID reports, so a report can mark the TLB's reach (entries × page size) on the
//! working-set curve without asking the CPU itself. Validated on load: a manifest without the
//! field (older documents) reads as `None`; an empty list means CPUID did not say.

use serde::{Deserialize, Serialize};

/// Why a recorded DTLB is refused: the JSON path of the value and the rule it breaks (the
/// validator turns it into its own error, so this file imports nothing of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadDtlb {
    pub field: String,
    pub message: String,
}

/// Page sizes a DTLB entry may map: 4 KiB, 2 MiB, 4 MiB, 1 GiB.
pub const PAGE_SIZES: [u64; 4] = [4 << 10, 2 << 20, 4 << 20, 1 << 30];

/// Most entries one DTLB level may claim (the largest parts have a few thousand).
pub const MAX_DTLB_ENTRIES: u64 = 1 << 16;

/// One level of the data TLB for one page size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DtlbLevel {
    /// 1 for the first-level DTLB, 2 for the second-level (often unified) TLB.
    pub level: u8,
    /// The page size its entries map, in bytes.
    pub page: u64,
    pub entries: u64,
    /// Where the number came from (`cpuid 0x8000_0005`, `cpuid 0x18`, …).
    pub source: String,
}

impl DtlbLevel {
    /// Bytes the level maps without a miss: entries × page size.
    pub fn reach(&self) -> u64 {
        self.entries.saturating_mul(self.page)
    }
}

/// The manifest's `info.dtlb`: `None` when absent, else every level checked (a level in 1..=3,
/// a known page size, 1..=[`MAX_DTLB_ENTRIES`] entries, at most 16 levels).
pub fn manifest_dtlb(info: &serde_json::Value) -> Result<Option<Vec<DtlbLevel>>, BadDtlb> {
    let Some(value) = info.get("dtlb") else {
        return Ok(None);
    };
    let bad = |field: String, message: String| BadDtlb { field, message };
    let levels = Vec::<DtlbLevel>::deserialize(value).map_err(|e| {
        bad(
            "info.dtlb".into(),
            format!("must be a list of DTLB levels: {e}"),
        )
    })?;
    if levels.len() > 16 {
        return Err(bad("info.dtlb".into(), "has more than 16 levels".into()));
    }
    for (i, l) in levels.iter().enumerate() {
        let at = format!("info.dtlb[{i}]");
        if !(1..=3).contains(&l.level) {
            return Err(bad(
                format!("{at}.level"),
                format!("{} is outside 1..=3", l.level),
            ));
        }
        if !PAGE_SIZES.contains(&l.page) {
            return Err(bad(
                format!("{at}.page"),
                format!(
                    "{} B is not a page size (4 KiB, 2 MiB, 4 MiB, 1 GiB)",
                    l.page
                ),
            ));
        }
        if !(1..=MAX_DTLB_ENTRIES).contains(&l.entries) {
            return Err(bad(
                format!("{at}.entries"),
                format!("{} is outside 1..={MAX_DTLB_ENTRIES}", l.entries),
            ));
        }
    }
    Ok(Some(levels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dtlb_levels_load_when_sound_and_name_the_field_when_not() {
        assert_eq!(manifest_dtlb(&json!({"cpus": 2})).unwrap(), None);
        assert_eq!(manifest_dtlb(&json!({"dtlb": []})).unwrap(), Some(vec![]));
        let good = json!({"dtlb": [{"level": 1, "page": 4096, "entries": 64, "source": "cpuid"}]});
        let levels = manifest_dtlb(&good).unwrap().unwrap();
        assert_eq!(levels[0].reach(), 256 << 10);
        for (bad, field) in [
            (json!({"dtlb": 3}), "info.dtlb"),
            (
                json!({"dtlb": [{"level": 0, "page": 4096, "entries": 64, "source": ""}]}),
                "info.dtlb[0].level",
            ),
            (
                json!({"dtlb": [{"level": 1, "page": 5000, "entries": 64, "source": ""}]}),
                "info.dtlb[0].page",
            ),
            (
                json!({"dtlb": [{"level": 1, "page": 4096, "entries": 0, "source": ""}]}),
                "info.dtlb[0].entries",
            ),
        ] {
            assert_eq!(manifest_dtlb(&bad).unwrap_err().field, field, "{bad}");
        }
    }
}
