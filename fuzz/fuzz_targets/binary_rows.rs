//! Bytes through the COPY binary reader: either arbitrary bytes, or a valid stream (header,
//! tuples, trailer) built from the input and then mutated at a few places.
//!
//! The first byte picks the mode, the field count and the chunk size. Checked: no panic; no
//! tuple with another number of fields than asked for; no value longer than the bytes left
//! (never a read past a field); the tuples' bytes add up to no more than the input; tuple
//! numbers count up by one; the reader stays finished after `Ok(false)` or an error; and the
//! same tuples and error whatever the chunk size and however the source splits its reads.
#![no_main]

use fastcopy_core::binary::{BinaryReader, write};
use fastcopy_core::decode::Decoder;
use fastcopy_core::input::{Field, Row};
use libfuzzer_sys::fuzz_target;

#[path = "../../core/tests/common/trickle.rs"]
mod trickle;
use trickle::Trickle;

type Tuple = Vec<Option<Vec<u8>>>;

fn read_all(data: &[u8], fields: usize, chunk: usize, step: usize) -> (Vec<Tuple>, Option<String>) {
    let mut rd = BinaryReader::new(Trickle { data, step }, fields, chunk, 18);
    let mut row = Row::new();
    let mut out = Vec::new();
    let mut used = 0usize;
    loop {
        match rd.next_row(&mut row) {
            Ok(true) => {
                assert_eq!(row.len(), fields);
                assert_eq!(row.line_no(), out.len() as u64 + 1);
                used += row.raw_len();
                assert!(used <= data.len());
                let t: Tuple = (0..row.len())
                    .map(|i| match row.field(i) {
                        Field::Value(v) => {
                            assert!(v.len() <= data.len());
                            Some(v.to_vec())
                        }
                        _ => None,
                    })
                    .collect();
                out.push(t);
            }
            Ok(false) => {
                assert!(!rd.next_row(&mut row).unwrap());
                return (out, None);
            }
            Err(e) => {
                if let Some(p) = &e.partial {
                    assert!(p.len() < fields);
                    assert_eq!(e.field, Some(p.len()));
                }
                assert!(!rd.next_row(&mut row).unwrap());
                return (
                    out,
                    Some(format!("{} @{} {:?}", e.message(), e.line, e.field)),
                );
            }
        }
    }
}

/// A valid stream of tuples cut from `seed`, then `seed`'s last bytes flip bytes in it.
fn valid_then_mutated(seed: &[u8], fields: usize) -> Vec<u8> {
    let mut d = Vec::new();
    write::header(&mut d, 0, &seed[..seed.len().min(3)]);
    let mut rest = seed;
    while rest.len() > 2 {
        if fields == 0 {
            // a tuple without fields takes a seed byte of its own
            rest = &rest[1..];
        }
        let mut t: Vec<Option<&[u8]>> = Vec::new();
        for _ in 0..fields {
            let n = (rest[0] % 8) as usize;
            rest = &rest[1..];
            if n == 7 {
                t.push(None);
            } else {
                let n = n.min(rest.len());
                t.push(Some(&rest[..n]));
                rest = &rest[n..];
            }
            if rest.is_empty() {
                break;
            }
        }
        if t.len() < fields {
            break;
        }
        write::tuple(&mut d, &t);
    }
    write::trailer(&mut d);
    // up to 3 mutations, each (position, value) from the seed's end
    for m in seed.rchunks(3).take(3) {
        if m.len() == 3 && !d.is_empty() {
            let at = (u16::from_le_bytes([m[0], m[1]]) as usize) % d.len();
            d[at] = m[2];
        }
    }
    d
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let fields = (sel % 4) as usize;
    let input = if sel & 0x80 != 0 {
        valid_then_mutated(rest, fields)
    } else {
        rest.to_vec()
    };
    let chunk = [1, 3, 16, 1 << 16][((sel >> 2) % 4) as usize];
    let a = read_all(&input, fields, chunk, usize::MAX);
    let b = read_all(&input, fields, 1 << 16, 1);
    let c = read_all(&input, fields, 7, 5);
    assert_eq!(a, b);
    assert_eq!(a, c);
});
