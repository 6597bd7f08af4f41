//! The address stream each kernel feeds the simulator, compared with a brute-force transcription
//! of the order the catalogue specifies (written here independently of the kernels' code). The
//! accumulator interleaving never changes the address order, so the streams must be identical.

use stridelab::cache::AccessSink;
use stridelab::kernels::families::view::{ViewGeometry, prepare_view};
use stridelab::kernels::spec::{Instance, PrepareOptions};
use stridelab::kernels::typed::Dtype;
use stridelab::kernels::{find, resolve_params};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Load(usize, usize),
    Store(usize, usize),
}
use Access::{Load, Store};

#[derive(Default)]
struct Recorder(Vec<Access>);

fn decode(addr: u64, len: u32) -> (usize, usize) {
    assert_eq!(len, 8);
    assert_eq!(addr % 8, 0);
    ((addr >> 32) as usize - 1, (addr & 0xffff_ffff) as usize / 8)
}

impl AccessSink for Recorder {
    fn load(&mut self, addr: u64, len: u32) {
        let (buffer, index) = decode(addr, len);
        self.0.push(Load(buffer, index));
    }
    fn store(&mut self, addr: u64, len: u32) {
        let (buffer, index) = decode(addr, len);
        self.0.push(Store(buffer, index));
    }
}

fn stream(kernel: &str, args: &[(&str, &str)]) -> Vec<Access> {
    let spec = find(kernel).unwrap();
    let args: Vec<(String, String)> = args
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let params = resolve_params(spec, &args).unwrap();
    record(
        (spec.prepare)(
            &params,
            &PrepareOptions::with_planner(crate::common::planner()),
        )
        .unwrap(),
    )
}

fn record(mut instance: Box<dyn Instance>) -> Vec<Access> {
    let mut recorder = Recorder::default();
    instance.simulate(&mut recorder);
    let first = recorder.0.clone();
    // A second simulation (warm) is the same stream: runs do not drift.
    recorder.0.clear();
    instance.simulate(&mut recorder);
    assert_eq!(first, recorder.0);
    first
}

/// The cells a copy kernel's checksum reads back: 64 spread indices (all when fewer).
fn checksum_tail(buffer: usize, len: usize) -> Vec<Access> {
    let samples = len.min(64);
    (0..samples)
        .map(|s| Load(buffer, s * len / samples))
        .collect()
}

fn assert_same(kernel: &str, got: Vec<Access>, want: Vec<Access>) {
    assert_eq!(got.len(), want.len(), "{kernel}: stream length");
    if let Some(at) = got.iter().zip(&want).position(|(g, w)| g != w) {
        panic!(
            "{kernel}: access {at} is {:?}, the order says {:?}",
            got[at], want[at]
        );
    }
}

#[test]
fn row_and_col_sums() {
    for (rows, cols, ld) in [(5, 7, 7), (7, 13, 16), (3, 1, 4)] {
        let (r, c, l) = (rows.to_string(), cols.to_string(), ld.to_string());
        let args = [
            ("rows", r.as_str()),
            ("cols", c.as_str()),
            ("ld", l.as_str()),
        ];
        let mut want = vec![];
        for i in 0..rows {
            for j in 0..cols {
                want.push(Load(0, i * ld + j));
            }
        }
        assert_same("row-sum", stream("row-sum", &args), want.clone());
        want.clear();
        for j in 0..cols {
            for i in 0..rows {
                want.push(Load(0, i * ld + j));
            }
        }
        assert_same("col-sum", stream("col-sum", &args), want);
    }
}

#[test]
fn stride_sum() {
    for (len, stride) in [(100, 1), (100, 7), (64, 64), (1000, 9)] {
        let want = (0..len).step_by(stride).map(|k| Load(0, k)).collect();
        let (l, s) = (len.to_string(), stride.to_string());
        assert_same(
            "stride-sum",
            stream("stride-sum", &[("len", &l), ("stride", &s)]),
            want,
        );
    }
}

/// splitmix64 + Sattolo, transcribed from the documented definition.
fn cycle(n: usize, seed: u64) -> Vec<usize> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    };
    let mut p: Vec<usize> = (0..n).collect();
    let mut i = n;
    while i > 1 {
        i -= 1;
        let j = (next() % i as u64) as usize;
        p.swap(i, j);
    }
    p
}

#[test]
fn conflict_probes() {
    let (stride, count, reps) = (512, 13, 3);
    let mut want = vec![];
    for _ in 0..reps {
        want.extend((0..count).map(|k| Load(0, k * stride)));
    }
    let args = [("stride", "512"), ("count", "13"), ("reps", "3")];
    assert_same("conflict thr", stream("conflict", &args), want);

    let p = cycle(count, 5);
    let mut slot = 0;
    let mut want = vec![];
    for _ in 0..reps * count {
        want.push(Load(0, slot * stride));
        slot = p[slot];
    }
    let args = [
        ("stride", "512"),
        ("count", "13"),
        ("reps", "3"),
        ("mode", "lat"),
        ("seed", "5"),
    ];
    assert_same("conflict lat", stream("conflict", &args), want);
}

#[test]
fn chase_visits_every_line_once_in_the_seeded_cycle() {
    let p = cycle(96, 3);
    let mut slot = 0;
    let mut want = vec![];
    for _ in 0..96 {
        want.push(Load(0, slot * 8));
        slot = p[slot];
    }
    assert_eq!(slot, 0);
    assert_same(
        "chase",
        stream("chase", &[("bytes", "6K"), ("seed", "3")]),
        want,
    );
}

#[test]
fn transposes() {
    let (rows, cols, ld) = (7, 13, 15);
    let element = |i: usize, j: usize| [Load(0, i * ld + j), Store(1, j * rows + i)];
    let tail = checksum_tail(1, rows * cols);
    let base = [("rows", "7"), ("cols", "13"), ("ld", "15")];
    let with = |variant: &'static str, block: &'static str| {
        let mut args = base.to_vec();
        args.push(("variant", variant));
        args.push(("B", block));
        stream("transpose", &args)
    };

    let mut want = vec![];
    for i in 0..rows {
        for j in 0..cols {
            want.extend(element(i, j));
        }
    }
    want.extend(&tail);
    assert_same("naive-read", with("naive-read", "32"), want);

    let mut want = vec![];
    for j in 0..cols {
        for i in 0..rows {
            want.extend(element(i, j));
        }
    }
    want.extend(&tail);
    // With 7 rows the copy engine copies runs (a transpose tile of fewer than 8 rows is
    // mostly edge), in naive-write's order.
    assert_same("fast", with("fast", "32"), want.clone());
    assert_same("naive-write", with("naive-write", "32"), want);

    let block = 4;
    let mut want = vec![];
    let mut ti = 0;
    while ti < rows {
        let mut tj = 0;
        while tj < cols {
            for i in ti..(ti + block).min(rows) {
                for j in tj..(tj + block).min(cols) {
                    want.extend(element(i, j));
                }
            }
            tj += block;
        }
        ti += block;
    }
    want.extend(&tail);
    assert_same("blocked", with("blocked", "4"), want);
}

#[test]
fn tiled_sums_and_to_tiles() {
    for (n, b) in [(8usize, 4usize), (7, 3), (2, 5)] {
        let t = n.div_ceil(b);
        let at = |i: usize, j: usize| ((i / b) * t + j / b) * b * b + (i % b) * b + j % b;
        let (ns, bs) = (n.to_string(), b.to_string());
        let rows = (0..n).flat_map(|i| (0..n).map(move |j| (i, j)));
        let want: Vec<_> = rows.clone().map(|(i, j)| Load(0, at(i, j))).collect();
        let args = [("n", ns.as_str()), ("B", bs.as_str()), ("order", "row")];
        assert_same("tiled-sum row", stream("tiled-sum", &args), want);
        let want = (0..n)
            .flat_map(|j| (0..n).map(move |i| (i, j)))
            .map(|(i, j)| Load(0, at(i, j)))
            .collect();
        let args = [("n", ns.as_str()), ("B", bs.as_str()), ("order", "col")];
        assert_same("tiled-sum col", stream("tiled-sum", &args), want);

        // to-tiles: each destination tile's cells in storage order, tiles in tile-major order
        // (the C order of the copies, which fill the destination sequentially per tile row).
        let mut want = vec![];
        for ti in 0..t {
            for tj in 0..t {
                for r in 0..b.min(n - ti * b) {
                    for c in 0..b.min(n - tj * b) {
                        let (i, j) = (ti * b + r, tj * b + c);
                        want.push(Load(0, i * n + j));
                        want.push(Store(1, at(i, j)));
                    }
                }
            }
        }
        want.extend(checksum_tail(1, t * t * b * b));
        let args = [("n", ns.as_str()), ("B", bs.as_str())];
        assert_same("to-tiles", stream("to-tiles", &args), want);
    }
}

#[test]
fn nchw_to_nhwc_conversions() {
    let (n, c, h, w) = (2, 3, 4, 5);
    let nchw = |b: usize, ch: usize, y: usize, x: usize| ((b * c + ch) * h + y) * w + x;
    let nhwc = |b: usize, ch: usize, y: usize, x: usize| ((b * h + y) * w + x) * c + ch;
    let element = |b, ch, y, x| [Load(0, nchw(b, ch, y, x)), Store(1, nhwc(b, ch, y, x))];
    let tail = checksum_tail(1, n * c * h * w);
    let with = |variant: &'static str| {
        let dims = [("n", "2"), ("c", "3"), ("h", "4"), ("w", "5")];
        stream("to-nhwc", &[&dims[..], &[("variant", variant)]].concat())
    };
    // naive-write: the destination in C order (for n, h, w, c).
    let mut want = vec![];
    for b in 0..n {
        for y in 0..h {
            for x in 0..w {
                for ch in 0..c {
                    want.extend(element(b, ch, y, x));
                }
            }
        }
    }
    want.extend(&tail);
    assert_same("to-nhwc naive-write", with("naive-write"), want);
    // naive-read: the source in C order (for n, c, h, w).
    let mut want = vec![];
    for b in 0..n {
        for ch in 0..c {
            for y in 0..h {
                for x in 0..w {
                    want.extend(element(b, ch, y, x));
                }
            }
        }
    }
    want.extend(&tail);
    assert_same("to-nhwc naive-read", with("naive-read"), want);
}

#[test]
fn references() {
    let n = 1000;
    let mut want: Vec<_> = (0..n).flat_map(|k| [Load(0, k), Store(1, k)]).collect();
    want.extend(checksum_tail(1, n));
    assert_same("copy", stream("copy", &[("bytes", "8000")]), want);
    let want = (0..n).map(|k| Load(0, k)).collect();
    assert_same("read", stream("read", &[("bytes", "8000")]), want);
}

#[test]
fn view_walks_in_logical_c_order() {
    let view = ViewGeometry {
        shape: vec![3, 2, 4],
        strides: vec![-20, 1, 3],
        offset: 41,
        storage_len: 64,
    };
    let mut want = vec![];
    for a in 0..3isize {
        for b in 0..2isize {
            for c in 0..4isize {
                want.push(Load(0, (41 - 20 * a + b + 3 * c) as usize));
            }
        }
    }
    let got = record(
        prepare_view(
            view,
            Dtype::F64,
            &PrepareOptions::with_planner(crate::common::planner()),
        )
        .unwrap(),
    );
    assert_same("view-sum", got, want);

    // Through the layout language: the anti-diagonal of a 4×4 matrix.
    let expr = "arange(16).view(4,4).flip(1).diagonal()";
    let want = [3, 6, 9, 12].map(|i| Load(0, i)).to_vec();
    assert_same("view-sum expr", stream("view-sum", &[("expr", expr)]), want);
}

/// From 8 rows on, `fast` is simulated in the copy engine's own order (its 8×8 blocks, and its
/// stage when it stages), which is not naive-write's.
#[test]
fn the_fast_transpose_replays_the_engines_blocks() {
    use stridelab::kernels::access::STAGE_BUFFER;
    struct Sink(Vec<Access>);
    impl stridelab_copy::order::OrderSink for Sink {
        fn load(&mut self, src: usize) {
            self.0.push(Load(0, src));
        }
        fn store(&mut self, dst: usize, _: usize) {
            self.0.push(Store(1, dst));
        }
        fn stage_load(&mut self, index: usize) {
            self.0.push(Load(STAGE_BUFFER, index));
        }
        fn stage_store(&mut self, index: usize) {
            self.0.push(Store(STAGE_BUFFER, index));
        }
    }
    let (rows, cols) = (16usize, 24usize);
    let mut engine = Sink(Vec::new());
    stridelab_copy::order::engine_order(
        &crate::common::planner(),
        rows * cols,
        &[cols, rows],
        &[1, cols as isize],
        0,
        0,
        &mut engine,
    )
    .unwrap();
    let mut want = engine.0;
    want.extend(checksum_tail(1, rows * cols));
    let args = |variant| [("rows", "16"), ("cols", "24"), ("variant", variant)];
    let fast = stream("transpose", &args("fast"));
    assert_same("fast", fast.clone(), want);
    assert_ne!(fast, stream("transpose", &args("naive-write")));
    // The first block: source rows 0..8 of columns 0..8 are loaded before any store.
    assert!(fast[..64].iter().all(|a| matches!(a, Load(0, _))));
}
