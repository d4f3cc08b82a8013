//! A converted row into its buffer: the two ways from Datums to a buffered row.
//!
//! - [`Batch::store_fast`] (`Target::fast`: plain tables, AFTER triggers and foreign keys
//!   included): the tuple is formed straight into batch memory and checked against NOT NULL
//!   and CHECK constraints; no executor step per row.
//! - [`Batch::stage_routed`] then [`Batch::finish_routed`]: the executor path in `CopyFrom`'s
//!   order, where the executor must see each row (partition routing, BEFORE ROW triggers,
//!   stored generated columns). Between the two the loader flushes the batch when the row's
//!   relation takes rows one at a time ([`Batch::must_flush_before`]).

use super::batch::{Batch, FailedCheck};
use super::common::interrupt_pending;
use super::convert::Values;
use super::pages::Pages;
use super::slot;
use super::target::Target;
use super::tuple::{Arena, Former};
use crate::compat;
use fastcopy_core::input::Row;
use fastcopy_core::pipeline::{RowBlock, RowMark};
use pgrx::pg_sys;

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

/// A routed row in its buffer's next slot, not yet through triggers and constraints.
pub struct Staged {
    rri: *mut pg_sys::ResultRelInfo,
    slot: *mut pg_sys::TupleTableSlot,
    /// Stored generated columns were computed on the input slot already.
    generated_done: bool,
}

/// A tuple's place on a heap page: its MAXALIGNed length and a line pointer (what a batch's
/// `tuple_bytes` counts, for the pages it will need).
#[inline(always)]
fn page_space(len: usize) -> usize {
    len.next_multiple_of(8) + 4
}

/// How many rows ahead of the one it stores [`Batch::store_formed_run`] asks for a formed
/// tuple to be brought into the cache: a few hundred nanoseconds of the run's rows ahead.
const FORMED_AHEAD: usize = 32;

impl Batch {
    /// The short path: forms the tuple into the batch arena, stores it in the target's buffer,
    /// checks constraints.
    ///
    /// # Safety
    /// `target.fast`; `values` hold one converted row, in the batch memory.
    #[inline]
    pub unsafe fn store_fast(&mut self, target: &Target, values: &Values, row: RowMark) -> Stored {
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
    /// the batch memory, then as `store_fast`.
    ///
    /// # Safety
    /// `target.fast`; `formed` is a tuple of the target former's plan.
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
        let Some(buf) = self.buffers.first() else {
            return false;
        };
        target.fast && buf.slotless && !buf.single && (!buf.has_constraints || buf.not_null_only)
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
        let buf = &mut self.buffers[0];
        let Some(pages) = buf.pages.as_mut() else {
            return (from, false);
        };
        let (mut bytes, mut tuple_bytes) = (self.bytes, buf.tuple_bytes);
        // rows before `counted` are in the buffer's and the batch's counts
        let (mut r, mut counted) = (from, from);
        let mut full = false;
        // a cancel pending after row r - 1: the rows so far into the buffer's and the batch's
        // counts (the error, if it comes, leaves them as stored), then the check at that row
        macro_rules! cancel_check {
            () => {{
                buf.used += r - counted;
                self.used += r - counted;
                counted = r;
                buf.tuple_bytes = tuple_bytes;
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
        buf.used += r - counted;
        self.used += r - counted;
        buf.tuple_bytes = tuple_bytes;
        self.bytes = bytes;
        (r, full)
    }

    /// The short path's rest: the tuple into its buffer (the page writer's list, or a slot
    /// with the row's constraint checks).
    ///
    /// # Safety
    /// `target.fast`; `tuple` was formed for it in the batch memory, `len` bytes long (its
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
        unsafe {
            let buf = &mut self.buffers[0];
            debug_assert_eq!((*tuple).t_len as usize, len);
            // a row without a NULL in its NOT NULL columns passes their constraints: nothing
            // to test when they are the only ones
            let constraints = buf.has_constraints
                && (!buf.not_null_only
                    || (!not_null_met && slot::has_null_in(tuple, &buf.not_null)));
            if buf.slotless {
                // nothing needs the row in a slot: straight to the page writer (a row with a
                // NULL in a NOT NULL column through a slot first, for the server's error)
                if constraints {
                    let slot = buf.test_slot();
                    slot::store(slot, tuple, target.relid, buf.slot_flags);
                    check_row(target.rri, slot, target.estate, true, false);
                    slot::forget(slot, buf.slot_flags);
                }
                let pages = buf.pages.as_mut();
                pages
                    .expect("a buffer without slots has a page writer")
                    .push(tuple, target.batch_memory());
            } else {
                let slot = buf.next_slot();
                slot::store(slot, tuple, target.relid, buf.slot_flags);
                if constraints || buf.partition_check {
                    check_row(
                        target.rri,
                        slot,
                        target.estate,
                        constraints,
                        buf.partition_check,
                    );
                }
            }
            // (counted once the row passed its checks: a load that keeps failed rows as
            // rejects goes on after one that did not)
            buf.tuple_bytes += page_space(len);
            Stored::from_full(self.add(0, row.line_no, row.line_len))
        }
    }

    /// The executor path, first half: partition routing, then the row copied into the slot of
    /// its relation's buffer (in the slot's own memory, as a flush resets the batch memory the
    /// values are in).
    ///
    /// # Safety
    /// `!target.fast`; `values` hold one converted row.
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
            let buf = &mut self.buffers[b];
            let (rri, map) = (buf.rri, buf.map);
            // Stored generated columns come after BEFORE ROW triggers, which need the row in
            // the buffer's slot. Without such triggers, and with the input slot's layout (no
            // partitions), they are computed on the input slot, whose values are at hand: the
            // row is then formed once, by the copy below, as COPY forms it once.
            let generated_done = buf.generated && !buf.before_row && target.routing.is_none();
            if generated_done {
                compat::exec::ExecComputeStoredGenerated(
                    rri,
                    target.estate,
                    input,
                    pg_sys::CmdType::CMD_INSERT,
                );
            }
            let slot = buf.next_slot();
            if map.is_null() {
                slot::copy(slot, input);
            } else {
                pg_sys::execute_attr_map_slot((*map).attrMap, input, slot);
                slot::materialize(slot);
            }
            (*slot).tts_tableOid = (*(*rri).ri_RelationDesc).rd_id;
            (
                b,
                Staged {
                    rri,
                    slot,
                    generated_done,
                },
            )
        }
    }

    /// The executor path, second half: BEFORE ROW triggers, stored generated columns,
    /// constraints, and the row counted in its buffer.
    ///
    /// # Safety
    /// `staged` came from `stage_routed` of this batch, with no row staged since, and at most
    /// the flush [`Batch::must_flush_before`] asked for in between: that flush is only asked
    /// for a buffer that takes one row at a time and so has none pending, so the staged slot
    /// is still its next slot.
    pub unsafe fn finish_routed(&mut self, target: &Target, staged: Staged, row: &Row) -> Stored {
        // SAFETY: as the function's contract: the staged slot is the buffer's next slot.
        unsafe {
            let Staged {
                rri,
                slot,
                generated_done,
            } = staged;
            let b = self
                .index_of(rri)
                .expect("a staged row's buffer stays until its row is stored");
            let buf = &mut self.buffers[b];
            debug_assert!(buf.next_slot() == slot);
            if buf.before_row && !pg_sys::ExecBRInsertTriggers(target.estate, rri, slot) {
                slot::clear(slot);
                return Stored::SkippedByTrigger;
            }
            if buf.generated && !generated_done {
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
            let constraints = buf.has_constraints
                && (!buf.not_null_only || slot::has_null_in(tuple, &buf.not_null));
            if (constraints || buf.partition_check) && self.keep_failed_checks {
                // each row's checks in a subtransaction of their own (the rows before it may
                // have had their triggers run: only the checks can be undone)
                let partition = buf.partition_check;
                let checked = compat::in_subtransaction(std::panic::AssertUnwindSafe(|| {
                    check_row(rri, slot, target.estate, constraints, partition)
                }));
                if let Err(error) = checked {
                    if !(compat::check_failed() && compat::is_data_error(&error)) {
                        error.rethrow();
                    }
                    let column = self.failed_row(b, true);
                    self.failed_check = Some(FailedCheck { error, column });
                    return Stored::FailedCheck;
                }
            } else if constraints || buf.partition_check {
                check_row(rri, slot, target.estate, constraints, buf.partition_check);
            }
            let buf = &mut self.buffers[b];
            buf.tuple_bytes += page_space((*tuple).t_len as usize);
            Stored::from_full(self.add(b, row.line_no(), row.line_len()))
        }
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

impl Batch {
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
}

impl Batch {
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

    /// After a row of buffer `b` failed its checks: the column of a NOT NULL violation (the
    /// first NOT NULL column that is NULL in it, the one `ExecConstraints` names), and the
    /// slot it was checked in emptied (its tuple freed if the slot `owned` it, else left to
    /// the batch memory).
    ///
    /// # Safety
    /// The last row stored into buffer `b` (into its test slot, or its next slot) failed
    /// its checks, and its tuple is still there.
    pub unsafe fn failed_row(
        &mut self,
        b: usize,
        owned: bool,
    ) -> Option<(std::ffi::CString, usize)> {
        let buf = &mut self.buffers[b];
        let slot = if buf.slotless {
            buf.test_slot()
        } else {
            buf.next_slot()
        };
        // SAFETY: as the function's contract: the slot holds the row's heap tuple (a heap-tuple
        // slot); its descriptor is the buffer relation's; every index is below `natts`.
        unsafe {
            let tuple = (*(slot as *mut pg_sys::HeapTupleTableSlot)).tuple;
            let desc = (*slot).tts_tupleDescriptor;
            let column = buf
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
                slot::forget(slot, buf.slot_flags);
            }
            column
        }
    }
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
