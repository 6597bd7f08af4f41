//! Pieces the subcommands share: the Ctrl-C stop flag and the percentage parser, kept here so
//! no subcommand file imports another.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;

/// The process-wide stop flag set by Ctrl-C (a handler can only be installed once).
pub fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    if let Some(flag) = FLAG.get() {
        return Ok(Arc::clone(flag));
    }
    let flag = Arc::new(AtomicBool::new(false));
    let in_handler = Arc::clone(&flag);
    ctrlc::set_handler(move || in_handler.store(true, Ordering::SeqCst))
        .context("cannot install the Ctrl-C handler")?;
    Ok(Arc::clone(FLAG.get_or_init(|| flag)))
}

/// `10%` → 0.10; a bare number is a fraction (`0.1`) and must lie in 0..=1.
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
