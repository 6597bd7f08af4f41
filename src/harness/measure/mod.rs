//! What the runner measures around a sampling phase, behind one small trait (criterion's
//! `Measurement` shape): wall time always; perf counter groups — hardware (cycles, instructions,
//! L1D read misses, LLC misses) when the PMU lets them open, software (task-clock, page faults,
//! context switches) always — each scaled by time_enabled / time_running when multiplexed, with
//! the scaling recorded.
//!
//! Counters observe the calling thread only, so every measuring thread opens its own and the
//! runner sums them.

pub(crate) mod counters;
pub mod pin;
pub(crate) mod precision;
pub(crate) mod reference;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::harness::measure::counters::{CounterEvent, CounterGroup};

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

impl CounterKind {
    /// The events of the group.
    pub fn events(self) -> &'static [CounterEvent] {
        match self {
            CounterKind::Hardware => &CounterEvent::HARDWARE,
            CounterKind::Software => &[
                CounterEvent::TaskClock,
                CounterEvent::PageFaults,
                CounterEvent::ContextSwitches,
            ],
        }
    }
}

/// One counter's reading over a measured region (or several, summed).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CounterDelta {
    /// Raw count (not scaled).
    pub raw: u64,
    /// Count extrapolated by time_enabled / time_running (equal to `raw` unless multiplexed).
    pub scaled: f64,
}

impl CounterDelta {
    /// scaled / raw: 1.0 when the counter was never multiplexed.
    pub fn scaling(&self) -> f64 {
        if self.raw == 0 || !self.scaled.is_finite() {
            1.0
        } else {
            (self.scaled / self.raw as f64).max(1.0)
        }
    }

    /// Adds another region's (or thread's) reading.
    pub fn merge(&mut self, other: &CounterDelta) {
        self.raw += other.raw;
        self.scaled += other.scaled;
    }
}

/// Counters of one group over a region: name → delta, or why there are none.
pub type GroupReading = Result<BTreeMap<&'static str, CounterDelta>, String>;

/// The calling thread's counters of one group (`harness::measure::counters`), as a [`Measurement`].
/// Events that do not open are left out; if none opens, every reading is the reason.
pub struct PerfGroup {
    kind: CounterKind,
    group: CounterGroup,
}

impl std::fmt::Debug for PerfGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerfGroup")
            .field("kind", &self.kind)
            .field("group", &self.group)
            .finish()
    }
}

impl PerfGroup {
    /// Opens the group's events for the calling thread.
    pub fn open(kind: CounterKind) -> Self {
        Self {
            kind,
            group: CounterGroup::open(kind.events()),
        }
    }

    pub fn kind(&self) -> CounterKind {
        self.kind
    }

    pub fn is_available(&self) -> bool {
        !self.group.counting().is_empty()
    }

    /// Why events are missing (`cycles, instructions: ENOENT: no hardware PMU`), if any are.
    fn missing_reason(&self) -> Option<String> {
        let missing: Vec<(&str, &str)> = self
            .group
            .unavailable()
            .iter()
            .map(|(event, reason)| (event.name(), reason.as_str()))
            .collect();
        (!missing.is_empty()).then(|| reasons_by_cause(&missing))
    }
}

/// `event: reason` pairs with the events that failed alike named once per reason, in the order
/// first seen: without a PMU every hardware event fails the same way, and one line says so.
fn reasons_by_cause(missing: &[(&str, &str)]) -> String {
    let mut causes: Vec<(&str, Vec<&str>)> = Vec::new();
    for &(event, reason) in missing {
        match causes.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, events)) => events.push(event),
            None => causes.push((reason, vec![event])),
        }
    }
    causes
        .iter()
        .map(|(reason, events)| format!("{}: {reason}", events.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

impl Measurement for PerfGroup {
    /// Whether the counters started.
    type Intermediate = Result<(), String>;
    type Value = GroupReading;

    fn start(&mut self) -> Result<(), String> {
        if !self.is_available() {
            return Err(self.missing_reason().unwrap_or_else(|| "no events".into()));
        }
        self.group
            .start()
            .map_err(|e| format!("starting counters: {e}"))
    }

    fn end(&mut self, started: Result<(), String>) -> GroupReading {
        started?;
        self.group
            .stop()
            .map_err(|e| format!("stopping counters: {e}"))?;
        let readings = self
            .group
            .read()
            .map_err(|e| format!("reading counters: {e}"))?;
        Ok(readings
            .into_iter()
            .map(|r| {
                (
                    r.event.name(),
                    CounterDelta {
                        raw: r.raw,
                        scaled: if r.scaled.is_finite() {
                            r.scaled
                        } else {
                            r.raw as f64
                        },
                    },
                )
            })
            .collect())
    }
}

/// Why some events of a group are missing, for a group that still counts others.
pub fn partial_reason(group: &PerfGroup) -> Option<String> {
    group.missing_reason()
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
                        per_run: delta.scaled / runs_total,
                        total: delta.scaled,
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
    fn scaling_is_the_ratio_of_scaled_to_raw() {
        let d = CounterDelta {
            raw: 100,
            scaled: 200.0,
        };
        assert_eq!(d.scaling(), 2.0);
        let mut sum = CounterDelta {
            raw: 7,
            scaled: 7.0,
        };
        assert_eq!(sum.scaling(), 1.0);
        sum.merge(&d);
        assert_eq!((sum.raw, sum.scaled), (107, 207.0));
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
        assert!(reading["task-clock"].raw > 0, "{reading:?}");
        let report = group_report(&[Ok(reading)], 1, 1);
        assert!(report.available);
        assert!(report.values.contains_key("page-faults"));
    }

    #[test]
    fn events_that_failed_alike_share_one_reason() {
        let pmu = "ENOENT: no hardware PMU";
        let cases: &[(&[(&str, &str)], &str)] = &[
            (
                &[("cycles", pmu), ("instructions", pmu)],
                "cycles, instructions: ENOENT: no hardware PMU",
            ),
            (
                &[
                    ("cycles", pmu),
                    ("task-clock", "EACCES"),
                    ("instructions", pmu),
                ],
                "cycles, instructions: ENOENT: no hardware PMU; task-clock: EACCES",
            ),
        ];
        for (missing, text) in cases {
            assert_eq!(reasons_by_cause(missing), *text);
        }
    }

    #[test]
    fn an_unavailable_group_reports_its_reason() {
        let report = group_report(&[Err("cycles: ENOENT".into())], 1, 1);
        assert!(!report.available);
        assert_eq!(report.reason.as_deref(), Some("cycles: ENOENT"));
    }
}
