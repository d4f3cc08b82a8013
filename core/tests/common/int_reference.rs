//! The slow, obviously-correct integer parser that the property tests (core/tests/int_props.rs)
//! and the fuzz target (fuzz/fuzz_targets/int_parse.rs) compare `fastcopy_core::int` with:
//! written independently of it, `i128` arithmetic, one grammar rule per step.

use fastcopy_core::int::{Grammar, IntError};

/// C `isspace` in the C/UTF-8 locales.
pub fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

pub fn digit_value(c: u8) -> Option<u32> {
    (c as char).to_digit(16).filter(|_| c.is_ascii())
}

/// The server's answer for `s` with the range `min..=max`, computed with `i128` and one grammar
/// rule per step; which error wins is decided by position (the first problem in the string).
pub fn reference(s: &[u8], g: Grammar, min: i128, max: i128) -> Result<i128, IntError> {
    let mut i = 0;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < s.len() && (s[i] == b'-' || s[i] == b'+') {
        neg = s[i] == b'-';
        i += 1;
    }
    let value = match g {
        Grammar::Pg15 => {
            let start = i;
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
            if i == start {
                return Err(IntError::InvalidSyntax);
            }
            // The server accumulates towards MIN and stops as soon as that overflows, i.e. as
            // soon as a prefix of the digits exceeds |MIN|, before looking at what follows.
            let mut v: i128 = 0;
            for &c in &s[start..i] {
                v = v * 10 + (c - b'0') as i128;
                if v > -min {
                    return Err(IntError::OutOfRange);
                }
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
            // The body: the longest run of digits of the base and underscores.
            let start = i;
            while i < s.len() && (is_digit(s[i]) || s[i] == b'_') {
                i += 1;
            }
            let body = &s[start..i];
            // Where the first misplaced underscore is: first in a decimal body, or not followed
            // by a digit.
            let bad_underscore = (0..body.len()).find(|&k| {
                body[k] == b'_'
                    && ((base == 10 && k == 0) || !body.get(k + 1).is_some_and(|&c| is_digit(c)))
            });
            // Where the server gives up on the magnitude: at the first digit before which the
            // value so far exceeds |MIN| / base.
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
                (Some(_), Some(_)) | (None, Some(_)) => return Err(IntError::OutOfRange),
                (Some(_), None) => return Err(IntError::InvalidSyntax),
                (None, None) => {}
            }
            if !body.iter().any(|&c| is_digit(c)) {
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
    let v = if neg { -value } else { value };
    if v < min || v > max {
        return Err(IntError::OutOfRange);
    }
    Ok(v)
}
