//! Where a load is, for the ERROR's CONTEXT line (`fastcopy.load t, line 5, column b: "abc"`),
//! and for `pg_stat_progress_copy`.

use pgrx::pg_sys;
use std::ffi::{CStr, c_char, c_int, c_void};

unsafe extern "C-unwind" {
    // elog.h's errcontext() is a macro over this; bindgen does not bind it.
    fn errcontext_msg(fmt: *const c_char, ...) -> c_int;
}

/// COPY shows at most this many bytes of a value (`MAX_COPY_DATA_DISPLAY`).
const MAX_DISPLAY: usize = 100;

/// The position the error context callback reports. The pointers are NUL-terminated strings
/// that outlive the time they are set here (relation name, column name, the row buffer).
pub struct Position {
    pub verb: &'static CStr,
    pub relname: *const c_char,
    pub line: u64,
    pub attname: *const c_char,
    /// The field's value, or null when the error is not about one value.
    pub value: *const c_char,
    /// The value is SQL NULL (context says "null input").
    pub value_is_null: bool,
}

impl Position {
    #[inline]
    pub fn at_line(&mut self, line: u64) {
        self.line = line;
        self.attname = std::ptr::null();
        self.value = std::ptr::null();
        self.value_is_null = false;
    }
}

/// Installs the callback for the lifetime of the guard.
pub struct ContextGuard {
    cb: Box<pg_sys::ErrorContextCallback>,
}

impl ContextGuard {
    /// # Safety
    /// `pos` must stay valid and at the same address until the guard is dropped.
    pub unsafe fn push(pos: *mut Position) -> ContextGuard {
        unsafe {
            let mut cb = Box::new(pg_sys::ErrorContextCallback {
                previous: pg_sys::error_context_stack,
                callback: Some(error_context),
                arg: pos as *mut c_void,
            });
            pg_sys::error_context_stack = cb.as_mut();
            ContextGuard { cb }
        }
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        unsafe {
            if pg_sys::error_context_stack != self.cb.as_mut() as *mut _ {
                return;
            }
            pg_sys::error_context_stack = self.cb.previous;
            if std::thread::panicking() {
                // An ERROR is unwinding through the load. pgrx raises it again only after every
                // Rust frame is gone, so leave behind a callback with a copy of the position,
                // allocated in the (sub)transaction's memory: PostgreSQL restores the context
                // stack when it handles the error, and frees the copy when the transaction aborts.
                let pos = &*(self.cb.arg as *const Position);
                let msg = std::ffi::CString::new(describe(pos).replace('\0', "")).unwrap();
                let cx = pg_sys::CurTransactionContext;
                let copy = pg_sys::MemoryContextStrdup(cx, msg.as_ptr());
                let cb =
                    pg_sys::MemoryContextAllocZero(cx, size_of::<pg_sys::ErrorContextCallback>())
                        as *mut pg_sys::ErrorContextCallback;
                (*cb).previous = pg_sys::error_context_stack;
                (*cb).callback = Some(fixed_error_context);
                (*cb).arg = copy as *mut c_void;
                pg_sys::error_context_stack = cb;
            }
        }
    }
}

fn shown(p: *const c_char) -> String {
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy();
    if s.len() <= MAX_DISPLAY {
        return s.into_owned();
    }
    let mut end = MAX_DISPLAY;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// The CONTEXT line for a position, in COPY's shape.
fn describe(pos: &Position) -> String {
    let verb = pos.verb.to_string_lossy();
    let rel = shown(pos.relname);
    if pos.attname.is_null() {
        format!("{verb} {rel}, line {}", pos.line)
    } else if pos.value_is_null {
        format!(
            "{verb} {rel}, line {}, column {}: null input",
            pos.line,
            shown(pos.attname)
        )
    } else if pos.value.is_null() {
        format!(
            "{verb} {rel}, line {}, column {}",
            pos.line,
            shown(pos.attname)
        )
    } else {
        format!(
            "{verb} {rel}, line {}, column {}: \"{}\"",
            pos.line,
            shown(pos.attname),
            shown(pos.value)
        )
    }
}

unsafe fn add_context(msg: *const c_char) {
    unsafe {
        pg_sys::set_errcontext_domain(c"fastcopy".as_ptr());
        errcontext_msg(c"%s".as_ptr(), msg);
    }
}

/// While the load runs: describe where it is now.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn error_context(arg: *mut c_void) {
    let pos = unsafe { &*(arg as *const Position) };
    let msg = std::ffi::CString::new(describe(pos).replace('\0', "")).unwrap();
    unsafe { add_context(msg.as_ptr()) }
}

/// After the load's frames are gone: the position copied when the ERROR passed.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn fixed_error_context(arg: *mut c_void) {
    unsafe { add_context(arg as *const c_char) }
}

/// `pg_stat_progress_copy` for one load; ends when dropped.
pub struct Progress;

impl Progress {
    pub fn start(relid: pg_sys::Oid, from_file: bool, bytes_total: Option<u64>) -> Progress {
        unsafe {
            pg_sys::pgstat_progress_start_command(
                pg_sys::ProgressCommandType::PROGRESS_COMMAND_COPY,
                relid,
            );
            let kind = if from_file {
                pg_sys::PROGRESS_COPY_TYPE_FILE
            } else {
                pg_sys::PROGRESS_COPY_TYPE_CALLBACK
            };
            let index = [
                pg_sys::PROGRESS_COPY_COMMAND as c_int,
                pg_sys::PROGRESS_COPY_TYPE as c_int,
                pg_sys::PROGRESS_COPY_BYTES_TOTAL as c_int,
            ];
            let value = [
                pg_sys::PROGRESS_COPY_COMMAND_FROM as i64,
                kind as i64,
                bytes_total.unwrap_or(0) as i64,
            ];
            pg_sys::pgstat_progress_update_multi_param(3, index.as_ptr(), value.as_ptr());
        }
        Progress
    }

    #[inline]
    pub fn update(&self, bytes: u64, tuples: u64) {
        unsafe {
            let index = [
                pg_sys::PROGRESS_COPY_BYTES_PROCESSED as c_int,
                pg_sys::PROGRESS_COPY_TUPLES_PROCESSED as c_int,
            ];
            let value = [bytes as i64, tuples as i64];
            pg_sys::pgstat_progress_update_multi_param(2, index.as_ptr(), value.as_ptr());
        }
    }
}

impl Progress {
    /// Rows skipped by `on_error => 'ignore'` (see `compat::PROGRESS_SKIPPED`).
    pub fn skipped(&self, rows: u64) {
        unsafe {
            pg_sys::pgstat_progress_update_param(crate::compat::PROGRESS_SKIPPED, rows as i64)
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        unsafe { pg_sys::pgstat_progress_end_command() }
    }
}
