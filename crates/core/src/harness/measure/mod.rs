//! What the runner measures around a sampling phase, behind one small trait (criterion's
//! `Measurement` shape): wall time always; perf counter groups — hardware (cycles, instructions,
//! L1D read misses, LLC misses) when the PMU lets them open, software (task-clock, page faults,
//! context switches) always — each scaled by time_enabled / time_running when multiplexed, with
//! the scaling recorded. A group that gives no reading says why ([`CounterError`]), and the
//! record keeps that reason in place of the counts.
//!
//! Counters observe the calling thread only, so every measuring thread opens its own and the
//! runner sums them.

pub mod counters;
pub mod pin;
pub mod precision;
pub mod reference;

use std::collections::BTreeMap;
use std::io;
use std::time::{Duration, Instant};

use thiserror::Error;

use crate::harness::measure::counters::{CounterEvent, CounterGroup, EventOpenError};

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
pub type GroupReading = Result<BTreeMap<&'static str, CounterDelta>, CounterError>;

/// Why a counter group gave no reading. The point's counter report records the text as its
/// `reason` and the point is measured anyway: counters are extra evidence, not the result.
#[derive(Debug, Error)]
pub enum CounterError {
    // Causes are part of the message (fields not named `source`) so error chains do not repeat them.
    /// No event of the group opened: each one's reason, events that failed alike named once.
    #[error("{}", missing_text(.0))]
    Unavailable(Vec<EventOpenError>),
    /// The group has no events at all.
    #[error("no events")]
    NoEvents,
    #[error("starting counters: {0}")]
    Start(io::Error),
    #[error("stopping counters: {0}")]
    Stop(io::Error),
    #[error("reading counters: {0}")]
    Read(io::Error),
}

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
        let missing = self.group.unavailable();
        (!missing.is_empty()).then(|| missing_text(missing))
    }
}

/// [`reasons_by_cause`] of events that did not open.
fn missing_text(missing: &[EventOpenError]) -> String {
    let reasons: Vec<(&str, String)> = missing
        .iter()
        .map(|e| (e.event.name(), e.to_string()))
        .collect();
    reasons_by_cause(&reasons)
}

/// `event: reason` pairs with the events that failed alike named once per reason, in the order
/// first seen: without a PMU every hardware event fails the same way, and one line says so.
fn reasons_by_cause(missing: &[(&str, impl AsRef<str>)]) -> String {
    let mut causes: Vec<(&str, Vec<&str>)> = Vec::new();
    for (event, reason) in missing {
        let (event, reason) = (*event, reason.as_ref());
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
    type Intermediate = Result<(), CounterError>;
    type Value = GroupReading;

    fn start(&mut self) -> Result<(), CounterError> {
        if !self.is_available() {
            let missing = self.group.unavailable();
            return Err(if missing.is_empty() {
                CounterError::NoEvents
            } else {
                CounterError::Unavailable(missing.to_vec())
            });
        }
        self.group.start().map_err(CounterError::Start)
    }

    fn end(&mut self, started: Result<(), CounterError>) -> GroupReading {
        started?;
        self.group.stop().map_err(CounterError::Stop)?;
        let readings = self.group.read().map_err(CounterError::Read)?;
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
                    reason: Some(reason.to_string()),
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

    /// A group's failure reads as it did when it was a string (the report's `reason`).
    #[test]
    fn counter_errors_keep_their_words() {
        let denied = || io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(
            CounterError::Start(denied()).to_string(),
            format!("starting counters: {}", denied())
        );
        assert_eq!(
            CounterError::Read(denied()).to_string(),
            format!("reading counters: {}", denied())
        );
        let group = CounterGroup::open(&CounterEvent::HARDWARE);
        let missing = group.unavailable();
        if !missing.is_empty() {
            let pairs: Vec<(&str, String)> = missing
                .iter()
                .map(|e| (e.event.name(), e.to_string()))
                .collect();
            assert_eq!(
                CounterError::Unavailable(missing.to_vec()).to_string(),
                reasons_by_cause(&pairs)
            );
        }
    }

    #[test]
    fn an_unavailable_group_reports_its_reason() {
        let report = group_report(&[Err(CounterError::NoEvents)], 1, 1);
        assert!(!report.available);
        assert_eq!(report.reason.as_deref(), Some("no events"));
    }
}
