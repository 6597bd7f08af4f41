//! Runs the copy engine once on a transpose, for `tests/integration/copy_engine_cachegrind.rs` to profile
//! with cachegrind: `copy_once ROWS COLS FLUSH` copies the transpose of a ROWS×COLS row-major
//! matrix (line-aligned buffers, as the lab's kernels use) into a contiguous destination, right
//! after reading FLUSH bytes of another buffer (twice the last level's size leaves an LRU cache
//! holding nothing the copy touches: a cold start).

use std::process::ExitCode;

use stridelab::kernels::copy_planner::analytic_planner;
use stridelab::mem::AlignedBuffer;
use stridelab_copy::copy_into_contiguous;

fn main() -> ExitCode {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let [rows, cols, flush] = args[..] else {
        eprintln!("usage: copy_once ROWS COLS FLUSH_BYTES (integers)");
        return ExitCode::from(2);
    };
    let (Ok(mut src), Ok(mut dst)) = (
        AlignedBuffer::zeroed(rows * cols, false),
        AlignedBuffer::zeroed(rows * cols, false),
    ) else {
        eprintln!("copy_once: cannot allocate two {rows}×{cols} buffers");
        return ExitCode::FAILURE;
    };
    for (i, x) in src.iter_mut().enumerate() {
        *x = i as f64;
    }
    let flush: Vec<f64> = vec![1.0; flush / 8];
    let flushed: f64 = std::hint::black_box(&flush).iter().sum();
    let strides = [1, cols as isize];
    if let Err(err) = copy_into_contiguous(
        &analytic_planner(&stridelab::cache::geometry::Geometry::detect()),
        &src,
        &[cols, rows],
        &strides,
        0,
        &mut dst,
    ) {
        eprintln!("copy_once: {err}");
        return ExitCode::FAILURE;
    }
    // Keep the copy observable.
    println!("{} {flushed}", dst[dst.len() - 1]);
    ExitCode::SUCCESS
}
