//! `COPY … FROM` statements through fastcopy (`fastcopy.copy_from`; docs/architecture.md).
//!
//! A ProcessUtility hook, installed in `_PG_init`: with the setting `on` or `require`, a
//! `CopyStmt` is offered to [`claim`](claim::claim), which takes it or names the reason to
//! hand it over. A taken statement is one load (`load::run` with `Front::Statement`: COPY's
//! checks and wording; STDIN through `load/input/client.rs`), and its row count becomes the
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

unsafe extern "C-unwind" {
    /// `standard_ProcessUtility` without pgrx's FFI guard (see `process_utility`).
    #[link_name = "standard_ProcessUtility"]
    fn standard_process_utility(
        pstmt: *mut pg_sys::PlannedStmt,
        query_string: *const c_char,
        read_only_tree: bool,
        context: pg_sys::ProcessUtilityContext::Type,
        params: pg_sys::ParamListInfo,
        query_env: *mut pg_sys::QueryEnvironment,
        dest: *mut pg_sys::DestReceiver,
        qc: *mut pg_sys::QueryCompletion,
    );
}

/// The hook. Not a `#[pg_guard]` function: a statement fastcopy does not take goes to the
/// previous hook or `standard_ProcessUtility` exactly as if fastcopy were not there, and an
/// ERROR there must reach the server untouched (pgrx's guard would rebuild it from a few of
/// its fields, dropping the CONTEXT and the object names). So they are called directly, from
/// this frame, which holds nothing to drop; only [`take_if_ours`] runs Rust code that may
/// raise, behind its own guard.
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
    // SAFETY: the server's arguments; `take_if_ours` only reads the statement, and the
    // previous hook gets them unchanged.
    unsafe {
        if take_if_ours(pstmt, query_string, qc) {
            return;
        }
        let next: unsafe extern "C-unwind" fn(
            *mut pg_sys::PlannedStmt,
            *const c_char,
            bool,
            pg_sys::ProcessUtilityContext::Type,
            pg_sys::ParamListInfo,
            *mut pg_sys::QueryEnvironment,
            *mut pg_sys::DestReceiver,
            *mut pg_sys::QueryCompletion,
        ) = PREV.unwrap_or(standard_process_utility);
        next(
            pstmt,
            query_string,
            read_only_tree,
            context,
            params,
            query_env,
            dest,
            qc,
        );
    }
}

/// Runs the statement if fastcopy takes it (true), else says why not (false; with
/// `require`, an ERROR for a COPY FROM in text, CSV or binary).
#[pg_guard]
unsafe extern "C-unwind" fn take_if_ours(
    pstmt: *mut pg_sys::PlannedStmt,
    query_string: *const c_char,
    qc: *mut pg_sys::QueryCompletion,
) -> bool {
    // SAFETY: the server's statement, only read.
    let Some(stmt) = (unsafe { copy_stmt(pstmt) }) else {
        return false;
    };
    let mode = guc::copy_from();
    if mode == CopyFrom::Off {
        return false;
    }
    // SAFETY: backend thread, in the statement's transaction.
    match unsafe { claim::claim(stmt, query_string) } {
        Ok(claim) => {
            let rows = take(claim);
            if !qc.is_null() {
                // SAFETY: the server's completion record for this statement.
                unsafe {
                    (*qc).commandTag = pg_sys::CommandTag::CMDTAG_COPY;
                    (*qc).nprocessed = rows;
                }
            }
            true
        }
        Err(reason) if mode == CopyFrom::Require && reason.is_copy_from() => raise(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("fastcopy cannot take this COPY: {reason}"),
        ),
        Err(reason) => {
            pgrx::debug1!("fastcopy hands this COPY to the server: {reason}");
            false
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
