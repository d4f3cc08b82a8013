//! Where a load is, for the ERROR's CONTEXT line (`fastcopy.load t, line 5, column b: "abc"`,
//! COPY's shape).
//!
//! The loader moves the [`Position`] along as it goes (line, the row being loaded, column,
//! value); an error context callback reads it while PostgreSQL raises an error. As COPY's
//! `CopyFromErrorCallback`: an error about a value names the column and the value (or "null
//! input"); an error about a line shows the line's raw text while the row is being converted
//! and stored (COPY's `line_buf_valid`), and only the line number while a line is read or
//! rows are flushed. Both go through `Cell`s behind a shared
//! reference, so the callback's read never aliases a `&mut`. The pointers are NUL-terminated
//! strings that outlive the time they are set (relation name, column name, the row buffer).

use fastcopy_core::input::Row;
use pgrx::pg_sys;
use std::cell::Cell;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::marker::PhantomData;

unsafe extern "C-unwind" {
    // elog.h's errcontext() is a macro over this; bindgen does not bind it.
    fn errcontext_msg(fmt: *const c_char, ...) -> c_int;
    // ereport()'s parts (elog.h, the same in 15-18), which pgrx does not bind: a NOTICE whose
    // text holds bytes in the database encoding, formatted by the server as COPY's is.
    fn errstart(elevel: c_int, domain: *const c_char) -> bool;
    fn errmsg(fmt: *const c_char, ...) -> c_int;
    fn errfinish(filename: *const c_char, lineno: c_int, funcname: *const c_char);
}

/// COPY shows at most this many bytes of a value (`MAX_COPY_DATA_DISPLAY`).
const MAX_DISPLAY: usize = 100;

/// The raw text of the current line, when COPY would show it.
#[derive(Clone, Copy)]
enum LineText {
    None,
    /// The row being converted or stored (its raw line is rebuilt only if an error needs it).
    Row(*const Row),
    /// A line the decoder rejected while splitting it.
    Bytes(*const u8, usize),
}

/// The position the error context callback reports.
pub struct Position {
    verb: &'static CStr,
    relname: *const c_char,
    line: Cell<u64>,
    text: Cell<LineText>,
    attname: Cell<*const c_char>,
    /// The field's value, or null when the error is not about one value.
    value: Cell<*const c_char>,
    /// The value is SQL NULL (context says "null input").
    value_is_null: Cell<bool>,
    /// The context names only the relation (COPY's `relname_only`, while it reports a
    /// skipped row).
    relation_only: Cell<bool>,
    /// Binary data: COPY shows neither the line nor a value ("can't usefully display the
    /// data").
    binary: bool,
    /// No context at all (an error COPY raises before it installs its context).
    silent: Cell<bool>,
    /// Values `on_error => 'set_null'` turned into NULL so far (the loader counts the rows
    /// they are in).
    set_null: Cell<u64>,
}

impl Position {
    /// `relname` must outlive the position (it is the target's).
    pub fn new(verb: &'static CStr, relname: &CStr, binary: bool) -> Position {
        Position {
            verb,
            relname: relname.as_ptr(),
            line: Cell::new(0),
            text: Cell::new(LineText::None),
            attname: Cell::new(std::ptr::null()),
            value: Cell::new(std::ptr::null()),
            value_is_null: Cell::new(false),
            relation_only: Cell::new(false),
            binary,
            silent: Cell::new(false),
            set_null: Cell::new(0),
        }
    }

    /// The error being raised gets no context line.
    pub fn silence(&self) {
        self.silent.set(true);
    }

    /// `log_verbosity => 'verbose'`: COPY's NOTICE about the row being skipped at the current
    /// column and value, with the context naming only the relation.
    pub fn notice_skipped_row(&self) {
        self.notice_at_value(
            c"skipping row due to data type incompatibility at line %llu for column \"%s\": \"%s\"",
            c"skipping row due to data type incompatibility at line %llu for column \"%s\": null input",
        );
    }

    /// `on_error => 'set_null'` made the current value NULL: counted, and with
    /// `log_verbosity => 'verbose'` PostgreSQL 19's NOTICE about it (context as for a skipped
    /// row; set_null never turns a NULL input into NULL, so the value is there).
    pub fn value_set_null(&self, verbose: bool) {
        self.set_null.set(self.set_null.get() + 1);
        if verbose {
            self.notice_at_value(
                c"setting to null due to data type incompatibility at line %llu for column \"%s\": \"%s\"",
                c"setting to null due to data type incompatibility at line %llu for column \"%s\": null input",
            );
        }
    }

    /// The column the position is at (null when none): the name of a `Column` of the target.
    pub fn column_ptr(&self) -> *const c_char {
        self.attname.get()
    }

    /// Values `value_set_null` counted so far.
    pub fn values_set_null(&self) -> u64 {
        self.set_null.get()
    }

    /// A NOTICE about the current line, column and value: `with_value`'s format (line, column,
    /// value) or `null_input`'s (line, column) for a NULL field.
    fn notice_at_value(&self, with_value: &CStr, null_input: &CStr) {
        let line = self.line.get() as std::ffi::c_ulonglong;
        // the bytes as they are in the database encoding, as COPY prints them (no NUL: both
        // come from C strings)
        let column = CString::new(shown(self.attname.get())).unwrap_or_default();
        let value = (!self.value_is_null.get() && !self.value.get().is_null())
            .then(|| CString::new(shown(self.value.get())).unwrap_or_default());
        self.relation_only.set(true);
        // SAFETY: backend thread; a NOTICE returns from errfinish (no longjmp); the format's
        // arguments are an integer and NUL-terminated strings alive for the call, as many as
        // each format takes.
        unsafe {
            if errstart(pg_sys::NOTICE as c_int, std::ptr::null()) {
                match &value {
                    None => errmsg(null_input.as_ptr(), line, column.as_ptr()),
                    Some(v) => errmsg(with_value.as_ptr(), line, column.as_ptr(), v.as_ptr()),
                };
                errfinish(
                    c"position.rs".as_ptr(),
                    line!() as c_int,
                    c"notice_at_value".as_ptr(),
                );
            }
        }
        self.relation_only.set(false);
    }

    /// At a line whose text is not shown (reading it, or flushing its row).
    #[inline]
    pub fn at_line(&self, line: u64) {
        self.line.set(line);
        self.text.set(LineText::None);
        self.clear_column();
    }

    /// At the row being converted and stored: its raw line is shown. `row` must stay alive and
    /// unchanged while the position points to it (the row block outlives the context guard).
    #[inline]
    pub fn at_row(&self, row: &Row) {
        self.at_row_numbered(row, row.line_no());
    }

    /// As [`at_row`](Self::at_row), with the row's line number given (the row is not read).
    #[inline]
    pub fn at_row_numbered(&self, row: &Row, line: u64) {
        self.line.set(line);
        self.text.set(LineText::Row(row));
        self.clear_column();
    }

    /// Still at the current line, its text no longer shown (COPY while it flushes rows).
    #[inline]
    pub fn hide_text(&self) {
        self.text.set(LineText::None);
        self.clear_column();
    }

    /// At a line the decoder rejected, shown as `raw` (which outlives the position's use).
    pub fn at_line_text(&self, line: u64, raw: &[u8]) {
        self.line.set(line);
        self.text.set(LineText::Bytes(raw.as_ptr(), raw.len()));
        self.clear_column();
    }

    /// At a column (`name` outlives the load), its value not known yet.
    #[inline]
    pub fn at_column(&self, name: *const c_char) {
        self.attname.set(name);
        self.clear_value();
    }

    /// At the column's value (NUL-terminated, in the row buffer).
    #[inline]
    pub fn at_value(&self, value: *const c_char) {
        self.value.set(value);
        self.value_is_null.set(false);
    }

    /// At the column's value, which is NULL.
    #[inline]
    pub fn at_null(&self) {
        self.value.set(std::ptr::null());
        self.value_is_null.set(true);
    }

    #[inline]
    pub fn clear_value(&self) {
        self.value.set(std::ptr::null());
        self.value_is_null.set(false);
    }

    #[inline]
    pub fn clear_column(&self) {
        self.attname.set(std::ptr::null());
        self.clear_value();
    }

    /// The CONTEXT line, in COPY's shape (`None`: none), as bytes in the database encoding
    /// (names and data are shown as they are, as COPY shows them).
    fn describe(&self) -> Option<Vec<u8>> {
        if self.silent.get() {
            return None;
        }
        let mut out = self.verb.to_bytes().to_vec();
        out.push(b' ');
        out.extend(shown(self.relname));
        if self.relation_only.get() {
            return Some(out);
        }
        out.extend(format!(", line {}", self.line.get()).bytes());
        let attname = self.attname.get();
        if attname.is_null() {
            // SAFETY: the row or bytes are alive while the position points to them (at_row,
            // at_line_text).
            let text = unsafe {
                match self.text.get() {
                    _ if self.binary => None,
                    LineText::None => None,
                    LineText::Row(row) => Some((*row).raw_line().into_owned()),
                    LineText::Bytes(p, n) => Some(std::slice::from_raw_parts(p, n).to_vec()),
                }
            };
            if let Some(t) = text {
                out.extend(b": \"");
                out.extend(limited(&t));
                out.push(b'"');
            }
            return Some(out);
        }
        out.extend(b", column ");
        out.extend(shown(attname));
        if self.binary {
            // COPY "can't usefully display the data"
        } else if self.value_is_null.get() {
            out.extend(b": null input");
        } else if !self.value.get().is_null() {
            out.extend(b": \"");
            out.extend(shown(self.value.get()));
            out.push(b'"');
        }
        Some(out)
    }
}

/// Installs the error context callback for a position, for the lifetime of the guard.
pub struct ContextGuard<'p> {
    cb: Box<pg_sys::ErrorContextCallback>,
    _pos: PhantomData<&'p Position>,
}

impl<'p> ContextGuard<'p> {
    pub fn push(pos: &'p Position) -> ContextGuard<'p> {
        // SAFETY: backend thread. The callback reads `pos` through a shared reference; the
        // guard borrows `pos` for its whole life and unlinks the callback when dropped.
        unsafe {
            let mut cb = Box::new(pg_sys::ErrorContextCallback {
                previous: pg_sys::error_context_stack,
                callback: Some(error_context),
                arg: pos as *const Position as *mut c_void,
            });
            pg_sys::error_context_stack = cb.as_mut();
            ContextGuard {
                cb,
                _pos: PhantomData,
            }
        }
    }
}

impl Drop for ContextGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: backend thread; `self.cb` is the top of the stack when it is ours to pop
        // (checked), and `arg` still points to the borrowed position.
        unsafe {
            if !std::ptr::eq(pg_sys::error_context_stack, self.cb.as_mut()) {
                return;
            }
            pg_sys::error_context_stack = self.cb.previous;
            if std::thread::panicking() {
                // An ERROR of fastcopy's own is unwinding the load: pgrx raises it only after
                // every Rust frame is gone, so leave behind a callback with a copy of the
                // position, allocated in the (sub)transaction's memory. PostgreSQL restores the
                // context stack when it handles the error, and frees the copy when the
                // transaction aborts. (A server error carries its CONTEXT already, and
                // `error::exact` throws it without this callback.)
                let pos = &*(self.cb.arg as *const Position);
                let Some(msg) = pos.describe() else {
                    return;
                };
                let msg = c_string(msg);
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

fn shown(p: *const c_char) -> Vec<u8> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: every pointer the position holds is a NUL-terminated string that is alive while
    // it is set (see the module docs).
    limited(unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// At most `MAX_DISPLAY` bytes, cut at a character boundary of the database encoding, "..."
/// after a cut (COPY's `CopyLimitPrintoutLength`, with `pg_mbcliplen`).
fn limited(bytes: &[u8]) -> Vec<u8> {
    if bytes.len() <= MAX_DISPLAY {
        return bytes.to_vec();
    }
    // SAFETY: backend thread (the error context callback, or the load's own frames); reads
    // at most `len` bytes of the slice.
    let n = unsafe {
        pg_sys::pg_mbcliplen(
            bytes.as_ptr() as *const c_char,
            bytes.len() as i32,
            MAX_DISPLAY as i32,
        )
    };
    let mut v = bytes[..(n.max(0) as usize).min(bytes.len())].to_vec();
    v.extend(b"...");
    v
}

/// The bytes as a C string (a NUL in them, which names and values never hold, dropped).
fn c_string(mut bytes: Vec<u8>) -> std::ffi::CString {
    bytes.retain(|&b| b != 0);
    std::ffi::CString::new(bytes).expect("no NUL left")
}

/// # Safety
/// Called from an error context callback (errfinish is collecting the context).
unsafe fn add_context(msg: *const c_char) {
    // SAFETY: as the function's contract; `msg` is NUL-terminated and "%s" consumes it.
    unsafe {
        pg_sys::set_errcontext_domain(c"fastcopy".as_ptr());
        errcontext_msg(c"%s".as_ptr(), msg);
    }
}

/// While the load runs: describe where it is now.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn error_context(arg: *mut c_void) {
    // SAFETY: `arg` is the position a live ContextGuard borrows.
    let pos = unsafe { &*(arg as *const Position) };
    let Some(msg) = pos.describe() else {
        return;
    };
    let msg = c_string(msg);
    // SAFETY: called by errfinish.
    unsafe { add_context(msg.as_ptr()) }
}

/// After the load's frames are gone: the position copied when the ERROR passed.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn fixed_error_context(arg: *mut c_void) {
    // SAFETY: called by errfinish; `arg` is the string copied in transaction memory.
    unsafe { add_context(arg as *const c_char) }
}
