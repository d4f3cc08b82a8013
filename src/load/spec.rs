//! What one load is asked to do: the caller's options, parsed once into typed choices with
//! COPY's checks, in COPY's order, with the wording and SQLSTATEs of the running server's COPY
//! (`ProcessCopyOptions` in copy.c; the per-version texts are here and nowhere else).
//!
//! [`SqlOptions`] is what `fastcopy.load` / `load_data` were called with; [`LoadSpec::parse`]
//! turns it into a [`LoadSpec`]. A `COPY` statement's option list (the COPY hook) becomes a
//! `SqlOptions` the same way, so both front doors share the checks. The column list is not
//! checked here: COPY checks it against the relation before the options (`DoCopy`), and so
//! does `Opened::open` (`target.rs`), before the loader calls `parse`.

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
    pub header: Option<Header>,
    pub quote: Option<String>,
    pub escape: Option<String>,
    pub default_string: Option<String>,
    pub freeze: Option<bool>,
    pub on_error: Option<String>,
    pub force_not_null: Option<ForceList>,
    pub force_null: Option<ForceList>,
    pub log_verbosity: Option<String>,
    pub reject_limit: Option<i64>,
    /// fastcopy's REJECT_RATIO: the share of the rows read that may be skipped.
    pub reject_ratio: Option<f64>,
    pub where_clause: Option<WhereClause>,
    /// ENCODING: the input's encoding (else client_encoding).
    pub encoding: Option<String>,
    /// The rejects table (`rejects`, the COPY option REJECTS; else `fastcopy.rejects`).
    pub rejects: Option<String>,
}

/// COPY's HEADER choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    Off,
    /// This many lines are skipped: `HEADER` (true) is 1, PostgreSQL 19's `HEADER n` is n,
    /// offered on 15-18 too.
    Lines(u64),
    /// The first line must name the input columns (HEADER MATCH).
    Match,
}

/// FORCE_NOT_NULL / FORCE_NULL: the named columns, or `*`, every input column (COPY 17+; in
/// `fastcopy.load`, the array `'{*}'`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ForceList {
    All,
    Columns(Vec<Option<String>>),
}

impl ForceList {
    /// The SQL functions' array: `{*}` alone means every column.
    pub fn from_array(names: Vec<Option<String>>) -> ForceList {
        match names.as_slice() {
            [Some(star)] if star == "*" => ForceList::All,
            _ => ForceList::Columns(names),
        }
    }
}

/// COPY's WHERE condition.
#[derive(Clone, Debug)]
pub enum WhereClause {
    /// The condition as SQL text (`fastcopy.load`'s `where_clause`).
    Text(String),
    /// A `CopyStmt`'s raw condition and the statement's source text (its error positions).
    Parsed {
        node: *mut pgrx::pg_sys::Node,
        source: *const std::ffi::c_char,
    },
}

/// COPY's LOG_VERBOSITY (17+; `silent` 18+).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogVerbosity {
    /// No NOTICE at all.
    Silent,
    /// The closing NOTICE with the number of skipped rows.
    Default,
    /// Also one NOTICE per skipped row.
    Verbose,
}

/// The data format, with its own settings.
#[derive(Clone, Debug)]
pub enum Format {
    /// Text or CSV (the core's row reader: delimiter, NULL and DEFAULT markers, quote,
    /// escape, header).
    Delimited(Options),
    /// COPY's binary format (the core's binary reader; values through receive functions).
    Binary,
}

/// What a value that does not convert does (COPY's ON_ERROR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnErrorChoice {
    Stop,
    /// The row is skipped (COPY 17+; fastcopy on 15 and 16 too).
    Ignore,
    /// The value becomes NULL and the row is loaded (PostgreSQL 19's `set_null`, fastcopy on
    /// 15-18): a column whose domain does not take NULL is an ERROR, a NOT NULL column the
    /// usual not-null violation.
    SetNull,
}

/// One load's options, checked.
pub struct LoadSpec {
    pub format: Format,
    pub freeze: bool,
    pub on_error: OnErrorChoice,
    pub log_verbosity: LogVerbosity,
    /// With `on_error` ignore: the load fails once more rows than this were skipped.
    pub reject_limit: Option<u64>,
    /// With `on_error` ignore: the load fails at its end if more than this share of the rows
    /// read were skipped.
    pub reject_ratio: Option<f64>,
    /// HEADER MATCH: the reader checks the header's names (given to it by `start_blocks`,
    /// which knows the columns).
    pub header_match: bool,
    /// Column names of FORCE_NOT_NULL / FORCE_NULL (CSV), checked against the column list by
    /// `Opened::prepare` as COPY's `BeginCopyFrom` does.
    pub force_not_null: ForceList,
    pub force_null: ForceList,
    /// ENCODING's encoding id.
    pub encoding: Option<std::ffi::c_int>,
    /// The rejects table's name, as given (`rejects.rs`).
    pub rejects: Option<String>,
}

impl LoadSpec {
    /// The text/CSV reader options (`None` for binary).
    pub fn reader(&self) -> Option<&Options> {
        match &self.format {
            Format::Delimited(o) => Some(o),
            Format::Binary => None,
        }
    }

    pub fn binary(&self) -> bool {
        matches!(self.format, Format::Binary)
    }

    /// Checks `o` as the COPY of PostgreSQL `major` checks the same options, and returns them
    /// typed, or raises COPY's ERROR.
    pub fn parse(o: &SqlOptions, major: u32) -> LoadSpec {
        let words = Wording::of(major);
        // The options one by one, as ProcessCopyOptions' loop reads them (values that do not
        // parse fail here, before any check of how options go together).
        let (csv, binary) = parse_format(o);
        if o.default_string.is_some() && major < 16 {
            refuse(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                "default_string needs PostgreSQL 16 or later",
            );
        }
        let encoding = parse_encoding(o);
        let (rejects, on_error) = parse_on_error(o, binary);
        let log_verbosity = parse_log_verbosity(o);
        let reject_limit = parse_reject_limit(o);
        let reject_ratio = check_rejects(o, rejects.as_deref(), binary, on_error);
        let reader = check_together(o, csv, binary, &words, major);
        check_on_error_with(binary, on_error, reject_limit, reject_ratio);
        let none = || ForceList::Columns(Vec::new());
        LoadSpec {
            format: if binary {
                Format::Binary
            } else {
                Format::Delimited(reader)
            },
            freeze: o.freeze.unwrap_or(false),
            on_error,
            log_verbosity,
            reject_limit,
            reject_ratio,
            header_match: o.header == Some(Header::Match),
            force_not_null: o.force_not_null.clone().unwrap_or_else(none),
            force_null: o.force_null.clone().unwrap_or_else(none),
            encoding,
            rejects,
        }
    }
}

/// FORMAT: (csv, binary).
fn parse_format(o: &SqlOptions) -> (bool, bool) {
    match o.format.as_deref().unwrap_or("text") {
        "text" => (false, false),
        "csv" => (true, false),
        "binary" => (false, true),
        other => refuse(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            &format!("COPY format \"{other}\" not recognized"),
        ),
    }
}

/// ENCODING: the encoding's id.
fn parse_encoding(o: &SqlOptions) -> Option<i32> {
    o.encoding.as_deref().map(|name| {
        let id = std::ffi::CString::new(name)
            .map(|c| crate::compat::encoding_id(&c))
            .unwrap_or(-1);
        if id < 0 {
            refuse(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                "argument to option \"encoding\" must be a valid encoding name",
            );
        }
        id
    })
}

/// The rejects table (the option, else the setting for text and CSV loads that do not choose
/// another ON_ERROR themselves) and ON_ERROR.
fn parse_on_error(o: &SqlOptions, binary: bool) -> (Option<String>, OnErrorChoice) {
    // (the setting: for pg_restore's statements, say)
    let rejects = o.rejects.clone().filter(|r| !r.is_empty()).or_else(|| {
        crate::guc::rejects().filter(|_| {
            !binary
                && o.on_error
                    .as_deref()
                    .is_none_or(|v| v.eq_ignore_ascii_case("ignore"))
        })
    });
    let on_error = match o.on_error.as_deref() {
        // a rejects table keeps the rows ON_ERROR ignore skips
        None if rejects.is_some() => OnErrorChoice::Ignore,
        None => OnErrorChoice::Stop,
        // pg_strcasecmp, as defGetCopyOnErrorChoice
        Some(v) if v.eq_ignore_ascii_case("stop") => OnErrorChoice::Stop,
        Some(v) if v.eq_ignore_ascii_case("ignore") => OnErrorChoice::Ignore,
        Some(v) if v.eq_ignore_ascii_case("set_null") => OnErrorChoice::SetNull,
        Some(v) => refuse(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            &format!("COPY ON_ERROR \"{v}\" not recognized"),
        ),
    };
    (rejects, on_error)
}

/// LOG_VERBOSITY.
fn parse_log_verbosity(o: &SqlOptions) -> LogVerbosity {
    match o.log_verbosity.as_deref() {
        None => LogVerbosity::Default,
        Some(v) if v.eq_ignore_ascii_case("default") => LogVerbosity::Default,
        Some(v) if v.eq_ignore_ascii_case("verbose") => LogVerbosity::Verbose,
        Some(v) if v.eq_ignore_ascii_case("silent") => LogVerbosity::Silent,
        Some(v) => refuse(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            &format!("COPY LOG_VERBOSITY \"{v}\" not recognized"),
        ),
    }
}

/// REJECT_LIMIT.
fn parse_reject_limit(o: &SqlOptions) -> Option<u64> {
    o.reject_limit.map(|n| {
        if n <= 0 {
            refuse(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                &format!("REJECT_LIMIT ({n}) must be greater than zero"),
            );
        }
        n as u64
    })
}

/// What a rejects table goes with, and REJECT_RATIO (its value).
fn check_rejects(
    o: &SqlOptions,
    rejects: Option<&str>,
    binary: bool,
    on_error: OnErrorChoice,
) -> Option<f64> {
    if rejects.is_some() && binary {
        refuse(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            "a rejects table cannot be used in BINARY mode",
        );
    }
    if rejects.is_some() && on_error == OnErrorChoice::Stop {
        refuse(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "a rejects table requires ON_ERROR to be IGNORE or SET_NULL",
        );
    }
    o.reject_ratio.inspect(|&r| {
        if !(r > 0.0 && r < 1.0) {
            refuse(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                &format!("REJECT_RATIO ({r}) must be greater than zero and less than one"),
            );
        }
    })
}

/// ON_ERROR against the format and the limits (the last of ProcessCopyOptions' checks).
fn check_on_error_with(
    binary: bool,
    on_error: OnErrorChoice,
    reject_limit: Option<u64>,
    reject_ratio: Option<f64>,
) {
    // (COPY 17+; fastcopy offers ON_ERROR on 15 and 16 as well)
    if binary && on_error != OnErrorChoice::Stop {
        refuse(
            PgSqlErrorCode::ERRCODE_SYNTAX_ERROR,
            "only ON_ERROR STOP is allowed in BINARY mode",
        );
    }
    // the last of ProcessCopyOptions' checks (COPY 18; 19 refuses set_null too)
    if reject_limit.is_some() && on_error != OnErrorChoice::Ignore {
        refuse(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "COPY REJECT_LIMIT requires ON_ERROR to be set to IGNORE",
        );
    }
    if reject_ratio.is_some() && on_error != OnErrorChoice::Ignore {
        refuse(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "REJECT_RATIO requires ON_ERROR to be set to IGNORE",
        );
    }
}

/// ProcessCopyOptions after its loop: the options binary refuses, defaults filled in, then how
/// the options go together, in the server's order (the markers' own checks here, their
/// conflicts in `check_conflicts`). Binary is checked as text from the defaults on.
fn check_together(o: &SqlOptions, csv: bool, binary: bool, w: &Wording, major: u32) -> Options {
    use PgSqlErrorCode::*;
    if binary {
        refuse_text_options(o);
    }
    let mut opts = if csv { Options::csv() } else { Options::text() };
    opts.server_major = major;
    opts.header = match o.header {
        None | Some(Header::Off) => 0,
        Some(Header::Lines(n)) => n,
        Some(Header::Match) => 1,
    };
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
    if binary && opts.header > 0 {
        refuse(
            ERRCODE_FEATURE_NOT_SUPPORTED,
            "cannot specify HEADER in BINARY mode",
        );
    }
    quote_and_escape(o, &mut opts, csv, w);
    check_conflicts(o, &opts, csv, w);
    opts
}

/// BINARY takes no DELIMITER, NULL or DEFAULT (the first given named, as COPY names it).
fn refuse_text_options(o: &SqlOptions) {
    let given = [
        ("DELIMITER", o.delimiter.is_some()),
        ("NULL", o.null_string.is_some()),
        ("DEFAULT", o.default_string.is_some()),
    ];
    if let Some((name, _)) = given.iter().find(|(_, g)| *g) {
        refuse(
            PgSqlErrorCode::ERRCODE_SYNTAX_ERROR,
            &format!("cannot specify {name} in BINARY mode"),
        );
    }
}

/// QUOTE (CSV only; the escape follows it unless given), the delimiter against it, ESCAPE
/// (CSV only), in ProcessCopyOptions' order.
fn quote_and_escape(o: &SqlOptions, opts: &mut Options, csv: bool, w: &Wording) {
    use PgSqlErrorCode::*;
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
