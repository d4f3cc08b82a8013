//! COPY FROM input readers: chunked reading, UTF-8 verification, and the text-format and CSV
//! row splitters, with the exact results and errors of PostgreSQL 15, 16 and 17
//! (`src/backend/commands/copyfromparse.c`: `CopyLoadInputBuf`/`CopyConvertBuf`,
//! `CopyReadLine`/`CopyReadLineText`, `CopyReadAttributesText`, `CopyReadAttributesCSV`,
//! `NextCopyFromRawFields`), for a server-side file source (`COPY ... FROM 'file'`).
//!
//! # Pipeline
//!
//! [`RowReader`] reads through [`Chunks`](crate::chunks::Chunks), the buffer all formats share:
//! chunks from any [`std::io::Read`] in one growable buffer (never the whole input: a chunk
//! plus the unfinished row), each new chunk verified as UTF-8 (the server encoding; NUL bytes
//! are invalid too). Per row it then works in two passes like the server:
//!
//! 1. **Line scan** (`CopyReadLine`): find where the row ends (`\n`, `\r` or `\r\n`, the first
//!    row's ending fixing the style), the `\.` end-of-data marker, and in CSV quoted newlines.
//!    This is where the "literal newline/carriage return", end-marker and raw-encoding errors
//!    come from. Runs of ordinary bytes are skipped with `memchr`; only the few special bytes
//!    go through a port of the server's per-character state machine (`text.rs`, `csv.rs`).
//! 2. **Field split** (`CopyReadAttributes*`): cut the line into fields, compare each *raw*
//!    field with the NULL and DEFAULT markers, de-escape, check de-escaped bytes.
//!
//! The common rows skip most of this: `plain_rows.rs` walks the line in 32-byte SIMD blocks, copies
//! it once into the [`Row`] buffer and overwrites each delimiter with a NUL (text without
//! backslash, CSV without quotes or with simply quoted fields); rows it does not take go
//! through the general path from their first byte. A table of integer columns goes further:
//! `ints.rs` reads a line of plain integers straight into their values and the row's tuple.
//!
//! # Invariant for the type input functions
//!
//! Every [`Field::Value`] slice returned by [`Row::field`] is immediately followed, in the row's
//! own buffer, by a `0` byte, so `bytes.as_ptr()` is a valid NUL-terminated C string whose
//! `strlen` is `bytes.len()`: a value never contains a NUL byte. (Raw NUL bytes are invalid
//! UTF-8 for the server, and a NUL produced by de-escaping — text `\000`, `\x00` — makes the
//! server raise `invalid byte sequence for encoding "UTF8": 0x00`, as it runs `pg_verifymbstr`
//! on any field in which an escape produced a NUL or a high-bit byte; so does this reader.)
//! Values are valid UTF-8.
//!
//! # Line numbers
//!
//! [`Row::line_no`] and [`InputError::line`] are the server's `cur_lineno`: incremented once
//! before each row is read (the header row included), plus, in CSV, once per newline inside a
//! quoted field, counted the server's way: `\n` once the file's line ending is known to be
//! `\n`, otherwise `\r` (so on the first row, before any line ending was seen, quoted `\n`s
//! are not counted). A CSV row spanning lines thus reports the number of its *last* line.
//!
//! # When errors are raised
//!
//! In the server's order: the line scan of a row comes before its field split, and an invalid
//! raw byte is reported when the scan reaches it (so rows before it are returned first; an
//! invalid byte after the end marker is never reported), at the line number of the row being
//! scanned, including the server's one-byte look-ahead after `\r` (text: while the line ending
//! is unknown or `\r\n`; CSV: always) which reports a bad byte right after that `\r` on the
//! row it ends. The bytes shown are the server's: the first invalid byte and as many more as
//! its UTF-8 lead announces, at most what is left of the input.
//!
//! # The end marker
//!
//! 15-17, text: `\.` anywhere on a line (not after another backslash) ends the data, and must
//! be followed by the file's line ending ("end-of-copy marker corrupt", "... does not match
//! previous newline style"); text before it on the line is a row of its own, and then reading
//! goes on after the marker's line for a file, while a stream ([`Options::stream`]) ends
//! there. CSV: only `\.` alone at the start of a line followed by the line ending; anything
//! else is data.
//!
//! 18, text: `\.` must be alone on its line ("end-of-copy marker is not alone on its line",
//! also when data comes before it or something other than the line ending after it; the
//! newline-style errors as before). CSV: `\.` is data, always.
//!
//! # What the caller does
//!
//! - Option validation and defaults (`ProcessCopyOptions`): e.g. when QUOTE is given without
//!   ESCAPE, set `escape = quote`; the reader assumes options the server would accept.
//! - Field counts against the columns ("extra data after last expected column", "missing data
//!   for column"); zero-column tables accept only empty lines ([`Row::line_len`] is 0).
//! - DEFAULT: [`Field::Default`] is returned for any field equal to the marker; the server
//!   only recognises it in fields that map to a column (an extra field is then reported as
//!   extra data, as it would be anyway) and raises "unexpected default marker in COPY data"
//!   for columns without a default.
//! - `HEADER MATCH`: call [`RowReader::read_header`] first and compare the names.
//! - FORCE_NULL / FORCE_NOT_NULL with [`Row::quoted`]; the error context with
//!   [`Row::raw_line`] / [`InputError::raw_line`].
//!
//! # Version differences (15, 16, 17, 18)
//!
//! Line splitting, escapes, line numbers and encoding verification behave identically in 15
//! to 18 (the source of `copyfromparse.c` agrees, and so did the 15.19, 16.15 and 17.11
//! servers on every case tried, including thousands of random inputs). The end marker changed
//! in 18 (above). The `DEFAULT` marker only exists from 16 (the server rejects the option
//! before reading any data, so `Options::default` is honoured whatever `server_major` says).

mod csv;
mod ints;
mod plain_rows;
mod text;

use crate::chunks::{Chunks, Verify, verify_utf8};
use crate::sqlstate::SqlState;
use std::borrow::Cow;
use std::fmt;
use std::io::{self, Read};

/// COPY's data formats handled here (binary is not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
}

/// COPY FROM options that affect reading and splitting rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub format: Format,
    /// Field delimiter: text default `b'\t'`, CSV default `b','`.
    pub delimiter: u8,
    /// NULL marker, compared with the raw field: text default `\N`, CSV default empty.
    pub null: Vec<u8>,
    /// DEFAULT marker (PostgreSQL 16+), compared with the raw field; `None` if not given.
    pub default: Option<Vec<u8>>,
    /// CSV only: quote character, default `b'"'`.
    pub quote: u8,
    /// CSV only: escape character, default = `quote`.
    pub escape: u8,
    /// Header lines skipped before the first row (`HEADER`: 1; `HEADER n`, PostgreSQL 19's
    /// integer form: n; 0 = none). Each is read as a line (COPY's line-level checks, and a
    /// CSV header line may span several lines inside quotes), counted in the line numbers,
    /// and thrown away; the data ends if one of them ends it.
    pub header: u64,
    /// `HEADER MATCH` (with `header` 1): the header row's fields must be these column names.
    pub header_match: Option<HeaderMatch>,
    /// A data line with a byte sequence invalid in `input_encoding` (outside CSV quotes)
    /// does not end the data: it comes back as a row without fields whose
    /// [`Row::invalid`] is the error, and reading goes on after its line end. Default off
    /// (COPY: the error ends the load). For a rejects table.
    pub skip_invalid_lines: bool,
    /// The input's encoding as it is checked while it is read (COPY's `file_encoding` when
    /// no conversion is needed), or `None` when the bytes come checked (converted to the
    /// server encoding by the server before they reach the reader).
    pub input_encoding: Option<Encoding>,
    /// The server (database) encoding: what de-escaped text fields are checked against.
    pub server_encoding: Encoding,
    /// 15, 16, 17 or 18: selects version-specific behaviour (the end marker, see the module
    /// docs).
    pub server_major: u32,
    /// The data is a stream (COPY FROM STDIN; `load_data`), not a file: on 15-17 text data
    /// ends at a `\.` that follows data on its line (a file reads on after it).
    pub stream: bool,
    /// The table has no columns: lines are not split (an empty line is a row, anything else
    /// is "extra data"), as the server checks zero-column tables before it splits.
    pub no_columns: bool,
}

impl Options {
    /// `COPY ... FROM ... (FORMAT text)` defaults, PostgreSQL 17.
    pub fn text() -> Self {
        Options {
            format: Format::Text,
            delimiter: b'\t',
            null: b"\\N".to_vec(),
            default: None,
            quote: b'"',
            escape: b'"',
            header: 0,
            header_match: None,
            skip_invalid_lines: false,
            input_encoding: Some(Encoding::utf8()),
            server_encoding: Encoding::utf8(),
            server_major: 17,
            stream: false,
            no_columns: false,
        }
    }

    /// `COPY ... FROM ... (FORMAT csv)` defaults, PostgreSQL 17.
    pub fn csv() -> Self {
        Options {
            format: Format::Csv,
            delimiter: b',',
            null: Vec::new(),
            default: None,
            quote: b'"',
            escape: b'"',
            header: 0,
            header_match: None,
            skip_invalid_lines: false,
            input_encoding: Some(Encoding::utf8()),
            server_encoding: Encoding::utf8(),
            server_major: 17,
            stream: false,
            no_columns: false,
        }
    }
}

/// An encoding as the reader checks it (`pg_verify_mbstr`), with its name for errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoding {
    /// The server's name of it (`pg_encoding_to_char`), as errors print it.
    pub name: String,
    /// [`Verify::Utf8`], [`Verify::NulFree`] or [`Verify::Mb`].
    pub check: Verify,
}

impl Encoding {
    pub fn utf8() -> Encoding {
        Encoding {
            name: "UTF8".into(),
            check: Verify::Utf8,
        }
    }

    /// A multibyte encoding other than UTF-8 (EUC_*, MULE_INTERNAL, the client-only ones).
    pub fn multibyte(name: &str, enc: crate::mb::MbEncoding) -> Encoding {
        Encoding {
            name: name.into(),
            check: Verify::Mb(enc),
        }
    }

    /// SQL_ASCII or a single-byte encoding (only NUL is invalid).
    pub fn nul_free(name: &str) -> Encoding {
        Encoding {
            name: name.into(),
            check: Verify::NulFree,
        }
    }

    /// `pg_verify_mbstr(encoding, s, len, false)` on a de-escaped field.
    fn verify_field(&self, s: &[u8]) -> Result<(), InputErrorKind> {
        let ok = match self.check {
            Verify::NulFree => memchr::memchr(0, s).unwrap_or(s.len()),
            Verify::Mb(enc) => enc.verify(s),
            _ => verify_utf8(s).0,
        };
        if ok == s.len() {
            return Ok(());
        }
        Err(InputErrorKind::InvalidEncoding {
            encoding: self.name.clone(),
            bytes: crate::chunks::invalid_bytes_in(self.check, &s[ok..]),
        })
    }
}

/// What `HEADER MATCH` checks the header row against (`NextCopyFromRawFields`): the names
/// of the input columns, in input order, and which of them have a default (the DEFAULT
/// marker is refused in a header field of a column without one, as in a data row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderMatch {
    pub names: Vec<Vec<u8>>,
    pub has_default: Vec<bool>,
}

pub use crate::field::Field;

const KIND_VALUE: u8 = 0;
const KIND_NULL: u8 = 1;
const KIND_DEFAULT: u8 = 2;

#[derive(Clone, Copy, Debug)]
struct Span {
    start: usize,
    len: usize,
    kind: u8,
    quoted: bool,
}

/// How [`Row::raw_line`] gets the raw line back.
#[derive(Clone, Copy, Debug)]
enum RawLine {
    /// `buf[..line_len]` is the raw line with every NUL written after a value standing for
    /// the `delim`iter, or for the closing `quote` after a quoted value.
    InBuf { delim: u8, quote: u8 },
    /// `Row::raw` holds a copy of the raw line.
    Copied,
    /// A line invalid in the input's encoding, skipped by a decoder that keeps going after
    /// one ([`Options::skip_invalid_lines`]): `Row::raw` holds it, `Row::buf` its error's
    /// message (no fields).
    Invalid,
}

/// Asks the CPU to start loading the cache line at `p` (a hint: nothing where the target has
/// no prefetch instruction).
#[inline(always)]
pub fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it reads nothing into the program and never faults,
    // whatever the address (an empty Vec's dangling pointer included); SSE is part of the
    // x86_64 baseline.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch_line`] for the lines of `len` bytes from `p`, at most the first 256 bytes (a
/// longer row's later values are read long enough after its first ones).
#[inline(always)]
fn prefetch_lines(p: *const u8, len: usize) {
    if len == 0 {
        return;
    }
    let len = len.min(256);
    let mut at = 0;
    while at < len {
        prefetch_line(p.wrapping_add(at));
        at += 64;
    }
    // the line of the last byte, when `p` is not at a line's start
    prefetch_line(p.wrapping_add(len - 1));
}

/// One row: its fields, reused across rows (no allocation per row once the buffers have grown
/// to the longest row).
#[derive(Clone, Debug)]
pub struct Row {
    buf: Vec<u8>,
    spans: Vec<Span>,
    raw: Vec<u8>,
    raw_kind: RawLine,
    line_len: usize,
    line_no: u64,
    raw_len: usize,
}

impl Default for Row {
    fn default() -> Self {
        Row::new()
    }
}

impl Row {
    pub fn new() -> Self {
        Row {
            buf: Vec::new(),
            spans: Vec::new(),
            raw: Vec::new(),
            raw_kind: RawLine::Copied,
            line_len: 0,
            line_no: 0,
            raw_len: 0,
        }
    }

    /// For a line invalid in the input's encoding that the decoder skipped
    /// ([`Options::skip_invalid_lines`]): the message of the error COPY raises for it
    /// (SQLSTATE 22021, `CHARACTER_NOT_IN_REPERTOIRE`). Such a row has no fields;
    /// [`raw_line`](Self::raw_line) is the line as read.
    #[inline]
    pub fn invalid(&self) -> Option<&str> {
        match self.raw_kind {
            // (the message is where the fields' bytes would be: the row has none)
            RawLine::Invalid => std::str::from_utf8(&self.buf).ok(),
            _ => None,
        }
    }

    /// COPY's line number for this row (`cur_lineno`, see the module docs).
    #[inline]
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    /// Input bytes this row consumed, line ending (and a `\.` marker ending it) included.
    #[inline]
    pub fn raw_len(&self) -> usize {
        self.raw_len
    }

    /// The row's line number and line length together.
    #[inline]
    pub fn mark(&self) -> crate::plan::RowMark {
        crate::plan::RowMark {
            line_no: self.line_no,
            line_len: self.line_len,
        }
    }

    /// Asks the CPU to start loading the row's fields (their bytes and where each lies) into
    /// its cache: a hint for a consumer on another thread that reads the row soon. Each row's
    /// buffers are allocations of their own, which the hardware prefetcher cannot follow, and
    /// they were just written on the reader thread's core: without the hint the first read of
    /// a row's value waits for that core's cache (a third of the backend's time on a table of
    /// two ints and a text column, profiled on 17, with text values copied as they are).
    /// Does nothing where the target has no prefetch instruction.
    #[inline(always)]
    pub fn prefetch(&self) {
        let spans = self.spans.len() * std::mem::size_of::<Span>();
        prefetch_lines(self.spans.as_ptr().cast(), spans);
        // the values take at most the line's bytes (a NUL for each delimiter, escapes shorter
        // than what they stand for), known without reading the spans
        prefetch_lines(self.buf.as_ptr(), self.raw_len.min(self.buf.len()));
    }

    /// Number of fields (at least 1: an empty line is one empty field).
    #[inline]
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Never true for a row returned by [`RowReader::next_row`].
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Field `i` (panics if `i >= len()`).
    #[inline]
    pub fn field(&self, i: usize) -> Field<'_> {
        let s = self.spans[i];
        match s.kind {
            KIND_VALUE => Field::Value(&self.buf[s.start..s.start + s.len]),
            KIND_NULL => Field::Null,
            _ => Field::Default,
        }
    }

    /// Field `i` if it is a value: the row buffer from the value's start, and the value's
    /// length. The buffer goes on after the value (the NUL after it, later fields, spare room),
    /// so an integer parser may load 8 bytes at once ([`crate::int::parse_i32_in`]).
    #[inline]
    pub fn value_in(&self, i: usize) -> Option<(&[u8], usize)> {
        let s = self.spans[i];
        (s.kind == KIND_VALUE).then(|| (&self.buf[s.start..], s.len))
    }

    /// CSV: whether field `i` contained a quote character (was quoted, wholly or partly).
    /// Always false in text format.
    #[inline]
    pub fn quoted(&self, i: usize) -> bool {
        self.spans[i].quoted
    }

    /// Length of the raw line (the server's `line_buf`: terminator and `\.` excluded).
    /// Zero-column tables need it: the server accepts only empty lines for them.
    #[inline]
    pub fn line_len(&self) -> usize {
        self.line_len
    }

    /// The raw line as the server keeps it in `line_buf` (escapes and quotes intact,
    /// terminator excluded), for the `COPY t, line N: "..."` error context.
    pub fn raw_line(&self) -> Cow<'_, [u8]> {
        match self.raw_kind {
            RawLine::Copied | RawLine::Invalid => Cow::Borrowed(&self.raw),
            RawLine::InBuf { delim, quote } => {
                let mut v = self.buf[..self.line_len].to_vec();
                // Raw input never contains NUL (it is invalid UTF-8), so every NUL inside the
                // line is a byte we overwrote: a closing quote after a quoted value, else a
                // delimiter.
                for b in v.iter_mut() {
                    if *b == 0 {
                        *b = delim;
                    }
                }
                for s in &self.spans {
                    if s.quoted && s.start + s.len < v.len() {
                        v[s.start + s.len] = quote;
                    }
                }
                Cow::Owned(v)
            }
        }
    }

    #[inline]
    fn reset(&mut self) {
        self.buf.clear();
        self.spans.clear();
    }

    /// Starts filling this row as a decoder other than the text/CSV splitter does: no fields
    /// yet, and COPY's line (in binary: tuple) number.
    pub fn begin(&mut self, line_no: u64) {
        self.reset();
        self.raw.clear();
        self.raw_kind = RawLine::Copied;
        self.line_no = line_no;
        self.raw_len = 0;
        self.line_len = 0;
    }

    /// Ends a row filled with [`begin`](Self::begin): the input bytes it took.
    pub fn end(&mut self, raw_len: usize) {
        self.raw_len = raw_len;
        self.line_len = raw_len;
    }

    /// Appends a field with the value `bytes` (length-delimited: it may contain any byte);
    /// a NUL follows it in the row's buffer, as after every value.
    pub fn push_value(&mut self, bytes: &[u8]) {
        let start = self.buf.len();
        self.buf.extend_from_slice(bytes);
        self.buf.push(0);
        self.spans.push(Span {
            start,
            len: bytes.len(),
            kind: KIND_VALUE,
            quoted: false,
        });
    }

    /// Appends a field whose value is the `len` bytes at `start` of the bytes
    /// [`take_tuple`](Self::take_tuple) copies next (a binary tuple read whole).
    #[inline]
    pub fn push_value_at(&mut self, start: usize, len: usize) {
        self.spans.push(Span {
            start,
            len,
            kind: KIND_VALUE,
            quoted: false,
        });
    }

    /// The row's bytes become `raw`, whose values the fields pushed with
    /// [`push_value_at`](Self::push_value_at) are, each followed by a NUL as after every value:
    /// over the first byte of the next field's length word (read already) or, after the last
    /// value, one byte more. One copy of the tuple instead of one per value.
    #[inline]
    pub fn take_tuple(&mut self, raw: &[u8]) {
        self.buf.clear();
        self.buf.reserve(raw.len() + 1);
        self.buf.extend_from_slice(raw);
        self.buf.push(0);
        for s in &self.spans {
            if s.kind == KIND_VALUE {
                self.buf[s.start + s.len] = 0;
            }
        }
    }

    /// Appends a NULL field.
    pub fn push_null(&mut self) {
        self.spans.push(Span {
            start: self.buf.len(),
            len: 0,
            kind: KIND_NULL,
            quoted: false,
        });
    }
}

/// Why reading failed.
#[derive(Debug)]
pub enum InputErrorKind {
    /// Reading the source failed.
    Io(io::Error),
    /// Invalid UTF-8 (or a NUL byte), in the raw input or produced by text-format escapes:
    /// the offending bytes as the server prints them (the first byte and as many following
    /// bytes as its UTF-8 length announces, at most what is left).
    InvalidEncoding { encoding: String, bytes: Vec<u8> },
    /// Text: `\n` ending a line in a file whose lines end with `\r` or `\r\n`.
    LiteralNewline,
    /// Text: `\r` in a file whose lines end with `\n`, or a lone `\r` where `\r\n` was expected.
    LiteralCarriageReturn,
    /// CSV: the same as [`Self::LiteralNewline`] outside quotes.
    UnquotedNewline,
    /// CSV: the same as [`Self::LiteralCarriageReturn`] outside quotes.
    UnquotedCarriageReturn,
    /// Text: `\.` not followed by a line ending.
    EndMarkerCorrupt,
    /// `\.` followed by a line ending other than the file's.
    EndMarkerNewlineStyle,
    /// 18, text: `\.` with data before or after it on its line.
    EndMarkerNotAlone,
    /// CSV: the data ended inside a quoted field.
    UnterminatedCsvQuote,
    /// HEADER MATCH: the header row has another number of fields than there are columns.
    HeaderFieldCount { got: usize, expected: usize },
    /// HEADER MATCH: header field `field` (1-based) is the NULL marker `null`.
    HeaderNullName {
        field: usize,
        null: Vec<u8>,
        expected: Vec<u8>,
    },
    /// HEADER MATCH: header field `field` (1-based) is not the column's name.
    HeaderNameMismatch {
        field: usize,
        got: Vec<u8>,
        expected: Vec<u8>,
    },
    /// HEADER MATCH: the DEFAULT marker in the header field of a column without a default.
    HeaderUnexpectedDefault { column: Vec<u8> },
    /// HEADER MATCH into a table without columns: the header line is not empty.
    HeaderExtraData,
    /// Binary: the data does not start with the signature.
    BinarySignature,
    /// Binary: the header ends before its flags.
    BinaryHeaderMissingFlags,
    /// Binary: the flags announce OIDs.
    BinaryHeaderWithOids,
    /// Binary: a flag in bits 17-31.
    BinaryHeaderCriticalFlags,
    /// Binary: the extension length is missing or negative.
    BinaryHeaderMissingLength,
    /// Binary: the data ends inside the header extension.
    BinaryHeaderWrongLength,
    /// Binary: a tuple's field count is not the number of input columns.
    BinaryFieldCount { got: i32, expected: usize },
    /// Binary: a field length below -1.
    BinaryFieldSize,
    /// Binary: a field length of `MaxAllocSize` or more (`limit_named`: 18's wording).
    BinaryFieldTooLong { len: i32, limit_named: bool },
    /// Binary: the data ends inside a tuple.
    BinaryUnexpectedEof,
    /// Binary: data after the trailer.
    BinaryDataAfterTrailer,
}

impl InputErrorKind {
    /// An error of the binary header, which the server raises before COPY's error context
    /// is installed (no CONTEXT line).
    pub fn is_header(&self) -> bool {
        use InputErrorKind::*;
        matches!(
            self,
            BinarySignature
                | BinaryHeaderMissingFlags
                | BinaryHeaderWithOids
                | BinaryHeaderCriticalFlags
                | BinaryHeaderMissingLength
                | BinaryHeaderWrongLength
        )
    }
}

/// A reading error, with COPY's line number at the time it was raised.
#[derive(Debug)]
pub struct InputError {
    pub kind: InputErrorKind,
    /// COPY's `cur_lineno` when the server would raise the error.
    pub line: u64,
    /// The raw line when the server's error context shows it (`COPY t, line N: "..."`): for
    /// errors raised while splitting a complete line into fields (bad bytes from escapes,
    /// unterminated CSV quote). `None` for errors raised while reading the line
    /// (`COPY t, line N` without text).
    pub raw_line: Option<Vec<u8>>,
    /// Binary: the input field (0-based) the error is about, which COPY's context names.
    pub field: Option<usize>,
    /// The fields read before the defect, for the checks the server makes on them first.
    /// Binary: it converts them before it reads on. Text: a de-escaped field that is not
    /// valid in the encoding is found after the DEFAULT markers of the fields before it
    /// (`CopyReadAttributesText` checks each field as it splits it).
    pub partial: Option<Box<Row>>,
}

impl InputError {
    pub(crate) fn new(kind: InputErrorKind, line: u64) -> Self {
        InputError {
            kind,
            line,
            raw_line: None,
            field: None,
            partial: None,
        }
    }

    /// An error of a line, shown with its raw text.
    pub(crate) fn with_line(kind: InputErrorKind, line: u64, raw: Vec<u8>) -> Self {
        let mut e = InputError::new(kind, line);
        e.raw_line = Some(raw);
        e
    }

    /// An error [`text::split_escaped`] found in a line: `row` holds the fields before it.
    pub(crate) fn in_split(kind: InputErrorKind, line: u64, raw: Vec<u8>, row: &Row) -> Self {
        let mut e = InputError::with_line(kind, line, raw);
        e.partial = Some(Box::new(row.clone()));
        e
    }

    /// The SQLSTATE the server reports.
    pub fn sqlstate(&self) -> SqlState {
        match &self.kind {
            InputErrorKind::Io(e) => match server_error(e) {
                Some(se) => se.sqlstate,
                None => io_sqlstate(e),
            },
            InputErrorKind::InvalidEncoding { .. } => SqlState::CHARACTER_NOT_IN_REPERTOIRE,
            InputErrorKind::BinaryFieldTooLong { .. } => SqlState::PROGRAM_LIMIT_EXCEEDED,
            _ => SqlState::BAD_COPY_FILE_FORMAT,
        }
    }

    /// The server's primary message (`errmsg`).
    pub fn message(&self) -> String {
        match &self.kind {
            InputErrorKind::Io(e) => match server_error(e) {
                Some(se) => se.message.clone(),
                None => read_failure(e).message,
            },
            InputErrorKind::InvalidEncoding { encoding, bytes } => {
                let hex: Vec<String> = bytes.iter().map(|b| format!("0x{b:02x}")).collect();
                format!(
                    "invalid byte sequence for encoding \"{encoding}\": {}",
                    hex.join(" ")
                )
            }
            InputErrorKind::LiteralNewline => "literal newline found in data".into(),
            InputErrorKind::LiteralCarriageReturn => "literal carriage return found in data".into(),
            InputErrorKind::UnquotedNewline => "unquoted newline found in data".into(),
            InputErrorKind::UnquotedCarriageReturn => {
                "unquoted carriage return found in data".into()
            }
            InputErrorKind::EndMarkerCorrupt => "end-of-copy marker corrupt".into(),
            InputErrorKind::EndMarkerNewlineStyle => {
                "end-of-copy marker does not match previous newline style".into()
            }
            InputErrorKind::EndMarkerNotAlone => {
                "end-of-copy marker is not alone on its line".into()
            }
            InputErrorKind::UnterminatedCsvQuote => "unterminated CSV quoted field".into(),
            InputErrorKind::HeaderFieldCount { got, expected } => {
                format!("wrong number of fields in header line: got {got}, expected {expected}")
            }
            InputErrorKind::HeaderNullName {
                field,
                null,
                expected,
            } => format!(
                "column name mismatch in header line field {field}: got null value (\"{}\"), expected \"{}\"",
                String::from_utf8_lossy(null),
                String::from_utf8_lossy(expected)
            ),
            InputErrorKind::HeaderNameMismatch {
                field,
                got,
                expected,
            } => format!(
                "column name mismatch in header line field {field}: got \"{}\", expected \"{}\"",
                String::from_utf8_lossy(got),
                String::from_utf8_lossy(expected)
            ),
            InputErrorKind::HeaderUnexpectedDefault { .. } => {
                "unexpected default marker in COPY data".into()
            }
            InputErrorKind::HeaderExtraData => "extra data after last expected column".into(),
            InputErrorKind::BinarySignature => "COPY file signature not recognized".into(),
            InputErrorKind::BinaryHeaderMissingFlags => {
                "invalid COPY file header (missing flags)".into()
            }
            InputErrorKind::BinaryHeaderWithOids => "invalid COPY file header (WITH OIDS)".into(),
            InputErrorKind::BinaryHeaderCriticalFlags => {
                "unrecognized critical flags in COPY file header".into()
            }
            InputErrorKind::BinaryHeaderMissingLength => {
                "invalid COPY file header (missing length)".into()
            }
            InputErrorKind::BinaryHeaderWrongLength => {
                "invalid COPY file header (wrong length)".into()
            }
            InputErrorKind::BinaryFieldCount { got, expected } => {
                format!("row field count is {got}, expected {expected}")
            }
            InputErrorKind::BinaryFieldSize => "invalid field size".into(),
            InputErrorKind::BinaryFieldTooLong { limit_named, .. } => match limit_named {
                true => "string buffer exceeds maximum allowed length (1073741823 bytes)".into(),
                false => "out of memory".into(),
            },
            InputErrorKind::BinaryUnexpectedEof => "unexpected EOF in COPY data".into(),
            InputErrorKind::BinaryDataAfterTrailer => "received copy data after EOF marker".into(),
        }
    }

    /// The server's `errdetail`, if it gives one.
    pub fn detail(&self) -> Option<String> {
        match &self.kind {
            InputErrorKind::HeaderUnexpectedDefault { column } => Some(format!(
                "Column \"{}\" has no default value.",
                String::from_utf8_lossy(column)
            )),
            InputErrorKind::BinaryFieldTooLong { len, .. } => Some(format!(
                "Cannot enlarge string buffer containing 0 bytes by {len} more bytes."
            )),
            _ => None,
        }
    }

    /// The server's `errhint`, if it gives one.
    pub fn hint(&self) -> Option<&'static str> {
        match self.kind {
            InputErrorKind::LiteralNewline => Some("Use \"\\n\" to represent newline."),
            InputErrorKind::LiteralCarriageReturn => {
                Some("Use \"\\r\" to represent carriage return.")
            }
            InputErrorKind::UnquotedNewline => Some("Use quoted CSV field to represent newline."),
            InputErrorKind::UnquotedCarriageReturn => {
                Some("Use quoted CSV field to represent carriage return.")
            }
            _ => None,
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (line {})", self.message(), self.line)?;
        if let Some(h) = self.hint() {
            write!(f, "; hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            InputErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// `errcode_for_file_access()` (`elog.c`) for a read error; an error that carries no OS
/// error number is reported as 58030 `io_error`.
fn io_sqlstate(e: &io::Error) -> SqlState {
    use io::ErrorKind as K;
    let Some(errno) = e.raw_os_error() else {
        return SqlState::IO_ERROR;
    };
    match e.kind() {
        // EPERM, EACCES, EROFS
        K::PermissionDenied | K::ReadOnlyFilesystem => SqlState::INSUFFICIENT_PRIVILEGE,
        K::NotFound => SqlState::UNDEFINED_FILE,
        K::AlreadyExists => SqlState::DUPLICATE_FILE,
        // ENOTDIR, EISDIR, ENOTEMPTY
        K::NotADirectory | K::IsADirectory | K::DirectoryNotEmpty => SqlState::WRONG_OBJECT_TYPE,
        K::StorageFull => SqlState::DISK_FULL,
        _ => match errno {
            23 | 24 => SqlState::INSUFFICIENT_RESOURCES, // ENFILE, EMFILE
            5 => SqlState::IO_ERROR,                     // EIO
            _ => SqlState::INTERNAL_ERROR,
        },
    }
}

/// A source's read error as COPY reports it ("could not read from COPY file: %m", with
/// `errcode_for_file_access`'s SQLSTATE), for a reader on the backend thread that hands it
/// to the decoder through a stream.
pub fn read_failure(e: &io::Error) -> crate::stream::ServerError {
    crate::stream::ServerError {
        sqlstate: io_sqlstate(e),
        message: format!("could not read from COPY file: {}", strerror(e)),
    }
}

/// The server's own error, when the source is a stream that stopped with one.
fn server_error(e: &io::Error) -> Option<&crate::stream::ServerError> {
    e.get_ref()?.downcast_ref::<crate::stream::ServerError>()
}

/// `%m`: the OS message without Rust's " (os error N)" suffix.
fn strerror(e: &io::Error) -> String {
    let s = e.to_string();
    match (e.raw_os_error(), s.rfind(" (os error ")) {
        (Some(_), Some(i)) => s[..i].to_string(),
        _ => s,
    }
}

/// The line ending style, fixed by the first line (`cstate->eol_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Eol {
    Unknown,
    Nl,
    Cr,
    CrNl,
}

/// Where a line scan stopped; positions are absolute indices into the reader's buffer.
#[derive(Debug)]
pub(crate) enum Scan {
    /// The line's content is `[start, end)`; the next line starts at `next`. `stop` is
    /// `CopyReadLine`'s result: the line ended at EOF or at a `\.` marker.
    Line {
        end: usize,
        next: usize,
        stop: bool,
    },
    /// Bytes beyond the verified data are needed; the scan state was saved for resuming.
    NeedMore,
    Err(InputErrorKind),
}

/// Resumable state of the line scan in progress (positions relative to the line start).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ScanState {
    /// Where to resume scanning, relative to the line start.
    pub p: usize,
    /// Text: a backslash was seen. CSV: a quote character was seen.
    pub special: bool,
    /// CSV: inside quotes (as `CopyReadLineText` tracks it).
    pub in_quote: bool,
    /// CSV: the previous character was an escape inside quotes.
    pub last_was_esc: bool,
    /// CSV: the next character to look at is the first of the line.
    pub first_char: bool,
}

/// A complete line found by the scan.
#[derive(Clone, Copy, Debug)]
struct Line {
    start: usize,
    end: usize,
    next: usize,
    stop: bool,
    special: bool,
    in_quote: bool,
}

pub use crate::chunks::DEFAULT_CHUNK_BYTES;

/// Reads COPY text or CSV rows from a byte source.
///
/// `Send` whenever `R` is, so it can run on a thread of its own. After an error, or once
/// [`next_row`](Self::next_row) returned `Ok(false)`, every later call returns `Ok(false)`.
pub struct RowReader<R: Read> {
    /// The chunked, UTF-8-verified input ([`Chunks`]): a line is scanned in `data()[pos()..]`.
    input: Chunks<R>,
    /// Fast-path needles: delimiter, then backslash (text) or quote (CSV).
    needles: plain_rows::Needles,
    opts: Options,
    /// CSV: the escape character when it differs from the quote (`escapec` of the line scan).
    csv_escapec: Option<u8>,
    csv: Option<::csv_core::Reader>,
    eol: Eol,
    lineno: u64,
    /// Header lines still to be skipped (or, with `HEADER MATCH`, the one to be checked).
    header_left: u64,
    done: bool,
    scan: ScanState,
}

impl<R: Read> RowReader<R> {
    pub fn new(source: R, opts: Options) -> Self {
        Self::with_capacity(source, opts, DEFAULT_CHUNK_BYTES)
    }

    /// `chunk_bytes` (at least 1) is how much is asked of the source per read; the buffer
    /// grows beyond it only to hold a row longer than that.
    pub fn with_capacity(source: R, opts: Options, chunk_bytes: usize) -> Self {
        let csv_escapec = if opts.format == Format::Csv && opts.escape != opts.quote {
            Some(opts.escape)
        } else {
            None
        };
        let csv = if opts.format == Format::Csv && opts.escape == opts.quote {
            Some(
                ::csv_core::ReaderBuilder::new()
                    .delimiter(opts.delimiter)
                    .quote(opts.quote)
                    .quoting(true)
                    .double_quote(true)
                    .escape(None)
                    .comment(None)
                    .terminator(::csv_core::Terminator::CRLF)
                    .build(),
            )
        } else {
            None
        };
        let fourth = if opts.format == Format::Text {
            b'\\'
        } else {
            opts.quote
        };
        RowReader {
            input: Chunks::new(
                source,
                chunk_bytes,
                opts.input_encoding
                    .as_ref()
                    .map_or(Verify::None, |e| e.check),
            ),
            needles: plain_rows::Needles::new(opts.delimiter, fourth),
            header_left: opts.header,
            opts,
            csv_escapec,
            csv,
            eol: Eol::Unknown,
            lineno: 0,
            done: false,
            scan: ScanState::default(),
        }
    }

    /// Bytes read from the source so far (like the server's `bytes_processed`, this counts
    /// what was loaded, which may run ahead of the rows returned by up to one chunk).
    pub fn bytes_read(&self) -> u64 {
        self.input.bytes_read()
    }

    /// The offset in the input of the next line's start (header lines included).
    pub fn consumed(&self) -> u64 {
        self.input.consumed()
    }

    /// The next line is complete in the buffer (or the data has ended, or the bytes after
    /// the buffer are invalid): reading it will not read the source. A line ends at a
    /// newline, or at a carriage return with a byte after it (which says whether it is
    /// `\r\n`). In CSV a quoted newline may be inside a field: then this says yes too early,
    /// and the reader reads on (the hint only decides when a block is handed over).
    pub fn row_buffered(&self) -> bool {
        if self.done || self.input.at_eof() || self.input.bad() {
            return true;
        }
        let rest = &self.input.data()[self.input.pos()..];
        match memchr::memchr2(b'\n', b'\r', rest) {
            Some(i) => rest[i] == b'\n' || i + 1 < rest.len(),
            None => false,
        }
    }

    /// Lines read so far (COPY's `cur_lineno`), the header and the end marker's included.
    pub fn lines_read(&self) -> u64 {
        self.lineno
    }

    /// The options in use.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Reads the next row into `row`. `Ok(false)` at end of data (EOF, or the `\.` end
    /// marker alone on its line).
    #[inline]
    pub fn next_row(&mut self, row: &mut Row) -> Result<bool, InputError> {
        if self.done {
            return Ok(false);
        }
        if self.header_left == 0 && !self.opts.no_columns {
            match plain_rows::try_row(self, row) {
                Some(Ok(())) => return Ok(true),
                Some(Err(e)) if self.skips_split_error(&e) => return Ok(invalid_row(row, e)),
                Some(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                None => {}
            }
        }
        match self.next_row_inner(row) {
            Ok(true) => Ok(true),
            Err(e) if self.skips_split_error(&e) => Ok(invalid_row(row, e)),
            other => {
                self.done = true;
                other
            }
        }
    }

    /// For `HEADER MATCH`: reads the header line and splits it into `row` exactly like a
    /// data row (NULL and DEFAULT markers, de-escaping and its errors included), as the
    /// server does before comparing the names with the columns (`line_no()` is 1). Like the
    /// server, it does so even when the header line ended the data (EOF, with or without
    /// text, or `\.`): an empty input gives one empty field. If the data ended there,
    /// [`next_row`](Self::next_row) then returns `Ok(false)`.
    ///
    /// Without a call, `next_row` skips the header by itself (plain `HEADER`).
    ///
    /// # Panics
    ///
    /// If `header` is not set in the options, or the header was already read.
    pub fn read_header(&mut self, row: &mut Row) -> Result<(), InputError> {
        assert!(
            self.header_left == 1,
            "read_header: not one header line to read (HEADER off or n, or already read)"
        );
        self.header_left = 0;
        let res = (|| {
            self.lineno += 1;
            let line = self.read_line()?;
            let stop = line.stop;
            self.split_line(line, row)?;
            Ok(stop)
        })();
        match res {
            Ok(stop) => {
                self.done |= stop;
                Ok(())
            }
            Err(e) => {
                self.done = true;
                Err(e)
            }
        }
    }

    fn next_row_inner(&mut self, row: &mut Row) -> Result<bool, InputError> {
        if self.header_left > 0 && self.opts.header_match.is_some() {
            if let Err(e) = self.read_header(row) {
                // a bad escaped field comes after the DEFAULT markers before it
                if let (Some(partial), Err(kind)) = (&e.partial, self.check_header_defaults(row)) {
                    return Err(InputError::with_line(
                        kind,
                        e.line,
                        partial.raw_line().into_owned(),
                    ));
                }
                return Err(e);
            }
            if let Err(kind) = self.check_header(row) {
                self.done = true;
                return Err(InputError::with_line(
                    kind,
                    row.line_no,
                    row.raw_line().into_owned(),
                ));
            }
            if self.done {
                return Ok(false);
            }
        }
        while self.header_left > 0 {
            // NextCopyFromRawFields: each header line is read (with all line-level checks)
            // and thrown away; if reading one hit EOF or `\.`, there is no data.
            self.header_left -= 1;
            self.lineno += 1;
            let line = self.read_line()?;
            self.input.consume_to(line.next);
            if line.stop {
                self.header_left = 0;
                return Ok(false);
            }
        }
        self.lineno += 1;
        let line = match self.read_line() {
            Ok(line) => line,
            Err(e) if self.skips_invalid_line(&e) => return self.skip_invalid_line(e, row),
            Err(e) => return Err(e),
        };
        if line.stop && line.end == line.start {
            self.input.consume_to(line.next);
            return Ok(false);
        }
        // a stream ends at the marker, also after data on its line (the line is a row)
        self.done |= line.stop && self.opts.stream;
        self.split_line(line, row)
    }

    /// HEADER MATCH on the header row `row` (`NextCopyFromRawFields`): the DEFAULT marker
    /// where its column has no default (found while splitting, as in any row), then the number
    /// of fields, then each name in input order (exact bytes, as `namestrcmp`). A table
    /// without columns takes only an empty header line.
    fn check_header(&self, row: &Row) -> Result<(), InputErrorKind> {
        let Some(m) = &self.opts.header_match else {
            return Ok(());
        };
        if self.opts.no_columns {
            return match row.line_len() {
                0 => Ok(()),
                _ => Err(InputErrorKind::HeaderExtraData),
            };
        }
        self.check_header_defaults(row)?;
        if row.len() != m.names.len() {
            return Err(InputErrorKind::HeaderFieldCount {
                got: row.len(),
                expected: m.names.len(),
            });
        }
        for (i, expected) in m.names.iter().enumerate() {
            let got = match row.field(i) {
                Field::Value(v) => v,
                // the server compares the field's text, which for the marker is the marker
                Field::Default => self.opts.default.as_deref().unwrap_or_default(),
                Field::Null => {
                    return Err(InputErrorKind::HeaderNullName {
                        field: i + 1,
                        null: self.opts.null.clone(),
                        expected: expected.clone(),
                    });
                }
            };
            if got != expected.as_slice() {
                return Err(InputErrorKind::HeaderNameMismatch {
                    field: i + 1,
                    got: got.to_vec(),
                    expected: expected.clone(),
                });
            }
        }
        Ok(())
    }

    /// HEADER MATCH's first check: the DEFAULT marker in a header field whose column has no
    /// default (the fields of `row` that map to a column).
    fn check_header_defaults(&self, row: &Row) -> Result<(), InputErrorKind> {
        let Some(m) = &self.opts.header_match else {
            return Ok(());
        };
        for (i, name) in m.names.iter().enumerate().take(row.len()) {
            if row.field(i) == Field::Default && !m.has_default[i] {
                return Err(InputErrorKind::HeaderUnexpectedDefault {
                    column: name.clone(),
                });
            }
        }
        Ok(())
    }

    /// `CopyReadAttributesText`/`CSV` on a line found by [`read_line`](Self::read_line);
    /// consumes it.
    fn split_line(&mut self, line: Line, row: &mut Row) -> Result<bool, InputError> {
        row.reset();
        row.line_no = self.lineno;
        row.raw_len = line.next - line.start;
        row.line_len = line.end - line.start;
        let data = &self.input.data()[line.start..line.end];
        if self.opts.no_columns {
            // not split: the caller refuses a non-empty line, showing it
            row.raw.clear();
            row.raw.extend_from_slice(data);
            row.raw_kind = RawLine::Copied;
            self.input.consume_to(line.next);
            return Ok(true);
        }
        let res = match self.opts.format {
            Format::Text if !line.special => {
                split_plain(data, &self.opts, row);
                Ok(())
            }
            Format::Text => text::split_escaped(data, &self.opts, row)
                .map_err(|kind| InputError::in_split(kind, self.lineno, data.to_vec(), row)),
            Format::Csv if !line.special => {
                split_plain(data, &self.opts, row);
                Ok(())
            }
            Format::Csv => csv::split(data, &self.opts, self.csv.as_mut(), line.in_quote, row)
                .map_err(|kind| InputError::with_line(kind, self.lineno, data.to_vec())),
        };
        let res = res.map(|()| true);
        self.input.consume_to(line.next);
        res
    }

    /// `CopyReadLine`: scans the next line, loading and verifying data as needed.
    fn read_line(&mut self) -> Result<Line, InputError> {
        self.scan = ScanState {
            first_char: true,
            ..ScanState::default()
        };
        loop {
            let at_eof = self.input.at_eof();
            let data = self.input.data();
            let pos = self.input.pos();
            let r = match self.opts.format {
                Format::Text => text::scan_line(
                    data,
                    pos,
                    &mut self.scan,
                    &mut self.eol,
                    at_eof,
                    self.opts.server_major >= 18,
                ),
                Format::Csv => csv::scan_line(
                    data,
                    pos,
                    &mut self.scan,
                    &mut self.eol,
                    &mut self.lineno,
                    at_eof,
                    self.opts.quote,
                    self.csv_escapec,
                    self.opts.server_major < 18,
                ),
            };
            match r {
                Scan::Line { end, next, stop } => {
                    return Ok(Line {
                        start: pos,
                        end,
                        next,
                        stop,
                        special: self.scan.special,
                        in_quote: self.scan.in_quote,
                    });
                }
                Scan::Err(kind) => return Err(InputError::new(kind, self.lineno)),
                Scan::NeedMore => {
                    if self.input.bad() {
                        return Err(self.encoding_error());
                    }
                    debug_assert!(!at_eof);
                    self.fill()?;
                }
            }
        }
    }

    /// Whether the read of a data line that failed with `e` goes on after that line
    /// ([`Options::skip_invalid_lines`]): `e` is about bytes invalid in the input's encoding,
    /// outside a CSV quote (inside one, where the row ends is not known).
    fn skips_invalid_line(&self, e: &InputError) -> bool {
        self.opts.skip_invalid_lines
            && matches!(e.kind, InputErrorKind::InvalidEncoding { .. })
            && self.input.bad()
            && !self.scan.in_quote
    }

    /// Whether a line whose splitting failed with `e` is returned as an invalid row
    /// ([`Options::skip_invalid_lines`]): `e` is about text escapes that gave bytes invalid in
    /// the server encoding, in a line read whole (and consumed).
    fn skips_split_error(&self, e: &InputError) -> bool {
        self.opts.skip_invalid_lines
            && matches!(e.kind, InputErrorKind::InvalidEncoding { .. })
            && e.partial.is_some()
    }

    /// The line with invalid bytes, up to its end (`\n`, `\r\n` or `\r`, or the end of the
    /// input) into `row` as an [`invalid`](Row::invalid) row with `e`; reading goes on after it.
    fn skip_invalid_line(&mut self, e: InputError, row: &mut Row) -> Result<bool, InputError> {
        let (raw, eol) = self
            .input
            .skip_invalid_line()
            .map_err(|io| InputError::new(InputErrorKind::Io(io), self.lineno))?;
        row.reset();
        row.raw.clear();
        row.raw.extend_from_slice(&raw[..raw.len() - eol]);
        row.raw_kind = RawLine::Invalid;
        row.line_no = self.lineno;
        row.raw_len = raw.len();
        row.line_len = raw.len() - eol;
        row.buf.extend_from_slice(e.message().as_bytes());
        Ok(true)
    }

    /// `CopyConversionError`: the input is invalid right after the verified data.
    fn encoding_error(&mut self) -> InputError {
        match self.input.invalid_bytes() {
            Ok(bytes) => {
                let encoding = self.opts.input_encoding.as_ref().map(|e| e.name.clone());
                let kind = InputErrorKind::InvalidEncoding {
                    encoding: encoding.unwrap_or_default(),
                    bytes,
                };
                InputError::new(kind, self.lineno)
            }
            Err(e) => InputError::new(InputErrorKind::Io(e), self.lineno),
        }
    }

    /// Loads more data (see [`Chunks::fill`]).
    fn fill(&mut self) -> Result<(), InputError> {
        self.input
            .fill()
            .map_err(|e| InputError::new(InputErrorKind::Io(e), self.lineno))
    }
}

/// `row`, whose line failed to split with `e` (and was consumed), as an invalid row: no
/// fields, the line as read, `e`'s message. True (a row was read).
#[cold]
fn invalid_row(row: &mut Row, e: InputError) -> bool {
    row.reset();
    row.raw.clear();
    row.raw
        .extend_from_slice(e.raw_line.as_deref().unwrap_or_default());
    row.raw_kind = RawLine::Invalid;
    row.buf.extend_from_slice(e.message().as_bytes());
    true
}

/// Splits a line that needs no de-escaping (text without backslash, CSV without quote
/// character): one copy of the line, each delimiter overwritten by NUL, plus a final NUL.
#[inline]
fn split_plain(line: &[u8], opts: &Options, row: &mut Row) {
    let delim = opts.delimiter;
    row.raw_kind = RawLine::InBuf {
        delim,
        quote: opts.quote,
    };
    row.buf.reserve(line.len() + 1);
    row.buf.extend_from_slice(line);
    row.buf.push(0);
    let null = opts.null.as_slice();
    let default = opts.default.as_deref();
    let mut start = 0;
    for i in memchr::memchr_iter(delim, line) {
        row.buf[i] = 0;
        push_plain(row, &line[start..i], start, null, default);
        start = i + 1;
    }
    push_plain(row, &line[start..], start, null, default);
}

#[inline(always)]
fn push_plain(row: &mut Row, raw: &[u8], start: usize, null: &[u8], default: Option<&[u8]>) {
    let kind = marker_kind(raw, null, default, true);
    row.spans.push(Span {
        start,
        len: raw.len(),
        kind,
        quoted: false,
    });
}

/// NULL (compared only if `null_ok`) first, then DEFAULT, both on the raw field.
#[inline(always)]
fn marker_kind(raw: &[u8], null: &[u8], default: Option<&[u8]>, null_ok: bool) -> u8 {
    if null_ok && raw.len() == null.len() && raw == null {
        KIND_NULL
    } else if matches!(default, Some(d) if d == raw) {
        KIND_DEFAULT
    } else {
        KIND_VALUE
    }
}

/// The line ending byte that must follow `\.` (`\r` or `\n`) for the file's style; any
/// of the two while the style is unknown (then `c` itself is returned).
#[inline]
pub(crate) fn marker_eol(eol: Eol, c: u8) -> u8 {
    match eol {
        Eol::Nl | Eol::CrNl => b'\n',
        Eol::Cr => b'\r',
        Eol::Unknown => c,
    }
}

/// Returns the byte at `i`, the server's zero pad at EOF, or `None` if more data is needed.
#[inline]
pub(crate) fn peek(data: &[u8], i: usize, at_eof: bool) -> Option<u8> {
    if i < data.len() {
        Some(data[i])
    } else if at_eof {
        Some(0)
    } else {
        None
    }
}
