//! One line of a trace, parsed from its bytes, per format. The caller has cut the line at its
//! newline and dropped a trailing `\r`.
//!
//! - **lackey** (`valgrind --tool=lackey --trace-mem=yes`): `I  0400d7d4,8` an instruction
//!   fetch, ` L 04011cb8,4` a load, ` S 7ff000398,8` a store, ` M 0421b1a8,4` a modify (one
//!   instruction reading and writing the location: one load, as cachegrind counts it). The
//!   address is hexadecimal without `0x`, the size decimal; lines starting `==` or `--`
//!   (valgrind's banner) are not records.
//! - **din** (Dinero IV): `LABEL ADDRESS [SIZE]`, label 0 read, 1 write, 2 instruction fetch,
//!   3 escape, 4 flush; hexadecimal address (an `0x` is accepted); size decimal, default
//!   [`PLAIN_DEFAULT_SIZE`].
//! - **plain**: `R|W ADDRESS [SIZE]` (either case); hexadecimal address with or without `0x`;
//!   size decimal, default [`PLAIN_DEFAULT_SIZE`].
//!
//! In every format a blank line or one starting with `#` is not a record, fields are separated
//! by spaces or tabs, and trailing blanks are allowed. A size must be 1..=[`MAX_ACCESS_SIZE`]
//! and the access's last byte must fit in 64 bits.

use thiserror::Error;

use super::{AccessKind, Record, TraceFormat};

/// Bytes of an access when a din or plain line gives no size: one 64-bit word.
pub const PLAIN_DEFAULT_SIZE: u32 = 8;

/// The largest access a line may give, in bytes: a page. lackey itself writes at most 512
/// (its `MAX_DSIZE`); anything larger is a broken field, and an access spanning that many
/// lines would cost the simulator a lookup per line.
pub const MAX_ACCESS_SIZE: u32 = 4096;

/// What a line turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    Access(Record),
    /// An instruction fetch: counted, not simulated.
    Instruction,
    /// din's escape (3) and flush (4): counted, not simulated.
    Other,
    /// Blank, a `#` comment, or valgrind's banner.
    NotRecord,
}

/// Why a line does not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LineProblem {
    #[error("it starts with none of {kinds}")]
    UnknownKind { kinds: &'static str },
    #[error("no address")]
    MissingAddress,
    #[error("the address is not hexadecimal")]
    BadAddress,
    #[error("the address does not fit in 64 bits")]
    AddressTooLarge,
    #[error("no `,SIZE` after the address")]
    MissingSize,
    #[error("the size is not a decimal number")]
    BadSize,
    #[error("size {0} is outside 1..=4096 bytes")]
    SizeOutOfRange(u64),
    #[error("the size does not fit in 64 bits")]
    SizeTooLarge,
    #[error("the access runs past the top of the 64-bit address space")]
    PastTopOfAddressSpace,
    #[error("unexpected text after the access")]
    TrailingText,
}

const LACKEY_KINDS: &str = "I, L, S, M";
const DIN_KINDS: &str = "the din labels 0 to 4";
const PLAIN_KINDS: &str = "R, W";

/// Parses `line` (no newline) as `format`.
#[inline(always)]
pub fn parse_line(format: TraceFormat, line: &[u8]) -> Result<Parsed, LineProblem> {
    let start = skip_blanks(line, 0);
    if start == line.len() || line[start] == b'#' {
        return Ok(Parsed::NotRecord);
    }
    match format {
        TraceFormat::Lackey => lackey(line, start),
        TraceFormat::Din => din(line, start),
        TraceFormat::Plain => plain(line, start),
    }
}

/// Whether `line` is one of valgrind's own lines (`==1234== …`, `--1234-- …`).
pub fn is_valgrind_banner(line: &[u8]) -> bool {
    line.starts_with(b"==") || line.starts_with(b"--")
}

#[inline(always)]
fn lackey(line: &[u8], start: usize) -> Result<Parsed, LineProblem> {
    if is_valgrind_banner(line) {
        return Ok(Parsed::NotRecord);
    }
    let kind = match line[start] {
        b'I' => None,
        b'L' => Some(AccessKind::Load),
        b'S' => Some(AccessKind::Store),
        b'M' => Some(AccessKind::Modify),
        _ => return Err(unknown(LACKEY_KINDS)),
    };
    let at = after_kind(line, start, LACKEY_KINDS)?;
    let (addr, at) = hex(line, at, false)?;
    if line.get(at) != Some(&b',') {
        return Err(if at < line.len() && !is_blank(line[at]) {
            LineProblem::BadAddress
        } else {
            LineProblem::MissingSize
        });
    }
    let (size, at) = size(line, at + 1)?;
    end(line, at)?;
    let Some(kind) = kind else {
        return Ok(Parsed::Instruction);
    };
    access(kind, addr, size)
}

#[inline(always)]
fn din(line: &[u8], start: usize) -> Result<Parsed, LineProblem> {
    let kind = match line[start] {
        b'0' => Some(AccessKind::Load),
        b'1' => Some(AccessKind::Store),
        b'2' | b'3' | b'4' => None,
        _ => return Err(unknown(DIN_KINDS)),
    };
    let at = after_kind(line, start, DIN_KINDS)?;
    let (addr, at) = hex(line, at, true)?;
    let size = optional_size(line, at)?;
    match (kind, line[start]) {
        (Some(kind), _) => access(kind, addr, size),
        (None, b'2') => Ok(Parsed::Instruction),
        (None, _) => Ok(Parsed::Other),
    }
}

#[inline(always)]
fn plain(line: &[u8], start: usize) -> Result<Parsed, LineProblem> {
    let kind = match line[start] {
        b'R' | b'r' => AccessKind::Load,
        b'W' | b'w' => AccessKind::Store,
        _ => return Err(unknown(PLAIN_KINDS)),
    };
    let at = after_kind(line, start, PLAIN_KINDS)?;
    let (addr, at) = hex(line, at, true)?;
    let size = optional_size(line, at)?;
    access(kind, addr, size)
}

fn unknown(kinds: &'static str) -> LineProblem {
    LineProblem::UnknownKind { kinds }
}

/// Past the one-byte kind at `start`, which blanks must follow, and past those blanks.
#[inline]
fn after_kind(line: &[u8], start: usize, kinds: &'static str) -> Result<usize, LineProblem> {
    match line.get(start + 1) {
        Some(&b) if is_blank(b) => {}
        Some(_) => return Err(unknown(kinds)),
        None => return Err(LineProblem::MissingAddress),
    }
    let at = skip_blanks(line, start + 1);
    if at == line.len() {
        return Err(LineProblem::MissingAddress);
    }
    Ok(at)
}

/// A record, once the access is known to end within the address space.
#[inline]
fn access(kind: AccessKind, addr: u64, size: u32) -> Result<Parsed, LineProblem> {
    if addr.checked_add(u64::from(size) - 1).is_none() {
        return Err(LineProblem::PastTopOfAddressSpace);
    }
    Ok(Parsed::Access(Record { kind, addr, size }))
}

#[inline]
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

#[inline]
fn skip_blanks(line: &[u8], mut at: usize) -> usize {
    while at < line.len() && is_blank(line[at]) {
        at += 1;
    }
    at
}

/// Each byte's value as a hexadecimal digit, or [`NOT_DIGIT`]: a table, because a branch per
/// digit class (`0-9`, `a-f`, `A-F`) mispredicts on every address and took most of the parse.
const HEX_DIGITS: [u8; 256] = {
    let mut table = [NOT_DIGIT; 256];
    let mut b = 0;
    while b < 10 {
        table[b'0' as usize + b] = b as u8;
        b += 1;
    }
    let mut b = 0;
    while b < 6 {
        table[b'a' as usize + b] = 10 + b as u8;
        table[b'A' as usize + b] = 10 + b as u8;
        b += 1;
    }
    table
};
const NOT_DIGIT: u8 = 0xff;

/// The hexadecimal number at `at` (after an optional `0x` if `prefix`), and where it ends.
#[inline(always)]
fn hex(line: &[u8], mut at: usize, prefix: bool) -> Result<(u64, usize), LineProblem> {
    if prefix && line.len() > at + 1 && line[at] == b'0' && (line[at + 1] | 0x20) == b'x' {
        at += 2;
    }
    let first = at;
    let mut value: u64 = 0;
    while let Some(&b) = line.get(at) {
        let digit = HEX_DIGITS[usize::from(b)];
        if digit == NOT_DIGIT {
            break;
        }
        if value >> 60 != 0 {
            return Err(LineProblem::AddressTooLarge);
        }
        value = value << 4 | u64::from(digit);
        at += 1;
    }
    if at == first {
        return Err(if at == line.len() {
            LineProblem::MissingAddress
        } else {
            LineProblem::BadAddress
        });
    }
    Ok((value, at))
}

/// The decimal size at `at`, in range, and where it ends.
#[inline(always)]
fn size(line: &[u8], mut at: usize) -> Result<(u32, usize), LineProblem> {
    let first = at;
    let mut value: u64 = 0;
    while let Some(&b) = line.get(at) {
        if !b.is_ascii_digit() {
            break;
        }
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or(LineProblem::SizeTooLarge)?;
        at += 1;
    }
    if at == first {
        return Err(if at == line.len() {
            LineProblem::MissingSize
        } else {
            LineProblem::BadSize
        });
    }
    if value == 0 || value > u64::from(MAX_ACCESS_SIZE) {
        return Err(LineProblem::SizeOutOfRange(value));
    }
    Ok((value as u32, at))
}

/// After an address: blanks and a decimal size, or the end of the line.
#[inline]
fn optional_size(line: &[u8], at: usize) -> Result<u32, LineProblem> {
    let blanks = skip_blanks(line, at);
    if blanks == line.len() {
        return Ok(PLAIN_DEFAULT_SIZE);
    }
    if blanks == at {
        return Err(LineProblem::BadAddress);
    }
    let (size, at) = size(line, blanks)?;
    end(line, at)?;
    Ok(size)
}

/// Nothing but blanks from `at` on.
#[inline]
fn end(line: &[u8], at: usize) -> Result<(), LineProblem> {
    if skip_blanks(line, at) == line.len() {
        Ok(())
    } else if at < line.len() && line[at].is_ascii_alphanumeric() {
        Err(LineProblem::BadSize)
    } else {
        Err(LineProblem::TrailingText)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AccessKind::{Load, Modify, Store};
    use LineProblem::*;
    use TraceFormat::{Din, Lackey, Plain};

    fn rec(kind: AccessKind, addr: u64, size: u32) -> Result<Parsed, LineProblem> {
        Ok(Parsed::Access(Record { kind, addr, size }))
    }

    #[test]
    fn lackey_lines() {
        let cases: &[(&str, Result<Parsed, LineProblem>)] = &[
            ("I  0400d7d4,8", Ok(Parsed::Instruction)),
            (" L 04011cb8,4", rec(Load, 0x0401_1cb8, 4)),
            (" S 7ff000398,8", rec(Store, 0x7_ff00_0398, 8)),
            (" M 0421b1a8,4", rec(Modify, 0x0421_b1a8, 4)),
            (" L 1FFF000778,16  ", rec(Load, 0x1f_ff00_0778, 16)),
            (
                "==9627== Lackey, an example Valgrind tool",
                Ok(Parsed::NotRecord),
            ),
            ("--9627-- warning", Ok(Parsed::NotRecord)),
            ("", Ok(Parsed::NotRecord)),
            ("   ", Ok(Parsed::NotRecord)),
            ("# a comment", Ok(Parsed::NotRecord)),
            (
                " X 0421b1a8,4",
                Err(UnknownKind {
                    kinds: LACKEY_KINDS,
                }),
            ),
            (
                " LOAD 0421b1a8,4",
                Err(UnknownKind {
                    kinds: LACKEY_KINDS,
                }),
            ),
            (" L", Err(MissingAddress)),
            (" L   ", Err(MissingAddress)),
            (" L zz,4", Err(BadAddress)),
            (" L 0421b1a8", Err(MissingSize)),
            (" L 0421b1a8 4", Err(MissingSize)),
            (" L 0421g1a8,4", Err(BadAddress)),
            (" L 0421b1a8,", Err(MissingSize)),
            (" L 0421b1a8,x", Err(BadSize)),
            (" L 0421b1a8,4x", Err(BadSize)),
            (" L 0421b1a8,4 ,", Err(TrailingText)),
            (" L 0421b1a8,0", Err(SizeOutOfRange(0))),
            (" L 0421b1a8,4097", Err(SizeOutOfRange(4097))),
            (" L 0421b1a8,4096", rec(Load, 0x0421_b1a8, 4096)),
            (" L 0421b1a8,99999999999999999999999999", Err(SizeTooLarge)),
            (" L ffffffffffffffff,1", rec(Load, u64::MAX, 1)),
            (" L ffffffffffffffff,2", Err(PastTopOfAddressSpace)),
            (" L 1ffffffffffffffff,1", Err(AddressTooLarge)),
            (" L 0000000000000000001,1", rec(Load, 1, 1)),
        ];
        for (line, expected) in cases {
            assert_eq!(&parse_line(Lackey, line.as_bytes()), expected, "{line:?}");
        }
    }

    #[test]
    fn din_lines() {
        let cases: &[(&str, Result<Parsed, LineProblem>)] = &[
            ("0 7ff000398", rec(Load, 0x7_ff00_0398, PLAIN_DEFAULT_SIZE)),
            ("1 7ff000398 4", rec(Store, 0x7_ff00_0398, 4)),
            ("0\t0x10\t2", rec(Load, 0x10, 2)),
            ("2 400d7d4", Ok(Parsed::Instruction)),
            ("3 0", Ok(Parsed::Other)),
            ("4 0", Ok(Parsed::Other)),
            ("5 10", Err(UnknownKind { kinds: DIN_KINDS })),
            ("01 10", Err(UnknownKind { kinds: DIN_KINDS })),
            ("0", Err(MissingAddress)),
            ("0 0x", Err(MissingAddress)),
            ("0 xyz", Err(BadAddress)),
            ("0 10q 4", Err(BadAddress)),
            ("0 10 4 5", Err(TrailingText)),
            ("0 10 -4", Err(BadSize)),
            ("0 10 100000", Err(SizeOutOfRange(100000))),
        ];
        for (line, expected) in cases {
            assert_eq!(&parse_line(Din, line.as_bytes()), expected, "{line:?}");
        }
    }

    #[test]
    fn plain_lines() {
        let cases: &[(&str, Result<Parsed, LineProblem>)] = &[
            ("R 0x7ff000398 8", rec(Load, 0x7_ff00_0398, 8)),
            ("W 7ff000398", rec(Store, 0x7_ff00_0398, PLAIN_DEFAULT_SIZE)),
            ("r 0X10 1", rec(Load, 0x10, 1)),
            ("  w\t10  4  ", rec(Store, 0x10, 4)),
            ("# R 10", Ok(Parsed::NotRecord)),
            ("M 10", Err(UnknownKind { kinds: PLAIN_KINDS })),
            ("READ 10", Err(UnknownKind { kinds: PLAIN_KINDS })),
            ("R", Err(MissingAddress)),
            ("R 0x10 8 extra", Err(TrailingText)),
            ("R 0x10 eight", Err(BadSize)),
            ("R 0x10000000000000000 8", Err(AddressTooLarge)),
            (
                "R 0xfffffffffffffff8 8",
                rec(Load, 0xffff_ffff_ffff_fff8, 8),
            ),
            ("R 0xfffffffffffffff9 8", Err(PastTopOfAddressSpace)),
        ];
        for (line, expected) in cases {
            assert_eq!(&parse_line(Plain, line.as_bytes()), expected, "{line:?}");
        }
    }
}
