//! The path for plain rows (no escapes or quotes in the way), once the file's line ending is known and when the
//! whole line is inside the verified data.
//!
//! The line is walked in 32-byte blocks (two SSE2 compares each). Each block is copied as a
//! whole into the row buffer and turned into a bit mask of the four bytes that matter: the
//! delimiter, `\n`, `\r`, and a backslash (text) or the quote (CSV). Delimiter bits end
//! fields (the copied delimiter is overwritten by NUL), the line ending ends the row.
//!
//! - Text: a backslash makes the next byte part of the line (its bit is cleared); once one
//!   is seen, the fields found so far are dropped and, at the line end, the line is split by
//!   the general de-escaping split ([`super::text::split_escaped`]): only the line scan is
//!   saved. `\.` declines.
//! - CSV (ESCAPE = QUOTE): a field that starts with the quote, contains no `\r`, `\n` or
//!   quote, and whose closing quote is followed by the delimiter or the line end, is taken
//!   in place: the value starts after the opening quote and the closing quote is
//!   overwritten by NUL. Any other use of a quote declines.
//!
//! Anything else (a `\r`/`\n` not matching the file's line ending, a line not complete in
//! the buffer, a CSV line starting with a backslash, ...) declines: the general path then
//! handles the row from its first byte, so declining only costs time. For the lines it
//! takes, it does byte for byte what the general path does: same fields, markers, quoted
//! flags, line number, `raw_len`, errors.
//!
//! Block loads may read past the verified data (up to [`PAD`] bytes past it, always readable in
//! the chunk buffer: [`Chunks::padded`]); bits at or past the verified end are never acted on.

use super::{Eol, Format, InputError, RawLine, Row, RowReader, Span, marker_kind, text};
#[cfg(doc)]
use crate::chunks::Chunks;
use crate::chunks::PAD;
use std::io::Read;

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

#[derive(Clone, Copy)]
enum State {
    /// In an unquoted field (or at its start).
    Field,
    /// CSV: inside a quoted field whose value starts at `qs`.
    Quoted { qs: usize },
    /// CSV: just after the closing quote at `close` of a field whose value starts at `qs`.
    After { qs: usize, close: usize },
}

/// Reads the next row if it is of a kind the fast path takes. `None`: declined, nothing
/// consumed, `row` in an unspecified state.
#[inline]
pub(crate) fn try_row<R: Read>(
    rd: &mut RowReader<R>,
    row: &mut Row,
) -> Option<Result<(), InputError>> {
    let eol = rd.eol;
    if eol == Eol::Unknown {
        return None;
    }
    let start = rd.input.pos();
    let limit = rd.input.data().len();
    if start >= limit {
        return None;
    }
    let csv = rd.opts.format == Format::Csv;
    let data = rd.input.padded();
    debug_assert!(limit + PAD <= data.len());
    if csv && data[start] == b'\\' {
        return None; // possibly the `\.` end marker
    }
    let needles = rd.needles;
    let delim = needles.delim;
    let quote = rd.opts.quote;
    let quotes_ok = csv && rd.opts.escape == quote;
    let null = rd.opts.null.as_slice();
    let default = rd.opts.default.as_deref();
    row.spans.clear();
    let mut fs = 0usize; // current field start, relative to the line start
    let mut off = 0usize; // current block start, relative to the line start
    let mut state = State::Field;
    let mut escaped = false; // text: a backslash was seen
    let mut skip_first = false; // text: the next block's first byte follows a backslash
    loop {
        let b = start + off;
        if b >= limit {
            return None;
        }
        if row.buf.len() < off + 2 * BLOCK {
            let want = (off + 2 * BLOCK).max(row.buf.len() * 2);
            row.buf.resize(want, 0);
        }
        let block = &data[b..b + BLOCK];
        row.buf[off..off + BLOCK].copy_from_slice(block);
        let mut m = mask32(block, needles);
        if skip_first {
            m &= !1;
            skip_first = false;
        }
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            let rel = off + i;
            let q = start + rel;
            if q >= limit {
                return None;
            }
            let c = data[q];
            match state {
                State::Field => {}
                State::Quoted { qs } => {
                    if c == quote {
                        state = State::After { qs, close: rel };
                        continue;
                    }
                    if c == delim {
                        continue; // data inside quotes
                    }
                    return None; // quoted newline: line counting, leave it to the general path
                }
                State::After { close, .. } => {
                    // Only the delimiter or the line end may follow the closing quote.
                    if rel != close + 1 || c == quote {
                        return None;
                    }
                }
            }
            if c == delim {
                if !escaped {
                    end_field(row, data, start, fs, rel, state, null, default);
                }
                fs = rel + 1;
                state = State::Field;
                continue;
            }
            if !csv && c == b'\\' {
                if q + 1 >= limit || data[q + 1] == b'.' {
                    return None;
                }
                escaped = true;
                if i + 1 < BLOCK {
                    m &= !(1 << (i + 1));
                } else {
                    skip_first = true;
                }
                continue;
            }
            if csv && c == quote {
                if rel != fs || !quotes_ok {
                    return None;
                }
                state = State::Quoted { qs: rel + 1 };
                continue;
            }
            let next = match (c, eol) {
                (b'\n', Eol::Nl) => q + 1,
                // CSV looks one byte past a `\r` before deciding (see csv::step).
                (b'\r', Eol::Cr) if !csv || q + 1 < limit => q + 1,
                (b'\r', Eol::CrNl) if q + 1 < limit && data[q + 1] == b'\n' => q + 2,
                _ => return None,
            };
            rd.lineno += 1;
            row.line_no = rd.lineno;
            row.line_len = rel;
            row.raw_len = next - start;
            let res = if escaped {
                row.reset();
                let line = &data[start..q];
                text::split_escaped(line, &rd.opts, row)
                    .map_err(|kind| InputError::in_split(kind, rd.lineno, line.to_vec(), row))
            } else {
                end_field(row, data, start, fs, rel, state, null, default);
                row.raw_kind = RawLine::InBuf { delim, quote };
                Ok(())
            };
            rd.input.consume_to(next);
            return Some(res);
        }
        off += BLOCK;
    }
}

/// Ends the field started at `fs` (line-relative) at the delimiter or line end at `rel`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn end_field(
    row: &mut Row,
    data: &[u8],
    start: usize,
    fs: usize,
    rel: usize,
    state: State,
    null: &[u8],
    default: Option<&[u8]>,
) {
    match state {
        State::After { qs, close } => {
            // Quoted: never NULL; the raw field (quotes included) is compared with DEFAULT.
            let kind = marker_kind(&data[start + fs..start + rel], null, default, false);
            row.spans.push(Span {
                start: qs,
                len: close - qs,
                kind,
                quoted: true,
            });
            row.buf[close] = 0;
        }
        _ => {
            let kind = marker_kind(&data[start + fs..start + rel], null, default, true);
            row.spans.push(Span {
                start: fs,
                len: rel - fs,
                kind,
                quoted: false,
            });
            row.buf[rel] = 0;
        }
    }
}
