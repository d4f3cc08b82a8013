//! The fast path for the common row: no escapes (text), no quotes (CSV), the line ending
//! already known, the whole line inside the verified data.
//!
//! The line is walked in 32-byte blocks (two SSE2 compares). Each block is copied as a whole into the row buffer
//! and turned into a bit mask of the four bytes that matter: the delimiter, `\n`, `\r`, and a
//! backslash (text) or the quote (CSV). Delimiter bits end fields (the copied delimiter is
//! overwritten by NUL), the line ending ends the row, anything else (a backslash, a quote, a
//! `\r`/`\n` not matching the file's line ending, a line not complete in the buffer, a CSV
//! line starting with a backslash) declines: the general path then handles the row from its
//! first byte, so declining only costs time. Byte-for-byte it does what the general path
//! does for such lines: same fields, markers, line number, `raw_len`.
//!
//! Block loads may read past the verified data (up to [`PAD`] bytes past the data read, kept
//! allocated at the end of the reader's buffer); bits at or past the verified end are never
//! acted on.

use super::Span;
use super::{Eol, Format, RawLine, Row, RowReader, marker_kind};
use std::io::Read;

/// Bytes kept allocated after the data area of the reader's buffer.
pub(crate) const PAD: usize = 64;

const BLOCK: usize = 32;

/// The four bytes the fast path stops at, besides `\n` and `\r`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Needles {
    pub delim: u8,
    pub fourth: u8,
}

impl Needles {
    pub(crate) fn new(delim: u8, fourth: u8) -> Self {
        Needles { delim, fourth }
    }
}

/// Bit `i` set iff `block[i]` is one of the needles, `\n` or `\r` (`block.len() >= 32`).
#[inline(always)]
fn mask32(block: &[u8], n: Needles) -> u32 {
    mask16(&block[..16], n) | (mask16(&block[16..32], n) << 16)
}

/// Bit `i` set iff `block[i]` is one of the needles, `\n` or `\r` (`block.len() >= 16`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn mask16(block: &[u8], n: Needles) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    assert!(block.len() >= 16);
    // SAFETY: `block` has at least 16 readable bytes (checked above); `loadu` has no
    // alignment requirement; SSE2 is part of the x86_64 baseline.
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
        let a = _mm_cmpeq_epi8(v, _mm_set1_epi8(n.delim as i8));
        let b = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8));
        let c = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\r' as i8));
        let d = _mm_cmpeq_epi8(v, _mm_set1_epi8(n.fourth as i8));
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))) as u32
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn mask16(block: &[u8], n: Needles) -> u32 {
    let mut m = 0u32;
    for (i, &b) in block[..16].iter().enumerate() {
        let hit = (b == n.delim) | (b == b'\n') | (b == b'\r') | (b == n.fourth);
        m |= (hit as u32) << i;
    }
    m
}

/// Reads the next row if it is of the simple kind; returns false (having consumed nothing
/// from the reader, `row` in an unspecified state) otherwise.
#[inline]
pub(crate) fn try_row<R: Read>(rd: &mut RowReader<R>, row: &mut Row) -> bool {
    let eol = rd.eol;
    if eol == Eol::Unknown {
        return false;
    }
    let start = rd.pos;
    let limit = rd.verified;
    if start >= limit {
        return false;
    }
    let csv = rd.opts.format == Format::Csv;
    let data = rd.buf.as_slice();
    debug_assert!(limit + PAD <= data.len());
    if csv && data[start] == b'\\' {
        return false; // possibly the `\.` end marker
    }
    let needles = rd.needles;
    let delim = needles.delim;
    let null = rd.opts.null.as_slice();
    let default = rd.opts.default.as_deref();
    row.spans.clear();
    let mut fs = 0usize; // current field start, relative to the line start
    let mut off = 0usize; // current block start, relative to the line start
    loop {
        let b = start + off;
        if b >= limit {
            return false;
        }
        if row.buf.len() < off + 2 * BLOCK {
            let want = (off + 2 * BLOCK).max(row.buf.len() * 2);
            row.buf.resize(want, 0);
        }
        let block = &data[b..b + BLOCK];
        row.buf[off..off + BLOCK].copy_from_slice(block);
        let mut m = mask32(block, needles);
        while m != 0 {
            let rel = off + m.trailing_zeros() as usize;
            m &= m - 1;
            let q = start + rel;
            if q >= limit {
                return false;
            }
            let c = data[q];
            if c == delim {
                push(row, &data[start + fs..q], fs, null, default);
                row.buf[rel] = 0;
                fs = rel + 1;
                continue;
            }
            let next = match (c, eol) {
                (b'\n', Eol::Nl) => q + 1,
                // CSV looks one byte past a `\r` before deciding (see csv::step).
                (b'\r', Eol::Cr) if !csv || q + 1 < limit => q + 1,
                (b'\r', Eol::CrNl) if q + 1 < limit && data[q + 1] == b'\n' => q + 2,
                _ => return false,
            };
            push(row, &data[start + fs..q], fs, null, default);
            row.buf[rel] = 0;
            row.raw_kind = RawLine::InBuf(delim);
            row.line_len = rel;
            row.raw_len = next - start;
            rd.lineno += 1;
            row.line_no = rd.lineno;
            rd.pos = next;
            return true;
        }
        off += BLOCK;
    }
}

#[inline(always)]
fn push(row: &mut Row, raw: &[u8], start: usize, null: &[u8], default: Option<&[u8]>) {
    let kind = marker_kind(raw, null, default, true);
    row.spans.push(Span {
        start,
        len: raw.len(),
        kind,
        quoted: false,
    });
}
