//! Differential fuzzing of `fastcopy_core::int` against a slow reference: every input is
//! parsed in all three widths under both grammars, and the result (value, or which error) must
//! be the reference's. Also checks that no input panics.

#![no_main]

use fastcopy_core::int::{Grammar, IntError, parse_i16, parse_i32, parse_i64};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for g in [Grammar::Pg15, Grammar::Pg16] {
        let (min, max) = (i16::MIN as i128, i16::MAX as i128);
        let got = parse_i16(data, g).map(i128::from);
        assert_eq!(got, reference(data, g, min, max), "i16 {g:?} {data:?}");
        let (min, max) = (i32::MIN as i128, i32::MAX as i128);
        let got = parse_i32(data, g).map(i128::from);
        assert_eq!(got, reference(data, g, min, max), "i32 {g:?} {data:?}");
        let (min, max) = (i64::MIN as i128, i64::MAX as i128);
        let got = parse_i64(data, g).map(i128::from);
        assert_eq!(got, reference(data, g, min, max), "i64 {g:?} {data:?}");
    }
});

/// C `isspace` in the C and UTF-8 locales.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn digit_value(c: u8) -> Option<u32> {
    match c {
        b'0'..=b'9' => Some((c - b'0') as u32),
        b'a'..=b'f' => Some((c - b'a') as u32 + 10),
        b'A'..=b'F' => Some((c - b'A') as u32 + 10),
        _ => None,
    }
}

/// The server's answer for `s` with the range `min..=max`, computed with `i128` and one rule per
/// step. Which error wins is decided by position: the first problem in the string.
fn reference(s: &[u8], g: Grammar, min: i128, max: i128) -> Result<i128, IntError> {
    let mut i = 0;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < s.len() && (s[i] == b'-' || s[i] == b'+') {
        neg = s[i] == b'-';
        i += 1;
    }
    let magnitude = match g {
        Grammar::Pg15 => {
            // [0-9]+; the server gives up as soon as a prefix of the digits exceeds |MIN|.
            let start = i;
            let mut v: i128 = 0;
            while i < s.len() && s[i].is_ascii_digit() {
                v = v * 10 + (s[i] - b'0') as i128;
                if v > -min {
                    return Err(IntError::OutOfRange);
                }
                i += 1;
            }
            if i == start {
                return Err(IntError::InvalidSyntax);
            }
            v
        }
        Grammar::Pg16 => {
            let base: u32 = match (s.get(i), s.get(i + 1)) {
                (Some(b'0'), Some(b'x' | b'X')) => 16,
                (Some(b'0'), Some(b'o' | b'O')) => 8,
                (Some(b'0'), Some(b'b' | b'B')) => 2,
                _ => 10,
            };
            if base != 10 {
                i += 2;
            }
            let is_digit = |c: u8| digit_value(c).is_some_and(|d| d < base);
            let start = i;
            while i < s.len() && (is_digit(s[i]) || s[i] == b'_') {
                i += 1;
            }
            let body = &s[start..i];
            // first misplaced '_': first of a decimal body, or not followed by a digit
            let bad_underscore = (0..body.len()).find(|&k| {
                body[k] == b'_'
                    && ((base == 10 && k == 0) || !body.get(k + 1).is_some_and(|&c| is_digit(c)))
            });
            // first digit before which the value exceeds |MIN| / base
            let limit = -min / base as i128;
            let mut v: i128 = 0;
            let mut overflow = None;
            for (k, &c) in body.iter().enumerate() {
                if c == b'_' {
                    continue;
                }
                if v > limit {
                    overflow = Some(k);
                    break;
                }
                v = v * base as i128 + digit_value(c).unwrap() as i128;
            }
            match (bad_underscore, overflow) {
                (Some(u), Some(o)) if u < o => return Err(IntError::InvalidSyntax),
                (_, Some(_)) => return Err(IntError::OutOfRange),
                (Some(_), None) => return Err(IntError::InvalidSyntax),
                (None, None) => {}
            }
            if body.is_empty() {
                return Err(IntError::InvalidSyntax);
            }
            v
        }
    };
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    if i != s.len() {
        return Err(IntError::InvalidSyntax);
    }
    let v = if neg { -magnitude } else { magnitude };
    if v < min || v > max {
        return Err(IntError::OutOfRange);
    }
    Ok(v)
}
