//! The fused path for lines of plain integers: a row whose every field is `-?[0-9]+` and
//! whose table takes every field as an integer column is read, converted and formed into its
//! tuple in one pass over the input, instead of split into the row (`plain_rows.rs`), converted
//! from the row, and formed from the converted values (`pipeline.rs`), three passes that
//! each walk the row again (the reader thread's time on a table of ints: A/B in
//! `bench/README.md`).
//!
//! Per field: the digits are counted and, below 16 of them, converted from one or two 8-byte
//! loads of the input (`int::leading_digits`; a longer field goes to the int core), the value is
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
//! On x86_64 a line shorter than 32 bytes that ends in `\n` is first classified whole
//! ([`short_line`]): two 16-byte compares per byte class give the positions of its
//! delimiters, digits and signs, so every field's bounds are known before any is converted;
//! where that step does not take the line (a longer line or field, another byte), the
//! per-field path above reads it and decides. (The reader alone: 7-8% less time per row on
//! lotsaints, `core/examples/reader_speed`; `bench/README.md`.)
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
use crate::plan::{FusedField, FusedPlan, IntPlan, RowMark};
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
        kept: &mut [u8],
    ) -> Option<RowMark> {
        let eol = self.eol;
        if self.done || self.header_left > 0 || eol == Eol::Unknown {
            return None;
        }
        let start = self.input.pos();
        let limit = self.input.data().len();
        let data = self.input.padded();
        debug_assert!(limit + PAD <= data.len());
        let delim = self.opts.delimiter;
        #[cfg(target_arch = "x86_64")]
        if eol == Eol::Nl
            && start < limit
            && let Some(len) = short_line(data, start, limit, delim, plan, tuple, kept)
        {
            return Some(self.take_line(row, start, len, len + 1));
        }
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
                // 8 digits or more: the field goes on in the next 8 bytes (`e <= limit`, and
                // PAD bytes after `limit` are readable)
                let next = data[e..].first_chunk::<8>()?;
                let (more, low) = int::leading_digits(u64::from_le_bytes(*next));
                if more < 8 {
                    // 8 to 15 digits: below 10^15, exact in i64; the range check below decides
                    e += more;
                    let m = (magnitude * 10u64.pow(more as u32) + low) as i64;
                    if neg { -m } else { m }
                } else {
                    // 16 digits or more: the int core decides (range, and the server's grammar)
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
                }
            };
            if e >= limit {
                return None;
            }
            // in range for the field (int2), and for its column as forming checks it
            if v < field.min || v > field.max {
                return None;
            }
            put_column(tuple, kept, field, v);
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
            return Some(self.take_line(row, start, e - start, next - start));
        }
        None
    }

    /// The line of `line_len` bytes at `start` (its ending included, `raw_len`) becomes `row`'s
    /// and is consumed: copied into the row buffer in whole blocks (they may read past the
    /// line's end, never past `limit + BLOCK` < `limit + PAD`), with its number and lengths.
    #[inline(always)]
    fn take_line(
        &mut self,
        row: &mut Row,
        start: usize,
        line_len: usize,
        raw_len: usize,
    ) -> RowMark {
        let data = self.input.padded();
        let copy = (line_len + 1).next_multiple_of(BLOCK);
        if row.buf.len() < copy {
            row.buf.resize(copy.max(row.buf.len() * 2), 0);
        }
        if copy == BLOCK {
            let to = row
                .buf
                .first_chunk_mut::<BLOCK>()
                .expect("resized to `copy` above");
            copy_block(
                to,
                data[start..]
                    .first_chunk::<BLOCK>()
                    .expect("PAD after the line"),
            );
        } else {
            row.buf[..copy].copy_from_slice(&data[start..start + copy]);
        }
        row.spans.clear();
        self.lineno += 1;
        row.line_no = self.lineno;
        row.line_len = line_len;
        row.raw_len = raw_len;
        row.raw_kind = RawLine::InBuf {
            delim: self.opts.delimiter,
            quote: self.opts.quote,
        };
        self.input.consume_to(start + raw_len);
        RowMark {
            line_no: self.lineno,
            line_len,
        }
    }
}

/// Value `v` of `field` into its column's bytes of `tuple` and, unless `kept` is empty (the
/// block keeps no data bytes apart), of `kept`, the tuple's data bytes kept beside the slots.
#[inline(always)]
fn put_column(tuple: &mut [u8], kept: &mut [u8], field: &FusedField, v: i64) {
    match field.width {
        2 => put::<2>(tuple, kept, field, v),
        4 => put::<4>(tuple, kept, field, v),
        8 => put::<8>(tuple, kept, field, v),
        _ => {}
    }
}

/// [`put_column`] for a column of `W` bytes (a store of a known width, not a `memcpy`).
#[inline(always)]
fn put<const W: usize>(tuple: &mut [u8], kept: &mut [u8], field: &FusedField, v: i64) {
    let le = v.to_le_bytes();
    tuple[field.at..field.at + W].copy_from_slice(&le[..W]);
    if !kept.is_empty() {
        kept[field.data_at..field.data_at + W].copy_from_slice(&le[..W]);
    }
}

/// `from` into `to`, both [`BLOCK`] bytes: two 16-byte moves on x86_64. (A `copy_from_slice`
/// here was merged by the compiler with the other branch's into one call of `memcpy` with
/// the length as a variable, paid on every line of the fused path.)
#[inline(always)]
fn copy_block(to: &mut [u8; BLOCK], from: &[u8; BLOCK]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of every x86_64 target; both arrays are BLOCK (32) bytes long, so
    // the two unaligned 16-byte loads and stores stay inside them.
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};
        let (src, dst) = (
            from.as_ptr() as *const __m128i,
            to.as_mut_ptr() as *mut __m128i,
        );
        let (a, b) = (_mm_loadu_si128(src), _mm_loadu_si128(src.add(1)));
        _mm_storeu_si128(dst, a);
        _mm_storeu_si128(dst.add(1), b);
    }
    #[cfg(not(target_arch = "x86_64"))]
    to.copy_from_slice(from);
}

/// The common case of [`RowReader::next_int_row`] in one step over the line, for `\n` line
/// endings: a line shorter than 32 bytes whose bytes are all digits, `-` or the delimiter is
/// classified with two 16-byte compares per byte class, so the fields' bounds are known
/// before any is converted and the fields convert independently of each other (one after the
/// other, each field's end found from its digits, is a chain of dependent steps per field).
/// Taken only where the per-field path would read exactly the same: as many fields as the
/// plan, each `-?[0-9]{1,7}` (a `-` only first in its field), every value in its range; the
/// columns are written into `tuple` as that path writes them. Anything else (a longer line or
/// field, another byte, a value out of range) returns None, possibly with some columns
/// written, and the per-field path decides; else the line's length without its `\n`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn short_line(
    data: &[u8],
    start: usize,
    limit: usize,
    delim: u8,
    plan: &FusedPlan,
    tuple: &mut [u8],
    kept: &mut [u8],
) -> Option<usize> {
    use std::arch::x86_64::*;
    // 32 bytes from `start` are readable: `start < limit` and PAD (64) bytes follow `limit`.
    let window = data.get(start..start + 32)?;
    // SAFETY: SSE2 is part of every x86_64 target; the two unaligned 16-byte loads read the
    // 32 bytes of `window`, which is in bounds.
    let (delims, newlines, digits, minus) = unsafe {
        let p = window.as_ptr() as *const __m128i;
        let (a, b) = (_mm_loadu_si128(p), _mm_loadu_si128(p.add(1)));
        let mask = |x: __m128i, y: __m128i| {
            (_mm_movemask_epi8(x) as u32 & 0xffff) | ((_mm_movemask_epi8(y) as u32) << 16)
        };
        let eq = |c: u8| {
            let c = _mm_set1_epi8(c as i8);
            mask(_mm_cmpeq_epi8(a, c), _mm_cmpeq_epi8(b, c))
        };
        // a digit: c - '0' < 10 unsigned, as a signed compare after moving '0' to -128
        let (shift, ten) = (_mm_set1_epi8(0x50), _mm_set1_epi8(-128 + 10));
        let digit = |x: __m128i| _mm_cmplt_epi8(_mm_add_epi8(x, shift), ten);
        (eq(delim), eq(b'\n'), mask(digit(a), digit(b)), eq(b'-'))
    };
    if newlines == 0 {
        return None;
    }
    let len = newlines.trailing_zeros() as usize;
    if start + len >= limit {
        return None; // the line ending is not in the verified input
    }
    let below = (1u32 << len) - 1;
    let (delims, digits, minus) = (delims & below, digits & below, minus & below);
    // (a field after a delimiter that ends the line starts at `len`, and is empty)
    let field_starts = 1 | (delims << 1);
    if delims | digits | minus != below || minus & !field_starts != 0 {
        return None;
    }
    // one end per field (its delimiter, the line ending after the last): all taken below
    let (mut starts, mut ends) = (field_starts, delims | (1 << len));
    for field in &plan.fields {
        if ends == 0 {
            return None; // fewer fields than the plan's
        }
        let (s, e) = (
            starts.trailing_zeros() as usize,
            ends.trailing_zeros() as usize,
        );
        starts &= starts.wrapping_sub(1);
        ends &= ends.wrapping_sub(1);
        let neg = (minus >> s) & 1 != 0;
        let n = e - s - neg as usize;
        if n == 0 || n > 16 {
            return None;
        }
        let at = start + s + neg as usize;
        // (16 bytes from `at` < `start + 32` are readable: PAD bytes follow `limit`)
        let word = u64::from_le_bytes(*data[at..].first_chunk::<8>()?);
        let m = if n < 8 {
            int::digits_value(word, n) as i64
        } else {
            // 8 to 16 digits: below 10^16, exact in i64; the range check below decides
            let next = u64::from_le_bytes(*data[at + 8..].first_chunk::<8>()?);
            int::long_digits_value(word, next, n) as i64
        };
        let v = if neg { -m } else { m };
        if v < field.min || v > field.max {
            return None;
        }
        put_column(tuple, kept, field, v);
    }
    if ends != 0 {
        return None; // more fields than the plan's
    }
    Some(len)
}
