//! Byte sizes and counts as people write them: the one parser of `SIZE` text (`48K`, `2MiB`,
//! `1G`, binary multiples: K = 1024) and the byte formatters every message, table and chart
//! uses. Ground floor: it imports nothing from the rest of the crate.

#![forbid(unsafe_code)]

use thiserror::Error;

/// Why a size or count could not be read.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SizeError {
    #[error("`{text}` is not a size (a whole number with an optional K, M or G suffix)")]
    NotANumber { text: String },
    #[error("`{text}` is more than 2^64 - 1")]
    TooLarge { text: String },
}

/// A byte size: a whole number with an optional binary multiple `K`, `M` or `G`
/// (case-insensitive) and an optional byte unit `B` or `iB` (`48K`, `48KiB`, `48 KB`, `2M`,
/// `64B`, `1g`). Sysfs writes `32K`; people write `32KiB` or `32 KiB`, so both are read.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    parse(text, true)
}

/// A count: a whole number with an optional binary multiple `K`, `M` or `G` (`4K` = 4096) and
/// no byte unit, since a count of elements or repetitions is not a size (`1KB` is refused).
pub fn parse_count(text: &str) -> Result<u64, SizeError> {
    parse(text, false)
}

/// The one parser behind [`parse_size`] and [`parse_count`]; checked arithmetic throughout.
fn parse(text: &str, bytes: bool) -> Result<u64, SizeError> {
    let not_a_number = || SizeError::NotANumber {
        text: text.to_string(),
    };
    let trimmed = text.trim();
    let body = if bytes {
        trimmed
            .strip_suffix("iB")
            .or_else(|| trimmed.strip_suffix('B'))
            .unwrap_or(trimmed)
    } else {
        trimmed
    };
    let (digits, shift) = match body.char_indices().last() {
        Some((at, 'k' | 'K')) => (&body[..at], 10),
        Some((at, 'm' | 'M')) => (&body[..at], 20),
        Some((at, 'g' | 'G')) => (&body[..at], 30),
        _ => (body, 0),
    };
    // Sizes have always been read with a space before the unit (`48 KiB`) and a leading `+`,
    // as Rust's integer parser allows; counts never were.
    let digits = if bytes {
        let digits = digits.trim_end();
        digits.strip_prefix('+').unwrap_or(digits)
    } else {
        digits
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_a_number());
    }
    let too_large = || SizeError::TooLarge {
        text: text.to_string(),
    };
    digits
        .parse::<u64>()
        .map_err(|_| too_large())?
        .checked_mul(1 << shift)
        .ok_or_else(too_large)
}

const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// `bytes` in the largest binary unit it reaches: (value, unit).
fn scaled(bytes: f64) -> (f64, &'static str) {
    let mut value = bytes;
    let mut unit = 0;
    while value.abs() >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    (value, UNITS[unit])
}

/// The byte formatter: `4 KiB`, `1.5 MiB`, `64 B`, `4.0 KiB` (4104 B: a value that is not a whole
/// number of its unit keeps one decimal, so it is not mistaken for one); `—` when not finite.
pub fn format_bytes(bytes: f64) -> String {
    if !bytes.is_finite() {
        return "—".into();
    }
    let (value, unit) = scaled(bytes);
    if (value - value.round()).abs() < 1e-9 {
        format!("{} {unit}", value.round() as i64)
    } else {
        format!("{value:.1} {unit}")
    }
}

/// Estimates and limits: always one decimal above bytes (`1.0 GiB`, `4.2 KiB`, `100 B`), so a
/// limit and the estimate it refuses read alike.
pub fn format_bytes_tenths(bytes: u64) -> String {
    let (value, unit) = scaled(bytes as f64);
    if unit == UNITS[0] {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {unit}")
    }
}

/// Exact sizes (cache geometries): the largest unit that divides evenly (`48 KiB`, `1280 KiB`,
/// `480 MiB`, `100 B`), so the text reads back to the same number.
pub fn format_size_exact(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_multiples_byte_units_and_spaces() {
        for (text, bytes) in [
            ("0", 0),
            ("64", 64),
            ("32K", 32 << 10),
            ("32k", 32 << 10),
            ("32768K", 32768 << 10),
            ("2M", 2 << 20),
            ("1g", 1 << 30),
            ("48KiB", 48 << 10),
            ("48KB", 48 << 10),
            ("48 KiB", 48 << 10),
            (" 1G ", 1 << 30),
            ("64B", 64),
            ("64 B", 64),
            ("+2M", 2 << 20),
            ("17179869183G", 17_179_869_183 << 30),
            ("18446744073709551615", u64::MAX),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text:?}");
        }
    }

    #[test]
    fn malformed_or_overflowing_sizes_are_typed_errors() {
        for text in [
            "", "K", "B", "KiB", "-1", "1.5M", "1T", "x", "1 2K", "4Ki", "++1",
        ] {
            assert!(
                matches!(parse_size(text), Err(SizeError::NotANumber { .. })),
                "{text:?}"
            );
        }
        for text in [
            "18446744073709551616",
            "99999999999999999999G",
            "17179869184G",
        ] {
            assert!(
                matches!(parse_size(text), Err(SizeError::TooLarge { .. })),
                "{text:?}"
            );
        }
        let message = parse_size("1.5M").unwrap_err().to_string();
        assert!(
            message.contains("`1.5M`") && message.contains("K, M or G"),
            "{message}"
        );
    }

    #[test]
    fn counts_take_multiples_but_no_byte_unit_sign_or_space() {
        assert_eq!(parse_count("12"), Ok(12));
        assert_eq!(parse_count("4k"), Ok(4096));
        assert_eq!(parse_count("1G"), Ok(1 << 30));
        for bad in [
            "",
            "K",
            "-1",
            "+1",
            "1.5",
            "1KB",
            "1 K",
            "99999999999999999999G",
        ] {
            assert!(parse_count(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn byte_formatters_keep_their_styles() {
        for (bytes, text) in [
            (8.0, "8 B"),
            (4096.0, "4 KiB"),
            (4104.0, "4.0 KiB"),
            (1.5 * 1048576.0, "1.5 MiB"),
            (32.0 * 1024.0 * 1024.0, "32 MiB"),
            (f64::NAN, "—"),
        ] {
            assert_eq!(format_bytes(bytes), text, "{bytes}");
        }
        assert_eq!(format_bytes_tenths(1 << 30), "1.0 GiB");
        assert_eq!(format_bytes_tenths(3 << 29), "1.5 GiB");
        assert_eq!(format_bytes_tenths(100), "100 B");
        assert_eq!(format_size_exact(48 << 10), "48 KiB");
        assert_eq!(format_size_exact(1280 << 10), "1280 KiB");
        assert_eq!(format_size_exact(100), "100 B");
    }
}
