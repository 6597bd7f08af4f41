//! The copy engine's ratio table (`docs/copy-engine.md`): each copy timed interleaved with a plain and a
//! non-temporal copy of the same bytes. The ratio is the median over repetitions of the
//! repetition's faster copy time ÷ engine time (1.00 = as fast as the best copy in the same
//! run); the summary table uses it. Beside it, the ratio to the one copy with the lower median
//! time: on a shared VM the minimum of two noisy timings is biased low against the single
//! engine timing, so the first ratio is the conservative one.
//!
//! Run: `cargo bench --bench copy_engine` (Markdown tables on stdout, about 10 s after the build).
//! `COPY_ENGINE_SWEEP=1` adds a sweep of the tuning knobs; `COPY_ENGINE_QUICK=1` runs only the
//! 1-thread transposes; `COPY_ENGINE_HUGE_PAGES=1` puts both buffers on transparent huge pages;
//! `COPY_ENGINE_SIZES=4096,4097,perm,tiles` runs only those cases (N×N transposes, the 4-D
//! permutation, to-tiles); `COPY_ENGINE_SHAPES=512x32,256x64` sweeps those panel × tile-row
//! shapes instead of the built-in ones, `COPY_ENGINE_BATCH=16x1024,8x0` those batch-rows ×
//! prefetch-bytes tunings of the permutation (`512x16x0` also sets the tiles' prefetch distance,
//! 0 = the whole next tile; `64x64x0x0` also turns non-temporal stores off, which stages the
//! tiles through an L1 buffer as the engine does below the streaming threshold; `256x8x0x1x16`
//! also sets the sweeps' prefetch distance in 8-row steps, 8 by default).
//! The planner measures each case's schedule during its warm-up (in memory, no wisdom file);
//! `COPY_ENGINE_PLANNER=off` times the analytic schedules instead, for before/after runs of
//! one build. The last column names the schedule and what planning it took
//! (`COPY_ENGINE_TRIALS=1`: and every candidate's median trial time).
//! Experiments: `COPY_ENGINE_ASSUME_LLC=1,2,8,300` adds the analytic schedule each assumed LLC
//! size (MiB) would pick; `COPY_ENGINE_DST_OFFSET=0,64,4096` adds the analytic schedule with
//! the destination that many bytes past a 4 KiB boundary (4K aliasing between loads and
//! stores); both on 1 thread. `COPY_ENGINE_KERNELS=avx2` caps the whole engine's micro-kernels
//! at AVX2 (the planner's candidates and schedules, the swept and experimental tunings): every
//! row is then what an AVX2-only CPU runs, timed on this one.

use std::hint::black_box;
use std::time::{Duration, Instant};

use stridelab::cache::geometry::Geometry;
use stridelab::kernels::copy_planner::{machine_caches, this_machine};
use stridelab::mem::AlignedBuffer;
use stridelab_copy::reference::{nt_copy, plain_copy};
use stridelab_copy::{
    CacheSizes, KernelSet, PlanSource, Planner, Tuning, WisdomChoice, copy_into_contiguous,
    copy_into_contiguous_par, copy_into_contiguous_tuned,
};

/// A copy under test: source storage, view, destination.
struct Case {
    name: String,
    /// `Some(n)` for the N×N transposes of the summary table.
    square_transpose: Option<usize>,
    /// A permutation the engine moves as a batch of transpose panels.
    batched: bool,
    shape: Vec<usize>,
    strides: Vec<isize>,
}

impl Case {
    fn transpose(n: usize) -> Case {
        Case {
            name: format!("transpose {n}×{n}"),
            square_transpose: Some(n),
            batched: false,
            shape: vec![n, n],
            strides: vec![1, n as isize],
        }
    }

    fn permute_4d() -> Case {
        let n = 64isize;
        Case {
            name: "(64,64,64,64) perm (3,1,2,0)".into(),
            square_transpose: None,
            batched: true,
            shape: vec![64; 4],
            strides: vec![1, n * n, n, n * n * n],
        }
    }

    fn to_tiles(n: usize, b: usize) -> Case {
        let (n_i, b_i) = (n as isize, b as isize);
        Case {
            name: format!("to-tiles n={n} B={b}"),
            square_transpose: None,
            batched: false,
            shape: vec![n / b, n / b, b, b],
            strides: vec![b_i * n_i, b_i, n_i, 1],
        }
    }

    fn elements(&self) -> usize {
        self.shape.iter().product()
    }
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Result of one case: median ratio to the best copy, median GB/s of the engine and of the
/// best copy (bytes = read + written).
struct Measured {
    /// Against each repetition's faster copy.
    ratio: f64,
    /// Against the copy with the lower median time.
    ratio_to_median_winner: f64,
    engine_gbs: f64,
    best_gbs: f64,
    plain_wins: usize,
    reps: usize,
    /// The schedule the engine used (`not planned`: the analytic or a fixed one).
    plan: String,
}

/// Times `engine` interleaved with plain and non-temporal copies of the same buffers; the plans
/// `planner` reports during the warm-up name the schedule.
fn measure(
    planner: &Planner,
    src: &[f64],
    dst: &mut [f64],
    reps: usize,
    pool: Option<&rayon::ThreadPool>,
    mut engine: impl FnMut(&[f64], &mut [f64]),
) -> Measured {
    let bytes = 2.0 * std::mem::size_of_val(src) as f64;
    let split_copy = |f: fn(&[f64], &mut [f64]), src: &[f64], dst: &mut [f64]| match pool {
        None => f(src, dst),
        Some(pool) => {
            let threads = pool.current_num_threads();
            let chunk = src.len().div_ceil(threads).div_ceil(8) * 8;
            pool.scope(|scope| {
                for (s, d) in src.chunks(chunk).zip(dst.chunks_mut(chunk)) {
                    scope.spawn(move |_| f(s, d));
                }
            });
        }
    };
    // Warm up: page tables, caches, frequency; the planner picks its schedule here.
    drop(planner.take_events());
    engine(src, dst);
    let plan = plans_used(planner);
    split_copy(plain_copy, src, dst);
    split_copy(nt_copy, src, dst);
    let (mut plains, mut engines, mut nts) = (vec![], vec![], vec![]);
    for rep in 0..reps {
        // Rotate the order so no contestant always follows the one that flushed (non-temporal)
        // or warmed (plain) the destination.
        let mut durations = [Duration::ZERO; 3];
        for slot in 0..3 {
            let which = (slot + rep) % 3;
            durations[which] = match which {
                0 => time(|| split_copy(plain_copy, black_box(src), black_box(&mut *dst))),
                1 => time(|| engine(black_box(src), black_box(&mut *dst))),
                _ => time(|| split_copy(nt_copy, black_box(src), black_box(&mut *dst))),
            };
        }
        let [plain, fast, nt] = durations.map(|d| d.as_secs_f64());
        plains.push(plain);
        engines.push(fast);
        nts.push(nt);
    }
    let plain_wins = plains.iter().zip(&nts).filter(|(p, n)| p <= n).count();
    let reference = if median(plains.clone()) <= median(nts.clone()) {
        &plains
    } else {
        &nts
    };
    let ratios = |refs: Vec<f64>| median(refs.iter().zip(&engines).map(|(r, e)| r / e).collect());
    let per_rep_min: Vec<f64> = plains.iter().zip(&nts).map(|(p, n)| p.min(*n)).collect();
    Measured {
        ratio: ratios(per_rep_min),
        ratio_to_median_winner: ratios(reference.clone()),
        engine_gbs: bytes / median(engines.clone()) / 1e9,
        best_gbs: bytes / median(reference.clone()) / 1e9,
        plain_wins,
        reps,
        plan,
    }
}

fn buffers(case: &Case) -> (AlignedBuffer, AlignedBuffer) {
    let count = case.elements();
    let huge = std::env::var_os("COPY_ENGINE_HUGE_PAGES").is_some();
    let mut src = AlignedBuffer::zeroed(count, huge).expect("source buffer");
    for (i, x) in src.iter_mut().enumerate() {
        *x = i as f64;
    }
    let dst = AlignedBuffer::zeroed(count, huge).expect("destination buffer");
    (src, dst)
}

fn reps_for(elements: usize) -> usize {
    if elements >= 1 << 25 { 9 } else { 15 }
}

fn pinned_pool(threads: usize) -> rayon::ThreadPool {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .start_handler(move |i| {
            if let Some(&core) = cores.get(i % cores.len().max(1)) {
                core_affinity::set_for_current(core);
            }
        })
        .build()
        .expect("a rayon pool")
}

/// The tunings `COPY_ENGINE_SWEEP=1` times beside the default one, with their labels.
///
/// Batched permutations sweep (batch rows, batch prefetch bytes), from
/// `COPY_ENGINE_BATCH=16x1024,8x0` if set; other copies sweep (panel, tile rows, stream,
/// staged, prefetch steps, tile prefetch bytes): staged buffers, the 8-row sweep (tile 8) and
/// tiled streaming with narrow and wide panels, or the shapes of `COPY_ENGINE_SHAPES`, each
/// `panel x rows [x prefetch bytes [x stream [x prefetch steps]]]` (e.g.
/// `256x128,512x16x0,64x64x0x0,256x8x0x1x16`): prefetch bytes default to the default tuning's,
/// stream 0 means plain stores through the L1 stage, prefetch steps (8-row steps the swept and
/// staged kernels prefetch ahead) default to 8.
fn sweep_tunings(case: &Case) -> Vec<(String, Tuning)> {
    let base = Tuning {
        kernels: capped_kernels(),
        ..Tuning::for_caches(case.elements() * 8, 1, machine_caches(&Geometry::detect()))
    };
    if case.batched {
        let shapes = match numbers_lists("COPY_ENGINE_BATCH") {
            Some(lists) => lists
                .into_iter()
                .filter_map(|numbers| match numbers[..] {
                    [rows, bytes] => Some((rows, bytes)),
                    _ => None,
                })
                .collect(),
            None => vec![(8, 0), (16, 0), (16, 512), (16, 2048), (32, 1024)],
        };
        return shapes
            .into_iter()
            .map(|(batch_rows, batch_prefetch_bytes)| {
                let label = format!("batch rows={batch_rows} prefetch={batch_prefetch_bytes} B");
                let tuning = Tuning {
                    batch_rows,
                    batch_prefetch_bytes,
                    ..base
                };
                (label, tuning)
            })
            .collect();
    }
    // (panel, tile rows, stream, staged, prefetch steps, tile prefetch bytes)
    let shapes: Vec<(usize, usize, bool, bool, usize, usize)> =
        match numbers_lists("COPY_ENGINE_SHAPES") {
            Some(lists) => lists
                .into_iter()
                .filter_map(|numbers| match numbers[..] {
                    [panel, rows] => Some((panel, rows, true, false, 8, base.tile_prefetch_bytes)),
                    [panel, rows, ahead] => Some((panel, rows, true, false, 8, ahead)),
                    [panel, rows, ahead, stream] => {
                        Some((panel, rows, stream != 0, stream == 0, 8, ahead))
                    }
                    [panel, rows, ahead, stream, steps] => {
                        Some((panel, rows, stream != 0, stream == 0, steps, ahead))
                    }
                    _ => None,
                })
                .collect(),
            None => vec![
                (64, 64, true, true, 8, 0),
                (256, 8, true, false, 8, 0),
                (512, 32, true, false, 8, 0),
                (512, 16, true, false, 8, 0),
                (1024, 16, true, false, 8, 1024),
                (2048, 16, true, false, 8, 2048),
            ],
        };
    shapes
        .into_iter()
        .map(|(panel, tile_rows, stream, staged, prefetch_steps, ahead)| {
            let label = format!(
                "panel={panel} tile={tile_rows} stream={stream} staged={staged} prefetch={prefetch_steps} ahead={ahead} B kernels={:?}",
                base.kernels
            );
            let tuning = Tuning {
                panel,
                tile_rows,
                stream,
                staged,
                prefetch_steps,
                tile_prefetch_bytes: ahead,
                ..base
            };
            (label, tuning)
        })
        .collect()
}

/// The micro-kernels every row may use: `COPY_ENGINE_KERNELS=avx2` (or `portable`) caps them
/// below the CPU's best, to time on an AVX-512 machine what an AVX2-only CPU runs.
fn capped_kernels() -> KernelSet {
    match std::env::var("COPY_ENGINE_KERNELS").as_deref() {
        Ok("avx2") => KernelSet::Avx2,
        Ok("portable") => KernelSet::Portable,
        Ok("best") | Err(_) => KernelSet::Best,
        Ok(other) => {
            eprintln!("COPY_ENGINE_KERNELS: `{other}` is not avx2, portable or best");
            std::process::exit(2);
        }
    }
}

/// The comma-separated lists of `x`-separated numbers in the environment variable `var`
/// (`16x1024,8x0`), if it is set; entries that are not all numbers are skipped.
fn numbers_lists(var: &str) -> Option<Vec<Vec<usize>>> {
    let list = std::env::var(var).ok()?;
    Some(
        list.split(',')
            .filter_map(|entry| entry.trim().split('x').map(|n| n.parse().ok()).collect())
            .collect(),
    )
}

/// The rows `COPY_ENGINE_ASSUME_LLC` and `COPY_ENGINE_DST_OFFSET` ask for (1 thread).
fn experiments(planner: &Planner, case: &Case, src: &[f64], dst: &mut [f64], reps: usize) {
    let bytes = case.elements() * 8;
    for llc_mib in numbers_lists("COPY_ENGINE_ASSUME_LLC").unwrap_or_default() {
        let Some(&llc_mib) = llc_mib.first() else {
            continue;
        };
        let caches = CacheSizes {
            llc_bytes: llc_mib << 20,
            ..planner.caches()
        };
        let tuning = Tuning {
            kernels: planner.kernels(),
            ..Tuning::for_caches(bytes, 1, caches)
        };
        let m = measure(planner, src, dst, reps, None, |s, d| {
            copy_into_contiguous_tuned(s, &case.shape, &case.strides, 0, d, tuning, None)
                .expect("valid view")
        });
        let label = format!("{} assuming LLC {llc_mib} MiB", case.name);
        println!("{}", row(&format!("{label} | 1"), &m));
    }
    let offsets = numbers_lists("COPY_ENGINE_DST_OFFSET").unwrap_or_default();
    if offsets.is_empty() {
        return;
    }
    let count = case.elements();
    let mut shifted = AlignedBuffer::zeroed(count + 4096 / 8, false).expect("offset buffer");
    let tuning = Tuning {
        kernels: planner.kernels(),
        ..Tuning::for_caches(bytes, 1, planner.caches())
    };
    for offset in offsets.into_iter().filter_map(|o| o.first().copied()) {
        let at = (offset / 8).min(4096 / 8);
        let out = &mut shifted[at..at + count];
        let m = measure(planner, src, dst, reps, None, |s, _| {
            copy_into_contiguous_tuned(s, &case.shape, &case.strides, 0, out, tuning, None)
                .expect("valid view")
        });
        let label = format!("{} destination +{} B", case.name, at * 8);
        println!("{}", row(&format!("{label} | 1"), &m));
    }
}

fn row(label: &str, m: &Measured) -> String {
    format!(
        "| {label} | {:.2} | {:.2} | {:.1} | {:.1} | {}/{} | {} |",
        m.ratio, m.ratio_to_median_winner, m.engine_gbs, m.best_gbs, m.plain_wins, m.reps, m.plan
    )
}

/// The schedules `planner` reported since the last call, in words.
fn plans_used(planner: &Planner) -> String {
    let events = planner.take_events();
    if events.is_empty() {
        return "not planned".into();
    }
    let trials = std::env::var_os("COPY_ENGINE_TRIALS").is_some();
    let words: Vec<String> = events
        .iter()
        .map(|e| match e.source {
            PlanSource::Measured if trials => {
                let each: Vec<String> = e
                    .trials
                    .iter()
                    .map(|t| format!("{} {:.2} ms", t.schedule, t.median_ns as f64 / 1e6))
                    .collect();
                format!(
                    "{} (planned in {:.0} ms; median trials: {})",
                    e.schedule.name,
                    e.planning_s * 1e3,
                    each.join(", ")
                )
            }
            PlanSource::Measured => format!(
                "{} (planned in {:.0} ms)",
                e.schedule.name,
                e.planning_s * 1e3
            ),
            PlanSource::Wisdom => format!("{} (wisdom)", e.schedule.name),
        })
        .collect();
    words.join("; ")
}

fn main() {
    // Cargo passes `--bench`; this harness takes no arguments.
    let quick = std::env::var_os("COPY_ENGINE_QUICK").is_some();
    let sweep = std::env::var_os("COPY_ENGINE_SWEEP").is_some();
    // `COPY_ENGINE_SIZES=4097,8192,perm` runs only those cases (for focused A/B runs).
    let chosen = std::env::var("COPY_ENGINE_SIZES").ok();
    let all = || {
        let mut cases: Vec<Case> = [1024, 2048, 4096, 4097, 8192]
            .into_iter()
            .map(Case::transpose)
            .collect();
        if !quick {
            cases.extend([Case::permute_4d(), Case::to_tiles(4096, 64)]);
        }
        cases
    };
    let cases: Vec<Case> = match chosen {
        None => all(),
        Some(list) => list
            .split(',')
            .map(|token| match token.trim() {
                "perm" => Case::permute_4d(),
                "tiles" => Case::to_tiles(4096, 64),
                n => match n.parse() {
                    Ok(n) if n >= 8 => Case::transpose(n),
                    _ => {
                        eprintln!("COPY_ENGINE_SIZES: `{n}` is not N ≥ 8, `perm` or `tiles`");
                        std::process::exit(2);
                    }
                },
            })
            .collect(),
    };
    let pool = pinned_pool(2);
    let planner_off = std::env::var("COPY_ENGINE_PLANNER").is_ok_and(|v| v == "off");
    let choice = if planner_off {
        WisdomChoice::Off
    } else {
        WisdomChoice::Memory
    };
    let planner = Planner::new(this_machine(&Geometry::detect()), choice)
        .expect("no wisdom file: nothing to refuse")
        .with_kernels(capped_kernels());

    println!("Copy engine vs the best of a plain and a non-temporal copy of the same bytes");
    println!("(timed; medians over interleaved repetitions; `best copy` = each repetition's");
    println!("faster copy; GB/s counts bytes read + written; `plain wins` = repetitions where the");
    println!("plain copy beat the non-temporal one).");
    if planner.kernels() != KernelSet::Best {
        println!(
            "Every row's micro-kernels capped at {:?} (COPY_ENGINE_KERNELS).",
            planner.kernels()
        );
    }
    println!();
    println!(
        "| copy (f64) | threads | ratio to best copy | ratio to the copy with the lower median | engine GB/s | that copy's GB/s | plain wins | schedule |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    // Ratios of the N×N transposes, for the summary table: (1 thread, 2 threads).
    let mut summary: Vec<(usize, f64, Option<f64>)> = Vec::new();
    for case in &cases {
        let (src, mut dst) = buffers(case);
        let reps = reps_for(case.elements());
        let one = measure(&planner, &src, &mut dst, reps, None, |s, d| {
            copy_into_contiguous(&planner, s, &case.shape, &case.strides, 0, d).expect("valid view")
        });
        println!("{}", row(&format!("{} | 1", case.name), &one));
        let mut two_ratio = None;
        if !quick {
            let two = measure(&planner, &src, &mut dst, reps, Some(&pool), |s, d| {
                copy_into_contiguous_par(&planner, s, &case.shape, &case.strides, 0, d, &pool)
                    .expect("valid view")
            });
            println!("{}", row(&format!("{} | 2", case.name), &two));
            two_ratio = Some(two.ratio);
        }
        if let Some(n) = case.square_transpose {
            summary.push((n, one.ratio, two_ratio));
        }
        if sweep {
            for (label, tuning) in sweep_tunings(case) {
                let label = format!("{} {label}", case.name);
                let m = measure(&planner, &src, &mut dst, reps, None, |s, d| {
                    copy_into_contiguous_tuned(s, &case.shape, &case.strides, 0, d, tuning, None)
                        .expect("valid view")
                });
                println!("{}", row(&format!("{label} | 1"), &m));
                if !quick {
                    let two = measure(&planner, &src, &mut dst, reps, Some(&pool), |s, d| {
                        copy_into_contiguous_tuned(
                            s,
                            &case.shape,
                            &case.strides,
                            0,
                            d,
                            tuning,
                            Some(&pool),
                        )
                        .expect("valid view")
                    });
                    println!("{}", row(&format!("{label} | 2"), &two));
                }
            }
        }
        experiments(&planner, case, &src, &mut dst, reps);
    }

    println!("\nN×N f64 transpose, fraction of the same-run best copy (timed, medians):\n");
    let header: Vec<String> = summary.iter().map(|(n, _, _)| n.to_string()).collect();
    println!("| N | {} |", header.join(" | "));
    println!("|---|{}", "---|".repeat(summary.len()));
    let one: Vec<String> = summary.iter().map(|(_, r, _)| format!("{r:.2}")).collect();
    println!("| stridelab copy engine, 1 thread | {} |", one.join(" | "));
    if !quick {
        let two: Vec<String> = summary
            .iter()
            .map(|(_, _, r)| r.map_or("–".into(), |r| format!("{r:.2}")))
            .collect();
        println!(
            "| stridelab copy engine, 2 threads (vs 2-thread copies) | {} |",
            two.join(" | ")
        );
    }
}
