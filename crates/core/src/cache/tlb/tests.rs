//! The TLB simulators against hand-derived counts, and the fast one against the reference on
//! random traces, geometries and both page sizes; the choice of levels from CPUID and presets.

use proptest::prelude::*;

use super::cpuid::ReportedTlb;
use super::reference::ReferenceTlb;
use super::*;
use crate::cache::{AccessSink, Walk};

fn level(name: &str, page: PageSize, entries: u32, ways: u32) -> TlbLevel {
    TlbLevel::new(name, page, entries, ways, "test".into()).unwrap()
}

/// Golden Cove's table for `page` (`preset.rs`).
fn golden_cove(page: PageSize) -> Vec<TlbLevel> {
    preset::levels("intel-golden-cove", page).unwrap()
}

/// (lookups, misses) per level.
fn counts(sim: &TlbSim) -> Vec<(u64, u64)> {
    sim.stats()
        .levels
        .iter()
        .map(|c| (c.lookups, c.misses))
        .collect()
}

const BASE: u64 = 1 << 32;

#[test]
fn hand_derived_walks() {
    // (what, page size, the walk, (lookups, misses) per level, distinct pages of the run's size)
    type Feed = fn(&mut dyn AccessSink);
    type Row = (&'static str, PageSize, Feed, [(u64, u64); 2], u64);
    let row_walk_10_pages: Feed = |s| s.load_run(BASE, 8, 10 * 512, 8);
    // A 1024×1024 f64 matrix, column by column: rows 8 KiB apart, 2048 pages of 4 KiB.
    let column_walk: Feed = |s| {
        for col in 0..1024 {
            s.load_run(BASE + col * 8, 8192, 1024, 8);
        }
    };
    let m = 1024 * 1024;
    let table: [Row; 4] = [
        // A row walk misses once per page at each level: 10 pages, 512 loads each.
        (
            "row walk, 4 KiB",
            PageSize::Small,
            row_walk_10_pages,
            [(5120, 10), (10, 10)],
            10,
        ),
        // 40 KiB fit one 2 MiB page: one miss.
        (
            "row walk, 2 MiB",
            PageSize::Huge,
            row_walk_10_pages,
            [(5120, 1), (1, 1)],
            1,
        ),
        // Every access lands on another 4 KiB page; a column's 1024 pages (every other page
        // from BASE) fall in 8 of the L1 DTLB's 16 sets, 128 to a 4-way set: every access
        // misses it. In the STLB's 128 sets they take 64 sets, 16 pages each for 16 ways: only
        // each page's first touch misses (1024 pages for columns 0–511, the other 1024 after).
        (
            "column walk, 4 KiB",
            PageSize::Small,
            column_walk,
            [(m, m), (m, 2048)],
            2048,
        ),
        // The 8 MiB matrix is 4 pages of 2 MiB, far below 32 entries: 4 misses in all.
        (
            "column walk, 2 MiB",
            PageSize::Huge,
            column_walk,
            [(m, 4), (4, 4)],
            4,
        ),
    ];
    for (what, page, feed, expected, pages) in table {
        let mut fast = TlbSim::new(&golden_cove(page));
        feed(&mut fast);
        assert_eq!(counts(&fast), expected, "{what}");
        assert_eq!(fast.stats().footprint.pages(page), pages, "{what}");
        assert_eq!(fast.stats().accesses, expected[0].0, "{what}");
    }
}

#[test]
fn a_straddling_access_looks_up_both_pages_and_counts_once() {
    let mut sim = TlbSim::new(&[level("L1 DTLB", PageSize::Small, 4, 4)]);
    sim.load(4092, 8); // bytes 4092..4100: pages 0 and 1
    assert_eq!(counts(&sim), [(1, 1)]);
    assert_eq!(sim.contents()[0][0], [1, 0]);
    sim.load(4094, 4); // both resident
    sim.load(8190, 4); // page 1 resident, page 2 not: one miss
    assert_eq!(counts(&sim), [(3, 2)]);
    assert_eq!(sim.stats().footprint.pages(PageSize::Small), 3);
}

#[test]
fn lru_evicts_the_least_recent_page_and_a_miss_goes_down() {
    // L1: one set of 2 ways; STLB: one set of 4 ways. Pages A B A C B:
    // A, B miss both; A hits L1 (now A most recent); C misses L1 (evicting B) and the STLB;
    // B misses L1 (evicting A) and hits the STLB.
    let page = PageSize::Small.bytes();
    let levels = [
        level("L1 DTLB", PageSize::Small, 2, 2),
        level("STLB", PageSize::Small, 4, 4),
    ];
    let mut sim = TlbSim::new(&levels);
    for p in [0, 1, 0, 2, 1] {
        sim.store(p * page, 8);
    }
    assert_eq!(counts(&sim), [(5, 4), (4, 3)]);
    assert_eq!(sim.contents()[0][0], [1, 2]);
    assert_eq!(sim.stats().page_changes, 5);
}

#[test]
fn levels_need_whole_sets() {
    assert!(TlbLevel::new("STLB", PageSize::Small, 2048, 12, String::new()).is_err());
    assert!(TlbLevel::new("STLB", PageSize::Small, 0, 1, String::new()).is_err());
    let zen = preset::levels("amd-zen4", PageSize::Small).unwrap();
    assert_eq!((zen[0].entries, zen[0].sets()), (72, 1));
    assert_eq!(
        (zen[1].entries, zen[1].ways, zen[1].sets()),
        (3072, 24, 128)
    );
    for name in preset::TLB_PRESET_NAMES {
        match preset::levels(name, PageSize::Huge) {
            Ok(levels) => assert_eq!(levels.len(), 2, "{name}"),
            Err(e) => assert!(e.to_string().contains("16 KiB"), "{name}: {e}"),
        }
    }
}

#[test]
fn choosing_levels_says_where_they_came_from() {
    let nothing = choose_from(PageSize::Small, &[], Some("GenuineIntel")).unwrap();
    assert_eq!(nothing.levels, golden_cove(PageSize::Small));
    assert!(
        nothing.origin.contains("CPUID reports no data TLB"),
        "{}",
        nothing.origin
    );
    assert!(choose_from(PageSize::Small, &[], Some("Weird")).is_err());
    let amd = [
        ReportedTlb {
            level: 1,
            page_bytes: 4096,
            entries: 72,
            ways: Some(72),
            leaf: "0x8000_0005",
        },
        ReportedTlb {
            level: 2,
            page_bytes: 4096,
            entries: 3072,
            ways: None,
            leaf: "0x8000_0006",
        },
    ];
    let chosen = choose_from(PageSize::Small, &amd, Some("AuthenticAMD")).unwrap();
    assert_eq!(chosen.levels[0].source, "cpuid 0x8000_0005");
    assert_eq!(chosen.levels[1].ways, 24);
    assert!(chosen.levels[1].source.contains("preset amd-zen4 (ways)"));
    assert!(
        chosen
            .origin
            .contains("STLB's ways from the amd-zen4 preset"),
        "{}",
        chosen.origin
    );
    let preset = choose(PageSize::Huge, Some("amd-zen4")).unwrap();
    assert_eq!(
        preset.levels[0].source,
        "preset amd-zen4 (AMD optimization guide 57647)"
    );
    assert!(choose(PageSize::Small, Some("apple-m1-firestorm")).is_err());
}

/// One operation of a random trace.
#[derive(Debug, Clone)]
enum Op {
    Load(u64, u32),
    Store(u64, u32),
    Run(u64, i64, u64, u32),
    Moves(Walk, Walk, u64, u32),
    Reset,
}

/// Addresses over 24 pages of `page`, many just before a page's end.
fn address(page: u64) -> impl Strategy<Value = u64> {
    (
        0u64..24,
        prop_oneof![0u64..64, Just(page - 4), Just(page - 1), 0..page],
    )
        .prop_map(move |(p, offset)| (1 << 32) + p * page + offset.min(page - 1))
}

fn step(page: u64) -> impl Strategy<Value = i64> {
    let page = page as i64;
    prop_oneof![
        -64i64..64,
        Just(4096),
        Just(-4096),
        Just(4095),
        Just(page),
        Just(-page),
        Just(page + 8),
        -3 * page..3 * page,
    ]
}

fn op(page: u64) -> impl Strategy<Value = Op> {
    let len = prop_oneof![1u32..=16, Just(4096u32), 1u32..6000];
    prop_oneof![
        (address(page), len.clone()).prop_map(|(a, l)| Op::Load(a, l)),
        (address(page), len.clone()).prop_map(|(a, l)| Op::Store(a, l)),
        (address(page), step(page), 0u64..300, len.clone())
            .prop_map(|(a, s, c, l)| Op::Run(a, s, c, l)),
        (
            address(page),
            step(page),
            address(page),
            step(page),
            0u64..100,
            1u32..=16
        )
            .prop_map(|(a, s, b, t, c, l)| Op::Moves(
                Walk { addr: a, step: s },
                Walk { addr: b, step: t },
                c,
                l
            )),
        Just(Op::Reset),
    ]
}

fn apply(op: &Op, sink: &mut dyn AccessSink) {
    match *op {
        Op::Load(a, l) => sink.load(a, l),
        Op::Store(a, l) => sink.modify(a, l),
        Op::Run(a, s, c, l) => sink.load_run(a, s, c, l),
        Op::Moves(from, to, c, l) => sink.move_run(from, to, c, l),
        Op::Reset => {}
    }
}

proptest! {
    /// The fast simulator's counts, footprint and contents equal the reference's on random
    /// traces (single accesses with straddles, runs of any step, moves, resets), random
    /// geometries of 1–2 levels and both page sizes.
    #[test]
    fn fast_tlb_equals_reference(
        (huge, shapes, ops) in (any::<bool>(), proptest::collection::vec((1u32..5, 1u32..5), 1..3))
            .prop_flat_map(|(huge, shapes)| {
                let page = if huge { PageSize::Huge } else { PageSize::Small };
                (Just(huge), Just(shapes), proptest::collection::vec(op(page.bytes()), 0..40))
            }),
    ) {
        let page = if huge { PageSize::Huge } else { PageSize::Small };
        let levels: Vec<TlbLevel> = shapes
            .iter()
            .enumerate()
            .map(|(i, &(sets, ways))| level(if i == 0 { "L1 DTLB" } else { "STLB" }, page, sets * ways, ways))
            .collect();
        let mut fast = TlbSim::new(&levels);
        let mut reference = ReferenceTlb::new(&levels);
        for op in &ops {
            if matches!(op, Op::Reset) {
                fast.reset_stats();
                reference.reset_stats();
            }
            apply(op, &mut fast);
            apply(op, &mut reference);
            prop_assert_eq!(fast.stats(), reference.stats(), "after {:?}", op);
        }
        prop_assert_eq!(fast.contents(), reference.contents());
    }
}
