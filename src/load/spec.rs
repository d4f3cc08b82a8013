//! What one load is asked to do: the caller's options, parsed once into typed choices with
//! COPY's checks, in COPY's order, with the wording and SQLSTATEs of the running server's COPY
//! (`ProcessCopyOptions` in copy.c; the per-version texts are here and nowhere else).
//!
//! [`SqlOptions`] is what `fastcopy.load` / `load_data` were called with; [`LoadSpec::parse`]
//! turns it into a [`LoadSpec`]. A `COPY` statement's option list (the COPY hook) becomes a
//! `SqlOptions` the same way, so both front doors share the checks. The column list is not
//! checked here: COPY checks it against the relation before the options (`DoCopy`), and so
//! does `Target::open`, which calls `parse` at the point where COPY checks the options.

use crate::error::raise;
use fastcopy_core::input::Options;
use pgrx::prelude::*;

/// The options as given in SQL (NULL = COPY's default for the format).
#[derive(Default)]
pub struct SqlOptions {
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

/// The data format, with its own settings.
#[derive(Clone, Debug)]
pub enum Format {
    /// Text or CSV (the core's row reader: delimiter, NULL and DEFAULT markers, quote,
    /// escape, header).
    Delimited(Options),
}

/// What a value that does not convert does (COPY's ON_ERROR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnErrorChoice {
    Stop,
    Ignore,
}

/// One load's options, checked.
pub struct LoadSpec {
    pub format: Format,
    pub freeze: bool,
    pub on_error: OnErrorChoice,
    /// Column names of FORCE_NOT_NULL / FORCE_NULL (CSV), checked against the column list by
    /// `Target::open` as COPY's `BeginCopyFrom` does.
    pub force_not_null: Vec<Option<String>>,
    pub force_null: Vec<Option<String>>,
}

impl LoadSpec {
    /// The text/CSV reader options.
    pub fn reader(&self) -> &Options {
        match &self.format {
            Format::Delimited(o) => o,
        }
    }

    /// Checks `o` as the COPY of PostgreSQL `major` checks the same options, and returns them
    /// typed, or raises COPY's ERROR.
    pub fn parse(o: &SqlOptions, major: u32) -> LoadSpec {
        let words = Wording::of(major);
        // The options one by one, as ProcessCopyOptions' loop reads them (values that do not
        // parse fail here, before any check of how options go together).
        let csv = match o.format.as_deref().unwrap_or("text") {
            "text" => false,
            "csv" => true,
            "binary" => refuse(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                "fastcopy does not support format binary",
            ),
            other => refuse(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                &format!("COPY format \"{other}\" not recognized"),
            ),
        };
        if o.default_string.is_some() && major < 16 {
            refuse(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                "default_string needs PostgreSQL 16 or later",
            );
        }
        let on_error = match o.on_error.as_deref() {
            None => OnErrorChoice::Stop,
            // pg_strcasecmp, as defGetCopyOnErrorChoice
            Some(v) if v.eq_ignore_ascii_case("stop") => OnErrorChoice::Stop,
            Some(v) if v.eq_ignore_ascii_case("ignore") => OnErrorChoice::Ignore,
            Some(v) => refuse(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                &format!("COPY ON_ERROR \"{v}\" not recognized"),
            ),
        };
        let reader = check_together(o, csv, &words, major);
        LoadSpec {
            format: Format::Delimited(reader),
            freeze: o.freeze.unwrap_or(false),
            on_error,
            force_not_null: o.force_not_null.clone().unwrap_or_default(),
            force_null: o.force_null.clone().unwrap_or_default(),
        }
    }
}

/// ProcessCopyOptions after its loop: defaults filled in, then how the options go together,
/// in the server's order (the markers' own checks here, their conflicts in `check_conflicts`).
fn check_together(o: &SqlOptions, csv: bool, w: &Wording, major: u32) -> Options {
    use PgSqlErrorCode::*;
    let mut opts = if csv { Options::csv() } else { Options::text() };
    opts.server_major = major;
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
            refuse(ERRCODE_FEATURE_NOT_SUPPORTED, w.quote_needs_csv);
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
            refuse(ERRCODE_FEATURE_NOT_SUPPORTED, w.escape_needs_csv);
        }
        opts.escape = one_byte(e, "escape");
    }
    check_conflicts(o, &opts, csv, w);
    opts
}

/// The rest of ProcessCopyOptions' checks, in its order: FORCE_* outside CSV, then the NULL
/// and DEFAULT markers against the delimiter, the quote and each other.
fn check_conflicts(o: &SqlOptions, opts: &Options, csv: bool, w: &Wording) {
    use PgSqlErrorCode::*;
    if !csv && o.force_not_null.is_some() {
        refuse(ERRCODE_FEATURE_NOT_SUPPORTED, w.force_not_null_needs_csv);
    }
    if !csv && o.force_null.is_some() {
        refuse(ERRCODE_FEATURE_NOT_SUPPORTED, w.force_null_needs_csv);
    }
    if opts.null.contains(&opts.delimiter) {
        refuse(w.marker_in_null, w.delimiter_in_null);
    }
    if csv && opts.null.contains(&opts.quote) {
        refuse(
            w.marker_in_null,
            "CSV quote character must not appear in the NULL specification",
        );
    }
    if let Some(d) = &opts.default {
        if d.contains(&opts.delimiter) {
            refuse(ERRCODE_FEATURE_NOT_SUPPORTED, w.delimiter_in_default);
        }
        if csv && d.contains(&opts.quote) {
            refuse(
                ERRCODE_FEATURE_NOT_SUPPORTED,
                "CSV quote character must not appear in the DEFAULT specification",
            );
        }
        if *d == opts.null {
            refuse(
                ERRCODE_FEATURE_NOT_SUPPORTED,
                "NULL specification and DEFAULT specification cannot be the same",
            );
        }
    }
}

/// The messages and SQLSTATEs of COPY's option checks that changed between versions (17
/// reworded the CSV-only ones and made the NULL-marker conflicts 22023).
struct Wording {
    quote_needs_csv: &'static str,
    escape_needs_csv: &'static str,
    force_not_null_needs_csv: &'static str,
    force_null_needs_csv: &'static str,
    delimiter_in_null: &'static str,
    delimiter_in_default: &'static str,
    marker_in_null: PgSqlErrorCode,
}

impl Wording {
    fn of(major: u32) -> Wording {
        if major >= 17 {
            Wording {
                quote_needs_csv: "COPY QUOTE requires CSV mode",
                escape_needs_csv: "COPY ESCAPE requires CSV mode",
                force_not_null_needs_csv: "COPY FORCE_NOT_NULL requires CSV mode",
                force_null_needs_csv: "COPY FORCE_NULL requires CSV mode",
                delimiter_in_null: "COPY delimiter character must not appear in the NULL specification",
                delimiter_in_default: "COPY delimiter character must not appear in the DEFAULT specification",
                marker_in_null: PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            }
        } else {
            Wording {
                quote_needs_csv: "COPY quote available only in CSV mode",
                escape_needs_csv: "COPY escape available only in CSV mode",
                force_not_null_needs_csv: "COPY force not null available only in CSV mode",
                force_null_needs_csv: "COPY force null available only in CSV mode",
                delimiter_in_null: "COPY delimiter must not appear in the NULL specification",
                delimiter_in_default: "COPY delimiter must not appear in the DEFAULT specification",
                marker_in_null: PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            }
        }
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
