//! The insert buffers of a load, as COPY's `CopyMultiInsertInfo`: one [`Buffer`] per result
//! relation (the target, or each leaf partition rows were routed to), flushed together once
//! they hold `max_tuples` rows or `max_bytes` of input. A relation with BEFORE ROW triggers,
//! or a load with volatile defaults, gets its rows one at a time (a buffer flushed after every
//! row, COPY's `CIM_SINGLE`), so that the triggers and default expressions see every earlier
//! row. Whether a batch is flushed, and when, is the loader's call.
//!
//! A converted row goes in one of two ways:
//! - [`Batch::store_short`] (`Target::short_path`: plain tables, AFTER triggers and foreign keys
//!   included; reader-formed tuples by [`Batch::store_formed`] and
//!   [`Batch::store_formed_run`]): the tuple is formed straight into batch memory and checked
//!   against NOT NULL and CHECK constraints; no executor step per row.
//! - [`Batch::stage_routed`] then [`Batch::finish_routed`]: the executor path in `CopyFrom`'s
//!   order, where the executor must see each row (partition routing, BEFORE ROW triggers,
//!   stored generated columns). Between the two the loader flushes the batch when the row's
//!   relation takes rows one at a time ([`Batch::must_flush_before`]).

use super::buffer::{BatchState, Buffer, Checked, FailedCheck, Staged, page_space};
use super::common::interrupt_pending;
use super::convert::Values;
use super::pages::Pages;
use super::position::Position;
use super::slot;
use super::target::Target;
use super::tuple::{Arena, Former};
use crate::compat;
use fastcopy_core::input::Row;
use fastcopy_core::pipeline::{RowBlock, RowMark};
use pgrx::pg_sys;
use std::collections::HashMap;

/// COPY's `MAX_PARTITION_BUFFERS`: buffers kept after a flush (least recently used dropped).
const MAX_BUFFERS: usize = 32;
/// WAL bytes between two of [`Batch::nudge_wal_writer`]'s requests to the WAL writer.
const WAL_HINT: u64 = 1 << 20;

/// What storing a row did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// The row is buffered.
    Buffered,
    /// The row is buffered and the batch must be flushed now.
    Full,
    /// A BEFORE ROW trigger returned NULL: the row is not inserted (and not counted).
    SkippedByTrigger,
    /// The WHERE condition is not true for the row (counted as excluded).
    Excluded,
    /// An INSTEAD OF INSERT row trigger took the row (counted, as COPY counts it).
    Instead,
    /// The row failed its constraint checks, and the load keeps such rows as rejects
    /// ([`Batch::keep_failed_checks`]): not inserted; the error is in
    /// [`Batch::take_failed_check`].
    FailedCheck,
}

impl Stored {
    fn from_full(full: bool) -> Stored {
        if full { Stored::Full } else { Stored::Buffered }
    }
}

/// How many rows ahead of the one it stores [`Batch::store_formed_run`] asks for a formed
/// tuple to be brought into the cache: a few hundred nanoseconds of the run's rows ahead.
const FORMED_AHEAD: usize = 32;

pub struct Batch {
    /// For a plain target, its one buffer (index 0); for a partitioned one, per partition.
    buffers: Vec<Buffer>,
    /// Where each result relation's buffer is in `buffers`.
    index: HashMap<*mut pg_sys::ResultRelInfo, usize>,
    state: BatchState,
    used: usize,
    bytes: usize,
    /// Input bytes of rows converted but not stored since the last flush (excluded by the
    /// WHERE condition, skipped by on_error): their values are in the batch memory too.
    dropped: usize,
    max_tuples: usize,
    max_bytes: usize,
    tick: u64,
    /// Where the fixed-width tuples of the current batch are formed.
    pub arena: Arena,
    pub flushes: u64,
    /// The WAL position at the last request to the WAL writer ([`Batch::nudge_wal_writer`]).
    wal_hint: pg_sys::XLogRecPtr,
    /// Rows a foreign table's FDW did not insert since the loader last asked
    /// ([`take_not_inserted`](Self::take_not_inserted)).
    not_inserted: u64,
    /// Extension counts of buffers already dropped.
    pub pages_extended: u64,
    pub extend_calls: u64,
    /// Routed rows that fail their constraint checks are kept, not raised
    /// ([`Batch::keep_failed_checks`]).
    keep_failed_checks: bool,
    failed_check: Option<FailedCheck>,
}

impl Batch {
    pub fn new(target: &Target, max_tuples: usize, max_bytes: usize) -> Batch {
        let mut batch = Batch {
            buffers: Vec::new(),
            index: HashMap::new(),
            state: BatchState {
                // SAFETY: in a transaction (the load's).
                cid: unsafe { pg_sys::GetCurrentCommandId(true) },
                short_path: target.short_path,
            },
            used: 0,
            bytes: 0,
            dropped: 0,
            max_tuples,
            max_bytes,
            tick: 0,
            arena: Arena::new(),
            flushes: 0,
            // SAFETY: backend thread; the call reads the insert position under a spinlock.
            wal_hint: unsafe { pg_sys::GetXLogInsertRecPtr() },
            not_inserted: 0,
            pages_extended: 0,
            extend_calls: 0,
            keep_failed_checks: false,
            failed_check: None,
        };
        // a partitioned target gets a buffer per partition as rows come; a view none (its
        // rows go to its INSTEAD OF trigger one by one)
        if target.routing.is_none() && !target.instead_row {
            // SAFETY: the target's own result relation.
            let buf = unsafe { Buffer::new(target.rri, target, false) };
            batch.index.insert(target.rri, 0);
            batch.buffers.push(buf);
        }
        batch
    }

    /// The buffer of a result relation, if it has one.
    #[inline]
    pub fn index_of(&self, rri: *mut pg_sys::ResultRelInfo) -> Option<usize> {
        self.index.get(&rri).copied()
    }

    /// The buffer of a leaf partition `ExecFindPartition` returned (made on first use).
    pub fn buffer_for(&mut self, rri: *mut pg_sys::ResultRelInfo, target: &Target) -> usize {
        let i = match self.index_of(rri) {
            Some(i) => i,
            None => {
                // SAFETY: `rri` came from tuple routing for this target.
                self.buffers.push(unsafe { Buffer::new(rri, target, true) });
                self.index.insert(rri, self.buffers.len() - 1);
                self.buffers.len() - 1
            }
        };
        self.tick += 1;
        self.buffers[i].touch(self.tick);
        i
    }

    /// Records the row just stored in buffer `b`'s `next_slot`, of a line of `line_len`
    /// bytes (COPY's `line_buf.len`: the line ending not counted, as `CopyFrom` counts it);
    /// true when the batch must be flushed (full, or `b` takes rows one at a time).
    #[inline]
    pub fn add(&mut self, b: usize, line: u64, line_len: usize) -> bool {
        let single = self.buffers[b].record(line);
        self.used += 1;
        self.bytes += line_len;
        self.used >= self.max_tuples || self.bytes >= self.max_bytes || single
    }

    /// Records a row that was converted but not stored (its `raw_len` input bytes): true when
    /// the batch must be flushed, so that the values of such rows do not pile up in the batch
    /// memory (a WHERE that excludes nearly every row would otherwise keep them all).
    #[inline]
    pub fn drop_row(&mut self, raw_len: usize) -> bool {
        self.dropped += raw_len;
        self.dropped >= self.max_bytes
    }

    /// Whether rows are pending that must be inserted before a row for buffer `b` goes on:
    /// `b` takes rows one at a time, and the rows before are visible to its triggers.
    #[inline]
    pub fn must_flush_before(&self, b: usize) -> bool {
        self.buffers[b].single() && self.used > 0
    }

    /// Frees the batch memory: the converted values and formed tuples of the rows so far, and
    /// the arena's blocks in it (the arena forgets them in the same step, so nothing can take
    /// a chunk of a freed block).
    ///
    /// # Safety
    /// Nothing refers to the batch memory any more (no buffered row, no value in use).
    pub unsafe fn reset_memory(&mut self, target: &Target) {
        // SAFETY: as the function's contract.
        unsafe { pg_sys::MemoryContextReset(target.batch_memory()) };
        self.arena.reset();
    }

    /// Inserts every buffered row; resets the batch memory; keeps at most `MAX_BUFFERS`
    /// buffers (the least recently used go first).
    pub fn flush(&mut self, target: &Target, pos: &Position) {
        if self.used == 0 {
            if self.dropped > 0 {
                // only dropped rows' values: free them
                // SAFETY: nothing is buffered, so nothing refers to the batch memory.
                unsafe { self.reset_memory(target) };
                self.dropped = 0;
            }
            return;
        }
        for buf in self.buffers.iter_mut().filter(|b| b.has_rows()) {
            // SAFETY: the buffered rows were stored by this batch's `store_*` methods.
            unsafe { buf.flush(&self.state, target, pos) };
            self.not_inserted += buf.take_not_inserted();
        }
        // SAFETY: nothing refers to the batch memory now: every row is in the heap.
        unsafe { self.reset_memory(target) };
        self.nudge_wal_writer();
        self.used = 0;
        self.bytes = 0;
        self.dropped = 0;
        self.flushes += 1;
        while self.buffers.len() > MAX_BUFFERS {
            let oldest = (0..self.buffers.len())
                .min_by_key(|&i| self.buffers[i].last_used())
                .unwrap_or(0);
            let gone = self.buffers.swap_remove(oldest);
            self.index.remove(&gone.rri());
            if let Some(moved) = self.buffers.get(oldest) {
                self.index.insert(moved.rri(), oldest);
            }
            // SAFETY: just flushed.
            let (pages, calls) = unsafe { gone.finish(target) };
            self.pages_extended += pages;
            self.extend_calls += calls;
        }
    }

    /// After a flush, each time the WAL has grown by [`WAL_HINT`] bytes since the last time:
    /// asks the WAL writer to write (and flush) it in the background, as an asynchronous
    /// commit asks (`XLogSetAsyncXactLSN`). Without it a logged load's backend writes the WAL
    /// itself whenever the WAL buffers are full, and fsyncs each segment it completes, on the
    /// load's critical path; the WAL writer, on another core, then does that work instead. The
    /// WAL is the same, only written sooner than needed (commit still flushes it). A load
    /// that writes no WAL (an unlogged table) does not move the position by itself.
    fn nudge_wal_writer(&mut self) {
        // SAFETY: backend thread, outside a critical section; both calls take a spinlock, and
        // the second may set the WAL writer's latch.
        unsafe {
            let lsn = pg_sys::GetXLogInsertRecPtr();
            if lsn < self.wal_hint + WAL_HINT {
                return;
            }
            self.wal_hint = lsn;
            pg_sys::XLogSetAsyncXactLSN(lsn);
        }
    }

    /// Whether the rows of the target's own buffer (a plain table's) have constraints or a
    /// partition constraint to check.
    pub fn checks_rows(&self) -> bool {
        self.buffers.first().is_some_and(Buffer::checks_rows)
    }

    /// Rows counted when they were stored that the FDW then did not insert, since the last
    /// call.
    pub fn take_not_inserted(&mut self) -> u64 {
        std::mem::take(&mut self.not_inserted)
    }

    /// Ends the load's bulk inserts (after the last flush).
    pub fn finish(&mut self, target: &Target) {
        self.index.clear();
        for buf in self.buffers.drain(..) {
            // SAFETY: after the last flush.
            let (pages, calls) = unsafe { buf.finish(target) };
            self.pages_extended += pages;
            self.extend_calls += calls;
        }
    }

    /// The short path: forms the tuple into the batch arena, stores it in the target's buffer,
    /// checks constraints.
    ///
    /// # Safety
    /// `target.short_path`; `values` hold one converted row, in the batch memory.
    #[inline]
    pub unsafe fn store_short(&mut self, target: &Target, values: &Values, row: RowMark) -> Stored {
        // SAFETY: as the function's contract; the batch memory is the current context while
        // the tuple is formed (heap_form_tuple's fallback allocates there).
        unsafe {
            let old = pg_sys::MemoryContextSwitchTo(target.batch_memory());
            let tuple = target
                .former
                .form(&mut self.arena, &values.datums, &values.nulls);
            pg_sys::MemoryContextSwitchTo(old);
            self.store_tuple(target, tuple, (*tuple).t_len as usize, false, row)
        }
    }

    /// The short path for a tuple the reader formed ([`tuple::Former::copy_formed`]): copied into
    /// the batch memory, then as `store_short`.
    ///
    /// # Safety
    /// `target.short_path`; `formed` is a tuple of the target former's plan.
    #[inline]
    pub unsafe fn store_formed(&mut self, target: &Target, formed: &[u8], row: RowMark) -> Stored {
        // SAFETY: as the function's contract; the arena takes a new block from the batch
        // memory.
        unsafe {
            let mem = target.batch_memory();
            let tuple = target.former.copy_formed(&mut self.arena, mem, formed);
            // (its length and that it has no NULL in a NOT NULL column are the plan's: reading
            // them back from the copy just made stalled the loop on the copy's wide stores)
            self.store_tuple(target, tuple, Former::formed_len(formed), true, row)
        }
    }

    /// Whether a run of reader-formed tuples can go in by [`store_formed_run`]
    /// (Self::store_formed_run): the target's buffer takes them without slots, rows are not
    /// inserted one at a time, and no constraint can fail for a formed tuple (a formed tuple
    /// has no NULL, so NOT NULL constraints alone pass).
    #[inline]
    pub fn takes_formed_runs(&self, target: &Target) -> bool {
        target.short_path && self.buffers.first().is_some_and(Buffer::takes_formed_runs)
    }

    /// The rows of `block` from `from` on whose tuples the reader formed, while they last and
    /// the batch has room: each copied into the batch memory and handed to the page writer,
    /// as `store_formed` does row by row, with the batch's accounting done once for the run.
    /// `interrupted(r)` is called, with the rows before `r + 1` stored and counted, when an
    /// interrupt is pending after row `r`. Returns (the row after the run, whether the batch
    /// is full).
    ///
    /// # Safety
    /// [`takes_formed_runs`](Self::takes_formed_runs); the block's tuples are of the target
    /// former's plan.
    #[inline]
    pub unsafe fn store_formed_run(
        &mut self,
        target: &Target,
        block: &RowBlock,
        from: usize,
        mut interrupted: impl FnMut(usize),
    ) -> (usize, bool) {
        let n = block.rows().len();
        let mem = target.batch_memory();
        let fixed = block.fixed_tuples();
        // the batch is flushed whenever it is full, so it has room for one row at least
        let room = self.max_tuples.saturating_sub(self.used).max(1);
        let end = n.min(from + room);
        let max_bytes = self.max_bytes;
        let Some((pages, buf_used, buf_tuple_bytes)) = self.buffers[0].run_parts() else {
            return (from, false);
        };
        let (mut bytes, mut tuple_bytes) = (self.bytes, *buf_tuple_bytes);
        // rows before `counted` are in the buffer's and the batch's counts
        let (mut r, mut counted) = (from, from);
        let mut full = false;
        // a cancel pending after row r - 1: the rows so far into the buffer's and the batch's
        // counts (the error, if it comes, leaves them as stored), then the check at that row
        macro_rules! cancel_check {
            () => {{
                *buf_used += r - counted;
                self.used += r - counted;
                counted = r;
                *buf_tuple_bytes = tuple_bytes;
                self.bytes = bytes;
                interrupted(r - 1);
            }};
        }
        let run_len = block.data_len();
        while r < end {
            // A run of rows whose data bytes the block keeps side by side, after the batch's
            // first uniform tuple: counted row by row (their lines' bytes, the batch's
            // limits, a cancel after each, as below), taken in one copy.
            if run_len > 0 && pages.uniform_data_len() == Some(run_len) && block.is_formed(r) {
                let space = page_space(block.tuple(r).map_or(0, Former::formed_len));
                let at = r;
                let cancel;
                (r, bytes, full, cancel) =
                    uniform_run(block, r, end, from + room, bytes, max_bytes);
                // SAFETY: the batch's uniform tuples are of this block's fixed plan (the
                // reader forms them only for the target's), `run_len` data bytes each.
                unsafe { pages.push_data_run(block.data_run(at, r), r - at) };
                tuple_bytes += space * (r - at);
                if full {
                    break;
                }
                if cancel || interrupt_pending() {
                    cancel_check!();
                }
                continue;
            }
            let Some(formed) = block.tuple(r) else { break };
            if fixed {
                block.prefetch_formed(r, FORMED_AHEAD);
            }
            let line_len = block.mark(r).line_len;
            // SAFETY: a tuple of the former's plan (# Safety), a fixed one if `fixed`.
            unsafe { push_formed(pages, &mut self.arena, &target.former, mem, formed, fixed) };
            tuple_bytes += page_space(Former::formed_len(formed));
            bytes += line_len;
            r += 1;
            if bytes >= max_bytes || r == from + room {
                full = true;
                break;
            }
            if interrupt_pending() {
                cancel_check!();
            }
        }
        *buf_used += r - counted;
        self.used += r - counted;
        *buf_tuple_bytes = tuple_bytes;
        self.bytes = bytes;
        (r, full)
    }

    /// The short path's rest: the tuple into the target's buffer, and the row counted.
    ///
    /// # Safety
    /// `target.short_path`; `tuple` was formed for it in the batch memory, `len` bytes long (its
    /// `t_len`), without a NULL in a NOT NULL column if `not_null_met`.
    #[inline(always)]
    unsafe fn store_tuple(
        &mut self,
        target: &Target,
        tuple: pg_sys::HeapTuple,
        len: usize,
        not_null_met: bool,
        row: RowMark,
    ) -> Stored {
        // SAFETY: as the function's contract.
        unsafe { self.buffers[0].store_tuple(target, tuple, len, not_null_met) };
        Stored::from_full(self.add(0, row.line_no, row.line_len))
    }

    /// The executor path, first half: partition routing, then the row copied into the slot of
    /// its relation's buffer ([`Buffer::stage`]).
    ///
    /// # Safety
    /// `!target.short_path`; `values` hold one converted row.
    pub unsafe fn stage_routed(&mut self, target: &Target, values: &Values) -> (usize, Staged) {
        // SAFETY: as the function's contract; the slots and the executor state are the
        // target's, alive for the load.
        unsafe {
            let input = target.input_slot;
            slot::store_values(input, &values.datums, &values.nulls);
            let b = match &target.routing {
                Some(r) => {
                    let leaf = compat::exec::ExecFindPartition(
                        r.mtstate,
                        target.rri,
                        r.proute,
                        input,
                        target.estate,
                    );
                    self.buffer_for(leaf, target)
                }
                None => 0,
            };
            (b, self.buffers[b].stage(target, input))
        }
    }

    /// The executor path, second half: BEFORE ROW triggers, stored generated columns,
    /// constraints ([`Buffer::finish_staged`]), and the row counted in its buffer.
    ///
    /// # Safety
    /// `staged` came from `stage_routed` of this batch, with no row staged since, and at most
    /// the flush [`Batch::must_flush_before`] asked for in between: that flush is only asked
    /// for a buffer that takes one row at a time and so has none pending, so the staged slot
    /// is still its next slot.
    pub unsafe fn finish_routed(&mut self, target: &Target, staged: Staged, row: &Row) -> Stored {
        let b = self
            .index_of(staged.rri())
            .expect("a staged row's buffer stays until its row is stored");
        // SAFETY: as the function's contract: the staged slot is the buffer's next slot.
        let checked =
            unsafe { self.buffers[b].finish_staged(target, staged, self.keep_failed_checks) };
        match checked {
            Checked::Passed => Stored::from_full(self.add(b, row.line_no(), row.line_len())),
            Checked::SkippedByTrigger => Stored::SkippedByTrigger,
            Checked::Failed(failed) => {
                self.failed_check = Some(*failed);
                Stored::FailedCheck
            }
        }
    }

    /// A row into a view: its INSTEAD OF INSERT row trigger does what it does with it, now
    /// (COPY's per-row path; a view has no buffer). The row's memory is freed after it.
    ///
    /// # Safety
    /// `target.instead_row`; `values` hold one converted row, in the batch memory.
    pub unsafe fn store_instead(&mut self, target: &Target, values: &Values) -> Stored {
        // SAFETY: as the function's contract; the slot and the executor state are the
        // target's. Nothing refers to the batch memory once the trigger returned (no row is
        // buffered for a view).
        unsafe {
            let slot = target.input_slot;
            slot::store_values(slot, &values.datums, &values.nulls);
            (*slot).tts_tableOid = target.relid;
            pg_sys::ExecIRInsertTriggers(target.estate, target.rri, slot);
            slot::clear(slot);
            self.reset_memory(target);
        }
        Stored::Instead
    }

    /// Failed constraint checks of routed rows are returned as [`Stored::FailedCheck`] instead
    /// of raised (a load with a rejects table). Rows on the short path are checked as before:
    /// their loader runs them in a subtransaction and asks [`failed_row`](Self::failed_row).
    pub fn keep_failed_checks(&mut self) {
        self.keep_failed_checks = true;
    }

    /// The failed check [`Stored::FailedCheck`] is about.
    pub fn take_failed_check(&mut self) -> Option<FailedCheck> {
        self.failed_check.take()
    }

    /// After a row of buffer `b` failed its checks: [`Buffer::failed_row`].
    ///
    /// # Safety
    /// As [`Buffer::failed_row`], for buffer `b`.
    pub unsafe fn failed_row(
        &mut self,
        b: usize,
        owned: bool,
    ) -> Option<(std::ffi::CString, usize)> {
        // SAFETY: as the function's contract.
        unsafe { self.buffers[b].failed_row(owned) }
    }
}

/// A tuple the reader formed onto the page writer's list: a fixed plan's as its data bytes
/// (`Pages::push_formed`), else copied into the batch memory `mem` (the arena takes a new
/// block from it).
///
/// # Safety
/// `formed` is a tuple of `former`'s plan, a fixed one if `fixed`; `mem` is the batch memory.
#[inline(always)]
unsafe fn push_formed(
    pages: &mut Pages,
    arena: &mut Arena,
    former: &Former,
    mem: pg_sys::MemoryContext,
    formed: &[u8],
    fixed: bool,
) {
    // SAFETY: as the function's contract.
    unsafe {
        if !(fixed && pages.push_formed(formed)) {
            let tuple = former.copy_formed(arena, mem, formed);
            pages.push(tuple, mem);
        }
    }
}

/// The run of formed rows from `r` on (at least `r`) that a uniform batch takes in one copy:
/// while the rows are formed, before `end`, each row's line bytes added to `bytes`, until the
/// batch is full (`max_bytes`, or the row `limit`) or an interrupt is pending after a row.
/// Returns (the row after the run, the bytes, whether the batch is full, whether a cancel
/// ended the run).
#[inline(always)]
fn uniform_run(
    block: &RowBlock,
    mut r: usize,
    end: usize,
    limit: usize,
    mut bytes: usize,
    max_bytes: usize,
) -> (usize, usize, bool, bool) {
    loop {
        bytes += block.mark(r).line_len;
        r += 1;
        if bytes >= max_bytes || r == limit {
            return (r, bytes, true, false);
        }
        if r == end || !block.is_formed(r) {
            return (r, bytes, false, false);
        }
        if interrupt_pending() {
            return (r, bytes, false, true);
        }
    }
}
