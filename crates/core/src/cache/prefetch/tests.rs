//! The prefetch model against walks whose counts are derived by hand (in each case's comment),
//! and the fast model against the reference on random traces, parameters and geometries.

use proptest::prelude::*;

use super::counts::{ModelShape, PrefetchCounts};
use super::fast::FastPrefetch;
use super::reference::ReferencePrefetch;
use super::*;
use crate::cache::geometry::{CacheKind, GeometrySource};
use crate::cache::sim::{Hierarchy, Policy};

fn level(name: &str, size: u64, ways: u64, line: u64) -> CacheLevel {
    let kind = if name == "L1d" {
        CacheKind::Data
    } else {
        CacheKind::Unified
    };
    CacheLevel::new(name, kind, size, ways, line, GeometrySource::Override).unwrap()
}

fn config(next_line: bool, entries: u32, train: u32, distance: u32) -> PrefetchConfig {
    PrefetchConfig {
        name: "test".into(),
        fill_level: "L2".into(),
        next_line,
        stream_entries: entries,
        train_accesses: train,
        distance,
        source: "test".into(),
        assumptions: Vec::new(),
    }
}

/// Both implementations fed the same accesses; asserts they agree and returns the counts.
fn both(
    levels: &[CacheLevel],
    config: &PrefetchConfig,
    feed: impl Fn(&mut dyn AccessSink),
) -> PrefetchCounts {
    let shape = ModelShape::new(levels, config, 1 << 30).unwrap();
    let mut reference = ReferencePrefetch::new(shape.clone());
    let mut fast = FastPrefetch::new(shape);
    feed(&mut reference);
    feed(&mut fast);
    let counts = reference.counts();
    assert_eq!(fast.counts(), counts);
    counts
}

/// A 64 KiB 16-way L2 alone (64-byte lines): 1024 lines, so the walks below never evict.
fn l2_alone() -> Vec<CacheLevel> {
    vec![level("L2", 64 << 10, 16, 64)]
}

/// 8-byte loads over `pages` pages in address order, one at a time or as one run.
fn sequential(pages: u64, as_run: bool) -> impl Fn(&mut dyn AccessSink) {
    move |sink: &mut dyn AccessSink| {
        if as_run {
            sink.load_run(0, 8, pages * 512, 8);
        } else {
            for k in 0..pages * 512 {
                sink.load(k * 8, 8);
            }
        }
    }
}

#[test]
fn a_sequential_walk_is_covered_but_for_the_training_misses_of_each_page() {
    // Per page of 64 lines, stream only, trained after 3: lines 0, 1, 2 miss (training at 2
    // prefetches 3..=22), lines 3..=63 are covered, each prefetched once; pages 4: × 4.
    // With the next-line prefetcher too: 0 misses and fetches 1 (covered, a hit: no fetch of
    // 2), 2 misses and fetches 3 (covered), the stream trained at 2 prefetches 4..: 2 misses,
    // 2 covered by next-line, 60 by the stream per page.
    type Case = (bool, u64, u64, u64, u64, u64);
    // (next_line, misses with, covered by stream, covered by next-line, issued by stream, …next-line)
    let cases: [Case; 2] = [(false, 12, 244, 0, 244, 0), (true, 8, 240, 8, 240, 8)];
    for (next_line, misses, by_stream, by_next, issued_stream, issued_next) in cases {
        for as_run in [false, true] {
            let c = both(
                &l2_alone(),
                &config(next_line, 32, 3, 20),
                sequential(4, as_run),
            );
            assert_eq!(c.accesses, 2048);
            assert_eq!(c.fill_accesses, 2048);
            assert_eq!(c.misses_without, 256);
            assert_eq!(
                (c.misses_with, c.covered_by_stream, c.covered_by_next_line),
                (misses, by_stream, by_next),
                "next_line {next_line}"
            );
            assert_eq!(
                (c.issued_by_stream, c.issued_by_next_line),
                (issued_stream, issued_next)
            );
            assert_eq!((c.unused(), c.table_evictions), (0, 0));
            // Every access but a page's first returns to the page it left: 1 stream.
            assert_eq!(
                (c.returning(), c.max_streams(), c.median_streams()),
                (2044, 1, 1)
            );
        }
    }
}

#[test]
fn a_descending_walk_trains_a_backward_stream() {
    // Lines 63, 62, 61 of the page miss; 60 down to 0 are covered.
    let walk = |sink: &mut dyn AccessSink| sink.load_run(4095 - 7, -8, 512, 8);
    let c = both(&l2_alone(), &config(false, 4, 3, 20), walk);
    assert_eq!((c.misses_with, c.covered_by_stream, c.unused()), (3, 61, 0));
}

#[test]
fn a_stream_stops_at_the_page_edge_and_retrains_in_the_next_page() {
    // Lines 60..=70, one load each: 60, 61, 62 miss and train, the prefetch stops at 63 (the
    // page's last line); page 1 retrains on 64, 65, 66, which prefetches 67..=86; 67..=70 are
    // covered, each prefetching one more line (87..=90), and 71..=90 are left unused.
    let walk = |sink: &mut dyn AccessSink| {
        for line in 60..=70 {
            sink.load(line * 64, 8);
        }
    };
    let c = both(&l2_alone(), &config(false, 4, 3, 20), walk);
    assert_eq!((c.misses_with, c.covered_by_stream), (6, 5));
    assert_eq!(
        (c.issued_by_stream, c.unused_left, c.unused_evicted),
        (25, 20, 0)
    );
}

/// `pages` streams interleaved: for each line of 16, for each of 16 four-byte elements in
/// it, one load in each page: the order of a permuted tensor's walk, channels innermost.
fn interleaved(pages: u64) -> impl Fn(&mut dyn AccessSink) {
    move |sink: &mut dyn AccessSink| {
        for line in 0..16 {
            for element in 0..16 {
                for page in 0..pages {
                    sink.load(page * 4096 + line * 64 + element * 4, 4);
                }
            }
        }
    }
}

#[test]
fn more_interleaved_streams_than_the_table_holds_leave_nothing_covered() {
    // An L1 of one 128-way set holds every stream's line, so the L2 sees each line once: 64
    // pages × 16 lines, the pages in turn. Each returning access saw all 64 pages since its
    // own: with 32 entries its entry is always gone (a new entry each time, never trained, no
    // prefetch; 1024 − 32 replacements); with 64 every page trains at its third line and the
    // remaining 13 of 16 are covered.
    let levels = [
        level("L1d", 8 << 10, 128, 64),
        level("L2", 256 << 10, 8, 64),
    ];
    // (entries, covered, table evictions)
    for (entries, covered, evictions) in [(32, 0, 1024 - 32), (64, 64 * 13, 0)] {
        let c = both(&levels, &config(false, entries, 3, 20), interleaved(64));
        assert_eq!(
            (c.accesses, c.fill_accesses, c.misses_without),
            (16384, 1024, 1024)
        );
        assert_eq!(
            (c.covered(), c.table_evictions, c.trained_evicted),
            (covered, evictions, 0)
        );
        assert_eq!(c.misses_with, 1024 - covered);
        assert_eq!((c.max_streams(), c.median_streams()), (64, 64));
        assert_eq!(
            c.returning_beyond(entries),
            if entries == 32 { 1024 - 64 } else { 0 }
        );
    }
}

#[test]
fn trained_streams_pushed_out_by_new_pages_count_as_thrash_when_their_page_returns() {
    // Three pages, a table of 2: page 0 trains (lines 0, 1, 2; prefetching 3..=6), pages 1
    // and 2 each take an entry: the second replaces page 0's trained entry. A page that never
    // returns lost nothing; a return to page 0 (line 3, a covered line) finds its stream lost
    // and replaces page 1's untrained entry.
    // (addresses, table replacements, trained ones replaced, streams lost, covered)
    type Case = (&'static [u64], u64, u64, u64, u64);
    let cases: [Case; 2] = [
        (&[0, 64, 128, 4096, 8192], 1, 1, 0, 0),
        (&[0, 64, 128, 4096, 8192, 192], 2, 1, 1, 1),
    ];
    for (addrs, replaced, trained, lost, covered) in cases {
        let walk = |sink: &mut dyn AccessSink| {
            for &addr in addrs {
                sink.load(addr, 8);
            }
        };
        let c = both(&l2_alone(), &config(false, 2, 3, 4), walk);
        assert_eq!(
            (
                c.table_evictions,
                c.trained_evicted,
                c.streams_lost,
                c.covered()
            ),
            (replaced, trained, lost, covered),
            "{addrs:?}"
        );
        assert_eq!(c.issued_by_stream, 4);
    }
}

#[test]
fn streams_beyond_the_counted_limit_are_counted_at_the_limit() {
    // 1100 pages once each, then page 0 (1100 pages walked since its access, its own
    // included: counted as 1024) and page 1099 (2: page 0 came between).
    let walk = |sink: &mut dyn AccessSink| {
        for page in 0..1100u64 {
            sink.load(page * 4096, 8);
        }
        sink.load(64, 8);
        sink.load(1099 * 4096 + 64, 8);
    };
    let c = both(&l2_alone(), &config(false, 4, 3, 4), walk);
    assert_eq!(c.returning(), 2);
    assert_eq!((c.streams[MAX_COUNTED_STREAMS], c.streams[2]), (1, 1));
    assert_eq!(c.max_streams(), MAX_COUNTED_STREAMS);
}

#[test]
fn without_prefetch_the_model_misses_as_the_simulator_does() {
    // The model's fill level without prefetch is the simulator's level under LRU, for accesses
    // that straddle no line.
    let levels = [level("L1d", 4 << 10, 4, 64), level("L2", 32 << 10, 4, 64)];
    let mut simulator = Hierarchy::new(&levels, Policy::LRU, false).unwrap();
    let c = both(&levels, &config(true, 8, 3, 8), interleaved(48));
    interleaved(48)(&mut simulator);
    let l2 = simulator.stats()[1];
    assert_eq!(c.misses_without, l2.misses());
    assert_eq!(c.fill_accesses, l2.accesses());
    assert!(
        c.misses_without > 1024,
        "the walk must overflow the L2 to test anything"
    );
}

#[test]
fn a_fill_level_the_geometry_lacks_is_refused() {
    let mut cfg = config(true, 8, 3, 8);
    cfg.fill_level = "L3".into();
    let err = PrefetchModel::new(&l2_alone(), &cfg, 1 << 30, false).unwrap_err();
    assert!(err.to_string().contains("fills L3"), "{err}");
    let err = PrefetchModel::new(&l2_alone(), &config(true, 8, 3, 8), 1000, false).unwrap_err();
    assert!(matches!(err, PrefetchError::TooLarge { .. }), "{err}");
}

#[test]
fn the_finding_names_the_streams_against_the_table() {
    let levels = [
        level("L1d", 8 << 10, 128, 64),
        level("L2", 256 << 10, 8, 64),
    ];
    let mut model = PrefetchModel::new(&levels, &config(false, 32, 3, 20), 1 << 30, false).unwrap();
    interleaved(64)(&mut model);
    let report = model.report();
    assert_eq!(
        report.finding,
        "the walk keeps 64 streams at the median (up to 64), more than the 32 the stream table \
         holds: 100.0% of its returns to a page find the page's entry replaced; the stream \
         prefetcher covers 0.0% of L2's demand misses; 1,024 of 1,024 misses remain"
    );
    let mut model =
        PrefetchModel::new(&l2_alone(), &config(true, 32, 3, 20), 1 << 30, false).unwrap();
    sequential(4, true)(&mut model);
    assert_eq!(
        model.report().finding,
        "the walk keeps 1 stream at the median (up to 1), within the 32 the stream table holds: \
         0.0% of its returns to a page find the page's entry replaced; the stream prefetcher \
         covers 93.8% of L2's demand misses, the next-line prefetcher 3.1%; 8 of 256 misses \
         remain"
    );
}

#[derive(Debug, Clone)]
enum Op {
    Load(u64, u32),
    Store(u64, u32),
    Run(u64, i64, u64, u32),
}

fn op() -> impl Strategy<Value = Op> {
    // Addresses in 20 KiB: five pages, so streams cross page edges and pages return.
    let addr = 0u64..20 << 10;
    let len = 1u32..=16;
    prop_oneof![
        (addr.clone(), len.clone()).prop_map(|(a, l)| Op::Load(a, l)),
        (addr.clone(), len.clone()).prop_map(|(a, l)| Op::Store(a, l)),
        (addr, -300i64..300, 0u64..80, len).prop_map(|(a, s, n, l)| Op::Run(a, s, n, l)),
    ]
}

fn geometry() -> impl Strategy<Value = Vec<CacheLevel>> {
    // (line, sets, ways) of a first level and the fill level; the first may be left out.
    let shape = || {
        (
            prop::sample::select(vec![16u64, 32, 64, 128]),
            1u64..9,
            1u64..5,
        )
    };
    (any::<bool>(), shape(), shape()).prop_map(|(alone, (l1, s1, w1), (l2, s2, w2))| {
        let fill = level("L2", l2 * s2 * w2, w2, l2);
        if alone {
            vec![fill]
        } else {
            vec![level("L1d", l1 * s1 * w1, w1, l1), fill]
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_fast_model_equals_the_reference(
        levels in geometry(),
        next_line in any::<bool>(),
        entries in 0u32..6,
        train in 2u32..5,
        distance in 1u32..10,
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let shape = ModelShape::new(&levels, &config(next_line, entries, train, distance), 1 << 30).unwrap();
        let mut reference = ReferencePrefetch::new(shape.clone());
        let mut fast = FastPrefetch::new(shape);
        for op in &ops {
            for sink in [&mut reference as &mut dyn AccessSink, &mut fast] {
                match *op {
                    Op::Load(a, l) => sink.load(a, l),
                    Op::Store(a, l) => sink.store(a, l),
                    Op::Run(a, s, n, l) => sink.load_run(a, s, n, l),
                }
            }
        }
        prop_assert_eq!(fast.counts(), reference.counts());
    }
}
