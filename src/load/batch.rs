//! The insert buffer: up to `max_tuples` slots or `max_bytes` of input, inserted with one
//! `table_multi_insert` per flush, then their index entries, as COPY's
//! `CopyMultiInsertBufferFlush` does.

use super::context::Position;
use super::target::Target;
use super::tuple::{self, Arena};
use crate::compat;
use crate::extend::Extender;
use pgrx::pg_sys;

pub struct Batch {
    slots: Vec<*mut pg_sys::TupleTableSlot>,
    linenos: Vec<u64>,
    used: usize,
    bytes: usize,
    max_tuples: usize,
    max_bytes: usize,
    bistate: pg_sys::BulkInsertState,
    cid: pg_sys::CommandId,
    /// Where the fixed-width tuples of the current batch are formed.
    pub arena: Arena,
    /// The slots' tuple descriptor (see `next_slot`).
    slot_desc: pg_sys::TupleDesc,
    /// `tuple::constant_flags` of the slots (all made alike).
    pub slot_flags: u16,
    /// Bytes the buffered tuples will take on heap pages (line pointers included).
    pub tuple_bytes: usize,
    /// Relation extension ahead of the heap (fastcopy.extend_strategy).
    pub extender: Extender,
    pub flushes: u64,
}

impl Batch {
    pub fn new(target: &Target, max_tuples: usize, max_bytes: usize) -> Batch {
        unsafe {
            Batch {
                slots: Vec::new(),
                linenos: Vec::new(),
                used: 0,
                bytes: 0,
                max_tuples,
                max_bytes,
                bistate: pg_sys::GetBulkInsertState(),
                cid: pg_sys::GetCurrentCommandId(true),
                arena: Arena::new(),
                slot_desc: std::ptr::null_mut(),
                slot_flags: 0,
                tuple_bytes: 0,
                extender: Extender::new(target.rel, target.ti_options),
                flushes: 0,
            }
        }
    }

    /// The next empty heap-tuple slot (created on first use, reused after).
    #[inline]
    pub fn next_slot(&mut self, target: &Target) -> *mut pg_sys::TupleTableSlot {
        if self.used == self.slots.len() {
            if self.slot_desc.is_null() {
                // A copy of the relation's descriptor that is not reference-counted: slots of
                // the relation's own would each pin it in the resource owner, and with
                // thousands of slots every buffer pin of the insert path pays for that.
                self.slot_desc = unsafe { pg_sys::CreateTupleDescCopy((*target.rel).rd_att) };
            }
            let slot = unsafe {
                pg_sys::MakeSingleTupleTableSlot(self.slot_desc, &raw const pg_sys::TTSOpsHeapTuple)
            };
            self.slot_flags = unsafe { tuple::constant_flags(slot) };
            self.slots.push(slot);
            self.linenos.push(0);
        }
        self.slots[self.used]
    }

    /// Records the row just stored in the slot from `next_slot`; true when the batch is full.
    #[inline]
    pub fn add(&mut self, line: u64, raw_len: usize) -> bool {
        self.linenos[self.used] = line;
        self.used += 1;
        self.bytes += raw_len;
        self.used >= self.max_tuples || self.bytes >= self.max_bytes
    }

    /// Inserts the buffered rows and their index entries; resets the batch memory.
    pub fn flush(&mut self, target: &Target, pos: &mut Position) {
        if self.used == 0 {
            return;
        }
        unsafe {
            self.extender
                .before_insert(target.rel, self.bistate, self.tuple_bytes);
            let mem = (*target.econtext).ecxt_per_tuple_memory;
            let old = pg_sys::MemoryContextSwitchTo(mem);
            pg_sys::table_multi_insert(
                target.rel,
                self.slots.as_mut_ptr(),
                self.used as i32,
                self.cid,
                target.ti_options,
                self.bistate,
            );
            pg_sys::MemoryContextSwitchTo(old);
            for i in 0..self.used {
                let slot = self.slots[i];
                if target.has_indexes {
                    pos.at_line(self.linenos[i]);
                    let recheck = compat::insert_index_tuples(target.rri, slot, target.estate);
                    pg_sys::list_free(recheck);
                }
                tuple::forget(slot, self.slot_flags);
            }
            pg_sys::MemoryContextReset(mem);
        }
        self.arena.reset();
        self.used = 0;
        self.bytes = 0;
        self.tuple_bytes = 0;
        self.flushes += 1;
    }

    /// Ends the load's bulk insert (after the last flush).
    pub fn finish(mut self, target: &Target) {
        unsafe {
            for slot in self.slots.drain(..) {
                pg_sys::ExecDropSingleTupleTableSlot(slot);
            }
            self.extender.finish(target.rel, self.bistate);
            pg_sys::FreeBulkInsertState(self.bistate);
            pg_sys::table_finish_bulk_insert(target.rel, target.ti_options);
        }
    }
}
