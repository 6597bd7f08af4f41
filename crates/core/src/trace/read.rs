//! Reading a trace a buffer at a time: where the bytes come from ([`open_trace`]: a file or
//! stdin, gzip-decompressed when its first bytes are gzip's magic `1f 8b`), and the loop that
//! cuts them into lines and parses each where it lies ([`stream_records`]).
//!
//! The buffer is [`READ_CHUNK`] bytes plus room for one unfinished line of at most
//! [`MAX_LINE_BYTES`]: the unfinished tail of a read moves to the front and the next read
//! appends to it, so memory is the same for a kilobyte of trace and for ten gigabytes.

use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

use super::detect::detect_format;
use super::parse::{LineProblem, Parsed, parse_line};
use super::{
    AccessKind, Record, RecordCounts, TraceError, TraceFormat, TraceOptions, TraceSummary, quoted,
};

/// Bytes asked of the input at a time: large enough that a read costs nothing per record.
pub const READ_CHUNK: usize = 1 << 20;

/// The longest line a trace may have. Real records are under 40 bytes; a longer line is binary
/// data, and refusing it keeps the buffer's size fixed.
pub const MAX_LINE_BYTES: usize = 4096;

/// A trace opened for reading.
pub struct TraceInput {
    reader: Box<dyn Read + Send>,
    /// Whether the bytes are gzip-decompressed.
    pub compressed: bool,
    /// The file's path as given, or `stdin`.
    pub name: String,
}

impl std::fmt::Debug for TraceInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceInput")
            .field("name", &self.name)
            .field("compressed", &self.compressed)
            .finish_non_exhaustive()
    }
}

impl TraceInput {
    /// Bytes from any reader (gzip-decompressed if they start with gzip's magic).
    pub fn from_reader(reader: impl Read + Send + 'static, name: &str) -> Result<Self, TraceError> {
        let mut buffered = BufReader::with_capacity(1 << 16, reader);
        let head = loop {
            match buffered.fill_buf() {
                Ok(head) => break head,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(TraceError::Read {
                        after_line: 0,
                        source,
                    });
                }
            }
        };
        let compressed = head.starts_with(&[0x1f, 0x8b]);
        let reader: Box<dyn Read + Send> = if compressed {
            Box::new(MultiGzDecoder::new(buffered))
        } else {
            Box::new(buffered)
        };
        Ok(Self {
            reader,
            compressed,
            name: name.to_string(),
        })
    }

    /// Parses every line, handing each data access to `visit` in order.
    pub fn stream(
        &mut self,
        options: &TraceOptions,
        visit: impl FnMut(Record),
    ) -> Result<TraceSummary, TraceError> {
        let compressed = self.compressed;
        stream_records(&mut self.reader, options, visit).map_err(|err| match err {
            TraceError::Read { after_line, source } if compressed => {
                TraceError::Gzip { after_line, source }
            }
            other => other,
        })
    }
}

/// Opens `path` (`-`: stdin) as a trace, refusing a directory.
pub fn open_trace(path: &Path) -> Result<TraceInput, TraceError> {
    if path.as_os_str() == "-" {
        return TraceInput::from_reader(std::io::stdin(), "stdin");
    }
    let name = path.display().to_string();
    let open_error = |source| TraceError::Open {
        path: name.clone(),
        source,
    };
    if std::fs::metadata(path).map_err(open_error)?.is_dir() {
        return Err(TraceError::Directory { path: name });
    }
    let file = File::open(path).map_err(open_error)?;
    TraceInput::from_reader(file, &name)
}

/// Parses `input` line by line, handing each data access to `visit`, with a read of
/// [`READ_CHUNK`] bytes at a time.
pub fn stream_records<R: Read + ?Sized>(
    input: &mut R,
    options: &TraceOptions,
    visit: impl FnMut(Record),
) -> Result<TraceSummary, TraceError> {
    stream_in_chunks(input, options, READ_CHUNK, visit)
}

/// [`stream_records`], reading at most `chunk` bytes at a time (the tests read a few).
pub(crate) fn stream_in_chunks<R: Read + ?Sized>(
    input: &mut R,
    options: &TraceOptions,
    chunk: usize,
    mut visit: impl FnMut(Record),
) -> Result<TraceSummary, TraceError> {
    let chunk = chunk.max(1);
    let mut buffer = vec![0u8; chunk + MAX_LINE_BYTES];
    let mut lines = Lines {
        format: options.format,
        skip_bad_lines: options.skip_bad_lines,
        counts: RecordCounts::default(),
    };
    // Bytes of an unfinished line at the front of `buffer`.
    let mut kept = 0;
    loop {
        let end = (kept + chunk).min(buffer.len());
        let read = match input.read(&mut buffer[kept..end]) {
            Ok(read) => read,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(TraceError::Read {
                    after_line: lines.counts.lines,
                    source,
                });
            }
        };
        if read == 0 {
            if kept > 0 {
                lines.line(&buffer[..kept], &mut visit)?;
            }
            break;
        }
        let filled = kept + read;
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', &buffer[kept..filled]) {
            let newline = kept + newline;
            lines.line(&buffer[start..newline], &mut visit)?;
            start = newline + 1;
        }
        kept = filled - start;
        if kept > MAX_LINE_BYTES {
            return Err(too_long(lines.counts.lines + 1, &buffer[start..filled]));
        }
        buffer.copy_within(start..filled, 0);
    }
    let mut summary = lines.finish()?;
    summary.format_detected = options.format.is_none();
    Ok(summary)
}

#[cold]
fn bad_line(line: u64, format: TraceFormat, problem: LineProblem, text: &[u8]) -> TraceError {
    TraceError::BadLine {
        line,
        format: format.name(),
        problem,
        text: quoted(text),
    }
}

#[cold]
fn too_long(line: u64, text: &[u8]) -> TraceError {
    TraceError::LineTooLong {
        line,
        text: quoted(text),
    }
}

/// The state of the line loop: the format (once known) and the counts so far.
struct Lines {
    format: Option<TraceFormat>,
    skip_bad_lines: bool,
    counts: RecordCounts,
}

impl Lines {
    /// One line, its newline cut off.
    #[inline]
    fn line(&mut self, line: &[u8], visit: &mut impl FnMut(Record)) -> Result<(), TraceError> {
        self.counts.lines += 1;
        if line.len() > MAX_LINE_BYTES {
            return Err(too_long(self.counts.lines, line));
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let format = match self.format {
            Some(format) => format,
            None => match detect_format(line) {
                Ok(Some(format)) => *self.format.insert(format),
                Ok(None) => {
                    self.counts.not_records += 1;
                    return Ok(());
                }
                Err(()) => {
                    return Err(TraceError::Undetected {
                        line: self.counts.lines,
                        text: quoted(line),
                    });
                }
            },
        };
        match parse_line(format, line) {
            Ok(Parsed::Access(record)) => {
                match record.kind {
                    AccessKind::Load => self.counts.loads += 1,
                    AccessKind::Store => self.counts.stores += 1,
                    AccessKind::Modify => self.counts.modifies += 1,
                }
                visit(record);
            }
            Ok(Parsed::Instruction) => self.counts.instruction_fetches += 1,
            Ok(Parsed::Other) => self.counts.other_records += 1,
            Ok(Parsed::NotRecord) => self.counts.not_records += 1,
            Err(_) if self.skip_bad_lines => self.counts.bad_lines += 1,
            Err(problem) => return Err(bad_line(self.counts.lines, format, problem, line)),
        }
        Ok(())
    }

    fn finish(self) -> Result<TraceSummary, TraceError> {
        let counts = self.counts;
        match self.format {
            Some(format) if counts.data_accesses() > 0 => Ok(TraceSummary {
                format,
                format_detected: false,
                counts,
            }),
            _ => Err(TraceError::Empty {
                lines: counts.lines,
                instruction_fetches: counts.instruction_fetches,
                other_records: counts.other_records,
                bad_lines: counts.bad_lines,
                not_records: counts.not_records,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::{Cursor, Write};

    /// Every record and the summary, read `chunk` bytes at a time.
    fn read(
        text: &[u8],
        options: TraceOptions,
        chunk: usize,
    ) -> Result<(Vec<Record>, TraceSummary), TraceError> {
        let mut records = Vec::new();
        let summary =
            stream_in_chunks(&mut Cursor::new(text), &options, chunk, |r| records.push(r))?;
        Ok((records, summary))
    }

    /// The same, from the whole text split at its newlines at once: no buffer at all.
    fn read_whole(
        text: &[u8],
        options: TraceOptions,
    ) -> Result<(Vec<Record>, TraceSummary), TraceError> {
        let mut lines = Lines {
            format: options.format,
            skip_bad_lines: options.skip_bad_lines,
            counts: RecordCounts::default(),
        };
        let mut records = Vec::new();
        let body = text.strip_suffix(b"\n").unwrap_or(text);
        if !text.is_empty() {
            for line in body.split(|&b| b == b'\n') {
                lines.line(line, &mut |r| records.push(r))?;
            }
        }
        let mut summary = lines.finish()?;
        summary.format_detected = options.format.is_none();
        Ok((records, summary))
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    fn stream_input(bytes: Vec<u8>) -> Result<(Vec<Record>, TraceSummary), TraceError> {
        let mut input = TraceInput::from_reader(Cursor::new(bytes), "test")?;
        let mut records = Vec::new();
        let summary = input.stream(&TraceOptions::default(), |r| records.push(r))?;
        Ok((records, summary))
    }

    const LACKEY: &str =
        "==1== Lackey\nI  0400d7d4,8\n L 04011cb8,4\n S 7ff000398,8\n M 0421b1a8,4\n";

    #[test]
    fn a_lackey_trace_is_detected_counted_and_streamed() {
        let (records, summary) = read(LACKEY.as_bytes(), TraceOptions::default(), 7).unwrap();
        assert_eq!(summary.format, TraceFormat::Lackey);
        assert!(summary.format_detected);
        let counts = summary.counts;
        assert_eq!(
            (counts.lines, counts.not_records, counts.instruction_fetches),
            (5, 1, 1)
        );
        assert_eq!((counts.loads, counts.stores, counts.modifies), (1, 1, 1));
        assert_eq!(records.len(), 3);
        assert_eq!(records[2].kind, AccessKind::Modify);
    }

    #[test]
    fn gzip_is_told_by_its_magic_and_a_truncated_stream_is_an_error() {
        let packed = gzip(LACKEY.as_bytes());
        let (records, summary) = stream_input(packed.clone()).unwrap();
        assert_eq!((records.len(), summary.counts.lines), (3, 5));
        let plain = stream_input(LACKEY.as_bytes().to_vec()).unwrap();
        assert_eq!(plain.0, records);

        let truncated = packed[..packed.len() - 6].to_vec();
        let err = stream_input(truncated).unwrap_err();
        assert!(matches!(err, TraceError::Gzip { .. }), "{err}");
        assert!(err.to_string().contains("truncated or corrupt"), "{err}");
        let mut corrupt = packed.clone();
        corrupt[12] ^= 0xff;
        corrupt[14] ^= 0x55;
        assert!(stream_input(corrupt).is_err());
    }

    #[test]
    fn bad_lines_stop_the_read_or_are_counted() {
        let text = b"R 10 8\nR zz 8\nW 20\n";
        let err = read(text, TraceOptions::default(), 3).unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with(
                "line 2 of the trace (plain format): the address is not hexadecimal: `R zz 8`"
            ),
            "{message}"
        );
        let skipping = TraceOptions {
            skip_bad_lines: true,
            ..TraceOptions::default()
        };
        let (records, summary) = read(text, skipping, 3).unwrap();
        assert_eq!((records.len(), summary.counts.bad_lines), (2, 1));
    }

    #[test]
    fn inputs_without_accesses_or_lines_are_refused() {
        let empty = read(b"", TraceOptions::default(), 8).unwrap_err();
        assert!(
            matches!(empty, TraceError::Empty { lines: 0, .. }),
            "{empty}"
        );
        let fetches = read(b"2 10\n2 14\n", TraceOptions::default(), 8).unwrap_err();
        assert!(
            fetches.to_string().contains("2 instruction fetches"),
            "{fetches}"
        );
        let garbage = read(b"\x7fELF\x02\x01\x01\n", TraceOptions::default(), 8).unwrap_err();
        assert!(
            matches!(garbage, TraceError::Undetected { line: 1, .. }),
            "{garbage}"
        );
        let long = vec![b'R'; MAX_LINE_BYTES + 1];
        for chunk in [5, 100_000] {
            let err = read(&long, TraceOptions::default(), chunk).unwrap_err();
            assert!(
                matches!(err, TraceError::LineTooLong { line: 1, .. }),
                "{err}"
            );
        }
    }

    /// A line of a trace, valid in `format` or not.
    fn any_line(format: TraceFormat) -> impl Strategy<Value = String> {
        let record = (0u8..4, any::<u32>(), 1u32..64, any::<bool>()).prop_map(
            move |(kind, addr, size, sized)| match format {
                TraceFormat::Lackey => {
                    let kind = ["I  ", " L ", " S ", " M "][kind as usize];
                    format!("{kind}{addr:08x},{size}")
                }
                TraceFormat::Din if sized => format!("{kind} {addr:x} {size}"),
                TraceFormat::Din => format!("{kind} {addr:x}"),
                TraceFormat::Plain => {
                    let kind = ["R", "W", "r", "w"][kind as usize];
                    format!("{kind} 0x{addr:x} {size}")
                }
            },
        );
        prop_oneof![
            6 => record,
            1 => Just(String::new()),
            1 => Just("# comment".to_string()),
            1 => Just("R zz ,,".to_string()),
            1 => record_with_cr(),
        ]
    }

    fn record_with_cr() -> impl Strategy<Value = String> {
        any::<u16>().prop_map(|addr| format!("W {addr:x}\r"))
    }

    proptest! {
        #[test]
        fn small_buffers_read_what_the_whole_text_says(
            (format, lines) in prop::sample::select(TraceFormat::ALL.to_vec()).prop_flat_map(
                |format| (Just(format), prop::collection::vec(any_line(format), 0..40))
            ),
            named in any::<bool>(),
            skip_bad_lines in any::<bool>(),
            trailing_newline in any::<bool>(),
            chunk in 1usize..48,
        ) {
            let mut text = lines.join("\n");
            if trailing_newline && !text.is_empty() {
                text.push('\n');
            }
            let options = TraceOptions {
                format: named.then_some(format),
                skip_bad_lines,
            };
            let streamed = read(text.as_bytes(), options, chunk);
            let whole = read_whole(text.as_bytes(), options);
            match (streamed, whole) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
                (a, b) => prop_assert!(false, "{:?} vs {:?}", a.map(|r| r.1), b.map(|r| r.1)),
            }
        }
    }
}
