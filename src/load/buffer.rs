//! One result relation's pending rows, as COPY's `CopyMultiInsertBuffer`: the rows in slots
//! (or, on the page path without slots, as tuples in the page writer's list), and their
//! flush: one `table_multi_insert` or the page writer, then per row its index entries and AFTER
//! ROW triggers (foreign keys included), as `CopyMultiInsertBufferFlush` does; a foreign
//! table's rows one by one through its FDW. The batch (`batch.rs`) stores rows here and decides
//! when to flush.

use super::index_build::{self, Deferred};
use super::pages::Pages;
use super::position::Position;
use super::row_needs::RowNeeds;
use super::slot;
use super::target::Target;
use crate::compat;
use crate::extend::Extender;
use pgrx::pg_sys;

/// What every buffer's flush needs from the batch.
pub(super) struct BatchState {
    pub cid: pg_sys::CommandId,
    /// Tuples are formed into the arena and stored by `tuple::store` (see `Target::short_path`).
    pub short_path: bool,
}

/// The pending rows of one result relation, and what every row of it needs (read once, when
/// its first row arrives).
pub(super) struct Buffer {
    rri: *mut pg_sys::ResultRelInfo,
    rel: pg_sys::Relation,
    needs: RowNeeds,
    slots: Vec<*mut pg_sys::TupleTableSlot>,
    linenos: Vec<u64>,
    used: usize,
    /// NULL for a foreign table (its FDW inserts).
    bistate: pg_sys::BulkInsertState,
    /// Rows the FDW did not insert ("do nothing"): not counted, as COPY does not count them.
    not_inserted: u64,
    /// The slots' tuple descriptor (see `next_slot`).
    slot_desc: pg_sys::TupleDesc,
    /// `tuple::constant_flags` of the slots (all made alike).
    slot_flags: u16,
    /// Bytes the buffered tuples will take on heap pages (line pointers included).
    tuple_bytes: usize,
    /// Relation extension ahead of the heap (fastcopy.extend_strategy).
    extender: Extender,
    /// Rows go one at a time (BEFORE ROW triggers, volatile defaults, a foreign table),
    /// COPY's `CIM_SINGLE`.
    single: bool,
    /// AFTER ROW INSERT triggers, or a transition table (the root's collects the rows of
    /// every partition).
    after_row: bool,
    /// Test the partition constraint per row: a partition loaded directly, or a routed row a
    /// BEFORE ROW trigger may have changed.
    partition_check: bool,
    /// From the partitioned root's rows to this partition's, NULL when they match.
    map: *mut pg_sys::TupleConversionMap,
    /// The bulk page path's writer, when it takes this relation's rows (`pages.rs`).
    pages: Option<Pages>,
    /// The page path without slots: no index, AFTER ROW trigger, constraint or partition
    /// check needs the row in a slot, so `store_tuple` pushes the tuple to `pages` directly.
    slotless: bool,
    /// Where the slots and their descriptor live: the memory context current when the buffer
    /// was made (the load's), not the batch memory a flush resets.
    memory: pg_sys::MemoryContext,
    last_used: u64,
    /// The target's indexes built at the end of the load (`index_build.rs`).
    deferred: Option<Deferred>,
}

impl Buffer {
    /// `routed`: a leaf partition found by tuple routing (else the target itself).
    ///
    /// # Safety
    /// `rri` is the target's result relation or one tuple routing returned for it.
    pub(super) unsafe fn new(
        rri: *mut pg_sys::ResultRelInfo,
        target: &Target,
        routed: bool,
    ) -> Buffer {
        // SAFETY: as the function's contract: `rri` and its relation are open.
        unsafe {
            let rel = (*rri).ri_RelationDesc;
            let deferred = if routed { None } else { target.deferred.take() };
            let needs = RowNeeds::of(rri);
            let foreign = !needs.foreign.is_null();
            let mut buffer = Buffer {
                rri,
                rel,
                slots: Vec::new(),
                linenos: Vec::new(),
                used: 0,
                bistate: match foreign {
                    false => pg_sys::GetBulkInsertState(),
                    true => std::ptr::null_mut(),
                },
                not_inserted: 0,
                slot_desc: std::ptr::null_mut(),
                slot_flags: 0,
                tuple_bytes: 0,
                extender: Extender::new(rel, target.ti_options),
                single: needs.before_row || target.single_rows || foreign,
                after_row: !target.transition_capture.is_null() || needs.after_row,
                partition_check: needs.is_partition && (!routed || needs.before_row),
                map: if routed {
                    compat::root_to_child_map(rri, target.estate)
                } else {
                    std::ptr::null_mut()
                },
                // the short path's rows of a plain table (a relation tuple routing found
                // takes the executor path)
                pages: match target.short_path && !routed && !foreign {
                    true => Pages::new(rel),
                    false => None,
                },
                slotless: false,
                memory: pg_sys::CurrentMemoryContext,
                last_used: 0,
                needs,
                deferred,
            };
            buffer.slotless = buffer.pages.is_some()
                && !buffer.needs.has_indexes
                && !buffer.after_row
                && (!buffer.needs.has_constraints || buffer.needs.not_null_only)
                && !buffer.partition_check
                && !buffer.single;
            buffer
        }
    }

    /// The next empty heap-tuple slot (created on first use, reused after).
    #[inline]
    pub(super) fn next_slot(&mut self) -> *mut pg_sys::TupleTableSlot {
        self.slot_at(self.used)
    }

    /// A slot to test a row's constraints in, for a buffer without slots (`slotless`), which
    /// holds no row in its slots.
    pub(super) fn test_slot(&mut self) -> *mut pg_sys::TupleTableSlot {
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
    /// The slots `0..used` hold rows stored by the batch for this relation.
    pub(super) unsafe fn flush(&mut self, batch: &BatchState, target: &Target, pos: &Position) {
        // Errors while rows are inserted name the last line read, without its text; in
        // single-row mode COPY inserts the row it has just read, its text still shown.
        if !self.single {
            pos.hide_text();
        }
        if !self.needs.foreign.is_null() {
            // SAFETY: as the function's contract.
            unsafe { self.flush_foreign(target) };
            return;
        }
        // SAFETY: as the function's contract: the batch's tuples are stored, none inserted.
        unsafe { self.check_deferred_keys(target) };
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
                    // the tuples were formed by the batch into the batch memory
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
            if let Some(d) = self.deferred.as_mut() {
                // the rows' TIDs, now that they are on heap pages
                match (self.slotless, &self.pages) {
                    (true, Some(p)) => d.attach_tids(p.tuples().iter().map(|&t| (*t).t_self)),
                    _ => d.attach_tids(self.slots[..self.used].iter().map(|&s| (*s).tts_tid)),
                }
            }
            if let Some(p) = &mut self.pages {
                p.clear();
            }
            // (without slots, nothing is left to do per row)
            let per_row = if self.slotless { 0 } else { self.used };
            for i in 0..per_row {
                let slot = self.slots[i];
                if !self.single && (self.needs.has_indexes || self.after_row) {
                    pos.at_line(self.linenos[i]);
                }
                let recheck = if self.needs.has_indexes {
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
                if batch.short_path {
                    slot::forget(slot, self.slot_flags);
                } else {
                    slot::clear(slot);
                }
            }
        }
        self.used = 0;
        self.tuple_bytes = 0;
    }

    /// Before the batch's rows reach the heap: the keys of the indexes built at the end
    /// checked for a repeat; at the first, the indexes are built from the rows before this
    /// batch and put back, and this batch and the rest go row by row (the server raises the
    /// error), their tuples moved into slots if they were not in any.
    ///
    /// # Safety
    /// As `flush`, before the heap insert.
    unsafe fn check_deferred_keys(&mut self, target: &Target) {
        let Some(d) = self.deferred.as_mut() else {
            return;
        };
        if !d.checks_keys() {
            return;
        }
        // SAFETY: as the function's contract: the slots `0..used`, or the page writer's
        // tuples without slots, hold the batch's tuples.
        let found = unsafe {
            match (self.slotless, &self.pages) {
                (true, Some(p)) => d.check_batch(p.tuples().iter().copied()),
                _ => d.check_batch(
                    self.slots[..self.used]
                        .iter()
                        .map(|&s| (*(s as *mut pg_sys::HeapTupleTableSlot)).tuple),
                ),
            }
        };
        if matches!(found, index_build::Batch::Deferred) {
            return;
        }
        pgrx::debug1!(
            "fastcopy: a key may repeat or the keys outgrew maintenance_work_mem: the indexes are built now, the rest of the load goes row by row"
        );
        let d = self.deferred.take().expect("checked above");
        // SAFETY: the table holds the load's rows before this batch only.
        unsafe { d.finish() };
        self.needs.has_indexes = true;
        if self.slotless {
            let tuples: Vec<pg_sys::HeapTuple> = self
                .pages
                .as_ref()
                .map(|p| p.tuples().to_vec())
                .unwrap_or_default();
            for (i, &t) in tuples.iter().enumerate() {
                let slot = self.slot_at(i);
                // SAFETY: a tuple formed for this relation, in the batch memory.
                unsafe { slot::store(slot, t, target.relid, self.slot_flags) };
            }
            if let Some(p) = &mut self.pages {
                p.clear();
            }
            self.slotless = false;
        }
    }

    /// `table_multi_insert` of the buffered rows from `done` on (those the page path left,
    /// see `Pages::insert`). Without slots, they are put into slots first, and the slots
    /// emptied after.
    ///
    /// # Safety
    /// As `flush`, in the batch memory context.
    unsafe fn multi_insert_rest(&mut self, done: usize, batch: &BatchState, target: &Target) {
        let n = self.used - done;
        let rest_tuples: Vec<pg_sys::HeapTuple> = match (&self.pages, self.slotless) {
            (Some(p), true) => p.tuples()[done..self.used].to_vec(),
            _ => Vec::new(),
        };
        let first = if self.slotless {
            let rest = &rest_tuples;
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
                for (i, &slot) in self.slots[..n].iter().enumerate() {
                    // the TID the server gave the row, kept in its tuple as the page
                    // writer keeps it (the entries of indexes built at the end need it)
                    let t = rest_tuples[i];
                    (*t).t_self = (*slot).tts_tid;
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
            let insert = (*self.needs.foreign)
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
    pub(super) unsafe fn finish(mut self, target: &Target) -> (u64, u64) {
        // SAFETY: as the function's contract: nothing uses the slots or the bulk-insert state
        // after this.
        unsafe {
            for slot in self.slots.drain(..) {
                pg_sys::ExecDropSingleTupleTableSlot(slot);
            }
            if !self.needs.foreign.is_null() {
                // the FDW's insert ends with the target (or tuple routing)
                return (0, 0);
            }
            self.extender.finish(self.rel, self.bistate);
            if let Some(p) = &self.pages {
                p.report(self.rel);
            }
            pg_sys::FreeBulkInsertState(self.bistate);
            pg_sys::table_finish_bulk_insert(self.rel, target.ti_options);
            // the indexes built at the end, before the AFTER triggers fire (`Target::close`)
            if let Some(d) = self.deferred.take() {
                d.finish();
            }
        }
        (
            self.extender.counts.pages_extended,
            self.extender.counts.extend_calls,
        )
    }

    /// The result relation.
    #[inline]
    pub(super) fn rri(&self) -> *mut pg_sys::ResultRelInfo {
        self.rri
    }

    /// Whether rows are pending.
    #[inline]
    pub(super) fn has_rows(&self) -> bool {
        self.used > 0
    }

    /// Rows go one at a time (COPY's `CIM_SINGLE`).
    #[inline]
    pub(super) fn single(&self) -> bool {
        self.single
    }

    /// Marks the buffer used at `tick` (the batch drops the least recently used).
    #[inline]
    pub(super) fn touch(&mut self, tick: u64) {
        self.last_used = tick;
    }

    pub(super) fn last_used(&self) -> u64 {
        self.last_used
    }

    /// Rows the FDW did not insert, since the last call.
    pub(super) fn take_not_inserted(&mut self) -> u64 {
        std::mem::take(&mut self.not_inserted)
    }

    /// Whether its rows have constraints or a partition constraint to check.
    pub(super) fn checks_rows(&self) -> bool {
        self.needs.has_constraints || self.partition_check
    }

    /// Whether a run of reader-formed tuples can go in without a step per row: no slots, not
    /// one row at a time, and no constraint that can fail for a formed tuple (a formed tuple
    /// has no NULL, so NOT NULL constraints alone pass).
    pub(super) fn takes_formed_runs(&self) -> bool {
        self.slotless
            && !self.single
            && (!self.needs.has_constraints || self.needs.not_null_only)
            && self.deferred.is_none()
    }

    /// Counts the row just stored in the next slot (or pushed to the page writer), from line
    /// `line`; true when rows go one at a time (the batch must be flushed now).
    #[inline]
    pub(super) fn record(&mut self, line: u64) -> bool {
        match self.linenos.get_mut(self.used) {
            Some(l) => *l = line,
            None => self.linenos.push(line),
        }
        self.used += 1;
        self.single
    }

    /// What a run of reader-formed rows updates: the page writer, the rows pending and the
    /// bytes their tuples take on pages (`None` without a page writer).
    #[inline]
    pub(super) fn run_parts(&mut self) -> Option<(&mut Pages, &mut usize, &mut usize)> {
        let pages = self.pages.as_mut()?;
        Some((pages, &mut self.used, &mut self.tuple_bytes))
    }

    /// The short path's rest: a tuple of the target into the buffer (the page writer's list,
    /// or a slot with the row's constraint checks), its page space counted (not the row: see
    /// [`record`](Self::record)).
    ///
    /// # Safety
    /// The target's own buffer, `target.short_path`; `tuple` was formed for it in the batch memory,
    /// `len` bytes long (its `t_len`), without a NULL in a NOT NULL column if `not_null_met`.
    #[inline(always)]
    pub(super) unsafe fn store_tuple(
        &mut self,
        target: &Target,
        tuple: pg_sys::HeapTuple,
        len: usize,
        not_null_met: bool,
    ) {
        // SAFETY: as the function's contract.
        unsafe {
            debug_assert_eq!((*tuple).t_len as usize, len);
            let needs = &self.needs;
            // a row without a NULL in its NOT NULL columns passes their constraints: nothing
            // to test when they are the only ones
            let constraints = needs.has_constraints
                && (!needs.not_null_only
                    || (!not_null_met && slot::has_null_in(tuple, &needs.not_null)));
            if self.slotless {
                // nothing needs the row in a slot: straight to the page writer (a row with a
                // NULL in a NOT NULL column through a slot first, for the server's error)
                if constraints {
                    let slot = self.test_slot();
                    slot::store(slot, tuple, target.relid, self.slot_flags);
                    check_row(target.rri, slot, target.estate, true, false);
                    slot::forget(slot, self.slot_flags);
                }
                let pages = self.pages.as_mut();
                pages
                    .expect("a buffer without slots has a page writer")
                    .push(tuple, target.batch_memory());
            } else {
                let slot = self.next_slot();
                slot::store(slot, tuple, target.relid, self.slot_flags);
                if constraints || self.partition_check {
                    check_row(
                        target.rri,
                        slot,
                        target.estate,
                        constraints,
                        self.partition_check,
                    );
                }
            }
            // (counted once the row passed its checks: a load that keeps failed rows as
            // rejects goes on after one that did not)
            self.tuple_bytes += page_space(len);
        }
    }

    /// The executor path, first half after routing: the row of the target's `input` slot
    /// copied into this buffer's next slot (in the slot's own memory, as a flush resets the
    /// batch memory the values are in), converted to the partition's row type where it
    /// differs.
    ///
    /// # Safety
    /// `!target.short_path`; `input` holds one converted row of the target.
    pub(super) unsafe fn stage(
        &mut self,
        target: &Target,
        input: *mut pg_sys::TupleTableSlot,
    ) -> Staged {
        // SAFETY: as the function's contract; the slots and the executor state are the
        // target's, alive for the load.
        unsafe {
            let (rri, map) = (self.rri, self.map);
            // Stored generated columns come after BEFORE ROW triggers, which need the row in
            // the buffer's slot. Without such triggers, and with the input slot's layout (no
            // partitions), they are computed on the input slot, whose values are at hand: the
            // row is then formed once, by the copy below, as COPY forms it once.
            let generated_done =
                self.needs.generated && !self.needs.before_row && target.routing.is_none();
            if generated_done {
                compat::exec::ExecComputeStoredGenerated(
                    rri,
                    target.estate,
                    input,
                    pg_sys::CmdType::CMD_INSERT,
                );
            }
            let slot = self.next_slot();
            if map.is_null() {
                slot::copy(slot, input);
            } else {
                pg_sys::execute_attr_map_slot((*map).attrMap, input, slot);
                slot::materialize(slot);
            }
            (*slot).tts_tableOid = (*(*rri).ri_RelationDesc).rd_id;
            Staged {
                rri,
                slot,
                generated_done,
            }
        }
    }

    /// The executor path, second half: BEFORE ROW triggers, stored generated columns and
    /// constraints of the staged row, its page space counted (not the row: see
    /// [`record`](Self::record)). `keep_failed`: a failed check is returned, not raised (each
    /// row's checks in a subtransaction of their own: the rows before it may have had their
    /// triggers run, and only the checks can be undone).
    ///
    /// # Safety
    /// `staged` came from this buffer's `stage`, its slot still the next slot.
    pub(super) unsafe fn finish_staged(
        &mut self,
        target: &Target,
        staged: Staged,
        keep_failed: bool,
    ) -> Checked {
        // SAFETY: as the function's contract: the staged slot is the buffer's next slot.
        unsafe {
            let Staged {
                rri,
                slot,
                generated_done,
            } = staged;
            debug_assert!(self.next_slot() == slot);
            if self.needs.before_row && !pg_sys::ExecBRInsertTriggers(target.estate, rri, slot) {
                slot::clear(slot);
                return Checked::SkippedByTrigger;
            }
            if self.needs.generated && !generated_done {
                compat::exec::ExecComputeStoredGenerated(
                    rri,
                    target.estate,
                    slot,
                    pg_sys::CmdType::CMD_INSERT,
                );
            }
            slot::materialize(slot);
            let tuple = (*(slot as *mut pg_sys::HeapTupleTableSlot)).tuple;
            // as on the short path: with only NOT NULL constraints, a row without a NULL in
            // those columns passes them
            let needs = &self.needs;
            let constraints = needs.has_constraints
                && (!needs.not_null_only || slot::has_null_in(tuple, &needs.not_null));
            let partition = self.partition_check;
            if (constraints || partition) && keep_failed {
                let checked = compat::in_subtransaction(std::panic::AssertUnwindSafe(|| {
                    check_row(rri, slot, target.estate, constraints, partition)
                }));
                if let Err(error) = checked {
                    if !(compat::check_failed() && compat::is_data_error(&error)) {
                        error.rethrow();
                    }
                    let column = self.failed_row(true);
                    return Checked::Failed(Box::new(FailedCheck { error, column }));
                }
            } else if constraints || partition {
                check_row(rri, slot, target.estate, constraints, partition);
            }
            self.tuple_bytes += page_space((*tuple).t_len as usize);
            Checked::Passed
        }
    }

    /// After a row failed its checks: the column of a NOT NULL violation (the first NOT NULL
    /// column that is NULL in it, the one `ExecConstraints` names), and the slot it was
    /// checked in emptied (its tuple freed if the slot `owned` it, else left to the batch
    /// memory).
    ///
    /// # Safety
    /// The last row stored into this buffer (into its test slot, or its next slot) failed
    /// its checks, and its tuple is still there.
    pub(super) unsafe fn failed_row(&mut self, owned: bool) -> Option<(std::ffi::CString, usize)> {
        let slot = if self.slotless {
            self.test_slot()
        } else {
            self.next_slot()
        };
        // SAFETY: as the function's contract: the slot holds the row's heap tuple (a heap-tuple
        // slot); its descriptor is the buffer relation's; every index is below `natts`.
        unsafe {
            let tuple = (*(slot as *mut pg_sys::HeapTupleTableSlot)).tuple;
            let desc = (*slot).tts_tupleDescriptor;
            let column = self
                .needs
                .not_null
                .iter()
                .find(|&&a| slot::has_null_in(tuple, &[a]))
                .map(|&a| {
                    let attr = compat::tuple_desc_attr(desc, a as usize);
                    let name = std::ffi::CStr::from_ptr(attr.attname.data.as_ptr());
                    (name.to_owned(), a as usize)
                });
            if owned {
                slot::clear(slot);
            } else {
                slot::forget(slot, self.slot_flags);
            }
            column
        }
    }
}

/// A routed row in its buffer's next slot, not yet through triggers and constraints.
pub struct Staged {
    rri: *mut pg_sys::ResultRelInfo,
    slot: *mut pg_sys::TupleTableSlot,
    /// Stored generated columns were computed on the input slot already.
    generated_done: bool,
}

impl Staged {
    /// The buffer's result relation.
    pub(super) fn rri(&self) -> *mut pg_sys::ResultRelInfo {
        self.rri
    }
}

/// What [`Buffer::finish_staged`] made of a row.
pub(super) enum Checked {
    Passed,
    /// A BEFORE ROW trigger returned NULL.
    SkippedByTrigger,
    /// The checks failed and the load keeps such rows (boxed: the server's error is large,
    /// and rare).
    Failed(Box<FailedCheck>),
}

/// A row's constraint check that failed, kept instead of raised (`Stored::FailedCheck`).
pub struct FailedCheck {
    pub error: pgrx::pg_sys::panic::CaughtError,
    /// For a NOT NULL violation, the column (its name and 0-based attribute number).
    pub column: Option<(std::ffi::CString, usize)>,
}

/// A tuple's place on a heap page: its MAXALIGNed length and a line pointer (what a buffer's
/// `tuple_bytes` counts, for the pages it will need).
#[inline(always)]
pub(super) fn page_space(len: usize) -> usize {
    len.next_multiple_of(8) + 4
}

/// NOT NULL / CHECK and partition constraints of a row. Out of line (see
/// `Loader::load_routed`); marked as the checks ([`compat::checking`]), so that a load that
/// keeps failed rows can tell their errors from others.
///
/// # Safety
/// `slot` holds a row of `rri`'s relation; `estate` is the load's executor state.
#[inline(never)]
unsafe fn check_row(
    rri: *mut pg_sys::ResultRelInfo,
    slot: *mut pg_sys::TupleTableSlot,
    estate: *mut pg_sys::EState,
    constraints: bool,
    partition: bool,
) {
    // SAFETY: as the function's contract.
    compat::checking(|| unsafe {
        if constraints {
            pg_sys::ExecConstraints(rri, slot, estate);
        }
        if partition {
            pg_sys::ExecPartitionCheck(rri, slot, estate, true);
        }
    })
}
