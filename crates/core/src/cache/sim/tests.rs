//! The hierarchy against hand-worked traces, cachegrind's semantics and the plain reference
//! simulator (`reference.rs`): counts, contents, the 3C split and every policy.

use proptest::prelude::{Just, Strategy};
use proptest::prop_oneof;

use super::*;
use crate::cache::geometry::{CacheKind, GeometrySource};
use crate::stats::SplitMix64;

pub(super) fn level(name: &str, size: u64, ways: u64, line: u64) -> CacheLevel {
    let kind = if name == "L1d" {
        CacheKind::Data
    } else {
        CacheKind::Unified
    };
    CacheLevel::new(name, kind, size, ways, line, GeometrySource::Override).unwrap()
}

/// A tiny cache: 2 sets × 2 ways × 16 B lines (64 B).
pub(super) fn tiny(policy: Policy, classify: bool) -> Hierarchy {
    Hierarchy::new(&[level("L1d", 64, 2, 16)], policy, classify).unwrap()
}

/// Loads 8 bytes at the start of each of `lines` (16-byte lines).
pub(super) fn loads(h: &mut Hierarchy, lines: &[u64]) {
    for &l in lines {
        h.load(l * 16, 8);
    }
}

#[test]
fn stores_write_allocate_and_count_apart() {
    let mut h = tiny(Policy::LRU, false);
    h.store(0, 8);
    h.load(8, 8); // same line: hit thanks to write-allocate
    h.modify(0, 8); // one load
    let s = h.stats()[0];
    assert_eq!(
        (s.loads, s.stores, s.load_misses, s.store_misses),
        (2, 1, 0, 1)
    );
}

#[test]
fn straddling_access_touches_both_lines_and_counts_once() {
    let mut h = tiny(Policy::LRU, false);
    h.load(12, 8); // bytes 12..20: lines 0 and 1
    let s = h.stats()[0];
    assert_eq!((s.loads, s.load_misses), (1, 1));
    assert!(h.contains(0, 0) && h.contains(0, 16));
    h.load(14, 4); // both resident: hit
    h.load(28, 8); // line 1 hit, line 2 miss → one miss
    let s = h.stats()[0];
    assert_eq!((s.loads, s.load_misses), (3, 2));
}

#[test]
fn straddling_miss_sends_the_whole_access_to_the_next_level() {
    // L1: 2 sets × 1 way × 16 B; L2: big. Line 1 resident in L1, line 0 not.
    let mut h = Hierarchy::new(
        &[level("L1d", 32, 1, 16), level("L2", 1024, 4, 16)],
        Policy::LRU,
        false,
    )
    .unwrap();
    h.load(16, 4); // line 1 → L1 miss, L2 miss
    h.load(12, 8); // lines 0 (miss) and 1 (hit) in L1 → one L1 miss; L2: 0 miss, 1 hit
    let s = h.stats();
    assert_eq!((s[0].loads, s[0].load_misses), (2, 2));
    assert_eq!((s[1].loads, s[1].load_misses), (2, 2));
    assert!(h.contains(1, 0) && h.contains(1, 16));
}

#[test]
fn misses_go_down_hits_stop() {
    let mut h = Hierarchy::new(
        &[level("L1d", 64, 2, 16), level("L2", 256, 4, 16)],
        Policy::LRU,
        false,
    )
    .unwrap();
    loads(&mut h, &[0, 2, 4, 0]); // 0 evicted from L1 set 0 by 4, hits in L2
    let s = h.stats();
    assert_eq!((s[0].loads, s[0].load_misses), (4, 4));
    assert_eq!((s[1].loads, s[1].load_misses), (4, 3));
}

#[test]
fn three_c_on_a_hand_computed_trace() {
    // 2 sets × 2 ways × 16 B = 4 lines. Fully-associative shadow holds 4 lines.
    let mut h = tiny(Policy::LRU, true);
    // Set 0 gets 0, 2, 4 (3 lines > 2 ways) while only 3 distinct lines live: conflicts.
    loads(&mut h, &[0, 2, 4, 0, 2, 4]);
    let s = h.stats()[0];
    // First three: compulsory. Then 0: evicted (set full) but FA (4 lines) holds it:
    // conflict; same for 2 and 4.
    assert_eq!(
        (s.load_misses, s.compulsory, s.capacity, s.conflict),
        (6, 3, 0, 3)
    );
    // Now cycle 5 distinct lines spread over both sets: 0 1 2 3 4 repeatedly. FA-LRU of 4
    // lines misses on every access of a 5-line cycle.
    let mut h = tiny(Policy::LRU, true);
    for _ in 0..3 {
        loads(&mut h, &[0, 1, 2, 3, 4]);
    }
    let s = h.stats()[0];
    assert_eq!(s.compulsory, 5);
    assert_eq!(s.load_misses, s.compulsory + s.capacity + s.conflict);
    // Rounds 2 and 3: set 1 holds its two lines (1, 3) and hits; set 0 cycles three lines
    // through two ways and misses on 0, 2, 4 — and the 4-line FA shadow, cycling 5 lines,
    // misses them too: capacity, not conflict.
    assert_eq!((s.load_misses, s.capacity, s.conflict), (11, 6, 0));
}

#[test]
fn three_c_conflict_vs_capacity_on_stride() {
    // 4 sets × 2 ways × 16 B (8 lines). Stride of 4 lines hits set 0 only.
    let mut h = Hierarchy::new(&[level("L1d", 128, 2, 16)], Policy::LRU, true).unwrap();
    let trace: Vec<u64> = [0, 4, 8].repeat(4);
    loads(&mut h, &trace);
    let s = h.stats()[0];
    assert_eq!((s.compulsory, s.capacity, s.conflict), (3, 0, 9));
    // Warm reset keeps contents and the seen-set: nothing is compulsory any more.
    h.reset_stats();
    loads(&mut h, &[0, 4, 8]);
    let s = h.stats()[0];
    assert_eq!((s.load_misses, s.compulsory, s.conflict), (3, 0, 3));
}

#[test]
fn non_power_of_two_sets_index_by_modulo() {
    // 3 sets × 1 way × 16 B.
    let mut h = Hierarchy::new(&[level("L1d", 48, 1, 16)], Policy::LRU, false).unwrap();
    loads(&mut h, &[0, 1, 2, 3]); // line 3 → set 0, evicts line 0
    assert_eq!(h.resident_lines(0), vec![vec![48], vec![16], vec![32]]);
    loads(&mut h, &[4, 5]); // sets 1, 2
    assert_eq!(h.stats()[0].evictions, 3);
    // A stride of 4 lines visits every set (gcd(4, 3) = 1); stride 3 only set 0.
    let mut h = Hierarchy::new(&[level("L1d", 48, 1, 16)], Policy::LRU, false).unwrap();
    loads(&mut h, &[0, 3, 6, 9]);
    assert_eq!(h.resident_lines(0), vec![vec![9 * 16], vec![], vec![]]);
}

#[test]
fn a_hierarchy_needs_a_level() {
    assert_eq!(
        Hierarchy::new(&[], Policy::LRU, false).unwrap_err(),
        SimError::NoLevels
    );
}

/// Brute-force reference: per-set recency lists and a fully-associative recency list.
fn reference(trace: &[(u64, bool)], sets: u64, ways: usize) -> (u64, u64, u64, u64) {
    reference_with_misses(trace, sets, ways).0
}

/// As [`reference`], also returning the accesses that missed (the next level's trace).
#[allow(clippy::type_complexity)]
fn reference_with_misses(
    trace: &[(u64, bool)],
    sets: u64,
    ways: usize,
) -> ((u64, u64, u64, u64), Vec<(u64, bool)>) {
    let mut missed = Vec::new();
    let mut cache: Vec<Vec<u64>> = vec![Vec::new(); sets as usize];
    let mut fa: Vec<u64> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let (mut misses, mut comp, mut cap, mut conf) = (0, 0, 0, 0);
    let capacity = sets as usize * ways;
    for &(line, _) in trace {
        let set = &mut cache[(line % sets) as usize];
        let hit = set.contains(&line);
        set.retain(|&l| l != line);
        set.insert(0, line);
        set.truncate(ways);
        let fa_hit = fa.contains(&line);
        fa.retain(|&l| l != line);
        fa.insert(0, line);
        fa.truncate(capacity);
        if !hit {
            misses += 1;
            missed.push((line, false));
            if seen.insert(line) {
                comp += 1;
            } else if !fa_hit {
                cap += 1;
            } else {
                conf += 1;
            }
        }
    }
    ((misses, comp, cap, conf), missed)
}

/// Many distinct lines (spread over many seen-bit chunks, visited in random order so the
/// recent-chunk cache keeps missing, and growing the shadows' tables) through two 3C
/// levels: every count must still equal the brute force.
#[test]
fn shadow_growth_keeps_two_levels_exact() {
    let mut rng = SplitMix64::new(0x1234_5678_9ABC_DEF1);
    let trace: Vec<(u64, bool)> = (0..80_000)
        .map(|i| {
            let r = rng.next_u64();
            // Mostly a small hot set, sometimes one of 20 000 cold lines.
            let line = if r.is_multiple_of(2) {
                (r >> 8) % 20_000
            } else {
                (r >> 8) % 24
            };
            (line + (i % 3), false)
        })
        .collect();
    let mut h = Hierarchy::new(
        &[level("L1d", 64, 2, 16), level("L2", 256, 4, 16)],
        Policy::LRU,
        true,
    )
    .unwrap();
    for &(line, _) in &trace {
        h.load(line * 16, 8);
    }
    let (l1_expected, l1_misses) = reference_with_misses(&trace, 2, 2);
    let l2_expected = reference(&l1_misses, 4, 4);
    let s = h.stats();
    assert_eq!(
        (s[0].misses(), s[0].compulsory, s[0].capacity, s[0].conflict),
        l1_expected
    );
    assert_eq!(
        (s[1].misses(), s[1].compulsory, s[1].capacity, s[1].conflict),
        l2_expected
    );
    assert!(
        h.levels[0].seen_chunks() >= 4,
        "the trace should span many chunks"
    );
}

/// A sparse trace (every access in a seen-bit chunk of its own) costs one chunk (512 B) per
/// access and level, kilobytes not gigabytes, and still classifies exactly: 512 distinct lines
/// 1 GiB apart are 512 compulsory misses; a second pass over them misses L1 for capacity (512
/// lines > its 64) and L2 for conflict (all in set 0, though a fully-associative L2 holds
/// them).
#[test]
fn sparse_trace_allocates_one_chunk_per_access() {
    let mut h = Hierarchy::new(
        &[level("L1d", 4096, 4, 64), level("L2", 65536, 8, 64)],
        Policy::LRU,
        true,
    )
    .unwrap();
    for _ in 0..2 {
        for i in 0..512u64 {
            h.load(i << 30, 8);
        }
    }
    let s = h.stats();
    for level in &h.levels {
        assert_eq!(level.seen_chunks(), 512);
    }
    assert_eq!(
        (s[0].compulsory, s[0].capacity, s[0].misses()),
        (512, 512, 1024)
    );
    assert_eq!(
        (s[1].compulsory, s[1].conflict, s[1].accesses()),
        (512, 512, 1024)
    );
}

/// cachegrind's `cg_sim.c`, transcribed: tags are block numbers, per-set arrays kept most
/// recent first, a straddling reference looks up both blocks and misses if either did, and
/// an LL reference happens only after a D1 miss, with the whole access.
struct CgCache {
    sets: Vec<Vec<u64>>,
    ways: usize,
    line_bits: u32,
}

impl CgCache {
    fn new(size: u64, ways: usize, line: u64) -> Self {
        let sets = (size / (ways as u64 * line)) as usize;
        Self {
            sets: vec![Vec::new(); sets],
            ways,
            line_bits: line.trailing_zeros(),
        }
    }
    fn setref_is_miss(&mut self, block: u64) -> bool {
        let n = self.sets.len() as u64;
        let set = &mut self.sets[(block % n) as usize];
        let hit = set.iter().position(|&t| t == block);
        if let Some(i) = hit {
            set.remove(i);
        }
        set.insert(0, block);
        set.truncate(self.ways);
        hit.is_none()
    }
    fn ref_is_miss(&mut self, addr: u64, size: u64) -> bool {
        let block1 = addr >> self.line_bits;
        let block2 = (addr + size - 1) >> self.line_bits;
        if block1 == block2 {
            self.setref_is_miss(block1)
        } else {
            // "always do both, as state is updated as side effect"
            let m1 = self.setref_is_miss(block1);
            let m2 = self.setref_is_miss(block2);
            m1 || m2
        }
    }
}

proptest::proptest! {
    #[test]
    fn lru_and_3c_match_brute_force(
        trace in proptest::collection::vec((0u64..40, proptest::bool::ANY), 0..300),
        sets in 1u64..6,
        ways in 1usize..5,
    ) {
        let geometry = level("L1d", sets * ways as u64 * 16, ways as u64, 16);
        let mut h = Hierarchy::new(&[geometry], Policy::LRU, true).unwrap();
        for &(line, store) in &trace {
            if store { h.store(line * 16, 4) } else { h.load(line * 16 + 4, 8) }
        }
        let s = h.stats()[0];
        let expected = reference(&trace, sets, ways);
        proptest::prop_assert_eq!((s.misses(), s.compulsory, s.capacity, s.conflict), expected);
    }

    /// D1 + LL counts equal cachegrind's algorithm on random accesses, straddles included,
    /// with and without the 3C classification switched on.
    #[test]
    fn two_levels_match_cachegrinds_algorithm(
        trace in proptest::collection::vec((0u64..2048, 1u64..=16, proptest::bool::ANY), 0..400),
        classify in proptest::bool::ANY,
    ) {
        let mut h = Hierarchy::new(
            &[level("L1d", 128, 2, 16), level("L2", 512, 4, 16)],
            Policy::LRU,
            classify,
        )
        .unwrap();
        let mut d1 = CgCache::new(128, 2, 16);
        let mut ll = CgCache::new(512, 4, 16);
        let mut expected = [[0u64; 4]; 2]; // [loads, stores, load misses, store misses]
        for &(addr, size, store) in &trace {
            if store { h.store(addr, size as u32) } else { h.load(addr, size as u32) }
            let kind = usize::from(store);
            expected[0][kind] += 1;
            if d1.ref_is_miss(addr, size) {
                expected[0][2 + kind] += 1;
                expected[1][kind] += 1;
                if ll.ref_is_miss(addr, size) {
                    expected[1][2 + kind] += 1;
                }
            }
        }
        let s = h.stats();
        for (level, stats) in s.iter().enumerate() {
            proptest::prop_assert_eq!(
                [stats.loads, stats.stores, stats.load_misses, stats.store_misses],
                expected[level]
            );
            if classify {
                proptest::prop_assert_eq!(
                    stats.compulsory + stats.capacity + stats.conflict,
                    stats.misses()
                );
            }
        }
    }
}

/// One random level for the equivalence proptests: sets 1–9 (non-powers of two
/// included), ways 1–6 (a count the policy refuses becomes a power of two up to 8, as
/// tree-PLRU needs), lines of 16, 32 or 64 B.
pub(super) fn arbitrary_level(
    index: usize,
    sets: u64,
    ways: u64,
    line_bits: u32,
    policy: Policy,
) -> CacheLevel {
    let ways = if policy.takes_ways(ways as u32) {
        ways
    } else {
        1 << (ways % 4)
    };
    let line = 16u64 << line_bits;
    level(&format!("L{}", index + 1), sets * ways * line, ways, line)
}

/// Every policy of [`Policy::ALL`], each as likely, a seeded one with a random seed: a policy
/// added to the list is drawn by every proptest that takes this.
pub(super) fn any_policy() -> impl Strategy<Value = Policy> {
    (0..Policy::ALL.len(), proptest::num::u64::ANY)
        .prop_map(|(i, seed)| Policy::ALL[i].with_seed(seed))
}

/// [`any_policy`], but LRU half the time: the fast paths of its own have the most to check.
pub(super) fn mostly_lru() -> impl Strategy<Value = Policy> {
    prop_oneof![Just(Policy::LRU), any_policy()]
}

/// Feeds `trace` (address, length, 0 load / 1 store / 2 modify) to the fast simulator and
/// the reference and checks every level's counts and final contents agree.
fn assert_matches_reference(
    h: &mut Hierarchy,
    geometry: &[CacheLevel],
    policy: Policy,
    classify: bool,
    trace: &[(u64, u32, u8)],
) -> Result<(), proptest::test_runner::TestCaseError> {
    let mut r =
        reference::Reference::new(geometry, policy, classify, DEFAULT_STATE_BUDGET).unwrap();
    for (i, &(addr, len, kind)) in trace.iter().enumerate() {
        if i == trace.len() / 2 {
            // Midway, everything pending is simulated (and a lower-level thread stopped).
            h.flush();
        }
        let sinks: [&mut dyn AccessSink; 2] = [h, &mut r];
        for sink in sinks {
            match kind {
                0 => sink.load(addr, len),
                1 => sink.store(addr, len),
                _ => sink.modify(addr, len),
            }
        }
    }
    proptest::prop_assert_eq!(h.stats(), r.stats());
    for level in 0..geometry.len() {
        proptest::prop_assert_eq!(h.resident_lines(level), r.resident_lines(level));
    }
    Ok(())
}

proptest::proptest! {
    /// The fast paths (repeated-line shortcut, batches, lower levels on a thread of their own,
    /// LRU/FIFO rings, branch-free counters) equal the plain reference simulator for every
    /// policy, on random hierarchies of 1–3 levels (mixed line sizes, non-power-of-two sets)
    /// and random traces with straddles, repeats, stores and modifies.
    #[test]
    fn fast_simulator_equals_reference(
        shapes in proptest::collection::vec((1u64..10, 1u64..7, 0u32..3), 1..4),
        policy in any_policy(),
        classify in proptest::bool::ANY,
        passing in (0u8..4, 1usize..40),
        trace in proptest::collection::vec(
            (0u64..3000, 0u32..=20, 0u8..3, 0u8..4), 0..600),
    ) {
        let geometry: Vec<CacheLevel> = shapes
            .iter()
            .enumerate()
            .map(|(i, &(sets, ways, line_bits))| {
                arbitrary_level(i, sets, ways, line_bits, policy)
            })
            .collect();
        // Every fourth access lands just after the previous one: mostly the same line (the
        // repeated-line fast path), sometimes straddling into the next.
        let mut previous = 0;
        let trace: Vec<(u64, u32, u8)> = trace
            .iter()
            .map(|&(addr, len, kind, repeat)| {
                let addr = if repeat == 0 { previous + addr % 8 } else { addr };
                previous = addr;
                (addr, len, kind)
            })
            .collect();
        // The first level's misses reach the levels below as built, or in small chunks
        // here, or in small chunks on a thread of their own (the second level's shadow on
        // another as the chunk decides, or always).
        let mut h = Hierarchy::new(&geometry, policy, classify).unwrap();
        if passing.0 > 0 {
            h = h.with_chunk(passing.1, passing.0 >= 2);
        }
        if passing.0 == 3 {
            h = h.always_detach();
        }
        assert_matches_reference(&mut h, &geometry, policy, classify, &trace)?;
    }

    /// The LRU code specialised for 8-, 12- and 16-way sets (widths the test above never
    /// draws) equals the reference too: one or two such levels, few sets, and traces
    /// over a few times the cache's lines, so hits land at every recency position.
    #[test]
    fn fixed_width_lru_equals_reference(
        shapes in proptest::collection::vec((1u64..4, 0usize..3, 0u32..2), 1..3),
        classify in proptest::bool::ANY,
        trace in proptest::collection::vec((0u64..4000, 0u32..=20, 0u8..3), 0..800),
    ) {
        let geometry: Vec<CacheLevel> = shapes
            .iter()
            .enumerate()
            .map(|(i, &(sets, width, line_bits))| {
                let ways = [8, 12, 16][width];
                arbitrary_level(i, sets, ways, line_bits, Policy::LRU)
            })
            .collect();
        let mut h = Hierarchy::new(&geometry, Policy::LRU, classify).unwrap();
        assert_matches_reference(&mut h, &geometry, Policy::LRU, classify, &trace)?;
    }

    /// A run fed through `load_run` (whose ascending short-step runs count the repeated-line
    /// hits in one addition) leaves every level exactly as its loads one by one do: counts
    /// and contents, every policy, 3C on and off, straddling and descending runs included.
    #[test]
    fn load_runs_equal_their_loads(
        shapes in proptest::collection::vec((1u64..10, 1u64..7, 0u32..3), 1..4),
        policy in any_policy(),
        classify in proptest::bool::ANY,
        runs in proptest::collection::vec(
            (0u64..3000, -40i64..70, 0u64..80, 1u32..=20), 0..40),
    ) {
        let geometry: Vec<CacheLevel> = shapes
            .iter()
            .enumerate()
            .map(|(i, &(sets, ways, line_bits))| {
                arbitrary_level(i, sets, ways, line_bits, policy)
            })
            .collect();
        let mut fast = Hierarchy::new(&geometry, policy, classify).unwrap();
        let mut plain = Hierarchy::new(&geometry, policy, classify).unwrap();
        for &(addr, step, count, len) in &runs {
            fast.load_run(addr + 4096, step, count, len);
            for k in 0..count {
                plain.load((addr + 4096).wrapping_add((k as i64 * step) as u64), len);
            }
        }
        proptest::prop_assert_eq!(fast.stats(), plain.stats());
        for level in 0..geometry.len() {
            proptest::prop_assert_eq!(fast.resident_lines(level), plain.resident_lines(level));
        }
    }

    /// The seen-bit record's two-level directory (pages of 256 chunks found by hash, the
    /// page used last remembered) equals the reference on traces that jump between far
    /// apart regions (each its own directory page, some on the same page as others) and
    /// walk within them with a stride, as buffers at `sim_address` do.
    #[test]
    fn seen_line_pages_equal_reference(
        shapes in proptest::collection::vec((1u64..10, 1u64..7, 0u32..3), 1..4),
        regions in proptest::collection::vec(0u64..64, 1..6),
        trace in proptest::collection::vec((0usize..6, 0u64..200, 1u64..600), 0..500),
    ) {
        let geometry: Vec<CacheLevel> = shapes
            .iter()
            .enumerate()
            .map(|(i, &(sets, ways, line_bits))| {
                arbitrary_level(i, sets, ways, line_bits, Policy::LRU)
            })
            .collect();
        // Region r starts at r·2^26 bytes, a directory page spans 2^20 lines (2^21 to 2^26
        // bytes for lines of 2 to 64 B), so regions are pages of their own or share one,
        // and the strided walks within one cross chunks of 4096 lines.
        let trace: Vec<(u64, u32, u8)> = trace
            .iter()
            .map(|&(region, step, stride)| {
                let base = regions[region % regions.len()] << 26;
                (base + step * stride * 8, 8, 0)
            })
            .collect();
        let mut h = Hierarchy::new(&geometry, Policy::LRU, true).unwrap();
        assert_matches_reference(&mut h, &geometry, Policy::LRU, true, &trace)?;
    }
}
