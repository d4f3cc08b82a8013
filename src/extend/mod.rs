//! Relation extension strategies: `fastcopy.extend_strategy`, `extend_pages`, `extend_method`.
//!
//! With `server` fastcopy never extends the table: the heap's insert path does, as under COPY.
//! With `auto` (the default) too on 16+ (their heap extends by as many pages as an insert
//! needs, more when sessions compete). On 15, whose heap extends one page at a time (`P_NEW`:
//! a zero-filled write per page), `auto` gives the page path the page the heap would extend
//! by from a range added ahead (`before_page`: same pages, one write per range), and from the
//! first batch that finds another session extending the same table (its relation extension
//! lock held) on, the load extends as `sticky`. Alone, a load leaves the table as COPY does,
//! page for page; with others, it takes the extension lock once per step instead of once per
//! page (on 15, 4 sessions spent a third of their time waiting for it). With `fixed` or
//! `sticky`, before each batch goes to `table_multi_insert` or the page writer, fastcopy makes
//! sure enough new pages are waiting for it, so the heap never extends by itself.
//!
//! This file decides when and by how much (the strategy); how pages are added and handed to
//! the heap's insert path differs by version, one module per mechanism, each named after the
//! server function it stands on and each with the same methods:
//! - `extend_buffered_rel_by` (16+): `ExtendBufferedRelBy`, the new pages handed over through
//!   the bulk-insert state's free-page range, as `RelationAddBlocks` hands over its own.
//! - `smgrextend` (15): runs of zeroed buffers beyond the fork's end and one `smgrextend` per
//!   run, the pages handed over through the free space map, as 15's `RelationAddExtraBlocks`
//!   does; and `auto`'s range for the page path.
//!
//! Pages extended but not filled by the end of the load are left in the free space map.

#[cfg(not(feature = "pg15"))]
mod extend_buffered_rel_by;
#[cfg(feature = "pg15")]
mod smgrextend;

#[cfg(not(feature = "pg15"))]
use extend_buffered_rel_by::Mechanism;
#[cfg(feature = "pg15")]
use smgrextend::Mechanism;

use crate::guc::{self, ExtendMethod, ExtendStrategy};
use pgrx::pg_sys;

const BLCKSZ: usize = pg_sys::BLCKSZ as usize;
/// `SizeOfPageHeaderData`.
const PAGE_HEADER: usize = 24;
const INVALID_BLOCK: pg_sys::BlockNumber = pg_sys::InvalidBlockNumber;
/// `auto` looks for another session extending the table before every this many batches.
const PROBE_EVERY: u64 = 16;

/// What the extender did, for `load_result`.
#[derive(Default)]
pub struct Counts {
    pub pages_extended: u64,
    pub extend_calls: u64,
}

pub struct Extender {
    strategy: ExtendStrategy,
    method: ExtendMethod,
    cap: u32,
    /// Current step of `sticky` (0 until the first extension).
    step: u32,
    /// `auto`: another session was seen extending the table (from then on, `sticky`).
    contended: bool,
    /// `auto`: batches so far while not contended (every `PROBE_EVERY`th probes the lock).
    probes: u64,
    /// Bytes of a page available to tuples (fillfactor applied).
    usable: usize,
    /// TABLE_INSERT_SKIP_FSM: the heap leaves the free space map alone (a table created or
    /// truncated in this transaction), and so does `finish`.
    skip_fsm: bool,
    /// How this server's pages are added and handed over.
    mechanism: Mechanism,
    pub counts: Counts,
}

impl Extender {
    /// `ti_options` of the load: on 15 a table created in this transaction is filled without
    /// the free space map (TABLE_INSERT_SKIP_FSM), so pages could not be handed over there and
    /// the strategy falls back to `server`.
    pub fn new(rel: pg_sys::Relation, ti_options: i32) -> Extender {
        // SAFETY: `rel` is the open relation of the insert target being set up (`Buffer::new`
        // passes the result relation's `ri_RelationDesc`, opened and locked by the load), so
        // its relcache entry is valid for this call on the backend thread. For a heap table
        // `rd_options` is NULL or the `StdRdOptions` that `heap_reloptions` parsed, which is how
        // `RelationGetFillFactor` (utils/rel.h) reads it; other relations (a foreign table,
        // which the extender never extends) are not read.
        let fillfactor = unsafe {
            let opts = (*rel).rd_options as *const pg_sys::StdRdOptions;
            let heap = (*(*rel).rd_rel).relkind as u8 == pg_sys::RELKIND_RELATION;
            if opts.is_null() || !heap {
                100
            } else {
                (*opts).fillfactor as usize
            }
        };
        let save = BLCKSZ * (100 - fillfactor.clamp(10, 100)) / 100;
        let method = guc::EXTEND_METHOD.get();
        let mut cap = guc::EXTEND_PAGES.get() as u32;
        if method == ExtendMethod::Fallocate {
            cap = cap.max(9); // every call is at least 9 blocks
        }
        let skip_fsm = ti_options & pg_sys::TABLE_INSERT_SKIP_FSM as i32 != 0;
        Extender {
            strategy: Mechanism::strategy(guc::EXTEND_STRATEGY.get(), skip_fsm),
            method,
            cap,
            step: 0,
            contended: false,
            probes: 0,
            usable: BLCKSZ - PAGE_HEADER - save,
            skip_fsm,
            mechanism: Mechanism::new(save),
            counts: Counts::default(),
        }
    }

    /// Before a batch whose tuples take `bytes` (line pointers included) is inserted: extend
    /// the relation so that at least the pages it needs are waiting in the insert path.
    pub fn before_insert(
        &mut self,
        rel: pg_sys::Relation,
        bistate: pg_sys::BulkInsertState,
        bytes: usize,
    ) {
        match self.strategy {
            ExtendStrategy::Server => return,
            ExtendStrategy::Auto if !self.contended => {
                // (a probe takes the lock manager's partition lock: every 16th batch, 0.1% of
                // a lotsaints load rather than 4%)
                self.probes += 1;
                if self.probes % PROBE_EVERY != 1 {
                    return;
                }
                // SAFETY: `rel` is the open relation this load holds RowExclusiveLock on, on
                // the backend thread between the heap's insert calls (no buffer lock held).
                if unsafe { !others_extending(rel) } {
                    return;
                }
                self.contended = true;
            }
            _ => {}
        }
        let need = bytes.div_ceil(self.usable).max(1) as u32;
        // SAFETY: `bistate` is the live bulk-insert state of `rel` (`Buffer::flush` passes the
        // one `GetBulkInsertState` made for this buffer, freed only after `finish`), used on
        // the backend thread and by nobody else between the heap's insert calls.
        let mut have = unsafe { self.mechanism.pages_waiting(bistate) };
        while have < need {
            let step = match self.strategy {
                ExtendStrategy::Fixed => self.cap,
                _ => {
                    // sticky (and auto once contended): start at what this batch needs, double
                    // after, never shrink
                    self.step = if self.step == 0 {
                        need.min(self.cap)
                    } else {
                        (self.step * 2).min(self.cap)
                    };
                    self.step.max(if self.method == ExtendMethod::Fallocate {
                        9
                    } else {
                        1
                    })
                }
            };
            // SAFETY: as for `pages_waiting` above; `rel` is the open relation this load holds
            // RowExclusiveLock on, and no buffer lock is held between the heap's insert calls.
            have += unsafe {
                self.mechanism
                    .extend(rel, bistate, step, self.method, &mut self.counts)
            };
        }
    }

    /// After the last batch: pages still waiting go to the free space map for later inserts
    /// (where the heap extended with the map, it entered them itself, and again changes
    /// nothing), unless the load skips the map, as the heap then does (COPY FREEZE into a
    /// table created in the transaction leaves them out of it).
    pub fn finish(&mut self, rel: pg_sys::Relation, bistate: pg_sys::BulkInsertState) {
        if !self.skip_fsm {
            // SAFETY: `bistate` is the bulk-insert state of the open relation `rel`, still live
            // (`Buffer::finish` frees it with `FreeBulkInsertState` only after this), on the
            // backend thread, with no buffer content lock held.
            unsafe { self.mechanism.release_waiting(rel, bistate) };
        }
    }

    /// Before the heap's own insert path fills pages (`heap_multi_insert` for a batch the page
    /// path hands over, a single-row insert): 15 enters the pages reserved for the page path
    /// into the free space map, where the heap finds them in order; 16+ has nothing to do.
    pub fn before_heap_insert(&mut self, rel: pg_sys::Relation) {
        // SAFETY: `rel` is the open relation of this load (`Buffer::flush` passes its result
        // relation), on the backend thread, with no buffer content lock held.
        unsafe { self.mechanism.before_heap_insert(rel) };
    }

    /// The page path, before it asks `RelationGetBufferForTuple` for a page for a tuple of
    /// `len` bytes: 15 with `auto` takes the page the heap would extend by from a range added
    /// ahead (`pages_left`: how many pages the rest of the batch needs); 16+ has nothing to do
    /// (the heap extends by the pages the batch needs itself).
    ///
    /// # Safety
    /// `rel` is an open heap relation this backend holds RowExclusiveLock on and `bistate` its
    /// live bulk-insert state; on the backend thread, with no buffer content lock held.
    pub unsafe fn before_page(
        &mut self,
        rel: pg_sys::Relation,
        bistate: pg_sys::BulkInsertState,
        len: usize,
        pages_left: impl FnOnce() -> usize,
    ) {
        if self.strategy == ExtendStrategy::Auto {
            // SAFETY: as the # Safety section requires.
            unsafe {
                self.mechanism.before_page(
                    rel,
                    bistate,
                    len,
                    self.cap,
                    pages_left,
                    &mut self.counts,
                )
            };
        }
    }
}

/// Whether another session holds `rel`'s relation extension lock now: it cannot be taken
/// without waiting. (Taken, it is let go at once.)
///
/// # Safety
/// `rel` is an open relation this backend holds a lock on; on the backend thread, with no
/// buffer content lock held.
unsafe fn others_extending(rel: pg_sys::Relation) -> bool {
    let lock = pg_sys::ExclusiveLock as pg_sys::LOCKMODE;
    // SAFETY: as the # Safety section requires; a lock taken here is released before return.
    unsafe {
        if pg_sys::ConditionalLockRelationForExtension(rel, lock) {
            pg_sys::UnlockRelationForExtension(rel, lock);
            false
        } else {
            true
        }
    }
}

/// Enters new, empty pages `first..=last` into the free space map.
///
/// # Safety
/// `rel` is an open heap relation; `first..=last` are existing blocks of its main fork (so
/// `last` is below InvalidBlockNumber and `last + 1` does not overflow); on the backend thread.
unsafe fn record_free(
    rel: pg_sys::Relation,
    first: pg_sys::BlockNumber,
    last: pg_sys::BlockNumber,
) {
    // SAFETY: `rel` and the block range are valid as the # Safety section requires.
    unsafe {
        for blk in first..=last {
            pg_sys::RecordPageWithFreeSpace(rel, blk, BLCKSZ - PAGE_HEADER);
        }
        pg_sys::FreeSpaceMapVacuumRange(rel, first, last + 1);
    }
}
