//! Relation extension on 16+: `ExtendBufferedRelBy`, the new pages handed to the heap's insert
//! path through the bulk-insert state's free-page range (`next_free..=last_free`), exactly as
//! `RelationAddBlocks` hands over the pages it extends by. `extend_method` bounds each call:
//! `zero` at most 8 blocks (md.c zero-fills those with pwritev), `fallocate` at least 9 (md.c
//! uses posix_fallocate above 8), `auto` as asked. Depends on nothing in `src/load`.

use super::{Counts, INVALID_BLOCK, record_free};
use crate::guc::{ExtendMethod, ExtendStrategy};
use pgrx::pg_sys;

/// `BulkInsertStateData` (access/hio.h of 16, 17 and 18), which pgrx leaves opaque. The
/// `GetBulkInsertState` pointers of the heap are cast to it, so its layout must be the C one:
/// checked at compile time below.
#[repr(C)]
struct BulkInsertStateMirror {
    strategy: pg_sys::BufferAccessStrategy,
    current_buf: pg_sys::Buffer,
    next_free: pg_sys::BlockNumber,
    last_free: pg_sys::BlockNumber,
    already_extended_by: u32,
}

// The layout of `BulkInsertStateData` on 64-bit Linux (`BufferAccessStrategy` a pointer,
// `Buffer` an int, `BlockNumber` and `uint32` 4-byte unsigned ints), the same in every minor
// release of 16, 17 and 18:
//         BufferAccessStrategy strategy;     offset 0
//         Buffer               current_buf;  offset 8
//         BlockNumber          next_free;    offset 12
//         BlockNumber          last_free;    offset 16
//         uint32               already_extended_by; offset 20
//                                            sizeof 24
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(offset_of!(BulkInsertStateMirror, strategy) == 0);
    assert!(offset_of!(BulkInsertStateMirror, current_buf) == 8);
    assert!(offset_of!(BulkInsertStateMirror, next_free) == 12);
    assert!(offset_of!(BulkInsertStateMirror, last_free) == 16);
    assert!(offset_of!(BulkInsertStateMirror, already_extended_by) == 20);
    assert!(size_of::<BulkInsertStateMirror>() == 24);
};

/// 16+'s extension: no state of its own (the range lives in the bulk-insert state).
pub(super) struct Mechanism;

impl Mechanism {
    pub(super) fn new(_save: usize) -> Mechanism {
        Mechanism
    }

    /// The strategy a load runs: the heap extends by as many pages as the insert needs, more
    /// when others wait for the lock (RelationAddBlocks), so `auto` has nothing to add here
    /// (measured: 0.94-1.04x of `server` at 1, 2 and 4 sessions into one table).
    pub(super) fn strategy(chosen: ExtendStrategy, _skip_fsm: bool) -> ExtendStrategy {
        match chosen {
            ExtendStrategy::Auto => ExtendStrategy::Server,
            other => other,
        }
    }

    /// New pages the insert path will use before it would extend by itself: the free-page
    /// range's.
    ///
    /// # Safety
    /// `bistate` points to a live `BulkInsertStateData` (from `GetBulkInsertState`, not yet
    /// freed) that nothing else uses during the call; on the backend thread.
    pub(super) unsafe fn pages_waiting(&self, bistate: pg_sys::BulkInsertState) -> u32 {
        // SAFETY: `bistate` is valid as the # Safety section requires, and the mirror has the C
        // layout (asserted above), so the reads read the C fields.
        unsafe {
            let b = bistate as *const BulkInsertStateMirror;
            if (*b).next_free == INVALID_BLOCK {
                0
            } else {
                (*b).last_free - (*b).next_free + 1
            }
        }
    }

    /// Extends by `n` pages (in as many calls as `method` and the buffer manager need) and
    /// hands them to the insert path; returns how many pages were added.
    ///
    /// # Safety
    /// `rel` is an open heap relation this backend holds at least RowExclusiveLock on, and
    /// `bistate` its live bulk-insert state (as for `pages_waiting`); on the backend thread,
    /// with no buffer content lock held (the relation extension lock is taken here).
    pub(super) unsafe fn extend(
        &mut self,
        rel: pg_sys::Relation,
        bistate: pg_sys::BulkInsertState,
        n: u32,
        method: ExtendMethod,
        counts: &mut Counts,
    ) -> u32 {
        // SAFETY: `rel` and `bistate` are valid as the # Safety section requires, the mirror has
        // the C layout (asserted above). `buffers` holds `ask` entries, at most that many are
        // written by `ExtendBufferedRelBy`, which returns them pinned (unlocked, flags 0) and
        // their number in `got` (at least 1); each of those is released once. The extension
        // lock taken here is released before returning (on ERROR, by the abort).
        unsafe {
            let b = bistate as *mut BulkInsertStateMirror;
            let mut buffers: Vec<pg_sys::Buffer> = Vec::new();
            let mut left = n;
            let mut added = 0;
            // The step holds the extension lock across its calls (`zero` makes one per 8
            // pages, and a call adds fewer pages than asked when the backend's buffer pins run
            // short); each call takes the lock again, which a backend's own lock allows.
            // Otherwise other sessions' extensions land between the calls, and the step breaks
            // into short ranges that go through the free space map.
            let lock = pg_sys::ExclusiveLock as pg_sys::LOCKMODE;
            pg_sys::LockRelationForExtension(rel, lock);
            while left > 0 {
                let ask = match method {
                    ExtendMethod::Zero => left.min(8),
                    ExtendMethod::Fallocate => left.max(9),
                    ExtendMethod::Auto => left,
                };
                buffers.resize(ask as usize, 0);
                let mut got = 0u32;
                let bmr = pg_sys::BufferManagerRelation {
                    rel,
                    smgr: std::ptr::null_mut(),
                    relpersistence: 0,
                };
                let first = pg_sys::ExtendBufferedRelBy(
                    bmr,
                    pg_sys::ForkNumber::MAIN_FORKNUM,
                    (*b).strategy,
                    0,
                    ask,
                    buffers.as_mut_ptr(),
                    &mut got,
                );
                for &buf in &buffers[..got as usize] {
                    pg_sys::ReleaseBuffer(buf);
                }
                counts.extend_calls += 1;
                counts.pages_extended += got as u64;
                let last = first + got - 1;
                if (*b).next_free != INVALID_BLOCK && first == (*b).last_free + 1 {
                    (*b).last_free = last;
                } else {
                    // someone else extended in between: the old range goes to the free space map
                    if (*b).next_free != INVALID_BLOCK {
                        record_free(rel, (*b).next_free, (*b).last_free);
                    }
                    (*b).next_free = first;
                    (*b).last_free = last;
                }
                left = left.saturating_sub(got);
                added += got;
            }
            pg_sys::UnlockRelationForExtension(rel, lock);
            added
        }
    }

    /// At the load's end (unless it skips the free space map): the free-page range's pages the
    /// heap did not use go to the free space map for later inserts.
    ///
    /// # Safety
    /// `rel` is an open heap relation and `bistate` its live bulk-insert state; on the backend
    /// thread, with no buffer content lock held.
    pub(super) unsafe fn release_waiting(
        &mut self,
        rel: pg_sys::Relation,
        bistate: pg_sys::BulkInsertState,
    ) {
        // SAFETY: as the # Safety section requires; the mirror has its C layout (asserted
        // above). The heap leaves `next_free..=last_free` either both InvalidBlockNumber or a
        // range of pages of `rel` it has not used, so `record_free` gets existing blocks.
        unsafe {
            let b = bistate as *mut BulkInsertStateMirror;
            if (*b).next_free != INVALID_BLOCK {
                record_free(rel, (*b).next_free, (*b).last_free);
                (*b).next_free = INVALID_BLOCK;
                (*b).last_free = INVALID_BLOCK;
            }
        }
    }

    /// Nothing: the heap's own inserts use the free-page range as the page path does.
    ///
    /// # Safety
    /// None here (the signature is the mechanisms' common one).
    pub(super) unsafe fn before_heap_insert(&mut self, _rel: pg_sys::Relation) {}

    /// Nothing: the heap extends by the pages the batch needs itself (`num_pages`).
    ///
    /// # Safety
    /// None here (the signature is the mechanisms' common one).
    pub(super) unsafe fn before_page(
        &mut self,
        _rel: pg_sys::Relation,
        _bistate: pg_sys::BulkInsertState,
        _len: usize,
        _cap: u32,
        _pages_left: impl FnOnce() -> usize,
        _counts: &mut Counts,
    ) {
    }
}
