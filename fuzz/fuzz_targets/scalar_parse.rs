//! `fastcopy_core::float`, `uuid` and `boolean` on arbitrary bytes: no input panics; an
//! accepted float is bit for bit what the C library's `strtod` / `strtof` (the server's
//! `float8in` / `float4in`) read from the whole input, and not a value the server refuses
//! (zero from non-zero digits, infinity); an accepted uuid holds the input's hex digits in
//! order; an accepted bool is a spelling `boolin` takes; an accepted bytea is the bytes its
//! pairs of hex digits spell.

#![no_main]

use fastcopy_core::boolean::parse_bool;
use fastcopy_core::bytea::parse_bytea;
use fastcopy_core::float::{parse_float4, parse_float8};
use fastcopy_core::uuid::parse_uuid;
use libfuzzer_sys::fuzz_target;
use std::ffi::{CString, c_char, c_int};

unsafe extern "C" {
    fn strtod(s: *const c_char, end: *mut *mut c_char) -> f64;
    fn strtof(s: *const c_char, end: *mut *mut c_char) -> f32;
    fn __errno_location() -> *mut c_int;
}

/// strtod's or strtof's value of the whole input, its errno (34 is ERANGE).
fn c_library(data: &[u8], single: bool) -> Option<(u64, c_int)> {
    let c = CString::new(data).ok()?;
    let mut end = std::ptr::null_mut();
    // SAFETY: `c` is NUL-terminated and lives through the call; errno is this thread's.
    let (bits, errno) = unsafe {
        *__errno_location() = 0;
        let bits = if single {
            strtof(c.as_ptr(), &mut end).to_bits() as u64
        } else {
            strtod(c.as_ptr(), &mut end).to_bits()
        };
        (bits, *__errno_location())
    };
    (end as usize - c.as_ptr() as usize == data.len()).then_some((bits, errno))
}

fuzz_target!(|data: &[u8]| {
    if let Some(v) = parse_float8(data) {
        let (bits, errno) = c_library(data, false).expect("strtod reads it whole");
        assert_eq!(v.to_bits(), bits, "{data:?}");
        assert!(!(errno == 34 && (v == 0.0 || v.is_infinite())), "{data:?}");
    }
    if let Some(v) = parse_float4(data) {
        let (bits, errno) = c_library(data, true).expect("strtof reads it whole");
        assert_eq!(v.to_bits() as u64, bits, "{data:?}");
        assert!(!(errno == 34 && (v == 0.0 || v.is_infinite())), "{data:?}");
    }
    if let Some(u) = parse_uuid(data) {
        let hex: Vec<u8> = data.iter().copied().filter(u8::is_ascii_hexdigit).collect();
        let text: String = u.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(text.as_bytes(), hex.to_ascii_lowercase().as_slice(), "{data:?}");
    }
    if let Some(b) = parse_bool(data) {
        let words: &[&[u8]] = if b { &[b"true", b"yes", b"on", b"1"] } else { &[b"false", b"no", b"off", b"0"] };
        let lower = data.to_ascii_lowercase();
        assert!(words.iter().any(|w| w.starts_with(&lower)), "{data:?}");
        assert_ne!(lower, b"o", "o alone is neither on nor off");
    }
    // (a bytea is `\x` and the bytes its pairs of digits spell, each pair read alone)
    if let Some(bytes) = parse_bytea(data) {
        let digits = &data[2..];
        assert!(data.starts_with(b"\\x") && digits.len() == 2 * bytes.len(), "{data:?}");
        for (pair, b) in digits.chunks(2).zip(&bytes) {
            let pair = std::str::from_utf8(pair).expect("hex digits");
            assert_eq!(u8::from_str_radix(pair, 16).ok(), Some(*b), "{data:?}");
        }
    }
});
