//! The lab's side of the copy engine (the `stridelab-copy` crate, `crates/copy-engine`): the
//! cache sizes the engine plans for, taken from the lab's one cache geometry, and the planner
//! a command asks for. The engine detects no machine; the command does, once, and these
//! functions turn that geometry into the sizes handed in, so the engine plans for the caches
//! `stridelab info` shows.

#![forbid(unsafe_code)]

use std::path::PathBuf;

use stridelab_copy::{CacheSizes, Machine, Planner, WisdomChoice, WisdomError};

use crate::cache::cpu::cpu_model;
use crate::cache::geometry::{CacheLevel, Geometry};

/// Assumed when the machine names no plausible L1d or last level: a common x86 core
/// (32 KiB L1d, 1 MiB L2, 32 MiB L3).
const FALLBACK: CacheSizes = CacheSizes {
    l1d_bytes: 32 << 10,
    l2_bytes: 1 << 20,
    llc_bytes: 32 << 20,
};

/// The sizes to plan for from a geometry's data levels. A level that breaks a plausibility
/// rule ([`CacheLevel::plausibility_warnings`], e.g. a hypervisor's 300 MiB L3) is left out,
/// so the last-level cache is the largest plausible one: planning for a cache that is not
/// there kept 18–60 MiB copies in the in-cache schedule, at a quarter of a copy's speed.
pub fn engine_caches(levels: &[CacheLevel]) -> CacheSizes {
    let plausible: Vec<&CacheLevel> = levels
        .iter()
        .filter(|l| l.plausibility_warnings().is_empty())
        .collect();
    let bytes = |level: Option<&&CacheLevel>| level.and_then(|l| usize::try_from(l.size).ok());
    let l1d = bytes(plausible.iter().find(|l| l.level == 1));
    let llc = bytes(plausible.iter().max_by_key(|l| l.level));
    match (l1d, llc) {
        (Some(l1d_bytes), Some(llc_bytes)) => CacheSizes {
            l1d_bytes,
            l2_bytes: bytes(plausible.iter().find(|l| l.level == 2)).unwrap_or(FALLBACK.l2_bytes),
            llc_bytes,
        },
        _ => FALLBACK,
    }
}

/// The caches the engine plans for on `machine` (the geometry the command detected once,
/// never a preset or an override: those are what the simulator models, while the engine
/// copies on this machine).
pub fn machine_caches(machine: &Geometry) -> CacheSizes {
    engine_caches(&machine.data_levels())
}

/// `machine` as a wisdom file records it: its CPU model and [`machine_caches`].
pub fn this_machine(machine: &Geometry) -> Machine {
    Machine {
        cpu_model: cpu_model().unwrap_or_else(|| "unknown".into()),
        caches: machine_caches(machine),
    }
}

/// The planner of a caller that asked for no wisdom: the analytic schedules for `machine`'s
/// caches.
pub fn analytic_planner(machine: &Geometry) -> Planner {
    Planner::analytic(machine_caches(machine))
}

/// The planner `choice` asks for, on `machine` ([`Planner::new`]: a file that cannot be
/// used is reported by [`Planner::wisdom_problem`], a named file in a missing directory is an
/// error).
pub fn copy_planner(choice: WisdomChoice, machine: &Geometry) -> Result<Planner, WisdomError> {
    Planner::new(this_machine(machine), choice)
}

/// The analytic planner for the machine the tests run on, as a command would build it.
#[cfg(any(test, feature = "test-support"))]
pub fn planner_for_tests() -> std::sync::Arc<Planner> {
    std::sync::Arc::new(analytic_planner(&Geometry::detect()))
}

/// The default wisdom file: `$XDG_CACHE_HOME/stridelab/wisdom.json`, else
/// `$HOME/.cache/stridelab/wisdom.json` (the XDG base-directory rule); `None` without either.
pub fn default_wisdom_path() -> Option<PathBuf> {
    let non_empty = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    let base = non_empty("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| non_empty("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("stridelab").join("wisdom.json"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::CacheKind::{Data, Unified};
    use crate::cache::geometry::GeometrySource;

    #[test]
    fn the_engine_plans_for_the_plausible_levels_and_the_largest_as_its_llc() {
        let level = |name: &str, kind, size: u64, ways| {
            CacheLevel::new(name, kind, size, ways, 64, GeometrySource::Sysfs)
                .expect("a valid level")
        };
        let l1 = level("L1d", Data, 48 << 10, 12);
        let l2 = level("L2", Unified, 2 << 20, 16);
        let cases = [
            // Intel VM: sysfs's 300 MiB L3 is implausible, so L2 is the last level.
            (
                vec![l1.clone(), l2.clone(), level("L3", Unified, 300 << 20, 20)],
                (48 << 10, 2 << 20, 2 << 20),
            ),
            // AMD EPYC: a plausible 32 MiB L3.
            (
                vec![
                    level("L1d", Data, 32 << 10, 8),
                    level("L2", Unified, 1 << 20, 8),
                    level("L3", Unified, 32 << 20, 16),
                ],
                (32 << 10, 1 << 20, 32 << 20),
            ),
            // No L2 listed: the fallback's L2, the L3 as LLC.
            (
                vec![l1.clone(), level("L3", Unified, 32 << 20, 16)],
                (48 << 10, 1 << 20, 32 << 20),
            ),
            // Nothing usable: the fallback.
            (vec![], (32 << 10, 1 << 20, 32 << 20)),
        ];
        for (levels, (l1d_bytes, l2_bytes, llc_bytes)) in cases {
            let expected = CacheSizes {
                l1d_bytes,
                l2_bytes,
                llc_bytes,
            };
            assert_eq!(engine_caches(&levels), expected, "{levels:?}");
        }
    }
}
