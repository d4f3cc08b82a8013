//! Property tests of the COPY readers: round trips of random rows through a COPY text and a
//! CSV encoder written here, read back with random chunk sizes; and arbitrary bytes, which
//! must never panic and must give the same result whatever the chunk size.

use fastcopy_core::input::{Field, Format, Options, Row, RowReader};
use proptest::prelude::*;

#[path = "common/trickle.rs"]
mod trickle;
use trickle::Trickle;

type Val = Option<Vec<u8>>;
/// (line number, raw length, fields with their quoted flags)
type RowOut = (u64, usize, Vec<(Val, bool)>);

#[derive(Debug, PartialEq)]
enum Outcome {
    Rows(Vec<RowOut>),
    Error(Vec<RowOut>, String, String, u64),
}

fn read_all(data: &[u8], opts: &Options, chunk: usize, step: usize) -> Outcome {
    let mut rd = RowReader::with_capacity(Trickle { data, step }, opts.clone(), chunk);
    let mut row = Row::new();
    let mut rows = Vec::new();
    let mut consumed = 0usize;
    let mut last_line = 0;
    loop {
        match rd.next_row(&mut row) {
            Ok(true) => {
                assert!(row.line_no() > last_line, "line numbers increase");
                last_line = row.line_no();
                consumed += row.raw_len();
                assert!(consumed <= data.len());
                assert!(row.raw_len() >= row.line_len());
                assert_eq!(row.raw_line().len(), row.line_len());
                let mut fields = Vec::new();
                for i in 0..row.len() {
                    let f = match row.field(i) {
                        Field::Null => None,
                        Field::Default => Some(b"<DEFAULT>".to_vec()),
                        Field::Value(v) => {
                            // SAFETY: the reader guarantees a NUL right after each value.
                            let term = unsafe { *v.as_ptr().add(v.len()) };
                            assert_eq!(term, 0);
                            assert!(!v.contains(&0));
                            Some(v.to_vec())
                        }
                    };
                    fields.push((f, row.quoted(i)));
                }
                rows.push((row.line_no(), row.raw_len(), fields));
            }
            Ok(false) => {
                assert!(!rd.next_row(&mut row).unwrap());
                assert!(rd.bytes_read() <= data.len() as u64);
                return Outcome::Rows(rows);
            }
            Err(e) => {
                assert!(
                    e.sqlstate().as_str() == "22P04" || e.sqlstate().as_str() == "22021",
                    "{e}"
                );
                assert!(!e.message().is_empty());
                assert!(e.line >= last_line);
                assert!(!rd.next_row(&mut row).unwrap());
                return Outcome::Error(rows, e.sqlstate().to_string(), e.message(), e.line);
            }
        }
    }
}

fn values(o: &Outcome) -> Vec<Vec<Val>> {
    match o {
        Outcome::Rows(r) => r
            .iter()
            .map(|(_, _, f)| f.iter().map(|(v, _)| v.clone()).collect())
            .collect(),
        Outcome::Error(_, s, m, l) => panic!("unexpected error {s} {m} at line {l}"),
    }
}

fn eol_bytes(k: u8) -> &'static [u8] {
    match k % 3 {
        0 => b"\n",
        1 => b"\r\n",
        _ => b"\r",
    }
}

/// COPY text encoding of one field (`escape_mode` picks among equivalent spellings).
fn text_escape(v: &[u8], delim: u8, escape_mode: u8, out: &mut Vec<u8>) {
    for (i, &b) in v.iter().enumerate() {
        let mode = escape_mode.wrapping_add(i as u8) % 4;
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(if mode == 0 { b"\\012" } else { b"\\n" }),
            b'\r' => out.extend_from_slice(if mode == 0 { b"\\x0d" } else { b"\\r" }),
            b'\t' if delim == b'\t' || mode == 1 => out.extend_from_slice(b"\\t"),
            _ if b == delim => {
                out.push(b'\\');
                out.push(b);
            }
            // Octal and hex spellings of ordinary bytes; a following digit must not extend them.
            b'A'..=b'Z' if mode == 2 => out.extend_from_slice(format!("\\{:03o}", b).as_bytes()),
            b'a'..=b'z' if mode == 3 => out.extend_from_slice(format!("\\x{:02x}", b).as_bytes()),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0b => out.extend_from_slice(b"\\v"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => out.push(b),
        }
    }
}

fn encode_text(
    rows: &[Vec<Val>],
    delim: u8,
    eol: &[u8],
    escape_mode: u8,
    final_eol: bool,
) -> Vec<u8> {
    let mut out = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        for (i, f) in row.iter().enumerate() {
            if i > 0 {
                out.push(delim);
            }
            match f {
                None => out.extend_from_slice(b"\\N"),
                Some(v) => text_escape(v, delim, escape_mode.wrapping_add(i as u8), &mut out),
            }
        }
        if r + 1 < rows.len() || final_eol {
            out.extend_from_slice(eol);
        }
    }
    out
}

fn encode_csv(
    rows: &[Vec<Val>],
    delim: u8,
    quote: u8,
    escape: u8,
    eol: &[u8],
    force: u8,
) -> Vec<u8> {
    let mut out = Vec::new();
    for row in rows {
        for (i, f) in row.iter().enumerate() {
            if i > 0 {
                out.push(delim);
            }
            let Some(v) = f else { continue };
            let must = v.is_empty()
                || v.first() == Some(&b'\\')
                || v.iter()
                    .any(|&b| b == delim || b == quote || b == escape || b == b'\n' || b == b'\r');
            if must || force.wrapping_add(i as u8).is_multiple_of(3) {
                out.push(quote);
                for &b in v {
                    if b == quote || b == escape {
                        out.push(escape);
                    }
                    out.push(b);
                }
                out.push(quote);
            } else {
                out.extend_from_slice(v);
            }
        }
        out.extend_from_slice(eol);
    }
    out
}

/// Field bytes: valid UTF-8 without NUL, biased towards the bytes that matter.
fn field() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => "[a-zA-Z0-9 ]{0,4}".prop_map(|s| s.into_bytes()),
        1 => Just(b"\\".to_vec()),
        1 => Just(b"\t".to_vec()),
        1 => Just(b"\n".to_vec()),
        1 => Just(b"\r".to_vec()),
        1 => Just(b",".to_vec()),
        1 => Just(b"|".to_vec()),
        1 => Just(b"\"".to_vec()),
        1 => Just(b"'".to_vec()),
        1 => Just(b".".to_vec()),
        1 => Just(b"\\.".to_vec()),
        1 => Just(b"N".to_vec()),
        1 => Just("é€😀".as_bytes().to_vec()),
        1 => Just(vec![0x08, 0x0b, 0x0c]),
        1 => any::<char>().prop_filter("no NUL", |c| *c != '\0').prop_map(|c| c.to_string().into_bytes()),
    ];
    prop::collection::vec(piece, 0..5).prop_map(|v| v.concat())
}

fn table() -> impl Strategy<Value = Vec<Vec<Val>>> {
    (1usize..5).prop_flat_map(|ncols| {
        prop::collection::vec(
            prop::collection::vec(prop::option::weighted(0.85, field()), ncols),
            0..8,
        )
    })
}

fn chunking() -> impl Strategy<Value = (usize, usize)> {
    (
        prop_oneof![1usize..8, 8usize..64, Just(256 * 1024)],
        prop_oneof![1usize..4, Just(usize::MAX)],
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn text_round_trip(
        rows in table(),
        delim in prop::sample::select(vec![b'\t', b'|', b',']),
        eol in 0u8..3,
        escape_mode in any::<u8>(),
        final_eol in any::<bool>(),
        (chunk, step) in chunking(),
    ) {
        let data = encode_text(&rows, delim, eol_bytes(eol), escape_mode, final_eol);
        let mut opts = Options::text();
        opts.delimiter = delim;
        let got = read_all(&data, &opts, chunk, step);
        // A last row that is one empty field without a final line ending is no row at all.
        let mut expect = rows.clone();
        if !final_eol && expect.last().is_some_and(|r| r.len() == 1 && r[0].as_deref() == Some(b"")) {
            expect.pop();
        }
        prop_assert_eq!(values(&got), expect.clone());
        if let Outcome::Rows(r) = &got {
            let lines: Vec<u64> = r.iter().map(|x| x.0).collect();
            prop_assert_eq!(lines, (1..=expect.len() as u64).collect::<Vec<_>>());
            prop_assert_eq!(r.iter().map(|x| x.1).sum::<usize>(), data.len());
        }
        prop_assert_eq!(&got, &read_all(&data, &opts, 256 * 1024, usize::MAX));
    }

    #[test]
    fn csv_round_trip(
        rows in table(),
        delim in prop::sample::select(vec![b',', b'|', b'\t']),
        quote in prop::sample::select(vec![b'"', b'\'']),
        backslash_escape in any::<bool>(),
        eol in 0u8..3,
        force in any::<u8>(),
        (chunk, step) in chunking(),
    ) {
        let escape = if backslash_escape { b'\\' } else { quote };
        let data = encode_csv(&rows, delim, quote, escape, eol_bytes(eol), force);
        let mut opts = Options::csv();
        opts.delimiter = delim;
        opts.quote = quote;
        opts.escape = escape;
        let got = read_all(&data, &opts, chunk, step);
        prop_assert_eq!(values(&got), rows.clone());
        if let Outcome::Rows(r) = &got {
            prop_assert_eq!(r.iter().map(|x| x.1).sum::<usize>(), data.len());
            // Quoted flags: NULLs are never quoted, empty strings always are.
            for (row, (_, _, fields)) in rows.iter().zip(r) {
                for (v, (_, q)) in row.iter().zip(fields) {
                    if v.is_none() { prop_assert!(!q); }
                    if v.as_deref() == Some(b"") { prop_assert!(*q); }
                }
            }
        }
        prop_assert_eq!(&got, &read_all(&data, &opts, 256 * 1024, usize::MAX));
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_ignore_chunking(
        data in prop::collection::vec(prop_oneof![
            6 => prop::sample::select(b"a1\t,|\"'\\.\r\nNDx0".to_vec()),
            1 => any::<u8>(),
        ], 0..80),
        which in 0usize..6,
        header in 0u64..4,
        (chunk, step) in chunking(),
    ) {
        let mut opts = match which {
            0 => Options::text(),
            1 => { let mut o = Options::text(); o.null = b"".to_vec(); o.default = Some(b"D".to_vec()); o }
            2 => Options::csv(),
            3 => { let mut o = Options::csv(); o.escape = b'\\'; o.null = b"N".to_vec(); o }
            4 => { let mut o = Options::csv(); o.quote = b'\''; o.escape = b'\''; o.delimiter = b'|'; o.default = Some(b"D".to_vec()); o }
            _ => { let mut o = Options::text(); o.delimiter = b','; o.null = b"x".to_vec(); o }
        };
        opts.header = header;
        let a = read_all(&data, &opts, chunk, step);
        let b = read_all(&data, &opts, 256 * 1024, usize::MAX);
        prop_assert_eq!(a, b);
        let _ = opts.format == Format::Csv;
    }
}
