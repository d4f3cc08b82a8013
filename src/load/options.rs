//! The load options as given in SQL, checked the way COPY's `ProcessCopyOptions` checks them,
//! and turned into the reader's options.

use crate::error::raise;
use fastcopy_core::input::Options;
use pgrx::prelude::*;

/// What `fastcopy.load` / `load_data` were called with (NULL = COPY's default).
pub struct LoadOptions {
    pub columns: Option<Vec<Option<String>>>,
    pub format: Option<String>,
    pub delimiter: Option<String>,
    pub null_string: Option<String>,
    pub header: Option<bool>,
    pub quote: Option<String>,
    pub escape: Option<String>,
    pub default_string: Option<String>,
    pub freeze: Option<bool>,
    pub on_error: Option<String>,
    pub force_not_null: Option<Vec<Option<String>>>,
    pub force_null: Option<Vec<Option<String>>>,
}

impl LoadOptions {
    /// `on_error => 'ignore'`: rows whose values do not convert are skipped (checked by
    /// `reader_options` first).
    pub fn ignore_errors(&self) -> bool {
        self.on_error.as_deref() == Some("ignore")
    }
}

fn refuse(code: PgSqlErrorCode, msg: &str) -> ! {
    raise(code, msg.to_string())
}

/// One single-byte character, or COPY's "must be a single one-byte character" error.
fn one_byte(value: &str, what: &str) -> u8 {
    if value.len() != 1 {
        refuse(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            &format!("COPY {what} must be a single one-byte character"),
        );
    }
    value.as_bytes()[0]
}

/// The reader options for these SQL options, or the ERROR COPY raises for them.
pub fn reader_options(o: &LoadOptions, server_major: u32) -> Options {
    use PgSqlErrorCode::*;
    let csv = match o.format.as_deref().unwrap_or("text") {
        "text" => false,
        "csv" => true,
        "binary" => refuse(
            ERRCODE_FEATURE_NOT_SUPPORTED,
            "fastcopy does not support format binary",
        ),
        other => refuse(
            ERRCODE_INVALID_PARAMETER_VALUE,
            &format!("COPY format \"{other}\" not recognized"),
        ),
    };
    let mut opts = if csv { Options::csv() } else { Options::text() };
    opts.server_major = server_major;
    opts.header = o.header.unwrap_or(false);
    if let Some(d) = &o.delimiter {
        opts.delimiter = one_byte(d, "delimiter");
    }
    if opts.delimiter == b'\n' || opts.delimiter == b'\r' {
        refuse(
            ERRCODE_INVALID_PARAMETER_VALUE,
            "COPY delimiter cannot be newline or carriage return",
        );
    }
    if let Some(n) = &o.null_string {
        opts.null = n.as_bytes().to_vec();
    }
    if opts.null.iter().any(|&b| b == b'\n' || b == b'\r') {
        refuse(
            ERRCODE_INVALID_PARAMETER_VALUE,
            "COPY null representation cannot use newline or carriage return",
        );
    }
    if let Some(d) = &o.default_string {
        if server_major < 16 {
            refuse(
                ERRCODE_FEATURE_NOT_SUPPORTED,
                "default_string needs PostgreSQL 16 or later",
            );
        }
        if d.bytes().any(|b| b == b'\n' || b == b'\r') {
            refuse(
                ERRCODE_INVALID_PARAMETER_VALUE,
                "COPY default representation cannot use newline or carriage return",
            );
        }
        opts.default = Some(d.as_bytes().to_vec());
    }
    if !csv && b"\\.abcdefghijklmnopqrstuvwxyz0123456789".contains(&opts.delimiter) {
        refuse(
            ERRCODE_INVALID_PARAMETER_VALUE,
            &format!("COPY delimiter cannot be \"{}\"", opts.delimiter as char),
        );
    }
    if let Some(q) = &o.quote {
        if !csv {
            refuse(
                ERRCODE_FEATURE_NOT_SUPPORTED,
                "COPY quote available only in CSV mode",
            );
        }
        opts.quote = one_byte(q, "quote");
        opts.escape = opts.quote;
    }
    if csv && opts.delimiter == opts.quote {
        refuse(
            ERRCODE_INVALID_PARAMETER_VALUE,
            "COPY delimiter and quote must be different",
        );
    }
    if let Some(e) = &o.escape {
        if !csv {
            refuse(
                ERRCODE_FEATURE_NOT_SUPPORTED,
                "COPY escape available only in CSV mode",
            );
        }
        opts.escape = one_byte(e, "escape");
    }
    if opts.null.contains(&opts.delimiter) {
        refuse(
            crate::compat::MARKER_IN_NULL,
            "COPY delimiter must not appear in the NULL specification",
        );
    }
    if csv && opts.null.contains(&opts.quote) {
        refuse(
            crate::compat::MARKER_IN_NULL,
            "CSV quote character must not appear in the NULL specification",
        );
    }
    if let Some(d) = &opts.default {
        if d.contains(&opts.delimiter) {
            refuse(
                ERRCODE_INVALID_PARAMETER_VALUE,
                "COPY delimiter must not appear in the DEFAULT specification",
            );
        }
        if csv && d.contains(&opts.quote) {
            refuse(
                ERRCODE_INVALID_PARAMETER_VALUE,
                "CSV quote character must not appear in the DEFAULT specification",
            );
        }
        if *d == opts.null {
            refuse(
                ERRCODE_INVALID_PARAMETER_VALUE,
                "NULL specification and DEFAULT specification cannot be the same",
            );
        }
    }
    if !csv && o.force_not_null.is_some() {
        refuse(
            ERRCODE_FEATURE_NOT_SUPPORTED,
            "COPY force not null available only in CSV mode",
        );
    }
    if !csv && o.force_null.is_some() {
        refuse(
            ERRCODE_FEATURE_NOT_SUPPORTED,
            "COPY force null available only in CSV mode",
        );
    }
    match o.on_error.as_deref().unwrap_or("stop") {
        "stop" => {}
        "ignore" => {}
        other => refuse(
            ERRCODE_INVALID_PARAMETER_VALUE,
            &format!("COPY ON_ERROR \"{other}\" not recognized"),
        ),
    }
    opts
}
