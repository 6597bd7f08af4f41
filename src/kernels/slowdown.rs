//! The injected slowdown: a build of the lab whose `row-sum` kernel does a known fraction of
//! extra work, the regression the gate's calibration must catch (`scripts/gate-calibrate.sh`).
//!
//! `STRIDELAB_INJECT_SLOWDOWN=row-sum:P` (P in 1..=100) set when the crate is **built** makes
//! every row-sum run re-read P% of its elements (whole rows spread over the matrix, into an
//! accumulator that is discarded, so the checksum is unchanged) — real loads and adds in the
//! kernel's loop, not a sleep, so the gate sees the same kind of change a worse loop would make. Cargo rebuilds
//! the crate when the variable changes. A malformed value fails the build.
//!
//! The same variable set when the binary **runs** has the same effect in a build without one
//! (the gate's integration tests use this: building a second binary would take minutes). The
//! regression gate never passes it to the base build's processes, and records it in its
//! results (`info.gate.injected_slowdown`), so a slowed run cannot pass for a real one.

#![forbid(unsafe_code)]

use super::spec::KernelError;

/// The variable read at build time and, in a build without it, at run time.
pub const SLOWDOWN_VAR: &str = "STRIDELAB_INJECT_SLOWDOWN";

/// The only kernel a slowdown can be injected into (one gated kernel is what calibration
/// needs).
pub const SLOWED_KERNEL: &str = "row-sum";

/// The percentage compiled in, if any; a malformed value stops the build here.
const BUILT_IN_PERCENT: Option<u32> = match option_env!("STRIDELAB_INJECT_SLOWDOWN") {
    Some(spec) => match parse(spec.as_bytes()) {
        Some(percent) => Some(percent),
        None => panic!("STRIDELAB_INJECT_SLOWDOWN must be `row-sum:P` with P in 1..=100"),
    },
    None => None,
};

/// `row-sum:P` → P when P lies in 1..=100 (a `const fn`, so the build can check it).
const fn parse(spec: &[u8]) -> Option<u32> {
    let prefix = b"row-sum:";
    if spec.len() <= prefix.len() || spec.len() > prefix.len() + 3 {
        return None;
    }
    let mut i = 0;
    while i < prefix.len() {
        if spec[i] != prefix[i] {
            return None;
        }
        i += 1;
    }
    let mut percent = 0u32;
    while i < spec.len() {
        if !spec[i].is_ascii_digit() {
            return None;
        }
        percent = percent * 10 + (spec[i] - b'0') as u32;
        i += 1;
    }
    if percent >= 1 && percent <= 100 {
        Some(percent)
    } else {
        None
    }
}

/// Where an injected slowdown came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowdownSource {
    /// Compiled in (`STRIDELAB_INJECT_SLOWDOWN` at build time).
    Build,
    /// Read when the binary ran.
    Environment,
}

/// An injected slowdown of `row-sum`: the percentage of its elements read a second time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slowdown {
    pub percent: u32,
    pub source: SlowdownSource,
}

impl Slowdown {
    /// `row-sum +5% (compiled in)`: how results and the gate name it.
    pub fn label(&self) -> String {
        let source = match self.source {
            SlowdownSource::Build => "compiled in",
            SlowdownSource::Environment => "from the environment",
        };
        format!("{SLOWED_KERNEL} +{}% ({source})", self.percent)
    }
}

/// The slowdown this process injects, if any: the compiled-in one, else the environment's.
pub fn injected() -> Result<Option<Slowdown>, KernelError> {
    if let Some(percent) = BUILT_IN_PERCENT {
        return Ok(Some(Slowdown {
            percent,
            source: SlowdownSource::Build,
        }));
    }
    match std::env::var(SLOWDOWN_VAR) {
        Err(_) => Ok(None),
        Ok(text) => match parse(text.as_bytes()) {
            Some(percent) => Ok(Some(Slowdown {
                percent,
                source: SlowdownSource::Environment,
            })),
            None => Err(KernelError::InvalidParam {
                param: SLOWDOWN_VAR.into(),
                message: format!("`{text}`: expected `row-sum:P` with P in 1..=100"),
            }),
        },
    }
}

/// How many elements of row `i` (of `rows`) are read a second time, so that the matrix
/// re-reads ⌊rows·cols·percent/100⌉ elements in all: whole rows, each at the row where the
/// running total passes another row's worth, and the remainder at the last row. Whole rows,
/// because a short re-read costs more per element than the kernel's own long runs: spread
/// evenly as 3-element runs per row, a 5% injection slowed the gate's 32×64 row-sum by 42%.
pub fn extra_elements(i: usize, rows: usize, cols: usize, percent: u32) -> usize {
    let owed = |row: usize| (row * cols * percent as usize + 50) / 100;
    let whole_rows = owed(i + 1) / cols - owed(i) / cols;
    let remainder = if i + 1 == rows { owed(rows) % cols } else { 0 };
    (whole_rows * cols + remainder).min(cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_row_sum_with_a_percentage_in_range_parses() {
        let cases: &[(&str, Option<u32>)] = &[
            ("row-sum:5", Some(5)),
            ("row-sum:100", Some(100)),
            ("row-sum:0", None),
            ("row-sum:101", None),
            ("row-sum:", None),
            ("row-sum:5%", None),
            ("col-sum:5", None),
            ("row-sum:1000", None),
            ("", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse(text.as_bytes()), *expected, "{text}");
        }
    }

    #[test]
    fn extra_elements_are_whole_rows_adding_up_to_the_percentage() {
        for (rows, cols, percent) in [
            (32, 64, 5),
            (32, 64, 2),
            (32, 64, 10),
            (7, 3, 33),
            (1, 10, 100),
        ] {
            let extra: Vec<usize> = (0..rows)
                .map(|i| extra_elements(i, rows, cols, percent))
                .collect();
            let expected = (rows * cols * percent as usize + 50) / 100;
            assert_eq!(
                extra.iter().sum::<usize>(),
                expected,
                "{rows}×{cols} at {percent}%"
            );
            // Whole rows except, at most, the last row's remainder.
            let partial = extra[..rows - 1].iter().filter(|&&e| e != 0 && e != cols);
            assert_eq!(partial.count(), 0, "{extra:?}");
        }
        // 5% of 32×64: one whole row (64) and 38 more at the end.
        let extra: Vec<usize> = (0..32).map(|i| extra_elements(i, 32, 64, 5)).collect();
        assert_eq!(extra.iter().filter(|&&e| e == 64).count(), 1);
        assert_eq!(extra[31], 38);
    }
}
