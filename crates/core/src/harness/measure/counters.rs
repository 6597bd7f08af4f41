//! Performance counters through perf-event2: which events this machine can open (and why
//! not), and a [`CounterGroup`] the harness starts, stops and reads around a timed region.
//!
//! Machines without a hardware PMU (most VMs and CI runners, including ours) fail to open
//! hardware events with `ENOENT`; that is reported, never a panic, and software events
//! (task-clock, page faults, context switches) still work. Counts are scaled by
//! `time_enabled / time_running` when the kernel multiplexed a counter, and the scaling is
//! recorded so a report can say the number is an estimate.

use std::io;
use std::sync::Arc;

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Event, Hardware, Software};
use perf_event::{Builder, Counter};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The events the lab knows how to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CounterEvent {
    Cycles,
    Instructions,
    L1dReadMisses,
    LlcMisses,
    TaskClock,
    PageFaults,
    ContextSwitches,
}

impl CounterEvent {
    /// Every event, hardware first.
    pub const ALL: [CounterEvent; 7] = [
        CounterEvent::Cycles,
        CounterEvent::Instructions,
        CounterEvent::L1dReadMisses,
        CounterEvent::LlcMisses,
        CounterEvent::TaskClock,
        CounterEvent::PageFaults,
        CounterEvent::ContextSwitches,
    ];

    /// The hardware events (need a PMU).
    pub const HARDWARE: [CounterEvent; 4] = [
        CounterEvent::Cycles,
        CounterEvent::Instructions,
        CounterEvent::L1dReadMisses,
        CounterEvent::LlcMisses,
    ];

    /// The name used in records and tables (perf's own spelling where it has one).
    pub fn name(self) -> &'static str {
        match self {
            CounterEvent::Cycles => "cycles",
            CounterEvent::Instructions => "instructions",
            CounterEvent::L1dReadMisses => "L1-dcache-load-misses",
            CounterEvent::LlcMisses => "LLC-load-misses",
            CounterEvent::TaskClock => "task-clock",
            CounterEvent::PageFaults => "page-faults",
            CounterEvent::ContextSwitches => "context-switches",
        }
    }

    /// Whether the event needs a hardware PMU.
    pub fn is_hardware(self) -> bool {
        Self::HARDWARE.contains(&self)
    }

    fn builder(self) -> Builder<'static> {
        fn make<E: Event>(event: E) -> Builder<'static> {
            Builder::new(event)
        }
        let cache_miss = |which| Cache {
            which,
            operation: CacheOp::READ,
            result: CacheResult::MISS,
        };
        match self {
            CounterEvent::Cycles => make(Hardware::CPU_CYCLES),
            CounterEvent::Instructions => make(Hardware::INSTRUCTIONS),
            CounterEvent::L1dReadMisses => make(cache_miss(CacheId::L1D)),
            CounterEvent::LlcMisses => make(cache_miss(CacheId::LL)),
            CounterEvent::TaskClock => make(Software::TASK_CLOCK),
            CounterEvent::PageFaults => make(Software::PAGE_FAULTS),
            CounterEvent::ContextSwitches => make(Software::CONTEXT_SWITCHES),
        }
    }

    /// Opens a disabled counter for this thread (user space only).
    fn open(self) -> Result<Counter, EventOpenError> {
        self.builder().build().map_err(|error| EventOpenError {
            event: self,
            error: Arc::new(error),
        })
    }
}

/// Why an event did not open. Shown as what the errno means for counting here (no PMU,
/// `perf_event_paranoid`), since the bare errno names no fix. Cloneable (the OS error is
/// shared) so every reading of a group that cannot count can carry the reasons.
#[derive(Debug, Clone, Error)]
#[error("{}", describe_open_error(*event, error))]
pub struct EventOpenError {
    pub event: CounterEvent,
    // Part of the message (not a `source`) so error chains do not repeat it.
    error: Arc<io::Error>,
}

/// Whether an event can be opened here, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "reason")]
pub enum EventAvailability {
    Available,
    Unavailable(String),
}

/// One probed event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventProbe {
    pub event: CounterEvent,
    pub name: String,
    pub hardware: bool,
    pub availability: EventAvailability,
}

/// Tries to open every event in [`CounterEvent::ALL`] once and reports the outcome.
pub fn probe_events() -> Vec<EventProbe> {
    CounterEvent::ALL
        .iter()
        .map(|&event| EventProbe {
            event,
            name: event.name().to_string(),
            hardware: event.is_hardware(),
            availability: match event.open() {
                Ok(_) => EventAvailability::Available,
                Err(reason) => EventAvailability::Unavailable(reason.to_string()),
            },
        })
        .collect()
}

/// Turns an open error into a short reason: the errno name plus what it means here.
fn describe_open_error(event: CounterEvent, err: &io::Error) -> String {
    let errno = err.raw_os_error();
    match errno {
        Some(libc::ENOENT) if event.is_hardware() => "ENOENT: no hardware PMU".to_string(),
        Some(libc::ENOENT) => "ENOENT: event not supported by this kernel".to_string(),
        Some(libc::EOPNOTSUPP) => "EOPNOTSUPP: event not supported by this PMU".to_string(),
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "{}: not permitted (see /proc/sys/kernel/perf_event_paranoid)",
            if errno == Some(libc::EACCES) {
                "EACCES"
            } else {
                "EPERM"
            }
        ),
        Some(libc::ENOSYS) => "ENOSYS: kernel without perf_event_open".to_string(),
        Some(libc::EINVAL) => "EINVAL: event rejected by the kernel".to_string(),
        Some(libc::ENODEV) => "ENODEV: no such PMU on this CPU".to_string(),
        _ => err.to_string(),
    }
}

/// One event's reading over a region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterReading {
    pub event: CounterEvent,
    /// The raw count.
    pub raw: u64,
    /// `raw × time_enabled / time_running` (equal to `raw` when not multiplexed).
    pub scaled: f64,
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
    /// True when the kernel multiplexed the counter and `scaled` is an estimate.
    pub multiplexed: bool,
}

/// A set of counters for the calling thread, started and stopped around a timed region.
///
/// Events that fail to open are kept in [`CounterGroup::unavailable`] with their error; the
/// rest are counted. Each event is its own perf counter (not a kernel group), so one missing
/// event never takes the others down; multiplexing is visible per counter through
/// `time_running < time_enabled`.
pub struct CounterGroup {
    counters: Vec<(CounterEvent, Counter)>,
    unavailable: Vec<EventOpenError>,
}

impl std::fmt::Debug for CounterGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CounterGroup")
            .field(
                "counting",
                &self.counters.iter().map(|(e, _)| *e).collect::<Vec<_>>(),
            )
            .field("unavailable", &self.unavailable)
            .finish()
    }
}

impl CounterGroup {
    /// Opens what it can of `events` (disabled; call [`CounterGroup::start`]).
    pub fn open(events: &[CounterEvent]) -> Self {
        let mut counters = Vec::new();
        let mut unavailable = Vec::new();
        for &event in events {
            match event.open() {
                Ok(counter) => counters.push((event, counter)),
                Err(error) => unavailable.push(error),
            }
        }
        Self {
            counters,
            unavailable,
        }
    }

    /// The events being counted.
    pub fn counting(&self) -> Vec<CounterEvent> {
        self.counters.iter().map(|(e, _)| *e).collect()
    }

    /// The events that could not be opened, each with why.
    pub fn unavailable(&self) -> &[EventOpenError] {
        &self.unavailable
    }

    /// Resets and enables every counter.
    pub fn start(&mut self) -> io::Result<()> {
        for (_, counter) in &mut self.counters {
            counter.reset()?;
        }
        for (_, counter) in &mut self.counters {
            counter.enable()?;
        }
        Ok(())
    }

    /// Disables every counter (readings stay available).
    pub fn stop(&mut self) -> io::Result<()> {
        for (_, counter) in self.counters.iter_mut().rev() {
            counter.disable()?;
        }
        Ok(())
    }

    /// Reads every counter, scaling multiplexed ones.
    pub fn read(&mut self) -> io::Result<Vec<CounterReading>> {
        let mut readings = Vec::with_capacity(self.counters.len());
        for (event, counter) in &mut self.counters {
            let cat = counter.read_count_and_time()?;
            readings.push(scale_reading(
                *event,
                cat.count,
                cat.time_enabled,
                cat.time_running,
            ));
        }
        Ok(readings)
    }
}

/// Applies perf's multiplexing correction: `count × enabled / running`.
pub fn scale_reading(
    event: CounterEvent,
    raw: u64,
    time_enabled_ns: u64,
    time_running_ns: u64,
) -> CounterReading {
    let multiplexed = time_running_ns < time_enabled_ns;
    let scaled = if time_running_ns == 0 {
        // Never scheduled: there is no basis for an estimate.
        if raw == 0 { 0.0 } else { f64::NAN }
    } else if multiplexed {
        raw as f64 * time_enabled_ns as f64 / time_running_ns as f64
    } else {
        raw as f64
    };
    CounterReading {
        event,
        raw,
        scaled,
        time_enabled_ns,
        time_running_ns,
        multiplexed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probing_never_panics_and_covers_every_event() {
        let probes = probe_events();
        assert_eq!(probes.len(), CounterEvent::ALL.len());
        for probe in &probes {
            if let EventAvailability::Unavailable(reason) = &probe.availability {
                assert!(!reason.is_empty());
            }
        }
    }

    #[test]
    fn a_group_counts_what_it_can_around_a_region() {
        let mut group = CounterGroup::open(&CounterEvent::ALL);
        assert_eq!(
            group.counting().len() + group.unavailable().len(),
            CounterEvent::ALL.len()
        );
        group.start().unwrap();
        let data: Vec<u64> = (0..200_000).collect();
        std::hint::black_box(data.iter().sum::<u64>());
        group.stop().unwrap();
        let readings = group.read().unwrap();
        if let Some(task_clock) = readings.iter().find(|r| r.event == CounterEvent::TaskClock) {
            assert!(task_clock.raw > 0, "{task_clock:?}");
        }
    }

    #[test]
    fn multiplexed_counts_are_scaled_and_marked() {
        let table = [
            (100, 1000, 1000, 100.0, false),
            (100, 1000, 500, 200.0, true),
            (0, 1000, 0, 0.0, true),
        ];
        for (raw, enabled, running, scaled, multiplexed) in table {
            let r = scale_reading(CounterEvent::Cycles, raw, enabled, running);
            assert_eq!((r.scaled, r.multiplexed), (scaled, multiplexed));
        }
        assert!(
            scale_reading(CounterEvent::Cycles, 5, 10, 0)
                .scaled
                .is_nan()
        );
    }

    #[test]
    fn enoent_on_hardware_means_no_pmu() {
        let err = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(
            describe_open_error(CounterEvent::Cycles, &err),
            "ENOENT: no hardware PMU"
        );
        let open_error = EventOpenError {
            event: CounterEvent::Cycles,
            error: Arc::new(err),
        };
        assert_eq!(open_error.to_string(), "ENOENT: no hardware PMU");
    }
}
