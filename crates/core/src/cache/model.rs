//! The analytic set model: how many cache sets a strided access pattern really uses, at how
//! many accesses a set first overflows, and what a repeated pass then misses by.
//!
//! K accesses at `base + i·s` (i = 0..K) touch lines `⌊(base + i·s) / L⌋`, each in set
//! `line mod S`. When s is a multiple of the line size L, consecutive lines are s/L apart and
//! the pattern cycles through exactly `S / gcd(s/L, S)` sets (seed 004: 64 sets, a stride of
//! 16 lines → 64 / gcd(16, 64) = 4 sets). Once more than `ways` distinct lines map to one set
//! (a **set overflow**), a repeated pass misses in that set. In the 3C split's words (the
//! simulator's), those misses are **conflict** misses while all the pattern's lines fit the
//! cache (a fully associative LRU cache of the same size would keep them), and **capacity**
//! misses once they outnumber its lines (it would miss on a cyclic repeat too): a column of
//! 1024 lines on a 512-line L1d overflows its one set, but the repeat misses by capacity.
//! Strides that are not a multiple of L (4104 B = 64.125 lines) are handled by enumeration,
//! which is exact for any stride.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::cache::geometry::CacheLevel;

/// Greatest common divisor (gcd(0, n) = n).
pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The line touched by access `i` (addresses wrap like the machine's; a simulated address
/// space never gets near the ends).
fn line_of(base: u64, stride: i64, i: u64, line: u32) -> u64 {
    base.wrapping_add((i as i64).wrapping_mul(stride) as u64) >> line.trailing_zeros()
}

/// Exact number of distinct sets touched by `count` accesses at `base + i·stride` (bytes), by
/// enumeration. `line` must be a power of two and `sets` non-zero.
pub fn distinct_sets(base: u64, stride: i64, count: u64, line: u32, sets: u32) -> u64 {
    let sets_n = u64::from(sets.max(1));
    let mut touched = vec![false; sets_n as usize];
    let mut distinct = 0;
    for i in 0..count {
        let set = (line_of(base, stride, i, line) % sets_n) as usize;
        if !touched[set] {
            touched[set] = true;
            distinct += 1;
            if distinct == sets_n {
                break;
            }
        }
    }
    distinct
}

/// Exact number of distinct lines touched by `count` accesses at `base + i·stride` (bytes):
/// an arithmetic progression is monotone, so a step of a line or more lands on a new line every
/// time, and a shorter step skips none between the first and the last. Closed form, because a
/// 256 MiB buffer is 33 million accesses; a progression that wraps the address space is listed.
pub fn distinct_lines(base: u64, stride: i64, count: u64, line: u32) -> u64 {
    if count == 0 {
        return 0;
    }
    let last_offset = i64::try_from(count - 1)
        .ok()
        .and_then(|n| n.checked_mul(stride));
    let last = last_offset.and_then(|offset| base.checked_add_signed(offset));
    let Some(last) = last else {
        return (0..count)
            .map(|i| line_of(base, stride, i, line))
            .collect::<HashSet<_>>()
            .len() as u64;
    };
    if stride.unsigned_abs() >= u64::from(line) {
        return count;
    }
    let shift = line.trailing_zeros();
    (base >> shift).abs_diff(last >> shift) + 1
}

/// The closed form `S / gcd(s/L, S)` for a stride that is a multiple of the line size (the
/// number of sets an unbounded number of accesses cycles through); `None` otherwise.
pub fn closed_form_sets(stride: i64, line: u32, sets: u32) -> Option<u64> {
    let stride = stride.unsigned_abs();
    let line = u64::from(line);
    let sets = u64::from(sets);
    if line == 0 || sets == 0 || !stride.is_multiple_of(line) {
        return None;
    }
    Some(sets / gcd(stride / line, sets))
}

/// The smallest K (≤ `max_count`) for which K accesses at `base + i·stride` put more than
/// `ways` distinct lines into one set (the set overflows) — from then on a repeated pass
/// misses; [`RepeatMisses::of`] says by which cause. `None` if no such K exists up to
/// `max_count`.
pub fn set_overflow_onset(
    base: u64,
    stride: i64,
    line: u32,
    sets: u32,
    ways: u32,
    max_count: u64,
) -> Option<u64> {
    if let Some(onset) = overflow_onset_closed_form(base, stride, line, sets, ways) {
        return onset.filter(|&k| k <= max_count);
    }
    // A walk spanning less than half the address space moves one way only, so a line is new
    // exactly when it differs from the previous access's line: no set of seen lines is needed.
    let in_order = stride
        .unsigned_abs()
        .checked_mul(max_count)
        .is_some_and(|span| span < 1 << 63);
    let pattern = Strided { base, stride, line };
    overflow_onset_listed(pattern, sets, ways, max_count, in_order)
}

/// `base + i·stride` (bytes) in lines of `line` bytes.
#[derive(Debug, Clone, Copy)]
struct Strided {
    base: u64,
    stride: i64,
    line: u32,
}

/// [`set_overflow_onset`] without a bound, in closed form where the lines are easy to list
/// (`Some(answer)`), else `None`. Two cases: a forward stride of at most one line visits every
/// line in order, so set by set the lines fill up evenly and the `ways·sets + 1`-th line is the
/// first to overflow; a forward stride of whole lines (`s/L` lines) cycles through the
/// `sets / gcd(s/L, sets)` sets of its period, each receiving one new line per period, so
/// access `ways·period` (0-based) is the first overflow. Enumeration walks up to millions of
/// accesses per level; this keeps the predictions a run records from costing seconds.
fn overflow_onset_closed_form(
    base: u64,
    stride: i64,
    line: u32,
    sets: u32,
    ways: u32,
) -> Option<Option<u64>> {
    let (stride, line_b) = (
        u64::try_from(stride).ok().filter(|&s| s > 0)?,
        u64::from(line),
    );
    let sets = u64::from(sets.max(1));
    let ways = u64::from(ways);
    if !line_b.is_power_of_two() {
        return None;
    }
    if stride <= line_b {
        // First access that reaches line `first + ways·sets`.
        let target_line = (base >> line.trailing_zeros()).checked_add(ways.checked_mul(sets)?)?;
        let distance = target_line.checked_mul(line_b)?.checked_sub(base)?;
        let index = distance.div_ceil(stride);
        return Some(index.checked_add(1));
    }
    if stride.is_multiple_of(line_b) {
        let step = (stride / line_b) % sets;
        let period = sets / gcd(step, sets);
        return ways.checked_mul(period)?.checked_add(1).map(Some);
    }
    None
}

/// Most sets [`overflow_onset_listed`] counts in a plain array (larger geometries use a map).
const MAX_ARRAY_SETS: u64 = 1 << 22;

/// [`set_overflow_onset`] by listing the accesses: exact for any stride. `in_order`: the addresses
/// move one way only, so a new line is one that differs from the previous access's; otherwise
/// every line seen is remembered.
fn overflow_onset_listed(
    pattern: Strided,
    sets: u32,
    ways: u32,
    max_count: u64,
    in_order: bool,
) -> Option<u64> {
    let Strided { base, stride, line } = pattern;
    let sets_n = u64::from(sets.max(1));
    let mut array = vec![
        0u32;
        if sets_n <= MAX_ARRAY_SETS {
            sets_n as usize
        } else {
            0
        }
    ];
    let mut map: HashMap<u64, u32> = HashMap::new();
    let mut seen: HashSet<u64> = HashSet::new();
    let mut previous = None;
    for i in 0..max_count {
        let line_no = line_of(base, stride, i, line);
        let new = if in_order {
            previous != Some(line_no)
        } else {
            seen.insert(line_no)
        };
        previous = Some(line_no);
        if !new {
            continue;
        }
        let set = line_no % sets_n;
        let load = match array.get_mut(set as usize) {
            Some(load) => load,
            None => map.entry(set).or_insert(0),
        };
        *load += 1;
        if *load > ways {
            return Some(i + 1);
        }
    }
    None
}

/// What a repeated pass over a pattern's lines misses by, in the 3C split's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepeatMisses {
    /// No set holds more than `ways` of the lines: a repeated pass hits.
    None,
    /// A set overflows while the cache has room for every line: a fully associative LRU
    /// cache of the same size would keep them, so the misses are conflict misses.
    Conflict,
    /// The lines outnumber the cache's (and so some set overflows): a fully associative LRU
    /// cache misses them on a cyclic repeat too, so the misses are capacity misses.
    Capacity,
}

impl RepeatMisses {
    /// The cause for `lines` distinct lines on a cache of `cache_lines`, given whether some set
    /// holds more than its ways of them (more lines than the cache always overflows a set).
    pub fn of(lines: u64, cache_lines: u64, overflows: bool) -> RepeatMisses {
        if lines > cache_lines {
            RepeatMisses::Capacity
        } else if overflows {
            RepeatMisses::Conflict
        } else {
            RepeatMisses::None
        }
    }
}

/// What the model predicts for one cache level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelPrediction {
    pub level: String,
    pub sets: u32,
    pub ways: u32,
    pub line: u32,
    /// Distinct sets the `count` accesses touch (enumerated).
    pub distinct_sets: u64,
    /// `S / gcd(s/L, S)` when the stride is a multiple of the line size.
    pub closed_form_sets: Option<u64>,
    /// Distinct lines the `count` accesses touch.
    pub distinct_lines: u64,
    /// Lines the touched sets can hold: `ways × distinct_sets`.
    pub usable_lines: u64,
    /// Lines the whole level holds: `ways × sets`.
    pub cache_lines: u64,
    /// The access at which a set first holds more than `ways` lines (see
    /// [`set_overflow_onset`]), searched up to `overflow_searched` accesses.
    pub overflow_onset: Option<u64>,
    /// Accesses the overflow search covered: an onset beyond them reads as none.
    pub overflow_searched: u64,
    /// Whether the `count` accesses overflow a set.
    pub overflows: bool,
    /// What a repeated pass over the `count` accesses misses by.
    pub repeat_misses: RepeatMisses,
}

/// Upper bound on the accesses [`predict`] searches for a set overflow: the pattern's
/// `count` accesses, or more when the level has more lines (the distinct lines reach an
/// overflow by `sets × ways + 1` of them), but at most [`MAX_ONSET_SEARCH`] — the listing
/// search keeps every line in a hash set, and a made-up cache of millions of lines must not
/// cost seconds and gigabytes (an onset beyond it reads as none; the closed forms are exact
/// at any count).
fn onset_search_bound(level: &CacheLevel, count: u64) -> u64 {
    count
        .max(level.lines())
        .saturating_add(1)
        .min(MAX_ONSET_SEARCH)
}

/// Accesses [`set_overflow_onset`] is asked to search at most: 2^21, a 128 MiB cache of 64 B lines.
const MAX_ONSET_SEARCH: u64 = 1 << 21;

/// Predicts, per level, how `count` accesses at `base + i·stride` spread over the sets.
pub fn predict(levels: &[CacheLevel], base: u64, stride: i64, count: u64) -> Vec<LevelPrediction> {
    levels
        .iter()
        .map(|level| {
            let distinct_sets = distinct_sets(base, stride, count, level.line, level.sets);
            let distinct_lines = distinct_lines(base, stride, count, level.line);
            let searched = onset_search_bound(level, count);
            let onset =
                set_overflow_onset(base, stride, level.line, level.sets, level.ways, searched);
            let overflows = onset.is_some_and(|k| k <= count);
            LevelPrediction {
                level: level.name.clone(),
                sets: level.sets,
                ways: level.ways,
                line: level.line,
                distinct_sets,
                closed_form_sets: closed_form_sets(stride, level.line, level.sets),
                distinct_lines,
                usable_lines: distinct_sets * u64::from(level.ways),
                cache_lines: level.lines(),
                overflow_onset: onset,
                overflow_searched: searched,
                overflows,
                repeat_misses: RepeatMisses::of(distinct_lines, level.lines(), overflows),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::parse_cache_override;

    const BASE: u64 = 1 << 32;

    #[test]
    fn distinct_lines_closed_form_equals_listing() {
        let listed = |base: u64, stride: i64, count: u64, line: u32| {
            (0..count)
                .map(|i| line_of(base, stride, i, line))
                .collect::<HashSet<_>>()
                .len() as u64
        };
        for base in [BASE, BASE + 8, BASE + 60, BASE + 4095] {
            for stride in [
                -200, -64, -63, -9, -1, 0, 1, 3, 8, 24, 63, 64, 65, 100, 4096,
            ] {
                for count in [0, 1, 2, 7, 64, 65, 1000] {
                    for line in [32, 64, 128] {
                        assert_eq!(
                            distinct_lines(base, stride, count, line),
                            listed(base, stride, count, line),
                            "base {base} stride {stride} count {count} line {line}"
                        );
                    }
                }
            }
        }
        // Wrapping below address 0 is listed, not computed.
        assert_eq!(distinct_lines(64, -64, 3, 64), listed(64, -64, 3, 64));
    }

    #[test]
    fn seed_004_sixty_four_sets_stride_sixteen_lines_uses_four() {
        assert_eq!(closed_form_sets(16 * 64, 64, 64), Some(4));
        assert_eq!(distinct_sets(BASE, 16 * 64, 1000, 64, 64), 4);
    }

    #[test]
    fn page_stride_uses_one_set_and_a_page_plus_eight_bytes_uses_all() {
        // 64-set L1 with 64 B lines: a 4096 B stride is 64 lines → gcd(64, 64) = 64 → 1 set.
        assert_eq!(closed_form_sets(4096, 64, 64), Some(1));
        assert_eq!(distinct_sets(BASE, 4096, 512, 64, 64), 1);
        // 4104 B = 64.125 lines: no closed form; enumeration drifts one set every 8 accesses.
        assert_eq!(closed_form_sets(4104, 64, 64), None);
        assert_eq!(distinct_sets(BASE, 4104, 512, 64, 64), 64);
        assert_eq!(distinct_sets(BASE, 4104, 16, 64, 64), 2);
    }

    #[test]
    fn overflow_onset_matches_the_design_probe() {
        // The design-vm L1d (48 KiB, 12 ways, 64 sets): K loads at 4096 B stay in L1 up to
        // K = 12 and conflict from K = 13; 4104 B only once a set gets a 13th line.
        let l1 = parse_cache_override("L1d=48K,12,64").unwrap();
        assert_eq!(set_overflow_onset(BASE, 4096, 64, 64, 12, 10_000), Some(13));
        // Set 0 gets accesses 0..8 and 512..520; its 13th line is access 516 → K = 517.
        assert_eq!(
            set_overflow_onset(BASE, 4104, 64, 64, 12, 10_000),
            Some(517)
        );
        let p = predict(&[l1], BASE, 4096, 16);
        assert_eq!(p[0].distinct_sets, 1);
        assert_eq!(p[0].usable_lines, 12);
        assert!(p[0].overflows);
        assert_eq!(p[0].repeat_misses, RepeatMisses::Conflict);
        let l1 = parse_cache_override("L1d=48K,12,64").unwrap();
        let p = &predict(&[l1], BASE, 4104, 16)[0];
        assert!(!p.overflows);
        assert_eq!(p.repeat_misses, RepeatMisses::None);
    }

    #[test]
    fn a_set_overflow_is_a_conflict_only_while_the_lines_fit_the_cache() {
        // (level, stride in bytes, accesses) → (sets used, onset, overflows, repeat misses).
        // A 1024×1024 f64 column (8 KiB apart) on a 32 KiB 8-way L1d: one set overflows from
        // access 9, but its 1024 lines outnumber the cache's 512, so a repeat misses by
        // capacity; on a 512 KiB 8-way L2 the same column falls in 8 sets and fits: conflict.
        // A row (8 B apart) of 4096 lines overflows a set only as the cache fills: capacity.
        type Row = (
            &'static str,
            i64,
            u64,
            (u64, Option<u64>, bool, RepeatMisses),
        );
        let table: [Row; 5] = [
            (
                "L1d=32K,8,64",
                8192,
                1024,
                (1, Some(9), true, RepeatMisses::Capacity),
            ),
            (
                "L2=512K,8,64",
                8192,
                1024,
                (8, Some(65), true, RepeatMisses::Conflict),
            ),
            (
                "L1d=32K,8,64",
                8192,
                8,
                (1, Some(9), false, RepeatMisses::None),
            ),
            (
                "L1d=32K,8,64",
                8,
                32768,
                (64, Some(4097), true, RepeatMisses::Capacity),
            ),
            (
                "L1d=32K,8,64",
                8,
                4096,
                (64, Some(4097), false, RepeatMisses::None),
            ),
        ];
        for (level, stride, count, expected) in table {
            let l = parse_cache_override(level).unwrap();
            let p = &predict(&[l], BASE, stride, count)[0];
            assert_eq!(
                (
                    p.distinct_sets,
                    p.overflow_onset,
                    p.overflows,
                    p.repeat_misses
                ),
                expected,
                "{level} stride {stride} × {count}"
            );
            assert_eq!(
                p.cache_lines,
                if level.starts_with("L2") { 8192 } else { 512 }
            );
        }
    }

    #[test]
    fn non_power_of_two_set_count() {
        // 40 960 sets (a sliced 30 MiB 12-way L3): stride 16 lines → 40960 / gcd(16, 40960)
        // = 2560 sets; 3 sets with a stride of 3 lines → 1 set; stride 2 lines → all 3.
        assert_eq!(closed_form_sets(16 * 64, 64, 40_960), Some(2560));
        assert_eq!(distinct_sets(BASE, 16 * 64, 100_000, 64, 40_960), 2560);
        assert_eq!(closed_form_sets(3 * 64, 64, 3), Some(1));
        assert_eq!(distinct_sets(0, 3 * 64, 50, 64, 3), 1);
        assert_eq!(closed_form_sets(2 * 64, 64, 3), Some(3));
        assert_eq!(distinct_sets(0, 2 * 64, 50, 64, 3), 3);
    }

    #[test]
    fn negative_and_sub_line_strides() {
        assert_eq!(closed_form_sets(-4096, 64, 64), Some(1));
        assert_eq!(distinct_sets(BASE, -4096, 100, 64, 64), 1);
        // 8 B stride: 8 accesses per line, so 64 accesses touch 8 sets.
        assert_eq!(distinct_sets(BASE, 8, 64, 64, 64), 8);
        assert_eq!(closed_form_sets(8, 64, 64), None);
        assert_eq!(closed_form_sets(0, 64, 64), Some(1));
    }

    proptest::proptest! {
        #[test]
        fn the_closed_form_and_the_walk_equal_enumeration(
            base_line in 0u64..1 << 20,
            offset in 0u64..64,
            stride in -300i64..3000,
            line_log in 4u32..8,
            sets in 1u32..100,
            ways in 1u32..9,
            cut in 0.0f64..1.2,
        ) {
            let line = 1u32 << line_log;
            let base = (base_line << line_log) + offset % u64::from(line);
            let most = u64::from(ways + 1) * u64::from(sets) * u64::from(line) + 2;
            let bound = (most as f64 * cut) as u64;
            let pattern = Strided { base, stride, line };
            let listed = overflow_onset_listed(pattern, sets, ways, bound, false);
            proptest::prop_assert_eq!(
                set_overflow_onset(base, stride, line, sets, ways, bound),
                listed,
                "base {} stride {} line {} sets {} ways {}", base, stride, line, sets, ways
            );
            proptest::prop_assert_eq!(
                overflow_onset_listed(pattern, sets, ways, bound, true),
                listed
            );
        }
    }

    proptest::proptest! {
        /// The model's verdict agrees with the simulator: a second LRU pass over the pattern
        /// has conflict misses exactly when the model says some set holds more than `ways`
        /// lines (while the pattern fits in the cache, so nothing else can miss).
        #[test]
        fn onset_agrees_with_the_simulator(stride in 1i64..9000, count in 1u64..=64, ways in 1u64..5) {
            use crate::cache::AccessSink;
            use crate::cache::sim::{Hierarchy, Policy};
            // 64 sets, so the ≤ 64 accesses always fit in the cache as a whole.
            let l1 = parse_cache_override(&format!("L1d={},{ways},64", 64 * ways * 64)).unwrap();
            let p = &predict(std::slice::from_ref(&l1), BASE, stride, count)[0];
            let mut sim = Hierarchy::new(&[l1], Policy::LRU, true).unwrap();
            for pass in 0..2 {
                if pass == 1 {
                    sim.reset_stats();
                }
                for i in 0..count {
                    sim.load(BASE.wrapping_add((i as i64 * stride) as u64), 1);
                }
            }
            let s = sim.stats()[0];
            proptest::prop_assert_eq!(s.capacity, 0);
            proptest::prop_assert_eq!(s.conflict > 0, p.overflows, "{:?} {:?}", p, s);
            proptest::prop_assert_eq!(
                p.repeat_misses,
                if p.overflows { RepeatMisses::Conflict } else { RepeatMisses::None }
            );
        }

        #[test]
        fn closed_form_equals_enumeration(lines in 0i64..300, sets in 1u32..200, base in 0u64..1_000_000) {
            let count = u64::from(sets) * 2;
            proptest::prop_assert_eq!(
                closed_form_sets(lines * 64, 64, sets),
                Some(distinct_sets(base, lines * 64, count, 64, sets))
            );
        }
    }
}
