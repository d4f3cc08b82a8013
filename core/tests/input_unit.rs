//! Unit tests of the COPY text and CSV readers. Every expectation below was checked against
//! PostgreSQL 15.19, 16.15 and 17.11 (`COPY t FROM 'file'`), which agree on all of them.
//!
//! Every case runs through several chunk sizes (1, 2, 3, 7, 16, 64 bytes and the default)
//! and through a source that returns one byte per `read`, and must give the same rows,
//! line numbers, byte counts and errors each time.

use fastcopy_core::input::{
    Field, Format, HeaderMatch, InputError, InputErrorKind, Options, Row, RowReader,
};
use std::io::Read;

#[derive(Debug, PartialEq, Eq, Clone)]
enum F {
    N,
    D,
    V(Vec<u8>),
}

fn v(s: &str) -> F {
    F::V(s.as_bytes().to_vec())
}
fn vb(b: &[u8]) -> F {
    F::V(b.to_vec())
}
use F::{D, N};

#[derive(Debug, PartialEq, Eq, Clone)]
struct Err {
    sqlstate: String,
    message: String,
    hint: Option<&'static str>,
    line: u64,
    raw_line: Option<Vec<u8>>,
}

#[derive(Debug, PartialEq, Eq, Clone)]
struct Out {
    /// (line_no, raw_len, fields, quoted flags)
    rows: Vec<(u64, usize, Vec<F>, Vec<bool>)>,
    err: Option<Err>,
    bytes_read: u64,
}

impl Out {
    fn fields(&self) -> Vec<Vec<F>> {
        self.rows.iter().map(|r| r.2.clone()).collect()
    }
    fn lines(&self) -> Vec<u64> {
        self.rows.iter().map(|r| r.0).collect()
    }
    fn err(&self) -> &Err {
        self.err.as_ref().expect("an error")
    }
    fn ok(&self) -> Vec<Vec<F>> {
        assert!(self.err.is_none(), "unexpected error {:?}", self.err);
        self.fields()
    }
}

/// Returns one byte per read.
struct OneByte<'a>(&'a [u8]);
impl Read for OneByte<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() || buf.is_empty() {
            return Ok(0);
        }
        buf[0] = self.0[0];
        self.0 = &self.0[1..];
        Ok(1)
    }
}

fn collect<R: Read>(mut rd: RowReader<R>, total: usize) -> Out {
    let mut row = Row::new();
    let mut rows = Vec::new();
    let mut err = None;
    let mut consumed = 0usize;
    loop {
        match rd.next_row(&mut row) {
            Ok(true) => {
                assert!(!row.is_empty());
                let mut fields = Vec::new();
                let mut quoted = Vec::new();
                for i in 0..row.len() {
                    quoted.push(row.quoted(i));
                    fields.push(match row.field(i) {
                        Field::Null => N,
                        Field::Default => D,
                        Field::Value(b) => {
                            // The C-string invariant.
                            let p = b.as_ptr();
                            let term = unsafe { *p.add(b.len()) };
                            assert_eq!(term, 0, "value not NUL-terminated");
                            assert!(!b.contains(&0), "NUL inside a value");
                            vb(b)
                        }
                    });
                }
                let raw = row.raw_line();
                assert_eq!(raw.len(), row.line_len());
                assert!(row.raw_len() >= row.line_len());
                consumed += row.raw_len();
                rows.push((row.line_no(), row.raw_len(), fields, quoted));
            }
            Ok(false) => {
                // Once finished, always finished.
                assert!(!rd.next_row(&mut row).unwrap());
                break;
            }
            Err(e) => {
                err = Some(to_err(&e));
                assert!(
                    !rd.next_row(&mut row).unwrap(),
                    "reader must stop after an error"
                );
                break;
            }
        }
    }
    assert!(consumed <= total);
    Out {
        rows,
        err,
        bytes_read: rd.bytes_read(),
    }
}

fn to_err(e: &InputError) -> Err {
    // Display and Error work.
    let shown = e.to_string();
    assert!(shown.contains(&e.message()));
    Err {
        sqlstate: e.sqlstate().as_str().to_string(),
        message: e.message(),
        hint: e.hint(),
        line: e.line,
        raw_line: e.raw_line.clone(),
    }
}

fn run(data: &[u8], opts: Options) -> Out {
    let reference = collect(RowReader::new(data, opts.clone()), data.len());
    for chunk in [1usize, 2, 3, 7, 16, 64] {
        let o = collect(
            RowReader::with_capacity(data, opts.clone(), chunk),
            data.len(),
        );
        assert_eq!(o.rows, reference.rows, "chunk {chunk}, data {data:?}");
        assert_eq!(o.err, reference.err, "chunk {chunk}, data {data:?}");
    }
    let o = collect(
        RowReader::with_capacity(OneByte(data), opts.clone(), 4),
        data.len(),
    );
    assert_eq!(o.rows, reference.rows, "one byte reads, data {data:?}");
    assert_eq!(o.err, reference.err, "one byte reads, data {data:?}");
    reference
}

fn text() -> Options {
    Options::text()
}
fn csv() -> Options {
    Options::csv()
}
fn rows(data: &[u8], opts: Options) -> Vec<Vec<F>> {
    run(data, opts).ok()
}
fn err(data: &[u8], opts: Options) -> Err {
    run(data, opts).err().clone()
}

// ---------------------------------------------------------------- options

#[test]
fn option_defaults() {
    let t = Options::text();
    assert_eq!(t.format, Format::Text);
    assert_eq!(t.delimiter, b'\t');
    assert_eq!(t.null, b"\\N");
    assert_eq!(t.default, None);
    assert_eq!(t.header, 0);
    assert_eq!(t.server_major, 17);
    let c = Options::csv();
    assert_eq!(c.format, Format::Csv);
    assert_eq!(c.delimiter, b',');
    assert_eq!(c.null, b"");
    assert_eq!(c.quote, b'"');
    assert_eq!(c.escape, b'"');
    assert_eq!(c.default, None);
}

#[test]
fn reader_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<RowReader<std::fs::File>>();
    assert_send::<RowReader<&[u8]>>();
    assert_send::<Row>();
    assert_send::<InputError>();
}

// ---------------------------------------------------------------- text: basics

#[test]
fn text_basic_rows() {
    let o = run(b"a\tb\nc\td\n", text());
    assert_eq!(o.ok(), vec![vec![v("a"), v("b")], vec![v("c"), v("d")]]);
    assert_eq!(o.lines(), vec![1, 2]);
    assert_eq!(o.rows[0].1, 4);
    assert_eq!(o.bytes_read, 8);
}

#[test]
fn empty_input() {
    assert_eq!(rows(b"", text()), Vec::<Vec<F>>::new());
    assert_eq!(rows(b"", csv()), Vec::<Vec<F>>::new());
}

#[test]
fn no_trailing_newline() {
    let o = run(b"a\tb\nc\td", text());
    assert_eq!(o.ok(), vec![vec![v("a"), v("b")], vec![v("c"), v("d")]]);
    assert_eq!(o.rows[1].1, 3);
    assert_eq!(rows(b"x", text()), vec![vec![v("x")]]);
}

#[test]
fn text_empty_line_is_one_empty_field() {
    assert_eq!(
        rows(b"a\n\nb\n", text()),
        vec![vec![v("a")], vec![v("")], vec![v("b")]]
    );
    let mut o = text();
    o.null = b"".to_vec();
    assert_eq!(
        rows(b"a\n\nb\n", o),
        vec![vec![v("a")], vec![N], vec![v("b")]]
    );
    assert_eq!(rows(b"\n", text()), vec![vec![v("")]]);
}

#[test]
fn text_empty_fields() {
    assert_eq!(rows(b"\t\t\n", text()), vec![vec![v(""), v(""), v("")]]);
}

#[test]
fn text_null_is_compared_raw() {
    assert_eq!(
        rows(b"\\N\t\\\\N\tN\n", text()),
        vec![vec![N, v("\\N"), v("N")]]
    );
    // The NULL string with a backslash is compared before de-escaping.
    let mut o = text();
    o.null = b"x\\y".to_vec();
    assert_eq!(rows(b"x\\y\tx\\\\y\n", o), vec![vec![N, v("x\\y")]]);
}

#[test]
fn text_other_delimiter() {
    let mut o = text();
    o.delimiter = b'|';
    assert_eq!(
        rows(b"a|b\tc|\\|\n", o),
        vec![vec![v("a"), v("b\tc"), v("|")]]
    );
}

// ---------------------------------------------------------------- text: escapes

#[test]
fn text_simple_escapes() {
    assert_eq!(
        rows(b"\\b\\f\\n\\r\\t\\v\\a\\\\\\N\n", text()),
        vec![vec![vb(b"\x08\x0c\n\r\t\x0ba\\N")]]
    );
}

#[test]
fn text_octal_escapes() {
    assert_eq!(
        rows(b"\\1\\12\\123\\1234\n", text()),
        vec![vec![vb(b"\x01\x0aS\x534")]]
    );
    assert_eq!(
        rows(b"\\101\\0601\\8\n", text()),
        vec![vec![vb(b"A01\x38")]]
    );
    // \777 = 511, taken mod 256: 0xff, which alone is not UTF-8.
    let e = err(b"\\777\n", text());
    assert_eq!(e.sqlstate, "22021");
    assert_eq!(
        e.message,
        "invalid byte sequence for encoding \"UTF8\": 0xff"
    );
    assert_eq!(e.raw_line.as_deref(), Some(&b"\\777"[..]));
    // \303\251 is é.
    assert_eq!(rows(b"\\303\\251\n", text()), vec![vec![v("é")]]);
}

#[test]
fn text_hex_escapes() {
    assert_eq!(
        rows(b"\\x4\\x41\\x414\\xg\\X41\\x\n", text()),
        vec![vec![vb(b"\x04AA4xgX41x")]]
    );
    assert_eq!(rows(b"\\xc3\\xA9\n", text()), vec![vec![v("é")]]);
}

#[test]
fn text_backslash_stands_for_itself() {
    // Backslash + delimiter, + newline, + any other char.
    assert_eq!(rows(b"a\\\tb\tc\n", text()), vec![vec![v("a\tb"), v("c")]]);
    assert_eq!(rows(b"a\\\nb\n", text()), vec![vec![v("a\nb")]]);
    assert_eq!(rows(b"\\q\\\\.x\n", text()), vec![vec![v("q\\.x")]]);
    assert_eq!(rows(b"\\\xc3\xa9\n", text()), vec![vec![v("é")]]);
}

#[test]
fn text_trailing_backslash_at_eof_is_dropped() {
    assert_eq!(rows(b"ab\\", text()), vec![vec![v("ab")]]);
    assert_eq!(rows(b"\\", text()), vec![vec![v("")]]);
    // ... and not part of the raw field compared with NULL.
    assert_eq!(rows(b"\\N\\", text()), vec![vec![N]]);
    assert_eq!(rows(b"a\r\\", text()), vec![vec![v("a")], vec![v("")]]);
}

#[test]
fn text_escaped_cr_before_lf_on_first_line() {
    // The backslash takes the \r; the \n then ends the line and fixes the style to \n.
    assert_eq!(
        rows(b"a\\\r\nb\n", text()),
        vec![vec![v("a\r")], vec![v("b")]]
    );
}

#[test]
fn text_embedded_nul_is_an_encoding_error() {
    for data in [&b"a\\000b\n"[..], b"a\\x00b\n", b"\\0\n", b"\\400\n"] {
        let e = err(data, text());
        assert_eq!(e.sqlstate, "22021");
        assert_eq!(
            e.message,
            "invalid byte sequence for encoding \"UTF8\": 0x00"
        );
        assert_eq!(e.line, 1);
        assert_eq!(e.raw_line.as_deref(), Some(&data[..data.len() - 1]));
    }
    // ... but not in a NULL field (checked only for data).
    let mut o = text();
    o.null = b"\\0".to_vec();
    assert_eq!(rows(b"\\0\n", o), vec![vec![N]]);
}

#[test]
fn text_escaped_invalid_utf8() {
    let e = err(b"a\nb\\xffc\nd\n", text());
    assert_eq!(
        e.message,
        "invalid byte sequence for encoding \"UTF8\": 0xff"
    );
    assert_eq!(e.line, 2);
    assert_eq!(e.raw_line.as_deref(), Some(&b"b\\xffc"[..]));
    let e = err(b"\\xe2\\x28x\n", text());
    assert_eq!(
        e.message,
        "invalid byte sequence for encoding \"UTF8\": 0xe2 0x28 0x78"
    );
    let e = err(b"ok\t\\xe2\\x28\n", text());
    assert_eq!(
        e.message,
        "invalid byte sequence for encoding \"UTF8\": 0xe2 0x28"
    );
    // The de-escaped field is verified as a whole, raw bytes included.
    let e = err(b"\\xe2\xc3\xa9\n", text());
    assert_eq!(
        e.message,
        "invalid byte sequence for encoding \"UTF8\": 0xe2 0xc3 0xa9"
    );
    assert_eq!(
        rows(b"\\xe2\\x82\\xac\n", text()),
        vec![vec![v("\u{20ac}")]]
    );
}

// ---------------------------------------------------------------- text: line endings

#[test]
fn text_line_ending_styles() {
    for data in [
        &b"a\tb\nc\td\n"[..],
        b"a\tb\r\nc\td\r\n",
        b"a\tb\rc\td\r",
        b"a\tb\r\nc\td",
    ] {
        let o = run(data, text());
        assert_eq!(
            o.ok(),
            vec![vec![v("a"), v("b")], vec![v("c"), v("d")]],
            "{data:?}"
        );
        assert_eq!(o.lines(), vec![1, 2]);
    }
    let o = run(b"a\r\nb\r\n", text());
    assert_eq!(o.rows.iter().map(|r| r.1).collect::<Vec<_>>(), vec![3, 3]);
}

fn assert_lit_nl(e: &Err, line: u64) {
    assert_eq!(e.sqlstate, "22P04");
    assert_eq!(e.message, "literal newline found in data");
    assert_eq!(e.hint, Some("Use \"\\n\" to represent newline."));
    assert_eq!(e.line, line);
    assert_eq!(e.raw_line, None);
}

fn assert_lit_cr(e: &Err, line: u64) {
    assert_eq!(e.sqlstate, "22P04");
    assert_eq!(e.message, "literal carriage return found in data");
    assert_eq!(e.hint, Some("Use \"\\r\" to represent carriage return."));
    assert_eq!(e.line, line);
}

#[test]
fn text_line_ending_mismatches() {
    assert_lit_nl(&err(b"a\rb\nc\r", text()), 2);
    assert_lit_cr(&err(b"a\nb\rc\n", text()), 2);
    assert_lit_cr(&err(b"a\r\nb\rc\r\n", text()), 2);
    assert_lit_nl(&err(b"a\r\nb\nc\r\n", text()), 2);
    // A lone \r at EOF where \r\n is the style.
    assert_lit_cr(&err(b"a\r\nb\r", text()), 2);
    // The rows before the error are returned.
    let o = run(b"a\nb\nc\rd\n", text());
    assert_eq!(o.fields(), vec![vec![v("a")], vec![v("b")]]);
    assert_lit_cr(o.err(), 3);
}

// ---------------------------------------------------------------- text: end marker

#[test]
fn text_end_marker() {
    let o = run(b"a\n\\.\nb\n", text());
    assert_eq!(o.ok(), vec![vec![v("a")]]);
    assert_eq!(rows(b"\\.\n", text()), Vec::<Vec<F>>::new());
    assert_eq!(rows(b"a\r\\.\rb\r", text()), vec![vec![v("a")]]);
    assert_eq!(rows(b"a\r\n\\.\r\nb\r\n", text()), vec![vec![v("a")]]);
    // After the marker, nothing is read: not even invalid bytes.
    assert_eq!(rows(b"a\n\\.\n\xff\n", text()), vec![vec![v("a")]]);
    // \\. is data.
    assert_eq!(rows(b"\\\\.\n", text()), vec![vec![v("\\.")]]);
}

#[test]
fn text_end_marker_after_data_keeps_the_data_and_goes_on() {
    // The server keeps the text before \. as a row and, reading a file, goes on after it.
    let o = run(b"a\nxy\\.\nb\n", text());
    assert_eq!(o.ok(), vec![vec![v("a")], vec![v("xy")], vec![v("b")]]);
    assert_eq!(o.lines(), vec![1, 2, 3]);
    assert_eq!(o.rows[1].1, 5);
    assert_eq!(
        rows(b"a\rxx\\.\rb\r", text()),
        vec![vec![v("a")], vec![v("xx")], vec![v("b")]]
    );
    // On the first line \.\r ends the marker without looking for \n, which then is an
    // empty line of its own.
    assert_eq!(
        rows(b"ab\\.\r\nzz\n", text()),
        vec![vec![v("ab")], vec![v("")], vec![v("zz")]]
    );
    assert_eq!(rows(b"\\.\r\nzz\n", text()), Vec::<Vec<F>>::new());
    // Fields before the marker are split and de-escaped as usual.
    assert_eq!(rows(b"a\t\\t\\.\n", text()), vec![vec![v("a"), v("\t")]]);
}

#[test]
fn text_end_marker_errors() {
    for data in [
        &b"a\n\\.x\nb\n"[..],
        b"a\n\\.",
        b"a\r\n\\.\r",
        b"a\r\n\\.x\n",
        b"\\.x",
    ] {
        let e = err(data, text());
        assert_eq!(e.sqlstate, "22P04", "{data:?}");
        assert_eq!(e.message, "end-of-copy marker corrupt", "{data:?}");
        assert_eq!(e.hint, None);
    }
    assert_eq!(err(b"a\n\\.x\nb\n", text()).line, 2);
    for (data, line) in [
        (&b"a\r\n\\.\nb\n"[..], 2),
        (&b"a\n\\.\rb\n"[..], 2),
        (&b"a\rb\r\\.\n"[..], 3),
    ] {
        let e = err(data, text());
        assert_eq!(
            e.message, "end-of-copy marker does not match previous newline style",
            "{data:?}"
        );
        assert_eq!(e.line, line);
    }
}

#[test]
fn end_marker_on_a_stream_ends_the_data_after_data_on_its_line() {
    // 15-17: COPY FROM STDIN stops at `xy\.` (the row xy is kept); a file reads on.
    for major in [15, 16, 17] {
        let mut o = text();
        o.server_major = major;
        o.stream = true;
        assert_eq!(
            rows(b"a\nxy\\.\nb\n", o.clone()),
            vec![vec![v("a")], vec![v("xy")]]
        );
        assert_eq!(rows(b"5\\.\n0\n", o.clone()), vec![vec![v("5")]]);
        assert_eq!(rows(b"1\t\\.\r\n", o.clone()), vec![vec![v("1"), v("")]]);
        o.stream = false;
        assert_eq!(rows(b"5\\.\n7\n", o), vec![vec![v("5")], vec![v("7")]]);
    }
}

#[test]
fn end_marker_in_18() {
    let mut t = text();
    t.server_major = 18;
    // alone on its line: the end, as before
    assert_eq!(rows(b"a\n\\.\nb\n", t.clone()), vec![vec![v("a")]]);
    assert_eq!(rows(b"a\r\n\\.\r\nb\r\n", t.clone()), vec![vec![v("a")]]);
    // data before it, something after it, or no line ending: not alone on its line
    for (data, line) in [
        (&b"a\nxy\\.\nb\n"[..], 2),
        (b"a\n\\.x\nb\n", 2),
        (b"a\n\\.", 2),
        (b"\\.x", 1),
        (b"a\r\n\\.x\n", 2),
    ] {
        let e = err(data, t.clone());
        assert_eq!(
            (e.sqlstate.as_str(), e.message.as_str(), e.line),
            ("22P04", "end-of-copy marker is not alone on its line", line),
            "{data:?}"
        );
    }
    // the newline-style checks come first
    assert_eq!(
        err(b"a\r\n\\.\nb\n", t.clone()).message,
        "end-of-copy marker does not match previous newline style"
    );
    assert_eq!(
        err(b"a\nxy\\.\r\n", t.clone()).message,
        "end-of-copy marker does not match previous newline style"
    );
    // CSV: `\.` is data
    let mut c = csv();
    c.server_major = 18;
    assert_eq!(
        rows(b"a\n\\.\nb\n", c.clone()),
        vec![vec![v("a")], vec![v("\\.")], vec![v("b")]]
    );
    assert_eq!(rows(b"a\n\\.", c), vec![vec![v("a")], vec![v("\\.")]]);
    // 17 for comparison: the marker ends CSV data
    assert_eq!(rows(b"a\n\\.\nb\n", csv()), vec![vec![v("a")]]);
}

#[test]
fn zero_column_tables_see_unsplit_lines() {
    let mut o = text();
    o.no_columns = true;
    // `\0` would be an encoding error if the line were de-escaped
    let mut rd = RowReader::new(&b"\n\\0\n"[..], o);
    let mut row = Row::new();
    assert!(rd.next_row(&mut row).unwrap());
    assert_eq!((row.len(), row.line_len()), (0, 0));
    assert!(rd.next_row(&mut row).unwrap());
    assert_eq!((row.len(), row.line_len(), row.line_no()), (0, 2, 2));
    assert_eq!(&row.raw_line()[..], b"\\0");
    assert!(!rd.next_row(&mut row).unwrap());
}

// ---------------------------------------------------------------- encoding of the raw input

fn assert_enc(e: &Err, bytes: &str, line: u64) {
    assert_eq!(e.sqlstate, "22021");
    assert_eq!(
        e.message,
        format!("invalid byte sequence for encoding \"UTF8\": {bytes}")
    );
    assert_eq!(e.hint, None);
    assert_eq!(e.line, line);
    assert_eq!(e.raw_line, None);
}

#[test]
fn raw_invalid_utf8() {
    let o = run(b"a\nb\xffc\nd\n", text());
    assert_eq!(o.fields(), vec![vec![v("a")]]);
    assert_enc(o.err(), "0xff", 2);
    assert_enc(&err(b"a\nb\xe2\x28", text()), "0xe2 0x28", 2);
    assert_enc(
        &err(b"a\xf0\x28\x8c\x28\n", text()),
        "0xf0 0x28 0x8c 0x28",
        1,
    );
    assert_enc(&err(b"a\xc0\x80\n", text()), "0xc0 0x80", 1);
    assert_enc(&err(b"\xed\xa0\x80\n", text()), "0xed 0xa0 0x80", 1);
    assert_enc(&err(b"\xf4\x90\x80\x80\n", csv()), "0xf4 0x90 0x80 0x80", 1);
    assert_enc(&err(b"x\xe2\x82", csv()), "0xe2 0x82", 1);
    assert_enc(&err(b"\x80", text()), "0x80", 1);
    // Valid multibyte characters, split across chunks in `run`.
    assert_eq!(
        rows("é\t€\t😀\n".as_bytes(), text()),
        vec![vec![v("é"), v("€"), v("😀")]]
    );
}

#[test]
fn raw_nul_byte() {
    assert_enc(&err(b"a\x00b\n", text()), "0x00", 1);
    assert_enc(&err(b"a\n\"\x00\"\n", csv()), "0x00", 2);
}

#[test]
fn raw_invalid_byte_line_number_follows_the_server() {
    // The server looks one byte past a \r while the line ending is unknown (or \r\n),
    // so an invalid byte right after it is reported on that line.
    assert_enc(&err(b"a\r\xff\n", text()), "0xff", 1);
    assert_enc(&err(b"a\r\nb\r\xff", text()), "0xff", 2);
    // With the \r style known, no look-ahead: the next line.
    assert_enc(&err(b"a\rb\r\xff", text()), "0xff", 3);
    assert_enc(&err(b"a\n\xff\n", text()), "0xff", 2);
    // CSV always looks past \r (and backslash).
    assert_enc(&err(b"a\nb\r\xff", csv()), "0xff", 2);
    assert_enc(&err(b"a\rb\r\xff", csv()), "0xff", 2);
    assert_enc(&err(b"a\n\\\xff\n", csv()), "0xff", 2);
    // Inside quotes, the look-ahead past \r comes before the \r is counted as a new line.
    assert_enc(&err(b"a\r\n\"b\r\xff\"\r\n", csv()), "0xff", 2);
    assert_enc(&err(b"a\n\"b\r\n\r\xff\"\n", csv()), "0xff", 3);
    // An invalid byte after the end marker is never read.
    assert_eq!(rows(b"a\n\\.\n\xff", csv()), vec![vec![v("a")]]);
    // ... but one right after `\.` is found before the marker is judged.
    assert_enc(&err(b"a\n\\.\xff\n", text()), "0xff", 2);
}

// ---------------------------------------------------------------- header

#[test]
fn header_is_skipped_and_counted() {
    let mut o = text();
    o.header = 1;
    let out = run(b"h1\th2\na\tb\n", o.clone());
    assert_eq!(out.ok(), vec![vec![v("a"), v("b")]]);
    assert_eq!(out.lines(), vec![2]);
    // A header ending in the marker or at EOF: no data.
    assert_eq!(rows(b"h\\.\nb\n", o.clone()), Vec::<Vec<F>>::new());
    assert_eq!(rows(b"h", o.clone()), Vec::<Vec<F>>::new());
    assert_eq!(rows(b"", o.clone()), Vec::<Vec<F>>::new());
    // Line-level errors in the header are raised; field-level ones are not (not split).
    assert_enc(&err(b"h\xff\nb\n", o.clone()), "0xff", 1);
    assert_eq!(rows(b"\\xff\nb\n", o.clone()), vec![vec![v("b")]]);
    assert_enc(&err(b"h\nb\n\xff\n", o), "0xff", 3);
}

#[test]
fn header_lines_are_skipped_and_counted() {
    // HEADER n (PostgreSQL 19): n lines thrown away, each counted in the line numbers
    for n in 0..5u64 {
        let mut o = text();
        o.header = n;
        let data = b"1\t2\n3\t4\n5\t6\n7\t8\n";
        let out = run(data, o);
        let want: Vec<u64> = (n + 1..=4).collect();
        assert_eq!(out.lines(), want, "HEADER {n}");
        assert_eq!(
            out.ok().len(),
            4usize.saturating_sub(n as usize),
            "HEADER {n}"
        );
    }
    let mut o = text();
    o.header = 3;
    // more header lines than the data has, or the end marker among them: no data
    assert_eq!(rows(b"a\nb\n", o.clone()), Vec::<Vec<F>>::new());
    assert_eq!(rows(b"a\n\\.\nc\nd\n", o.clone()), Vec::<Vec<F>>::new());
    // a line-level error in any header line is raised, with its line number
    assert_enc(&err(b"a\nb\xff\nc\nd\n", o.clone()), "0xff", 2);
    // CSV: a header line may hold quoted newlines (one line as COPY counts them)
    let mut o = csv();
    o.header = 2;
    let out = run(b"\"h\nh\",x\ny,z\na,b\n", o);
    assert_eq!(out.ok(), vec![vec![v("a"), v("b")]]);
}

#[test]
fn csv_header_may_span_lines() {
    let mut o = csv();
    o.header = 1;
    // The first line's quoted \n is not counted (line ending not known yet).
    let out = run(b"\"h\nh\",x\na,b\n", o.clone());
    assert_eq!(out.ok(), vec![vec![v("a"), v("b")]]);
    assert_eq!(out.lines(), vec![2]);
    let e = err(b"\"h\nh\"\nb\nc\"\n", o);
    assert_eq!(e.message, "unterminated CSV quoted field");
    assert_eq!(e.line, 4);
}

// ---------------------------------------------------------------- DEFAULT marker

#[test]
fn default_marker_text() {
    let mut o = text();
    o.default = Some(b"D".to_vec());
    o.server_major = 16;
    assert_eq!(
        rows(b"D\t\\D\tx\tDD\n", o.clone()),
        vec![vec![D, v("D"), v("x"), v("DD")]]
    );
    // Compared raw.
    o.default = Some(b"\\D".to_vec());
    o.null = b"N".to_vec();
    assert_eq!(rows(b"\\D\tD\tN\n", o), vec![vec![D, v("D"), N]]);
}

#[test]
fn default_marker_csv() {
    let mut o = csv();
    o.default = Some(b"D".to_vec());
    let out = run(b"D,\"D\",x,\n", o);
    assert_eq!(out.ok(), vec![vec![D, v("D"), v("x"), N]]);
    assert_eq!(out.rows[0].3, vec![false, true, false, false]);
}

// ---------------------------------------------------------------- CSV

#[test]
fn csv_basic_and_null() {
    let out = run(b"a,b\n1,\n,\"\"\n", csv());
    assert_eq!(
        out.ok(),
        vec![vec![v("a"), v("b")], vec![v("1"), N], vec![N, v("")]]
    );
    assert_eq!(out.rows[2].3, vec![false, true]);
    assert_eq!(out.lines(), vec![1, 2, 3]);
}

#[test]
fn csv_empty_line_is_one_null_field() {
    assert_eq!(
        rows(b"a\n\nb\n", csv()),
        vec![vec![v("a")], vec![N], vec![v("b")]]
    );
    let mut o = csv();
    o.null = b"\\N".to_vec();
    assert_eq!(
        rows(b"a\n\nb\n", o),
        vec![vec![v("a")], vec![v("")], vec![v("b")]]
    );
}

#[test]
fn csv_quoting() {
    assert_eq!(
        rows(b"\"a,b\",\"c\"\"d\",\"\",\"\"\"\"\n", csv()),
        vec![vec![v("a,b"), v("c\"d"), v(""), v("\"")]]
    );
    // A quote may open a quoted section anywhere in a field, and re-open one after it closed.
    assert_eq!(rows(b"ab\"c,d\"e\n", csv()), vec![vec![v("abc,de")]]);
    assert_eq!(rows(b"\"a\"b\"c\"\n", csv()), vec![vec![v("abc")]]);
    assert_eq!(rows(b"\"a\"\"\"\n", csv()), vec![vec![v("a\"")]]);
    // Backslashes are data in CSV.
    assert_eq!(
        rows(b"a\\b,\"c\\\"\n", csv()),
        vec![vec![v("a\\b"), v("c\\")]]
    );
    // Quoted fields are never NULL; the quoted NULL string is data.
    let mut o = csv();
    o.null = b"N".to_vec();
    let out = run(b"N,\"N\",\"\"\n", o);
    assert_eq!(out.ok(), vec![vec![N, v("N"), v("")]]);
    assert_eq!(out.rows[0].3, vec![false, true, true]);
}

#[test]
fn csv_other_quote_and_delimiter() {
    let mut o = csv();
    o.quote = b'\'';
    o.escape = b'\'';
    o.delimiter = b'|';
    assert_eq!(
        rows(b"'a|b'|'it''s'|\"x\"\n", o),
        vec![vec![v("a|b"), v("it's"), v("\"x\"")]]
    );
}

#[test]
fn csv_escape_differs_from_quote() {
    let mut o = csv();
    o.escape = b'\\';
    // Inside quotes, escape + quote or escape + escape stand for that char; else literal.
    assert_eq!(
        rows(b"\"a\\\"b\\\\c\\d\"\n", o.clone()),
        vec![vec![v("a\"b\\c\\d")]]
    );
    // A doubled quote closes and re-opens.
    assert_eq!(rows(b"\"a\"\"b\"\n", o.clone()), vec![vec![v("ab")]]);
    // Outside quotes, the escape is data.
    assert_eq!(rows(b"a\\\"b,c\"\n", o.clone()), vec![vec![v("a\\b,c")]]);
    // An escaped quote does not end the quoted section in the line scan either.
    let out = run(b"\"a\\\"\nb\",c\nd,e\n", o);
    assert_eq!(
        out.ok(),
        vec![vec![v("a\"\nb"), v("c")], vec![v("d"), v("e")]]
    );
}

#[test]
fn csv_embedded_newlines_and_line_numbers() {
    // Quoted newlines are data. Line numbers count them, except on the first line
    // (where the line ending is not yet known: only quoted \r would count).
    let out = run(b"a,\"x\ny\"\nb,c\nd,\"1\n2\n3\"\ne,f\n", csv());
    assert_eq!(
        out.ok(),
        vec![
            vec![v("a"), v("x\ny")],
            vec![v("b"), v("c")],
            vec![v("d"), v("1\n2\n3")],
            vec![v("e"), v("f")]
        ]
    );
    assert_eq!(out.lines(), vec![1, 2, 5, 6]);
    let out = run(b"\"x\ny\",a\nb,c\n", csv());
    assert_eq!(out.lines(), vec![1, 2]);
    // With \r\n, the quoted \r are counted.
    let out = run(b"a,b\r\n\"x\ry\r\nz\",a\r\nb,c\r\n", csv());
    assert_eq!(out.ok()[1], vec![v("x\ry\r\nz"), v("a")]);
    assert_eq!(out.lines(), vec![1, 4, 5]);
}

fn assert_unterminated(e: &Err, line: u64, raw: &[u8]) {
    assert_eq!(e.sqlstate, "22P04");
    assert_eq!(e.message, "unterminated CSV quoted field");
    assert_eq!(e.hint, None);
    assert_eq!(e.line, line);
    assert_eq!(e.raw_line.as_deref(), Some(raw));
}

#[test]
fn csv_unterminated_quote() {
    assert_unterminated(&err(b"a,b\n\"x,y\n", csv()), 3, b"\"x,y\n");
    assert_unterminated(&err(b"a,b\nc,\"x\ny\nz", csv()), 4, b"c,\"x\ny\nz");
    assert_unterminated(&err(b"\"", csv()), 1, b"\"");
    let mut o = csv();
    o.escape = b'\\';
    // The line ending is not known yet: the quoted \n is not counted.
    assert_unterminated(&err(b"\"a\\\"\n", o), 1, b"\"a\\\"\n");
}

#[test]
fn csv_line_ending_mismatches() {
    let e = err(b"a\r\nb\nc\r\n", csv());
    assert_eq!(e.message, "unquoted newline found in data");
    assert_eq!(e.hint, Some("Use quoted CSV field to represent newline."));
    assert_eq!(e.line, 2);
    let e = err(b"a\nb\rc\n", csv());
    assert_eq!(e.message, "unquoted carriage return found in data");
    assert_eq!(
        e.hint,
        Some("Use quoted CSV field to represent carriage return.")
    );
    assert_eq!(e.line, 2);
    let e = err(b"a\r\nb\r", csv());
    assert_eq!(e.message, "unquoted carriage return found in data");
    // Quoted, they are data.
    assert_eq!(
        rows(b"\"a\rb\"\n\"c\r\nd\"\n", csv()),
        vec![vec![v("a\rb")], vec![v("c\r\nd")]]
    );
}

#[test]
fn csv_end_marker() {
    assert_eq!(rows(b"a\n\\.\nb\n", csv()), vec![vec![v("a")]]);
    assert_eq!(rows(b"a\r\n\\.\r\nb\r\n", csv()), vec![vec![v("a")]]);
    assert_eq!(rows(b"a\r\\.\rb\r", csv()), vec![vec![v("a")]]);
    // Not alone or not first on its line: data.
    assert_eq!(
        rows(b"a\nx\\.\nb\n", csv()),
        vec![vec![v("a")], vec![v("x\\.")], vec![v("b")]]
    );
    assert_eq!(
        rows(b"a\n\\.x\nb\n", csv()),
        vec![vec![v("a")], vec![v("\\.x")], vec![v("b")]]
    );
    assert_eq!(rows(b"a\n\\.", csv()), vec![vec![v("a")], vec![v("\\.")]]);
    assert_eq!(
        rows(b"a\n\"\\.\"\nb\n", csv()),
        vec![vec![v("a")], vec![v("\\.")], vec![v("b")]]
    );
    assert_eq!(rows(b"\\", csv()), vec![vec![v("\\")]]);
    // With \r\n, `\.\n` is not the marker, and its \n then is an unquoted newline.
    let e = err(b"a\r\n\\.\nb\r\n", csv());
    assert_eq!(e.message, "unquoted newline found in data");
    assert_eq!(e.line, 2);
    let e = err(b"a\n\\.\rb\n", csv());
    assert_eq!(
        e.message,
        "end-of-copy marker does not match previous newline style"
    );
}

#[test]
fn csv_through_csv_core_and_own_path_agree() {
    // Canonical quoted lines (csv-core) next to non-canonical ones (own path).
    let data = b"\"a\",\"b\"\"c\",d\n\"x\"y,\"z\"\n\xef\xbb\xbf\"q\"\n\"1\",2,\"\"\n";
    let out = run(data, csv());
    assert_eq!(
        out.ok(),
        vec![
            vec![v("a"), v("b\"c"), v("d")],
            vec![v("xy"), v("z")],
            vec![v("\u{feff}q")],
            vec![v("1"), v("2"), v("")]
        ]
    );
    assert_eq!(out.rows[0].3, vec![true, true, false]);
    assert_eq!(out.rows[1].3, vec![true, true]);
    assert_eq!(out.rows[3].3, vec![true, false, true]);
}

// ---------------------------------------------------------------- long rows, chunking

#[test]
fn rows_longer_than_a_chunk() {
    let long: Vec<u8> = (0..10_000).map(|i| b'a' + (i % 26) as u8).collect();
    let mut data = Vec::new();
    data.extend_from_slice(&long);
    data.push(b'\t');
    data.extend_from_slice(b"x\\ty");
    data.push(b'\n');
    data.extend_from_slice(b"z\n");
    for chunk in [1usize, 5, 100, 4096] {
        let o = collect(
            RowReader::with_capacity(&data[..], text(), chunk),
            data.len(),
        );
        assert_eq!(
            o.fields(),
            vec![vec![F::V(long.clone()), v("x\ty")], vec![v("z")]]
        );
        assert_eq!(o.bytes_read, data.len() as u64);
    }
    let mut c = Vec::new();
    c.push(b'"');
    c.extend_from_slice(&long);
    c.extend_from_slice(b"\n\"\"\",1\n");
    let mut expect = long.clone();
    expect.extend_from_slice(b"\n\"");
    let o = collect(RowReader::with_capacity(&c[..], csv(), 7), c.len());
    assert_eq!(o.fields(), vec![vec![F::V(expect), v("1")]]);
    assert_eq!(o.lines(), vec![1]);
}

#[test]
fn many_rows_and_fast_path_mix() {
    // Lines alternating between the fast path and the general path, with \r\n.
    let mut data = Vec::new();
    let mut expect = Vec::new();
    for i in 0..500 {
        match i % 4 {
            0 => {
                data.extend_from_slice(format!("{i}\t-{i}\t\\N\r\n").as_bytes());
                expect.push(vec![v(&i.to_string()), v(&format!("-{i}")), N]);
            }
            1 => {
                data.extend_from_slice(format!("{i}\\t\t\r\n").as_bytes());
                expect.push(vec![v(&format!("{i}\t")), v("")]);
            }
            2 => {
                data.extend_from_slice(b"\r\n");
                expect.push(vec![v("")]);
            }
            _ => {
                data.extend_from_slice("é\tü\t€\r\n".as_bytes());
                expect.push(vec![v("é"), v("ü"), v("€")]);
            }
        }
    }
    let o = run(&data, text());
    assert_eq!(o.ok(), expect);
    assert_eq!(o.lines(), (1..=500).collect::<Vec<u64>>());
    assert_eq!(
        o.rows.iter().map(|r| r.1 as u64).sum::<u64>(),
        data.len() as u64
    );
}

#[test]
fn raw_line_reconstruction() {
    let mut rd = RowReader::new(&b"a\tb\t\\N\nc\\td\n"[..], text());
    let mut row = Row::new();
    assert!(rd.next_row(&mut row).unwrap());
    assert_eq!(&*row.raw_line(), b"a\tb\t\\N");
    assert_eq!(row.line_len(), 6);
    assert!(rd.next_row(&mut row).unwrap());
    assert_eq!(&*row.raw_line(), b"c\\td");
    let mut rd = RowReader::new(&b"\"a,b\",c\r\nx,y\r\n"[..], csv());
    assert!(rd.next_row(&mut row).unwrap());
    assert_eq!(&*row.raw_line(), b"\"a,b\",c");
    assert!(rd.next_row(&mut row).unwrap());
    assert_eq!(&*row.raw_line(), b"x,y");
    assert_eq!(row.raw_len(), 5);
}

// ---------------------------------------------------------------- I/O errors

struct Failing {
    left: usize,
    kind: Option<i32>,
}
impl Read for Failing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(match self.kind {
                Some(errno) => std::io::Error::from_raw_os_error(errno),
                None => std::io::Error::other("boom"),
            });
        }
        let n = self.left.min(buf.len()).min(2);
        buf[..n].fill(b'a');
        buf[n - 1] = b'\n';
        self.left -= n;
        Ok(n)
    }
}

#[test]
fn io_errors() {
    let mut rd = RowReader::with_capacity(
        Failing {
            left: 4,
            kind: Some(5),
        },
        text(),
        16,
    );
    let mut row = Row::new();
    assert!(rd.next_row(&mut row).unwrap());
    assert!(rd.next_row(&mut row).unwrap());
    let e = rd.next_row(&mut row).unwrap_err();
    assert!(matches!(e.kind, InputErrorKind::Io(_)));
    assert_eq!(e.sqlstate().as_str(), "58030");
    assert_eq!(
        e.message(),
        "could not read from COPY file: Input/output error"
    );
    assert_eq!(e.line, 3);
    assert!(std::error::Error::source(&e).is_some());
    for (errno, state) in [
        (2, "58P01"),
        (13, "42501"),
        (21, "42809"),
        (24, "53000"),
        (28, "53100"),
        (22, "XX000"),
    ] {
        let src = Failing {
            left: 0,
            kind: Some(errno),
        };
        let mut rd = RowReader::with_capacity(src, csv(), 16);
        assert_eq!(
            rd.next_row(&mut row).unwrap_err().sqlstate().as_str(),
            state,
            "errno {errno}"
        );
    }
    let mut rd = RowReader::with_capacity(
        Failing {
            left: 0,
            kind: None,
        },
        csv(),
        16,
    );
    let e = rd.next_row(&mut row).unwrap_err();
    assert_eq!(e.sqlstate().as_str(), "58030");
    assert_eq!(e.message(), "could not read from COPY file: boom");
}

#[test]
fn interrupted_reads_are_retried() {
    struct Intr(bool, &'static [u8]);
    impl Read for Intr {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.0 = !self.0;
            if self.0 {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let n = self.1.len().min(buf.len());
            buf[..n].copy_from_slice(&self.1[..n]);
            self.1 = &self.1[n..];
            Ok(n)
        }
    }
    let o = collect(
        RowReader::with_capacity(Intr(false, b"a\nb\n"), text(), 1),
        4,
    );
    assert_eq!(o.ok(), vec![vec![v("a")], vec![v("b")]]);
}

// ---------------------------------------------------------------- HEADER MATCH support

fn header(data: &[u8], mut opts: Options) -> (Result<Vec<F>, Err>, Out) {
    opts.header = 1;
    let mut rd = RowReader::with_capacity(data, opts, 3);
    let mut row = Row::new();
    let h = match rd.read_header(&mut row) {
        Ok(()) => {
            assert_eq!(row.line_no(), 1);
            Ok((0..row.len())
                .map(|i| match row.field(i) {
                    Field::Null => N,
                    Field::Default => D,
                    Field::Value(b) => vb(b),
                })
                .collect())
        }
        Result::Err(e) => Result::Err(to_err(&e)),
    };
    (h, collect(rd, data.len()))
}

#[test]
fn header_match_reads_the_header_fields() {
    let (h, rest) = header(b"c1,\"c2\"\na,b\n", csv());
    assert_eq!(h.unwrap(), vec![v("c1"), v("c2")]);
    assert_eq!(rest.ok(), vec![vec![v("a"), v("b")]]);
    assert_eq!(rest.lines(), vec![2]);
    // Split like data: de-escaped, NULL marker recognised, errors raised.
    let (h, _) = header(b"c\\x31\t\\N\na\n", text());
    assert_eq!(h.unwrap(), vec![v("c1"), N]);
    let (h, rest) = header(b"c\\xff\na\n", text());
    let e = h.unwrap_err();
    assert_eq!(
        e.message,
        "invalid byte sequence for encoding \"UTF8\": 0xff"
    );
    assert_eq!(e.raw_line.as_deref(), Some(&b"c\\xff"[..]));
    assert!(rest.rows.is_empty() && rest.err.is_none());
    // The header is split even when it ends the data; then there are no rows.
    for (data, fields) in [
        (&b"x"[..], vec![v("x")]),
        (b"", vec![v("")]),
        (b"\\.\n", vec![v("")]),
        (b"c1\\.\na\n", vec![v("c1")]),
    ] {
        let (h, rest) = header(data, text());
        assert_eq!(h.unwrap(), fields, "{data:?}");
        assert!(rest.rows.is_empty() && rest.err.is_none(), "{data:?}");
    }
    let (h, _) = header(b"", csv());
    assert_eq!(h.unwrap(), vec![N]);
    let (h, _) = header(b"\"a", csv());
    assert_eq!(h.unwrap_err().message, "unterminated CSV quoted field");
}

fn matching(names: &[&str], mut opts: Options) -> Options {
    opts.header = 1;
    opts.header_match = Some(HeaderMatch {
        names: names.iter().map(|n| n.as_bytes().to_vec()).collect(),
        has_default: names.iter().map(|n| n.starts_with('d')).collect(),
    });
    opts
}

#[test]
fn header_match_checks_the_names() {
    // the names in input order, then the data
    let o = run(b"a\tb\n1\t2\n", matching(&["a", "b"], text()));
    assert_eq!(o.ok(), vec![vec![v("1"), v("2")]]);
    assert_eq!(o.lines(), vec![2]);
    let o = run(b"\"a\",b\r\n1,2\r\n", matching(&["a", "b"], csv()));
    assert_eq!(o.ok(), vec![vec![v("1"), v("2")]]);
    // the field count before any name, at line 1 with the header's text
    let e = err(b"b\n1\n", matching(&["a", "b"], text()));
    assert_eq!(
        e.message,
        "wrong number of fields in header line: got 1, expected 2"
    );
    assert_eq!((e.sqlstate.as_str(), e.line), ("22P04", 1));
    assert_eq!(e.raw_line.as_deref(), Some(&b"b"[..]));
    let e = err(b"a\tB\n1\t2\n", matching(&["a", "b"], text()));
    assert_eq!(
        e.message,
        "column name mismatch in header line field 2: got \"B\", expected \"b\""
    );
    let e = err(b"\\N\tb\n", matching(&["a", "b"], text()));
    assert_eq!(
        e.message,
        "column name mismatch in header line field 1: got null value (\"\\N\"), expected \"a\""
    );
    // CSV: an unquoted empty field is NULL, a quoted one is a name
    let e = err(b"a,\n", matching(&["a", "b"], csv()));
    assert_eq!(
        e.message,
        "column name mismatch in header line field 2: got null value (\"\"), expected \"b\""
    );
    // an empty input still has a header line of one empty field
    let e = err(b"", matching(&["a"], text()));
    assert_eq!(
        e.message,
        "column name mismatch in header line field 1: got \"\", expected \"a\""
    );
    assert!(run(b"a\n", matching(&["a"], text())).ok().is_empty());
    assert!(run(b"a\n\\.\n", matching(&["a"], text())).ok().is_empty());
    // the DEFAULT marker: refused in a column without a default, else compared as its text
    let mut o = matching(&["a", "d"], text());
    o.default = Some(b"a".to_vec());
    let e = err(b"x\ta\n", o.clone());
    assert_eq!(
        e.message,
        "column name mismatch in header line field 1: got \"x\", expected \"a\""
    );
    // a marker field of a column with a default compares as the marker's text
    let mut o2 = matching(&["a", "d"], text());
    o2.default = Some(b"d".to_vec());
    assert_eq!(run(b"a\td\n1\t2\n", o2).ok().len(), 1);
    let e = err(b"a\td\n", o.clone());
    assert_eq!(e.message, "unexpected default marker in COPY data");
    // errors in the header's fields are raised as in data
    let e = err(b"\\xff\n", matching(&["a"], text()));
    assert_eq!(e.sqlstate, "22021");
    // found by make fuzz-sql: the marker of a field before a bad escaped one comes first, as
    // the server checks each field as it splits it; a bad field before the marker, its error
    let e = err(b"a\t\\377\n", o.clone());
    assert_eq!(e.message, "unexpected default marker in COPY data");
    assert_eq!(e.raw_line.as_deref(), Some(&b"a\t\\377"[..]));
    let e = err(b"\\377\ta\n", o.clone());
    assert_eq!(e.sqlstate, "22021");
    // a table without columns takes an empty header line only
    let mut o = matching(&[], text());
    o.no_columns = true;
    let mut row = Row::new();
    let mut rd = RowReader::new(&b"\n\n"[..], o.clone());
    assert!(rd.next_row(&mut row).unwrap());
    assert_eq!((row.line_no(), row.line_len()), (2, 0));
    assert!(!rd.next_row(&mut row).unwrap());
    let e = RowReader::new(&b"x\n\n"[..], o)
        .next_row(&mut row)
        .unwrap_err();
    assert_eq!(e.message(), "extra data after last expected column");
}

#[test]
fn encodings_other_than_utf8() {
    // the input in LATIN1 (no conversion): only NUL is invalid, named in the input encoding
    let mut o = text();
    o.input_encoding = Some(fastcopy_core::input::Encoding::nul_free("LATIN1"));
    o.server_encoding = fastcopy_core::input::Encoding::nul_free("LATIN1");
    assert_eq!(
        rows(b"1\tcaf\xe9\n2\t\xff\n", o.clone()),
        vec![vec![v("1"), vb(b"caf\xe9")], vec![v("2"), vb(b"\xff")]]
    );
    let e = err(b"1\tok\n2\ta\x00b\n", o.clone());
    assert_eq!(
        (e.message.as_str(), e.line),
        ("invalid byte sequence for encoding \"LATIN1\": 0x00", 2)
    );
    // de-escaped fields are checked in the server encoding: \xe9 is a LATIN1 character,
    // \000 is not
    assert_eq!(rows(b"\\xe9\n", o.clone()), vec![vec![vb(b"\xe9")]]);
    assert_eq!(
        err(b"a\\000b\n", o.clone()).message,
        "invalid byte sequence for encoding \"LATIN1\": 0x00"
    );
    // SQL_ASCII input into a UTF-8 database: the input is not checked as UTF-8, escapes are
    let mut o = text();
    o.input_encoding = Some(fastcopy_core::input::Encoding::nul_free("SQL_ASCII"));
    assert_eq!(rows(b"\xff\n", o.clone()), vec![vec![vb(b"\xff")]]);
    assert_eq!(
        err(b"\\xff\n", o).message,
        "invalid byte sequence for encoding \"UTF8\": 0xff"
    );
    // converted input comes checked: the reader takes it as it is
    let mut o = text();
    o.input_encoding = None;
    assert_eq!(rows(b"\xe9\n", o), vec![vec![vb(b"\xe9")]]);
}

// ---------------------------------------------------------------- fast path coverage

#[test]
fn csv_simple_quoted_fields_after_the_first_line() {
    // From the second line on, simple quoted fields are taken in place by the fast path;
    // the others fall back. `run` checks both paths agree (tiny chunks use the general path).
    let data = b"h\n\"a,b\",c,\"\"\n\"a\"\"b\",x\n\"a\"b,y\n\"x\ny\",z\n\"q\"\n,\"\"\n\"D\",D\n";
    let mut o = csv();
    o.default = Some(b"D".to_vec());
    let out = run(data, o.clone());
    assert_eq!(
        out.ok(),
        vec![
            vec![v("h")],
            vec![v("a,b"), v("c"), v("")],
            vec![v("a\"b"), v("x")],
            vec![v("ab"), v("y")],
            vec![v("x\ny"), v("z")],
            vec![v("q")],
            vec![N, v("")],
            vec![v("D"), D],
        ]
    );
    assert_eq!(out.rows[1].3, vec![true, false, true]);
    assert_eq!(out.lines(), vec![1, 2, 3, 4, 6, 7, 8, 9]);
    let mut rd = RowReader::new(&data[..], o);
    let mut row = Row::new();
    let mut raws = Vec::new();
    while rd.next_row(&mut row).unwrap() {
        raws.push(row.raw_line().into_owned());
    }
    let expect: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    assert_eq!(raws[1], expect[1]);
    assert_eq!(raws[2], expect[2]);
    assert_eq!(raws[5], b"\"q\"");
    assert_eq!(raws[6], b",\"\"");
}

#[test]
fn text_escapes_after_the_first_line() {
    // Backslashes anywhere, also right at 32-byte block boundaries.
    let mut data = b"first\n".to_vec();
    let mut expect = vec![vec![v("first")]];
    for k in 0..70 {
        let pad = "p".repeat(k);
        data.extend_from_slice(format!("{pad}\\\\\\t\t\\N\t{pad}\\\n\n").as_bytes());
        expect.push(vec![v(&format!("{pad}\\\t")), N, v(&format!("{pad}\n"))]);
    }
    data.extend_from_slice(b"a\\.\n");
    expect.push(vec![v("a")]);
    let out = run(&data, text());
    assert_eq!(out.ok(), expect);
    // An error from de-escaping on such a line.
    let e = err(b"x\ny\\xff\n", text());
    assert_eq!(
        e.message,
        "invalid byte sequence for encoding \"UTF8\": 0xff"
    );
    assert_eq!(e.line, 2);
    assert_eq!(e.raw_line.as_deref(), Some(&b"y\\xff"[..]));
}

#[test]
fn long_lines_through_the_fast_path() {
    let f1 = "x".repeat(1000);
    let f2 = "é".repeat(333);
    let data = format!("a\n{f1}\t{f2}\n{f1}\t\\N\n");
    assert_eq!(
        rows(data.as_bytes(), text()),
        vec![vec![v("a")], vec![v(&f1), v(&f2)], vec![v(&f1), N]]
    );
    let data = format!("a\n\"{f1}\",\"{f2}\"\n");
    assert_eq!(
        rows(data.as_bytes(), csv()),
        vec![vec![v("a")], vec![v(&f1), v(&f2)]]
    );
}

/// `skip_invalid_lines`: each line with bytes invalid in its encoding comes back as a row
/// without fields, its raw line and the message COPY gives it, and reading goes on at the next
/// line; the same rows whatever the chunk size (a bad line across reads, a `\r\n` split by a
/// read), with `\n`, `\r\n` and `\r` line ends and a bad last line without one.
#[test]
fn invalid_lines_are_skipped_when_asked() {
    for eol in ["\n", "\r\n", "\r"] {
        let lines: [&[u8]; 6] = [
            b"1\ta",
            b"2\tb\xffc",
            b"3\t\xe2\x82",
            b"4\td",
            b"5\t\xc3(",
            b"6\te\xfe",
        ];
        let mut data = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            data.extend_from_slice(l);
            if i + 1 < lines.len() {
                data.extend_from_slice(eol.as_bytes());
            }
        }
        let mut first: Option<Vec<String>> = None;
        for chunk in [1, 2, 3, 5, 8, 64] {
            let mut opts = text();
            opts.input_encoding = Some(fastcopy_core::input::Encoding::utf8());
            opts.skip_invalid_lines = true;
            let mut reader = RowReader::with_capacity(&data[..], opts, chunk);
            let mut row = Row::new();
            let mut got = Vec::new();
            while reader.next_row(&mut row).expect("no error ends the data") {
                got.push(match row.invalid() {
                    Some(m) => format!("{} bad {:?} {m}", row.line_no(), row.raw_line()),
                    None => format!("{} ok {:?}", row.line_no(), row.raw_line()),
                });
            }
            assert_eq!(got.len(), 6, "eol {eol:?} chunk {chunk}: {got:?}");
            for (i, g) in got.iter().enumerate() {
                let ok = !lines[i].iter().any(|&b| b >= 0x80);
                assert!(g.contains(if ok { " ok " } else { " bad " }), "{g}");
                assert!(
                    g.contains(&format!("{:?}", lines[i])),
                    "eol {eol:?} chunk {chunk}: {g}"
                );
            }
            match &first {
                None => first = Some(got),
                Some(f) => assert_eq!(&got, f, "eol {eol:?} chunk {chunk}"),
            }
        }
        let first = first.unwrap();
        assert!(
            first[1].ends_with("invalid byte sequence for encoding \"UTF8\": 0xff"),
            "{}",
            first[1]
        );
    }
    // a text escape that gives a byte invalid in the server encoding: the same, after the
    // line was read whole
    let mut opts = text();
    opts.skip_invalid_lines = true;
    let mut reader = RowReader::new(&b"1\ta\n2\tx\\xffy\n3\tc\n"[..], opts);
    let mut row = Row::new();
    let mut got = Vec::new();
    while reader.next_row(&mut row).unwrap() {
        got.push(format!(
            "{} {:?} {:?}",
            row.line_no(),
            row.invalid(),
            row.raw_line()
        ));
    }
    assert_eq!(
        got,
        [
            "1 None [49, 9, 97]".to_string(),
            format!(
                "2 Some(\"invalid byte sequence for encoding \\\"UTF8\\\": 0xff\") {:?}",
                b"2\tx\\xffy"
            ),
            "3 None [51, 9, 99]".to_string(),
        ]
    );
    // off (the default): the first bad line ends the data with its error
    let mut opts = text();
    opts.input_encoding = Some(fastcopy_core::input::Encoding::utf8());
    let mut reader = RowReader::new(&b"1\ta\n2\t\xff\n3\tc\n"[..], opts);
    let mut row = Row::new();
    assert!(reader.next_row(&mut row).unwrap());
    let e = reader.next_row(&mut row).unwrap_err();
    assert_eq!(
        (e.line, e.message().as_str()),
        (2, "invalid byte sequence for encoding \"UTF8\": 0xff")
    );
    assert!(!reader.next_row(&mut row).unwrap());
}
