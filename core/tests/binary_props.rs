//! Property tests of the COPY binary reader: random tuples written in the binary format and
//! read back with random chunk and read sizes; every truncation of a valid stream; and
//! arbitrary bytes, which must never panic and must read the same whatever the chunking.

use fastcopy_core::binary::{BinaryReader, write};
use fastcopy_core::decode::Decoder;
use fastcopy_core::input::{Field, Row};
use proptest::prelude::*;

#[path = "common/trickle.rs"]
mod trickle;
use trickle::Trickle;

type Tuple = Vec<Option<Vec<u8>>>;

/// The tuples read, and the error's message, line and field if one stopped the reader.
fn read_all(
    data: &[u8],
    fields: usize,
    chunk: usize,
    step: usize,
) -> (Vec<Tuple>, Option<(String, u64, Option<usize>)>) {
    let mut rd = BinaryReader::new(Trickle { data, step }, fields, chunk, 18);
    let mut row = Row::new();
    let mut out = Vec::new();
    loop {
        match rd.next_row(&mut row) {
            Ok(true) => out.push(
                (0..row.len())
                    .inspect(|&i| {
                        // every value is followed by a NUL in the row's buffer, as in text
                        if let Some((b, n)) = row.value_in(i) {
                            assert_eq!(b[n], 0, "no NUL after value {i}");
                        }
                    })
                    .map(|i| match row.field(i) {
                        Field::Value(v) => Some(v.to_vec()),
                        _ => None,
                    })
                    .collect(),
            ),
            Ok(false) => return (out, None),
            Err(e) => return (out, Some((e.message(), e.line, e.field))),
        }
    }
}

fn encode(tuples: &[Tuple], ext: &[u8], trailer: bool) -> Vec<u8> {
    let mut d = Vec::new();
    write::header(&mut d, 0, ext);
    for t in tuples {
        let f: Vec<Option<&[u8]>> = t.iter().map(|v| v.as_deref()).collect();
        write::tuple(&mut d, &f);
    }
    if trailer {
        write::trailer(&mut d);
    }
    d
}

fn tuples(fields: usize) -> impl Strategy<Value = Vec<Tuple>> {
    let value = proptest::option::weighted(0.8, proptest::collection::vec(any::<u8>(), 0..40));
    proptest::collection::vec(proptest::collection::vec(value, fields), 0..30)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn round_trip(
        (fields, ts) in (0usize..5).prop_flat_map(|n| (Just(n), tuples(n))),
        ext in proptest::collection::vec(any::<u8>(), 0..20),
        trailer in any::<bool>(),
        chunk in 1usize..64,
        step in 1usize..50,
    ) {
        let d = encode(&ts, &ext, trailer);
        let (got, err) = read_all(&d, fields, chunk, step);
        prop_assert_eq!(err, None);
        prop_assert_eq!(got, ts);
    }

    /// Cut anywhere, a valid stream gives a prefix of its tuples, then either the end (cut
    /// at a tuple boundary, or inside a field count) or the server's error for a cut.
    #[test]
    fn truncation(
        (fields, ts) in (1usize..4).prop_flat_map(|n| (Just(n), tuples(n))),
        cut in any::<prop::sample::Index>(),
        chunk in 1usize..64,
    ) {
        let d = encode(&ts, b"", true);
        let at = cut.index(d.len() + 1);
        let (got, err) = read_all(&d[..at], fields, chunk, usize::MAX);
        prop_assert!(got.len() <= ts.len());
        prop_assert_eq!(&got[..], &ts[..got.len()]);
        match err {
            None => {}
            Some((m, line, field)) => {
                let known = [
                    "COPY file signature not recognized",
                    "invalid COPY file header (missing flags)",
                    "invalid COPY file header (missing length)",
                    "unexpected EOF in COPY data",
                ];
                prop_assert!(known.contains(&m.as_str()), "{}", m);
                if m == "unexpected EOF in COPY data" {
                    prop_assert_eq!(line, got.len() as u64 + 1);
                    prop_assert!(field.is_some());
                }
            }
        }
    }

    #[test]
    fn arbitrary_bytes_read_the_same_in_any_chunking(
        body in proptest::collection::vec(any::<u8>(), 0..200),
        fields in 0usize..4,
        chunk in 1usize..32,
        step in 1usize..16,
    ) {
        // a valid header half of the time, so that the tuple paths are reached
        let mut d = Vec::new();
        if body.first().is_some_and(|b| b & 1 == 0) {
            write::header(&mut d, 0, b"");
        }
        d.extend_from_slice(&body);
        let a = read_all(&d, fields, chunk, step);
        let b = read_all(&d, fields, 1 << 16, usize::MAX);
        prop_assert_eq!(a, b);
    }
}
