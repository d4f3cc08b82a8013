//! COPY CSV format: the line scan (`CopyReadLineText` in CSV mode) and the field split
//! (`CopyReadAttributesCSV`).
//!
//! Field splitting goes through these paths:
//!
//! 0. Most rows never get here: the plain-rows path (`plain_rows.rs`) takes lines without quotes, and
//!    lines whose quoted fields are simple (`"..."` with no quote, `\r`, `\n` inside, followed
//!    by the delimiter or the line end) when ESCAPE = QUOTE.
//! 1. Lines without any quote character: split at the delimiters (shared with text format).
//! 2. Lines with quotes, when ESCAPE = QUOTE (the default): `csv-core`, configured with
//!    COPY's delimiter and quote, doubled quotes, no escape, no comments. `csv-core` and COPY
//!    agree on "canonical" fields only (unquoted without any quote character, or quoted from
//!    first to last byte with inner quotes doubled); COPY also lets a quote open a quoted
//!    section in the middle of a field (`a"b,c"d` is one field `ab,cd`) and re-open one after
//!    it closed, and `csv-core` strips a UTF-8 BOM at the start of its input. So every field
//!    `csv-core` returns is checked against its raw bytes, and any line where a field is not
//!    canonical (or the quote is unterminated) goes to path 3.
//! 3. Our own port of `CopyReadAttributesCSV`, used for such lines and whenever ESCAPE
//!    differs from QUOTE: COPY treats the escape byte specially only inside quotes and only
//!    before an escape or quote byte (elsewhere it is data), which `csv-core`'s escape option
//!    (escape applies to any following byte) cannot express.

use super::{Eol, InputErrorKind, Options, RawLine, Row, Scan, ScanState, Span};
use super::{marker_eol, marker_kind, peek};
use memchr::{memchr, memchr2, memchr3};

/// Scans for the end of the CSV line starting at `start`, resuming with the state in `st`.
///
/// A port of `CopyReadLineText` with `csv_mode`: quotes toggle an "in quote" state (with
/// ESCAPE != QUOTE, an escape inside quotes protects the next quote); `\r`/`\n` outside
/// quotes end the line under the same style rules as text (with the "unquoted" messages);
/// newlines inside quotes are data and bump the line number (`\n` once the style is known to
/// be `\n`, `\r` otherwise); `\.` is the end marker only as the first two bytes of a line
/// followed by the file's line ending, otherwise data (and always data with `end_marker`
/// false: PostgreSQL 18). Ordinary bytes are skipped with
/// `memchr`: outside quotes only quote, `\n`, `\r` matter; inside quotes only quote, escape
/// and the counted newline byte (a backslash or `\r` elsewhere only makes the server look
/// one byte ahead, which changes nothing unless that byte is invalid, and then the server's
/// error comes at the same line number either way; the `\r` that is counted is handled here
/// with its look-ahead before the count, like the server).
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_line(
    data: &[u8],
    start: usize,
    st: &mut ScanState,
    eol: &mut Eol,
    lineno: &mut u64,
    at_eof: bool,
    quote: u8,
    escapec: Option<u8>,
    end_marker: bool,
) -> Scan {
    let limit = data.len();
    let mut p = start + st.p;
    loop {
        if p >= limit {
            if at_eof {
                return Scan::Line {
                    end: limit,
                    next: limit,
                    stop: true,
                };
            }
            st.p = p - start;
            return Scan::NeedMore;
        }
        let q = if st.first_char {
            p
        } else {
            let found = if st.in_quote {
                let count = if *eol == Eol::Nl { b'\n' } else { b'\r' };
                match escapec {
                    Some(e) => memchr3(quote, e, count, &data[p..]),
                    None => memchr2(quote, count, &data[p..]),
                }
            } else {
                memchr3(quote, b'\n', b'\r', &data[p..])
            };
            match found {
                Some(i) => {
                    if i > 0 {
                        st.last_was_esc = false;
                    }
                    p + i
                }
                None => {
                    st.last_was_esc = false;
                    p = limit;
                    continue;
                }
            }
        };
        match step(
            data, start, q, st, eol, lineno, at_eof, quote, escapec, end_marker,
        ) {
            Step::Next(n) => p = n,
            Step::Done(s) => return s,
        }
    }
}

enum Step {
    Next(usize),
    Done(Scan),
}

/// One character of `CopyReadLineText` (CSV mode), in the server's order.
#[allow(clippy::too_many_arguments)]
#[inline]
fn step(
    data: &[u8],
    start: usize,
    q: usize,
    st: &mut ScanState,
    eol: &mut Eol,
    lineno: &mut u64,
    at_eof: bool,
    quote: u8,
    escapec: Option<u8>,
    end_marker: bool,
) -> Step {
    let c = data[q];
    // Look-ahead before any state change, as the server does for these two bytes (18 has no
    // end marker in CSV, and no look-ahead after a backslash).
    if ((c == b'\\' && end_marker) || c == b'\r') && q + 1 >= data.len() && !at_eof {
        st.p = q - start;
        return Step::Done(Scan::NeedMore);
    }
    let saved = *st;
    if st.in_quote && Some(c) == escapec {
        st.last_was_esc = !st.last_was_esc;
    }
    if c == quote && !st.last_was_esc {
        st.in_quote = !st.in_quote;
        st.special = true;
    }
    if Some(c) != escapec {
        st.last_was_esc = false;
    }
    if st.in_quote && c == (if *eol == Eol::Nl { b'\n' } else { b'\r' }) {
        *lineno += 1;
    }
    if c == b'\r' && !st.in_quote {
        return Step::Done(match *eol {
            Eol::Unknown | Eol::CrNl => {
                let c2 = peek(data, q + 1, at_eof).unwrap_or(0);
                if c2 == b'\n' {
                    *eol = Eol::CrNl;
                    Scan::Line {
                        end: q,
                        next: q + 2,
                        stop: false,
                    }
                } else if *eol == Eol::CrNl {
                    Scan::Err(InputErrorKind::UnquotedCarriageReturn)
                } else {
                    *eol = Eol::Cr;
                    Scan::Line {
                        end: q,
                        next: q + 1,
                        stop: false,
                    }
                }
            }
            Eol::Nl => Scan::Err(InputErrorKind::UnquotedCarriageReturn),
            Eol::Cr => Scan::Line {
                end: q,
                next: q + 1,
                stop: false,
            },
        });
    }
    if c == b'\n' && !st.in_quote {
        if matches!(*eol, Eol::Cr | Eol::CrNl) {
            return Step::Done(Scan::Err(InputErrorKind::UnquotedNewline));
        }
        *eol = Eol::Nl;
        return Step::Done(Scan::Line {
            end: q,
            next: q + 1,
            stop: false,
        });
    }
    if c == b'\\' && st.first_char && end_marker {
        if q + 1 >= data.len() {
            // at EOF (the look-ahead above returned otherwise): the backslash is data.
            return Step::Done(Scan::Line {
                end: data.len(),
                next: data.len(),
                stop: true,
            });
        }
        if data[q + 1] == b'.' {
            let mut r = q + 2;
            let mut is_marker = true;
            if *eol == Eol::CrNl {
                let Some(c3) = peek(data, r, at_eof) else {
                    *st = saved;
                    st.p = q - start;
                    return Step::Done(Scan::NeedMore);
                };
                r += 1;
                if c3 != b'\r' {
                    is_marker = false;
                }
            }
            if is_marker {
                let Some(c4) = peek(data, r, at_eof) else {
                    *st = saved;
                    st.p = q - start;
                    return Step::Done(Scan::NeedMore);
                };
                r += 1;
                if c4 != b'\r' && c4 != b'\n' {
                    is_marker = false;
                } else if c4 != marker_eol(*eol, c4) {
                    return Step::Done(Scan::Err(InputErrorKind::EndMarkerNewlineStyle));
                }
            }
            if is_marker {
                return Step::Done(Scan::Line {
                    end: q,
                    next: r,
                    stop: true,
                });
            }
            // Not the marker: `\.` is data; go on after the backslash.
        }
    }
    st.first_char = false;
    Step::Next(q + 1)
}

/// Splits a CSV line that contains a quote character. `in_quote` is the line scan's quote
/// state at the end of the line (true only when the data ended inside quotes).
pub(crate) fn split(
    line: &[u8],
    opts: &Options,
    core: Option<&mut ::csv_core::Reader>,
    in_quote: bool,
    row: &mut Row,
) -> Result<(), InputErrorKind> {
    row.raw_kind = RawLine::Copied;
    row.raw.clear();
    row.raw.extend_from_slice(line);
    if let Some(core) = core {
        if !in_quote && split_csv_core(line, opts, core, row) {
            return Ok(());
        }
        row.reset();
    }
    split_own(line, opts, row)
}

/// Path 2: `csv-core` with a canonical-form check of every field. Returns false (with the row
/// in an unspecified state) if the line must go to [`split_own`].
fn split_csv_core(
    line: &[u8],
    opts: &Options,
    core: &mut ::csv_core::Reader,
    row: &mut Row,
) -> bool {
    use ::csv_core::ReadFieldResult;
    let quote = opts.quote;
    let null = opts.null.as_slice();
    let default = opts.default.as_deref();
    core.reset();
    // csv-core never outputs more than it reads, and every field but the last consumes a
    // delimiter it does not output: values plus one NUL per field fit in `line.len() + 1`.
    row.buf.resize(line.len() + 1, 0);
    let mut consumed = 0; // input bytes consumed
    let mut field_in = 0; // input position where the current field started
    let mut out = 0; // output position where the current field's value starts
    let mut nout_field = 0; // bytes of the current field's value output so far
    loop {
        let input = &line[consumed..];
        let (res, nin, nout) = core.read_field(input, &mut row.buf[out + nout_field..]);
        consumed += nin;
        nout_field += nout;
        let record_end = match res {
            // All input consumed: the next call, with empty input, ends the field.
            ReadFieldResult::InputEmpty if !input.is_empty() => continue,
            ReadFieldResult::InputEmpty => return false,
            ReadFieldResult::OutputFull | ReadFieldResult::End => return false,
            ReadFieldResult::Field { record_end } => record_end,
        };
        let raw_end = if record_end {
            if consumed != line.len() {
                return false; // csv-core saw a line ending where COPY did not
            }
            consumed
        } else {
            if line[consumed - 1] != opts.delimiter {
                return false;
            }
            consumed - 1
        };
        let raw = &line[field_in..raw_end];
        let quoted = raw.first() == Some(&quote);
        if !canonical(raw, quote, nout_field) {
            return false;
        }
        let kind = marker_kind(raw, null, default, !quoted);
        row.spans.push(Span {
            start: out,
            len: nout_field,
            kind,
            quoted,
        });
        out += nout_field;
        if out >= row.buf.len() {
            return false;
        }
        row.buf[out] = 0;
        out += 1;
        nout_field = 0;
        field_in = consumed;
        if record_end {
            row.buf.truncate(out);
            return true;
        }
    }
}

/// A field csv-core parsed exactly as COPY does: unquoted without any quote byte, or one
/// quoted section from the first byte to the last with every inner quote doubled; and the
/// output length csv-core reported matches.
#[inline]
fn canonical(raw: &[u8], quote: u8, nout: usize) -> bool {
    if raw.first() != Some(&quote) {
        return memchr(quote, raw).is_none() && nout == raw.len();
    }
    if raw.len() < 2 || raw[raw.len() - 1] != quote {
        return false;
    }
    let inner = &raw[1..raw.len() - 1];
    let mut pairs = 0;
    let mut i = 0;
    while let Some(k) = memchr(quote, &inner[i..]) {
        let j = i + k;
        if inner.get(j + 1) != Some(&quote) {
            return false;
        }
        pairs += 1;
        i = j + 2;
    }
    nout == inner.len() - pairs
}

/// Path 3: a port of `CopyReadAttributesCSV`.
fn split_own(line: &[u8], opts: &Options, row: &mut Row) -> Result<(), InputErrorKind> {
    let delim = opts.delimiter;
    let quote = opts.quote;
    let escape = opts.escape;
    let null = opts.null.as_slice();
    let default = opts.default.as_deref();
    let len = line.len();
    row.buf.reserve(len + 1);
    let mut cur = 0;
    loop {
        let start = cur;
        let out_start = row.buf.len();
        let mut saw_quote = false;
        let mut found_delim = false;
        let end_ptr;
        'field: loop {
            // Not in quotes.
            match memchr2(delim, quote, &line[cur..]) {
                None => {
                    row.buf.extend_from_slice(&line[cur..]);
                    cur = len;
                    end_ptr = len;
                    break 'field;
                }
                Some(i) => {
                    let q = cur + i;
                    row.buf.extend_from_slice(&line[cur..q]);
                    cur = q + 1;
                    if line[q] == delim {
                        end_ptr = q;
                        found_delim = true;
                        break 'field;
                    }
                    saw_quote = true;
                }
            }
            // In quotes.
            loop {
                let found = if escape == quote {
                    memchr(quote, &line[cur..])
                } else {
                    memchr2(quote, escape, &line[cur..])
                };
                let Some(i) = found else {
                    return Err(InputErrorKind::UnterminatedCsvQuote);
                };
                let q = cur + i;
                row.buf.extend_from_slice(&line[cur..q]);
                cur = q + 1;
                let c = line[q];
                if c == escape
                    && let Some(&nextc) = line.get(cur)
                    && (nextc == escape || nextc == quote)
                {
                    row.buf.push(nextc);
                    cur += 1;
                    continue;
                }
                if c == quote {
                    break;
                }
                row.buf.push(c);
            }
        }
        let kind = marker_kind(&line[start..end_ptr], null, default, !saw_quote);
        let flen = row.buf.len() - out_start;
        row.buf.push(0);
        row.spans.push(Span {
            start: out_start,
            len: flen,
            kind,
            quoted: saw_quote,
        });
        if !found_delim {
            return Ok(());
        }
    }
}
