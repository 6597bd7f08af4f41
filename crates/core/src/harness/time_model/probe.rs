//! The time model's probes: per plausible data-cache level and for memory, the lab's own `read`,
//! `copy` and `chase` kernels and a fill (stores only), each timed by the harness's
//! [`measure_point`] (pinned, warmed up, calibrated samples) on a working set sized from the
//! geometry: half the level, and for memory eight times the largest plausible level, at least
//! [`MEMORY_MIN`] and at most [`MEMORY_MAX`]. A level that breaks a plausibility rule (a VM's
//! "480 MiB" L3) is not probed: it is named in `skipped`, and its traffic is priced as memory.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use thiserror::Error;

use crate::cache::AccessSink;
use crate::cache::geometry::{CacheLevel, Geometry};
use crate::harness::measure::pin::{PinError, PinnedPool};
use crate::harness::run::runner::{MethodOptions, PointKind, measure_point};
use crate::kernels::common::check_indices;
use crate::kernels::copy_planner::analytic_planner;
use crate::kernels::spec::{Instance, KernelError, PrepareOptions, Work};
use crate::kernels::{find, resolve_params};
use crate::mem::AlignedBuffer;
use crate::results::Provenance;
use crate::results::time_model::{
    GeometryKey, Interval, LevelProbes, MODEL_FORMAT, MODEL_VERSION, MachineModel, SkippedLevel,
};

/// The smallest memory working set: beyond the last level a VM may hide (its host's L3).
pub const MEMORY_MIN: u64 = 128 << 20;
/// The largest: enough to leave any plausible cache, small enough to stay quick.
pub const MEMORY_MAX: u64 = 512 << 20;
/// Memory's working set as a multiple of the largest plausible level.
const MEMORY_FACTOR: u64 = 8;

/// The four probes of one level.
pub const PROBES_PER_LEVEL: usize = 4;

/// Why probing failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ProbeError {
    #[error("cannot start the probes' pinned thread: {0}")]
    Pin(#[from] PinError),
    #[error("the {probe} probe of {level}: {message}")]
    Failed {
        probe: &'static str,
        level: String,
        message: String,
    },
    #[error("the probes were interrupted")]
    Interrupted,
}

/// A probe about to run, for a progress line.
#[derive(Debug)]
pub struct ProbeProgress<'a> {
    pub done: usize,
    pub total: usize,
    pub level: &'a str,
    pub probe: &'static str,
    pub working_set: u64,
}

/// Short samples: the probes are streams whose runs vary little, and all of them together must
/// take a few seconds.
fn method() -> MethodOptions {
    MethodOptions {
        warmup: Duration::from_millis(5),
        min_sample: Duration::from_millis(2),
        samples: 9,
        max_samples: 9,
        target_relative_ci: 1.0,
        extra_sampling: Duration::ZERO,
        extra_sampling_scales_with_minimum: true,
        references: false,
        latency_references: false,
        counters: false,
        huge_pages: false,
        ..MethodOptions::default()
    }
}

/// What one level's probes walk: name, capacity, working set, line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeTarget {
    pub name: String,
    pub size: u64,
    pub working_set: u64,
    pub line: u64,
}

/// The levels to probe and the ones skipped: every plausible data level at half its size
/// (rounded down to whole lines), then memory.
pub fn probe_targets(levels: &[CacheLevel]) -> (Vec<ProbeTarget>, Vec<SkippedLevel>) {
    let mut targets = Vec::new();
    let mut skipped = Vec::new();
    for level in levels {
        let warnings = level.plausibility_warnings();
        if let Some(reason) = warnings.first() {
            skipped.push(SkippedLevel {
                name: level.name.clone(),
                size: level.size,
                reason: reason.chars().take(300).collect(),
            });
            continue;
        }
        let line = u64::from(level.line).max(8);
        targets.push(ProbeTarget {
            name: level.name.clone(),
            size: level.size,
            working_set: (level.size / 2 / line).max(1) * line,
            line,
        });
    }
    let largest = targets.iter().map(|t| t.size).max().unwrap_or(0);
    let line = targets.first().map_or(64, |t| t.line);
    targets.push(ProbeTarget {
        name: "memory".into(),
        size: 0,
        working_set: largest
            .saturating_mul(MEMORY_FACTOR)
            .clamp(MEMORY_MIN, MEMORY_MAX),
        line,
    });
    (targets, skipped)
}

/// Stores only: every element of a buffer set to one value, the write-bandwidth probe the
/// catalogue has no kernel for.
struct Fill {
    buffer: AlignedBuffer<f64>,
}

impl Instance for Fill {
    fn work(&self) -> Work {
        let elements = self.buffer.len() as u64;
        Work {
            bytes_read: 0,
            bytes_written: elements * 8,
            elements,
        }
    }

    fn run(&mut self) -> f64 {
        let value = std::hint::black_box(1.0);
        self.buffer.fill(value);
        std::hint::black_box(&mut self.buffer[..]);
        check_indices(self.buffer.len())
            .map(|i| self.buffer[i])
            .sum()
    }

    fn expected_checksum(&self) -> f64 {
        check_indices(self.buffer.len()).count() as f64
    }

    fn simulate(&mut self, sink: &mut dyn AccessSink) {
        let base = 1u64 << 32;
        for i in 0..self.buffer.len() as u64 {
            sink.store(base + i * 8, 8);
        }
        for i in check_indices(self.buffer.len()) {
            sink.load(base + i as u64 * 8, 8);
        }
    }
}

/// Samples of one probe: `figure` turns a sample's ns per run and the work into the figure.
fn samples(
    pool: &PinnedPool,
    prepare: &(dyn Fn() -> Result<Box<dyn Instance>, KernelError> + Sync),
    figure: fn(f64, &Work) -> f64,
    stop: &AtomicBool,
) -> Result<Vec<f64>, String> {
    let measured = measure_point(pool, prepare, PointKind::Latency, &method(), stop);
    if measured.interrupted {
        return Err("interrupted".into());
    }
    if let Some(error) = measured.error {
        return Err(format!("{}: {}", error.stage, error.message));
    }
    let (Some(timing), Some(work)) = (measured.timing, measured.work) else {
        return Err("no timing".into());
    };
    Ok(timing
        .samples_ns_per_run
        .iter()
        .map(|&ns| figure(ns, &work))
        .collect())
}

fn catalogue_kernel(
    name: &str,
    words: &[(&str, String)],
    copies: &Arc<stridelab_copy::Planner>,
) -> Result<Box<dyn Instance>, KernelError> {
    let spec = find(name)?;
    let args: Vec<(String, String)> = words
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let params = resolve_params(spec, &args)?;
    (spec.prepare)(&params, &PrepareOptions::with_planner(Arc::clone(copies)))
}

/// Probes one target: read, write, copy bandwidth and the chase's latency.
fn probe_level(
    pool: &PinnedPool,
    target: &ProbeTarget,
    copies: &Arc<stridelab_copy::Planner>,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&'static str),
) -> Result<LevelProbes, ProbeError> {
    let ws = target.working_set;
    let fail = |probe: &'static str| {
        move |message: String| {
            if message == "interrupted" {
                ProbeError::Interrupted
            } else {
                ProbeError::Failed {
                    probe,
                    level: target.name.clone(),
                    message,
                }
            }
        }
    };
    let interval = |probe: &'static str, values: Vec<f64>| {
        Interval::of(&values).ok_or_else(|| fail(probe)("no finite sample".into()))
    };
    let per_byte = |read: bool, write: bool| -> fn(f64, &Work) -> f64 {
        match (read, write) {
            (true, false) => |ns, w| w.bytes_read as f64 / ns * 1e9,
            (false, true) => |ns, w| w.bytes_written as f64 / ns * 1e9,
            _ => |ns, w| (w.bytes_read + w.bytes_written) as f64 / ns * 1e9,
        }
    };
    progress("read");
    let read = samples(
        pool,
        &|| catalogue_kernel("read", &[("bytes", ws.to_string())], copies),
        per_byte(true, false),
        stop,
    )
    .map_err(fail("read"))?;
    progress("write");
    let elements = usize::try_from(ws / 8).unwrap_or(usize::MAX);
    let write = samples(
        pool,
        &|| {
            let buffer = AlignedBuffer::zeroed(elements, false)?;
            Ok(Box::new(Fill { buffer }) as Box<dyn Instance>)
        },
        per_byte(false, true),
        stop,
    )
    .map_err(fail("write"))?;
    progress("copy");
    // Two buffers of half the working set each.
    let half = (ws / 2 / 8).max(1) * 8;
    let copy = samples(
        pool,
        &|| catalogue_kernel("copy", &[("bytes", half.to_string())], copies),
        per_byte(true, true),
        stop,
    )
    .map_err(fail("copy"))?;
    progress("chase");
    let chase_bytes = (ws / target.line).max(2) * target.line;
    let latency = samples(
        pool,
        &|| {
            catalogue_kernel(
                "chase",
                &[
                    ("bytes", chase_bytes.to_string()),
                    ("line", target.line.to_string()),
                ],
                copies,
            )
        },
        |ns, w| ns / w.elements.max(1) as f64,
        stop,
    )
    .map_err(fail("chase"))?;
    Ok(LevelProbes {
        name: target.name.clone(),
        size: target.size,
        working_set: ws,
        read_bytes_per_s: interval("read", read)?,
        write_bytes_per_s: interval("write", write)?,
        copy_bytes_per_s: interval("copy", copy)?,
        latency_ns: interval("chase", latency)?,
    })
}

/// The 1-minute load average, if the system tells it.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The model key of `machine`: its data levels as the file records them.
pub fn geometry_key(machine: &Geometry) -> Vec<GeometryKey> {
    machine
        .data_levels()
        .iter()
        .map(|l| GeometryKey {
            name: l.name.clone(),
            size: l.size,
            ways: u64::from(l.ways),
            line: u64::from(l.line),
        })
        .collect()
}

/// Runs every probe on `machine`'s levels (one pinned thread) and returns the model.
pub fn measure_machine_model(
    machine: &Geometry,
    cpu_model: &str,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(ProbeProgress<'_>),
) -> Result<MachineModel, ProbeError> {
    let load = load_average();
    let (targets, skipped) = probe_targets(&machine.data_levels());
    let pool = PinnedPool::new(1)?;
    let copies = Arc::new(analytic_planner(machine));
    let total = targets.len() * PROBES_PER_LEVEL;
    let mut done = 0;
    let mut probed = Vec::with_capacity(targets.len());
    for target in &targets {
        let level = probe_level(&pool, target, &copies, stop, &mut |probe| {
            progress(ProbeProgress {
                done,
                total,
                level: &target.name,
                probe,
                working_set: target.working_set,
            });
            done += 1;
        })?;
        probed.push(level);
    }
    let memory = probed.pop().ok_or(ProbeError::Interrupted)?;
    Ok(MachineModel {
        format: MODEL_FORMAT.into(),
        version: MODEL_VERSION,
        source: Provenance::Measured,
        cpu_model: cpu_model.to_string(),
        geometry: geometry_key(machine),
        measured_unix_s: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        load_average: load,
        levels: probed,
        memory,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::CacheKind::{Data, Unified};
    use crate::cache::geometry::GeometrySource;

    #[test]
    fn working_sets_come_from_the_plausible_levels() {
        let level = |name: &str, kind, size: u64, ways| {
            CacheLevel::new(name, kind, size, ways, 64, GeometrySource::Sysfs).unwrap()
        };
        // (levels, expected (name, working set), skipped names)
        let cases = [
            // The Intel VM: the 480 MiB L3 is skipped; memory at its floor (8 × 2 MiB < 128 MiB).
            (
                vec![
                    level("L1d", Data, 48 << 10, 12),
                    level("L2", Unified, 2 << 20, 16),
                    level("L3", Unified, 480 << 20, 16),
                ],
                vec![("L1d", 24 << 10), ("L2", 1 << 20), ("memory", 128 << 20)],
                vec!["L3"],
            ),
            // A plausible 32 MiB L3: memory at 8 × 32 MiB = 256 MiB.
            (
                vec![
                    level("L1d", Data, 32 << 10, 8),
                    level("L3", Unified, 32 << 20, 16),
                ],
                vec![("L1d", 16 << 10), ("L3", 16 << 20), ("memory", 256 << 20)],
                vec![],
            ),
            // A 96 MiB L3: 768 MiB is bounded to 512 MiB.
            (
                vec![level("L3", Unified, 96 << 20, 16)],
                vec![("L3", 48 << 20), ("memory", 512 << 20)],
                vec![],
            ),
        ];
        for (levels, expected, skipped_names) in cases {
            let (targets, skipped) = probe_targets(&levels);
            let got: Vec<(&str, u64)> = targets
                .iter()
                .map(|t| (t.name.as_str(), t.working_set))
                .collect();
            assert_eq!(got, expected);
            let names: Vec<&str> = skipped.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(names, skipped_names);
        }
    }
}
