//! What the criterion benches measure: a custom criterion [`Measurement`] that counts a
//! hardware event through perf-event2 instead of time, chosen with
//! `STRIDELAB_MEASURE=l1d-misses|llc-misses|cycles|instructions` (unset or `wall`: wall time).
//!
//! Machines without a hardware PMU (most VMs and CI runners, including ours) cannot open these
//! events: the bench says so once on stderr and measures wall time instead — it never fails.
//! Counts are for the benchmarking thread, user space only.

// Each bench binary includes this module and uses a different part of it.
#![allow(dead_code)]

use std::cell::RefCell;
use std::time::{Duration, Instant};

use criterion::Criterion;
use criterion::Throughput;
use criterion::measurement::{Measurement, ValueFormatter};
use perf_event::Counter;
use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware};

/// The environment variable that selects the measured quantity.
pub const MEASURE_VAR: &str = "STRIDELAB_MEASURE";

/// What a bench can count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    WallTime,
    L1dMisses,
    LlcMisses,
    Cycles,
    Instructions,
}

impl Quantity {
    /// Parses a `STRIDELAB_MEASURE` value.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "" | "wall" | "time" => Ok(Quantity::WallTime),
            "l1d-misses" => Ok(Quantity::L1dMisses),
            "llc-misses" => Ok(Quantity::LlcMisses),
            "cycles" => Ok(Quantity::Cycles),
            "instructions" => Ok(Quantity::Instructions),
            other => Err(format!(
                "{MEASURE_VAR}={other}: unknown; use wall, l1d-misses, llc-misses, cycles or instructions"
            )),
        }
    }

    /// The `STRIDELAB_MEASURE` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Quantity::WallTime => "wall",
            Quantity::L1dMisses => "l1d-misses",
            Quantity::LlcMisses => "llc-misses",
            Quantity::Cycles => "cycles",
            Quantity::Instructions => "instructions",
        }
    }

    /// The unit criterion prints.
    fn unit(self) -> &'static str {
        match self {
            Quantity::WallTime => "ns",
            Quantity::L1dMisses | Quantity::LlcMisses => "misses",
            Quantity::Cycles => "cycles",
            Quantity::Instructions => "instr",
        }
    }

    fn open(self) -> std::io::Result<Counter> {
        let miss = |which| Cache {
            which,
            operation: CacheOp::READ,
            result: CacheResult::MISS,
        };
        let mut builder = match self {
            Quantity::L1dMisses => perf_event::Builder::new(miss(CacheId::L1D)),
            Quantity::LlcMisses => perf_event::Builder::new(miss(CacheId::LL)),
            Quantity::Cycles => perf_event::Builder::new(Hardware::CPU_CYCLES),
            Quantity::Instructions => perf_event::Builder::new(Hardware::INSTRUCTIONS),
            Quantity::WallTime => unreachable!("wall time needs no counter"),
        };
        let mut counter = builder.exclude_kernel(true).exclude_hv(true).build()?;
        counter.enable()?;
        Ok(counter)
    }
}

/// Wall time or one hardware counter of the benchmarking thread, as criterion sees it.
pub struct LabMeasurement {
    quantity: Quantity,
    /// Open (and running) when `quantity` is a counter; read at start and end.
    counter: Option<RefCell<Counter>>,
    formatter: LabFormatter,
}

impl LabMeasurement {
    /// Reads `STRIDELAB_MEASURE`; falls back to wall time (saying why, once) when the counter
    /// cannot be opened or the value is unknown.
    pub fn from_env() -> Self {
        let requested = std::env::var(MEASURE_VAR).unwrap_or_default();
        let quantity = match Quantity::parse(&requested) {
            Ok(q) => q,
            Err(message) => {
                eprintln!("{message}; measuring wall time");
                Quantity::WallTime
            }
        };
        Self::new(quantity)
    }

    /// Measures `quantity`, or wall time when its counter does not open here.
    pub fn new(quantity: Quantity) -> Self {
        if quantity == Quantity::WallTime {
            return Self::wall();
        }
        match quantity.open() {
            Ok(counter) => {
                eprintln!(
                    "{MEASURE_VAR}: counting {} per iteration (hardware counter, measured)",
                    quantity.name()
                );
                Self {
                    quantity,
                    counter: Some(RefCell::new(counter)),
                    formatter: LabFormatter { quantity },
                }
            }
            Err(error) => {
                let reason = match error.raw_os_error() {
                    Some(libc::ENOENT) => "ENOENT: no hardware PMU on this machine".to_string(),
                    Some(libc::EACCES) | Some(libc::EPERM) => {
                        "not permitted (see /proc/sys/kernel/perf_event_paranoid)".to_string()
                    }
                    _ => error.to_string(),
                };
                eprintln!(
                    "{MEASURE_VAR}: cannot count {} ({reason}); measuring wall time instead",
                    quantity.name()
                );
                Self::wall()
            }
        }
    }

    fn wall() -> Self {
        Self {
            quantity: Quantity::WallTime,
            counter: None,
            formatter: LabFormatter {
                quantity: Quantity::WallTime,
            },
        }
    }

    /// What is actually measured (wall time after a fallback).
    pub fn quantity(&self) -> Quantity {
        self.quantity
    }

    fn read_counter(&self) -> u64 {
        match &self.counter {
            // A failed read mid-run is reported as zero events rather than aborting the bench.
            Some(counter) => counter.borrow_mut().read().unwrap_or(0),
            None => 0,
        }
    }
}

/// Where a measured region started.
pub enum Start {
    Wall(Instant),
    Count(u64),
}

impl Measurement for LabMeasurement {
    type Intermediate = Start;
    /// Nanoseconds (wall time) or events.
    type Value = f64;

    fn start(&self) -> Start {
        match self.counter {
            Some(_) => Start::Count(self.read_counter()),
            None => Start::Wall(Instant::now()),
        }
    }

    fn end(&self, start: Start) -> f64 {
        match start {
            Start::Wall(t) => t.elapsed().as_nanos() as f64,
            Start::Count(before) => self.read_counter().saturating_sub(before) as f64,
        }
    }

    fn add(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }

    fn zero(&self) -> f64 {
        0.0
    }

    fn to_f64(&self, value: &f64) -> f64 {
        *value
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &self.formatter
    }
}

/// Formats nanoseconds like criterion (ns … s, bytes/s) and counts as plain numbers (events
/// per byte for byte throughputs).
pub struct LabFormatter {
    quantity: Quantity,
}

impl ValueFormatter for LabFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        if self.quantity != Quantity::WallTime {
            return self.quantity.unit();
        }
        let (factor, unit) = if typical < 1e3 {
            (1.0, "ns")
        } else if typical < 1e6 {
            (1e-3, "µs")
        } else if typical < 1e9 {
            (1e-6, "ms")
        } else {
            (1e-9, "s")
        };
        for v in values {
            *v *= factor;
        }
        unit
    }

    fn scale_throughputs(
        &self,
        typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let amount = match throughput {
            Throughput::Bytes(n) | Throughput::BytesDecimal(n) => *n as f64,
            Throughput::Elements(n) | Throughput::Bits(n) => *n as f64,
            Throughput::ElementsAndBytes { bytes, .. } => *bytes as f64,
        };
        if self.quantity != Quantity::WallTime {
            for v in values {
                *v /= amount;
            }
            return match throughput {
                Throughput::Elements(_) => "per element",
                _ => "per byte",
            };
        }
        // Decimal GB/s: the unit the lab's reports use.
        let per_second = amount * 1e9 / typical;
        let (divisor, unit) = if per_second >= 1e9 {
            (1e9, "GB/s")
        } else if per_second >= 1e6 {
            (1e6, "MB/s")
        } else {
            (1e3, "KB/s")
        };
        for v in values {
            *v = amount * 1e9 / *v / divisor;
        }
        unit
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        self.quantity.unit()
    }
}

/// The lab's criterion configuration: short warm-up and measurement so every family fits the
/// `cargo bench` budget; command-line options (`--quick`, `--measurement-time`, …) override.
pub fn lab_criterion() -> Criterion<LabMeasurement> {
    Criterion::default()
        .with_measurement(LabMeasurement::from_env())
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(800))
        .sample_size(10)
        .nresamples(10_000)
        .without_plots()
}
