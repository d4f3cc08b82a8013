//! COPY's binary format (`ref/copy.sgml` "Binary Format"; `ReceiveCopyBinaryHeader`,
//! `CopyFromBinaryOneRow` and `CopyReadBinaryAttribute` in `copyfromparse.c`), as a
//! [`Decoder`]: the header checked and skipped, then one [`Row`] per tuple whose fields are the
//! raw bytes of each value (or NULL), for the column types' receive functions.
//!
//! ```text
//!  header   "PGCOPY\n\377\r\n\0"  int32 flags  int32 extension length  extension bytes
//!  tuple    int16 field count  { int32 length (-1 = NULL)  length bytes }*
//!  trailer  int16 -1
//! ```
//!
//! All integers are in network byte order. What the server checks, and so this decoder, in the
//! server's order:
//!
//! - The header, before the first tuple: the signature ("COPY file signature not recognized"),
//!   the flags (bit 16, OIDs: "invalid COPY file header (WITH OIDS)"; any other of bits 16-31:
//!   "unrecognized critical flags in COPY file header"; bits 0-15 are ignored), the extension
//!   length ("invalid COPY file header (missing length)" when absent or negative) and the
//!   extension itself, skipped ("invalid COPY file header (wrong length)" when the data ends in
//!   it). These errors come before the server installs COPY's error context: they have none
//!   ([`InputErrorKind::is_header`]).
//! - Each tuple counts as a line (`cur_lineno` is incremented before its field count is
//!   read). The data may end instead of a field count, even in the middle of one: that is the
//!   end of the data, with or without the trailer.
//! - The trailer (count -1) must be the last byte of the data: one more byte is "received
//!   copy data after EOF marker" (the server reads one byte after it, which for COPY FROM
//!   STDIN waits for the client's CopyDone or CopyFail).
//! - Any other count must be the number of input columns ("row field count is %d,
//!   expected %d").
//! - Per field: a length, -1 for NULL, otherwise at least 0 ("invalid field size"); the data
//!   ending in a length or a value is "unexpected EOF in COPY data"; a length of
//!   `MaxAllocSize` or more is 54000 "out of memory" (18: "string buffer exceeds maximum allowed
//!   length (1073741823 bytes)"), with the same DETAIL, whatever
//!   follows (the server makes room for the value before it reads it). These name the column
//!   ([`InputError::field`]).
//!
//! The server reads and converts a tuple one field at a time, so a value that its receive
//! function rejects is reported before a defect further on in the same tuple. This decoder
//! reads whole tuples; when one is cut short, the error carries the fields read before the
//! defect ([`InputError::partial`]), for the caller to convert first.
//!
//! Values are not checked here: the receive functions check them (text fields for the
//! encoding, `pq_getmsgtext`). No encoding conversion applies to the byte stream.

use crate::chunks::{Chunks, Verify};
use crate::decode::Decoder;
use crate::input::{InputError, InputErrorKind, Row};
use std::io::Read;

/// The 11 bytes every binary COPY file starts with.
pub const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

/// The flags bit that announced OIDs (no longer supported).
const FLAG_OIDS: u32 = 1 << 16;

/// `MaxAllocSize`: the server's field buffer (`attribute_buf`) cannot hold this many bytes.
const MAX_ALLOC_SIZE: i32 = 0x3fff_ffff;

/// Reads COPY binary data; see the module documentation.
pub struct BinaryReader<R: Read> {
    input: Chunks<R>,
    /// How many fields every tuple must have (the input columns).
    fields: usize,
    header_read: bool,
    /// COPY's `cur_lineno`: the tuple being read (the trailer counts as one).
    tuple: u64,
    /// The data ended, or an error was returned.
    done: bool,
    /// 15-18: the wording of one error changed in 18.
    server_major: u32,
}

impl<R: Read> BinaryReader<R> {
    /// A reader of tuples with `fields` fields, asking `chunk_bytes` of `src` at a time, with
    /// the errors of PostgreSQL `server_major`.
    pub fn new(src: R, fields: usize, chunk_bytes: usize, server_major: u32) -> Self {
        BinaryReader {
            input: Chunks::new(src, chunk_bytes, Verify::None),
            fields,
            header_read: false,
            tuple: 0,
            done: false,
            server_major,
        }
    }

    /// Makes `n` bytes from the unit start available: false if the data ends first.
    fn need(&mut self, n: usize) -> Result<bool, InputError> {
        while self.input.data().len() - self.input.pos() < n {
            if self.input.at_eof() {
                return Ok(false);
            }
            if let Err(e) = self.input.fill() {
                return Err(InputError::new(InputErrorKind::Io(e), self.tuple));
            }
        }
        Ok(true)
    }

    /// The `N` bytes at `at` from the unit start (available: see [`need`](Self::need)).
    #[inline]
    fn bytes<const N: usize>(&self, at: usize) -> [u8; N] {
        let p = self.input.pos() + at;
        self.input.data()[p..p + N]
            .try_into()
            .expect("an N-byte slice")
    }

    fn header_error(&self, kind: InputErrorKind) -> InputError {
        InputError::new(kind, 0)
    }

    /// `ReceiveCopyBinaryHeader`.
    fn read_header(&mut self) -> Result<(), InputError> {
        use InputErrorKind::*;
        if !self.need(SIGNATURE.len())? || self.bytes::<11>(0) != *SIGNATURE {
            return Err(self.header_error(BinarySignature));
        }
        if !self.need(15)? {
            return Err(self.header_error(BinaryHeaderMissingFlags));
        }
        let flags = u32::from_be_bytes(self.bytes::<4>(11));
        if flags & FLAG_OIDS != 0 {
            return Err(self.header_error(BinaryHeaderWithOids));
        }
        if (flags & !FLAG_OIDS) >> 16 != 0 {
            return Err(self.header_error(BinaryHeaderCriticalFlags));
        }
        if !self.need(19)? {
            return Err(self.header_error(BinaryHeaderMissingLength));
        }
        let ext = i32::from_be_bytes(self.bytes::<4>(15));
        if ext < 0 {
            return Err(self.header_error(BinaryHeaderMissingLength));
        }
        let next = self.input.pos() + 19;
        self.input.consume_to(next);
        // the extension is skipped a buffer at a time, not loaded whole
        let mut left = ext as usize;
        while left > 0 {
            if !self.need(1)? {
                return Err(self.header_error(BinaryHeaderWrongLength));
            }
            let have = self.input.data().len() - self.input.pos();
            let step = have.min(left);
            let next = self.input.pos() + step;
            self.input.consume_to(next);
            left -= step;
        }
        Ok(())
    }

    /// The tuple whose field count was just read, when all of it is in the buffer and every
    /// field length is valid: its fields into `row` (begun) with one copy of the tuple, and
    /// consumed. False, with nothing consumed, otherwise: [`read_tuple`](Self::read_tuple)'s
    /// field-by-field loop then reads it, filling the buffer, or reports the defect.
    #[inline]
    fn read_buffered_tuple(&mut self, row: &mut Row) -> bool {
        let data = &self.input.data()[self.input.pos()..];
        let mut at = 2;
        for _ in 0..self.fields {
            let Some(&[a, b, c, d]) = data.get(at..at + 4) else {
                return false;
            };
            let len = i32::from_be_bytes([a, b, c, d]);
            at += 4;
            if len == -1 {
                row.push_null();
                continue;
            }
            if !(0..MAX_ALLOC_SIZE).contains(&len) || data.len() - at < len as usize {
                return false;
            }
            row.push_value_at(at, len as usize);
            at += len as usize;
        }
        row.take_tuple(&data[..at]);
        row.end(at);
        let next = self.input.pos() + at;
        self.input.consume_to(next);
        true
    }

    /// An error at field `field` of the current tuple, with the fields read before it.
    fn field_error(&self, kind: InputErrorKind, field: usize, row: &Row) -> InputError {
        let mut e = InputError::new(kind, self.tuple);
        e.field = Some(field);
        e.partial = Some(Box::new(row.clone()));
        e
    }

    fn read_tuple(&mut self, row: &mut Row) -> Result<bool, InputError> {
        if !self.header_read {
            self.read_header()?;
            self.header_read = true;
        }
        self.tuple += 1;
        if !self.need(2)? {
            // the end of the data, also in the middle of a field count (as the server)
            return Ok(false);
        }
        let count = i16::from_be_bytes(self.bytes::<2>(0));
        if count == -1 {
            if self.need(3)? {
                return Err(InputError::new(
                    InputErrorKind::BinaryDataAfterTrailer,
                    self.tuple,
                ));
            }
            let next = self.input.pos() + 2;
            self.input.consume_to(next);
            return Ok(false);
        }
        if count as i64 != self.fields as i64 {
            return Err(InputError::new(
                InputErrorKind::BinaryFieldCount {
                    got: count as i32,
                    expected: self.fields,
                },
                self.tuple,
            ));
        }
        row.begin(self.tuple);
        if self.read_buffered_tuple(row) {
            return Ok(true);
        }
        row.begin(self.tuple);
        // offsets from the tuple's start: a fill may move the buffer
        let mut at = 2;
        for field in 0..self.fields {
            if !self.need(at + 4)? {
                return Err(self.field_error(InputErrorKind::BinaryUnexpectedEof, field, row));
            }
            let len = i32::from_be_bytes(self.bytes::<4>(at));
            at += 4;
            if len == -1 {
                row.push_null();
                continue;
            }
            if len < 0 {
                return Err(self.field_error(InputErrorKind::BinaryFieldSize, field, row));
            }
            if len >= MAX_ALLOC_SIZE {
                // the server cannot make room for it before it reads it
                let e = InputErrorKind::BinaryFieldTooLong {
                    len,
                    limit_named: self.server_major >= 18,
                };
                return Err(self.field_error(e, field, row));
            }
            let len = len as usize;
            if !self.need(at + len)? {
                return Err(self.field_error(InputErrorKind::BinaryUnexpectedEof, field, row));
            }
            let p = self.input.pos() + at;
            row.push_value(&self.input.data()[p..p + len]);
            at += len;
        }
        row.end(at);
        let next = self.input.pos() + at;
        self.input.consume_to(next);
        Ok(true)
    }
}

impl<R: Read> Decoder for BinaryReader<R> {
    fn next_row(&mut self, row: &mut Row) -> Result<bool, InputError> {
        if self.done {
            return Ok(false);
        }
        let got = self.read_tuple(row);
        if !matches!(got, Ok(true)) {
            self.done = true;
        }
        got
    }

    fn bytes_read(&self) -> u64 {
        self.input.bytes_read()
    }

    fn lines_read(&self) -> u64 {
        self.tuple
    }

    /// The next tuple's field count and every field are in the buffer (a negative count, the
    /// trailer, needs nothing more).
    fn row_buffered(&self) -> bool {
        if self.done || self.input.at_eof() {
            return true;
        }
        let rest = &self.input.data()[self.input.pos()..];
        let Some(&[a, b]) = rest.get(..2) else {
            return false;
        };
        let fields = i16::from_be_bytes([a, b]);
        let mut at = 2usize;
        for _ in 0..fields.max(0) {
            let Some(&[a, b, c, d]) = rest.get(at..at + 4) else {
                return false;
            };
            let len = i32::from_be_bytes([a, b, c, d]);
            at += 4 + len.max(0) as usize;
            if at > rest.len() {
                return false;
            }
        }
        true
    }
}

/// Writes COPY binary data: for tests, benchmarks and the fuzz targets' valid streams.
pub mod write {
    use super::SIGNATURE;

    /// The header with `flags` and an extension of `ext` bytes.
    pub fn header(out: &mut Vec<u8>, flags: u32, ext: &[u8]) {
        out.extend_from_slice(SIGNATURE);
        out.extend_from_slice(&flags.to_be_bytes());
        out.extend_from_slice(&(ext.len() as i32).to_be_bytes());
        out.extend_from_slice(ext);
    }

    /// One tuple: `None` is NULL.
    pub fn tuple(out: &mut Vec<u8>, fields: &[Option<&[u8]>]) {
        out.extend_from_slice(&(fields.len() as i16).to_be_bytes());
        for f in fields {
            match f {
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(v) => {
                    out.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    out.extend_from_slice(v);
                }
            }
        }
    }

    /// The trailer.
    pub fn trailer(out: &mut Vec<u8>) {
        out.extend_from_slice(&(-1i16).to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Field;

    fn rows(
        data: &[u8],
        fields: usize,
        chunk: usize,
    ) -> (Vec<Vec<Option<Vec<u8>>>>, Option<InputError>) {
        let mut r = BinaryReader::new(data, fields, chunk, 18);
        let mut row = Row::new();
        let mut out = Vec::new();
        loop {
            match r.next_row(&mut row) {
                Ok(true) => out.push(
                    (0..row.len())
                        .map(|i| match row.field(i) {
                            Field::Value(v) => Some(v.to_vec()),
                            _ => None,
                        })
                        .collect(),
                ),
                Ok(false) => return (out, None),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    fn valid() -> Vec<u8> {
        let mut d = Vec::new();
        write::header(&mut d, 0, &[]);
        write::tuple(&mut d, &[Some(&1i32.to_be_bytes()), Some(b"abc")]);
        write::tuple(&mut d, &[None, Some(b"")]);
        write::trailer(&mut d);
        d
    }

    #[test]
    fn reads_tuples_in_any_chunking() {
        let d = valid();
        for chunk in [1, 2, 3, 7, 1 << 16] {
            let (got, err) = rows(&d, 2, chunk);
            assert!(err.is_none(), "chunk {chunk}");
            assert_eq!(
                got,
                vec![
                    vec![Some(vec![0, 0, 0, 1]), Some(b"abc".to_vec())],
                    vec![None, Some(Vec::new())]
                ]
            );
        }
    }

    #[test]
    fn header_defects() {
        use InputErrorKind::*;
        let kind = |d: &[u8]| rows(d, 2, 5).1.map(|e| e.kind);
        assert!(matches!(kind(b"PGCOPY\n\xff\r\n"), Some(BinarySignature)));
        assert!(matches!(kind(b"PGCOPY\n\xff\r\nX"), Some(BinarySignature)));
        assert!(matches!(kind(b""), Some(BinarySignature)));
        let mut d = SIGNATURE.to_vec();
        d.extend_from_slice(&[0, 0]);
        assert!(matches!(kind(&d), Some(BinaryHeaderMissingFlags)));
        let with_flags = |f: u32| {
            let mut d = SIGNATURE.to_vec();
            d.extend_from_slice(&f.to_be_bytes());
            d
        };
        assert!(matches!(
            kind(&with_flags(1 << 16)),
            Some(BinaryHeaderWithOids)
        ));
        assert!(matches!(
            kind(&with_flags((1 << 16) | (1 << 20))),
            Some(BinaryHeaderWithOids)
        ));
        assert!(matches!(
            kind(&with_flags(1 << 31)),
            Some(BinaryHeaderCriticalFlags)
        ));
        assert!(matches!(
            kind(&with_flags(1 << 17)),
            Some(BinaryHeaderCriticalFlags)
        ));
        // low bits are ignored; then the length is missing
        assert!(matches!(
            kind(&with_flags(0xffff)),
            Some(BinaryHeaderMissingLength)
        ));
        let mut d = with_flags(0);
        d.extend_from_slice(&(-1i32).to_be_bytes());
        assert!(matches!(kind(&d), Some(BinaryHeaderMissingLength)));
        let mut d = with_flags(0);
        d.extend_from_slice(&5i32.to_be_bytes());
        d.extend_from_slice(b"abcd");
        assert!(matches!(kind(&d), Some(BinaryHeaderWrongLength)));
        assert!(InputError::new(BinaryHeaderWrongLength, 0).kind.is_header());
    }

    #[test]
    fn extension_is_skipped_and_low_flags_ignored() {
        let mut d = Vec::new();
        write::header(&mut d, 0x1234, &[7u8; 1000]);
        write::tuple(&mut d, &[Some(b"x"), None]);
        for chunk in [1, 10, 4096] {
            let (got, err) = rows(&d, 2, chunk);
            assert!(err.is_none());
            // no trailer: the data may end after a whole tuple
            assert_eq!(got, vec![vec![Some(b"x".to_vec()), None]]);
        }
    }

    #[test]
    fn end_of_data() {
        // a field count cut in half is the end of the data, as in the server
        let mut d = valid();
        d.truncate(d.len() - 2);
        d.push(0);
        let (got, err) = rows(&d, 2, 3);
        assert_eq!(got.len(), 2);
        assert!(err.is_none());
        // a header alone is no rows
        let mut h = Vec::new();
        write::header(&mut h, 0, &[]);
        assert_eq!(rows(&h, 2, 3).0.len(), 0);
        // one byte after the trailer, on the trailer's line
        let mut d = valid();
        d.push(0);
        let (got, err) = rows(&d, 2, 3);
        assert_eq!(got.len(), 2);
        let e = err.unwrap();
        assert!(matches!(e.kind, InputErrorKind::BinaryDataAfterTrailer));
        assert_eq!(e.line, 3);
        assert_eq!(e.field, None);
        assert_eq!(e.message(), "received copy data after EOF marker");
    }

    #[test]
    fn tuple_defects() {
        let mut h = Vec::new();
        write::header(&mut h, 0, &[]);
        let case = |body: &[u8]| {
            let mut d = h.clone();
            write::tuple(&mut d, &[Some(b"ok"), Some(b"ok")]);
            d.extend_from_slice(body);
            let (got, e) = rows(&d, 2, 4);
            assert_eq!(got.len(), 1);
            e.expect("an error")
        };
        let e = case(&3i16.to_be_bytes());
        assert_eq!(e.message(), "row field count is 3, expected 2");
        assert_eq!((e.line, e.field), (2, None));
        let e = case(&(-2i16).to_be_bytes());
        assert_eq!(e.message(), "row field count is -2, expected 2");
        // a length of -2 in the second field: the first is handed back
        let mut b = 2i16.to_be_bytes().to_vec();
        b.extend_from_slice(&1i32.to_be_bytes());
        b.push(b'a');
        b.extend_from_slice(&(-2i32).to_be_bytes());
        let e = case(&b);
        assert_eq!(e.message(), "invalid field size");
        assert_eq!((e.line, e.field), (2, Some(1)));
        let partial = e.partial.as_ref().unwrap();
        assert_eq!(partial.len(), 1);
        assert_eq!(partial.field(0), Field::Value(b"a"));
        // cut inside a value, and inside a length
        let mut b = 2i16.to_be_bytes().to_vec();
        b.extend_from_slice(&10i32.to_be_bytes());
        b.extend_from_slice(b"short");
        let e = case(&b);
        assert_eq!(e.message(), "unexpected EOF in COPY data");
        assert_eq!((e.field, e.partial.as_ref().unwrap().len()), (Some(0), 0));
        let mut b = 2i16.to_be_bytes().to_vec();
        b.extend_from_slice(&[0, 0]);
        let e = case(&b);
        assert_eq!(e.message(), "unexpected EOF in COPY data");
        assert_eq!(
            e.sqlstate(),
            crate::sqlstate::SqlState::BAD_COPY_FILE_FORMAT
        );
        // a length the server cannot allocate, not an EOF
        let mut b = 2i16.to_be_bytes().to_vec();
        b.extend_from_slice(&0x3fff_ffffi32.to_be_bytes());
        let e = case(&b);
        assert_eq!(
            e.message(),
            "string buffer exceeds maximum allowed length (1073741823 bytes)"
        );
        assert_eq!(
            e.detail().as_deref(),
            Some("Cannot enlarge string buffer containing 0 bytes by 1073741823 more bytes.")
        );
        assert_eq!(
            e.sqlstate(),
            crate::sqlstate::SqlState::PROGRAM_LIMIT_EXCEEDED
        );
        assert_eq!(e.field, Some(0));
    }

    #[test]
    fn zero_columns() {
        let mut d = Vec::new();
        write::header(&mut d, 0, &[]);
        write::tuple(&mut d, &[]);
        write::tuple(&mut d, &[]);
        write::trailer(&mut d);
        let (got, err) = rows(&d, 0, 3);
        assert!(err.is_none());
        assert_eq!(got, vec![Vec::<Option<Vec<u8>>>::new(), Vec::new()]);
    }

    #[test]
    fn a_value_may_hold_any_byte() {
        let mut d = Vec::new();
        write::header(&mut d, 0, &[]);
        write::tuple(&mut d, &[Some(b"\0\xff\n")]);
        let (got, _) = rows(&d, 1, 2);
        assert_eq!(got, vec![vec![Some(b"\0\xff\n".to_vec())]]);
    }
}
