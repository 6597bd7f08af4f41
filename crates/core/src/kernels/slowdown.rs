//! The injected slowdown: a build of the lab whose `row-sum` kernel does a known fraction of
//! extra work, the regression the gate's calibration must catch (`scripts/gate-calibrate.sh`).
//!
//! `STRIDELAB_INJECT_SLOWDOWN=row-sum:P` (P in 1..=100) set when the crate is **built** makes
//! every row-sum run re-read P% of its elements, rounded to whole groups of 8
//! ([`extra_elements`]): after its own pass, whole rows from the first, summed by the kernel's
//! own loop into its own accumulators. Real loads and adds, not a sleep, so the gate sees the
//! kind of change a worse loop would make. Cargo rebuilds the crate when the variable changes.
//! A malformed value fails the build.
//!
//! The same variable set when the binary **runs** has the same effect in a build without one
//! (the gate's integration tests use this: building a second binary would take minutes). The
//! regression gate never passes it to the base build's processes, and records it in its
//! results (`info.gate.injected_slowdown`), so a slowed run cannot pass for a real one.

#![forbid(unsafe_code)]

use super::element::ACCUMULATORS;
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

/// How many elements a slowed `rows`×`cols` row-sum reads a second time: P% of the matrix,
/// rounded to whole groups of [`ACCUMULATORS`] elements (at least one, at most the matrix), so
/// the re-reads run at the kernel's own speed per element — a ragged tail takes the kernel's
/// slower scalar path. Computed once, when the kernel is prepared. Earlier placements cost far
/// more than their share: 3-element runs after every row (+42% on the gate's 32×64 row-sum at
/// 5%), a division per row in the timed loop (+36% at 3%), and a second pass with its own
/// accumulators, fold and ragged tail (+5.7% at 3%).
pub fn extra_elements(rows: usize, cols: usize, percent: u32) -> usize {
    let total = rows.saturating_mul(cols);
    let exact = (total.saturating_mul(percent as usize) + 50) / 100;
    let groups = (exact + ACCUMULATORS / 2) / ACCUMULATORS;
    (groups.max(1) * ACCUMULATORS).min(total)
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
    fn extra_elements_are_the_percentage_of_the_matrix_in_whole_accumulator_groups() {
        for (rows, cols, percent, expected) in [
            (32, 64, 2, 40),
            (32, 64, 3, 64),
            (32, 64, 5, 104),
            (32, 64, 10, 208),
            (32, 64, 100, 2048),
            (7, 3, 1, 8),
            (1, 5, 100, 5),
        ] {
            assert_eq!(extra_elements(rows, cols, percent), expected);
        }
    }
}
