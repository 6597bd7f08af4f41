//! What a nest will do, known before it runs: its accesses counted exactly (stopping, with an
//! error, once they pass the budget), and every array index proved in bounds. The outer loops
//! are walked point by point (each point counted against the same budget, so huge outer
//! bounds stop early instead of hanging); the innermost loop is taken analytically — its trip
//! count in closed form, and each index, affine in the innermost index, at its two extremes
//! (its first and last value), which is exact for any bounds: a triangular nest checks each
//! row's own range, so it raises no false alarm.

use super::LoopNest;
use super::error::{LoopError, OutOfBounds};

/// What [`check`] found: the nest's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NestFacts {
    /// Loads and stores the nest makes.
    pub accesses: u64,
    /// Innermost iterations (each makes `slots.len()` accesses).
    pub iterations: u64,
    /// Points of the outer loops visited (the innermost loop's runs).
    pub inner_runs: u64,
    /// The longest innermost run (iterations).
    pub longest_inner_run: u64,
}

/// Trip count of `lo..hi step step` (`step` > 0).
pub(crate) fn trips(lo: i128, hi: i128, step: i64) -> u64 {
    if hi <= lo {
        return 0;
    }
    // A 64-bit division where the span fits (every nest an executor can run): the walk
    // computes this once per run, and a 128-bit division costs as much as a short run.
    match (u64::try_from(hi - lo), u64::try_from(step)) {
        (Ok(span), Ok(1)) => span,
        (Ok(span), Ok(step)) if step > 0 => span.div_ceil(step),
        _ => {
            let step = i128::from(step);
            u64::try_from((hi - lo + step - 1) / step).unwrap_or(u64::MAX)
        }
    }
}

/// A loop index value as the 64-bit integer it must be.
pub(crate) fn index_value(value: i128, var: &str) -> Result<i64, LoopError> {
    i64::try_from(value).map_err(|_| LoopError::Overflow(format!("loop index {var} = {value}")))
}

/// Counts `nest`'s accesses and checks every index, refusing more than `limit` accesses or
/// outer-loop points.
pub fn check(nest: &LoopNest, limit: u64) -> Result<NestFacts, LoopError> {
    let mut state = Walker {
        nest,
        limit,
        values: vec![0; nest.loops.len()],
        facts: NestFacts {
            accesses: 0,
            iterations: 0,
            inner_runs: 0,
            longest_inner_run: 0,
        },
    };
    state.level(0)?;
    Ok(state.facts)
}

struct Walker<'a> {
    nest: &'a LoopNest,
    limit: u64,
    values: Vec<i64>,
    facts: NestFacts,
}

impl Walker<'_> {
    fn level(&mut self, k: usize) -> Result<(), LoopError> {
        let l = &self.nest.loops[k];
        let lo = l.lower.at(&self.values[..k]);
        let hi = l.upper.at(&self.values[..k]);
        let count = trips(lo, hi, l.step);
        if k + 1 == self.nest.loops.len() {
            return self.innermost(lo, count);
        }
        for t in 0..count {
            self.facts.inner_runs += 1;
            if self.facts.inner_runs > self.limit {
                return Err(LoopError::TooManyIterations { limit: self.limit });
            }
            self.values[k] = index_value(lo + i128::from(t) * i128::from(l.step), &l.var)?;
            self.level(k + 1)?;
        }
        Ok(())
    }

    fn innermost(&mut self, lo: i128, count: u64) -> Result<(), LoopError> {
        if count == 0 {
            return Ok(());
        }
        let k = self.nest.loops.len() - 1;
        let l = &self.nest.loops[k];
        let last = lo + i128::from(count - 1) * i128::from(l.step);
        let facts = &mut self.facts;
        facts.iterations = facts.iterations.saturating_add(count);
        facts.longest_inner_run = facts.longest_inner_run.max(count);
        facts.accesses = facts
            .iterations
            .saturating_mul(self.nest.slots.len() as u64);
        if facts.accesses > self.limit {
            return Err(LoopError::TooManyAccesses {
                counted: facts.accesses,
                limit: self.limit,
            });
        }
        for end in [lo, last] {
            self.values[k] = index_value(end, &l.var)?;
            self.check_references()?;
        }
        Ok(())
    }

    /// Every reference's indices at the current point, in bounds or the error naming it.
    fn check_references(&self) -> Result<(), LoopError> {
        for reference in &self.nest.references {
            let array = &self.nest.arrays[reference.array];
            let at: Vec<i128> = reference
                .indices
                .iter()
                .map(|index| index.at(&self.values))
                .collect();
            let inside = at
                .iter()
                .zip(&array.shape)
                .all(|(&v, &n)| v >= 0 && v < n as i128);
            if !inside {
                let point = self
                    .nest
                    .loops
                    .iter()
                    .zip(&self.values)
                    .map(|(l, v)| format!("{} = {v}", l.var))
                    .collect::<Vec<_>>()
                    .join(", ");
                let reached = at
                    .iter()
                    .map(i128::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(LoopError::OutOfBounds(Box::new(OutOfBounds {
                    statement: reference.statement + 1,
                    statement_text: self.nest.statements[reference.statement].text.clone(),
                    reference: reference.text.clone(),
                    point,
                    reached: format!("{}[{reached}]", array.name),
                    array: array.name.clone(),
                    shape: array.shape.clone(),
                })));
            }
        }
        Ok(())
    }
}
