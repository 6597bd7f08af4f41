//! Byte sizes, counts, times and ratios as people read them: the one parser of `SIZE` text
//! (`48K`, `2MiB`, `1G`, binary multiples: K = 1024) and the formatters every message, table and
//! chart uses. Ground floor: it imports nothing from the rest of the crate.
//!
//! Conventions: sizes use binary units (KiB = 1,024 B), as the parser reads K; counts print
//! exactly, grouped by thousands with commas (`33,620,032`); times pick ns, µs, ms or s and keep
//! three significant digits; a ratio of times reads as "N× slower" or "N× faster".

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
    let (value, unit) = exact_parts(bytes);
    format!("{value} {unit}")
}

/// Exact sizes in tables and labels: as [`format_size_exact`], with the number grouped
/// (`4 KiB`, `4,104 B`, `1,280 KiB`): 4088, 4096 and 4104 bytes must not all read "4.0 KiB".
pub fn format_bytes_exact(bytes: u64) -> String {
    let (value, unit) = exact_parts(bytes);
    format!("{} {unit}", format_count(value))
}

/// `bytes` in the largest binary unit that divides it evenly: (value, unit).
fn exact_parts(bytes: u64) -> (u64, &'static str) {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return (bytes >> shift, unit);
        }
    }
    (bytes, "B")
}

/// A count, exact and grouped by thousands with commas (`33,620,032`, `512`): every digit of a
/// miss count matters, and grouping lets the eye compare magnitudes down a column.
pub fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// A count as `layout` prints it: grouped as [`format_count`] from five digits on (`65,536`),
/// whole below (`8192`), where a four-digit number reads at a glance.
pub fn format_count_from_five_digits(n: u64) -> String {
    if n < 10_000 {
        n.to_string()
    } else {
        format_count(n)
    }
}

/// A byte distance in lines of `line` bytes: whole (`32`), or with up to three decimals of a
/// line (`0.125`, `64.125`).
pub fn format_in_lines(bytes: i64, line: u64) -> String {
    let line = line as i64;
    if bytes % line == 0 {
        (bytes / line).to_string()
    } else {
        let text = format!("{:.3}", bytes as f64 / line as f64);
        text.trim_end_matches('0').to_string()
    }
}

/// `part` of `whole` as a percentage with one decimal (`12.5%`); `-` of nothing.
pub fn format_share(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".to_string()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

/// A signed count as [`format_count`] writes it (`-32,768`): strides run backwards too.
pub fn format_count_signed(n: i64) -> String {
    let grouped = format_count(n.unsigned_abs());
    if n < 0 {
        format!("-{grouped}")
    } else {
        grouped
    }
}

/// `value` with three significant digits and no exponent (`0.632`, `3.33`, `15.5`, `556`,
/// `1234`): as precise as a timing with a CI of a few percent, and no more.
pub fn format_significant(value: f64) -> String {
    if !value.is_finite() {
        return "—".into();
    }
    // Digits before the point: 1 below 10, 2 below 100; more decimals below 1.
    let decimals = |magnitude: f64| {
        if magnitude == 0.0 || magnitude >= 100.0 {
            0
        } else {
            (2 - magnitude.log10().floor() as i32).max(0) as usize
        }
    };
    let first = decimals(value.abs());
    // Rounding can carry into a new digit (9.996 → "10.00"): count again from the rounded value.
    let rounded: f64 = format!("{value:.first$}").parse().unwrap_or(value);
    let places = decimals(rounded.abs()).min(first);
    format!("{value:.places$}")
}

const TIME_UNITS: [(f64, &str); 4] = [(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")];

/// A duration given in nanoseconds, in the largest of s, ms, µs and ns it reaches, with three
/// significant digits (`858 ns`, `1.01 µs`, `556 µs`, `2.50 s`, `0.632 ns`); `—` when not finite.
pub fn format_duration_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "—".into();
    }
    let (scale, unit) = TIME_UNITS
        .iter()
        .copied()
        .find(|(scale, _)| ns.abs() >= *scale)
        .unwrap_or((1.0, "ns"));
    let value = ns / scale;
    // 999.7 µs rounds to "1000 µs": the next unit up reads better.
    if value.abs() >= 999.5 && scale < 1e9 {
        return format_duration_ns(scale * 1000.0 * value.signum());
    }
    format!("{} {unit}", format_significant(value))
}

/// A wall-clock span of seconds as people say it: whole seconds below a minute (`48 s`), then
/// minutes and seconds (`5 min 34 s`), then hours and minutes (`1 h 02 min`); `—` when not finite
/// or negative.
pub fn format_wall_seconds(seconds: f64) -> String {
    if !(seconds.is_finite() && seconds >= 0.0) {
        return "—".into();
    }
    let whole = seconds.round() as u64;
    match whole {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min {} s", s / 60, s % 60),
        s => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// A factor with three significant digits and the times sign (`3.58×`, `12.5×`, `128×`).
pub fn format_factor(factor: f64) -> String {
    format!("{}×", format_significant(factor))
}

/// A ratio of two times, `time / baseline`, as words that cannot be read backwards:
/// `3.58× slower` (took 3.58 times as long), `1.18× faster` (took 1/1.18 of the time), `1.00×`
/// (the same to three digits); `—` when either time is missing or not positive.
pub fn format_time_ratio(time_over_baseline: f64) -> String {
    let r = time_over_baseline;
    if !(r.is_finite() && r > 0.0) {
        return "—".into();
    }
    let slower = format_factor(r);
    let faster = format_factor(1.0 / r);
    if slower == "1.00×" || faster == "1.00×" {
        "1.00×".into()
    } else if r > 1.0 {
        format!("{slower} slower")
    } else {
        format!("{faster} faster")
    }
}

/// A UTC time stamp: `2026-11-22 10:34:23 UTC` (human) or `20261122T103423Z` (for directory
/// names, sortable). A time the calendar cannot hold (a hostile document's) reads as seconds.
pub fn utc_stamp(unix_s: u64, human: bool) -> String {
    let Some(t) = i64::try_from(unix_s)
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
    else {
        return if human {
            format!("{unix_s} s after 1970 UTC")
        } else {
            format!("unix{unix_s}")
        };
    };
    let (year, month, day) = (t.year(), u8::from(t.month()), t.day());
    let (h, m, s) = (t.hour(), t.minute(), t.second());
    if human {
        format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02} UTC")
    } else {
        format!("{year:04}{month:02}{day:02}T{h:02}{m:02}{s:02}Z")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_counts_lines_and_shares() {
        for (n, text) in [
            (0, "0"),
            (8192, "8192"),
            (65536, "65,536"),
            (1048576, "1,048,576"),
            (123456789, "123,456,789"),
        ] {
            assert_eq!(format_count_from_five_digits(n), text);
        }
        for (bytes, text) in [(2048, "32"), (8, "0.125"), (4104, "64.125"), (96, "1.5")] {
            assert_eq!(format_in_lines(bytes, 64), text);
        }
        assert_eq!(format_share(1, 0), "-");
        assert_eq!(format_share(1, 8), "12.5%");
    }

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

    #[test]
    fn exact_bytes_tell_4088_4096_and_4104_apart() {
        for (bytes, text) in [
            (0, "0 B"),
            (8, "8 B"),
            (4088, "4,088 B"),
            (4096, "4 KiB"),
            (4104, "4,104 B"),
            (1280 << 10, "1,280 KiB"),
            (8 << 20, "8 MiB"),
            (3 << 30, "3 GiB"),
            (8_000_000, "8,000,000 B"),
        ] {
            assert_eq!(format_bytes_exact(bytes), text, "{bytes}");
        }
    }

    #[test]
    fn counts_are_grouped_by_thousands() {
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1_000, "1,000"),
            (131_072, "131,072"),
            (33_620_032, "33,620,032"),
            (u64::MAX, "18,446,744,073,709,551,615"),
        ] {
            assert_eq!(format_count(n), text, "{n}");
        }
        assert_eq!(format_count_signed(-32_768), "-32,768");
        assert_eq!(format_count_signed(i64::MIN), "-9,223,372,036,854,775,808");
    }

    #[test]
    fn times_scale_to_their_unit_with_three_significant_digits() {
        for (ns, text) in [
            (0.0, "0 ns"),
            (0.6324, "0.632 ns"),
            (3.3301, "3.33 ns"),
            (858.0, "858 ns"),
            (999.7, "1.00 µs"),
            (1011.0, "1.01 µs"),
            (556_298.0, "556 µs"),
            (999_960.0, "1.00 ms"),
            (1_738_772.0, "1.74 ms"),
            (2.5e9, "2.50 s"),
            (4.2e12, "4200 s"),
            (f64::NAN, "—"),
        ] {
            assert_eq!(format_duration_ns(ns), text, "{ns}");
        }
        assert_eq!(format_significant(99.96), "100");
        assert_eq!(format_significant(9.996), "10.0");
        assert_eq!(format_significant(-0.5), "-0.500");
    }

    #[test]
    fn wall_seconds_read_as_minutes_and_hours() {
        // (seconds, text)
        let cases = [
            (0.4, "0 s"),
            (47.6, "48 s"),
            (59.4, "59 s"),
            (60.0, "1 min 0 s"),
            (334.0, "5 min 34 s"),
            (3599.4, "59 min 59 s"),
            (3720.0, "1 h 02 min"),
            (f64::NAN, "—"),
            (-1.0, "—"),
        ];
        for (seconds, text) in cases {
            assert_eq!(format_wall_seconds(seconds), text, "{seconds}");
        }
    }

    #[test]
    fn time_ratios_name_their_direction() {
        for (ratio, text) in [
            (3.58, "3.58× slower"),
            (1.0 / 1.18, "1.18× faster"),
            (1.004, "1.00×"),
            (0.996, "1.00×"),
            (7.727, "7.73× slower"),
            (15.66, "15.7× slower"),
            (0.0, "—"),
            (f64::INFINITY, "—"),
        ] {
            assert_eq!(format_time_ratio(ratio), text, "{ratio}");
        }
        assert_eq!(format_factor(128.4), "128×");
    }
}
