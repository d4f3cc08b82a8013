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
//! page (on 15, 4 sessions spent a third of their time waiting for it). With `fixed` or `sticky`, before
//! each batch goes to `table_multi_insert` or the page writer,
//! fastcopy makes sure enough new pages are waiting for it, so the heap never extends by itself:
//! - PostgreSQL 16+: `ExtendBufferedRelBy`, and the new pages handed to the heap's insert path
//!   through the bulk-insert state's free-page range (`next_free..=last_free`), exactly as
//!   `RelationAddBlocks` hands over the pages it extends by. `extend_method` bounds each call:
//!   `zero` at most 8 blocks (md.c zero-fills those with pwritev), `fallocate` at least 9
//!   (md.c uses posix_fallocate above 8), `auto` as asked.
//! - PostgreSQL 15: the step's buffers taken beyond the fork's end (zeroed, locked, read from
//!   nowhere), then one zero-filled write of the last block extends the fork over them (only
//!   `auto`/`zero` exist there); each page entered into the free space map, as 15's own
//!   `RelationAddExtraBlocks` does.
//!
//! Pages extended but not filled by the end of the load are left in the free space map.
//! The struct layouts and calls that differ between versions are in this file only.

use crate::guc::{self, ExtendMethod, ExtendStrategy};
use pgrx::pg_sys;

const BLCKSZ: usize = pg_sys::BLCKSZ as usize;
/// `SizeOfPageHeaderData`.
const PAGE_HEADER: usize = 24;
const INVALID_BLOCK: pg_sys::BlockNumber = pg_sys::InvalidBlockNumber;
/// `auto` looks for another session extending the table before every this many batches.
const PROBE_EVERY: u64 = 16;

/// `BulkInsertStateData` (access/hio.h), which pgrx leaves opaque.
/// 15: `{ strategy, current_buf }`; 16 and 17 add the free-page range of a bulk extension.
/// The `GetBulkInsertState` pointers of the heap are cast to it, so its layout must be the C
/// one: checked at compile time below.
#[repr(C)]
struct BulkInsertStateMirror {
    strategy: pg_sys::BufferAccessStrategy,
    current_buf: pg_sys::Buffer,
    #[cfg(not(feature = "pg15"))]
    next_free: pg_sys::BlockNumber,
    #[cfg(not(feature = "pg15"))]
    last_free: pg_sys::BlockNumber,
    #[cfg(not(feature = "pg15"))]
    already_extended_by: u32,
}

// The layout of `BulkInsertStateData` as access/hio.h of 15, 16 and 17 lays it out on 64-bit
// Linux (`BufferAccessStrategy` a pointer, `Buffer` an int, `BlockNumber` and `uint32`
// 4-byte unsigned ints), the same in every minor release of each:
// 15:     BufferAccessStrategy strategy;     offset 0
//         Buffer               current_buf;  offset 8
//         (4 bytes of tail padding)          sizeof 16
// 16, 17: BufferAccessStrategy strategy;     offset 0
//         Buffer               current_buf;  offset 8
//         BlockNumber          next_free;    offset 12
//         BlockNumber          last_free;    offset 16
//         uint32               already_extended_by; offset 20
//                                            sizeof 24
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::offset_of!(BulkInsertStateMirror, strategy) == 0);
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::offset_of!(BulkInsertStateMirror, current_buf) == 8);
#[cfg(all(target_pointer_width = "64", feature = "pg15"))]
const _: () = assert!(std::mem::size_of::<BulkInsertStateMirror>() == 16);
#[cfg(all(target_pointer_width = "64", not(feature = "pg15")))]
const _: () = assert!(std::mem::offset_of!(BulkInsertStateMirror, next_free) == 12);
#[cfg(all(target_pointer_width = "64", not(feature = "pg15")))]
const _: () = assert!(std::mem::offset_of!(BulkInsertStateMirror, last_free) == 16);
#[cfg(all(target_pointer_width = "64", not(feature = "pg15")))]
const _: () = assert!(std::mem::offset_of!(BulkInsertStateMirror, already_extended_by) == 20);
#[cfg(all(target_pointer_width = "64", not(feature = "pg15")))]
const _: () = assert!(std::mem::size_of::<BulkInsertStateMirror>() == 24);

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
    /// 15: the last block fastcopy added (pages up to it are in the free space map).
    #[cfg(feature = "pg15")]
    last_added: pg_sys::BlockNumber,
    /// 15: the zero page each extension writes.
    #[cfg(feature = "pg15")]
    zero_page: Box<[u8]>,
    /// 15, `auto`: pages added for the page path and not yet used, `next..=last` (none: both
    /// InvalidBlockNumber), kept out of the free space map (see `before_page`).
    #[cfg(feature = "pg15")]
    reserved: (pg_sys::BlockNumber, pg_sys::BlockNumber),
    /// Bytes a page keeps free under the fillfactor (`RelationGetTargetPageFreeSpace`).
    #[cfg(feature = "pg15")]
    save: usize,
    /// TABLE_INSERT_SKIP_FSM: the heap leaves the free space map alone (a table created or
    /// truncated in this transaction), and so does `finish`.
    skip_fsm: bool,
    pub pages_extended: u64,
    pub extend_calls: u64,
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
        let mut strategy = guc::EXTEND_STRATEGY.get();
        let skip_fsm = ti_options & pg_sys::TABLE_INSERT_SKIP_FSM as i32 != 0;
        if cfg!(feature = "pg15") && skip_fsm {
            strategy = ExtendStrategy::Server;
        }
        // 16+: the heap extends by as many pages as the insert needs, more when others wait
        // for the lock (RelationAddBlocks), so `auto` has nothing to add there (measured: 0.94-
        // 1.04x of `server` at 1, 2 and 4 sessions into one table); 15 adds one page per lock.
        if cfg!(not(feature = "pg15")) && strategy == ExtendStrategy::Auto {
            strategy = ExtendStrategy::Server;
        }
        Extender {
            strategy,
            method,
            cap,
            step: 0,
            contended: false,
            probes: 0,
            usable: BLCKSZ - PAGE_HEADER - save,
            #[cfg(feature = "pg15")]
            last_added: INVALID_BLOCK,
            #[cfg(feature = "pg15")]
            zero_page: vec![0; BLCKSZ].into_boxed_slice(),
            #[cfg(feature = "pg15")]
            reserved: (INVALID_BLOCK, INVALID_BLOCK),
            #[cfg(feature = "pg15")]
            save,
            skip_fsm,
            pages_extended: 0,
            extend_calls: 0,
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
        let mut have = unsafe { self.pages_waiting(bistate) };
        while have < need {
            let step = match self.strategy {
                ExtendStrategy::Fixed => self.cap,
                _ => {
                    // sticky (and auto once contended): start at what this batch needs, double after, never shrink
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
            have += unsafe { self.extend(rel, bistate, step) };
        }
    }

    /// After the last batch: pages still waiting go to the free space map for later inserts
    /// (where the heap extended with the map, it entered them itself, and again changes
    /// nothing), unless the load skips the map, as the heap then does (COPY FREEZE into a
    /// table created in the transaction leaves them out of it).
    pub fn finish(&mut self, rel: pg_sys::Relation, bistate: pg_sys::BulkInsertState) {
        // SAFETY: `bistate` is the bulk-insert state of the open relation `rel`, still live
        // (`Buffer::finish` frees it with `FreeBulkInsertState` only after this), on the backend
        // thread; `BulkInsertStateMirror` has its C layout (asserted above). The heap leaves
        // `next_free..=last_free` either both InvalidBlockNumber or a range of pages of `rel` it
        // has not used, so `record_free` gets existing blocks.
        #[cfg(not(feature = "pg15"))]
        unsafe {
            let b = bistate as *mut BulkInsertStateMirror;
            if (*b).next_free != INVALID_BLOCK && !self.skip_fsm {
                record_free(rel, (*b).next_free, (*b).last_free);
                (*b).next_free = INVALID_BLOCK;
                (*b).last_free = INVALID_BLOCK;
            }
        }
        // 15: the pages `extend` added are in the map already; those reserved for the page
        // path and not used go there now (`auto` reserves none when the load skips the map)
        #[cfg(feature = "pg15")]
        if !self.skip_fsm {
            let _ = bistate;
            // SAFETY: `rel` is the open relation of this load, on the backend thread.
            unsafe { self.release_reserved(rel) };
        }
    }

    /// 15: before the heap's own insert path fills pages (`heap_multi_insert` for a batch the
    /// page path hands over, a single-row insert), the pages reserved for the page path go
    /// to the free space map, where the heap finds them in order, as it finds the pages
    /// `extend` adds; the heap would extend past them otherwise. (16+: nothing to do.)
    pub fn before_heap_insert(&mut self, rel: pg_sys::Relation) {
        #[cfg(feature = "pg15")]
        // SAFETY: `rel` is the open relation of this load (`Buffer::flush` passes its result
        // relation), on the backend thread, with no buffer content lock held.
        unsafe {
            self.release_reserved(rel)
        };
        #[cfg(not(feature = "pg15"))]
        let _ = rel;
    }

    /// 15: the reserved pages not used into the free space map (as `RelationAddExtraBlocks`
    /// enters the pages it adds).
    ///
    /// # Safety
    /// `rel` is an open heap relation; on the backend thread, with no buffer content lock held.
    #[cfg(feature = "pg15")]
    unsafe fn release_reserved(&mut self, rel: pg_sys::Relation) {
        let (next, last) = self.reserved;
        if next == INVALID_BLOCK {
            return;
        }
        self.reserved = (INVALID_BLOCK, INVALID_BLOCK);
        // SAFETY: `next..=last` are blocks of `rel` that `reserve` added (below the fork's
        // end); `rel` is valid as the # Safety section requires.
        unsafe {
            for blk in next..=last {
                pg_sys::RecordPageWithFreeSpace(rel, blk, BLCKSZ - PAGE_HEADER);
            }
            pg_sys::FreeSpaceMapVacuumRange(rel, next, last + 1);
        }
    }

    /// 15, the page path, before it asks `RelationGetBufferForTuple` for a page for a tuple of
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
    /// space map until the load ends (then `finish` enters those left), so no other session
    /// takes them, and the map's answers are the ones COPY gets.
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
        // SAFETY: as the # Safety section requires.
        #[cfg(feature = "pg15")]
        unsafe {
            self.page_from_range(rel, bistate, len, pages_left)
        };
        // 16+: the heap extends by the pages the batch needs itself
        #[cfg(not(feature = "pg15"))]
        let _ = (rel, bistate, len, pages_left);
    }

    /// 15: [`before_page`](Self::before_page).
    ///
    /// # Safety
    /// As for `before_page`.
    #[cfg(feature = "pg15")]
    unsafe fn page_from_range(
        &mut self,
        rel: pg_sys::Relation,
        bistate: pg_sys::BulkInsertState,
        len: usize,
        pages_left: impl FnOnce() -> usize,
    ) {
        if self.strategy != ExtendStrategy::Auto {
            return;
        }
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
                    let n = (pages_left() as u32).clamp(1, self.cap);
                    let first = self.add_pages(rel, bistate, n);
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

    /// New pages the insert path will use before it would extend by itself.
    ///
    /// # Safety
    /// `bistate` points to a live `BulkInsertStateData` (from `GetBulkInsertState`, not yet
    /// freed) that nothing else uses during the call; on the backend thread.
    unsafe fn pages_waiting(&self, bistate: pg_sys::BulkInsertState) -> u32 {
        // SAFETY: `bistate` is valid as the # Safety section requires, and the mirror has the C
        // layout (asserted above), so the reads read the C fields. 15: a `current_buf` other
        // than InvalidBuffer (0) is a buffer the bulk-insert state holds a pin on, as
        // `BufferGetBlockNumber` requires.
        unsafe {
            let b = bistate as *const BulkInsertStateMirror;
            #[cfg(not(feature = "pg15"))]
            {
                if (*b).next_free == INVALID_BLOCK {
                    0
                } else {
                    (*b).last_free - (*b).next_free + 1
                }
            }
            #[cfg(feature = "pg15")]
            {
                // the insert path takes the free-space-map pages in order; what lies beyond
                // the page it is filling now is still waiting
                if self.last_added == INVALID_BLOCK {
                    return 0;
                }
                let current = if (*b).current_buf != 0 {
                    pg_sys::BufferGetBlockNumber((*b).current_buf)
                } else {
                    0
                };
                self.last_added.saturating_sub(current)
            }
        }
    }

    /// Extends by `n` pages (in as many calls as the method and the buffer manager need) and
    /// hands them to the insert path; returns how many pages were added.
    ///
    /// # Safety
    /// `rel` is an open heap relation this backend holds at least RowExclusiveLock on, and
    /// `bistate` its live bulk-insert state (as for `pages_waiting`); on the backend thread,
    /// with no buffer content lock held (the relation extension lock is taken here).
    #[cfg(not(feature = "pg15"))]
    unsafe fn extend(
        &mut self,
        rel: pg_sys::Relation,
        bistate: pg_sys::BulkInsertState,
        n: u32,
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
                let ask = match self.method {
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
                self.extend_calls += 1;
                self.pages_extended += got as u64;
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

    /// 15: `n` pages handed to the insert path through the free space map, where it finds
    /// them (as 15's own `RelationAddExtraBlocks` hands over the pages it adds).
    ///
    /// # Safety
    /// As for the 16+ `extend`: `rel` is an open heap relation this backend holds at least
    /// RowExclusiveLock on, `bistate` its live bulk-insert state; on the backend thread, with
    /// no buffer content lock held.
    #[cfg(feature = "pg15")]
    unsafe fn extend(
        &mut self,
        rel: pg_sys::Relation,
        bistate: pg_sys::BulkInsertState,
        n: u32,
    ) -> u32 {
        // SAFETY: as the # Safety section requires; `first..first + n` are blocks `add_pages`
        // has just added to `rel`.
        unsafe {
            let first = self.add_pages(rel, bistate, n);
            for blk in first..first + n {
                pg_sys::RecordPageWithFreeSpace(rel, blk, BLCKSZ - PAGE_HEADER);
            }
            pg_sys::FreeSpaceMapVacuumRange(rel, first, first + n);
            self.last_added = first + n - 1;
            n
        }
    }

    /// 15: adds `n` new pages at the fork's end, in runs of at most `RUN` pages under the
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
    #[cfg(feature = "pg15")]
    unsafe fn add_pages(
        &mut self,
        rel: pg_sys::Relation,
        bistate: pg_sys::BulkInsertState,
        n: u32,
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
                self.extend_calls += 1;
                next += run;
            }
            pg_sys::UnlockRelationForExtension(rel, lock);
            self.pages_extended += n as u64;
            first
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

/// 15's `RelationGetSmgr` (a static inline in utils/rel.h): the relation's storage manager
/// handle, opened if the relation cache closed it.
///
/// # Safety
/// `rel` is an open relation (its relcache entry pinned by this backend); on the backend
/// thread. The handle is valid until the next relcache invalidation of `rel` is processed.
#[cfg(feature = "pg15")]
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

/// Enters new, empty pages `first..=last` into the free space map.
///
/// # Safety
/// `rel` is an open heap relation; `first..=last` are existing blocks of its main fork (so
/// `last` is below InvalidBlockNumber and `last + 1` does not overflow); on the backend thread.
#[cfg(not(feature = "pg15"))]
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
