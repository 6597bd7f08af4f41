//! Geometry sweeps as suite data: a `[[point]]` with a `sweep` table walks strides derived from
//! a data-cache level of the geometry the run simulates, resolved when the plan is built. The
//! host's geometry is not known when the suite is written (64 or 2048 sets, 8 or 12 ways), so
//! the strides and slot counts are written as rules, not numbers:
//!
//! ```toml
//! [[point]]
//! kernel = "conflict"
//! params = { mode = "lat", reps = 16 }
//! sweep = { level = "L1d", ways = [2, 4], limit = 256, tail = 6, timed = 4 }
//! ```
//!
//! For a level of `sets` sets of `line` B (span = sets × line):
//! - strides: every multiple of the line from 1 line to 2 × span (2 × sets strides), then
//!   `tail` log-spaced whole-line strides from 2 × span up to 64 × span; past `limit` dense
//!   strides, each gcd class (strides whose largest power-of-two divisor is 2^j) keeps its
//!   first strides, so every gcd still has points;
//! - slot counts: `ways` lists multiples of the level's ways (K = 2 × ways fits when the
//!   walk uses all sets and overflows when it uses one);
//! - `timed`: every `timed`-th stride is timed as well as simulated (0: none, 1: all): in the
//!   dense part the multiples of `timed` lines, so the conflicting strides (multiples of a
//!   large power of two) are timed along with harmless ones. The rest are simulated only,
//!   which costs K × reps loads of the model and no sampling.
//! - `preset`: derive the sweep from a named preset's level and simulate its points on that
//!   preset's data levels instead of the run's, so a report shows another machine's picture
//!   beside this one's. Such a sweep is simulated only (`timed` must be 0): this machine's
//!   clock says nothing about another machine's cache.

use serde::Deserialize;
use thiserror::Error;

use crate::cache::geometry::{CacheLevel, Geometry, GeometryError};
use crate::results::SweepInfo;

/// Bytes per element of the strided parameter (the conflict kernel's stride is in f64s).
const ELEMENT_BYTES: u64 = 8;

/// The tail reaches this many spans.
const TAIL_SPANS: u64 = 64;

/// Most strides one sweep may expand to (dense part and tail), whatever the geometry says.
pub const MAX_SWEEP_STRIDES: usize = 8192;

/// A `sweep` table as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// The level's name in the geometry (`L1d`, `L2`, ...).
    pub level: String,
    /// Slot counts as multiples of the level's ways.
    pub ways: Vec<u64>,
    /// Most dense strides kept (default: all of them, up to [`MAX_SWEEP_STRIDES`]).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Log-spaced strides beyond 2 × span.
    #[serde(default)]
    pub tail: usize,
    /// Every `timed`-th stride is timed (0: none).
    #[serde(default)]
    pub timed: usize,
    /// Sweep this preset's level and simulate on its data levels (simulated only).
    #[serde(default)]
    pub preset: Option<String>,
}

/// Why a `sweep` table cannot be expanded.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SweepError {
    #[error(
        "a sweep on the `{0}` preset is simulated only: set `timed = 0` (this machine's clock \
         says nothing about another machine's cache)"
    )]
    TimedOnPreset(String),
    #[error(transparent)]
    Preset(#[from] GeometryError),
    #[error("sweep limit must be at least 1")]
    ZeroLimit,
    #[error("sweep tail {0} is more than 64 strides")]
    Tail(usize),
    #[error("sweep level `{level}` is not a data-cache level of this geometry ({names})")]
    NoSuchLevel { level: String, names: String },
    #[error("sweep ways must list multiples of the ways in 1..=64")]
    Ways,
    #[error("the {level}'s line ({line} B) is not a whole number of elements")]
    Line { level: String, line: u64 },
}

/// The data levels a sweep's points are simulated on: the preset's when it names one, else
/// `None` (the run's own levels).
pub fn preset_levels(spec: &SweepSpec) -> Result<Option<Vec<CacheLevel>>, SweepError> {
    let Some(name) = &spec.preset else {
        return Ok(None);
    };
    if spec.timed != 0 {
        return Err(SweepError::TimedOnPreset(name.clone()));
    }
    Ok(Some(Geometry::preset(name)?.data_levels()))
}

/// One expanded sweep point: parameter words and its tag for the record.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    pub stride_elements: u64,
    pub count: u64,
    pub info: SweepInfo,
}

/// Strides in lines of the sweep of `level`: the dense part (thinned to `limit`), then the
/// tail. Errors name what is wrong with the spec.
pub fn stride_lines(spec: &SweepSpec, level: &CacheLevel) -> Result<Vec<u64>, SweepError> {
    let sets = u64::from(level.sets);
    let dense_len = sets.saturating_mul(2);
    let limit = spec
        .limit
        .unwrap_or(MAX_SWEEP_STRIDES)
        .min(MAX_SWEEP_STRIDES);
    if limit == 0 {
        return Err(SweepError::ZeroLimit);
    }
    if spec.tail > 64 {
        return Err(SweepError::Tail(spec.tail));
    }
    let mut lines: Vec<u64> = if dense_len <= limit as u64 {
        (1..=dense_len).collect()
    } else {
        thinned(dense_len, limit)
    };
    // Log-spaced: 2·sets · 32^(i/tail) lines, i = 1..=tail, rounded to whole lines.
    let ratio = (TAIL_SPANS as f64 / 2.0).powf(1.0 / spec.tail.max(1) as f64);
    for i in 1..=spec.tail {
        let s = (dense_len as f64 * ratio.powi(i as i32)).round() as u64;
        if lines.last().is_none_or(|&last| s > last) {
            lines.push(s);
        }
    }
    Ok(lines)
}

/// At most `limit` of the strides 1..=n lines, spread over the gcd classes: the class of 2^j
/// holds m · 2^j for odd m; each class keeps its first strides, round-robin until `limit`.
fn thinned(n: u64, limit: usize) -> Vec<u64> {
    let classes = 64 - n.leading_zeros() as u64; // 2^j ≤ n for j < classes
    let mut next_odd: Vec<u64> = vec![1; classes as usize];
    let mut out = Vec::with_capacity(limit);
    while out.len() < limit {
        let before = out.len();
        for (j, m) in next_odd.iter_mut().enumerate() {
            let s = *m << j;
            if s <= n && out.len() < limit {
                out.push(s);
                *m += 2;
            }
        }
        if out.len() == before {
            break;
        }
    }
    out.sort_unstable();
    out
}

/// Every point of the sweep on `levels` (the preset's, for a sweep that names one: see
/// [`preset_levels`]), strides outermost, in slot-count order.
pub fn expand(spec: &SweepSpec, levels: &[CacheLevel]) -> Result<Vec<SweepPoint>, SweepError> {
    let level = levels
        .iter()
        .find(|l| l.name == spec.level)
        .ok_or_else(|| SweepError::NoSuchLevel {
            level: spec.level.clone(),
            names: levels
                .iter()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    if spec.ways.is_empty() || spec.ways.iter().any(|&w| w == 0 || w > 64) {
        return Err(SweepError::Ways);
    }
    let line = u64::from(level.line);
    if line % ELEMENT_BYTES != 0 {
        return Err(SweepError::Line {
            level: level.name.clone(),
            line,
        });
    }
    let mut points = Vec::new();
    for (i, lines) in stride_lines(spec, level)?.into_iter().enumerate() {
        let timed = spec.timed > 0 && (i + 1) % spec.timed == 0;
        for &multiple in &spec.ways {
            points.push(SweepPoint {
                stride_elements: lines * line / ELEMENT_BYTES,
                count: multiple * u64::from(level.ways),
                info: SweepInfo {
                    level: level.name.clone(),
                    timed,
                    preset: spec.preset.clone(),
                },
            });
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::geometry::{CacheKind, GeometrySource};
    use crate::cache::model::gcd;

    fn level(name: &str, size: u64, ways: u64) -> CacheLevel {
        CacheLevel::new(
            name,
            CacheKind::Data,
            size,
            ways,
            64,
            GeometrySource::Override,
        )
        .unwrap()
    }

    fn spec(level: &str, limit: Option<usize>, tail: usize, timed: usize) -> SweepSpec {
        SweepSpec {
            level: level.into(),
            ways: vec![2, 4],
            limit,
            tail,
            timed,
            preset: None,
        }
    }

    #[test]
    fn sweeps_expand_against_the_geometry() {
        // (level, dense strides expected, limit, tail)
        let cases = [
            (level("L1d", 48 << 10, 12), 128, None, 6), // Intel: 64 sets
            (level("L1d", 32 << 10, 8), 128, None, 6),  // AMD: 64 sets
            (level("L2", 1 << 20, 16), 256, Some(256), 4), // 1024 sets, thinned
        ];
        for (l, dense, limit, tail) in cases {
            let lines = stride_lines(&spec(&l.name, limit, tail, 4), &l).unwrap();
            assert_eq!(lines.len(), dense + tail, "{}", l.name);
            let span = 2 * u64::from(l.sets);
            assert!(lines.windows(2).all(|w| w[0] < w[1]));
            assert!(lines[dense - 1] <= span);
            assert!(lines[dense..].iter().all(|&s| s > span && s <= 32 * span));
            if limit.is_none() {
                assert_eq!(&lines[..dense], &(1..=span).collect::<Vec<_>>()[..]);
            }
            // Every gcd with the sets, 1 .. sets, has a stride.
            for j in 0..=u64::from(l.sets).trailing_zeros() {
                let g = 1u64 << j;
                assert!(lines.iter().any(|&s| gcd(s, u64::from(l.sets)) == g), "{g}");
            }
        }
    }

    #[test]
    fn points_carry_slot_counts_and_the_timed_subset() {
        let l = level("L1d", 48 << 10, 12);
        let points = expand(&spec("L1d", None, 6, 4), std::slice::from_ref(&l)).unwrap();
        assert_eq!(points.len(), 2 * 134);
        assert_eq!(points[0].stride_elements, 8);
        assert_eq!((points[0].count, points[1].count), (24, 48));
        let timed = points.iter().filter(|p| p.info.timed).count();
        assert_eq!(timed, 2 * (134 / 4));
        // Stride 64 lines (4096 B, one set) is among the timed ones.
        assert!(
            points
                .iter()
                .any(|p| p.info.timed && p.stride_elements == 512)
        );
        assert!(timed >= 64);
        let err = expand(&spec("L9", None, 0, 0), &[l])
            .unwrap_err()
            .to_string();
        assert!(err.contains("L9") && err.contains("L1d"), "{err}");
    }
}
