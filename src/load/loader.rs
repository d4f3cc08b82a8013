//! The row loop of one load: [`Loader`] takes the row blocks the decoder produced, converts
//! each row, stores it in the batch, and is the one place that decides when the batch is
//! flushed. It owns the batch and the counters; the target, the error position and the
//! progress report are lent to it by `run`.

use super::batch::Batch;
use super::batch::Stored;
use super::columns::{Converters, TextConverter};
use super::common::{LoadStats, interrupt_pending};
use super::convert::{self, OnError, Values};
use super::position::Position;
use super::progress::Progress;
use super::rejects::{RejectError, Rejects};
use super::spec::{LoadSpec, LogVerbosity, OnErrorChoice};
use super::target::Target;
use crate::compat;
use crate::error::{raise, raise_hint};
use crate::guc;
use fastcopy_core::input::InputError;
use fastcopy_core::pipeline::RowBlock;
use pgrx::prelude::*;

/// How many rows ahead of the one it loads the loader asks for a row's fields to be brought
/// into the cache ([`RowBlock::prefetch`]): far enough that the other core's cache has answered
/// by the time the row's turn comes (a row that is not formed takes the backend a few hundred
/// nanoseconds), near enough that the row is still in the cache then.
const PREFETCH_AHEAD: usize = 8;

pub struct Loader<'a> {
    target: &'a Target,
    pos: &'a Position,
    progress: &'a Progress,
    batch: Batch,
    stats: LoadStats,
    on_error: OnError,
    log_verbosity: LogVerbosity,
    reject_limit: Option<u64>,
    reject_ratio: Option<f64>,
    values: Values,
    /// `OnError::Rollback`: the row after the one being loaded, where a run resumes after a
    /// rejected value rolled its subtransaction back.
    resume: usize,
    /// Rows whose tuple the reader formed go in by runs ([`Batch::takes_formed_runs`]).
    formed_runs: bool,
    /// The rejects table, if the load keeps one: skipped rows go there.
    rejects: Option<Rejects>,
    /// The row being skipped has the wrong number of fields (no value to tell about in
    /// `log_verbosity` verbose's NOTICE).
    skipping_structure: bool,
    /// Rows on the short path that fail their constraint checks are kept as rejects: runs of
    /// rows go in a subtransaction, as for `OnError::Rollback`.
    guard_checks: bool,
    /// The last row offset computed (`row_offset`): the block's first offset, the row, its
    /// offset; the next reject of the same block adds up from there.
    offset_at: (Option<u64>, usize, u64),
}

impl<'a> Loader<'a> {
    pub fn new(
        target: &'a Target,
        spec: &LoadSpec,
        pos: &'a Position,
        progress: &'a Progress,
    ) -> Loader<'a> {
        let batch = Batch::new(
            target,
            guc::max_buffered_tuples(),
            guc::max_buffered_bytes(),
        );
        Loader {
            target,
            pos,
            progress,
            formed_runs: batch.takes_formed_runs(target),
            batch,
            stats: LoadStats::default(),
            on_error: choose_on_error(spec.on_error, spec, target),
            log_verbosity: spec.log_verbosity,
            reject_limit: spec.reject_limit,
            reject_ratio: spec.reject_ratio,
            values: Values::new(target.cols.natts),
            resume: 0,
            rejects: None,
            skipping_structure: false,
            guard_checks: false,
            offset_at: (None, 0, 0),
        }
    }

    /// Rows this load skips go to `rejects` (with their errors), and so do rows with too few
    /// or too many fields, which are skipped instead of ending the load.
    /// So are rows that fail their NOT NULL, CHECK or partition constraint (checked before the
    /// insert, as COPY checks them): on the short path by running the rows in subtransactions
    /// (one per run of rows, as `OnError::Rollback`), on the executor path each failing row's
    /// checks in one of their own.
    pub fn keep_rejects(&mut self, rejects: Rejects) {
        self.rejects = Some(rejects);
        self.guard_checks = self.target.short_path && self.batch.checks_rows();
        self.batch.keep_failed_checks();
    }

    /// Loads every row of `block`; true once the input has ended (after this block's rows).
    /// Raises the error that stopped the decoder, in input order.
    pub fn load_block(&mut self, block: &RowBlock) -> bool {
        let mut next = 0;
        while next < block.rows().len() {
            let (at, full) = match self.on_error {
                OnError::Rollback => self.load_run_guarded(block, next),
                _ if self.guard_checks => self.load_run_guarded(block, next),
                _ => self.load_run(block, next),
            };
            if full {
                self.flush();
            }
            next = at;
        }
        self.progress
            .update(block.bytes_read, self.stats.rows_loaded);
        if let Some(rejects) = &mut self.rejects {
            rejects.flush_if_full();
        }
        pgrx::check_for_interrupts!();
        match &block.end {
            None => false,
            Some(Ok(())) => {
                self.stats.bytes_read = block.bytes_read;
                true
            }
            Some(Err(e))
                if self.rejects.is_some()
                    && matches!(
                        e.kind,
                        fastcopy_core::input::InputErrorKind::UnterminatedCsvQuote
                    ) =>
            {
                // a CSV quote left open runs to the end of the input: with a rejects table
                // that last row is kept as a reject, and the load ends there
                let error = RejectError {
                    sqlstate: e.sqlstate().to_string(),
                    message: e.message(),
                    detail: None,
                };
                let offset = block.end_offset.filter(|_| self.offsets_known());
                if let Some(rejects) = &mut self.rejects {
                    let raw = e.raw_line.as_deref().unwrap_or_default();
                    rejects.record("skipped", e.line, offset, None, None, raw, error);
                }
                self.skipping_structure = true;
                self.skip_row();
                self.stats.bytes_read = block.bytes_read;
                true
            }
            Some(Err(e)) => {
                match (&e.partial, &self.target.cols.converters) {
                    (Some(partial), Converters::Text(_)) => {
                        // a bad escaped field: the server checks the DEFAULT markers of the
                        // fields before it first, as it splits the line
                        self.pos
                            .at_line_text(e.line, e.raw_line.as_deref().unwrap_or_default());
                        convert::check_default_markers(&self.target.cols, partial);
                    }
                    (Some(partial), Converters::Binary(receives)) => {
                        // the server converts a tuple's fields as it reads them: those before
                        // the defect first
                        let Values { datums, nulls } = &mut self.values;
                        convert::convert_binary_row(
                            &self.target.cols,
                            receives,
                            partial,
                            &[],
                            partial.len(),
                            datums,
                            nulls,
                            self.pos,
                        );
                    }
                    (None, _) => {}
                }
                raise_input_error(e, self.pos, self.target)
            }
        }
    }

    /// Inserts the last rows and ends the bulk insert; what the load did.
    pub fn finish(mut self) -> LoadStats {
        self.flush();
        if let Some(rejects) = &mut self.rejects {
            rejects.flush();
        }
        self.check_reject_ratio();
        self.progress
            .update(self.stats.bytes_read, self.stats.rows_loaded);
        self.batch.finish(self.target);
        let mut stats = self.stats;
        stats.load_id = self.rejects.as_ref().map(Rejects::load_id);
        stats.rows_rejected = self.rejects.as_ref().map(Rejects::recorded);
        stats.flushes = self.batch.flushes;
        stats.pages_extended = self.batch.pages_extended;
        stats.extend_calls = self.batch.extend_calls;
        stats
    }

    /// The only place a batch is flushed.
    fn flush(&mut self) {
        self.batch.flush(self.target, self.pos);
        // (a foreign table's FDW may decline a row: COPY does not count it)
        self.stats.rows_loaded -= self.batch.take_not_inserted();
    }

    /// Loads the rows of `block` from `from` on, until the batch is full or the block ends;
    /// returns where it stopped and whether the batch is full.
    #[inline]
    fn load_run(&mut self, block: &RowBlock, from: usize) -> (usize, bool) {
        let rows = block.rows();
        let mut r = from;
        while r < rows.len() {
            if self.formed_runs && block.tuple(r).is_some() {
                let (next, full) = self.load_formed_run(block, r);
                if full || next == rows.len() {
                    return (next, full);
                }
                r = next;
            }
            self.resume = r + 1;
            let stored = self.load_row(block, r);
            // COPY checks for a cancel once per row, at the row it has just stored
            if interrupt_pending() {
                self.pos.at_row(&rows[r]);
                pgrx::check_for_interrupts!();
            }
            r += 1;
            match stored {
                None => {
                    self.skip_row();
                    if self.batch.drop_row(rows[r - 1].raw_len()) {
                        return (r, true);
                    }
                }
                Some(Stored::SkippedByTrigger) => {
                    if self.batch.drop_row(rows[r - 1].raw_len()) {
                        return (r, true);
                    }
                }
                Some(Stored::Excluded) => {
                    self.stats.rows_excluded += 1;
                    self.progress.excluded(self.stats.rows_excluded);
                    if self.batch.drop_row(rows[r - 1].raw_len()) {
                        return (r, true);
                    }
                }
                Some(Stored::FailedCheck) => {
                    let failed = self.batch.take_failed_check();
                    let failed = failed.expect("a failed check is kept with its row");
                    self.record_failed_check(block, r - 1, failed.error, failed.column);
                    if self.batch.drop_row(rows[r - 1].raw_len()) {
                        return (r, true);
                    }
                }
                Some(Stored::Buffered | Stored::Instead) => self.stats.rows_loaded += 1,
                Some(Stored::Full) => {
                    self.stats.rows_loaded += 1;
                    return (r, true);
                }
            }
        }
        (r, false)
    }

    /// A run of rows whose tuples the reader formed, from `from` on ([`Batch::store_formed_run`]:
    /// the per-row steps of `load_row` and `load_run` that are the same for every such row done
    /// once for the run); at least one row. Returns as `load_run`.
    #[inline(never)]
    fn load_formed_run(&mut self, block: &RowBlock, from: usize) -> (usize, bool) {
        let (rows, pos) = (block.rows(), self.pos);
        // COPY checks for a cancel once per row, at the row it has just stored
        let at_interrupt = |r: usize| {
            pos.at_row_numbered(&rows[r], block.mark(r).line_no);
            pgrx::check_for_interrupts!();
        };
        // SAFETY: `formed_runs` is `takes_formed_runs` of this batch; the block's tuples are
        // of the target's plan (the reader forms them only for it).
        let (next, full) = unsafe {
            self.batch
                .store_formed_run(self.target, block, from, at_interrupt)
        };
        debug_assert!(next > from);
        self.stats.rows_loaded += (next - from) as u64;
        self.resume = next;
        // at the run's last row, as after `load_row`
        pos.at_row_numbered(&rows[next - 1], block.mark(next - 1).line_no);
        (next, full)
    }

    /// A run of rows in one subtransaction: `OnError::Rollback` (15), and a short-path load
    /// that keeps rows failing their constraints as rejects (`guard_checks`). A value an input
    /// function rejects (`Rollback`), or a row's failed constraint check (`guard_checks`),
    /// rolls it back (the rows before it stay buffered: their values are in the batch memory)
    /// and skips its row; the next run starts after it. Only data errors count, as only soft
    /// errors do in COPY 17: a cancel, a timeout or an out-of-memory raised inside an input
    /// function still stops the load.
    fn load_run_guarded(&mut self, block: &RowBlock, from: usize) -> (usize, bool) {
        let run =
            compat::in_subtransaction(std::panic::AssertUnwindSafe(|| self.load_run(block, from)));
        let e = match run {
            Ok(done) => return done,
            Err(e) => e,
        };
        let (input, check) = (compat::input_failed(), compat::check_failed());
        let r = self.resume - 1;
        if !compat::is_data_error(&e) {
            e.rethrow()
        } else if check && self.guard_checks {
            // SAFETY: the row's tuple failed its checks in buffer 0 (the short path's), as
            // the last row stored; formed in the batch memory, which the slot does not own.
            let column = unsafe { self.batch.failed_row(0, false) };
            self.record_failed_check(block, r, e, column);
        } else if input && self.on_error == OnError::Rollback {
            if self.rejects.is_some() {
                self.record_reject(block, r, reject_error(e));
            }
            self.skip_row();
        } else {
            e.rethrow()
        }
        let full = self.batch.drop_row(block.rows()[r].raw_len());
        (self.resume, full)
    }

    /// Converts and stores row `r`: `None` when `on_error` skips it.
    #[inline]
    fn load_row(&mut self, block: &RowBlock, r: usize) -> Option<Stored> {
        let (target, pos) = (self.target, self.pos);
        let row = &block.rows()[r];
        if let Some(formed) = block.tuple(r) {
            // the reader formed the tuple: every column an int field that converted (the row
            // itself is not read: its number and length come from the block's marks)
            let mark = block.mark(r);
            pos.at_row_numbered(row, mark.line_no);
            // SAFETY: the short path's target (the reader forms tuples only for it), a tuple
            // of its former's plan.
            return Some(unsafe { self.batch.store_formed(target, formed, mark) });
        }
        // a row that is read here: the one a few ahead into the cache now, so that it is there
        // when its turn comes (not for formed rows, whose loop is a few nanoseconds a row)
        block.prefetch(r, PREFETCH_AHEAD);
        if self.rejects.is_some() && !target.cols.binary() && self.bad_structure(block, r) {
            return None;
        }
        let set_null_before = pos.values_set_null();
        match &target.cols.converters {
            Converters::Binary(receives) => {
                let Values { datums, nulls } = &mut self.values;
                convert::convert_binary_row(
                    &target.cols,
                    receives,
                    row,
                    block.ints(r),
                    row.len(),
                    datums,
                    nulls,
                    pos,
                );
            }
            Converters::Text(converters) => {
                let Values { datums, nulls } = &mut self.values;
                if !convert::convert_row(
                    &target.cols,
                    converters,
                    row,
                    block.ints(r),
                    datums,
                    nulls,
                    self.on_error,
                    pos,
                    &mut self.batch.arena,
                ) {
                    if self.rejects.is_some() {
                        self.capture_reject(block, r, converters);
                    }
                    return None;
                }
            }
        }
        if pos.values_set_null() != set_null_before {
            // PostgreSQL 19 counts rows, not values
            self.stats.rows_set_null += 1;
            if self.rejects.is_some() {
                self.record_nulled(block, r);
            }
        }
        if let Some(filter) = &target.filter
            && !filter.passes(&self.values.datums, &self.values.nulls)
        {
            return Some(Stored::Excluded);
        }
        if target.short_path {
            // SAFETY: the short path's target; the values were just converted.
            return Some(unsafe { self.batch.store_short(target, &self.values, row.mark()) });
        }
        Some(self.load_routed(row))
    }

    /// The executor path of a converted row. Out of line, as everything that calls
    /// PostgreSQL per row but is not on the short path: pgrx's FFI guard looks up a
    /// thread-local on every call, and inlined into the row loop that lookup was hoisted to
    /// the loop's entry, paid on every row of every table (A/B on 17: 8% on ints10m).
    #[inline(never)]
    fn load_routed(&mut self, row: &fastcopy_core::input::Row) -> Stored {
        let (target, pos) = (self.target, self.pos);
        if target.instead_row {
            // SAFETY: the target is a view with an INSTEAD OF INSERT row trigger; the values
            // were just converted.
            return unsafe { self.batch.store_instead(target, &self.values) };
        }
        // SAFETY: the executor path's target; the values were just converted.
        let (b, staged) = unsafe { self.batch.stage_routed(target, &self.values) };
        if self.batch.must_flush_before(b) {
            // the rows before this one are visible to its triggers, as in COPY
            self.flush();
            pos.at_row(row);
        }
        // SAFETY: staged just now; the only flush in between is the one asked for.
        unsafe { self.batch.finish_routed(target, staged, row) }
    }

    /// Counts a row `on_error => 'ignore'` skipped, here and in the progress view; with
    /// `log_verbosity` verbose, COPY's NOTICE about it; past `reject_limit`, COPY 18's ERROR
    /// (at the rejected value, as COPY's context shows it).
    #[inline(never)]
    fn skip_row(&mut self) {
        self.stats.rows_skipped += 1;
        if self.log_verbosity == LogVerbosity::Verbose && !self.skipping_structure {
            self.pos.notice_skipped_row();
        }
        self.skipping_structure = false;
        self.progress.skipped(self.stats.rows_skipped);
        if let Some(limit) = self.reject_limit
            && self.stats.rows_skipped > limit
        {
            raise(
                PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
                format!(
                    "skipped more than REJECT_LIMIT ({limit}) rows due to data type incompatibility"
                ),
            );
        }
    }
}

impl Loader<'_> {
    /// REJECT_RATIO, at the end of the load: more than that share of the rows read skipped
    /// fails it (as REJECT_LIMIT's error, 22P02).
    fn check_reject_ratio(&self) {
        let Some(ratio) = self.reject_ratio else {
            return;
        };
        let s = &self.stats;
        let read = s.rows_loaded + s.rows_skipped + s.rows_excluded;
        if s.rows_skipped as f64 > ratio * read as f64 {
            crate::error::raise_detail(
                PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
                format!(
                    "skipped more than REJECT_RATIO ({ratio}) of the rows read due to data type incompatibility"
                ),
                format!("{} of {read} rows were skipped.", s.rows_skipped),
            );
        }
    }

    /// With a rejects table: row `r` is a line invalid in the input's encoding (22021), or has
    /// fewer or more fields than there are columns, which COPY raises (22P04) before it
    /// converts anything; kept as a reject, with COPY's message.
    #[inline(never)]
    fn bad_structure(&mut self, block: &RowBlock, r: usize) -> bool {
        let (target, row) = (self.target, &block.rows()[r]);
        let ncols = target.cols.columns.len();
        let (sqlstate, message) = if let Some(message) = row.invalid() {
            ("22021", message.to_string())
        } else if (ncols > 0 && row.len() > ncols) || (ncols == 0 && row.line_len() != 0) {
            ("22P04", "extra data after last expected column".to_string())
        } else if row.len() < ncols {
            (
                "22P04",
                format!(
                    "missing data for column \"{}\"",
                    target.cols.columns[row.len()].name.to_string_lossy()
                ),
            )
        } else {
            return false;
        };
        let error = RejectError {
            sqlstate: sqlstate.into(),
            message,
            detail: None,
        };
        let offset = self.row_offset(block, r);
        if let Some(rejects) = &mut self.rejects {
            rejects.record(
                "skipped",
                row.line_no(),
                offset,
                None,
                None,
                &row.raw_line(),
                error,
            );
        }
        self.skipping_structure = true;
        true
    }

    /// With a rejects table: row `r` did not convert; its conversion is done again with
    /// errors raised, in a subtransaction, and the error COPY would raise for it is kept with
    /// the row (the column the position is at when it is raised).
    #[inline(never)]
    fn capture_reject(&mut self, block: &RowBlock, r: usize, converters: &[TextConverter]) {
        let (target, pos, row) = (self.target, self.pos, &block.rows()[r]);
        // the input function's own refusal (kept by the soft-error call), or an integer the
        // parser refused: its error as the server words it, without converting again
        let refusal = compat::take_refusal();
        if let Some(refusal) = refusal {
            let error = RejectError {
                sqlstate: sqlstate_text(refusal.sqlstate),
                message: refusal.message,
                detail: refusal.detail,
            };
            return self.record_reject(block, r, error);
        }
        if let Some(error) = self.int_refusal(row) {
            return self.record_reject(block, r, error);
        }
        let Values { datums, nulls } = &mut self.values;
        let arena = &mut self.batch.arena;
        let again = compat::in_subtransaction(std::panic::AssertUnwindSafe(|| {
            convert::convert_row(
                &target.cols,
                converters,
                row,
                block.ints(r),
                datums,
                nulls,
                OnError::Stop,
                pos,
                arena,
            )
        }));
        let error = match again {
            Err(e) => reject_error(e),
            // (a value refused once and taken the second time: an input function that is
            // not immutable)
            Ok(_) => RejectError {
                sqlstate: "22000".into(),
                message: "value refused by its input function".into(),
                detail: None,
            },
        };
        self.record_reject(block, r, error);
    }

    /// The error the server raises for the integer field the position is at, when that is
    /// what the row was refused for (its text, for a value in UTF-8 as the message shows it).
    fn int_refusal(&self, row: &fastcopy_core::input::Row) -> Option<RejectError> {
        use fastcopy_core::int;
        let at = self.pos.column_ptr();
        let i = self
            .target
            .cols
            .columns
            .iter()
            .position(|c| c.name.as_ptr() == at)?;
        let fastcopy_core::input::Field::Value(bytes) = row.field(i) else {
            return None;
        };
        let grammar = crate::parse::SERVER_GRAMMAR;
        let (err, type_name) = match self.target.cols.text()?.get(i)? {
            TextConverter::Int2 => (int::parse_i16(bytes, grammar).err()?, "smallint"),
            TextConverter::Int4 => (int::parse_i32(bytes, grammar).err()?, "integer"),
            TextConverter::Int8 => (int::parse_i64(bytes, grammar).err()?, "bigint"),
            TextConverter::Input(_) => return None,
        };
        // (the message shows the bytes as text: exact for UTF-8, else converted again)
        std::str::from_utf8(bytes).ok()?;
        let (code, message) = crate::parse::int_error_text(err, bytes, type_name);
        Some(RejectError {
            sqlstate: sqlstate_text(code as i32),
            message,
            detail: None,
        })
    }

    /// With a rejects table and `set_null`: each value of row `r` made NULL, as a reject row
    /// of its own with its column, raw field and error (action `set_null`).
    #[inline(never)]
    fn record_nulled(&mut self, block: &RowBlock, r: usize) {
        let (target, row) = (self.target, &block.rows()[r]);
        let offset = self.row_offset(block, r);
        for n in convert::take_nulled() {
            let Some(i) = target
                .cols
                .columns
                .iter()
                .position(|c| c.index == n.attribute)
            else {
                continue;
            };
            let raw_field = row.field(i).value();
            let error = RejectError {
                sqlstate: sqlstate_text(n.sqlstate),
                message: n.message,
                detail: n.detail,
            };
            let column = Some((target.cols.columns[i].name.as_c_str(), n.attribute));
            if let Some(rejects) = &mut self.rejects {
                let raw = row.raw_line();
                rejects.record(
                    "set_null",
                    row.line_no(),
                    offset,
                    column,
                    raw_field,
                    &raw,
                    error,
                );
            }
        }
    }

    /// Keeps row `r` of `block`, which failed a constraint check with `e` (about `column`, for
    /// a NOT NULL violation), as a reject, and skips it.
    fn record_failed_check(
        &mut self,
        block: &RowBlock,
        r: usize,
        e: pgrx::pg_sys::panic::CaughtError,
        column: Option<(std::ffi::CString, usize)>,
    ) {
        let row = &block.rows()[r];
        // (a partition's column by its name: its attribute number may differ from the
        // target's, which is the one kept)
        let input = column.as_ref().and_then(|(name, _)| {
            let i = self
                .target
                .cols
                .columns
                .iter()
                .position(|c| c.name == *name)?;
            Some((i, self.target.cols.columns[i].index))
        });
        let raw_field = input.and_then(|(i, _)| row.field(i).value());
        let column = column
            .as_ref()
            .map(|(name, a)| (name.as_c_str(), input.map_or(*a, |(_, index)| index)));
        let offset = self.row_offset(block, r);
        if let Some(rejects) = &mut self.rejects {
            let error = reject_error(e);
            rejects.record(
                "skipped",
                row.line_no(),
                offset,
                column,
                raw_field,
                &row.raw_line(),
                error,
            );
        }
        // (no NOTICE of a value that did not convert: every value did)
        self.skipping_structure = true;
        self.skip_row();
    }

    /// Keeps row `r` of `block` as a reject with `error`, at the column the position is at.
    fn record_reject(&mut self, block: &RowBlock, r: usize, error: RejectError) {
        let (target, row) = (self.target, &block.rows()[r]);
        let at = self.pos.column_ptr();
        let column = target
            .cols
            .columns
            .iter()
            .position(|c| c.name.as_ptr() == at)
            .map(|i| (target.cols.columns[i].name.as_c_str(), i));
        let raw_field = column.and_then(|(_, i)| row.field(i).value());
        let index = column.map(|(name, i)| (name, target.cols.columns[i].index));
        let offset = self.row_offset(block, r);
        if let Some(rejects) = &mut self.rejects {
            rejects.record(
                "skipped",
                row.line_no(),
                offset,
                index,
                raw_field,
                &row.raw_line(),
                error,
            );
        }
    }

    /// Where row `r` of `block` starts in the input, when the rows are the input's bytes
    /// (not converted from another encoding first).
    fn row_offset(&mut self, block: &RowBlock, r: usize) -> Option<u64> {
        if !self.offsets_known() {
            return None;
        }
        let first = block.first_offset?;
        // rejects come in row order: from the last one of this block on, not from its start
        let (from, at) = match self.offset_at {
            (Some(f), k, at) if f == first && k <= r => (k, at),
            _ => (0, first),
        };
        let offset = block.row_offset_from(from, at, r);
        self.offset_at = (Some(first), r, offset);
        Some(offset)
    }

    /// The decoder's offsets are the input's: it reads the input as it is, not converted.
    fn offsets_known(&self) -> bool {
        self.target.encoding.convert.is_none()
    }
}

/// The SQLSTATE, message and detail of an ERROR caught while a row was converted; anything
/// that is not an ERROR report (a Rust panic) is raised again.
fn reject_error(e: pgrx::pg_sys::panic::CaughtError) -> RejectError {
    use pgrx::pg_sys::panic::CaughtError;
    let report = match e {
        CaughtError::PostgresError(r) | CaughtError::ErrorReport(r) => r,
        e @ CaughtError::RustPanic { .. } => e.rethrow(),
    };
    RejectError {
        sqlstate: sqlstate_text(report.sql_error_code() as i32),
        message: report.message().to_string(),
        detail: report.detail().map(str::to_string),
    }
}

/// A packed SQLSTATE as its five characters (PGUNSIXBIT: six bits each, the first lowest).
fn sqlstate_text(code: i32) -> String {
    (0..5)
        .map(|i| (((code >> (6 * i)) & 0x3F) as u8 + b'0') as char)
        .collect()
}

/// How `on_error` is carried out for this target.
fn choose_on_error(choice: OnErrorChoice, spec: &LoadSpec, target: &Target) -> OnError {
    let inputs = target
        .cols
        .text()
        .is_some_and(|c| c.iter().any(|c| matches!(c, TextConverter::Input(_))));
    match choice {
        OnErrorChoice::Stop => OnError::Stop,
        OnErrorChoice::Ignore if !compat::SOFT_INPUT && target.short_path && inputs => {
            OnError::Rollback
        }
        OnErrorChoice::Ignore => OnError::Ignore {
            keep: spec.rejects.is_some(),
        },
        // (15: a subtransaction per value that goes to an input function: the row stays)
        OnErrorChoice::SetNull => OnError::SetNull {
            verbose: spec.log_verbosity == LogVerbosity::Verbose,
            keep: spec.rejects.is_some(),
        },
    }
}

/// The decoder's error, with COPY's SQLSTATE, message and hint, at its line (and column); the
/// binary header's errors without a context, as COPY raises them before it installs one.
fn raise_input_error(e: &InputError, pos: &Position, target: &Target) -> ! {
    match (&e.raw_line, e.field) {
        _ if e.kind.is_header() => pos.silence(),
        (Some(raw), _) => pos.at_line_text(e.line, raw),
        (None, Some(f)) => {
            pos.at_line(e.line);
            pos.at_column(target.cols.columns[f].name.as_ptr());
        }
        (None, None) => pos.at_line(e.line),
    }
    if e.sqlstate() == fastcopy_core::sqlstate::SqlState::PROTOCOL_VIOLATION {
        // the client's message COPY does not expect: it is read up to its type byte first,
        // as the server raises this in the middle of it
        super::input::client::read_unread_type();
    }
    let code = PgSqlErrorCode::from(e.sqlstate().packed());
    match (e.detail(), e.hint()) {
        (Some(d), _) => crate::error::raise_detail(code, e.message(), d),
        (None, Some(h)) => raise_hint(code, e.message(), h),
        (None, None) => raise(code, e.message()),
    }
}
