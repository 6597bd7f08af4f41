//! The simulator agrees with valgrind's cachegrind on D1 and LL load and store misses for
//! row- and column-order sums of a 512×512 f64 matrix, a row-order store kernel and a transpose
//! copy (column-order loads, row-order stores), on this machine's detected geometry and on the
//! `design-vm` preset's (L1d 48 KiB 12-way, L2 2 MiB 16-way as LL).
//!
//! Skips with a note when valgrind or gcc is missing, or when this machine has no D1 and LL that
//! cachegrind accepts (it fails instead under `STRIDELAB_REQUIRE_TOOLS`, as `tests/common` says).

use crate::common;

use common::cachegrind::{
    Profile, cachegrind_like, compare, compile_fixture, default_tolerance, gcc_available,
    run_cachegrind, valgrind_available, within,
};
use stridelab::cache::AccessSink;
use stridelab::cache::geometry::{CacheLevel, Geometry};
use stridelab::cache::sim::{Hierarchy, LevelStats, Policy};

const N: u64 = 512;
/// Simulated placement: buffer k at (k+1)·2^32.
const A: u64 = 1 << 32;
const B: u64 = 2 << 32;

fn at(base: u64, i: u64, j: u64) -> u64 {
    base + (i * N + j) * 8
}

/// A kernel's address sequence, fed to a sink.
type Kernel = fn(&mut dyn AccessSink);

/// The fixture's kernels, in the order `main` calls them, as address sequences.
fn kernels() -> Vec<(&'static str, Kernel)> {
    vec![
        ("init_rows", |s| {
            for i in 0..N {
                for j in 0..N {
                    s.store(at(A, i, j), 8);
                }
            }
        }),
        ("sum_rows", |s| {
            for i in 0..N {
                for j in 0..N {
                    s.load(at(A, i, j), 8);
                }
            }
        }),
        ("sum_cols", |s| {
            for j in 0..N {
                for i in 0..N {
                    s.load(at(A, i, j), 8);
                }
            }
        }),
        ("transpose_copy", |s| {
            for i in 0..N {
                for j in 0..N {
                    s.load(at(A, j, i), 8);
                    s.store(at(B, i, j), 8);
                }
            }
        }),
    ]
}

/// Runs every kernel through one simulator (state carries over, as in the process) and
/// returns each kernel's (D1, LL) stats.
fn simulate(sim: &mut Hierarchy) -> Vec<(&'static str, LevelStats, LevelStats)> {
    kernels()
        .into_iter()
        .map(|(name, kernel)| {
            sim.reset_stats();
            kernel(sim);
            let stats = sim.stats();
            (name, stats[0], stats[1])
        })
        .collect()
}

/// Compares every kernel; returns cachegrind's profile (None when skipped).
fn compare_all(label: &str, d1: &CacheLevel, ll: &CacheLevel) -> Option<Profile> {
    if !valgrind_available() || !gcc_available() {
        return None;
    }
    let fixture = compile_fixture("cachegrind_matrix.c", &[]);
    let profile: Profile = run_cachegrind(&fixture.binary, &[&N.to_string()], d1, ll);
    eprintln!("{label}: {:?}", profile.description);
    let tolerance = default_tolerance(ll);
    for (name, d1_stats, ll_stats) in simulate(&mut cachegrind_like(d1, ll)) {
        compare(
            &format!("{label} {name}"),
            profile.function(name),
            &d1_stats,
            &ll_stats,
            tolerance,
        );
    }
    Some(profile)
}

#[test]
fn simulator_matches_cachegrind_on_design_md_geometry() {
    let preset = Geometry::preset("design-vm").unwrap();
    let (d1, ll) = (preset.level("L1d").unwrap(), preset.level("L2").unwrap());
    let Some(profile) = compare_all("design-vm (D1 48K/12, LL 2M/16)", d1, ll) else {
        return;
    };
    // The comparison has teeth: the same hierarchy with random replacement instead of LRU
    // misses the transpose's LL reads visibly more or less often than cachegrind.
    let mut random = Hierarchy::new(&[d1.clone(), ll.clone()], Policy::random(3), false).unwrap();
    let (_, _, ll_random) = simulate(&mut random)
        .into_iter()
        .find(|(name, _, _)| *name == "transpose_copy")
        .unwrap();
    let cachegrind = profile.function("transpose_copy").dlmr;
    eprintln!(
        "control: random replacement LL read misses {} vs cachegrind {cachegrind}",
        ll_random.load_misses
    );
    assert!(!within(
        cachegrind,
        ll_random.load_misses,
        default_tolerance(ll)
    ));
}

#[test]
fn simulator_matches_cachegrind_on_this_machines_geometry() {
    let detected = Geometry::detect();
    let levels = detected.data_levels();
    // Cachegrind simulates D1 + one LL and needs power-of-two sets; the set span must stay
    // within the 2 MiB buffer alignment for the placements to map alike. The LL is the
    // outermost level that qualifies: an L3 of a non-power-of-two set count (a 480 MiB VM L3,
    // a 30 MiB 12-way one) gives way to the L2 below it.
    let usable = |l: &&CacheLevel| l.sets.is_power_of_two() && l.set_span() <= 2 << 20;
    let d1 = levels.iter().find(|l| l.name == "L1d").filter(usable);
    let ll = levels.iter().rev().filter(|l| l.level > 1).find(usable);
    let (Some(d1), Some(ll)) = (d1, ll) else {
        common::tool_unusable(
            "cachegrind needs power-of-two sets: this machine's geometry has no such D1 and LL",
            "the cachegrind comparison on this machine's geometry",
        );
        return;
    };
    let label = format!(
        "this machine (D1 {} {}-way, LL {} {} {}-way)",
        d1.size, d1.ways, ll.name, ll.size, ll.ways
    );
    compare_all(&label, d1, ll);
}
