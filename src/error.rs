//! Raising PostgreSQL ERRORs from Rust as functions that return `!`, usable in any expression.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;

/// ERROR with `code` and `msg`.
pub fn raise(code: PgSqlErrorCode, msg: impl Into<String>) -> ! {
    ErrorReport::new(code, msg.into(), "fastcopy").report(PgLogLevel::ERROR);
    unreachable!("ERROR returns control to PostgreSQL")
}

/// ERROR with a DETAIL line.
pub fn raise_detail(code: PgSqlErrorCode, msg: impl Into<String>, detail: impl Into<String>) -> ! {
    ErrorReport::new(code, msg.into(), "fastcopy")
        .set_detail(detail)
        .report(PgLogLevel::ERROR);
    unreachable!("ERROR returns control to PostgreSQL")
}

/// ERROR with a HINT line.
pub fn raise_hint(code: PgSqlErrorCode, msg: impl Into<String>, hint: impl Into<String>) -> ! {
    ErrorReport::new(code, msg.into(), "fastcopy")
        .set_hint(hint)
        .report(PgLogLevel::ERROR);
    unreachable!("ERROR returns control to PostgreSQL")
}
