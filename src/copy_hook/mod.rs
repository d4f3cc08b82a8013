//! `COPY … FROM` statements through fastcopy (`fastcopy.copy_from`, SPEC §2b).
//!
//! A ProcessUtility hook, installed in `_PG_init`: with the setting `on` or `require`, a
//! `CopyStmt` is offered to [`claim`](claim::claim), which takes it or names the reason to
//! hand it over. A taken statement is one load (`load::run` with `Front::Statement`: COPY's
//! checks and wording; STDIN through `load/client.rs`), and its row count becomes the
//! command tag `COPY n`. Everything else goes, untouched, to the previous hook or to
//! `standard_ProcessUtility`. A taken statement is not seen by the hooks of libraries loaded
//! before fastcopy (listed earlier in `shared_preload_libraries`); list fastcopy before
//! pg_stat_statements for it to count them.

mod claim;

use crate::error::raise;
use crate::guc::{self, CopyFrom};
use crate::load::{self, Front, Source};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::c_char;

static mut PREV: pg_sys::ProcessUtility_hook_type = None;

/// Installs the hook (once, from `_PG_init`).
pub fn install() {
    // SAFETY: _PG_init runs once per backend, on the backend thread, before any statement.
    unsafe {
        PREV = pg_sys::ProcessUtility_hook;
        pg_sys::ProcessUtility_hook = Some(process_utility);
    }
}

#[pg_guard]
#[allow(clippy::too_many_arguments)]
unsafe extern "C-unwind" fn process_utility(
    pstmt: *mut pg_sys::PlannedStmt,
    query_string: *const c_char,
    read_only_tree: bool,
    context: pg_sys::ProcessUtilityContext::Type,
    params: pg_sys::ParamListInfo,
    query_env: *mut pg_sys::QueryEnvironment,
    dest: *mut pg_sys::DestReceiver,
    qc: *mut pg_sys::QueryCompletion,
) {
    // SAFETY: the server's arguments; the statement is only read.
    let stmt = unsafe { copy_stmt(pstmt) };
    if let Some(stmt) = stmt {
        let mode = guc::copy_from();
        if mode != CopyFrom::Off {
            // SAFETY: backend thread, in the statement's transaction.
            match unsafe { claim::claim(stmt) } {
                Ok(claim) => {
                    let rows = take(claim);
                    if !qc.is_null() {
                        // SAFETY: the server's completion record for this statement.
                        unsafe {
                            (*qc).commandTag = pg_sys::CommandTag::CMDTAG_COPY;
                            (*qc).nprocessed = rows;
                        }
                    }
                    return;
                }
                Err(reason) if mode == CopyFrom::Require => raise(
                    PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                    format!("fastcopy cannot take this COPY: {reason}"),
                ),
                Err(reason) => {
                    pgrx::debug1!("fastcopy hands this COPY to the server: {reason}");
                }
            }
        }
    }
    // SAFETY: the server's arguments, passed on unchanged; the previous hook is called
    // through pgrx's guard (standard_ProcessUtility is guarded by its binding).
    unsafe {
        match PREV {
            Some(prev) => pg_sys::ffi::pg_guard_ffi_boundary(|| {
                prev(
                    pstmt,
                    query_string,
                    read_only_tree,
                    context,
                    params,
                    query_env,
                    dest,
                    qc,
                )
            }),
            None => pg_sys::standard_ProcessUtility(
                pstmt,
                query_string,
                read_only_tree,
                context,
                params,
                query_env,
                dest,
                qc,
            ),
        }
    }
}

/// The statement, if it is a COPY.
///
/// # Safety
/// `pstmt` is the server's planned utility statement.
unsafe fn copy_stmt<'a>(pstmt: *mut pg_sys::PlannedStmt) -> Option<&'a pg_sys::CopyStmt> {
    // SAFETY: as the function's contract; the tag says what the node is.
    unsafe {
        let node = (*pstmt).utilityStmt;
        (!node.is_null() && (*node).type_ == pg_sys::NodeTag::T_CopyStmt)
            .then(|| &*(node as *const pg_sys::CopyStmt))
    }
}

/// Runs a taken statement as COPY would: `standard_ProcessUtility`'s stack check, then the
/// load, which checks what `DoCopy` checks in its order. Returns the rows inserted.
fn take(claim: claim::Claim) -> u64 {
    // SAFETY: backend thread.
    unsafe { pg_sys::check_stack_depth() };
    let source = match &claim.file {
        Some(path) => Source::File(path),
        None => Source::Client,
    };
    let relation = claim.relation;
    let options = claim.options;
    let stats = crate::error::exact(move || {
        load::run(
            || {
                // SAFETY: DoCopy's table_openrv lock, with the server's errors for a table
                // that is gone or a schema that is not usable; the lock is held until the
                // transaction ends.
                unsafe {
                    pg_sys::RangeVarGetRelidExtended(
                        relation,
                        pg_sys::RowExclusiveLock as pg_sys::LOCKMODE,
                        0,
                        None,
                        std::ptr::null_mut(),
                    )
                }
            },
            source,
            &options,
            Front::Statement,
        )
    });
    stats.rows_loaded
}
