//! Which format a trace is in, told from its first data line (the first that is not blank, a
//! `#` comment or valgrind's `==pid==` banner): lackey's lines start with a kind letter `I`,
//! `L`, `S` or `M` and hold `ADDRESS,SIZE`; plain ones start with `R` or `W`; din ones with a
//! label digit. The three never look alike, so one line decides; a line that fits none is an
//! error that asks for `--trace-format`.

use super::TraceFormat;
use super::parse::is_valgrind_banner;

/// What `line` (no newline) says about the format: `Ok(None)` for a line that is no record
/// in any format (blank, comment, banner), `Err(())` for one that fits no format.
#[allow(clippy::result_unit_err)]
pub fn detect_format(line: &[u8]) -> Result<Option<TraceFormat>, ()> {
    let text = line.trim_ascii();
    if text.is_empty() || text[0] == b'#' || is_valgrind_banner(line) {
        return Ok(None);
    }
    let blank_after_kind = text.get(1).is_some_and(|&b| b == b' ' || b == b'\t');
    if !blank_after_kind {
        return Err(());
    }
    match text[0] {
        b'I' | b'L' | b'S' | b'M' if text.contains(&b',') => Ok(Some(TraceFormat::Lackey)),
        b'R' | b'r' | b'W' | b'w' => Ok(Some(TraceFormat::Plain)),
        b'0'..=b'4' => Ok(Some(TraceFormat::Din)),
        _ => Err(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_tells_the_format() {
        let cases: &[(&str, Result<Option<TraceFormat>, ()>)] = &[
            ("I  0400d7d4,8", Ok(Some(TraceFormat::Lackey))),
            (" L 04011cb8,4", Ok(Some(TraceFormat::Lackey))),
            (" M 0421b1a8,4", Ok(Some(TraceFormat::Lackey))),
            ("R 0x10 8", Ok(Some(TraceFormat::Plain))),
            ("w 10", Ok(Some(TraceFormat::Plain))),
            ("0 7ff000398", Ok(Some(TraceFormat::Din))),
            ("2 400d7d4 4", Ok(Some(TraceFormat::Din))),
            ("==9627== Lackey", Ok(None)),
            ("# R 10", Ok(None)),
            ("   ", Ok(None)),
            (" L 04011cb8 4", Err(())),
            ("LOAD 10", Err(())),
            ("9 10", Err(())),
            ("\u{7f}ELF", Err(())),
        ];
        for (line, expected) in cases {
            assert_eq!(&detect_format(line.as_bytes()), expected, "{line:?}");
        }
    }
}
