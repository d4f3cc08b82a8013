//! `bytea` text input in the hex format: what `byteain` stores for it.
//!
//! `byteain` reads a value that starts with `\x` (a lowercase `x`) as hex: pairs of
//! hexadecimal digits (either case), each pair one byte, with whitespace (space, tab, newline,
//! carriage return) skipped between pairs; an odd number of digits or any other byte is its
//! error (22023). Every other value is the escape format. `bytea_output = hex`, the default
//! since 9.0, writes `\x` and lowercase digits, and so do `COPY TO` and pg_dump.
//!
//! This module takes the hex format without whitespace, whole: `\x` and an even number of hex
//! digits. Whatever else (whitespace, the escape format, an odd digit count, another byte) is
//! `None`, and the server's input function stores it or raises its error.

use crate::int;

/// How many bytes the hex value `b` stores, where `b` is in the spelling [`decode_hex`]
/// decodes as far as its length says (`\x` and an even number of bytes after it); whether
/// those bytes are hex digits, `decode_hex` finds out.
#[inline]
pub fn hex_len(b: &[u8]) -> Option<usize> {
    match b {
        [b'\\', b'x', digits @ ..] if digits.len().is_multiple_of(2) => Some(digits.len() / 2),
        _ => None,
    }
}

/// The bytes of the hex value `b` into `out`, which is [`hex_len`]`(b)` bytes long; `None`
/// (with `out` partly written) when a byte after `\x` is not a hex digit, or the lengths do
/// not fit.
#[inline]
pub fn decode_hex(b: &[u8], out: &mut [u8]) -> Option<()> {
    let digits = b.strip_prefix(b"\\x")?;
    if digits.len() != 2 * out.len() {
        return None;
    }
    // eight digits (four bytes) at a time, then the last pairs in a zero-padded word
    let mut words = digits.chunks_exact(8);
    let mut bytes = out.chunks_exact_mut(4);
    for (w, o) in (&mut words).zip(&mut bytes) {
        let word = u64::from_le_bytes(w.try_into().expect("chunks of 8"));
        o.copy_from_slice(&pack(int::hex_nibbles(word, 0x80 * int::ONES)?)[..4]);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        // the top bit of each byte the rest fills (the others are zero)
        let used = (0x80 * int::ONES) >> (8 * (8 - rest.len()));
        let v = int::hex_nibbles(u64::from_le_bytes(word), used)?;
        let tail = bytes.into_remainder();
        let n = tail.len();
        tail.copy_from_slice(&pack(v)[..n]);
    }
    Some(())
}

/// The four bytes of eight digit values (one per byte of `v`, the first lowest): byte k is
/// digit 2k in the high nibble and digit 2k + 1 in the low one.
#[inline(always)]
fn pack(v: u64) -> [u8; 4] {
    let t = (v << 4) | (v >> 8);
    [t as u8, (t >> 16) as u8, (t >> 32) as u8, (t >> 48) as u8]
}

/// The bytes `byteain` stores for `b`, where `b` is in the spelling this module reads (else
/// `None`, the server's).
pub fn parse_bytea(b: &[u8]) -> Option<Vec<u8>> {
    let mut out = vec![0u8; hex_len(b)?];
    decode_hex(b, &mut out)?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `byteain`'s hex branch, written from its description: whitespace between pairs skipped,
    /// a non-digit or an odd count refused; `None` also for a value without `\x` (the escape
    /// format, which this module leaves alone).
    fn reference(b: &[u8]) -> Option<Vec<u8>> {
        let digits = b.strip_prefix(b"\\x")?;
        let val = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
        let mut out = Vec::new();
        let mut i = 0;
        while i < digits.len() {
            if matches!(digits[i], b' ' | b'\t' | b'\n' | b'\r') {
                i += 1;
                continue;
            }
            let hi = val(digits[i])?;
            let lo = val(*digits.get(i + 1)?)?;
            out.push(hi << 4 | lo);
            i += 2;
        }
        Some(out)
    }

    fn hex(bytes: &[u8], upper: bool) -> String {
        let s: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        if upper { s.to_uppercase() } else { s }
    }

    #[test]
    fn decodes_every_length_and_case() {
        for n in 0..40 {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            for upper in [false, true] {
                let s = format!("\\x{}", hex(&bytes, upper));
                assert_eq!(parse_bytea(s.as_bytes()), Some(bytes.clone()), "{s}");
            }
        }
        assert_eq!(parse_bytea(b"\\x"), Some(vec![]));
        assert_eq!(
            parse_bytea(b"\\xDeAdBeEf00ff"),
            Some(vec![0xde, 0xad, 0xbe, 0xef, 0, 0xff])
        );
    }

    #[test]
    fn leaves_what_the_server_must_read() {
        for s in [
            &b""[..],
            b"\\",
            b"\\x1",
            b"\\x123",
            b"\\X00",
            b"x00",
            b"abc",
            b"\\000",
            b"\\x 00",
            b"\\x00 ",
            b"\\x0\n",
            b"\\x0g",
            b"\\xg0",
            b"\\x000000000000000g",
            b"\\x0000000000000:00",
            b"\\x\xc3\xa9",
            b"\\x00\x0000",
        ] {
            assert_eq!(parse_bytea(s), None, "{s:?}");
        }
    }

    #[test]
    fn every_byte_after_a_digit() {
        // each byte in each position of a value of 12 digits (a word and a rest)
        for pos in 0..12 {
            for c in 0..=255u8 {
                let mut s = b"\\x0123456789ab".to_vec();
                s[2 + pos] = c;
                assert_eq!(parse_bytea(&s), reference(&s), "{s:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn agrees_with_the_reference(bytes in proptest::collection::vec(any::<u8>(), 0..80),
                                     upper in any::<bool>()) {
            let s = format!("\\x{}", hex(&bytes, upper));
            prop_assert_eq!(parse_bytea(s.as_bytes()), Some(bytes));
        }

        #[test]
        fn takes_only_what_the_reference_stores(s in proptest::collection::vec(
            prop_oneof![Just(b'0'), Just(b'a'), Just(b'F'), Just(b'g'), Just(b' '),
                        Just(b'\\'), Just(b'x'), any::<u8>()], 0..40)) {
            let mut v = b"\\x".to_vec();
            v.extend_from_slice(&s);
            if let Some(ours) = parse_bytea(&v) {
                prop_assert_eq!(Some(ours), reference(&v));
            }
            // and without the prefix nothing is taken
            prop_assert_eq!(parse_bytea(&s).is_some(), s.starts_with(b"\\x") && reference(&s).is_some()
                && !s[2..].iter().any(|c| c.is_ascii_whitespace()));
        }
    }
}
