//! `float4` and `float8` text input for the spellings whose value is certain: what
//! `float4in` / `float8in` store for them, bit for bit.
//!
//! The server reads a float with the C library's `strtof` / `strtod` (correctly rounded,
//! to nearest, ties to even) and then refuses a result that is infinite, or zero from digits
//! that are not all zeros ("is out of range for type double precision"); a denormal result is
//! kept. Rust's `str::parse` rounds the same way, so for the spellings below the bits are the
//! same:
//!
//! - an optional sign, decimal digits with at most one decimal point and at least one digit
//!   (`12`, `-0.50`, `+.5`, `7.`), optionally an exponent `e` or `E`, an optional sign and
//!   1 to [`MAX_EXPONENT_DIGITS`] digits; at most [`MAX_LEN`] bytes in all;
//! - `NaN`, `Infinity` and `-Infinity`, the spellings the server writes (its NaN is the C
//!   library's `NAN`, a positive quiet NaN; the extension checks the bits against the
//!   server's own before it uses them).
//!
//! Everything else is `None`, for the server's input function: whitespace, other spellings
//! of NaN and infinity (`nan`, `inf`, `+Infinity`, `-NaN`), hexadecimal floats, a result that
//! overflows or underflows to zero (the server's error), longer input. `extra_float_digits`
//! changes how the server writes floats, never how it reads them.

/// Longest input taken, in bytes.
pub const MAX_LEN: usize = 64;
/// Most exponent digits taken (the exponent then stays far from any integer limit).
pub const MAX_EXPONENT_DIGITS: usize = 4;

/// What [`spelling`] found: a number (and whether its digits are all zeros), or a special
/// value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spelling {
    Number { zero: bool },
    NaN,
    Infinity,
    NegInfinity,
}

/// The spelling of `b`, if it is one this module takes (see the module docs).
#[inline]
fn spelling(b: &[u8]) -> Option<Spelling> {
    match b {
        b"NaN" => return Some(Spelling::NaN),
        b"Infinity" => return Some(Spelling::Infinity),
        b"-Infinity" => return Some(Spelling::NegInfinity),
        _ => {}
    }
    if b.len() > MAX_LEN {
        return None;
    }
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let (mut digits, mut zero) = (0usize, true);
    let mut point = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'0'..=b'9' => {
                digits += 1;
                zero &= c == b'0';
            }
            b'.' if !point => point = true,
            _ => break,
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        let from = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == from || i - from > MAX_EXPONENT_DIGITS {
            return None;
        }
    }
    (i == b.len()).then_some(Spelling::Number { zero })
}

/// The `float8` value of `b`, or `None` when the server's `float8in` must read it.
#[inline]
pub fn parse_float8(b: &[u8]) -> Option<f64> {
    let v = match spelling(b)? {
        Spelling::NaN => return Some(f64::NAN),
        Spelling::Infinity => return Some(f64::INFINITY),
        Spelling::NegInfinity => return Some(f64::NEG_INFINITY),
        Spelling::Number { zero } => {
            // (ASCII only, checked by `spelling`)
            let v: f64 = std::str::from_utf8(b).ok()?.parse().ok()?;
            if v.is_infinite() || (v == 0.0 && !zero) {
                return None; // the server's "out of range"
            }
            v
        }
    };
    Some(v)
}

/// The `float4` value of `b`, or `None` when the server's `float4in` must read it.
#[inline]
pub fn parse_float4(b: &[u8]) -> Option<f32> {
    let v = match spelling(b)? {
        Spelling::NaN => return Some(f32::NAN),
        Spelling::Infinity => return Some(f32::INFINITY),
        Spelling::NegInfinity => return Some(f32::NEG_INFINITY),
        Spelling::Number { zero } => {
            let v: f32 = std::str::from_utf8(b).ok()?.parse().ok()?;
            if v.is_infinite() || (v == 0.0 && !zero) {
                return None;
            }
            v
        }
    };
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_decimals_and_exponents() {
        assert_eq!(parse_float8(b"0"), Some(0.0));
        assert_eq!(
            parse_float8(b"-0").map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
        assert_eq!(parse_float8(b"1.5"), Some(1.5));
        assert_eq!(parse_float8(b"+.5"), Some(0.5));
        assert_eq!(parse_float8(b"7."), Some(7.0));
        assert_eq!(parse_float8(b"1e3"), Some(1000.0));
        assert_eq!(parse_float8(b"1E+3"), Some(1000.0));
        assert_eq!(parse_float8(b"-2.5e-3"), Some(-0.0025));
        assert_eq!(parse_float8(b"0.1"), Some(0.1));
        assert_eq!(
            parse_float8(b"3.141592653589793"),
            Some(std::f64::consts::PI)
        );
        assert_eq!(parse_float8(b"1.7976931348623157e308"), Some(f64::MAX));
        // a denormal is kept, as the server keeps it
        assert_eq!(parse_float8(b"5e-324"), Some(f64::from_bits(1)));
        assert_eq!(parse_float4(b"1.5"), Some(1.5f32));
        assert_eq!(parse_float4(b"3.4028235e38"), Some(f32::MAX));
        assert_eq!(parse_float4(b"1e-45"), Some(f32::from_bits(1)));
        // rounded once, to float4 (not through a double)
        assert_eq!(
            parse_float4(b"1.00000005960464477539062500001"),
            Some(f32::from_bits(0x3f80_0001))
        );
    }

    #[test]
    fn specials_in_the_servers_spelling() {
        assert_eq!(
            parse_float8(b"NaN").map(f64::to_bits),
            Some(0x7ff8_0000_0000_0000)
        );
        assert_eq!(parse_float8(b"Infinity"), Some(f64::INFINITY));
        assert_eq!(parse_float8(b"-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_float4(b"NaN").map(f32::to_bits), Some(0x7fc0_0000));
        assert_eq!(parse_float4(b"-Infinity"), Some(f32::NEG_INFINITY));
    }

    #[test]
    fn out_of_range_and_other_spellings_are_the_servers() {
        for s in [
            &b"1e309"[..],
            b"-1e400",
            b"1e-400",
            b"0.0000001e-330",
            b"",
            b"-",
            b".",
            b"e5",
            b"1e",
            b"1e+",
            b"1e12345",
            b" 1",
            b"1 ",
            b"nan",
            b"-NaN",
            b"inf",
            b"+Infinity",
            b"infinity",
            b"0x1p3",
            b"1_000",
            b"1.2.3",
            b"--1",
            b"1d5",
        ] {
            assert_eq!(parse_float8(s), None, "{}", String::from_utf8_lossy(s));
        }
        assert_eq!(parse_float4(b"3.5e38"), None);
        assert_eq!(parse_float4(b"1e-46"), None);
        // zero digits with any exponent are zero, not an underflow
        assert_eq!(parse_float8(b"0e-9999"), Some(0.0));
        assert_eq!(
            parse_float8(b"-0.000e9999").map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
        assert!(parse_float8(&[b'1'; MAX_LEN]).is_some());
        assert!(parse_float8(&[b'1'; MAX_LEN + 1]).is_none());
    }
}
