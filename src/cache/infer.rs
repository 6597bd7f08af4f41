//! Inferring cache geometry from timing alone (pure logic: no timing, no unsafe).
#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};

/// One measured point of a latency curve: `x` (bytes, slots or pages), the median ns/access.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub x: f64,
    pub ns: f64,
    /// Interquartile range of the samples relative to the median (0 = perfectly repeatable).
    pub spread: f64,
    pub samples: usize,
}

impl Point {
    pub fn from_samples(x: f64, samples: &[f64]) -> Self {
        let mut s: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        s.sort_by(f64::total_cmp);
        let q = |f: f64| if s.is_empty() { f64::NAN } else { s[((s.len() - 1) as f64 * f).round() as usize] };
        let median = q(0.5);
        let spread = if median > 0.0 { (q(0.75) - q(0.25)) / median } else { 0.0 };
        Self { x, ns: median, spread, samples: s.len() }
    }
}
