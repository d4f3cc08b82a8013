//! The fused path for lines of plain integers: a row whose every field is `-?[0-9]+` and
//! whose table takes every field as an integer column is read, converted and formed into its
//! tuple in one pass over the input, instead of split into the row (`fast.rs`), converted
//! from the row, and formed from the converted values (`pipeline.rs`), three passes that
//! each walk the row again (the reader thread's time on a table of ints: A/B in
//! `bench/README.md`).
//!
//! Per field: the digits are counted and, below 8 of them, converted from one 8-byte load of
//! the input (`int::leading_digits`; a longer field goes to the int core), the value is
//! checked against the field's and the column's width and written into the column's bytes
//! of the row's tuple slot (which holds the plan's template already: `RowBlock::fill`), and
//! the byte after the field must be the delimiter (the line ending after the last field).
//! Then the line is copied into the row's buffer as it is (what a CONTEXT line shows if an
//! error or a cancel comes while the row is loaded), with its number and lengths, and
//! consumed. The row gets no fields, and the values are not kept apart from the tuple: the
//! tuple is all the loader reads of such a row, and each span, NUL and value written per
//! field was a store into memory the other thread reads later (skipping them made four
//! concurrent sessions ~10% faster: `bench/README.md`).
//!
//! Anything else declines before anything is consumed, and the row takes the ordinary path
//! from its first byte: a NULL or DEFAULT marker, a sign other than a leading `-`, spaces, an
//! underscore or a radix prefix (the server's grammar, which the int core follows), a value
//! out of its column's range, a wrong number of fields, a line ending that is not the file's,
//! a line not complete in the verified input. Declining only costs time, so the path is only
//! tried where it cannot be wrong ([`RowReader::int_rows`]): markers and special characters
//! that could be read as part of an integer field switch it off.

use super::{Eol, Format, RawLine, Row, RowReader};
use crate::chunks::PAD;
use crate::int;
use crate::pipeline::{FusedPlan, IntPlan, RowMark};
use std::io::Read;

/// Copies of the line into the row buffer are made in blocks of this size.
const BLOCK: usize = 32;

/// Could `c` be part of a field this path takes?
fn in_field(c: u8) -> bool {
    c == b'-' || c.is_ascii_digit()
}

/// Could the marker `m` equal a field this path takes? (It would have to be `-?[0-9]+`;
/// any marker of those characters is treated as if it could.)
fn numeric_marker(m: &[u8]) -> bool {
    !m.is_empty() && m.iter().all(|&c| in_field(c))
}

impl<R: Read> RowReader<R> {
    /// Whether [`next_int_row`](Self::next_int_row) may be used with `plan`: text or CSV
    /// rows whose every field is converted and formed into the tuple, where neither the
    /// delimiter, the CSV quote nor a marker could be mistaken for part of an integer.
    pub fn int_rows(&self, plan: &IntPlan) -> bool {
        let o = &self.opts;
        let Some(tp) = &plan.tuple else { return false };
        !plan.binary
            && tp.field_columns.is_some()
            && !o.no_columns
            && tp.nfields == plan.fields.len()
            && plan.fields.iter().all(Option::is_some)
            && !in_field(o.delimiter)
            && (o.format == Format::Text || !in_field(o.quote))
            && !numeric_marker(&o.null)
            && !o.default.as_deref().is_some_and(numeric_marker)
    }

    /// Reads the next row if it is a line of plain integers (see the module docs) that every
    /// field of `plan` converts: the row's tuple in `tuple`, a slot that holds the plan's
    /// template (only the columns' bytes are written), and in `row` its line (no fields: see
    /// the module docs), number and lengths; returns its mark. None, with nothing consumed,
    /// `row` in an unspecified state and some columns' bytes of `tuple` written, for any other
    /// row. Only with a plan [`int_rows`](Self::int_rows) accepts.
    #[inline(always)]
    pub fn next_int_row(
        &mut self,
        plan: &FusedPlan,
        row: &mut Row,
        tuple: &mut [u8],
    ) -> Option<RowMark> {
        let eol = self.eol;
        if self.done || self.header_pending || eol == Eol::Unknown {
            return None;
        }
        let start = self.input.pos();
        let limit = self.input.data().len();
        let data = self.input.padded();
        debug_assert!(limit + PAD <= data.len());
        let delim = self.opts.delimiter;
        let csv = self.opts.format == Format::Csv;
        let last = plan.fields.len() - 1;
        let mut p = start;
        for (f, field) in plan.fields.iter().enumerate() {
            if p >= limit {
                return None;
            }
            let neg = data[p] == b'-';
            let q = p + neg as usize;
            // `q <= limit`, and PAD (>= 8) bytes after `limit` are readable
            let word = data[q..].first_chunk::<8>()?;
            let (digits, magnitude) = int::leading_digits(u64::from_le_bytes(*word));
            if digits == 0 {
                return None;
            }
            let mut e = q + digits;
            let v = if digits < 8 {
                // below 10^7: in range for int4 and int8
                let m = magnitude as i64;
                if neg { -m } else { m }
            } else {
                // 8 digits or more: the int core decides (range, and the server's grammar)
                while e < limit && data[e].is_ascii_digit() {
                    e += 1;
                }
                let (text, n, g) = (&data[p..], e - p, plan.grammar);
                let value = match field.bytes {
                    2 => int::parse_i16_in(text, n, g).ok().map(i64::from),
                    4 => int::parse_i32_in(text, n, g).ok().map(i64::from),
                    _ => int::parse_i64_in(text, n, g).ok(),
                };
                value?
            };
            if e >= limit {
                return None;
            }
            // in range for the field (int2), and for its column as forming checks it
            if v < field.min || v > field.max {
                return None;
            }
            let (at, le) = (field.at, v.to_le_bytes());
            match field.width {
                2 => tuple[at..at + 2].copy_from_slice(&le[..2]),
                4 => tuple[at..at + 4].copy_from_slice(&le[..4]),
                8 => tuple[at..at + 8].copy_from_slice(&le),
                _ => {}
            }
            if f < last {
                if data[e] != delim {
                    return None;
                }
                p = e + 1;
                continue;
            }
            // the line's end: the file's line ending, checked as the fast path does
            let next = match (data[e], eol) {
                (b'\n', Eol::Nl) => e + 1,
                // CSV looks one byte past a `\r` before deciding (see csv::step).
                (b'\r', Eol::Cr) if !csv || e + 1 < limit => e + 1,
                (b'\r', Eol::CrNl) if e + 1 < limit && data[e + 1] == b'\n' => e + 2,
                _ => return None,
            };
            let line_len = e - start;
            // The line into the row buffer, in whole blocks: they may read past the line's
            // end, never past `limit + BLOCK` (< `limit + PAD`).
            let copy = (line_len + 1).next_multiple_of(BLOCK);
            if row.buf.len() < copy {
                row.buf.resize(copy.max(row.buf.len() * 2), 0);
            }
            if copy == BLOCK {
                row.buf[..BLOCK].copy_from_slice(&data[start..start + BLOCK]);
            } else {
                row.buf[..copy].copy_from_slice(&data[start..start + copy]);
            }
            row.spans.clear();
            self.lineno += 1;
            row.line_no = self.lineno;
            row.line_len = line_len;
            row.raw_len = next - start;
            row.raw_kind = RawLine::InBuf {
                delim,
                quote: self.opts.quote,
            };
            self.input.consume_to(next);
            return Some(RowMark {
                line_no: self.lineno,
                line_len,
            });
        }
        None
    }
}
