//! Pieces the subcommands share: the Ctrl-C stop flag and the percentage parser, kept here so
//! no subcommand file imports another.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The process-wide stop flag set by Ctrl-C (see `harness::stop`).
pub fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    Ok(crate::harness::stop::stop_flag()?)
}

/// `10%` → 0.10; a bare number is a fraction (`0.1`) and must lie in 0..=1.
/// A count for an option (`--max-accesses 1G`): K, M and G are binary multiples, as in kernel
/// parameters and sizes.
pub fn parse_count_arg(text: &str) -> Result<u64, String> {
    crate::units::parse_count(text).map_err(|e| e.to_string())
}

pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let (number, scale) = match text.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (text, 1.0),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a number or a percentage like 10%"))?;
    let fraction = value * scale;
    if !fraction.is_finite() || fraction < 0.0 {
        return Err(format!("`{text}` must be a non-negative amount"));
    }
    if scale == 1.0 && fraction > 1.0 {
        return Err(format!(
            "`{text}` is a fraction above 1; write a percentage like {text}%"
        ));
    }
    Ok(fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_and_percentages() {
        let cases: &[(&str, Result<f64, ()>)] = &[
            ("10%", Ok(0.10)),
            ("0.1", Ok(0.1)),
            ("0", Ok(0.0)),
            (" 2.5% ", Ok(0.025)),
            ("10", Err(())),
            ("-5%", Err(())),
            ("ten", Err(())),
        ];
        for (text, expected) in cases {
            match (parse_fraction(text), expected) {
                (Ok(v), Ok(e)) => assert!((v - e).abs() < 1e-12, "{text}: {v}"),
                (Err(_), Err(())) => {}
                (got, _) => panic!("{text}: {got:?}"),
            }
        }
    }
}
