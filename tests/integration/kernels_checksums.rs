//! Every kernel's checksum on odd sizes, padded matrices and sizes that are not multiples of the
//! tile; copies also compared element by element with a brute-force result.

use stridelab::cache::AccessSink;
use stridelab::kernels::access::RealMem;
use stridelab::kernels::common::{Matrix, cell_value};
use stridelab::kernels::families::blocked::{Tiling, to_tiles};
use stridelab::kernels::families::channels::{Tensor4, stencil3x3};
use stridelab::kernels::families::to_nhwc::{Variant as Conversion, to_nhwc};
use stridelab::kernels::families::transpose::{Variant, transpose};
use stridelab::kernels::families::view::{ViewGeometry, prepare_view};
use stridelab::kernels::spec::{BufferShift, Instance, PrepareOptions};
use stridelab::kernels::typed::Dtype;
use stridelab::kernels::{catalogue, find, resolve_params};

struct Discard;

impl AccessSink for Discard {
    fn load(&mut self, _: u64, _: u32) {}
    fn store(&mut self, _: u64, _: u32) {}
}

fn instance(kernel: &str, args: &str) -> Box<dyn Instance> {
    shifted_instance(kernel, args, BufferShift::default())
}

/// The instance with buffer `shift.buffer` started `shift.bytes` past its boundary.
fn shifted_instance(kernel: &str, args: &str, shift: BufferShift) -> Box<dyn Instance> {
    let spec = find(kernel).unwrap();
    let args: Vec<(String, String)> = crate::common::shell_words(args)
        .into_iter()
        .map(|arg| match arg.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (String::new(), arg),
        })
        .collect();
    let params = resolve_params(spec, &args).unwrap_or_else(|e| panic!("{kernel} {args:?}: {e}"));
    let options = PrepareOptions {
        shift,
        ..PrepareOptions::with_planner(crate::common::planner())
    };
    (spec.prepare)(&params, &options).unwrap()
}

fn assert_checksum(name: &str, mut instance: Box<dyn Instance>) {
    let expected = instance.expected_checksum();
    assert!(expected.is_finite());
    for _ in 0..2 {
        assert_eq!(instance.run(), expected, "{name}");
    }
    // Simulation reads and writes the real data: it must leave the instance runnable.
    instance.simulate(&mut Discard);
    assert_eq!(instance.run(), expected, "{name} after simulate");
    let work = instance.work();
    assert!(work.elements > 0 && work.bytes_read > 0, "{name}: {work:?}");
}

const CASES: &[(&str, &str)] = &[
    ("row-sum", "1 1"),
    ("row-sum", "7 13"),
    ("row-sum", "7 13 ld=16"),
    ("row-sum", "33 65 67 f32"),
    ("col-sum", "1 1"),
    ("col-sum", "13 7"),
    ("col-sum", "13 7 ld=9"),
    ("col-sum", "64 64 65"),
    ("stride-sum", "1 1"),
    ("stride-sum", "1001 7"),
    ("stride-sum", "1000 1000"),
    ("stride-sum", "4099 8"),
    ("conflict", "stride=512 count=13"),
    ("conflict", "stride=513 count=17 reps=3"),
    ("conflict", "stride=1 count=1"),
    ("conflict", "stride=512 count=13 mode=lat"),
    ("conflict", "stride=511 count=17 reps=5 mode=lat seed=9"),
    ("conflict", "stride=3 count=1 mode=lat"),
    ("transpose", "1 1 naive-read"),
    ("transpose", "7 13 naive-read"),
    ("transpose", "7 13 16 naive-write"),
    ("transpose", "13 7 9 blocked 4"),
    ("transpose", "31 33 blocked 8"),
    ("transpose", "5 3 blocked 64"),
    ("transpose", "17 19 20 fast"),
    ("tiled-sum", "1 1"),
    ("tiled-sum", "7 3"),
    ("tiled-sum", "7 3 col"),
    ("tiled-sum", "16 4 col"),
    ("tiled-sum", "5 8 row"),
    ("to-tiles", "1 1"),
    ("to-tiles", "8 4"),
    ("to-tiles", "7 3"),
    ("to-tiles", "2 5"),
    ("to-tiles", "10 4"),
    ("copy", "8"),
    ("copy", "1000"),
    ("copy", "8200"),
    ("read", "8"),
    ("read", "1000"),
    ("chase", "64"),
    ("chase", "8K"),
    ("chase", "24K 7 128"),
    ("view-sum", "expr=arange(121).view(11,11).diagonal()"),
    (
        "view-sum",
        "expr=arange(121).view(11,11).flip(1).diagonal()",
    ),
    ("view-sum", "expr=arange(143).view(11,13)[::2,::3]"),
    ("view-sum", "expr=arange(143).view(11,13).T"),
    ("view-sum", "expr=arange(143).view(11,13)[::-1]"),
    (
        "view-sum",
        "expr=arange(143).view(11,13).T.contiguous()[1:]",
    ),
    ("matmul", "1 ijk"),
    ("matmul", "17 ijk"),
    ("matmul", "17 jik"),
    ("matmul", "17 ikj"),
    ("matmul", "17 kij"),
    ("matmul", "17 jki"),
    ("matmul", "17 kji"),
    ("matmul", "17 blocked 4"),
    ("matmul", "16 blocked 16"),
    ("matmul", "5 blocked 64"),
    ("matmul", "17 ijk dtype=f32"),
    ("matmul", "17 jik dtype=f32"),
    ("matmul", "17 ikj dtype=f32"),
    ("matmul", "17 kij dtype=f32"),
    ("matmul", "17 jki dtype=f32"),
    ("matmul", "17 kji dtype=f32"),
    ("matmul", "17 blocked 4 dtype=f32"),
    ("matmul", "33 blocked dtype=f32"),
    ("jagged", "1 1"),
    ("jagged", "7 13"),
    ("jagged", "7 13 col"),
    ("jagged", "13 7 col flat"),
    ("jagged", "9 5 row flat"),
    ("jagged", "31 3 order=col shuffle=1"),
    ("jagged", "3 31 order=row shuffle=1"),
    ("channel-sum", "1 1 1 1"),
    ("channel-sum", "2 3 5 7"),
    ("channel-sum", "2 3 5 7 nhwc"),
    ("channel-sum", "3 5 1 3 nhwc f64"),
    ("channel-sum", "1 9 3 3 nchw f64"),
    ("stencil3x3", "1 1 3 3"),
    ("stencil3x3", "2 3 5 7"),
    ("stencil3x3", "2 3 7 5 nhwc"),
    ("to-nhwc", "1 1 1 1"),
    ("to-nhwc", "2 3 5 7"),
    ("to-nhwc", "1 16 8 8"),
    ("to-nhwc", "2 3 5 7 naive-write"),
    ("to-nhwc", "2 3 5 7 naive-read"),
    ("to-nhwc", "1 1 1 1 naive-read"),
    ("to-nhwc", "3 5 7 2 naive-write dtype=f32"),
    ("to-nhwc", "1 17 9 3 naive-read dtype=f32"),
    // f32 elements: odd counts, so runs end in the middle of a line of 16.
    ("row-sum", "7 13 dtype=f32"),
    ("row-sum", "9 21 23 dtype=f32"),
    ("col-sum", "13 7 ld=9 dtype=f32"),
    ("col-sum", "64 64 dtype=f32"),
    ("stride-sum", "1001 7 dtype=f32"),
    ("stride-sum", "4099 16 dtype=f32"),
    ("view-sum", "expr=arange(143).view(11,13).T dtype=f32"),
    (
        "view-sum",
        "expr=arange(121).view(11,11).flip(1).diagonal() dtype=f32",
    ),
    ("transpose", "7 13 16 naive-read dtype=f32"),
    ("transpose", "13 7 naive-write dtype=f32"),
    ("transpose", "31 33 blocked 8 dtype=f32"),
    // A nest computes no values: every cell holds 1, so a run that stores keeps the next run's.
    (
        "loop",
        "'nest=for i in 0..13: for j in i..13 step 2: a[j, i] += b[i, j]' \
         'arrays=a = f64[13, 13] ld=15; b = f64[13, 13]'",
    ),
    (
        "loop",
        "'nest=for i in 0..12: a[i] = a[i + 1]; s += c[2 * i]' 'arrays=a = f32[13]; c = f32[24]'",
    ),
];

#[test]
fn every_kernel_checksums_on_awkward_sizes() {
    for (kernel, args) in CASES {
        assert_checksum(&format!("{kernel} {args}"), instance(kernel, args));
    }
    for spec in catalogue() {
        let covered = CASES.iter().any(|(kernel, _)| *kernel == spec.name);
        assert!(covered, "{} untested", spec.name);
        // Every element type a kernel takes has a case of its own.
        if spec.params.iter().any(|p| p.name == "dtype") {
            for dtype in ["f32", "f64"] {
                let default = spec.params.iter().any(|p| p.default == Some(dtype));
                let named = CASES.iter().any(|(kernel, args)| {
                    *kernel == spec.name && (args.contains(dtype) || default)
                });
                assert!(named, "{} has no {dtype} case", spec.name);
            }
        }
    }
}

/// `why`'s alignment controls move a source or a destination by a line or a page: the kernel
/// must compute the same thing wherever its buffers start.
#[test]
fn every_kernel_checksums_with_a_buffer_shifted() {
    for (kernel, args) in CASES {
        for (buffer, bytes) in [(0, 64), (1, 64), (0, 4096), (1, 4096), (2, 8)] {
            let name = format!("{kernel} {args}, buffer {buffer} +{bytes} B");
            assert_checksum(
                &name,
                shifted_instance(kernel, args, BufferShift { buffer, bytes }),
            );
        }
    }
}

#[test]
fn view_sum_checksums_on_seed_views() {
    let n = 11;
    let views = [
        // diagonal, anti-diagonal, [::2, ::3], transposed, flipped rows, 0-d, 3-D
        (vec![n], vec![n as isize + 1], 0),
        (vec![n], vec![n as isize - 1], n - 1),
        (vec![6, 4], vec![2 * n as isize, 3], 0),
        (vec![n, n], vec![1, n as isize], 0),
        (vec![n, n], vec![-(n as isize), 1], (n - 1) * n),
        (vec![], vec![], 17),
        (vec![2, 3, 5], vec![60, -1, 7], 2),
    ];
    for (shape, strides, offset) in views {
        let view = ViewGeometry {
            shape,
            strides,
            offset,
            storage_len: n * n,
        };
        let name = format!("view-sum {view:?}");
        assert_checksum(
            &name,
            prepare_view(
                view,
                Dtype::F64,
                &PrepareOptions::with_planner(crate::common::planner()),
            )
            .unwrap(),
        );
    }
    let outside = ViewGeometry {
        shape: vec![n + 1],
        strides: vec![n as isize],
        offset: 0,
        storage_len: n * n,
    };
    let err = prepare_view(
        outside,
        Dtype::F64,
        &PrepareOptions::with_planner(crate::common::planner()),
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("outside"), "{err}");
}

#[test]
fn transposes_write_the_transpose() {
    let planner = crate::common::planner();
    for (rows, cols, ld) in [
        (1, 1, 1),
        (7, 13, 13),
        (13, 7, 9),
        (33, 31, 40),
        (64, 64, 64),
    ] {
        let matrix = Matrix { rows, cols, ld };
        let mut src: Vec<f64> = (0..rows * ld).map(cell_value).collect();
        let mut want = vec![0.0; rows * cols];
        for i in 0..rows {
            for j in 0..cols {
                want[j * rows + i] = src[i * ld + j];
            }
        }
        for variant in [
            Variant::NaiveRead,
            Variant::NaiveWrite,
            Variant::Blocked { block: 1 },
            Variant::Blocked { block: 5 },
            Variant::Blocked { block: 32 },
            Variant::Fast,
        ] {
            let mut dst = vec![-1.0; rows * cols];
            transpose(
                &mut RealMem::new([&mut src, &mut dst]),
                &planner,
                matrix,
                variant,
            );
            assert_eq!(dst, want, "{matrix:?} {variant:?}");
        }
    }
}

#[test]
fn to_tiles_writes_tile_major_storage() {
    let planner = crate::common::planner();
    for (n, block) in [(1, 1), (4, 2), (7, 3), (10, 4), (2, 5), (16, 16)] {
        let tiling = Tiling { n, block };
        let mut src: Vec<f64> = (0..n * n).map(cell_value).collect();
        let t = n.div_ceil(block);
        let mut want = vec![0.0; t * t * block * block];
        for i in 0..n {
            for j in 0..n {
                let tile = (i / block) * t + j / block;
                want[tile * block * block + (i % block) * block + j % block] = src[i * n + j];
            }
        }
        let mut dst = vec![0.0; want.len()];
        to_tiles(&mut RealMem::new([&mut src, &mut dst]), &planner, tiling);
        assert_eq!(dst, want, "{tiling:?}");
    }
}

#[test]
fn every_to_nhwc_variant_writes_channels_last_and_the_stencil_writes_box_sums() {
    let planner = crate::common::planner();
    for (n, c, h, w) in [(1, 1, 3, 3), (2, 3, 5, 7), (1, 16, 4, 9)] {
        let nchw = Tensor4 {
            n,
            c,
            h,
            w,
            nhwc: false,
        };
        let nhwc = Tensor4 { nhwc: true, ..nchw };
        let len = n * c * h * w;
        let mut src: Vec<f64> = (0..len).map(cell_value).collect();
        // Every element, not only the sampled checksum cells, in every variant and type.
        for variant in [
            Conversion::Fast,
            Conversion::NaiveWrite,
            Conversion::NaiveRead,
        ] {
            let mut dst = vec![-1.0; len];
            to_nhwc(
                &mut RealMem::new([&mut src, &mut dst]),
                &planner,
                nchw,
                variant,
            );
            let mut src32: Vec<f32> = src.iter().map(|&v| v as f32).collect();
            let mut dst32 = vec![-1.0f32; len];
            if variant != Conversion::Fast {
                to_nhwc(
                    &mut RealMem::new([&mut src32, &mut dst32]),
                    &planner,
                    nchw,
                    variant,
                );
            }
            for (i, value) in src.iter().enumerate() {
                let (a, b, y, x) = nchw.coords(i);
                let at = nhwc.index(a, b, y, x);
                assert_eq!(dst[at], *value, "{nchw:?} {variant:?} at {i}");
                if variant != Conversion::Fast {
                    assert_eq!(
                        f64::from(dst32[at]),
                        *value,
                        "{nchw:?} {variant:?} f32 at {i}"
                    );
                }
            }
        }
        for t in [nchw, nhwc] {
            let mut out = vec![0.0; len];
            stencil3x3(&mut RealMem::new([&mut src, &mut out]), t);
            for (i, value) in out.iter().enumerate() {
                let (a, b, y, x) = t.coords(i);
                let interior = (1..h - 1).contains(&y) && (1..w - 1).contains(&x);
                let want: f64 = if interior {
                    (y - 1..=y + 1)
                        .flat_map(|yy| (x - 1..=x + 1).map(move |xx| (yy, xx)))
                        .map(|(yy, xx)| src[t.index(a, b, yy, xx)])
                        .sum()
                } else {
                    0.0
                };
                assert_eq!(*value, want, "{t:?} at {i}");
            }
        }
    }
}
