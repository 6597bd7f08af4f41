//! Your own kernel, timed and simulated by the lab: a column sum of a 1024 × 1024 f64 matrix,
//! its leading dimension 1024 (every column step a multiple of the cache's set span) and 1032
//! (padded by one line). The same `run` is timed on a pinned thread and simulated on this
//! machine's cache levels, so the two numbers belong to one piece of code.
//!
//! Run: `cargo run --release -p stridelab-core --example own_kernel`

use stridelab_core::cache::geometry::Geometry;
use stridelab_core::harness::MethodOptions;
use stridelab_core::harness::custom::{Kernel, measure};
use stridelab_core::kernels::access::{ACCUMULATORS, Mem, Strided};
use stridelab_core::vocab::Work;

/// Sums `rows × cols` f64 elements a column at a time, rows `ld` elements apart.
struct ColumnSum {
    rows: usize,
    cols: usize,
    ld: usize,
}

impl Kernel for ColumnSum {
    type Elem = f64;

    fn buffers(&self) -> Vec<usize> {
        vec![self.rows * self.ld]
    }

    fn work(&self) -> Work {
        let elements = (self.rows * self.cols) as u64;
        Work {
            bytes_read: elements * 8,
            bytes_written: 0,
            elements,
        }
    }

    fn run<M: Mem<Elem = f64>>(&self, m: &mut M) -> f64 {
        let mut acc = [0.0; ACCUMULATORS];
        for j in 0..self.cols {
            m.sum_run(Strided::new(0, j, self.ld as isize), self.rows, &mut acc);
        }
        acc.iter().sum()
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let levels = Geometry::detect().data_levels();
    if levels.is_empty() {
        return Err("this machine reports no cache levels".into());
    }
    println!("ld    median ms (95% CI)      simulated misses per level (conflict)");
    for ld in [1024, 1032] {
        let measured = measure(
            ColumnSum {
                rows: 1024,
                cols: 1024,
                ld,
            },
            &levels,
            &MethodOptions::default(),
        )?;
        let t = &measured.timing.ns_per_run;
        let misses: Vec<String> = measured
            .simulated
            .levels
            .iter()
            .map(|l| format!("{} {} ({})", l.name, l.misses, l.conflict))
            .collect();
        println!(
            "{ld:<5} {:>6.2} ({:.2}–{:.2})   {}",
            t.median / 1e6,
            t.ci_low / 1e6,
            t.ci_high / 1e6,
            misses.join(", ")
        );
    }
    println!("(times measured on this machine; misses simulated on its detected caches)");
    Ok(())
}
