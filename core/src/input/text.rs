//! COPY text format: the line scan (`CopyReadLineText` without CSV) and the de-escaping
//! field split (`CopyReadAttributesText`).

use super::{Eol, InputErrorKind, KIND_VALUE, Options, RawLine, Row, Scan, ScanState, Span};
use super::{marker_eol, marker_kind, peek};
use memchr::{memchr2, memchr3};

/// Scans for the end of the line starting at `start`, resuming at `st.p`.
///
/// Rules: the line ends at the first `\n` or `\r` not preceded by a backslash; `\r\n` counts
/// as one ending. The first ending fixes the style; a different one later is "literal
/// newline/carriage return found in data". A backslash makes the next byte part of the line
/// whatever it is, except `\.`, the end-of-data marker, which must be followed by the file's
/// line ending. On 15-17 it may come after other data on the line (that data is kept); with
/// `alone` (18) it must be alone on its line.
pub(crate) fn scan_line(
    data: &[u8],
    start: usize,
    st: &mut ScanState,
    eol: &mut Eol,
    at_eof: bool,
    alone: bool,
) -> Scan {
    let corrupt = if alone {
        InputErrorKind::EndMarkerNotAlone
    } else {
        InputErrorKind::EndMarkerCorrupt
    };
    let limit = data.len();
    let mut p = start + st.p;
    loop {
        let Some(i) = memchr3(b'\n', b'\r', b'\\', &data[p..]) else {
            if at_eof {
                return Scan::Line {
                    end: limit,
                    next: limit,
                    stop: true,
                };
            }
            st.p = limit - start;
            return Scan::NeedMore;
        };
        let q = p + i;
        match data[q] {
            b'\n' => {
                if matches!(*eol, Eol::Cr | Eol::CrNl) {
                    return Scan::Err(InputErrorKind::LiteralNewline);
                }
                *eol = Eol::Nl;
                return Scan::Line {
                    end: q,
                    next: q + 1,
                    stop: false,
                };
            }
            b'\r' => {
                return match *eol {
                    Eol::Unknown | Eol::CrNl => {
                        let Some(c2) = peek(data, q + 1, at_eof) else {
                            st.p = q - start;
                            return Scan::NeedMore;
                        };
                        if c2 == b'\n' {
                            *eol = Eol::CrNl;
                            Scan::Line {
                                end: q,
                                next: q + 2,
                                stop: false,
                            }
                        } else if *eol == Eol::CrNl {
                            Scan::Err(InputErrorKind::LiteralCarriageReturn)
                        } else {
                            *eol = Eol::Cr;
                            Scan::Line {
                                end: q,
                                next: q + 1,
                                stop: false,
                            }
                        }
                    }
                    Eol::Nl => Scan::Err(InputErrorKind::LiteralCarriageReturn),
                    Eol::Cr => Scan::Line {
                        end: q,
                        next: q + 1,
                        stop: false,
                    },
                };
            }
            _ => {
                // Backslash: look at the next byte.
                st.special = true;
                if q + 1 >= limit {
                    if at_eof {
                        // A backslash just before EOF is data (dropped by the field split).
                        return Scan::Line {
                            end: limit,
                            next: limit,
                            stop: true,
                        };
                    }
                    st.p = q - start;
                    return Scan::NeedMore;
                }
                if data[q + 1] != b'.' {
                    // Whatever follows a backslash belongs to the line, even `\r`/`\n`.
                    p = q + 2;
                    continue;
                }
                // End-of-data marker.
                let mut r = q + 2;
                if *eol == Eol::CrNl {
                    let Some(c) = peek(data, r, at_eof) else {
                        st.p = q - start;
                        return Scan::NeedMore;
                    };
                    r += 1;
                    if c == b'\n' {
                        return Scan::Err(InputErrorKind::EndMarkerNewlineStyle);
                    } else if c != b'\r' {
                        return Scan::Err(corrupt);
                    }
                }
                let Some(c) = peek(data, r, at_eof) else {
                    st.p = q - start;
                    return Scan::NeedMore;
                };
                r += 1;
                if c != b'\r' && c != b'\n' {
                    return Scan::Err(corrupt);
                }
                if c != marker_eol(*eol, c) {
                    return Scan::Err(InputErrorKind::EndMarkerNewlineStyle);
                }
                if alone && q > start {
                    return Scan::Err(InputErrorKind::EndMarkerNotAlone);
                }
                // The data before `\.` is the line; everything up to the marker's line
                // ending is consumed. (With a file source the server goes on reading after
                // the marker if the line was not empty; the caller does the same.)
                return Scan::Line {
                    end: q,
                    next: r,
                    stop: true,
                };
            }
        }
    }
}

#[inline]
fn hex_val(c: u8) -> Option<u32> {
    match c {
        b'0'..=b'9' => Some((c - b'0') as u32),
        b'a'..=b'f' => Some((c - b'a' + 10) as u32),
        b'A'..=b'F' => Some((c - b'A' + 10) as u32),
        _ => None,
    }
}

#[inline]
fn is_octal(c: u8) -> bool {
    (b'0'..=b'7').contains(&c)
}

/// Splits a line containing backslashes into de-escaped fields.
///
/// `\b \f \n \r \t \v`; `\` + 1-3 octal digits (value taken mod 256); `\x` + 1-2 hex digits
/// (`\x` without a hex digit is `x`); any other byte after a backslash stands for itself,
/// the delimiter included; a backslash ending the line is dropped. The NULL and DEFAULT
/// markers are compared with the raw field (so `\\N` is the data `\N`). If an octal or hex
/// escape produced a NUL or a byte >= 0x80, the de-escaped field must be valid UTF-8
/// (checked only for fields that are not NULL/DEFAULT, like the server).
pub(crate) fn split_escaped(
    line: &[u8],
    opts: &Options,
    row: &mut Row,
) -> Result<(), InputErrorKind> {
    let delim = opts.delimiter;
    let null = opts.null.as_slice();
    let default = opts.default.as_deref();
    row.raw_kind = RawLine::Copied;
    row.raw.clear();
    row.raw.extend_from_slice(line);
    // Like the server's attribute_buf: de-escaped values never outgrow the line, and each
    // NUL but the last takes a delimiter's place.
    let len = line.len();
    row.buf.clear();
    row.buf.reserve(len + 1);
    let out = &mut row.buf;
    let mut cur = 0;
    loop {
        let start = cur;
        let out_start = out.len();
        let mut saw_non_ascii = false;
        let mut found_delim = false;
        let end_ptr;
        loop {
            // the bytes up to the next delimiter or backslash as they are (the delimiter is
            // never a backslash: COPY refuses one)
            let plain = memchr2(delim, b'\\', &line[cur..]).unwrap_or(len - cur);
            out.extend_from_slice(&line[cur..cur + plain]);
            cur += plain;
            if cur >= len {
                end_ptr = len;
                break;
            }
            let c = line[cur];
            cur += 1;
            if c == delim {
                end_ptr = cur - 1;
                found_delim = true;
                break;
            }
            if cur >= len {
                // Trailing backslash: not part of the raw field, not output.
                end_ptr = cur - 1;
                break;
            }
            let c = line[cur];
            cur += 1;
            out.push(match c {
                b'0'..=b'7' => {
                    let mut val = (c - b'0') as u32;
                    if cur < len && is_octal(line[cur]) {
                        val = (val << 3) + (line[cur] - b'0') as u32;
                        cur += 1;
                        if cur < len && is_octal(line[cur]) {
                            val = (val << 3) + (line[cur] - b'0') as u32;
                            cur += 1;
                        }
                    }
                    let b = (val & 0xff) as u8;
                    saw_non_ascii |= b == 0 || b >= 0x80;
                    b
                }
                b'x' => match line.get(cur).and_then(|&h| hex_val(h)) {
                    Some(mut val) => {
                        cur += 1;
                        if let Some(v2) = line.get(cur).and_then(|&h| hex_val(h)) {
                            val = (val << 4) + v2;
                            cur += 1;
                        }
                        let b = (val & 0xff) as u8;
                        saw_non_ascii |= b == 0 || b >= 0x80;
                        b
                    }
                    None => b'x',
                },
                b'b' => 0x08,
                b'f' => 0x0c,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'v' => 0x0b,
                other => other,
            });
        }
        let kind = marker_kind(&line[start..end_ptr], null, default, true);
        if kind == KIND_VALUE && saw_non_ascii {
            opts.server_encoding.verify_field(&out[out_start..])?;
        }
        row.spans.push(Span {
            start: out_start,
            len: out.len() - out_start,
            kind,
            quoted: false,
        });
        out.push(0);
        if !found_delim {
            return Ok(());
        }
    }
}
