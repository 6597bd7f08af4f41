//! Working-set sizes as suite data: a `[[point]]` with a `reach` table walks one size
//! parameter in doubling steps from a fixed start to past the last-level cache of the geometry
//! the run simulates, resolved when the plan is built. The LLC is not known when the suite is
//! written (32 MiB here, several hundred MiB on a large Intel part), so the end is a rule:
//!
//! ```toml
//! [[point]]
//! kernel = "chase"
//! reach = { param = "bytes", from = "16K", llc = 4 }
//! ```
//!
//! Sizes: `from`, 2·`from`, 4·`from`, … up to and including the first one at least `llc` times
//! the largest data level (`llc` ≥ 2, so the curve always has a DRAM plateau), a level larger
//! than any shipped part's counted at that bound ([`MAX_PLAUSIBLE_INSTANCE`]: a VM that
//! reports a 260 MiB L3 would otherwise chase 2 GiB in the quick suite). A size is bytes
//! (K, M, G suffixes). At most [`MAX_REACH_SIZES`] sizes and [`MAX_REACH_BYTES`] bytes: a
//! geometry that asks for more is refused with both numbers, before anything is allocated.

use serde::Deserialize;
use thiserror::Error;

use crate::cache::geometry::{CacheLevel, MAX_PLAUSIBLE_INSTANCE};
use crate::units::{format_size_exact, parse_size};

/// Most sizes one `reach` expands to (2^4 B to 2^40 B would be 36).
pub const MAX_REACH_SIZES: usize = 40;

/// The largest size a `reach` may ask for: 4 GiB, the chase's own limit.
pub const MAX_REACH_BYTES: u64 = 4 << 30;

/// A `reach` table as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReachSpec {
    /// The size parameter it sets (`bytes` for the chase).
    pub param: String,
    /// The first size (bytes, K/M/G suffixes).
    pub from: String,
    /// The last size is the first at least this many times the largest data level.
    pub llc: u64,
}

/// Why a `reach` table cannot be expanded.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ReachError {
    #[error("reach `from`: {0}")]
    From(String),
    #[error("reach `from` must be at least 1 byte")]
    ZeroFrom,
    #[error("reach `llc` = {0} is outside 2..=64 (the curve must pass the last-level cache)")]
    Llc(u64),
    #[error(
        "reach needs the run's data-cache levels to size the working set by, and there are none"
    )]
    NoLevels,
    #[error(
        "reach from {} to {llc} × the {} LLC ({}) takes more than {MAX_REACH_SIZES} doublings \
         or more than {}",
        format_size_exact(*from),
        format_size_exact(*largest),
        format_size_exact((*target).min(u64::MAX / 2)),
        format_size_exact(MAX_REACH_BYTES)
    )]
    TooFar {
        from: u64,
        llc: u64,
        largest: u64,
        target: u64,
    },
}

/// The sizes of `spec` on `levels` (the run's data levels), in bytes, ascending.
pub fn reach_sizes(spec: &ReachSpec, levels: &[CacheLevel]) -> Result<Vec<u64>, ReachError> {
    let from = parse_size(&spec.from).map_err(|e| ReachError::From(e.to_string()))?;
    if from == 0 {
        return Err(ReachError::ZeroFrom);
    }
    if !(2..=64).contains(&spec.llc) {
        return Err(ReachError::Llc(spec.llc));
    }
    let largest = levels
        .iter()
        .map(|l| l.size.min(MAX_PLAUSIBLE_INSTANCE))
        .max()
        .ok_or(ReachError::NoLevels)?;
    let target = largest.saturating_mul(spec.llc);
    let mut sizes = vec![from];
    while *sizes.last().unwrap_or(&from) < target {
        let next = sizes.last().unwrap_or(&from).saturating_mul(2);
        if sizes.len() >= MAX_REACH_SIZES || next > MAX_REACH_BYTES {
            return Err(ReachError::TooFar {
                from,
                llc: spec.llc,
                largest,
                target,
            });
        }
        sizes.push(next);
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::{CacheKind, GeometrySource};

    fn level(name: &str, size: u64, ways: u64) -> CacheLevel {
        CacheLevel::new(
            name,
            CacheKind::Unified,
            size,
            ways,
            64,
            GeometrySource::Override,
        )
        .unwrap()
    }

    fn spec(from: &str, llc: u64) -> ReachSpec {
        ReachSpec {
            param: "bytes".into(),
            from: from.into(),
            llc,
        }
    }

    #[test]
    fn sizes_double_from_the_start_to_past_the_llc() {
        let amd = [level("L2", 1 << 20, 16), level("L3", 32 << 20, 16)];
        let sizes = reach_sizes(&spec("16K", 2), &amd).unwrap();
        assert_eq!(sizes.first(), Some(&(16 << 10)));
        assert_eq!(sizes.last(), Some(&(64 << 20)));
        assert!(sizes.windows(2).all(|w| w[1] == 2 * w[0]));
        // An LLC that is not a power of two: the first doubling past 2 × 105 MiB.
        let intel = [level("L2", 2 << 20, 16), level("L3", 105 << 20, 15)];
        let last = *reach_sizes(&spec("16K", 2), &intel)
            .unwrap()
            .last()
            .unwrap();
        assert!((210 << 20..420 << 20).contains(&last), "{last}");
    }

    #[test]
    fn an_implausibly_large_llc_counts_as_the_largest_plausible_one() {
        let vm = [level("L2", 2 << 20, 16), level("L3", 260 << 20, 20)];
        let sizes = reach_sizes(&spec("16K", 4), &vm).unwrap();
        assert_eq!(sizes.last(), Some(&(512 << 20)));
    }

    #[test]
    fn bad_reaches_are_refused_with_the_numbers() {
        let l3 = [level("L3", 32 << 20, 16)];
        for (s, needle) in [
            (spec("0", 2), "at least 1 byte"),
            (spec("16K", 1), "outside 2..=64"),
            (spec("16Q", 2), "from"),
        ] {
            let err = reach_sizes(&s, &l3).unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
        assert_eq!(reach_sizes(&spec("16K", 2), &[]), Err(ReachError::NoLevels));
        // 64 × a 128 MiB LLC is 8 GiB, past the 4 GiB the chase allows.
        let big = [level("L3", 128 << 20, 16)];
        let err = reach_sizes(&spec("16K", 64), &big).unwrap_err().to_string();
        assert!(
            err.contains("more than") && err.contains("128 MiB"),
            "{err}"
        );
    }
}
