//! Which points are compared with which: the point key, the checks that two documents can be
//! compared at all (same suite, geometry and simulation cap, a complete run), and the matching
//! of every current point to its baseline point.

use std::collections::{BTreeMap, BTreeSet};

use thiserror::Error;

use super::GATE_MANIFEST_KEY;
use crate::results::{PointRecord, ResultsDocument, RunStatus, SimulatedLevel};
use crate::vocab::format_params;

/// Why two documents cannot be compared (the CLI exits 2 and prints the fix).
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum CompareError {
    #[error(
        "the current run was interrupted ({done} of {total} points); nothing to compare — rerun the gate"
    )]
    Interrupted { done: usize, total: usize },
    #[error(
        "the baseline is from suite `{baseline}` but the current results are from suite `{current}`; compare results of the same suite (or record a new baseline with `stridelab gate --suite {current} --save-baseline FILE`)"
    )]
    SuiteName { baseline: String, current: String },
    #[error(
        "the suite changed since the baseline was recorded: {missing} baseline point(s) are not in the current results (first: `{first}`); record a new baseline with `stridelab gate --save-baseline reports/baseline.json`"
    )]
    SuiteChanged { missing: usize, first: String },
    #[error(
        "simulated geometries differ: baseline {baseline}, current {current}; the deterministic track needs both runs simulated on the same preset — let `stridelab gate` run the suite (it uses the baseline's preset) or record a new baseline with `stridelab gate --save-baseline reports/baseline.json`"
    )]
    GeometryMismatch { baseline: String, current: String },
    #[error(
        "simulation caps differ (baseline {baseline} accesses, current {current}): the miss counts of capped points are not comparable; record a new baseline with `stridelab gate --save-baseline reports/baseline.json`"
    )]
    SimulationCap { baseline: u64, current: u64 },
    #[error(
        "two points of the {which} share the key `{key}`; the gate needs every point to be unique"
    )]
    DuplicatePoint { which: &'static str, key: String },
    #[error(
        "the timing track judged none of the {points} point(s) ({why}), and a gate that judged nothing cannot pass; record the baseline with `stridelab gate --save-baseline FILE` (every point then has a same-run reference), or compare two builds with `stridelab gate --base REV`"
    )]
    NothingTimed { points: usize, why: String },
    #[error(
        "nothing to judge: timing is not comparable between the two machines and no simulated miss count was compared ({why}); compare two builds on this machine with `stridelab gate --base REV`"
    )]
    NothingJudged { why: String },
}

/// A current point and the baseline point it is compared with (`None`: new in this run).
pub(super) type Matched<'a> = (&'a PointRecord, Option<&'a PointRecord>);

/// `kernel k=v k=v ×threads`, parameters in name order.
pub fn point_key(record: &PointRecord) -> String {
    format!(
        "{} {} ×{}",
        record.kernel,
        params_label(record),
        record.threads
    )
}

/// The point's `key=value` pairs.
pub(super) fn params_label(record: &PointRecord) -> String {
    format_params(record.params.iter())
}

/// A geometry in one line: `L1d 48 KiB 12-way, 64 sets of 64 B lines; L2 …` (the units
/// `info` prints).
pub fn geometry_label(levels: &[SimulatedLevel]) -> String {
    levels
        .iter()
        .map(|l| {
            format!(
                "{} {} {}-way, {} sets of {} B lines",
                l.name,
                crate::units::format_size_exact(l.size),
                l.ways,
                l.sets,
                l.line
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The first simulated geometry of a document (every record simulates the same one).
fn document_geometry(doc: &ResultsDocument) -> Option<String> {
    doc.records
        .iter()
        .find_map(|r| r.simulated.as_ref())
        .map(|s| geometry_label(&s.levels))
}

/// The preset `stridelab gate` recorded in the manifest, if any.
pub fn recorded_preset(doc: &ResultsDocument) -> Option<String> {
    doc.info
        .get(GATE_MANIFEST_KEY)?
        .get("preset")?
        .as_str()
        .map(str::to_string)
}

/// Checks that `current` can be compared with `baseline` at all and returns the simulated
/// geometry both share, as the verdict names it.
pub(super) fn check_comparable(
    baseline: &ResultsDocument,
    current: &ResultsDocument,
) -> Result<String, CompareError> {
    if current.status == RunStatus::Interrupted {
        return Err(CompareError::Interrupted {
            done: current.records.len(),
            total: current.suite.points,
        });
    }
    if baseline.suite.name != current.suite.name {
        return Err(CompareError::SuiteName {
            baseline: baseline.suite.name.clone(),
            current: current.suite.name.clone(),
        });
    }
    let geometry = match (document_geometry(baseline), document_geometry(current)) {
        (Some(b), Some(c)) if b != c => {
            return Err(CompareError::GeometryMismatch {
                baseline: b,
                current: c,
            });
        }
        (b, c) => b.or(c).unwrap_or_else(|| "none simulated".into()),
    };
    let geometry = match recorded_preset(baseline) {
        Some(preset) => format!("preset {preset}: {geometry}"),
        None => geometry,
    };
    if baseline.method.simulation_access_cap != current.method.simulation_access_cap {
        return Err(CompareError::SimulationCap {
            baseline: baseline.method.simulation_access_cap,
            current: current.method.simulation_access_cap,
        });
    }
    Ok(geometry)
}

/// Every current point with its baseline point, matched by [`point_key`]. Every baseline point
/// must be matched (else the suite changed).
pub(super) fn match_points<'a>(
    baseline: &'a ResultsDocument,
    current: &'a ResultsDocument,
) -> Result<Vec<Matched<'a>>, CompareError> {
    let base_by_key = unique_keys(baseline, "baseline")?;
    unique_keys(current, "current results")?;
    let matched: Vec<Matched<'a>> = current
        .records
        .iter()
        .map(|record| (record, base_by_key.get(&point_key(record)).copied()))
        .collect();
    let used: BTreeSet<usize> = matched
        .iter()
        .filter_map(|(_, base)| base.map(|b| b.index))
        .collect();
    let missing: Vec<&PointRecord> = baseline
        .records
        .iter()
        .filter(|b| !used.contains(&b.index))
        .collect();
    if let Some(first) = missing.first() {
        return Err(CompareError::SuiteChanged {
            missing: missing.len(),
            first: point_key(first),
        });
    }
    Ok(matched)
}

fn unique_keys<'a>(
    doc: &'a ResultsDocument,
    which: &'static str,
) -> Result<BTreeMap<String, &'a PointRecord>, CompareError> {
    let mut map = BTreeMap::new();
    for record in &doc.records {
        let key = point_key(record);
        if map.insert(key.clone(), record).is_some() {
            return Err(CompareError::DuplicatePoint { which, key });
        }
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::compare::test_fixtures::{document, noisy};
    use crate::results::compare::{CompareOptions, compare};

    #[test]
    fn input_problems_are_errors_not_verdicts() {
        let base = document(&noisy(100.0, 10, 1), &noisy(50.0, 10, 2), 7);
        let mut fewer = base.clone();
        fewer.records.pop();
        assert!(matches!(
            compare(&base, &fewer, &CompareOptions::default()),
            Err(CompareError::SuiteChanged { missing: 1, .. })
        ));
        let mut other_geometry = base.clone();
        for r in &mut other_geometry.records {
            r.simulated.as_mut().unwrap().levels[0].ways = 8;
        }
        assert!(matches!(
            compare(&base, &other_geometry, &CompareOptions::default()),
            Err(CompareError::GeometryMismatch { .. })
        ));
        let mut interrupted = base.clone();
        interrupted.status = RunStatus::Interrupted;
        assert!(matches!(
            compare(&base, &interrupted, &CompareOptions::default()),
            Err(CompareError::Interrupted { .. })
        ));
        let mut renamed = base.clone();
        renamed.suite.name = "full".into();
        assert!(matches!(
            compare(&renamed, &base, &CompareOptions::default()),
            Err(CompareError::SuiteName { .. })
        ));
    }
}
