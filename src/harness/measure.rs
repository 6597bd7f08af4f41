//! What the runner measures around a sampling phase, behind one small trait (criterion's
//! `Measurement` shape): wall time always; perf counter groups — hardware (cycles, instructions,
//! L1D read misses, LLC misses) when the PMU lets them open, software (task-clock, page faults,
//! context switches) always — each scaled by time_enabled / time_running when multiplexed, with
//! the scaling recorded.
//!
//! Counters observe the calling thread only, so every measuring thread opens its own and the
//! runner sums them.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Software};
use perf_event::{Builder, Counter, Group};

use crate::results::{CounterGroupReport, CounterValue, Provenance};

/// A quantity measured around a region of code (criterion's `Measurement` shape).
pub trait Measurement {
    /// State captured at the start of the region.
    type Intermediate;
    /// The measured quantity of the region.
    type Value;
    /// Starts measuring.
    fn start(&mut self) -> Self::Intermediate;
    /// Stops measuring and returns what the region cost.
    fn end(&mut self, started: Self::Intermediate) -> Self::Value;
}

/// Wall-clock time (monotonic): always available, marked `timed`.
#[derive(Debug, Default, Clone, Copy)]
pub struct WallTime;

impl Measurement for WallTime {
    type Intermediate = Instant;
    type Value = Duration;
    fn start(&mut self) -> Instant {
        Instant::now()
    }
    fn end(&mut self, started: Instant) -> Duration {
        started.elapsed()
    }
}

/// Which counter group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterKind {
    Hardware,
    Software,
}

/// One counter's raw reading over a measured region.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CounterDelta {
    /// Raw count (not scaled).
    pub raw: u64,
    pub time_enabled: Duration,
    pub time_running: Duration,
}

impl CounterDelta {
    /// time_enabled / time_running, 1.0 when the counter was never multiplexed.
    pub fn scaling(&self) -> f64 {
        if self.time_running.is_zero() || self.time_running >= self.time_enabled {
            1.0
        } else {
            self.time_enabled.as_secs_f64() / self.time_running.as_secs_f64()
        }
    }
    /// The count extrapolated to the whole enabled time.
    pub fn scaled(&self) -> f64 {
        self.raw as f64 * self.scaling()
    }
    /// Sums readings from several threads (the scaling of the sum is the worst of them).
    fn merge(&mut self, other: &CounterDelta) {
        self.raw += other.raw;
        self.time_enabled += other.time_enabled;
        self.time_running += other.time_running;
    }
}

/// A perf group leader and its named members.
type OpenGroup = (Group, Vec<(&'static str, Counter)>);

/// An open perf counter group for the calling thread, or the reason it could not be opened.
pub struct PerfGroup {
    kind: CounterKind,
    opened: Result<OpenGroup, String>,
}

impl std::fmt::Debug for PerfGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerfGroup")
            .field("kind", &self.kind)
            .field("available", &self.opened.is_ok())
            .finish()
    }
}

/// Counters of one group over a region: name → delta, or why there are none.
pub type GroupReading = Result<BTreeMap<&'static str, CounterDelta>, String>;

fn l1d_read_miss() -> Cache {
    Cache {
        which: CacheId::L1D,
        operation: CacheOp::READ,
        result: CacheResult::MISS,
    }
}

/// Turns an open error into the reason users see (`ENOENT: no hardware PMU` on our VMs).
fn describe_open_error(name: &str, e: &std::io::Error) -> String {
    let code = match e.raw_os_error() {
        Some(libc::ENOENT) => "ENOENT: no hardware PMU (or event not supported)".to_string(),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            format!("{e} (check /proc/sys/kernel/perf_event_paranoid)")
        }
        Some(libc::ENODEV) => "ENODEV: event not supported by this CPU".to_string(),
        Some(libc::EOPNOTSUPP) => "EOPNOTSUPP: event not supported here".to_string(),
        _ => e.to_string(),
    };
    format!("{name}: {code}")
}

impl PerfGroup {
    /// Opens the group for the calling thread (user-space counts only, so the default
    /// `perf_event_paranoid = 2` allows it).
    pub fn open(kind: CounterKind) -> Self {
        let opened = match kind {
            CounterKind::Hardware => Self::open_events(vec![
                ("cycles", Box::new(|| Builder::new(Hardware::CPU_CYCLES))),
                (
                    "instructions",
                    Box::new(|| Builder::new(Hardware::INSTRUCTIONS)),
                ),
                (
                    "l1d_read_misses",
                    Box::new(|| Builder::new(l1d_read_miss())),
                ),
                (
                    "llc_misses",
                    Box::new(|| Builder::new(Hardware::CACHE_MISSES)),
                ),
            ]),
            CounterKind::Software => Self::open_events(vec![
                (
                    "task_clock_ns",
                    Box::new(|| Builder::new(Software::TASK_CLOCK)),
                ),
                (
                    "page_faults",
                    Box::new(|| Builder::new(Software::PAGE_FAULTS)),
                ),
                (
                    "context_switches",
                    Box::new(|| Builder::new(Software::CONTEXT_SWITCHES)),
                ),
            ]),
        };
        Self { kind, opened }
    }

    #[allow(clippy::type_complexity)]
    fn open_events(
        events: Vec<(&'static str, Box<dyn Fn() -> Builder<'static>>)>,
    ) -> Result<OpenGroup, String> {
        let mut group_builder = Group::builder();
        group_builder.exclude_kernel(true).exclude_hv(true);
        let mut group = group_builder
            .build_group()
            .map_err(|e| describe_open_error("group", &e))?;
        let mut counters = Vec::new();
        for (name, make) in events {
            let mut builder = make();
            builder.exclude_kernel(true).exclude_hv(true);
            let counter = group
                .add(&builder)
                .map_err(|e| describe_open_error(name, &e))?;
            counters.push((name, counter));
        }
        Ok((group, counters))
    }

    pub fn kind(&self) -> CounterKind {
        self.kind
    }

    pub fn is_available(&self) -> bool {
        self.opened.is_ok()
    }
}

/// Raw group readings at the start of a region.
pub type GroupSnapshot = Option<BTreeMap<&'static str, CounterDelta>>;

fn read_group(
    group: &mut Group,
    counters: &[(&'static str, Counter)],
) -> Option<BTreeMap<&'static str, CounterDelta>> {
    let data = group.read().ok()?;
    let time_enabled = data.time_enabled().unwrap_or_default();
    let time_running = data.time_running().unwrap_or_default();
    Some(
        counters
            .iter()
            .filter_map(|(name, counter)| {
                data.get(counter).map(|entry| {
                    (
                        *name,
                        CounterDelta {
                            raw: entry.value(),
                            time_enabled,
                            time_running,
                        },
                    )
                })
            })
            .collect(),
    )
}

impl Measurement for PerfGroup {
    type Intermediate = GroupSnapshot;
    type Value = GroupReading;

    fn start(&mut self) -> GroupSnapshot {
        let (group, counters) = self.opened.as_mut().ok()?;
        group.enable().ok()?;
        read_group(group, counters)
    }

    fn end(&mut self, started: GroupSnapshot) -> GroupReading {
        let (group, counters) = self.opened.as_mut().map_err(|reason| reason.clone())?;
        let now = read_group(group, counters).ok_or("reading the counter group failed")?;
        let _ = group.disable();
        let before = started.ok_or("enabling the counter group failed")?;
        Ok(now
            .into_iter()
            .map(|(name, after)| {
                let b = before.get(name).copied().unwrap_or_default();
                (
                    name,
                    CounterDelta {
                        raw: after.raw.saturating_sub(b.raw),
                        time_enabled: after.time_enabled.saturating_sub(b.time_enabled),
                        time_running: after.time_running.saturating_sub(b.time_running),
                    },
                )
            })
            .collect())
    }
}

/// Sums per-thread readings of one group and turns them into the record's report.
/// `runs` is the number of instance runs per thread inside the region.
pub fn group_report(readings: &[GroupReading], runs: u64, threads: usize) -> CounterGroupReport {
    let mut total: BTreeMap<&'static str, CounterDelta> = BTreeMap::new();
    for reading in readings {
        match reading {
            Ok(values) => {
                for (name, delta) in values {
                    total.entry(name).or_default().merge(delta);
                }
            }
            Err(reason) => {
                return CounterGroupReport {
                    source: Provenance::Measured,
                    available: false,
                    reason: Some(reason.clone()),
                    values: BTreeMap::new(),
                };
            }
        }
    }
    let runs_total = (runs.max(1) * threads.max(1) as u64) as f64;
    CounterGroupReport {
        source: Provenance::Measured,
        available: !readings.is_empty(),
        reason: readings
            .is_empty()
            .then(|| "no measuring thread".to_string()),
        values: total
            .into_iter()
            .map(|(name, delta)| {
                let scaling = delta.scaling();
                (
                    name.to_string(),
                    CounterValue {
                        per_run: delta.scaled() / runs_total,
                        total: delta.scaled(),
                        scaling,
                        scaled: scaling > 1.0,
                    },
                )
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_extrapolates_multiplexed_counts() {
        let d = CounterDelta {
            raw: 100,
            time_enabled: Duration::from_millis(10),
            time_running: Duration::from_millis(5),
        };
        assert_eq!(d.scaling(), 2.0);
        assert_eq!(d.scaled(), 200.0);
        let full = CounterDelta {
            raw: 7,
            time_enabled: Duration::from_millis(3),
            time_running: Duration::from_millis(3),
        };
        assert_eq!(full.scaled(), 7.0);
    }

    #[test]
    fn software_counters_open_and_count_task_clock() {
        let mut group = PerfGroup::open(CounterKind::Software);
        if !group.is_available() {
            // A sandbox may forbid perf_event_open entirely; the report then says why.
            return;
        }
        let started = group.start();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        let reading = group.end(started).unwrap();
        assert!(reading["task_clock_ns"].raw > 0, "{reading:?}");
        let report = group_report(&[Ok(reading)], 1, 1);
        assert!(report.available);
        assert!(report.values.contains_key("page_faults"));
    }

    #[test]
    fn an_unavailable_group_reports_its_reason() {
        let report = group_report(&[Err("cycles: ENOENT".into())], 1, 1);
        assert!(!report.available);
        assert_eq!(report.reason.as_deref(), Some("cycles: ENOENT"));
    }
}
