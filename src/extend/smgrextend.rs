//! Relation extension on 15: the step's buffers taken beyond the fork's end (zeroed, locked,
//! read from nowhere), then one zero-filled write of the last block extends the fork over them
//! (`smgrextend`; only `auto`/`zero` exist here); each page entered into the free space map,
//! as 15's own `RelationAddExtraBlocks` does. And `auto`'s help for the page path: 15's heap
//! extends one page at a time (`P_NEW`), so the page path takes the page the heap would extend
//! by from a range added ahead ([`Mechanism::before_page`]). Depends on nothing in `src/load`
//! but the heap layout.

use super::{BLCKSZ, Counts, INVALID_BLOCK, PAGE_HEADER, record_free};
use crate::guc::{ExtendMethod, ExtendStrategy};
use pgrx::pg_sys;

/// `BulkInsertStateData` (access/hio.h of 15: `{ strategy, current_buf }`), which pgrx leaves
/// opaque. The `GetBulkInsertState` pointers of the heap are cast to it, so its layout must be
/// the C one: checked at compile time below.
#[repr(C)]
struct BulkInsertStateMirror {
    strategy: pg_sys::BufferAccessStrategy,
    current_buf: pg_sys::Buffer,
}

// The layout of 15's `BulkInsertStateData` on 64-bit Linux (`BufferAccessStrategy` a pointer,
// `Buffer` an int), the same in every minor release:
//         BufferAccessStrategy strategy;     offset 0
//         Buffer               current_buf;  offset 8
//         (4 bytes of tail padding)          sizeof 16
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(offset_of!(BulkInsertStateMirror, strategy) == 0);
    assert!(offset_of!(BulkInsertStateMirror, current_buf) == 8);
    assert!(size_of::<BulkInsertStateMirror>() == 16);
};

/// 15's extension state.
pub(super) struct Mechanism {
    /// The last block fastcopy added (pages up to it are in the free space map).
    last_added: pg_sys::BlockNumber,
    /// The zero page each extension writes.
    zero_page: Box<[u8]>,
    /// `auto`: pages added for the page path and not yet used, `next..=last` (none: both
    /// InvalidBlockNumber), kept out of the free space map (see `before_page`).
    reserved: (pg_sys::BlockNumber, pg_sys::BlockNumber),
    /// Bytes a page keeps free under the fillfactor (`RelationGetTargetPageFreeSpace`).
    save: usize,
}

impl Mechanism {
    pub(super) fn new(save: usize) -> Mechanism {
        Mechanism {
            last_added: INVALID_BLOCK,
            zero_page: vec![0; BLCKSZ].into_boxed_slice(),
            reserved: (INVALID_BLOCK, INVALID_BLOCK),
            save,
        }
    }

    /// The strategy a load runs: a table created in this transaction is filled without the
    /// free space map (TABLE_INSERT_SKIP_FSM), so pages could not be handed over there and the
    /// strategy falls back to `server`.
    pub(super) fn strategy(chosen: ExtendStrategy, skip_fsm: bool) -> ExtendStrategy {
        if skip_fsm {
            ExtendStrategy::Server
        } else {
            chosen
        }
    }

    /// New pages the insert path will use before it would extend by itself: those after the
    /// page it fills now, up to the last one added (it takes the free-space-map pages in
    /// order).
    ///
    /// # Safety
    /// `bistate` points to a live `BulkInsertStateData` (from `GetBulkInsertState`, not yet
    /// freed) that nothing else uses during the call; on the backend thread.
    pub(super) unsafe fn pages_waiting(&self, bistate: pg_sys::BulkInsertState) -> u32 {
        if self.last_added == INVALID_BLOCK {
            return 0;
        }
        // SAFETY: `bistate` is valid as the # Safety section requires, and the mirror has the C
        // layout (asserted above), so the reads read the C fields. A `current_buf` other than
        // InvalidBuffer (0) is a buffer the bulk-insert state holds a pin on, as
        // `BufferGetBlockNumber` requires.
        let current = unsafe {
            let b = bistate as *const BulkInsertStateMirror;
            if (*b).current_buf != 0 {
                pg_sys::BufferGetBlockNumber((*b).current_buf)
            } else {
                0
            }
        };
        self.last_added.saturating_sub(current)
    }

    /// `n` pages handed to the insert path through the free space map, where it finds them (as
    /// 15's own `RelationAddExtraBlocks` hands over the pages it adds); `method` is `auto` or
    /// `zero`, the same here.
    ///
    /// # Safety
    /// `rel` is an open heap relation this backend holds at least RowExclusiveLock on,
    /// `bistate` its live bulk-insert state; on the backend thread, with no buffer content
    /// lock held.
    pub(super) unsafe fn extend(
        &mut self,
        rel: pg_sys::Relation,
        bistate: pg_sys::BulkInsertState,
        n: u32,
        _method: ExtendMethod,
        counts: &mut Counts,
    ) -> u32 {
        // SAFETY: as the # Safety section requires; `first..first + n` are blocks `add_pages`
        // has just added to `rel`.
        unsafe {
            let first = self.add_pages(rel, bistate, n, counts);
            record_free(rel, first, first + n - 1);
            self.last_added = first + n - 1;
            n
        }
    }

    /// At the load's end (unless it skips the free space map): the pages `extend` added are in
    /// the map already; those reserved for the page path and not used go there now.
    ///
    /// # Safety
    /// `rel` is an open heap relation; on the backend thread, with no buffer content lock held.
    pub(super) unsafe fn release_waiting(
        &mut self,
        rel: pg_sys::Relation,
        _bistate: pg_sys::BulkInsertState,
    ) {
        // SAFETY: as the # Safety section requires.
        unsafe { self.release_reserved(rel) };
    }

    /// Before the heap's own insert path fills pages: the pages reserved for the page path go
    /// to the free space map, where the heap finds them in order, as it finds the pages
    /// `extend` adds; the heap would extend past them otherwise.
    ///
    /// # Safety
    /// `rel` is an open heap relation; on the backend thread, with no buffer content lock held.
    pub(super) unsafe fn before_heap_insert(&mut self, rel: pg_sys::Relation) {
        // SAFETY: as the # Safety section requires.
        unsafe { self.release_reserved(rel) };
    }

    /// The reserved pages not used into the free space map (as `RelationAddExtraBlocks`
    /// enters the pages it adds).
    ///
    /// # Safety
    /// `rel` is an open heap relation; on the backend thread, with no buffer content lock held.
    unsafe fn release_reserved(&mut self, rel: pg_sys::Relation) {
        let (next, last) = self.reserved;
        if next == INVALID_BLOCK {
            return;
        }
        self.reserved = (INVALID_BLOCK, INVALID_BLOCK);
        // SAFETY: `next..=last` are blocks of `rel` that `before_page` added (below the fork's
        // end); `rel` is valid as the # Safety section requires.
        unsafe { record_free(rel, next, last) };
    }

    /// `auto`, the page path, before it asks `RelationGetBufferForTuple` for a page for a tuple of
    /// `len` bytes. 15's heap extends a table by one page at a time (`P_NEW`: one zero-filled
    /// write and a file-size lookup per page, 16+ extends by many). With `auto` the page path
    /// takes the pages it needs from a range added ahead instead (`reserve`, up to
    /// `extend_pages` at a time, as many as `pages_left` says the rest of the batch needs),
    /// at exactly the point where the heap would extend, and so gets the same page: the
    /// heap's own steps before that are taken here, with its arguments: the page it inserted
    /// into last (the bulk-insert state's) is used while the tuple fits there, under the
    /// fillfactor (`targetFreeSpace` as hio.c computes it); otherwise its free space is
    /// recorded and the free space map asked for another page, as `RecordAndGetPageWithFreeSpace`
    /// is asked in the heap's loop. The page the map gives, else the next reserved one, becomes
    /// the bulk-insert state's page, where `RelationGetBufferForTuple` then starts (a reserved
    /// page is new: it initializes it, as after `P_NEW`). The reserved pages are in no free
    /// space map until the load ends (then `release_waiting` enters those left), so no other session
    /// takes them, and the map's answers are the ones COPY gets.
    ///
    /// # Safety
    /// `rel` is an open heap relation this backend holds RowExclusiveLock on and `bistate` its
    /// live bulk-insert state; on the backend thread, with no buffer content lock held.
    pub(super) unsafe fn before_page(
        &mut self,
        rel: pg_sys::Relation,
        bistate: pg_sys::BulkInsertState,
        len: usize,
        cap: u32,
        pages_left: impl FnOnce() -> usize,
        counts: &mut Counts,
    ) {
        use crate::load::heap_layout::{LINE_POINTER, MAX_TUPLES_PER_PAGE, maxalign};
        // hio.c: MaxHeapTupleSize and its "nearly empty" page
        const MAX_TUPLE: usize = BLCKSZ - maxalign(PAGE_HEADER + LINE_POINTER);
        const NEARLY_EMPTY: usize = MAX_TUPLE - MAX_TUPLES_PER_PAGE / 8 * LINE_POINTER;
        let len = maxalign(len);
        if len > MAX_TUPLE {
            return; // the heap's ERROR
        }
        let target = if len + self.save > NEARLY_EMPTY {
            len.max(NEARLY_EMPTY)
        } else {
            len + self.save
        };
        // SAFETY: as the # Safety section requires; the mirror has the C layout (asserted
        // above). A `current_buf` other than InvalidBuffer (0) is pinned by the bulk-insert
        // state, so its page may be read under a share lock; the pin is handed back with
        // `ReleaseBuffer` when another buffer takes its place, as `ReadBufferBI` does.
        unsafe {
            let b = bistate as *mut BulkInsertStateMirror;
            let current = (*b).current_buf;
            if current == 0 {
                return; // the load's first page: the heap's own search
            }
            pg_sys::LockBuffer(current, pg_sys::BUFFER_LOCK_SHARE as i32);
            let free = pg_sys::PageGetHeapFreeSpace(pg_sys::BufferGetPage(current));
            pg_sys::LockBuffer(current, pg_sys::BUFFER_LOCK_UNLOCK as i32);
            if target <= free {
                return; // the heap fills its page further
            }
            let page = pg_sys::BufferGetBlockNumber(current);
            let mut next =
                pg_sys::RecordAndGetPageWithFreeSpace(rel, page, free, target as pg_sys::Size);
            if next == INVALID_BLOCK {
                // where the heap would extend: the next reserved page
                if self.reserved.0 == INVALID_BLOCK {
                    let n = (pages_left() as u32).clamp(1, cap);
                    let first = self.add_pages(rel, bistate, n, counts);
                    self.reserved = (first, first + n - 1);
                }
                let (first, last) = self.reserved;
                next = first;
                self.reserved = if first == last {
                    (INVALID_BLOCK, INVALID_BLOCK)
                } else {
                    (first + 1, last)
                };
            }
            pg_sys::ReleaseBuffer(current);
            (*b).current_buf = pg_sys::ReadBufferExtended(
                rel,
                pg_sys::ForkNumber::MAIN_FORKNUM,
                next,
                pg_sys::ReadBufferMode::RBM_NORMAL,
                (*b).strategy,
            );
        }
    }

    /// Adds `n` new pages at the fork's end, in runs of at most `RUN` pages under the
    /// extension lock; returns the first. A run's pages get their buffers first, beyond the
    /// fork's end, zeroed without a read and locked (`RBM_ZERO_AND_LOCK`): nobody else can see
    /// them yet. Then one zero-filled write of the run's last page extends the fork over all
    /// of them (md.c: writing beyond the end leaves the pages before it reading as zeros, as a
    /// new page is); `P_NEW` instead writes every page, and asks the kernel for the file size
    /// before each (an `lseek`; 15 caches it only in recovery). The buffers are then released,
    /// valid and empty. A run stays inside one segment file (md.c takes a segment shorter than
    /// a whole one for the fork's last).
    ///
    /// # Safety
    /// As for `extend`.
    unsafe fn add_pages(
        &mut self,
        rel: pg_sys::Relation,
        bistate: pg_sys::BulkInsertState,
        n: u32,
        counts: &mut Counts,
    ) -> pg_sys::BlockNumber {
        /// Buffers one run holds locked (15 allows a backend 200 LWLocks at once).
        const RUN: u32 = 64;
        // SAFETY: `rel` and `bistate` are valid as the # Safety section requires, the mirror has
        // the C layout (asserted above). `relname` is a NUL-terminated NameData in the relcache
        // entry. Under the extension lock nobody else extends the fork, so the run's blocks
        // (at and beyond its end) are in no buffer of anyone's and no one reads them before
        // `smgrextend` has made them part of the fork; `ReadBufferExtended` in
        // `RBM_ZERO_AND_LOCK` mode neither reads nor checks the fork's size, and returns each
        // buffer pinned and locked; each is released once, after the write. `zero_page` is
        // BLCKSZ bytes, what `smgrextend` reads (it does not write through the pointer). The
        // extension lock is released before returning (on ERROR, by the abort, which also
        // releases the buffers).
        unsafe {
            let b = bistate as *mut BulkInsertStateMirror;
            let main = pg_sys::ForkNumber::MAIN_FORKNUM;
            let lock = pg_sys::ExclusiveLock as pg_sys::LOCKMODE;
            pg_sys::LockRelationForExtension(rel, lock);
            let first = pg_sys::smgrnblocks(relation_smgr(rel), main);
            // `MaxBlockNumber` (storage/block.h), the limit `P_NEW` checks.
            const MAX_BLOCK: u64 = 0xFFFF_FFFE;
            if first as u64 + n as u64 > MAX_BLOCK {
                let name = std::ffi::CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr());
                crate::error::raise(
                    pgrx::PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                    format!(
                        "cannot extend relation {} beyond {MAX_BLOCK} blocks",
                        name.to_string_lossy()
                    ),
                );
            }
            let zeros = self.zero_page.as_mut_ptr() as *mut std::ffi::c_char;
            let mut buffers = Vec::with_capacity(RUN as usize);
            let mut next = first;
            while next < first + n {
                let seg_left = pg_sys::RELSEG_SIZE - next % pg_sys::RELSEG_SIZE;
                let run = (first + n - next).min(RUN).min(seg_left);
                buffers.clear();
                for blk in next..next + run {
                    buffers.push(pg_sys::ReadBufferExtended(
                        rel,
                        main,
                        blk,
                        pg_sys::ReadBufferMode::RBM_ZERO_AND_LOCK,
                        (*b).strategy,
                    ));
                }
                pg_sys::smgrextend(relation_smgr(rel), main, next + run - 1, zeros, false);
                for &buf in &buffers {
                    pg_sys::UnlockReleaseBuffer(buf);
                }
                counts.extend_calls += 1;
                next += run;
            }
            pg_sys::UnlockRelationForExtension(rel, lock);
            counts.pages_extended += n as u64;
            first
        }
    }
}

/// 15's `RelationGetSmgr` (a static inline in utils/rel.h): the relation's storage manager
/// handle, opened if the relation cache closed it.
///
/// # Safety
/// `rel` is an open relation (its relcache entry pinned by this backend); on the backend
/// thread. The handle is valid until the next relcache invalidation of `rel` is processed.
unsafe fn relation_smgr(rel: pg_sys::Relation) -> pg_sys::SMgrRelation {
    // SAFETY: `rel` is valid as the # Safety section requires; as `RelationGetSmgr` does, the
    // opened handle is given to the relcache entry as owner (`smgrsetowner`), which closes it.
    unsafe {
        if (*rel).rd_smgr.is_null() {
            let smgr = pg_sys::smgropen((*rel).rd_node, (*rel).rd_backend);
            pg_sys::smgrsetowner(&mut (*rel).rd_smgr, smgr);
        }
        (*rel).rd_smgr
    }
}
