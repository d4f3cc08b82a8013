//! `pg_stat_progress_copy` for one load, as COPY reports it: the command, the source type,
//! bytes total and processed, tuples processed, the rows `on_error` skipped and the rows the
//! WHERE condition excluded.

use crate::compat;
use pgrx::pg_sys;
use std::ffi::c_int;

/// Where the rows come from, as the view's `type` column says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// A server file (`FILE`).
    File,
    /// Data handed over by the caller (`CALLBACK`: `load_data`'s value).
    Callback,
    /// A client's `COPY … FROM STDIN` (`PIPE`).
    Pipe,
}

/// Reports while alive; ends when dropped.
pub struct Progress {
    skipped: std::cell::Cell<u64>,
    excluded: std::cell::Cell<u64>,
}

impl Progress {
    pub fn start(relid: pg_sys::Oid, kind: SourceKind, bytes_total: Option<u64>) -> Progress {
        let kind = match kind {
            SourceKind::File => pg_sys::PROGRESS_COPY_TYPE_FILE,
            SourceKind::Callback => pg_sys::PROGRESS_COPY_TYPE_CALLBACK,
            SourceKind::Pipe => pg_sys::PROGRESS_COPY_TYPE_PIPE,
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
        // SAFETY: backend thread; the arrays hold 3 entries each.
        unsafe {
            pg_sys::pgstat_progress_start_command(
                pg_sys::ProgressCommandType::PROGRESS_COMMAND_COPY,
                relid,
            );
            pg_sys::pgstat_progress_update_multi_param(3, index.as_ptr(), value.as_ptr());
        }
        Progress {
            skipped: std::cell::Cell::new(0),
            excluded: std::cell::Cell::new(0),
        }
    }

    #[inline]
    pub fn update(&self, bytes: u64, tuples: u64) {
        let index = [
            pg_sys::PROGRESS_COPY_BYTES_PROCESSED as c_int,
            pg_sys::PROGRESS_COPY_TUPLES_PROCESSED as c_int,
        ];
        let value = [bytes as i64, tuples as i64];
        // SAFETY: backend thread, a progress command is running; 2 entries each.
        unsafe { pg_sys::pgstat_progress_update_multi_param(2, index.as_ptr(), value.as_ptr()) }
    }

    /// Rows skipped by `on_error => 'ignore'` (see `compat::PROGRESS_SKIPPED`).
    pub fn skipped(&self, rows: u64) {
        self.skipped.set(rows);
        self.report_dropped(compat::PROGRESS_SKIPPED);
    }

    /// Rows the WHERE condition excluded (`tuples_excluded`).
    pub fn excluded(&self, rows: u64) {
        self.excluded.set(rows);
        self.report_dropped(pg_sys::PROGRESS_COPY_TUPLES_EXCLUDED as c_int);
    }

    /// One of the two counters (`param`); on 15/16, where both are `tuples_excluded`, their
    /// sum.
    fn report_dropped(&self, param: c_int) {
        let shared = compat::PROGRESS_SKIPPED == pg_sys::PROGRESS_COPY_TUPLES_EXCLUDED as c_int;
        let value = if shared {
            self.skipped.get() + self.excluded.get()
        } else if param == compat::PROGRESS_SKIPPED {
            self.skipped.get()
        } else {
            self.excluded.get()
        };
        // SAFETY: backend thread, a progress command is running.
        unsafe { pg_sys::pgstat_progress_update_param(param, value as i64) }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // SAFETY: backend thread; ends the command `start` began.
        unsafe { pg_sys::pgstat_progress_end_command() }
    }
}
