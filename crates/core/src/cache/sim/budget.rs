//! The up-front cost of a simulated hierarchy: the bytes of tag and replacement state
//! [`super::Hierarchy::new`] allocates before the first access, computed from the geometry
//! alone with checked arithmetic, and the default budget it is checked against.

use super::Policy;
use crate::cache::geometry::CacheLevel;

/// Simulated state a hierarchy may allocate before its first access, by default (1 GiB):
/// the machine this runs on must not be asked for what a typo in `--cache` implies.
pub const DEFAULT_STATE_BUDGET: u64 = 1 << 30;

/// `1234567` → `1.2 MiB` (or "more than 2^64 bytes": the state estimate saturates).
pub(super) fn size_text(bytes: u64) -> String {
    if bytes == u64::MAX {
        return "more than 2^64 bytes".to_string();
    }
    crate::units::format_bytes_tenths(bytes)
}

/// Bytes of the state [`Hierarchy::new`](super::Hierarchy::new) allocates up front for
/// `levels` under `policy`: 8 per way of every set (tags) plus each set's replacement state, as
/// the policy states it (a 4-byte ring head under LRU and FIFO, 8 bytes of tree bits under
/// pseudo-LRU). Checked arithmetic: `u64::MAX` on overflow. The 3C shadow and line tables grow
/// with the lines touched, so they are not part of it.
pub fn state_bytes(levels: &[CacheLevel], policy: Policy) -> u64 {
    let per_set = policy.rule().state_bytes_per_set();
    levels
        .iter()
        .try_fold(0u64, |total, level| {
            let set_bytes = u64::from(level.ways).checked_mul(8)?.checked_add(per_set)?;
            total.checked_add(u64::from(level.sets).checked_mul(set_bytes)?)
        })
        .unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::parse_cache_override;

    #[test]
    fn state_counts_tags_and_replacement_state_per_set() {
        let l1 = parse_cache_override("L1d=32K,8,64").unwrap();
        assert_eq!(
            state_bytes(std::slice::from_ref(&l1), Policy::LRU),
            64 * (8 * 8 + 4)
        );
        assert_eq!(state_bytes(&[l1], Policy::random(1)), 64 * 8 * 8);
        let huge = parse_cache_override("L1d=4G,1,2").unwrap();
        assert!(state_bytes(&[huge], Policy::LRU) > DEFAULT_STATE_BUDGET);
        assert_eq!(size_text(3 << 29), "1.5 GiB");
    }
}
