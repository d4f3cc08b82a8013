//! Rows of fields to Datums, one converter per input column (`columns.rs`; COPY's
//! `NextCopyFrom` after the split): text fields ([`convert_row`]) with the fastcopy parser for
//! int2/int4/int8, the values `datum.rs` builds, else the type's input function looked up once
//! per load; binary fields ([`convert_binary_row`]) through their receive converters
//! (`receive.rs`); NULL and DEFAULT markers, FORCE_NULL / FORCE_NOT_NULL, the defaults of the
//! columns the input does not supply, and `on_error` (`ignore`, `set_null`). Everything is
//! taken from [`Columns`], the part of the target a row's conversion needs.
//!
//! The reader thread converts a block's int fields ahead of the backend (`Target::int_plan`);
//! what it could not convert (a NULL, a bad value) is converted here again and raises its
//! error in input order.

use super::columns::{Column, Columns, InputFunction, TextConverter};
use super::datum::typed_datum;
use super::position::Position;
use super::receive::Receive;
use super::tuple::Arena;
use crate::compat;
use crate::error::{raise, raise_detail};
use crate::parse::{SERVER_GRAMMAR, raise_int_error};
use fastcopy_core::input::{Field, Row};
use fastcopy_core::int;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::{CStr, c_char};

/// What a value that does not convert does (`on_error`), and how.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OnError {
    /// ERROR, the load stops (COPY's default).
    Stop,
    /// The row is skipped: ints by the parser's error value, other types through
    /// `compat::input_soft` (16+: soft errors); `keep`: the input function's error is kept
    /// for the rejects table (`compat::take_refusal`).
    Ignore { keep: bool },
    /// PostgreSQL 15, which has no soft errors, on the short path: the loader converts runs of
    /// rows in one subtransaction each (`Loader::load_run_rollback`), and an input function's
    /// ERROR rolls it back and skips its row.
    Rollback,
    /// The value becomes NULL (PostgreSQL 19's `set_null`; bad values found as for `Ignore`),
    /// unless its column's domain refuses NULL ([`set_null`]); `verbose`: a NOTICE each;
    /// `keep`: each value's error is kept for the rejects table ([`take_nulled`]).
    SetNull { verbose: bool, keep: bool },
}

/// The row buffers conversion writes into: one Datum and one null flag per attribute.
pub struct Values {
    pub datums: Vec<pg_sys::Datum>,
    pub nulls: Vec<bool>,
}

impl Values {
    pub fn new(natts: usize) -> Values {
        Values {
            datums: vec![pg_sys::Datum::from(0usize); natts],
            nulls: vec![true; natts],
        }
    }
}

/// Converts one row into `datums`/`nulls` (one entry per attribute: field count, conversions,
/// defaults), as COPY's `NextCopyFrom`. (Slices rather than `&mut Values`: the row loop keeps
/// their pointers in registers.)
/// False when a value did not convert and `on_error` skips the row.
#[inline]
#[allow(clippy::too_many_arguments)] // the row loop's state, passed apart (see above)
pub fn convert_row(
    cols: &Columns,
    converters: &[TextConverter],
    row: &Row,
    ints: &[Option<i64>],
    datums: &mut [pg_sys::Datum],
    nulls: &mut [bool],
    on_error: OnError,
    pos: &Position,
    arena: &mut Arena,
) -> bool {
    pos.at_row(row);
    let ncols = cols.columns.len();
    if cols.default_marker {
        check_default_markers(cols, row);
    }
    // (a zero-column table's lines come unsplit: only an empty one is a row)
    if (ncols > 0 && row.len() > ncols) || (ncols == 0 && row.line_len() != 0) {
        raise(
            PgSqlErrorCode::ERRCODE_BAD_COPY_FILE_FORMAT,
            "extra data after last expected column",
        );
    }
    let mem = cols.batch_memory();
    // SAFETY: the batch memory context lives as long as the target; values converted here
    // stay in it until the batch they go into is flushed.
    let old = unsafe { pg_sys::MemoryContextSwitchTo(mem) };
    for (i, (col, conv)) in cols.columns.iter().zip(converters).enumerate() {
        if i >= row.len() {
            // about the line, not a column (COPY names none here)
            pos.clear_column();
            raise(
                PgSqlErrorCode::ERRCODE_BAD_COPY_FILE_FORMAT,
                format!("missing data for column \"{}\"", col.name.to_string_lossy()),
            );
        }
        pos.at_column(col.name.as_ptr());
        let converted = match ints.get(i) {
            Some(Some(v)) => Some((pg_sys::Datum::from(*v), false)),
            _ => convert(col, conv, row.field(i), pos, cols, on_error, arena),
        };
        let Some((datum, isnull)) = converted else {
            // SAFETY: `old` is the context that was current on entry.
            unsafe { pg_sys::MemoryContextSwitchTo(old) };
            return false;
        };
        datums[col.index] = datum;
        nulls[col.index] = isnull;
    }
    pos.clear_column();
    cols.fill_defaults(datums, nulls);
    // SAFETY: as above.
    unsafe { pg_sys::MemoryContextSwitchTo(old) };
    true
}

/// The DEFAULT marker in a column without a default: COPY refuses it while it splits the line
/// (`CopyReadAttributes*`), before it counts the fields, for the fields that map to a column.
#[inline(never)]
pub fn check_default_markers(cols: &Columns, row: &Row) {
    for (i, col) in cols.columns.iter().enumerate().take(row.len()) {
        if col.default.is_none() && matches!(row.field(i), Field::Default) {
            raise_detail(
                PgSqlErrorCode::ERRCODE_BAD_COPY_FILE_FORMAT,
                "unexpected default marker in COPY data",
                format!(
                    "Column \"{}\" has no default value.",
                    col.name.to_string_lossy()
                ),
            );
        }
    }
}

/// One field to a Datum: ints through the fastcopy parser, others through the input function.
/// `None` when the value does not convert and `on_error` skips the row.
#[inline(always)]
fn convert(
    col: &Column,
    conv: &TextConverter,
    field: Field<'_>,
    pos: &Position,
    cols: &Columns,
    on_error: OnError,
    arena: &mut Arena,
) -> Option<(pg_sys::Datum, bool)> {
    let bytes = match field {
        Field::Value(b) if col.force_null && b == cols.null_marker.as_bytes() => None,
        Field::Value(b) => Some(b),
        // with FORCE_NOT_NULL the marker is the value (NUL-terminated in `null_marker`)
        Field::Null if col.force_not_null => Some(cols.null_marker.as_bytes()),
        Field::Null => None,
        Field::Default => {
            let Some(expr) = col.default else {
                unreachable!("check_default_markers refused the marker in column without default")
            };
            return Some(cols.eval_default(expr));
        }
    };
    let Some(bytes) = bytes else {
        return convert_null(col, conv, pos, on_error);
    };
    pos.at_value(bytes.as_ptr() as *const c_char);
    let parsed = match conv {
        TextConverter::Int4 => int::parse_i32(bytes, SERVER_GRAMMAR)
            .map(pg_sys::Datum::from)
            .map_err(|e| (e, "integer")),
        TextConverter::Int8 => int::parse_i64(bytes, SERVER_GRAMMAR)
            .map(pg_sys::Datum::from)
            .map_err(|e| (e, "bigint")),
        TextConverter::Int2 => int::parse_i16(bytes, SERVER_GRAMMAR)
            .map(pg_sys::Datum::from)
            .map_err(|e| (e, "smallint")),
        TextConverter::Input(f) => return convert_input(col, f, bytes, pos, cols, on_error, arena),
    };
    match parsed {
        Ok(d) => Some((d, false)),
        Err((e, type_name)) => int_refused(col, e, bytes, type_name, pos, on_error),
    }
}

/// An integer field the parser refused: the server's error, or under `on_error` the row
/// skipped (`None`) or the value made NULL.
#[cold]
fn int_refused(
    col: &Column,
    e: int::IntError,
    bytes: &[u8],
    type_name: &str,
    pos: &Position,
    on_error: OnError,
) -> Option<(pg_sys::Datum, bool)> {
    match on_error {
        OnError::Stop => raise_int_error(e, bytes, type_name),
        OnError::SetNull { verbose, keep } => {
            if keep {
                let (code, message) = crate::parse::int_error_text(e, bytes, type_name);
                keep_nulled(col, code as i32, message, None);
            }
            Some(set_null(col, None, pos, verbose))
        }
        OnError::Ignore { .. } | OnError::Rollback => None,
    }
}

/// A field of a column with an input function: text values and the types the core reads
/// built here (`datum.rs`), else the input function.
#[inline(always)]
fn convert_input(
    col: &Column,
    f: &InputFunction,
    bytes: &[u8],
    pos: &Position,
    cols: &Columns,
    on_error: OnError,
    arena: &mut Arena,
) -> Option<(pg_sys::Datum, bool)> {
    let InputFunction {
        flinfo,
        typioparam,
        typmod,
        chars,
        typed,
    } = f;
    // Only on the short path, where the batch memory is reset by `Batch` alone (which
    // resets the arena with it): on the executor paths the server runs triggers and
    // FDWs with that memory current.
    if cols.short_path
        && let Some(chars) = chars
    {
        // SAFETY: convert_row made the batch memory the current context.
        if let Some(d) = unsafe { chars.datum(bytes, arena) } {
            return Some((d, false));
        }
    }
    if let Some(kind) = typed {
        // the arena on the short path (as `chars`), else the current memory (the
        // batch memory convert_row made current, where the input function would
        // allocate)
        let alloc = |n: usize| {
            if cols.short_path {
                // SAFETY: convert_row made the batch memory the current context.
                unsafe { arena.alloc(n) }
            } else {
                // SAFETY: on the backend thread; palloc raises rather than return NULL.
                unsafe { pg_sys::palloc(n) as *mut u8 }
            }
        };
        // SAFETY: `alloc` gives n MAXALIGNed bytes of the batch memory, which lives
        // as long as the row's values.
        if let Some(d) = unsafe { typed_datum(*kind, bytes, alloc) } {
            return Some((d, false));
        }
    }
    // The decoder guarantees a NUL after every value: `bytes` is a C string.
    let s = bytes.as_ptr() as *mut c_char;
    match input(flinfo, s, *typioparam, *typmod, on_error) {
        Some(d) => Some((d, false)),
        None => match on_error {
            OnError::SetNull { verbose, keep } => {
                if keep && let Some(r) = compat::take_refusal() {
                    keep_nulled(col, r.sqlstate, r.message, r.detail);
                }
                Some(set_null(col, Some(f), pos, verbose))
            }
            _ => None,
        },
    }
}

/// A value `set_null` made NULL, kept for the rejects table: its column (0-based attribute)
/// and the error its conversion gave (packed SQLSTATE, message, detail).
pub struct Nulled {
    pub attribute: usize,
    pub sqlstate: i32,
    pub message: String,
    pub detail: Option<String>,
}

thread_local! {
    static NULLED: std::cell::RefCell<Vec<Nulled>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Keeps the error of a value of `col` that `set_null` makes NULL (with a rejects table).
#[cold]
fn keep_nulled(col: &Column, sqlstate: i32, message: String, detail: Option<String>) {
    let n = Nulled {
        attribute: col.index,
        sqlstate,
        message,
        detail,
    };
    NULLED.with(|v| v.borrow_mut().push(n));
}

/// The values `set_null` made NULL since the last call, with their errors (taken).
pub fn take_nulled() -> Vec<Nulled> {
    NULLED.with(|v| std::mem::take(&mut *v.borrow_mut()))
}

/// `on_error => 'set_null'`: the value at `pos` did not convert and becomes NULL, if the
/// column takes NULL: a domain with constraints is asked (its input function with NULL, as
/// PostgreSQL 19 asks it), and one that refuses is PostgreSQL 19's ERROR (23502), not the
/// domain's own. A NOT NULL column takes the NULL here and refuses it where every row's
/// constraints are checked, with the usual not-null violation.
#[inline(never)]
fn set_null(
    col: &Column,
    f: Option<&InputFunction>,
    pos: &Position,
    verbose: bool,
) -> (pg_sys::Datum, bool) {
    if col.constrained_domain
        && let Some(InputFunction {
            flinfo,
            typioparam,
            typmod,
            ..
        }) = f
        && input(
            flinfo,
            std::ptr::null_mut(),
            *typioparam,
            *typmod,
            OnError::SetNull {
                verbose,
                keep: false,
            },
        )
        .is_none()
    {
        raise_domain_refuses_null(col, *typioparam);
    }
    pos.value_set_null(verbose);
    (pg_sys::Datum::from(0usize), true)
}

/// PostgreSQL 19's ERROR for a value `set_null` cannot make NULL: the column's domain (type
/// `domain`) does not take NULL.
fn raise_domain_refuses_null(col: &Column, domain: pg_sys::Oid) -> ! {
    // SAFETY: a catalog lookup on the backend thread; format_type_be returns a palloc'd
    // NUL-terminated string (or raises).
    let name = unsafe { CStr::from_ptr(pg_sys::format_type_be(domain)) }
        .to_string_lossy()
        .into_owned();
    raise_detail(
        PgSqlErrorCode::ERRCODE_NOT_NULL_VIOLATION,
        format!("domain {name} does not allow null values"),
        format!(
            "ON_ERROR SET_NULL cannot be applied because column \"{}\" (domain {name}) does not accept null values.",
            col.name.to_string_lossy()
        ),
    )
}

/// A NULL field. Domains have their own input function: it is called with NULL so that their
/// NOT NULL constraints are checked, as COPY does.
fn convert_null(
    col: &Column,
    conv: &TextConverter,
    pos: &Position,
    on_error: OnError,
) -> Option<(pg_sys::Datum, bool)> {
    match conv {
        TextConverter::Input(InputFunction {
            flinfo,
            typioparam,
            typmod,
            ..
        }) => {
            pos.at_null();
            let d = input(flinfo, std::ptr::null_mut(), *typioparam, *typmod, on_error);
            // a rejected NULL stays the position (on_error's NOTICE and errors show it)
            if d.is_some() {
                pos.clear_value();
            } else if let OnError::SetNull { .. } = on_error {
                // the domain refuses NULL: there is nothing to set it to
                raise_domain_refuses_null(col, *typioparam);
            }
            d.map(|d| (d, true))
        }
        _ => Some((pg_sys::Datum::from(0usize), true)),
    }
}

/// A type's input function; unless `on_error` is `Stop`, a value it rejects gives `None` (or,
/// under `Rollback`, an ERROR marked as the input function's) instead of ERROR. Out of line
/// (see `Loader::load_routed`: the FFI guard's thread-local lookup stays out of the loop).
#[inline(never)]
fn input(
    flinfo: &pg_sys::FmgrInfo,
    s: *mut c_char,
    typioparam: pg_sys::Oid,
    typmod: i32,
    on_error: OnError,
) -> Option<pg_sys::Datum> {
    let fl = flinfo as *const _ as *mut pg_sys::FmgrInfo;
    // SAFETY: `fl` is the input function fmgr_info filled in for this column (input functions
    // do not write to their FmgrInfo but for fn_extra caches, which they own); `s` is a
    // NUL-terminated value in the row buffer, or NULL for a NULL field.
    unsafe {
        match on_error {
            OnError::Stop => Some(pg_sys::InputFunctionCall(fl, s, typioparam, typmod)),
            OnError::Ignore { keep } => compat::input_soft(fl, s, typioparam, typmod, keep),
            OnError::SetNull { keep, .. } => compat::input_soft(fl, s, typioparam, typmod, keep),
            OnError::Rollback => Some(compat::input_marked(fl, s, typioparam, typmod)),
        }
    }
}

/// Converts binary row `row` into `datums`/`nulls`, as COPY's binary `NextCopyFrom`: the
/// decoder checked the field count. `ints` are the int fields the reader thread converted
/// already. `fields` limits it to the first fields (a tuple cut short: the fields before the
/// defect are converted before it is reported).
#[inline]
#[allow(clippy::too_many_arguments)] // the row loop's state, passed apart (as convert_row's)
pub fn convert_binary_row(
    cols: &Columns,
    receives: &[Receive],
    row: &fastcopy_core::input::Row,
    ints: &[Option<i64>],
    fields: usize,
    datums: &mut [pg_sys::Datum],
    nulls: &mut [bool],
    pos: &Position,
) {
    pos.at_row(row);
    let mem = cols.batch_memory();
    // SAFETY: the batch memory context lives as long as the target; values converted here
    // stay in it until the batch they go into is flushed.
    let old = unsafe { pg_sys::MemoryContextSwitchTo(mem) };
    for (i, col) in cols.columns.iter().enumerate().take(fields) {
        pos.at_column(col.name.as_ptr());
        let (datum, isnull) = match ints.get(i) {
            Some(Some(v)) => (pg_sys::Datum::from(*v), false),
            _ => {
                let r = &receives[i];
                match row.field(i) {
                    fastcopy_core::input::Field::Value(b) => (r.convert(Some(b)), false),
                    _ => (r.convert(None), true),
                }
            }
        };
        datums[col.index] = datum;
        nulls[col.index] = isnull;
    }
    pos.clear_column();
    // a tuple cut short: COPY raises its error before the defaults (a sequence's nextval
    // among them) are evaluated
    if fields == cols.columns.len() {
        cols.fill_defaults(datums, nulls);
    }
    // SAFETY: `old` is the context that was current on entry.
    unsafe { pg_sys::MemoryContextSwitchTo(old) };
}
