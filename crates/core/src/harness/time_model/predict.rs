//! A timed point's predicted time from the machine's probes and the point's simulated traffic,
//! in the spirit of kerncraft's ECM and Roofline models, as pure functions of the record and
//! the probes.
//!
//! Traffic per supplying level: L1d serves the kernel's own loads and stores (its `work`
//! bytes); a level below serves the lines the level above missed and it hit (its accesses
//! less its misses); memory serves the last level's misses. Loads are priced at the level's
//! read bandwidth, stores at its write bandwidth (the simulator separates them), and loads
//! at its load-to-use latency for the latency bound. The bounds:
//! - bandwidth, overlapped: the largest level's time (every transfer in parallel);
//! - bandwidth, not overlapped: the sum of the levels' times (ECM's serial transfers);
//! - latency: every load waiting for its level's latency, one after another.
//!
//! A simulation from empty caches is set to the timed runs' warm state first: a level that
//! holds the point's whole footprint serves its compulsory misses (see `warm_misses`).
//!
//! The estimate: dependent loads (`chase`, `conflict mode=lat`) take the latency bound; every
//! other point the bandwidth estimate max(L1d's time, the sum of the levels below): each probe
//! timed a whole stream end to end, so a line from L2 already includes its trip through L1d,
//! while lines from different levels arrive one after another.

use crate::results::time_model::{
    LevelProbes, LevelTraffic, MachineModel, TimeBounds, TimePrediction, TimeRule,
};
use crate::results::{PointRecord, Provenance, SimulatedLevel};
use crate::vocab::{Family, ParamValue};

/// Which end of every probe's interval a pricing takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Median,
    /// Every probe at its best sample: the smallest time the traffic needs.
    Fast,
    /// Every probe at its worst sample.
    Slow,
}

/// Bytes per second of a probe at `end`: the fast end is the highest bandwidth.
fn bandwidth(interval: &crate::results::time_model::Interval, end: End) -> f64 {
    match end {
        End::Median => interval.median,
        End::Fast => interval.high,
        End::Slow => interval.low,
    }
}

fn latency(interval: &crate::results::time_model::Interval, end: End) -> f64 {
    match end {
        End::Median => interval.median,
        End::Fast => interval.low,
        End::Slow => interval.high,
    }
}

/// Whether the point's loads each wait for the one before (the latency rule).
pub fn dependent_loads(record: &PointRecord) -> bool {
    match record.kernel.as_str() {
        "chase" => true,
        "conflict" => record.params.get("mode") == Some(&ParamValue::Text("lat".into())),
        _ => false,
    }
}

/// Why the model does not claim a point it may still price (`None`: it claims it).
fn disowned(record: &PointRecord, traffic: &[LevelTraffic], rule: TimeRule) -> Option<String> {
    if record.threads > 1 {
        return Some(format!(
            "timed on {} threads; the probes measured one",
            record.threads
        ));
    }
    if record.family == Family::Matmul {
        return Some(
            "compute-bound: a matmul's time is its arithmetic's, which the model does not price"
                .into(),
        );
    }
    if let Some(note) = record
        .model
        .as_ref()
        .and_then(|m| m.simulation_note.as_ref())
    {
        let note: String = note.chars().take(200).collect();
        return Some(format!("the simulated stream is not the timed one: {note}"));
    }
    let below_l1: f64 = traffic.iter().skip(1).map(|t| t.loads + t.stores).sum();
    // Dependent loads that hit L1d wait L1d's latency, which the chase probe measured; a
    // stream of independent L1d hits runs at the core's pace instead.
    if below_l1 == 0.0 && rule == TimeRule::Bandwidth {
        return Some(
            "independent accesses that all hit L1d: the time is the core's (instructions and \
             their dependencies), finer than the memory probes resolve"
                .into(),
        );
    }
    None
}

/// The probes that price `level`: its own, or memory's for a level the probes skipped.
fn probes_for<'m>(
    level: &SimulatedLevel,
    model: &'m MachineModel,
) -> Result<&'m LevelProbes, String> {
    if let Some(p) = model
        .levels
        .iter()
        .find(|p| p.name == level.name && p.size == level.size)
    {
        return Ok(p);
    }
    if model
        .skipped
        .iter()
        .any(|s| s.name == level.name && s.size == level.size)
    {
        return Ok(&model.memory);
    }
    Err(format!(
        "simulated on another geometry: {} of {} B has no probe on this machine",
        level.name, level.size
    ))
}

fn scaled(count: u64, scale: f64) -> f64 {
    count as f64 * scale
}

/// Each level's (load, store) misses of one timed run. A simulation from empty caches counts
/// the compulsory misses of the first run; the timed runs follow warm-up runs, so at a level
/// that holds the point's whole footprint (its lines, the compulsory misses of L1d) those
/// misses are hits, and are taken off (shared between loads and stores as the misses are).
fn warm_misses(sim: &crate::results::SimulatedMisses, scale: f64) -> Vec<(f64, f64)> {
    let footprint = sim
        .levels
        .first()
        .map_or(0, |l| l.compulsory.saturating_mul(l.line));
    let fix = sim.start == "cold" && sim.scope.kind == "full";
    sim.levels
        .iter()
        .map(|l| {
            let (loads, stores) = (scaled(l.load_misses, scale), scaled(l.store_misses, scale));
            let all = loads + stores;
            if !(fix && footprint <= l.size) || all == 0.0 {
                return (loads, stores);
            }
            let kept = (1.0 - l.compulsory as f64 / all).max(0.0);
            (loads * kept, stores * kept)
        })
        .collect()
}

/// The traffic of one run per supplying level, priced at `end` of the probes.
fn traffic(
    record: &PointRecord,
    model: &MachineModel,
    end: End,
) -> Result<Vec<LevelTraffic>, String> {
    let sim = record
        .simulated
        .as_ref()
        .ok_or("no simulated counts to price")?;
    let work = record.work.as_ref().ok_or("no work recorded to price")?;
    // A simulated prefix stands for the whole run in proportion to its accesses.
    let scale = match sim.scope.kind.as_str() {
        "full" => 1.0,
        _ => match sim.scope.run_accesses {
            Some(run) if sim.scope.simulated_accesses > 0 => {
                run as f64 / sim.scope.simulated_accesses as f64
            }
            _ => return Err("a simulated prefix of a run of unknown length".into()),
        },
    };
    let (first, _) = sim
        .levels
        .split_first()
        .ok_or("no simulated levels to price")?;
    let misses = warm_misses(sim, scale);
    let mut out = Vec::with_capacity(sim.levels.len() + 1);
    let l1 = probes_for(first, model)?;
    let load_hits = (scaled(first.loads, scale) - misses[0].0).max(0.0);
    let store_hits = (scaled(first.stores, scale) - misses[0].1).max(0.0);
    out.push(LevelTraffic {
        level: first.name.clone(),
        priced_as: l1.name.clone(),
        loads: load_hits,
        stores: store_hits,
        bytes: (work.bytes_read + work.bytes_written) as f64,
        bandwidth_ns: work.bytes_read as f64 / bandwidth(&l1.read_bytes_per_s, end) * 1e9
            + work.bytes_written as f64 / bandwidth(&l1.write_bytes_per_s, end) * 1e9,
        latency_ns: load_hits * latency(&l1.latency_ns, end),
    });
    let line_traffic = |name: &str, probes: &LevelProbes, loads: f64, stores: f64, line: u64| {
        let line = line as f64;
        LevelTraffic {
            level: name.to_string(),
            priced_as: probes.name.clone(),
            loads,
            stores,
            bytes: (loads + stores) * line,
            bandwidth_ns: loads * line / bandwidth(&probes.read_bytes_per_s, end) * 1e9
                + stores * line / bandwidth(&probes.write_bytes_per_s, end) * 1e9,
            latency_ns: loads * latency(&probes.latency_ns, end),
        }
    };
    // A level serves what the level above missed and it did not.
    for (i, level) in sim.levels.iter().enumerate().skip(1) {
        let probes = probes_for(level, model)?;
        out.push(line_traffic(
            &level.name,
            probes,
            (misses[i - 1].0 - misses[i].0).max(0.0),
            (misses[i - 1].1 - misses[i].1).max(0.0),
            level.line,
        ));
    }
    let last = sim.levels.last().unwrap_or(first);
    let (load_misses, store_misses) = misses[misses.len() - 1];
    out.push(line_traffic(
        "memory",
        &model.memory,
        load_misses,
        store_misses,
        last.line,
    ));
    Ok(out)
}

/// The three bounds and the estimate `rule` picks, from priced traffic.
fn bounds_of(traffic: &[LevelTraffic], rule: TimeRule) -> (f64, f64, f64, f64) {
    let overlapped = traffic.iter().map(|t| t.bandwidth_ns).fold(0.0, f64::max);
    let non_overlapped: f64 = traffic.iter().map(|t| t.bandwidth_ns).sum();
    let latency: f64 = traffic.iter().map(|t| t.latency_ns).sum();
    let estimate = match rule {
        TimeRule::Latency => latency,
        TimeRule::Bandwidth => {
            let core = traffic.first().map_or(0.0, |t| t.bandwidth_ns);
            let below: f64 = traffic.iter().skip(1).map(|t| t.bandwidth_ns).sum();
            core.max(below)
        }
    };
    (overlapped, non_overlapped, latency, estimate)
}

/// The rule's words, recorded as the reason of a claimed point.
fn rule_reason(rule: TimeRule) -> &'static str {
    match rule {
        TimeRule::Latency => {
            "dependent loads: each load pays its level's measured latency, one after another"
        }
        TimeRule::Bandwidth => {
            "independent loads and stores: the traffic at each level's measured bandwidth, \
             max(L1d, the sum of the levels below)"
        }
    }
}

/// The prediction for one record (`None`: the point was not timed, so there is nothing to
/// set a model beside).
pub fn predict(record: &PointRecord, model: &MachineModel) -> Option<TimePrediction> {
    let measured = record.timing.as_ref()?.ns_per_run.median;
    let rule = if dependent_loads(record) {
        TimeRule::Latency
    } else {
        TimeRule::Bandwidth
    };
    let priced = traffic(record, model, End::Median);
    let traffic = match priced {
        Ok(traffic) => traffic,
        Err(reason) => {
            return Some(TimePrediction {
                source: Provenance::Model,
                applies: false,
                reason,
                rule: None,
                bounds: None,
                traffic: Vec::new(),
                measured_over_model: None,
                why_controls: Vec::new(),
            });
        }
    };
    let (overlapped, non_overlapped, latency_ns, estimate) = bounds_of(&traffic, rule);
    let at = |end| {
        self::traffic(record, model, end)
            .map(|t| bounds_of(&t, rule).3)
            .unwrap_or(estimate)
    };
    let (low, high) = (at(End::Fast), at(End::Slow));
    let usable = estimate.is_finite() && estimate > 0.0;
    let disown = if usable {
        disowned(record, &traffic, rule)
    } else {
        Some("the traffic priced to no time".into())
    };
    Some(TimePrediction {
        source: Provenance::Model,
        applies: disown.is_none(),
        reason: disown.unwrap_or_else(|| rule_reason(rule).into()),
        rule: usable.then_some(rule),
        bounds: usable.then_some(TimeBounds {
            overlapped_ns: overlapped,
            non_overlapped_ns: non_overlapped,
            latency_ns,
            estimate_ns: estimate,
            estimate_low_ns: low.min(estimate),
            estimate_high_ns: high.max(estimate),
        }),
        traffic,
        measured_over_model: usable.then_some(measured / estimate),
        why_controls: Vec::new(),
    })
}

#[cfg(test)]
mod tests;
