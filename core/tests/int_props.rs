//! Property tests of `fastcopy_core::int` against a slow reference written independently here:
//! `i128` arithmetic, one grammar rule per step, and the server's choice between the two errors
//! expressed as "which problem comes first in the string".

use fastcopy_core::int::{
    Grammar, IntError, parse_i16, parse_i16_in, parse_i32, parse_i32_in, parse_i64, parse_i64_in,
};
use proptest::prelude::*;
use proptest::sample::select;

#[derive(Clone, Copy, Debug)]
enum Width {
    I16,
    I32,
    I64,
}

const WIDTHS: [Width; 3] = [Width::I16, Width::I32, Width::I64];
const GRAMMARS: [Grammar; 2] = [Grammar::Pg15, Grammar::Pg16];

fn range(w: Width) -> (i128, i128) {
    match w {
        Width::I16 => (i16::MIN.into(), i16::MAX.into()),
        Width::I32 => (i32::MIN.into(), i32::MAX.into()),
        Width::I64 => (i64::MIN.into(), i64::MAX.into()),
    }
}

fn parse(s: &[u8], w: Width, g: Grammar) -> Result<i128, IntError> {
    match w {
        Width::I16 => parse_i16(s, g).map(i128::from),
        Width::I32 => parse_i32(s, g).map(i128::from),
        Width::I64 => parse_i64(s, g).map(i128::from),
    }
}

#[path = "common/int_reference.rs"]
mod int_reference;

fn reference(s: &[u8], w: Width, g: Grammar) -> Result<i128, IntError> {
    let (min, max) = range(w);
    int_reference::reference(s, g, min, max)
}

/// The field `s` at the start of a longer buffer, followed by `tail` (`parse_iN_in`).
fn parse_in(s: &[u8], tail: &[u8], w: Width, g: Grammar) -> Result<i128, IntError> {
    let buf = [s, tail].concat();
    match w {
        Width::I16 => parse_i16_in(&buf, s.len(), g).map(i128::from),
        Width::I32 => parse_i32_in(&buf, s.len(), g).map(i128::from),
        Width::I64 => parse_i64_in(&buf, s.len(), g).map(i128::from),
    }
}

/// What may follow a field in a row buffer: digits (which a load of 8 bytes that did not drop
/// them would take as part of the number), a NUL and the next field, junk.
const TAILS: [&[u8]; 3] = [b"99999999", b"\0-12", b"x_ \t"];

#[track_caller]
fn check_all(s: &[u8]) {
    for g in GRAMMARS {
        for w in WIDTHS {
            let want = reference(s, w, g);
            let show = String::from_utf8_lossy(s);
            assert_eq!(parse(s, w, g), want, "{show:?} {w:?} {g:?}");
            for tail in TAILS {
                assert_eq!(
                    parse_in(s, tail, w, g),
                    want,
                    "{show:?} + {tail:?} {w:?} {g:?}"
                );
            }
        }
    }
}

/// Every string over `alphabet` of each length in `lens`.
fn every_string(alphabet: &[u8], lens: std::ops::RangeInclusive<u32>, mut f: impl FnMut(&[u8])) {
    for n in lens {
        let k = alphabet.len();
        for mut i in 0..k.pow(n) {
            let s: Vec<u8> = (0..n)
                .map(|_| {
                    let b = alphabet[i % k];
                    i /= k;
                    b
                })
                .collect();
            f(&s);
        }
    }
}

#[test]
fn every_short_string() {
    // Up to 4 bytes, where the fast path is all selects and tables: digits, both signs, spaces,
    // separators, bytes just outside '0'..='9', a high byte.
    every_string(b"0159-+ \t_x/:\x80", 0..=4, check_all);
    // Up to 8 bytes: digits, a sign and one byte on each side of the digits.
    every_string(b"09-/:", 5..=8, check_all);
}

// ------------------------------------------------------------------ sanity of the reference

#[test]
fn reference_agrees_with_known_server_answers() {
    use Grammar::{Pg15, Pg16};
    use IntError::{InvalidSyntax as Syn, OutOfRange as Oor};
    let cases: &[(&str, Width, Grammar, Result<i128, IntError>)] = &[
        ("  -32768 ", Width::I16, Pg15, Ok(-32768)),
        ("32768", Width::I16, Pg15, Err(Oor)),
        ("32768x", Width::I16, Pg15, Err(Syn)),
        ("32769x", Width::I16, Pg15, Err(Oor)),
        ("32769x", Width::I16, Pg16, Err(Syn)),
        ("32770x", Width::I16, Pg16, Err(Oor)),
        ("0x10", Width::I32, Pg15, Err(Syn)),
        ("0x10", Width::I32, Pg16, Ok(16)),
        ("-0x8000", Width::I16, Pg16, Ok(-32768)),
        ("0x_1F", Width::I32, Pg16, Ok(31)),
        ("_1", Width::I32, Pg16, Err(Syn)),
        ("0_1", Width::I32, Pg16, Ok(1)),
        ("1__2", Width::I32, Pg16, Err(Syn)),
        ("99999__", Width::I16, Pg16, Err(Oor)),
        ("3__99999", Width::I16, Pg16, Err(Syn)),
        ("", Width::I64, Pg16, Err(Syn)),
        ("-", Width::I64, Pg15, Err(Syn)),
        (
            "-9223372036854775808",
            Width::I64,
            Pg15,
            Ok(i64::MIN as i128),
        ),
    ];
    for &(s, w, g, want) in cases {
        assert_eq!(reference(s.as_bytes(), w, g), want, "{s:?} {w:?} {g:?}");
        assert_eq!(parse(s.as_bytes(), w, g), want, "{s:?} {w:?} {g:?}");
    }
}

// ------------------------------------------------------------------ strategies

fn spaces() -> impl Strategy<Value = String> {
    prop::collection::vec(select(vec![" ", "\t", "\n", "\u{b}", "\u{c}", "\r"]), 0..3)
        .prop_map(|v| v.concat())
}

/// Pieces of a number body: digit runs of each base, boundary magnitudes, underscores.
fn body_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[0-9]{1,12}",
        2 => "[0-9a-fA-F]{1,8}",
        1 => "[0-7]{1,12}",
        1 => "[01]{1,24}",
        2 => select(vec![
            "0", "00000000000000000000", "32767", "32768", "32769", "32770", "65535", "65536",
            "2147483647", "2147483648", "2147483649", "2147483650", "4294967295",
            "9223372036854775807", "9223372036854775808", "9223372036854775809",
            "9223372036854775810", "18446744073709551615", "18446744073709551616",
            "7FFF", "8000", "800F", "8010", "FFFF", "7FFFFFFF", "80000000", "8000000F",
            "80000010", "7FFFFFFFFFFFFFFF", "8000000000000000", "800000000000000F",
            "8000000000000010", "77777", "100000", "100007", "100010",
        ])
        .prop_map(String::from),
        3 => select(vec!["_", "_", "__"]).prop_map(String::from),
    ]
}

/// A field shaped like the grammar, with every part optional or perturbed.
fn grammar_like() -> impl Strategy<Value = Vec<u8>> {
    (
        spaces(),
        select(vec!["", "", "", "-", "+", "--", "+-", "-+"]),
        select(vec![
            "", "", "", "", "0x", "0X", "0o", "0O", "0b", "0B", "0", "x", "0d",
        ]),
        prop::collection::vec(body_piece(), 0..5),
        spaces(),
        select(vec![
            "", "", "", "", "", "x", " 1", ".", "\u{a0}", "\u{e9}", "_", "0x", "\0", "-", "1 ",
            "e5", "\u{0660}",
        ]),
        spaces(),
    )
        .prop_map(|(a, b, c, d, e, f, g)| format!("{a}{b}{c}{}{e}{f}{g}", d.concat()).into_bytes())
}

/// Short strings over the alphabet the grammar cares about, in any order.
fn alphabet_soup() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        select(b" \t\n\x0b\x0c\r-+0123456789abcdefABCDEFxXoObB_.\xa0\x00".to_vec()),
        0..24,
    )
}

/// A value near a boundary of one of the widths (or anywhere in a wide range).
fn near_boundary() -> impl Strategy<Value = i128> {
    let anchors: Vec<i128> = WIDTHS
        .iter()
        .flat_map(|&w| {
            let (min, max) = range(w);
            [min, max]
        })
        .chain([0])
        .collect();
    prop_oneof![
        3 => (select(anchors), -1000i128..=1000).prop_map(|(a, d)| a + d),
        1 => (i64::MIN as i128 * 4)..=(i64::MAX as i128 * 4),
        1 => any::<i64>().prop_map(i128::from),
        1 => any::<i32>().prop_map(i128::from),
        1 => any::<i16>().prop_map(i128::from),
    ]
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(10_000))]

    #[test]
    fn grammar_like_fields(s in grammar_like()) {
        check_all(&s);
    }

    #[test]
    fn alphabet_soup_fields(s in alphabet_soup()) {
        check_all(&s);
    }

    #[test]
    fn arbitrary_bytes(s in prop::collection::vec(any::<u8>(), 0..40)) {
        check_all(&s);
    }
}

proptest! {
    #![proptest_config(config(3_000))]

    /// Canonical decimals around the boundaries: the value, or out of range, in every width.
    #[test]
    fn canonical_decimal(v in near_boundary(), zeros in 0usize..25, pad in 0usize..3) {
        let digits = format!("{}{}", "0".repeat(zeros), v.unsigned_abs());
        let sign = if v < 0 { "-" } else { "" };
        let s = format!("{sign}{digits}");
        check_all(s.as_bytes());
        for w in WIDTHS {
            let (min, max) = range(w);
            let want = if (min..=max).contains(&v) { Ok(v) } else { Err(IntError::OutOfRange) };
            for g in GRAMMARS {
                prop_assert_eq!(parse(s.as_bytes(), w, g), want);
            }
        }
        // the same with spaces or a '+': same answer in both grammars
        let spaced = format!("{}{}{}", " ".repeat(pad), if v < 0 { "-" } else { "+" }, digits);
        check_all(format!("{spaced}{}", "\t".repeat(pad)).as_bytes());
    }

    /// Near-boundary values followed by junk: which error comes first.
    #[test]
    fn boundary_then_junk(v in near_boundary(), junk in select(vec!["x", " x", "_", "_1", "__1", ".0", "e"])) {
        check_all(format!("{v}{junk}").as_bytes());
    }

    /// Near-boundary values in every base, with and without underscores.
    #[test]
    fn boundary_in_every_base(
        v in near_boundary(),
        base in select(vec![2u32, 8, 16]),
        upper in any::<bool>(),
        us in 0usize..6,
    ) {
        let m = v.unsigned_abs();
        let mut digits = match base {
            2 => format!("{m:b}"),
            8 => format!("{m:o}"),
            _ if upper => format!("{m:X}"),
            _ => format!("{m:x}"),
        };
        if us > 0 && digits.len() > us {
            digits.insert(us, '_');
        }
        let p = match (base, upper) {
            (2, false) => "0b",
            (2, true) => "0B",
            (8, false) => "0o",
            (8, true) => "0O",
            (_, false) => "0x",
            (_, true) => "0X",
        };
        let sign = if v < 0 { "-" } else { "" };
        check_all(format!("{sign}{p}{digits}").as_bytes());
        check_all(format!("{sign}{p}_{digits}").as_bytes());
        check_all(format!("{sign}{p}{digits}z").as_bytes());
    }
}
