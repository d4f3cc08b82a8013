//! Arbitrary bytes through the COPY text and CSV readers with a few option combinations.
//!
//! The first byte picks the options and a chunk size; the rest is the input. Checked: no
//! panic; every value NUL-terminated and NUL-free; line numbers increasing; no more bytes
//! consumed than given; the reader stays finished after `Ok(false)` or an error; and the
//! same rows and error whatever the chunk size and however the source splits its reads.
#![no_main]

use fastcopy_core::input::{Field, HeaderMatch, Options, Row, RowReader};
use libfuzzer_sys::fuzz_target;

#[path = "../../core/tests/common/trickle.rs"]
mod trickle;
use trickle::Trickle;

fn options(sel: u8) -> Options {
    let mut o = match sel % 8 {
        0 => Options::text(),
        1 => {
            let mut o = Options::text();
            o.null = Vec::new();
            o.default = Some(b"D".to_vec());
            o
        }
        2 => {
            let mut o = Options::text();
            o.delimiter = b',';
            o.null = b"x\\y".to_vec();
            o
        }
        3 => Options::csv(),
        4 => {
            let mut o = Options::csv();
            o.escape = b'\\';
            o.null = b"\\N".to_vec();
            o
        }
        5 => {
            let mut o = Options::csv();
            o.quote = b'\'';
            o.escape = b'\'';
            o.delimiter = b'|';
            o.default = Some(b"D".to_vec());
            o
        }
        6 => {
            let mut o = Options::csv();
            o.delimiter = b'\t';
            o.null = b"N".to_vec();
            o
        }
        _ => {
            let mut o = Options::text();
            o.delimiter = b'|';
            o
        }
    };
    // HEADER, HEADER 2 or none
    o.header = if sel & 8 != 0 { 1 + (sel as u64 >> 7) % 2 } else { 0 };
    o.server_major = [15, 16, 17, 18][(sel as usize >> 4) % 4];
    // HEADER MATCH against two short names (the fuzzer finds lines that match them)
    if o.header == 1 && sel & 0x40 != 0 {
        o.header_match = Some(HeaderMatch {
            names: vec![b"a".to_vec(), b"b".to_vec()],
            has_default: vec![false, true],
        });
    }
    o
}

type Rows = Vec<(u64, usize, Vec<Option<Vec<u8>>>, Vec<bool>)>;

fn read_all(
    data: &[u8],
    opts: &Options,
    chunk: usize,
    step: usize,
) -> (Rows, Option<(String, u64)>) {
    let mut rd = RowReader::with_capacity(Trickle { data, step }, opts.clone(), chunk);
    let mut row = Row::new();
    let mut rows = Rows::new();
    let mut consumed = 0usize;
    let mut last = 0u64;
    loop {
        match rd.next_row(&mut row) {
            Ok(true) => {
                assert!(row.line_no() > last);
                last = row.line_no();
                consumed += row.raw_len();
                assert!(consumed <= data.len());
                assert!(row.len() >= 1 || (opts.skip_invalid_lines && row.invalid().is_some()));
                assert_eq!(row.raw_line().len(), row.line_len());
                if let Some(message) = row.invalid() {
                    assert!(message.starts_with("invalid byte sequence for encoding \"UTF8\""));
                    rows.push((row.line_no(), row.raw_len(), vec![None], vec![true]));
                    continue;
                }
                let mut fields = Vec::new();
                let mut quoted = Vec::new();
                for i in 0..row.len() {
                    quoted.push(row.quoted(i));
                    fields.push(match row.field(i) {
                        Field::Null => None,
                        Field::Default => Some(b"\0default".to_vec()),
                        Field::Value(v) => {
                            // SAFETY: the reader's contract: a NUL byte follows each value.
                            assert_eq!(unsafe { *v.as_ptr().add(v.len()) }, 0);
                            assert!(!v.contains(&0));
                            assert!(std::str::from_utf8(v).is_ok());
                            Some(v.to_vec())
                        }
                    });
                }
                rows.push((row.line_no(), row.raw_len(), fields, quoted));
            }
            Ok(false) => {
                assert!(!rd.next_row(&mut row).unwrap());
                return (rows, None);
            }
            Err(e) => {
                assert!(matches!(e.sqlstate().as_str(), "22P04" | "22021"));
                assert!(e.line >= last);
                let _ = (e.message(), e.hint(), e.to_string());
                assert!(!rd.next_row(&mut row).unwrap());
                return (rows, Some((e.message(), e.line)));
            }
        }
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&sel, data)) = input.split_first() else {
        return;
    };
    let opts = options(sel);
    let reference = read_all(data, &opts, 256 * 1024, usize::MAX);
    let chunk = 1 + (sel as usize % 7);
    let step = 1 + (sel as usize >> 5);
    assert_eq!(read_all(data, &opts, chunk, step), reference);
    // the input checked as UTF-8, lines invalid in it skipped (a rejects table's reading):
    // the same whatever the reads
    let mut opts = opts;
    opts.input_encoding = Some(fastcopy_core::input::Encoding::utf8());
    opts.skip_invalid_lines = true;
    let reference = read_all(data, &opts, 256 * 1024, usize::MAX);
    assert_eq!(read_all(data, &opts, chunk, step), reference);
});
