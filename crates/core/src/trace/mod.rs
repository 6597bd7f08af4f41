//! Memory traces of a user's own programs, streamed: valgrind lackey's `--trace-mem=yes`
//! output, Dinero IV's din format and a plain `R|W ADDRESS [SIZE]` format, each optionally
//! gzip-compressed, read from a file or stdin ([`open_trace`]) and parsed a buffer at a time
//! into [`Record`]s handed to a visitor ([`TraceInput::stream`]).
//!
//! Memory stays constant whatever the trace's length: the input is read into one buffer of
//! [`READ_CHUNK`] bytes plus room for one line ([`MAX_LINE_BYTES`]), lines are parsed from
//! their bytes where they lie (no string per line), and nothing is kept of a line once its
//! record is handed on. A line longer than [`MAX_LINE_BYTES`] (binary data) is an error, not a
//! reason to grow the buffer.
//!
//! What each format's lines mean is in [`parse`]; how the format is told from the first data
//! line in `detect`. Instruction fetches and din's escape and flush records are counted and
//! skipped: the simulator takes data accesses only.

mod detect;
pub mod parse;
mod read;

use serde::Serialize;
use thiserror::Error;

pub use detect::detect_format;
pub use parse::{LineProblem, MAX_ACCESS_SIZE, PLAIN_DEFAULT_SIZE};
pub use read::{MAX_LINE_BYTES, READ_CHUNK, TraceInput, open_trace, stream_records};

/// A trace format `--trace-format` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// valgrind `--tool=lackey --trace-mem=yes`: `I  ADDR,SIZE`, ` L ADDR,SIZE`, ` S …`, ` M …`.
    Lackey,
    /// Dinero IV din: `LABEL ADDRESS [SIZE]`, label 0 read, 1 write, 2 instruction fetch,
    /// 3 escape, 4 flush.
    Din,
    /// `R|W ADDRESS [SIZE]`.
    Plain,
}

impl TraceFormat {
    pub const ALL: [TraceFormat; 3] = [TraceFormat::Lackey, TraceFormat::Din, TraceFormat::Plain];

    /// The word `--trace-format` takes.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Lackey => "lackey",
            TraceFormat::Din => "din",
            TraceFormat::Plain => "plain",
        }
    }

    /// One line of help: what a line of the format looks like.
    pub fn summary(self) -> &'static str {
        match self {
            TraceFormat::Lackey => {
                "valgrind --tool=lackey --trace-mem=yes: `I  ADDR,SIZE` (instruction, skipped), \
                 ` L|S|M ADDR,SIZE` (load, store, modify = one load); `==pid==` lines skipped"
            }
            TraceFormat::Din => {
                "Dinero IV din: `LABEL ADDRESS [SIZE]`, 0 read, 1 write, 2 instruction fetch, \
                 3 escape, 4 flush (2-4 skipped); hex address; size 8 unless given"
            }
            TraceFormat::Plain => {
                "`R|W ADDRESS [SIZE]`: hex address with or without 0x; size 8 unless given"
            }
        }
    }

    pub fn named(name: &str) -> Option<TraceFormat> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// What a data record does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    Load,
    Store,
    /// A read-modify-write by one instruction (lackey's `M`): one load, as cachegrind counts it.
    Modify,
}

/// One data access of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub kind: AccessKind,
    pub addr: u64,
    /// Bytes, 1..=[`MAX_ACCESS_SIZE`]; `addr + size - 1` fits in 64 bits.
    pub size: u32,
}

/// The trace's lines by what they were: every figure counted while reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RecordCounts {
    /// Every line read, the last one even without a newline.
    pub lines: u64,
    pub loads: u64,
    pub stores: u64,
    pub modifies: u64,
    /// Instruction fetches (lackey `I`, din 2): counted, not simulated.
    pub instruction_fetches: u64,
    /// din escapes (3) and flushes (4): counted, not simulated.
    pub other_records: u64,
    /// Blank lines, `#` comments and lackey's `==pid==` lines.
    pub not_records: u64,
    /// Lines that did not parse, skipped under `--skip-bad-lines`.
    pub bad_lines: u64,
}

impl RecordCounts {
    /// Loads, stores and modifies: the records the simulator takes.
    pub fn data_accesses(&self) -> u64 {
        self.loads + self.stores + self.modifies
    }
}

/// How to read a trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceOptions {
    /// The format, or `None` to tell it from the first data line.
    pub format: Option<TraceFormat>,
    /// Count lines that do not parse and go on, instead of stopping at the first.
    pub skip_bad_lines: bool,
}

/// What reading a whole trace found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TraceSummary {
    pub format: TraceFormat,
    /// Whether the format was told from the trace (else it was named).
    pub format_detected: bool,
    pub counts: RecordCounts,
}

/// Why a trace cannot be read. Every one is the input's fault, never a reason to panic.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TraceError {
    #[error("cannot open the trace {path}")]
    Open {
        path: String,
        source: std::io::Error,
    },
    #[error("the trace {path} is a directory, not a file")]
    Directory { path: String },
    #[error("reading the trace failed after line {after_line}")]
    Read {
        after_line: u64,
        source: std::io::Error,
    },
    #[error(
        "the trace's gzip stream breaks off after line {after_line} (a truncated or corrupt .gz \
         file)"
    )]
    Gzip {
        after_line: u64,
        source: std::io::Error,
    },
    #[error(
        "line {line} of the trace ({format} format): {problem}: `{text}` (--skip-bad-lines \
         counts such lines and goes on)"
    )]
    BadLine {
        line: u64,
        format: &'static str,
        problem: LineProblem,
        text: String,
    },
    #[error(
        "line {line} of the trace is longer than {MAX_LINE_BYTES} bytes: `{text}` (binary data, \
         or not a trace?)"
    )]
    LineTooLong { line: u64, text: String },
    #[error(
        "cannot tell the trace's format from line {line}, its first data line: `{text}` (lackey \
         lines look like ` L 04011cb8,4`, din like `0 7ff000398 8`, plain like `R 0x7ff000398 8`); \
         name the format with --trace-format lackey|din|plain"
    )]
    Undetected { line: u64, text: String },
    #[error(
        "the trace has no data accesses to simulate ({lines} lines: {instruction_fetches} \
         instruction fetches, {other_records} escape or flush records, {bad_lines} bad lines \
         skipped, {not_records} blank, comment or banner lines)"
    )]
    Empty {
        lines: u64,
        instruction_fetches: u64,
        other_records: u64,
        bad_lines: u64,
        not_records: u64,
    },
}

/// A line's bytes as an error quotes them: at most 80 characters, control characters escaped,
/// invalid UTF-8 replaced.
pub(crate) fn quoted(line: &[u8]) -> String {
    const SHOWN: usize = 80;
    let text = String::from_utf8_lossy(&line[..line.len().min(SHOWN * 4)]);
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == SHOWN {
            out.push('…');
            return out;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if line.len() > SHOWN * 4 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_trims_and_escapes() {
        assert_eq!(quoted(b"R 0x10 8"), "R 0x10 8");
        assert_eq!(quoted(b"a\x00b\tc"), "a\\u{0}b\\tc");
        assert_eq!(quoted(&[0xff, b'x']), "\u{fffd}x");
        let long = vec![b'x'; 1000];
        let text = quoted(&long);
        assert_eq!(text.chars().count(), 81);
        assert!(text.ends_with('…'));
    }

    #[test]
    fn formats_are_named_by_their_words() {
        for format in TraceFormat::ALL {
            assert_eq!(TraceFormat::named(format.name()), Some(format));
        }
        assert_eq!(TraceFormat::named("pin"), None);
    }
}
