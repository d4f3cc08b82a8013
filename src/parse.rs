//! `fastcopy.parse_int2/4/8` and `try_parse_int2/4/8`: the int core with the grammar of the
//! server this build is for, and the server's errors.

use crate::error::raise;
use fastcopy_core::int::{self, Grammar, IntError};
use pgrx::prelude::*;

/// The integer grammar of the server this library is built for (the one place that knows).
#[cfg(feature = "pg15")]
pub const SERVER_GRAMMAR: Grammar = Grammar::Pg15;
#[cfg(not(feature = "pg15"))]
pub const SERVER_GRAMMAR: Grammar = Grammar::Pg16;

/// Raise the server's error for `input` that did not convert to `type_name`
/// ("smallint", "integer" or "bigint"): 22P02 or 22003 with the original input.
pub fn raise_int_error(err: IntError, input: &[u8], type_name: &str) -> ! {
    // The server's own parser raises the server's own error: the message shows the input's
    // bytes as they are, in any database encoding (a Rust message could not hold them).
    if let Ok(c) = std::ffi::CString::new(input) {
        // SAFETY: a NUL-terminated copy of the input; these raise their ERROR for the input
        // fastcopy's parser refused (its grammar is the server's).
        unsafe {
            match type_name {
                "smallint" => drop(pgrx::pg_sys::pg_strtoint16(c.as_ptr())),
                "integer" => drop(pgrx::pg_sys::pg_strtoint32(c.as_ptr())),
                _ => drop(pgrx::pg_sys::pg_strtoint64(c.as_ptr())),
            }
        }
    }
    // Only if the server took what fastcopy refused (a bug in fastcopy's parser).
    let (code, message) = int_error_text(err, input, type_name);
    raise(code, message)
}

/// The server's SQLSTATE and message for `input` that did not convert to `type_name`, the
/// input shown as text (exact for input in UTF-8, or ASCII).
pub fn int_error_text(err: IntError, input: &[u8], type_name: &str) -> (PgSqlErrorCode, String) {
    let shown = String::from_utf8_lossy(input);
    match err {
        IntError::InvalidSyntax => (
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type {type_name}: \"{shown}\""),
        ),
        IntError::OutOfRange => (
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!("value \"{shown}\" is out of range for type {type_name}"),
        ),
    }
}

#[pg_extern(immutable, strict, parallel_safe)]
fn parse_int2(input: &str) -> i16 {
    int::parse_i16(input.as_bytes(), SERVER_GRAMMAR)
        .unwrap_or_else(|e| raise_int_error(e, input.as_bytes(), "smallint"))
}

#[pg_extern(immutable, strict, parallel_safe)]
fn parse_int4(input: &str) -> i32 {
    int::parse_i32(input.as_bytes(), SERVER_GRAMMAR)
        .unwrap_or_else(|e| raise_int_error(e, input.as_bytes(), "integer"))
}

#[pg_extern(immutable, strict, parallel_safe)]
fn parse_int8(input: &str) -> i64 {
    int::parse_i64(input.as_bytes(), SERVER_GRAMMAR)
        .unwrap_or_else(|e| raise_int_error(e, input.as_bytes(), "bigint"))
}

#[pg_extern(immutable, strict, parallel_safe)]
fn try_parse_int2(input: &str) -> Option<i16> {
    int::parse_i16(input.as_bytes(), SERVER_GRAMMAR).ok()
}

#[pg_extern(immutable, strict, parallel_safe)]
fn try_parse_int4(input: &str) -> Option<i32> {
    int::parse_i32(input.as_bytes(), SERVER_GRAMMAR).ok()
}

#[pg_extern(immutable, strict, parallel_safe)]
fn try_parse_int8(input: &str) -> Option<i64> {
    int::parse_i64(input.as_bytes(), SERVER_GRAMMAR).ok()
}
