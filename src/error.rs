//! Errors: raising PostgreSQL ERRORs from Rust as functions that return `!` (usable in any
//! expression), and the panic hook that keeps the server's own errors as the server raised them.
//!
//! How an ERROR travels through fastcopy: a PostgreSQL function called from Rust raises it with
//! a longjmp; pgrx's FFI guard catches that and turns it into a Rust panic carrying the error
//! (`CaughtError::PostgresError`), the panic unwinds the load's frames (dropping what they
//! own), and pgrx raises the error again once the last Rust frame is gone. fastcopy's own
//! errors (`raise`) take the same road as a panic carrying an `ErrorReport`. pgrx's panic hook
//! records a Rust backtrace for every panic and appends it to the DETAIL of the error it raises
//! again, whenever `RUST_BACKTRACE`/`RUST_LIB_BACKTRACE` are set: the client would see a
//! unique violation's one-line DETAIL followed by dozens of frames with the build machine's
//! paths. [`install_panic_hook`] puts a hook in front of pgrx's that records nothing for those
//! errors (their DETAIL and HINT stay the server's), and for a real panic (a bug in fastcopy)
//! writes where it happened, and the backtrace when the environment asks for one, to the server
//! log; the client gets the panic's message as one ERROR (XX000).
//!
//! pgrx raises a server error again from what it copied of it (SQLSTATE, message, DETAIL,
//! HINT, where), which leaves out the rest of the server's `ErrorData`: the schema, table,
//! column, data type and constraint names a client reads from the error (psycopg's
//! `diag.constraint_name`, psql's VERBOSITY verbose) and the CONTEXT lines collected when it
//! was raised. [`exact`] runs a load so that a server error leaves it exactly as the server
//! raised it: an error context callback copies the `ErrorData` of an ERROR while the server
//! raises it, and once the load's frames are gone that copy is thrown again
//! (`ThrowErrorData`), which adds the CONTEXT of the frames outside the load as any error does.

use pgrx::pg_sys;
use pgrx::pg_sys::panic::{CaughtError, ErrorReport, ErrorReportWithLevel};
use pgrx::prelude::*;
use std::cell::Cell;
use std::ffi::{CStr, c_void};
use std::sync::OnceLock;

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

/// ERROR with DETAIL and HINT lines.
pub fn raise_detail_hint(
    code: PgSqlErrorCode,
    msg: impl Into<String>,
    detail: impl Into<String>,
    hint: impl Into<String>,
) -> ! {
    ErrorReport::new(code, msg.into(), "fastcopy")
        .set_detail(detail)
        .set_hint(hint)
        .report(PgLogLevel::ERROR);
    unreachable!("ERROR returns control to PostgreSQL")
}

/// The backend's thread: the only one whose panics become ERRORs.
static BACKEND_THREAD: OnceLock<std::thread::ThreadId> = OnceLock::new();

/// Whether a panic's payload is an ERROR on its way back to PostgreSQL (the server's, or one
/// of fastcopy's `raise`), not a bug.
fn is_error_report(payload: &(dyn std::any::Any + Send)) -> bool {
    payload.is::<CaughtError>()
        || payload.is::<ErrorReportWithLevel>()
        || payload.is::<ErrorReport>()
}

/// Installs fastcopy's panic hook in front of pgrx's (which `Pg_magic_func` installed before
/// `_PG_init` runs). Call once, from `_PG_init`.
pub fn install_panic_hook() {
    if BACKEND_THREAD.set(std::thread::current().id()).is_err() {
        return; // already installed in this process
    }
    let pgrx_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if BACKEND_THREAD.get() != Some(&std::thread::current().id()) {
            // another thread (the reader): pgrx's hook prints it to the server log (stderr)
            return pgrx_hook(info);
        }
        if is_error_report(info.payload()) {
            // an ERROR unwinding the load's frames: pgrx raises it again as it was
            return;
        }
        // A bug: the client gets the message as one ERROR; where, and the backtrace if the
        // environment asks for one, go to the server log.
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let backtrace = std::backtrace::Backtrace::capture();
        match backtrace.status() {
            std::backtrace::BacktraceStatus::Captured => {
                eprintln!("fastcopy: panic at {location}: {info}\n{backtrace}")
            }
            _ => eprintln!("fastcopy: panic at {location}: {info}"),
        }
    }));
}

thread_local! {
    /// The last ERROR [`capture_error`] copied (in TopMemoryContext), or null.
    static CAPTURED: Cell<*mut pg_sys::ErrorData> = const { Cell::new(std::ptr::null_mut()) };
}

unsafe extern "C-unwind" {
    /// `ThrowErrorData`, declared here without pgrx's FFI guard: the guard would catch the
    /// error it raises and turn it into a panic again. Only [`exact`] calls it, from a frame
    /// with nothing left to drop.
    #[link_name = "ThrowErrorData"]
    fn throw_error_data(edata: *mut pg_sys::ErrorData) -> !;
}

/// Frees the captured copy, if any. Called too after fastcopy caught an ERROR on purpose
/// (a conversion error kept for the reader), so that a later error with the same text is not
/// taken for it.
pub(crate) fn clear_captured() {
    let old = CAPTURED.with(|c| c.replace(std::ptr::null_mut()));
    if !old.is_null() {
        // SAFETY: `old` came from CopyErrorData in TopMemoryContext and nothing else holds it.
        unsafe { pg_sys::FreeErrorData(old) };
    }
}

/// An error context callback: errfinish calls it for every message raised while [`exact`]
/// runs, after the callbacks of the frames inside (the load's position line among them), so
/// the copy of an ERROR holds the CONTEXT collected up to the load's edge.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn capture_error(_arg: *mut c_void) {
    // SAFETY: called by errfinish on the backend thread while an error is being raised, so
    // the error stack has the current entry CopyErrorData copies; the copy is made in
    // TopMemoryContext (not ErrorContext, which the error's handling resets).
    unsafe {
        let old = pg_sys::MemoryContextSwitchTo(pg_sys::TopMemoryContext);
        let edata = pg_sys::CopyErrorData();
        pg_sys::MemoryContextSwitchTo(old);
        if (*edata).elevel != pg_sys::PGERROR as i32 {
            pg_sys::FreeErrorData(edata);
            return;
        }
        clear_captured();
        CAPTURED.with(|c| c.set(edata));
    }
}

/// Whether the captured copy is the error pgrx caught (same SQLSTATE and message).
fn captured_matches(report: &ErrorReportWithLevel) -> Option<*mut pg_sys::ErrorData> {
    let edata = CAPTURED.with(|c| c.get());
    if edata.is_null() {
        return None;
    }
    // SAFETY: `edata` is a live copy from CopyErrorData (freed only by clear_captured).
    let (code, message) = unsafe {
        let m = (*edata).message;
        let message = (!m.is_null()).then(|| CStr::from_ptr(m).to_string_lossy().into_owned());
        ((*edata).sqlerrcode, message)
    };
    (code == report.sql_error_code() as i32 && message.as_deref() == Some(report.message()))
        .then_some(edata)
}

/// Runs `f` (a load) so that an ERROR the server raises inside it reaches the caller exactly as
/// the server raised it (see the module docs). fastcopy's own errors and panics pass as pgrx
/// reports them.
pub fn exact<T>(f: impl FnOnce() -> T) -> T {
    clear_captured();
    let mut cb = pg_sys::ErrorContextCallback {
        // SAFETY: backend thread; the callback is unlinked on every way out of this function.
        previous: unsafe { pg_sys::error_context_stack },
        callback: Some(capture_error),
        arg: std::ptr::null_mut(),
    };
    let cb_ptr: *mut pg_sys::ErrorContextCallback = &mut cb;
    // SAFETY: `cb` lives in this frame until it is unlinked below.
    unsafe { pg_sys::error_context_stack = cb_ptr };
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    // SAFETY: callbacks pushed inside `f` after `cb` are popped by now, or (the load's
    // position, left behind for an error of fastcopy's own that pgrx raises later) sit above
    // `cb` with `cb` as their `previous`: unlink `cb` wherever it is in the chain.
    unsafe { unlink_callback(cb_ptr) };
    let payload = match out {
        Ok(v) => {
            clear_captured();
            return v;
        }
        Err(payload) => payload,
    };
    let caught = match payload.downcast::<CaughtError>() {
        Ok(caught) => *caught,
        Err(other) => std::panic::resume_unwind(other),
    };
    let edata = match &caught {
        CaughtError::PostgresError(report) => captured_matches(report),
        _ => None,
    };
    let Some(edata) = edata else {
        clear_captured();
        std::panic::resume_unwind(Box::new(caught))
    };
    drop(caught);
    // The callbacks the load left for its own errors are not wanted: the copy's CONTEXT has
    // the load's lines already. What stays is the stack as it was when `exact` began.
    // SAFETY: `cb.previous` is the stack at entry, still valid (outer frames are live).
    unsafe {
        pg_sys::error_context_stack = cb.previous;
        // Nothing in this frame or the ones up to PostgreSQL's handler needs dropping. The
        // copy stays in CAPTURED, freed by the next load (or the next error captured).
        throw_error_data(edata)
    }
}

/// Removes `cb` from the error context stack, wherever it is.
///
/// # Safety
/// Backend thread; every callback in the chain above `cb` is valid.
unsafe fn unlink_callback(cb: *mut pg_sys::ErrorContextCallback) {
    // SAFETY: as the function's contract.
    unsafe {
        if pg_sys::error_context_stack == cb {
            pg_sys::error_context_stack = (*cb).previous;
            return;
        }
        let mut at = pg_sys::error_context_stack;
        while !at.is_null() {
            if (*at).previous == cb {
                (*at).previous = (*cb).previous;
                return;
            }
            at = (*at).previous;
        }
    }
}
