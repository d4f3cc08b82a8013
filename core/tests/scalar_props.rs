//! Property tests of `fastcopy_core::float`, `uuid` and `boolean`.
//!
//! Floats: against the C library's own `strtod` / `strtof`, the functions `float8in` /
//! `float4in` call, with the server's rule around them (`float.c`: an `ERANGE` result that is
//! zero or infinite is "out of range"; a denormal is kept): whatever the core takes must be
//! exactly what the server stores, bit for bit, and an input the server refuses must not be
//! taken. The inputs: random decimal spellings (long mantissas, 17-digit values, exponents near
//! both ends of the range, denormals) and exact halfway points between two adjacent doubles.
//!
//! uuids and bools: against references written here from the grammar's description.

use fastcopy_core::boolean::parse_bool;
use fastcopy_core::float::{parse_float4, parse_float8};
use fastcopy_core::uuid::parse_uuid;
use proptest::prelude::*;
use proptest::sample::select;
use std::ffi::{CString, c_char, c_int};

unsafe extern "C" {
    fn strtod(s: *const c_char, end: *mut *mut c_char) -> f64;
    fn strtof(s: *const c_char, end: *mut *mut c_char) -> f32;
    fn __errno_location() -> *mut c_int;
}

const ERANGE: c_int = 34;

/// What the server stores for `s` as a float8 (`Some(bits)`), or `None` where it raises (or
/// where the C library stops before the end: the server's syntax error).
fn server_float8(s: &str) -> Option<u64> {
    let c = CString::new(s).unwrap();
    let mut end = std::ptr::null_mut();
    // SAFETY: `c` is a NUL-terminated string that lives through the call; errno is this
    // thread's.
    let (v, errno) = unsafe {
        *__errno_location() = 0;
        let v = strtod(c.as_ptr(), &mut end);
        (v, *__errno_location())
    };
    let used = end as usize - c.as_ptr() as usize;
    if used != s.len() || (errno == ERANGE && (v == 0.0 || v.is_infinite())) {
        return None;
    }
    Some(v.to_bits())
}

fn server_float4(s: &str) -> Option<u32> {
    let c = CString::new(s).unwrap();
    let mut end = std::ptr::null_mut();
    // SAFETY: as in `server_float8`.
    let (v, errno) = unsafe {
        *__errno_location() = 0;
        let v = strtof(c.as_ptr(), &mut end);
        (v, *__errno_location())
    };
    let used = end as usize - c.as_ptr() as usize;
    if used != s.len() || (errno == ERANGE && (v == 0.0 || v.is_infinite())) {
        return None;
    }
    Some(v.to_bits())
}

/// The core's answer may be `None` for anything; where it is a value it is the server's.
fn check(s: &str) -> Result<(), TestCaseError> {
    if let Some(v) = parse_float8(s.as_bytes()) {
        prop_assert_eq!(Some(v.to_bits()), server_float8(s), "float8 {}", s);
    }
    if let Some(v) = parse_float4(s.as_bytes()) {
        prop_assert_eq!(Some(v.to_bits()), server_float4(s), "float4 {}", s);
    }
    Ok(())
}

/// A decimal spelling: sign, digits with a point somewhere (or none), an exponent.
fn decimal() -> impl Strategy<Value = String> {
    (
        select(vec!["", "-", "+"]),
        "[0-9]{1,30}",
        any::<prop::sample::Index>(),
        any::<bool>(),
        prop_oneof![
            Just(None),
            (-400i32..400).prop_map(Some),
            (-330i32..-280).prop_map(Some),
            (280i32..330).prop_map(Some),
            (-50i32..-30).prop_map(Some),
            (30i32..45).prop_map(Some),
        ],
        select(vec!["e", "E"]),
    )
        .prop_map(|(sign, digits, at, point, exp, e)| {
            let mut s = String::from(sign);
            if point {
                let at = at.index(digits.len() + 1);
                s.push_str(&digits[..at]);
                s.push('.');
                s.push_str(&digits[at..]);
            } else {
                s.push_str(&digits);
            }
            if let Some(x) = exp {
                s.push_str(&format!("{e}{x}"));
            }
            s
        })
}

/// The exact decimal of (2m+1)·2^(k-1) for a 53-bit m: halfway between two adjacent doubles
/// (and, for small m, between floats), where the rounding rule decides.
fn halfway() -> impl Strategy<Value = String> {
    (1u64 << 52..1u64 << 53, -30i32..40, any::<bool>()).prop_map(|(m, k, neg)| {
        let odd = 2 * m as u128 + 1;
        let sign = if neg { "-" } else { "" };
        if k >= 1 {
            format!("{sign}{}", odd << (k - 1))
        } else {
            // odd / 2^(1-k) = odd * 5^(1-k) / 10^(1-k)
            let n = (1 - k) as u32;
            let digits = (odd * 5u128.pow(n)).to_string();
            let n = n as usize;
            let (int, frac) = if digits.len() > n {
                (
                    digits[..digits.len() - n].to_string(),
                    digits[digits.len() - n..].to_string(),
                )
            } else {
                (
                    "0".to_string(),
                    format!("{}{digits}", "0".repeat(n - digits.len())),
                )
            };
            format!("{sign}{int}.{frac}")
        }
    })
}

/// A double written the way the server writes one (shortest round trip, `{:e}`, or 17
/// significant digits), and denormals.
fn written() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|b| format!("{}", f64::from_bits(b))),
        any::<u64>().prop_map(|b| format!("{:e}", f64::from_bits(b))),
        any::<u64>().prop_map(|b| format!("{:.16e}", f64::from_bits(b))),
        (1u64..1 << 52).prop_map(|b| format!("{:e}", f64::from_bits(b))),
        any::<u32>().prop_map(|b| format!("{:e}", f32::from_bits(b))),
        (1u32..1 << 23).prop_map(|b| format!("{:.9e}", f32::from_bits(b))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn decimals_are_the_c_librarys(s in decimal()) {
        check(&s)?;
    }

    #[test]
    fn halfway_points_round_as_the_c_library_does(s in halfway()) {
        check(&s)?;
        // and they are taken: every one is a plain decimal within the limits
        if s.len() <= fastcopy_core::float::MAX_LEN {
            prop_assert!(parse_float8(s.as_bytes()).is_some(), "{}", s);
        }
    }

    #[test]
    fn written_doubles_read_back(s in written()) {
        check(&s)?;
        let plain = !s.contains("inf") && !s.contains("NaN");
        if server_float8(&s).is_some() && plain && s.len() <= fastcopy_core::float::MAX_LEN {
            prop_assert!(parse_float8(s.as_bytes()).is_some(), "{}", s);
        }
    }

    #[test]
    fn arbitrary_bytes_are_never_taken_wrongly(s in "[-+0-9.eEnaNIfity ]{0,24}") {
        check(&s)?;
    }
}

/// Edge cases by hand: the ends of both ranges, denormals, zero with huge exponents.
#[test]
fn float_edges() {
    for s in [
        "0",
        "-0",
        "0.0",
        "0e-9999",
        "-0e9999",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "2.2250738585072014e-308",
        "2.2250738585072011e-308",
        "4.9406564584124654e-324",
        "2.4703282292062328e-324",
        "2.4703282292062327e-324",
        "5e-324",
        "3e-324",
        "1e-323",
        "3.4028235e38",
        "3.4028236e38",
        "3.40282357e38",
        "1.17549435e-38",
        "1.4e-45",
        "7e-46",
        "7.1e-46",
        "0.1",
        "0.2",
        "0.30000000000000004",
        "9007199254740993",
        "9007199254740992.5",
        "123456789012345678901234567890",
        "1e22",
        "1e23",
        "8.988465674311579e307",
        "NaN",
        "Infinity",
        "-Infinity",
    ] {
        check(s).unwrap();
    }
}

/// `uuid_in`'s grammar from its description: optional braces, 32 hex digits, a hyphen
/// allowed after each group of four but the last.
fn uuid_reference(s: &str) -> Option<[u8; 16]> {
    let inner = match s.strip_prefix('{') {
        Some(rest) => rest.strip_suffix('}')?,
        None => s,
    };
    let mut hex = String::new();
    let mut since_hyphen_ok = 0;
    for c in inner.chars() {
        if c == '-' {
            // only right after a group of four digits, never first, never twice, never last
            if hex.is_empty() || hex.len() % 4 != 0 || since_hyphen_ok != 4 || hex.len() == 32 {
                return None;
            }
            since_hyphen_ok = 0;
            continue;
        }
        if !c.is_ascii_hexdigit() {
            return None;
        }
        hex.push(c);
        since_hyphen_ok = if since_hyphen_ok == 4 {
            1
        } else {
            since_hyphen_ok + 1
        };
        if hex.len() % 4 == 0 {
            since_hyphen_ok = 4;
        }
    }
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    Some(out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn uuids_as_the_grammar_says(s in "\\{?([0-9a-fA-F]{1,5}-?){6,9}[0-9a-fA-F]{0,4}\\}?") {
        prop_assert_eq!(parse_uuid(s.as_bytes()), uuid_reference(&s), "{}", s);
    }

    #[test]
    fn written_uuids_read_back(b in any::<[u8; 16]>(), hyphens in any::<u8>(), braces: bool, upper: bool) {
        let mut s = String::new();
        for (i, x) in b.iter().enumerate() {
            s.push_str(&if upper { format!("{x:02X}") } else { format!("{x:02x}") });
            if i % 2 == 1 && i < 15 && hyphens & (1 << (i / 2)) != 0 {
                s.push('-');
            }
        }
        if braces {
            s = format!("{{{s}}}");
        }
        prop_assert_eq!(parse_uuid(s.as_bytes()), Some(b));
        prop_assert_eq!(uuid_reference(&s), Some(b));
    }

    #[test]
    fn bools_as_the_grammar_says(s in "[tTrRuUeEfFaAlLsSyYnNoO01 x]{0,6}") {
        let lower = s.to_ascii_lowercase();
        let prefix = |w: &str| !lower.is_empty() && w.starts_with(&lower);
        // (`o` alone is neither on nor off)
        let o = |w: &str| lower.len() >= 2 && prefix(w);
        let want = if prefix("true") || prefix("yes") || o("on") || lower == "1" {
            Some(true)
        } else if prefix("false") || prefix("no") || o("off") || lower == "0" {
            Some(false)
        } else {
            None
        };
        prop_assert_eq!(parse_bool(s.as_bytes()), want, "{:?}", s);
    }
}
