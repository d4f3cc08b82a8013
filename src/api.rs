//! The SQL surface of the loader: `fastcopy.load`, `fastcopy.load_data` and their result.
//! The SQL declarations (named arguments, defaults, comments) are in sql/load.sql.

use crate::error::{raise, raise_detail};
use crate::load::{self, LoadStats, Source, options::LoadOptions};
use pgrx::prelude::*;

pgrx::extension_sql_file!("../sql/load.sql", name = "load_sql", finalize);

fn result_row(s: LoadStats) -> PgHeapTuple<'static, pgrx::AllocatedByRust> {
    let mut row = PgHeapTuple::new_composite_type("fastcopy.load_result").unwrap();
    row.set_by_name("rows_loaded", s.rows_loaded as i64)
        .unwrap();
    row.set_by_name("rows_skipped", s.rows_skipped as i64)
        .unwrap();
    row.set_by_name("bytes_read", s.bytes_read as i64).unwrap();
    row.set_by_name("flushes", s.flushes as i64).unwrap();
    row.set_by_name("pages_extended", s.pages_extended as i64)
        .unwrap();
    row.set_by_name("extend_calls", s.extend_calls as i64)
        .unwrap();
    row.set_by_name("elapsed_ms", s.elapsed_ms).unwrap();
    row
}

fn target_oid(target: Option<pg_sys::Oid>) -> pg_sys::Oid {
    target.unwrap_or_else(|| {
        raise(
            PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
            "target must not be NULL",
        )
    })
}

/// Reading a server file needs what COPY FROM a file needs.
fn check_read_server_files() {
    unsafe {
        if !pg_sys::superuser()
            && !pg_sys::has_privs_of_role(
                pg_sys::GetUserId(),
                pg_sys::Oid::from(pg_sys::ROLE_PG_READ_SERVER_FILES),
            )
        {
            raise_detail(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                "permission denied to COPY from a file",
                "Only roles with privileges of the \"pg_read_server_files\" role may COPY from a file.",
            );
        }
    }
}

#[allow(clippy::too_many_arguments)]
#[pg_extern(sql = false)]
fn load(
    target: Option<pg_sys::Oid>,
    path: Option<&str>,
    columns: Option<Vec<Option<String>>>,
    format: Option<String>,
    delimiter: Option<String>,
    null_string: Option<String>,
    header: Option<bool>,
    quote: Option<String>,
    escape: Option<String>,
    default_string: Option<String>,
    freeze: Option<bool>,
    on_error: Option<String>,
    force_not_null: Option<Vec<Option<String>>>,
    force_null: Option<Vec<Option<String>>>,
) -> pgrx::composite_type!('static, "fastcopy.load_result") {
    let relid = target_oid(target);
    check_read_server_files();
    let Some(path) = path else {
        raise(
            PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
            "path must not be NULL",
        );
    };
    let opts = LoadOptions {
        columns,
        format,
        delimiter,
        null_string,
        header,
        quote,
        escape,
        default_string,
        freeze,
        on_error,
        force_not_null,
        force_null,
    };
    result_row(crate::error::exact(move || {
        load::run(relid, Source::File(path), &opts)
    }))
}

#[allow(clippy::too_many_arguments)]
#[pg_extern(sql = false)]
fn load_data(
    target: Option<pg_sys::Oid>,
    data: Option<&[u8]>,
    columns: Option<Vec<Option<String>>>,
    format: Option<String>,
    delimiter: Option<String>,
    null_string: Option<String>,
    header: Option<bool>,
    quote: Option<String>,
    escape: Option<String>,
    default_string: Option<String>,
    freeze: Option<bool>,
    on_error: Option<String>,
    force_not_null: Option<Vec<Option<String>>>,
    force_null: Option<Vec<Option<String>>>,
) -> pgrx::composite_type!('static, "fastcopy.load_result") {
    let relid = target_oid(target);
    let data = data.unwrap_or(b"");
    let opts = LoadOptions {
        columns,
        format,
        delimiter,
        null_string,
        header,
        quote,
        escape,
        default_string,
        freeze,
        on_error,
        force_not_null,
        force_null,
    };
    result_row(crate::error::exact(move || {
        load::run(relid, Source::Data(data), &opts)
    }))
}
