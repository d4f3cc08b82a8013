//! The insert buffers, as COPY's `CopyMultiInsertInfo`: one [`Buffer`] per result relation
//! (the target, or each leaf partition rows were routed to), flushed together once they hold
//! `max_tuples` rows or `max_bytes` of input. A flush inserts each buffer's rows with one
//! `table_multi_insert`, then per row its index entries and AFTER ROW triggers (foreign keys
//! included), as `CopyMultiInsertBufferFlush` does. A relation with BEFORE ROW triggers, or a
//! load with volatile defaults, gets its rows one at a time (a buffer flushed after every row,
//! COPY's `CIM_SINGLE`), so that the triggers and default expressions see every earlier row.
//!
//! Rows go in through `store.rs`; whether a batch is flushed, and when, is the loader's call.

use super::pages::Pages;
use super::position::Position;
use super::slot;
use super::target::Target;
use super::tuple::Arena;
use crate::compat;
use crate::extend::Extender;
use pgrx::pg_sys;
use std::collections::HashMap;

/// COPY's `MAX_PARTITION_BUFFERS`: buffers kept after a flush (least recently used dropped).
const MAX_BUFFERS: usize = 32;
/// WAL bytes between two of [`Batch::nudge_wal_writer`]'s requests to the WAL writer.
const WAL_HINT: u64 = 1 << 20;

/// The pending rows of one result relation, and the facts about it every row needs (computed
/// once, when its first row arrives).
pub struct Buffer {
    pub rri: *mut pg_sys::ResultRelInfo,
    rel: pg_sys::Relation,
    slots: Vec<*mut pg_sys::TupleTableSlot>,
    linenos: Vec<u64>,
    pub(super) used: usize,
    /// NULL for a foreign table (its FDW inserts).
    bistate: pg_sys::BulkInsertState,
    /// A foreign table (the target or a partition): each row goes to its FDW's
    /// ExecForeignInsert, one at a time, as in COPY's single-row mode.
    foreign: *mut pg_sys::FdwRoutine,
    /// Rows the FDW did not insert ("do nothing"): not counted, as COPY does not count them.
    pub not_inserted: u64,
    /// The slots' tuple descriptor (see `next_slot`).
    slot_desc: pg_sys::TupleDesc,
    /// `tuple::constant_flags` of the slots (all made alike).
    pub slot_flags: u16,
    /// Bytes the buffered tuples will take on heap pages (line pointers included).
    pub tuple_bytes: usize,
    /// Relation extension ahead of the heap (fastcopy.extend_strategy).
    extender: Extender,
    /// BEFORE ROW INSERT triggers.
    pub before_row: bool,
    /// Rows go one at a time (BEFORE ROW triggers, volatile defaults), COPY's `CIM_SINGLE`.
    pub single: bool,
    /// AFTER ROW INSERT triggers or a transition table.
    after_row: bool,
    has_indexes: bool,
    /// Stored generated columns to compute per row.
    pub generated: bool,
    /// NOT NULL or CHECK constraints to test per row.
    pub has_constraints: bool,
    /// The constraints are NOT NULL constraints of stored columns only (no CHECK constraint,
    /// no virtual generated column): `ExecConstraints` can fail only for a row with a NULL in
    /// one of `not_null`, so a tuple without one skips it.
    pub not_null_only: bool,
    /// The attributes (0-based, ascending) with a NOT NULL constraint.
    pub not_null: Vec<u16>,
    /// Test the partition constraint per row: a partition loaded directly, or a routed row a
    /// BEFORE ROW trigger may have changed.
    pub partition_check: bool,
    /// From the partitioned root's rows to this partition's, NULL when they match.
    pub map: *mut pg_sys::TupleConversionMap,
    /// The bulk page path's writer, when it takes this relation's rows (`pages.rs`).
    pub pages: Option<Pages>,
    /// The page path without slots: no index, AFTER ROW trigger, constraint or partition
    /// check needs the row in a slot, so `store_fast` pushes the tuple to `pages` directly.
    pub slotless: bool,
    /// Where the slots and their descriptor live: the memory context current when the buffer
    /// was made (the load's), not the batch memory a flush resets.
    memory: pg_sys::MemoryContext,
    last_used: u64,
}

impl Buffer {
    /// `routed`: a leaf partition found by tuple routing (else the target itself).
    ///
    /// # Safety
    /// `rri` is the target's result relation or one tuple routing returned for it.
    unsafe fn new(rri: *mut pg_sys::ResultRelInfo, target: &Target, routed: bool) -> Buffer {
        // SAFETY: as the function's contract: `rri` and its relation are open.
        unsafe {
            let rel = (*rri).ri_RelationDesc;
            // (tuple routing began a foreign partition's insert, as for COPY)
            let foreign = (*rri).ri_FdwRoutine;
            let trig = (*rri).ri_TrigDesc;
            let before_row = !trig.is_null() && (*trig).trig_insert_before_row;
            let constr = (*(*rel).rd_att).constr;
            let is_partition = (*(*rel).rd_rel).relispartition;
            let mut buffer = Buffer {
                rri,
                rel,
                slots: Vec::new(),
                linenos: Vec::new(),
                used: 0,
                bistate: match foreign.is_null() {
                    true => pg_sys::GetBulkInsertState(),
                    false => std::ptr::null_mut(),
                },
                foreign,
                not_inserted: 0,
                slot_desc: std::ptr::null_mut(),
                slot_flags: 0,
                tuple_bytes: 0,
                extender: Extender::new(rel, target.ti_options),
                before_row,
                single: before_row || target.single_rows || !foreign.is_null(),
                // a transition table of the root collects the rows of every partition
                after_row: !target.transition_capture.is_null()
                    || (!trig.is_null()
                        && ((*trig).trig_insert_after_row || (*trig).trig_insert_new_table)),
                has_indexes: (*rri).ri_NumIndices > 0,
                generated: !constr.is_null() && (*constr).has_generated_stored,
                // (COPY checks them in plain tables only)
                has_constraints: foreign.is_null()
                    && !constr.is_null()
                    && ((*constr).has_not_null || (*constr).num_check > 0),
                not_null_only: foreign.is_null()
                    && !constr.is_null()
                    && (*(*rel).rd_rel).relchecks == 0
                    && !has_virtual_columns((*rel).rd_att),
                not_null: not_null_attributes((*rel).rd_att),
                partition_check: is_partition && (!routed || before_row),
                map: if routed {
                    compat::root_to_child_map(rri, target.estate)
                } else {
                    std::ptr::null_mut()
                },
                // the short path's rows of a plain table (a relation tuple routing found
                // takes the executor path)
                pages: match target.fast && !routed && foreign.is_null() {
                    true => Pages::new(rel),
                    false => None,
                },
                slotless: false,
                memory: pg_sys::CurrentMemoryContext,
                last_used: 0,
            };
            buffer.slotless = buffer.pages.is_some()
                && !buffer.has_indexes
                && !buffer.after_row
                && (!buffer.has_constraints || buffer.not_null_only)
                && !buffer.partition_check
                && !buffer.single;
            buffer
        }
    }

    /// The next empty heap-tuple slot (created on first use, reused after).
    #[inline]
    pub fn next_slot(&mut self) -> *mut pg_sys::TupleTableSlot {
        self.slot_at(self.used)
    }

    /// A slot to test a row's constraints in, for a buffer without slots (`slotless`), which
    /// holds no row in its slots.
    pub fn test_slot(&mut self) -> *mut pg_sys::TupleTableSlot {
        debug_assert!(self.slotless);
        self.slot_at(0)
    }

    /// Slot `i` (created, with those before it, on first use).
    #[inline]
    fn slot_at(&mut self, i: usize) -> *mut pg_sys::TupleTableSlot {
        while i >= self.slots.len() {
            // SAFETY: the relation is open; the slots are dropped in `finish`, and made in the
            // buffer's own memory context (a flush may call this with the batch memory
            // current).
            unsafe {
                let old = pg_sys::MemoryContextSwitchTo(self.memory);
                if self.slot_desc.is_null() {
                    // A copy of the relation's descriptor that is not reference-counted:
                    // slots of the relation's own would each pin it in the resource owner, and
                    // with thousands of slots every buffer pin of the insert path pays for that.
                    self.slot_desc = pg_sys::CreateTupleDescCopy((*self.rel).rd_att);
                }
                let slot = pg_sys::MakeSingleTupleTableSlot(
                    self.slot_desc,
                    &raw const pg_sys::TTSOpsHeapTuple,
                );
                self.slot_flags = slot::constant_flags(slot);
                self.slots.push(slot);
                pg_sys::MemoryContextSwitchTo(old);
            }
        }
        self.slots[i]
    }

    /// Inserts the buffered rows, then their index entries and AFTER ROW triggers.
    ///
    /// # Safety
    /// The slots `0..used` hold rows stored by `store.rs` for this relation.
    unsafe fn flush(&mut self, batch: &BatchState, target: &Target, pos: &Position) {
        // Errors while rows are inserted name the last line read, without its text; in
        // single-row mode COPY inserts the row it has just read, its text still shown.
        if !self.single {
            pos.hide_text();
        }
        if !self.foreign.is_null() {
            // SAFETY: as the function's contract.
            unsafe { self.flush_foreign(target) };
            return;
        }
        // SAFETY: as the function's contract; the executor state is the target's.
        unsafe {
            self.extender
                .before_insert(self.rel, self.bistate, self.tuple_bytes);
            let old = pg_sys::MemoryContextSwitchTo(target.batch_memory());
            if self.single {
                // one row, as COPY's single-row mode inserts it
                self.extender.before_heap_insert(self.rel);
                pg_sys::table_tuple_insert(
                    self.rel,
                    self.slots[0],
                    batch.cid,
                    target.ti_options,
                    self.bistate,
                );
            } else {
                let done = match &mut self.pages {
                    // the tuples were formed by `store_fast` into the batch memory
                    Some(p) => {
                        let slots = (!self.slotless).then(|| &self.slots[..self.used]);
                        match p.insert(
                            self.rel,
                            slots,
                            batch.cid,
                            target.ti_options,
                            self.bistate,
                            &mut self.extender,
                        ) {
                            Ok(()) => self.used,
                            Err(done) => done,
                        }
                    }
                    None => 0,
                };
                if done < self.used {
                    self.extender.before_heap_insert(self.rel);
                    self.multi_insert_rest(done, batch, target);
                }
            }
            pg_sys::MemoryContextSwitchTo(old);
            if let Some(p) = &mut self.pages {
                p.clear();
            }
            // (without slots, nothing is left to do per row)
            let per_row = if self.slotless { 0 } else { self.used };
            for i in 0..per_row {
                let slot = self.slots[i];
                if !self.single && (self.has_indexes || self.after_row) {
                    pos.at_line(self.linenos[i]);
                }
                let recheck = if self.has_indexes {
                    compat::insert_index_tuples(self.rri, slot, target.estate)
                } else {
                    std::ptr::null_mut()
                };
                if self.after_row {
                    pg_sys::ExecARInsertTriggers(
                        target.estate,
                        self.rri,
                        slot,
                        recheck,
                        target.transition_capture,
                    );
                }
                if !recheck.is_null() {
                    pg_sys::list_free(recheck);
                }
                if batch.fast {
                    slot::forget(slot, self.slot_flags);
                } else {
                    slot::clear(slot);
                }
            }
        }
        self.used = 0;
        self.tuple_bytes = 0;
    }

    /// `table_multi_insert` of the buffered rows from `done` on (those the page path left,
    /// see `Pages::insert`). Without slots, they are put into slots first, and the slots
    /// emptied after.
    ///
    /// # Safety
    /// As `flush`, in the batch memory context.
    unsafe fn multi_insert_rest(&mut self, done: usize, batch: &BatchState, target: &Target) {
        let n = self.used - done;
        let first = if self.slotless {
            let rest: Vec<pg_sys::HeapTuple> = match &self.pages {
                Some(p) => p.tuples()[done..self.used].to_vec(),
                None => Vec::new(),
            };
            for (i, &t) in rest.iter().enumerate() {
                let slot = self.slot_at(i);
                // SAFETY: a tuple formed for this relation, in the batch memory.
                unsafe { slot::store(slot, t, (*self.rel).rd_id, self.slot_flags) };
            }
            0
        } else {
            done
        };
        // SAFETY: the slots `first..first + n` hold the rows not inserted yet (# Safety).
        unsafe {
            pg_sys::table_multi_insert(
                self.rel,
                self.slots.as_mut_ptr().add(first),
                n as i32,
                batch.cid,
                target.ti_options,
                self.bistate,
            );
            if self.slotless {
                for &slot in &self.slots[..n] {
                    slot::forget(slot, self.slot_flags);
                }
            }
        }
    }

    /// A foreign table's row (`single`: one at a time) to its FDW, then its AFTER ROW
    /// triggers, as COPY's single-row mode.
    ///
    /// # Safety
    /// As `flush`; the buffer is a foreign table's, its insert begun.
    unsafe fn flush_foreign(&mut self, target: &Target) {
        // SAFETY: as the function's contract; ExecForeignInsert is set (CheckValidResultRel
        // checked it for the target, ExecInitPartitionInfo for a partition).
        unsafe {
            let insert = (*self.foreign)
                .ExecForeignInsert
                .expect("CheckValidResultRel checked the FDW inserts");
            for i in 0..self.used {
                let slot = self.slots[i];
                let (estate, rri) = (target.estate, self.rri);
                let done = pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| {
                    insert(estate, rri, slot, std::ptr::null_mut())
                });
                if done.is_null() {
                    self.not_inserted += 1;
                } else {
                    // AFTER ROW triggers may read tableoid
                    (*done).tts_tableOid = (*self.rel).rd_id;
                    if self.after_row {
                        pg_sys::ExecARInsertTriggers(
                            estate,
                            rri,
                            done,
                            std::ptr::null_mut(),
                            target.transition_capture,
                        );
                    }
                }
                slot::clear(slot);
            }
        }
        self.used = 0;
        self.tuple_bytes = 0;
    }

    /// Ends this relation's bulk insert; returns (pages extended, extend calls).
    ///
    /// # Safety
    /// After the last flush of this buffer.
    unsafe fn finish(mut self, target: &Target) -> (u64, u64) {
        // SAFETY: as the function's contract: nothing uses the slots or the bulk-insert state
        // after this.
        unsafe {
            for slot in self.slots.drain(..) {
                pg_sys::ExecDropSingleTupleTableSlot(slot);
            }
            if !self.foreign.is_null() {
                // the FDW's insert ends with the target (or tuple routing)
                return (0, 0);
            }
            self.extender.finish(self.rel, self.bistate);
            if let Some(p) = &self.pages {
                p.report(self.rel);
            }
            pg_sys::FreeBulkInsertState(self.bistate);
            pg_sys::table_finish_bulk_insert(self.rel, target.ti_options);
        }
        (
            self.extender.counts.pages_extended,
            self.extender.counts.extend_calls,
        )
    }
}

/// Whether a column of `desc` is a virtual generated column (18: stored as NULL, its NOT NULL
/// constraint checked by evaluating its expression).
///
/// # Safety
/// `desc` is the descriptor of an open relation.
unsafe fn has_virtual_columns(desc: pg_sys::TupleDesc) -> bool {
    // SAFETY: as the function's contract; every index is below `natts`.
    unsafe {
        (0..(*desc).natts as usize)
            .any(|i| compat::tuple_desc_attr(desc, i).attgenerated as u8 == b'v')
    }
}

/// The attributes of `desc` (0-based) with a NOT NULL constraint (`attnotnull`, which
/// `ExecConstraints` tests).
///
/// # Safety
/// `desc` is the descriptor of an open relation.
unsafe fn not_null_attributes(desc: pg_sys::TupleDesc) -> Vec<u16> {
    // SAFETY: as the function's contract; every index is below `natts`.
    unsafe {
        (0..(*desc).natts as usize)
            .filter(|&i| compat::tuple_desc_attr(desc, i).attnotnull)
            .map(|i| i as u16)
            .collect()
    }
}

/// A row's constraint check that failed, kept instead of raised (`Stored::FailedCheck`).
pub struct FailedCheck {
    pub error: pgrx::pg_sys::panic::CaughtError,
    /// For a NOT NULL violation, the column (its name and 0-based attribute number).
    pub column: Option<(std::ffi::CString, usize)>,
}

/// What every buffer's flush needs from the batch.
struct BatchState {
    cid: pg_sys::CommandId,
    /// Tuples are formed into the arena and stored by `tuple::store` (see `Target::fast`).
    fast: bool,
}

pub struct Batch {
    /// For a plain target, its one buffer (index 0); for a partitioned one, per partition.
    pub buffers: Vec<Buffer>,
    /// Where each result relation's buffer is in `buffers`.
    index: HashMap<*mut pg_sys::ResultRelInfo, usize>,
    state: BatchState,
    pub(super) used: usize,
    pub(super) bytes: usize,
    /// Input bytes of rows converted but not stored since the last flush (excluded by the
    /// WHERE condition, skipped by on_error): their values are in the batch memory too.
    dropped: usize,
    pub(super) max_tuples: usize,
    pub(super) max_bytes: usize,
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
    pub(super) keep_failed_checks: bool,
    pub(super) failed_check: Option<FailedCheck>,
}

impl Batch {
    pub fn new(target: &Target, max_tuples: usize, max_bytes: usize) -> Batch {
        let mut batch = Batch {
            buffers: Vec::new(),
            index: HashMap::new(),
            state: BatchState {
                // SAFETY: in a transaction (the load's).
                cid: unsafe { pg_sys::GetCurrentCommandId(true) },
                fast: target.fast,
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
        self.buffers[i].last_used = self.tick;
        i
    }

    /// Records the row just stored in buffer `b`'s `next_slot`, of a line of `line_len`
    /// bytes (COPY's `line_buf.len`: the line ending not counted, as `CopyFrom` counts it);
    /// true when the batch must be flushed (full, or `b` takes rows one at a time).
    #[inline]
    pub fn add(&mut self, b: usize, line: u64, line_len: usize) -> bool {
        let buf = &mut self.buffers[b];
        match buf.linenos.get_mut(buf.used) {
            Some(l) => *l = line,
            None => buf.linenos.push(line),
        }
        buf.used += 1;
        self.used += 1;
        self.bytes += line_len;
        self.used >= self.max_tuples || self.bytes >= self.max_bytes || buf.single
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
        self.buffers[b].single && self.used > 0
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
        for buf in self.buffers.iter_mut().filter(|b| b.used > 0) {
            // SAFETY: the buffered rows were stored by `store.rs`.
            unsafe { buf.flush(&self.state, target, pos) };
            self.not_inserted += std::mem::take(&mut buf.not_inserted);
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
                .min_by_key(|&i| self.buffers[i].last_used)
                .unwrap_or(0);
            let gone = self.buffers.swap_remove(oldest);
            self.index.remove(&gone.rri);
            if let Some(moved) = self.buffers.get(oldest) {
                self.index.insert(moved.rri, oldest);
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
        self.buffers
            .first()
            .is_some_and(|b| b.has_constraints || b.partition_check)
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
}
