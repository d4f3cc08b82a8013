//! `uuid` text input: what `uuid_in` stores, for every spelling it accepts.
//!
//! `uuid_in` reads 16 bytes as 32 hexadecimal digits (either case), optionally inside braces,
//! with a hyphen allowed after any group of four digits but the last
//! (`a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11`, `{A0EEBC99...}`, `a0ee-bc99-...`); nothing may
//! come before or after. This is that grammar whole: whatever it refuses (whitespace, a
//! hyphen elsewhere, a digit missing) is `None`, and the server's input function raises its
//! error for it.

use crate::int;

/// The 16 bytes of the uuid `b` (in the order written), or `None` for the server's error.
#[inline]
pub fn parse_uuid(b: &[u8]) -> Option<[u8; 16]> {
    canonical(b).or_else(|| parse_any(b))
}

/// The canonical spelling (`8-4-4-4-12` hex digits, 36 bytes, as `uuid_out` writes it), eight
/// digits at a time; `None` for any other spelling or a byte that is not a hex digit (which
/// [`parse_any`] then reads, or refuses, byte by byte).
#[inline(always)]
fn canonical(b: &[u8]) -> Option<[u8; 16]> {
    let b: &[u8; 36] = b.try_into().ok()?;
    if b[8] != b'-' || b[13] != b'-' || b[18] != b'-' || b[23] != b'-' {
        return None;
    }
    let word = |at: usize| u64::from_le_bytes(*b[at..].first_chunk::<8>().expect("36 bytes"));
    let quad = |at: usize| {
        u64::from(u32::from_le_bytes(
            *b[at..].first_chunk::<4>().expect("36 bytes"),
        ))
    };
    let groups = [
        word(0),
        quad(9) | quad(14) << 32,
        quad(19) | quad(24) << 32,
        word(28),
    ];
    let mut out = [0u8; 16];
    for (g, bytes) in groups.into_iter().zip(out.chunks_exact_mut(4)) {
        // eight hex digits, one per byte, the first in the lowest
        let v = int::hex_nibbles(g, 0x80 * int::ONES)?;
        // byte 2k of `t`: digit 2k in the high nibble, digit 2k + 1 in the low one
        let t = (v << 4) | (v >> 8);
        bytes.copy_from_slice(&[t as u8, (t >> 16) as u8, (t >> 32) as u8, (t >> 48) as u8]);
    }
    Some(out)
}

/// Any spelling `uuid_in` takes, byte by byte.
fn parse_any(b: &[u8]) -> Option<[u8; 16]> {
    let (braces, mut s) = match b {
        [b'{', rest @ ..] => (true, rest),
        _ => (false, b),
    };
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        let [hi, lo, rest @ ..] = s else {
            return None;
        };
        *byte = hex(*hi)? << 4 | hex(*lo)?;
        s = rest;
        if i % 2 == 1
            && i < 15
            && let [b'-', rest @ ..] = s
        {
            s = rest;
        }
    }
    if braces {
        s = s.strip_prefix(b"}")?;
    }
    s.is_empty().then_some(out)
}

#[inline(always)]
fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BYTES: [u8; 16] = [
        0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a,
        0x11,
    ];

    /// The spellings of the PostgreSQL documentation's uuid page, all one value.
    #[test]
    fn every_documented_spelling() {
        for s in [
            "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "{a0eebc999c0b4ef8bb6d6bb9bd380a11}",
        ] {
            assert_eq!(parse_uuid(s.as_bytes()), Some(BYTES), "{s}");
        }
    }

    /// The canonical spelling's eight-at-a-time path against the byte-by-byte one: every
    /// byte of a written uuid replaced by each byte value in turn.
    #[test]
    fn canonical_reads_as_the_byte_by_byte_path() {
        let base = b"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
        assert_eq!(canonical(base), Some(BYTES));
        assert_eq!(
            canonical(b"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"),
            Some(BYTES)
        );
        for at in 0..base.len() {
            for c in 0..=255u8 {
                let mut s = *base;
                s[at] = c;
                let fast = canonical(&s);
                let slow = parse_any(&s);
                // the fast path takes only the canonical spelling; where it takes, it agrees
                assert!(
                    fast.is_none() || fast == slow,
                    "{:?}",
                    String::from_utf8_lossy(&s)
                );
                if ![8, 13, 18, 23].contains(&at) {
                    assert_eq!(fast, slow, "{:?}", String::from_utf8_lossy(&s));
                }
                assert_eq!(parse_uuid(&s), slow);
            }
        }
    }

    #[test]
    fn what_uuid_in_refuses() {
        for s in [
            "",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
            "-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eeb-c99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 ",
            "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "{{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}}",
        ] {
            assert_eq!(parse_uuid(s.as_bytes()), None, "{s}");
        }
    }
}
