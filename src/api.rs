//! The SQL surface of the loader: `fastcopy.load`, `fastcopy.load_data` (bytea and text) and
//! their result type. The three functions share one option list, declared once in
//! `load_function!` with pgrx's `default!()`; sql/load.sql holds only what pgrx cannot
//! declare (the result type, the comments).

use crate::error::raise;
use crate::load::spec::{ForceList, Header, SqlOptions, WhereClause};
use crate::load::{self, LoadStats, Source};
use pgrx::callconv::{Arg, ArgAbi};
use pgrx::pgrx_sql_entity_graph::metadata::{
    ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable, TypeOrigin,
};
use pgrx::prelude::*;

pgrx::extension_sql_file!("../sql/load.sql", name = "load_sql", bootstrap);
pgrx::extension_sql_file!("../sql/comments.sql", name = "comments_sql", finalize);

/// A `regclass` argument: the relation's OID only. (pgrx's `PgRelation` would open the
/// relation with AccessShareLock first; the load opens and locks it itself, RowExclusiveLock,
/// as COPY does.)
#[derive(Clone, Copy)]
pub struct RegClass(pg_sys::Oid);

impl FromDatum for RegClass {
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _typoid: pg_sys::Oid,
    ) -> Option<RegClass> {
        // SAFETY: a regclass Datum is an Oid.
        (!is_null).then(|| unsafe { pg_sys::Oid::from_datum(datum, false) }.map(RegClass))?
    }
}

// SAFETY: the SQL type is regclass, whose Datum is an Oid, which is what FromDatum reads.
unsafe impl SqlTranslatable for RegClass {
    const TYPE_IDENT: &'static str = pgrx::pgrx_resolved_type!(RegClass);
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> =
        Ok(SqlMappingRef::literal("regclass"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
        Ok(ReturnsRef::One(SqlMappingRef::literal("regclass")));
}

// SAFETY: unboxed with FromDatum, as pgrx unboxes an Oid.
unsafe impl<'fcx> ArgAbi<'fcx> for RegClass {
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> RegClass {
        let index = arg.index();
        // SAFETY: the argument is a regclass (the SQL signature says so).
        unsafe { arg.unbox_arg_using_from_datum() }
            .unwrap_or_else(|| panic!("argument {index} must not be null"))
    }
}

fn result_row(s: LoadStats) -> PgHeapTuple<'static, pgrx::AllocatedByRust> {
    let mut row = PgHeapTuple::new_composite_type("fastcopy.load_result")
        .unwrap_or_else(|e| raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string()));
    let fields = [
        ("rows_loaded", s.rows_loaded),
        ("rows_skipped", s.rows_skipped),
        ("rows_set_null", s.rows_set_null),
        ("rows_excluded", s.rows_excluded),
        ("bytes_read", s.bytes_read),
        ("flushes", s.flushes),
        ("pages_extended", s.pages_extended),
        ("extend_calls", s.extend_calls),
    ];
    for (name, v) in fields {
        row.set_by_name(name, v as i64)
            .unwrap_or_else(|e| raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string()));
    }
    row.set_by_name("elapsed_ms", s.elapsed_ms)
        .unwrap_or_else(|e| raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string()));
    if let (Some(id), Some(n)) = (s.load_id, s.rows_rejected) {
        row.set_by_name("load_id", id)
            .unwrap_or_else(|e| raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string()));
        row.set_by_name("rows_rejected", n as i64)
            .unwrap_or_else(|e| raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string()));
    }
    row
}

fn target_oid(target: Option<RegClass>) -> pg_sys::Oid {
    match target {
        Some(RegClass(oid)) => oid,
        None => raise(
            PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
            "target must not be NULL",
        ),
    }
}

/// One front-door function: `$data` is its second argument, `$source` makes the load's
/// `Source` of it (after the target's NULL check), and every function takes the same
/// options, in this order, with COPY's defaults.
macro_rules! load_function {
    ($(#[$doc:meta])* $sql_name:literal fn $name:ident($data:ident: $ty:ty) $source:path) => {
        $(#[$doc])*
        #[allow(clippy::too_many_arguments)]
        #[pg_extern(name = $sql_name, volatile, parallel_unsafe)]
        fn $name(
            target: Option<RegClass>,
            $data: Option<$ty>,
            columns: default!(Option<Vec<Option<String>>>, "NULL"),
            format: default!(Option<String>, "'text'"),
            delimiter: default!(Option<String>, "NULL"),
            null_string: default!(Option<String>, "NULL"),
            header: default!(Option<bool>, false),
            quote: default!(Option<String>, "NULL"),
            escape: default!(Option<String>, "NULL"),
            default_string: default!(Option<String>, "NULL"),
            freeze: default!(Option<bool>, false),
            on_error: default!(Option<String>, "NULL"),
            force_not_null: default!(Option<Vec<Option<String>>>, "NULL"),
            force_null: default!(Option<Vec<Option<String>>>, "NULL"),
            header_match: default!(Option<bool>, false),
            log_verbosity: default!(Option<String>, "NULL"),
            reject_limit: default!(Option<i64>, "NULL"),
            where_clause: default!(Option<String>, "NULL"),
            encoding: default!(Option<String>, "NULL"),
            header_lines: default!(Option<i64>, "NULL"),
            rejects: default!(Option<String>, "NULL"),
            reject_ratio: default!(Option<f64>, "NULL"),
        ) -> pgrx::composite_type!('static, "fastcopy.load_result") {
            let opts = SqlOptions {
                columns,
                format,
                delimiter,
                null_string,
                header: header_choice(header, header_match, header_lines),
                quote,
                escape,
                default_string,
                freeze,
                on_error,
                force_not_null: force_not_null.map(ForceList::from_array),
                force_null: force_null.map(ForceList::from_array),
                log_verbosity,
                reject_limit,
                where_clause: where_clause.map(WhereClause::Text),
                encoding,
                rejects,
                reject_ratio,
            };
            let relid = target_oid(target);
            let source = $source($data);
            // a server ERROR inside the load leaves it exactly as the server raised it
            result_row(crate::error::exact(move || load::run(|| relid, source, &opts, load::Front::Function)))
        }
    };
}

/// `header_match => true` is COPY's HEADER MATCH (whatever the others say); `header_lines
/// => n` is PostgreSQL 19's `HEADER n` (n lines skipped, 0 none; whatever `header` says);
/// `header => true` alone skips one line.
fn header_choice(
    header: Option<bool>,
    header_match: Option<bool>,
    header_lines: Option<i64>,
) -> Option<Header> {
    match (header, header_match, header_lines) {
        (_, Some(true), _) => Some(Header::Match),
        (_, _, Some(n)) if n < 0 => raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "a negative integer value cannot be specified for header_lines",
        ),
        (_, _, Some(0)) => Some(Header::Off),
        (_, _, Some(n)) => Some(Header::Lines(n as u64)),
        (Some(true), _, _) => Some(Header::Lines(1)),
        (Some(false), _, _) => Some(Header::Off),
        (None, _, _) => None,
    }
}

/// `load`'s source: a server file, if the caller may read one.
fn file_source(path: Option<&str>) -> Source<'_> {
    match path {
        Some(p) => Source::File(p),
        None => raise(
            PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
            "path must not be NULL",
        ),
    }
}

fn bytes_source(data: Option<&[u8]>) -> Source<'_> {
    Source::Value(data.unwrap_or(b""))
}

fn text_source(data: Option<&str>) -> Source<'_> {
    Source::Text(data.map_or(&b""[..], str::as_bytes))
}

load_function! {
    /// Loads a server file into a table like `COPY target [(columns)] FROM path WITH
    /// (options)`: superuser or pg_read_server_files, as COPY FROM a file.
    "load" fn load(path: &str) file_source
}

load_function! {
    /// Loads the given bytes like `COPY target [(columns)] FROM STDIN WITH (options)`: needs
    /// only INSERT.
    "load_data" fn load_data(data: &[u8]) bytes_source
}

load_function! {
    /// `load_data` for text.
    "load_data" fn load_data_text(data: &str) text_source
}
