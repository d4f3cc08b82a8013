//! The bulk page path: the buffered tuples of a plain heap table go onto heap pages through
//! fastcopy's own page writer instead of `heap_multi_insert`, with the same result on the
//! page, in the WAL, in the visibility map and in the statistics.
//!
//! `heap_multi_insert` spends most of its time in general-purpose calls made per tuple
//! (`ExecFetchSlotHeapTuple`, `heap_prepare_insert`, `RelationPutHeapTuple` and
//! `PageAddItemExtended`, `PageGetHeapFreeSpace`). Here the same steps are a few stores each,
//! inline, in its order:
//! 1. every tuple's header is set as `heap_prepare_insert` sets it (xmin, cmin, the xact bits
//!    cleared, xmax invalid, frozen with `FREEZE`), the relation checked for serializable
//!    conflicts (table level, before and after, as heap inserts check);
//! 2. per page, the server's `RelationGetBufferForTuple` picks it, exactly as for COPY (the
//!    bulk-insert state's current page, the free space map, or a new page; on 16+ with
//!    `heap_multi_insert`'s estimate of the pages still needed), then, in a critical section,
//!    as many tuples as fit under the fillfactor are appended (line pointer, tuple, `t_ctid`),
//!    the all-visible flag cleared or (frozen into an empty page) set, the buffer dirtied, and
//!    the page's `XLOG_HEAP2_MULTI_INSERT` record written as heapam.c writes it (with
//!    `XLOG_HEAP_INIT_PAGE` for a page that was empty, the new-tuple flag and kept data when
//!    the table is logically logged, "last in multi" on the flush's last page), so recovery,
//!    standbys and logical decoding replay and decode it as the server's own record;
//! 3. after the page, the visibility map bits of a frozen page; at the end the TIDs into the
//!    slots (index entries and AFTER ROW triggers use them) and the insert count into the
//!    statistics.
//!
//! Decided per load ([`Pages::new`]): `fastcopy.page_path`, the heap table AM, an ordinary
//! table that is not a catalog, nor a user catalog table under `wal_level = logical` (the
//! server would add a new-CID record per tuple), not in a parallel worker (the server's
//! refusal then comes from `heap_multi_insert`). Per batch, what the writer leaves goes to
//! `heap_multi_insert` (through the caller, `Buffer::flush`): the whole batch if a tuple needs
//! the toaster (too long, or holding external values); the rest of it from a page that is
//! all-visible (VACUUM marked it and it has room): clearing that bit is logged differently by
//! the server's minor releases (newer ones register the visibility map page in the record),
//! and `heap_multi_insert` continues on the same page, which the bulk-insert state holds. Per
//! page: a page with unused line pointers (after VACUUM) gets its tuples through
//! `PageAddItemExtended`, which reuses them as it does for the server.
//!
//! A buffer whose rows need nothing per row after the insert (no index, AFTER ROW trigger,
//! constraint or partition check) hands its tuples to the writer without slots
//! ([`Pages::push`]); otherwise they come from the slots, which get their TIDs back.
//!
//! The page's WAL record is built in `page_wal.rs`; the one version difference (16's
//! `num_pages` argument of `RelationGetBufferForTuple`) is in this file only.

use super::heap_layout::{
    BLCKSZ, HEAPTUPLESIZE, LINE_POINTER, MAX_TUPLES_PER_PAGE, PAGE_HEADER, TOAST_THRESHOLD,
    chunk_t_len, copy_short, maxalign,
};
use super::page_wal::{self, Entries, XLH_INSERT_ALL_FROZEN_SET, XLH_INSERT_LAST_IN_MULTI};
use crate::compat;
use crate::extend::Extender;
use crate::guc;
use pgrx::pg_sys;
use std::ffi::c_int;
use std::mem::offset_of;

/// Server functions pgrx does not bind, each called through pgrx's FFI guard.
mod c {
    use pgrx::pg_sys::{BlockNumber, Buffer, BulkInsertState, ItemPointer, Relation, Size};
    use std::ffi::c_int;
    // SAFETY: the declarations match access/hio.h (15: without `num_pages`, added in 16) and
    // storage/predicate.h of 15, 16, 17 and 18.
    unsafe extern "C-unwind" {
        #[cfg(feature = "pg15")]
        pub fn RelationGetBufferForTuple(
            relation: Relation,
            len: Size,
            other_buffer: Buffer,
            options: c_int,
            bistate: BulkInsertState,
            vmbuffer: *mut Buffer,
            vmbuffer_other: *mut Buffer,
        ) -> Buffer;
        #[cfg(not(feature = "pg15"))]
        pub fn RelationGetBufferForTuple(
            relation: Relation,
            len: Size,
            other_buffer: Buffer,
            options: c_int,
            bistate: BulkInsertState,
            vmbuffer: *mut Buffer,
            vmbuffer_other: *mut Buffer,
            num_pages: c_int,
        ) -> Buffer;
        pub fn CheckForSerializableConflictIn(
            relation: Relation,
            tid: ItemPointer,
            blkno: BlockNumber,
        );
    }
}

/// The page writer of one relation (one per insert buffer that can take this path).
pub struct Pages {
    relid: pg_sys::Oid,
    /// `RelationNeedsWAL`.
    needwal: bool,
    /// `RelationIsLogicallyLogged`: records carry the new tuples even with a page image.
    logical: bool,
    /// `RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR)`.
    save_free_space: usize,
    tuples: Vec<pg_sys::HeapTuple>,
    /// The batch's tuples as the reader formed them by a fixed plan, when they came that way
    /// (then `tuples` is empty): see [`Uniform`].
    uniform: Uniform,
    /// The offset numbers of a uniform batch's tuples on the page being filled.
    offsets: Box<[u16; MAX_TUPLES_PER_PAGE]>,
    /// Where a page's WAL record is put together (heapam.c's `PGAlignedBlock scratch`).
    scratch: Box<[u64; BLCKSZ / 8]>,
    /// Rows this writer put on pages.
    rows: u64,
    /// Flushes that went to `heap_multi_insert` because a tuple needed the toaster.
    toasted_flushes: u64,
    /// Flushes whose rest went to `heap_multi_insert` at an all-visible page.
    handed_over: u64,
    /// Pages filled through `PageAddItemExtended` (they had unused line pointers).
    reused_pages: u64,
    /// Rows this writer put on pages from a uniform batch's data bytes.
    uniform_rows: u64,
}

/// Header bytes (`t_hoff`) a [`Uniform`] tuple may have, at most.
const UNIFORM_HEAD: usize = 64;

/// A batch of tuples the reader formed by one fixed plan ([`Pages::push_formed`]): every
/// tuple has the same length and the same header bytes (the plan's template: the values are
/// in the data bytes only), so the batch keeps the header once and, per tuple, only its data
/// bytes, `len - hoff` each, one after the other. The page writer puts the (prepared) header
/// and the data straight onto the page: no tuple of its own per row in the batch memory, no
/// per-row header to prepare.
#[derive(Default)]
pub(super) struct Uniform {
    /// Tuples in the batch (0: the batch's tuples, if any, are in `Pages::tuples`).
    pub(super) count: usize,
    /// Their `t_len` and `t_hoff`.
    pub(super) len: usize,
    hoff: usize,
    /// The header bytes (`t_hoff` of them), prepared by `insert` as `heap_prepare_insert`
    /// prepares each tuple's.
    pub(super) head: [u64; UNIFORM_HEAD / 8],
    data: Vec<u8>,
}

impl Uniform {
    fn head_bytes(&mut self) -> *mut u8 {
        self.head.as_mut_ptr() as *mut u8
    }

    fn clear(&mut self) {
        self.count = 0;
        self.data.clear();
    }

    /// Tuple `i` (its `len` bytes: the header, then its data bytes) written at `to`.
    ///
    /// # Safety
    /// `i < count`; `to` has room for `len` bytes.
    #[inline(always)]
    unsafe fn write_tuple(&self, i: usize, to: *mut u8) {
        let d = self.len - self.hoff;
        // SAFETY: as the function's contract; `head` holds `hoff` bytes, a multiple of 8
        // (`push_formed`), `data` `d` bytes per tuple.
        unsafe {
            for w in 0..self.hoff / 8 {
                (to as *mut u64).add(w).write_unaligned(self.head[w]);
            }
            copy_short(self.data.as_ptr().add(i * d), to.add(self.hoff), d);
        }
    }
}

impl Pages {
    /// The page writer for `rel`, if the page path can take its rows (see the module
    /// comment).
    ///
    /// # Safety
    /// `rel` is open and locked RowExclusiveLock, on the backend thread, in the load's
    /// transaction.
    pub unsafe fn new(rel: pg_sys::Relation) -> Option<Pages> {
        if !guc::page_path() {
            return None;
        }
        // SAFETY: `rel` is a valid relcache entry (# Safety): plain field reads;
        // `rd_options` is NULL or the `StdRdOptions` that `heap_reloptions` parsed for an
        // ordinary table (checked first); `wal_level` and `ParallelWorkerNumber` are globals
        // of the backend, read on its thread.
        unsafe {
            let form = (*rel).rd_rel;
            if (*rel).rd_tableam != pg_sys::GetHeapamTableAmRoutine()
                || (*form).relkind as u8 != pg_sys::RELKIND_RELATION
                || pg_sys::ParallelWorkerNumber >= 0
                || pg_sys::IsCatalogRelation(rel)
            {
                return None;
            }
            let needwal = (*form).relpersistence as u8 == pg_sys::RELPERSISTENCE_PERMANENT
                && (pg_sys::wal_level >= pg_sys::WalLevel::WAL_LEVEL_REPLICA as c_int
                    || !compat::created_in_this_transaction(rel));
            let logical_info = pg_sys::wal_level >= pg_sys::WalLevel::WAL_LEVEL_LOGICAL as c_int;
            let opts = (*rel).rd_options as *const pg_sys::StdRdOptions;
            if logical_info && needwal && !opts.is_null() && (*opts).user_catalog_table {
                return None;
            }
            let fillfactor = if opts.is_null() {
                100
            } else {
                (*opts).fillfactor as usize
            };
            Some(Pages {
                relid: (*rel).rd_id,
                needwal,
                logical: logical_info && needwal,
                save_free_space: BLCKSZ * (100 - fillfactor) / 100,
                tuples: Vec::new(),
                uniform: Uniform::default(),
                offsets: Box::new([0; MAX_TUPLES_PER_PAGE]),
                scratch: Box::new([0; BLCKSZ / 8]),
                rows: 0,
                toasted_flushes: 0,
                handed_over: 0,
                reused_pages: 0,
                uniform_rows: 0,
            })
        }
    }

    /// A tuple formed by `store_short` for a buffer without slots (no per-row executor step
    /// after the insert: no index, no AFTER ROW trigger, no constraint to check).
    /// `mem` is the batch memory, where the batch's uniform tuples are formed first if it has
    /// any ([`Pages::push_formed`]), so that the tuples stay in input order.
    #[inline]
    pub fn push(&mut self, t: pg_sys::HeapTuple, mem: pg_sys::MemoryContext) {
        if self.uniform.count > 0 {
            // SAFETY: `mem` is the batch memory (# Safety of the callers: the tuples live
            // there until the flush).
            unsafe { self.materialize(mem) };
        }
        self.tuples.push(t);
    }

    /// Data bytes per tuple of the batch's uniform tuples, once the first is in
    /// ([`Pages::push_formed`]); `None` before, or when the batch holds tuples of its own.
    #[inline(always)]
    pub fn uniform_data_len(&self) -> Option<usize> {
        let u = &self.uniform;
        (u.count > 0).then(|| u.len - u.hoff)
    }

    /// `count` more uniform tuples of the batch's plan as their data bytes, `data` holding
    /// them one after the other ([`RowBlock::data_run`](fastcopy_core::pipeline::RowBlock)),
    /// `uniform_data_len` bytes each.
    ///
    /// # Safety
    /// `uniform_data_len()` is `Some(n)` and `data` is `count * n` bytes: the data bytes of
    /// tuples of the plan of the batch's first (as `push_formed`'s # Safety).
    #[inline(always)]
    pub unsafe fn push_data_run(&mut self, data: &[u8], count: usize) {
        debug_assert_eq!(Some(data.len()), self.uniform_data_len().map(|n| n * count));
        self.uniform.data.extend_from_slice(data);
        self.uniform.count += count;
    }

    /// A tuple the reader formed by a fixed plan (`formed`: its `HeapTupleData`, then the
    /// tuple, as `Former::copy_formed` takes it), kept as its data bytes only
    /// ([`Uniform`]); false, keeping nothing, when the batch already holds tuples of its own
    /// (the caller pushes this one as they were) or the tuple is not one this way takes.
    ///
    /// # Safety
    /// Every tuple pushed this way in a batch is of the same fixed plan (same length, same
    /// header bytes), its `t_len` at offset 0 of `formed`.
    #[inline]
    pub unsafe fn push_formed(&mut self, formed: &[u8]) -> bool {
        let u = &mut self.uniform;
        if u.count == 0 {
            if !self.tuples.is_empty() {
                return false;
            }
            let len = chunk_t_len(formed);
            let tuple = &formed[HEAPTUPLESIZE..];
            let hoff = tuple[offset_of!(pg_sys::HeapTupleHeaderData, t_hoff)] as usize;
            if len > TOAST_THRESHOLD || hoff > UNIFORM_HEAD || !hoff.is_multiple_of(8) || len < hoff
            {
                return false;
            }
            u.len = len;
            u.hoff = hoff;
            // SAFETY: `head` has UNIFORM_HEAD bytes, at least `hoff`; `tuple` has `len`.
            unsafe { std::ptr::copy_nonoverlapping(tuple.as_ptr(), u.head_bytes(), hoff) };
        }
        let (from, n) = (HEAPTUPLESIZE + u.hoff, u.len - u.hoff);
        debug_assert!(formed.len() >= from + n);
        u.data.reserve(n);
        // SAFETY: `formed` holds the tuple's `len` bytes from HEAPTUPLESIZE on (# Safety), so
        // `from + n` bytes; `reserve` made room for `n` more in `data`.
        unsafe {
            let at = u.data.len();
            copy_short(formed.as_ptr().add(from), u.data.as_mut_ptr().add(at), n);
            u.data.set_len(at + n);
        }
        u.count += 1;
        true
    }

    /// The batch's uniform tuples ([`Pages::push_formed`]) as tuples of their own in `mem`,
    /// in `tuples` (for a row that comes another way, or for `heap_multi_insert`).
    ///
    /// # Safety
    /// `mem` is the batch memory (or another context that outlives the batch's flush).
    #[cold]
    #[inline(never)]
    unsafe fn materialize(&mut self, mem: pg_sys::MemoryContext) {
        let u = &mut self.uniform;
        let chunk = HEAPTUPLESIZE + maxalign(u.len);
        // SAFETY: one allocation of `count` chunks, each a HeapTupleData and the tuple,
        // MAXALIGNed as palloc's chunks are.
        unsafe {
            let base = pg_sys::MemoryContextAllocHuge(mem, u.count * chunk) as *mut u8;
            for i in 0..u.count {
                let t = base.add(i * chunk) as pg_sys::HeapTuple;
                let td = (t as *mut u8).add(HEAPTUPLESIZE);
                t.write(pg_sys::HeapTupleData {
                    t_len: u.len as u32,
                    t_self: pg_sys::ItemPointerData::default(),
                    t_tableOid: self.relid,
                    t_data: td as pg_sys::HeapTupleHeader,
                });
                u.write_tuple(i, td);
                self.tuples.push(t);
            }
        }
        u.clear();
    }

    /// The tuples of the current batch (pushed, or gathered from the slots by `insert`; the
    /// uniform ones after `insert` handed them over).
    pub fn tuples(&self) -> &[pg_sys::HeapTuple] {
        &self.tuples
    }

    /// Forgets the batch's tuples (after its flush, before the batch memory is reset).
    pub fn clear(&mut self) {
        self.tuples.clear();
        self.uniform.clear();
    }

    /// Tuples in the batch.
    fn count(&self) -> usize {
        self.tuples.len() + self.uniform.count
    }

    /// `t_len` of the batch's tuple `i`.
    ///
    /// # Safety
    /// `i < self.count()`; the pushed tuples are valid.
    #[inline]
    unsafe fn len_of(&self, i: usize) -> usize {
        match self.uniform.count {
            // SAFETY: as the function's contract.
            0 => unsafe { (*self.tuples[i]).t_len as usize },
            _ => self.uniform.len,
        }
    }

    /// Inserts the batch's tuples, those of `slots` (their `tts_tid` then set) or, without
    /// slots, those pushed, as `heap_multi_insert(rel, slots, n, cid, options, bistate)`
    /// does. `Err(done)`: the tuples from `done` on are not inserted, and the caller hands
    /// them to `table_multi_insert`: all of them (`done` 0, nothing done) when one needs the
    /// toaster, the rest when a page the server picked is all-visible (the server's newer
    /// minor releases log the visibility map page in the record when they clear its bit and
    /// older ones do not; heap_multi_insert finds the same page, which the bulk-insert state
    /// holds, and logs it as the running server does).
    ///
    /// # Safety
    /// `rel` is the relation `new` was given, open; `slots`, if given, are heap-tuple slots
    /// each holding a tuple formed for it (`store_short`), else the pushed tuples are; none
    /// inserted yet, in memory that outlives the call; `bistate` is the relation's bulk-insert
    /// state; in the load's transaction, on the backend thread.
    pub unsafe fn insert(
        &mut self,
        rel: pg_sys::Relation,
        slots: Option<&[*mut pg_sys::TupleTableSlot]>,
        cid: pg_sys::CommandId,
        options: c_int,
        bistate: pg_sys::BulkInsertState,
        extender: &mut Extender,
    ) -> Result<(), usize> {
        let frozen = options & pg_sys::HEAP_INSERT_FROZEN as c_int != 0;
        let uniform = self.uniform.count > 0;
        // SAFETY: as the function's contract.
        if unsafe { !self.prepare_batch(rel, slots, cid, frozen) } {
            self.toasted_flushes += 1;
            return Err(0);
        }
        let n = self.count();
        let mut vmbuffer: pg_sys::Buffer = pg_sys::InvalidBuffer as pg_sys::Buffer;
        let mut ndone = 0;
        let mut pages_left = PagesLeft::default();
        while ndone < n {
            pgrx::check_for_interrupts!();
            // SAFETY: as the function's contract; the first remaining tuple is valid.
            let buffer = unsafe {
                let len = self.len_of(ndone);
                // 15: the page the heap would extend by, from a range added ahead
                extender.before_page(rel, bistate, len, || self.pages_needed(ndone));
                relation_get_buffer_for_tuple(rel, len, options, bistate, &raw mut vmbuffer, || {
                    pages_left.next(ndone == 0, || self.pages_needed(ndone))
                })
            };
            // SAFETY: `buffer` is pinned and exclusively locked, with room for the first
            // remaining tuple under the fillfactor (RelationGetBufferForTuple's promise);
            // `vmbuffer` is pinned where the page needs it (all-visible, or frozen into an
            // empty page).
            let Some((done, empty)) =
                (unsafe { self.fill_page(rel, buffer, ndone, frozen, vmbuffer) })
            else {
                break;
            };
            pages_left.last_empty = empty;
            ndone += done;
        }
        // SAFETY: as the function's contract; `vmbuffer` is ours.
        unsafe { self.finish_batch(rel, slots, ndone, vmbuffer) };
        if ndone < n {
            // (the rest's tuples are prepared as heap_multi_insert prepares them again)
            self.handed_over += 1;
            if uniform {
                // SAFETY: the batch memory is current (`Buffer::flush`), as # Safety asks.
                unsafe { self.materialize(pg_sys::CurrentMemoryContext) };
            }
            return Err(ndone);
        }
        // SAFETY: as above.
        unsafe { serializable_check(rel) };
        Ok(())
    }

    /// The batch's tuples (the slots' when given) made ready for their pages: each checked
    /// for the toaster, then prepared (false, at the first one that needs the toaster: the
    /// whole batch goes to heap_multi_insert, which prepares the tuples again, with the same
    /// values, so those prepared before it make no difference); a uniform batch has one
    /// header to prepare, which all its tuples will have. Then the table's serializable
    /// conflict check, as heap inserts make it first.
    ///
    /// # Safety
    /// As [`insert`](Self::insert).
    unsafe fn prepare_batch(
        &mut self,
        rel: pg_sys::Relation,
        slots: Option<&[*mut pg_sys::TupleTableSlot]>,
        cid: pg_sys::CommandId,
        frozen: bool,
    ) -> bool {
        if let Some(slots) = slots {
            self.tuples.clear();
            // SAFETY: heap-tuple slots holding their tuples (# Safety).
            self.tuples.extend(
                slots
                    .iter()
                    .map(|&slot| unsafe { (*(slot as *mut pg_sys::HeapTupleTableSlot)).tuple }),
            );
        }
        let uniform = self.uniform.count > 0;
        debug_assert!(!uniform || (slots.is_none() && self.tuples.is_empty()));
        // SAFETY: in the load's transaction (# Safety); the tuples are valid and ours to
        // change (# Safety), as `heap_prepare_insert` changes the slots' tuples; the uniform
        // header is ours.
        unsafe {
            let xid = pg_sys::GetCurrentTransactionId();
            if uniform {
                // (every tuple's header: their length is below the toaster's, see push_formed)
                let head = self.uniform.head_bytes() as pg_sys::HeapTupleHeader;
                prepare_header(head, xid, cid, frozen);
            }
            for &t in &self.tuples {
                let (len, infomask) = ((*t).t_len as usize, (*(*t).t_data).t_infomask);
                if len > TOAST_THRESHOLD || infomask & pg_sys::HEAP_HASEXTERNAL as u16 != 0 {
                    return false;
                }
                prepare(t, xid, cid, frozen, self.relid);
            }
            serializable_check(rel);
        }
        true
    }

    /// After the batch's pages: the visibility map page let go, the TIDs of the `ndone`
    /// tuples inserted into their slots (index entries and AFTER ROW triggers use them), the
    /// inserts counted in the statistics and here.
    ///
    /// # Safety
    /// As [`insert`](Self::insert); `vmbuffer` is our pin of the visibility map page, if any.
    unsafe fn finish_batch(
        &mut self,
        rel: pg_sys::Relation,
        slots: Option<&[*mut pg_sys::TupleTableSlot]>,
        ndone: usize,
        vmbuffer: pg_sys::Buffer,
    ) {
        // SAFETY: our pin, if any; the slots are the tuples' (# Safety), their order that of
        // `self.tuples`.
        unsafe {
            if vmbuffer != pg_sys::InvalidBuffer as pg_sys::Buffer {
                pg_sys::ReleaseBuffer(vmbuffer);
            }
            if let Some(slots) = slots {
                for (&slot, &t) in slots.iter().zip(&self.tuples[..ndone]) {
                    (*slot).tts_tid = (*t).t_self;
                }
            }
            if ndone > 0 {
                pg_sys::pgstat_count_heap_insert(rel, ndone as pg_sys::PgStat_Counter);
            }
        }
        self.rows += ndone as u64;
        if self.uniform.count > 0 {
            self.uniform_rows += ndone as u64;
        }
    }

    /// The DEBUG1 line at the end of the relation's bulk insert: what took the page path.
    pub fn report(&self, rel: pg_sys::Relation) {
        // SAFETY: `rel` is open (the buffer's); its name is a NUL-terminated NameData.
        let name = unsafe { std::ffi::CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr()) };
        pgrx::debug1!(
            "fastcopy: {} rows of \"{}\" onto heap pages by the page path; to heap_multi_insert: {} batches with TOAST-size rows, {} from an all-visible page on; {} pages with unused line pointers; {} rows from the data bytes of tuples the reader formed by a fixed plan",
            self.rows,
            name.to_string_lossy(),
            self.toasted_flushes,
            self.handed_over,
            self.reused_pages,
            self.uniform_rows
        );
    }

    /// `heap_multi_insert_pages`: pages the tuples from `done` on take at worst.
    fn pages_needed(&self, done: usize) -> usize {
        let page = BLCKSZ - PAGE_HEADER - self.save_free_space;
        let (mut npages, mut avail) = (1, page);
        for i in done..self.count() {
            // SAFETY: the tuples are valid (`insert`'s contract).
            let size = LINE_POINTER + maxalign(unsafe { self.len_of(i) });
            if avail < size {
                npages += 1;
                avail = page;
            }
            avail = avail.saturating_sub(size);
        }
        npages
    }

    /// Puts tuples from `ndone` on onto the page of `buffer` while they fit, logs the page,
    /// releases the buffer: (tuples put, whether the page was empty); None, having only
    /// released the buffer, for an all-visible page that is not loaded with FREEZE (see
    /// `insert`).
    ///
    /// # Safety
    /// As `insert`'s page loop: `buffer` pinned and exclusively locked with room for tuple
    /// `ndone`, `vmbuffer` pinned for its page where needed.
    unsafe fn fill_page(
        &mut self,
        rel: pg_sys::Relation,
        buffer: pg_sys::Buffer,
        ndone: usize,
        frozen: bool,
        vmbuffer: pg_sys::Buffer,
    ) -> Option<(usize, bool)> {
        // SAFETY: the buffer's page is ours to change while we hold its exclusive lock (#
        // Safety). Nothing between the critical section's start and end can raise an ERROR
        // but the server's own calls (which would then PANIC, as in heap_multi_insert), and
        // nothing in it can panic: the tuple indexes stay below `self.tuples.len()`, the page
        // offsets within the page (a tuple is put only when the free-space test, the server's
        // or `free_space`, left room for it and its line pointer), and the record within the
        // scratch block (its bytes per tuple, at most 8 + t_len - 23 + 2, are fewer than the
        // MAXALIGN(t_len) + 4 the tuple takes on the page).
        unsafe {
            let page = pg_sys::BufferGetPage(buffer) as *mut u8;
            let hdr = page as *mut pg_sys::PageHeaderData;
            let blkno = pg_sys::BufferGetBlockNumber(buffer);
            let all_visible = pg_sys::PD_ALL_VISIBLE as u16;
            if (*hdr).pd_flags & all_visible != 0 && !frozen {
                pg_sys::UnlockReleaseBuffer(buffer);
                return None;
            }
            let empty = max_offset(hdr) == 0;
            let all_frozen_set = empty && frozen;
            // no unused line pointers: tuples are appended after the last one; else the
            // server's calls find the unused ones
            let appendable = (*hdr).pd_flags & pg_sys::PD_HAS_FREE_LINES as u16 == 0;
            self.reused_pages += u64::from(!appendable);
            let n = self.count();

            pg_sys::CritSectionCount += 1; // START_CRIT_SECTION
            let k = self.put_tuples(page, blkno, ndone, appendable);
            // (an all-visible page stays so only with FREEZE, as in heap_multi_insert)
            let mut flags = 0u8;
            if all_frozen_set {
                flags = XLH_INSERT_ALL_FROZEN_SET;
                (*hdr).pd_flags |= all_visible;
            }
            pg_sys::MarkBufferDirty(buffer);
            if self.needwal {
                if ndone + k == n {
                    flags |= XLH_INSERT_LAST_IN_MULTI;
                }
                let entries = if self.uniform.count > 0 {
                    Entries::Uniform {
                        len: self.uniform.len,
                        head: self.uniform.head.as_ptr() as pg_sys::HeapTupleHeader,
                        offsets: &self.offsets[..k],
                    }
                } else {
                    Entries::Tuples(&self.tuples[ndone..ndone + k])
                };
                let lsn = page_wal::log_page(
                    self.scratch.as_mut_ptr() as *mut u8,
                    buffer,
                    page,
                    entries,
                    empty,
                    flags,
                    self.logical,
                );
                (*hdr).pd_lsn.xlogid = (lsn >> 32) as u32;
                (*hdr).pd_lsn.xrecoff = lsn as u32;
            }
            pg_sys::CritSectionCount -= 1; // END_CRIT_SECTION

            if all_frozen_set {
                // (InvalidTransactionId: FREEZE's tuples break the visibility rules on purpose)
                pg_sys::visibilitymap_set(
                    rel,
                    blkno,
                    buffer,
                    0,
                    vmbuffer,
                    pg_sys::InvalidTransactionId,
                    (pg_sys::VISIBILITYMAP_ALL_VISIBLE | pg_sys::VISIBILITYMAP_ALL_FROZEN) as u8,
                );
            }
            pg_sys::UnlockReleaseBuffer(buffer);
            Some((k, empty))
        }
    }

    /// The batch's tuples from `ndone` on onto the page while they fit under the fillfactor
    /// (the first always fits: `RelationGetBufferForTuple` chose the page for it); how many.
    ///
    /// # Safety
    /// As `fill_page`, inside its critical section.
    #[inline(always)]
    unsafe fn put_tuples(
        &mut self,
        page: *mut u8,
        blkno: pg_sys::BlockNumber,
        ndone: usize,
        appendable: bool,
    ) -> usize {
        let hdr = page as *mut pg_sys::PageHeaderData;
        let n = self.count();
        // SAFETY: as the function's contract (see `fill_page`).
        unsafe {
            self.put_at(page, blkno, ndone, 0, appendable);
            let mut k = 1;
            if appendable && self.uniform.count > 0 {
                // tuples of one length: how many more fit is known at once
                let more = uniform_fit(hdr, self.uniform.len, self.save_free_space);
                k += self.put_uniform_run(page, blkno, ndone + 1, more.min(n - ndone - 1));
            }
            while ndone + k < n {
                let free = match appendable {
                    true => free_space(hdr),
                    false => pg_sys::PageGetHeapFreeSpace(page as pg_sys::Page),
                };
                if free < maxalign(self.len_of(ndone + k)) + self.save_free_space {
                    break;
                }
                self.put_at(page, blkno, ndone + k, k, appendable);
                k += 1;
            }
            k
        }
    }

    /// Tuple `i` of the batch onto the page, the page's `k`th (from 0) in this visit.
    ///
    /// # Safety
    /// As `put`, for tuple `i` (below `count()`), in `fill_page`'s critical section.
    #[inline(always)]
    unsafe fn put_at(
        &mut self,
        page: *mut u8,
        blkno: pg_sys::BlockNumber,
        i: usize,
        k: usize,
        appendable: bool,
    ) {
        // SAFETY: as the function's contract; `k` is below MAX_TUPLES_PER_PAGE (the page
        // had room for each tuple before it), the size of `offsets`.
        unsafe {
            if self.uniform.count == 0 {
                put(page, blkno, self.tuples[i], appendable);
            } else {
                self.offsets[k] = put_uniform(page, blkno, &self.uniform, i, appendable);
            }
        }
    }

    /// Uniform tuples `from..from + count` onto a page without unused line pointers, which
    /// has room for them under the fillfactor ([`uniform_fit`]), after its first tuple of
    /// this visit: the same bytes as `put_uniform` for each, with the page's bounds kept in
    /// registers and written once; returns `count`.
    ///
    /// # Safety
    /// In `fill_page`'s critical section, the page locked exclusively; `from + count` at most
    /// `self.uniform.count`, and at most `MAX_TUPLES_PER_PAGE - 1` tuples (`offsets`).
    #[inline(always)]
    unsafe fn put_uniform_run(
        &mut self,
        page: *mut u8,
        blkno: pg_sys::BlockNumber,
        from: usize,
        count: usize,
    ) -> usize {
        let u = &self.uniform;
        let (len, alen) = (u.len, maxalign(u.len));
        // SAFETY: as the function's contract: each line pointer goes at `lower`, each tuple
        // below `upper`, inside the free space `uniform_fit` counted them into.
        unsafe {
            let hdr = page as *mut pg_sys::PageHeaderData;
            let (mut lower, mut upper) = ((*hdr).pd_lower as usize, (*hdr).pd_upper as usize);
            let mut lp = pg_sys::ItemIdData::default();
            lp.set_lp_flags(pg_sys::LP_NORMAL);
            lp.set_lp_len(len as u32);
            for j in 0..count {
                upper -= alen;
                lp.set_lp_off(upper as u32);
                (page.add(lower) as *mut pg_sys::ItemIdData).write(lp);
                let off = ((lower - PAGE_HEADER) / LINE_POINTER + 1) as u16;
                lower += LINE_POINTER;
                let to = page.add(upper);
                u.write_tuple(from + j, to);
                (*(to as pg_sys::HeapTupleHeader)).t_ctid = tid_of(blkno, off);
                self.offsets[1 + j] = off;
            }
            (*hdr).pd_lower = lower as u16;
            (*hdr).pd_upper = upper as u16;
        }
        count
    }
}

/// What `heap_prepare_insert` does to a tuple that needs no toaster.
///
/// # Safety
/// `t` is a valid formed tuple, ours to change.
#[inline]
unsafe fn prepare(
    t: pg_sys::HeapTuple,
    xid: pg_sys::TransactionId,
    cid: pg_sys::CommandId,
    frozen: bool,
    relid: pg_sys::Oid,
) {
    // SAFETY: as the function's contract.
    unsafe {
        prepare_header((*t).t_data, xid, cid, frozen);
        (*t).t_tableOid = relid;
    }
}

/// `prepare`'s work on the tuple header.
///
/// # Safety
/// `td` is a valid tuple header, ours to change.
#[inline]
unsafe fn prepare_header(
    td: pg_sys::HeapTupleHeader,
    xid: pg_sys::TransactionId,
    cid: pg_sys::CommandId,
    frozen: bool,
) {
    // SAFETY: as the function's contract; `t_choice` is the tuple's `t_heap` from here on.
    unsafe {
        (*td).t_infomask &= !(pg_sys::HEAP_XACT_MASK as u16);
        (*td).t_infomask2 &= !(pg_sys::HEAP2_XACT_MASK as u16);
        (*td).t_infomask |= pg_sys::HEAP_XMAX_INVALID as u16;
        (*td).t_choice.t_heap.t_xmin = xid;
        if frozen {
            (*td).t_infomask |= pg_sys::HEAP_XMIN_FROZEN as u16;
        }
        (*td).t_choice.t_heap.t_field3.t_cid = cid;
        (*td).t_infomask &= !(pg_sys::HEAP_COMBOCID as u16);
        (*td).t_choice.t_heap.t_xmax = pg_sys::InvalidTransactionId;
    }
}

/// `PageGetMaxOffsetNumber`.
///
/// # Safety
/// `hdr` is a valid page's header.
#[inline]
unsafe fn max_offset(hdr: *const pg_sys::PageHeaderData) -> usize {
    // SAFETY: as the function's contract.
    let lower = unsafe { (*hdr).pd_lower } as usize;
    lower.saturating_sub(PAGE_HEADER) / LINE_POINTER
}

/// How many more tuples of `len` bytes `fill_page`'s test (`free_space` at least the tuple
/// and the fillfactor's reserve, `save`) lets onto a page without unused line pointers, one
/// after the other: each takes `maxalign(len)` and a line pointer, and the test before the
/// j-th of them (from 1) holds exactly while `pd_upper - pd_lower` (now) less j of those is
/// at least `save`; and no more than the page's line pointers allow.
///
/// # Safety
/// `hdr` is the header of a locked page.
#[inline(always)]
unsafe fn uniform_fit(hdr: *const pg_sys::PageHeaderData, len: usize, save: usize) -> usize {
    // SAFETY: as the function's contract.
    let (lower, upper) = unsafe { ((*hdr).pd_lower as usize, (*hdr).pd_upper as usize) };
    let by_space =
        upper.saturating_sub(lower).saturating_sub(save) / (maxalign(len) + LINE_POINTER);
    // SAFETY: as above.
    let by_count = MAX_TUPLES_PER_PAGE.saturating_sub(unsafe { max_offset(hdr) });
    by_space.min(by_count)
}

/// `PageGetHeapFreeSpace` of a page without unused line pointers.
///
/// # Safety
/// `hdr` is a valid page's header.
#[inline]
unsafe fn free_space(hdr: *const pg_sys::PageHeaderData) -> usize {
    // SAFETY: as the function's contract.
    let (lower, upper) = unsafe { ((*hdr).pd_lower as usize, (*hdr).pd_upper as usize) };
    let space = upper.saturating_sub(lower);
    // SAFETY: as above.
    if space < LINE_POINTER || unsafe { max_offset(hdr) } >= MAX_TUPLES_PER_PAGE {
        return 0;
    }
    space - LINE_POINTER
}

/// `RelationPutHeapTuple`: the tuple onto the page (appended after the last line pointer, as
/// `PageAddItemExtended` appends to a page without unused ones, or through it), its TID into
/// `t_self` and the stored tuple's `t_ctid`.
///
/// # Safety
/// The page is locked exclusively and has room for the tuple and a line pointer; `appendable` only
/// if it has no unused line pointers; `t` is a valid prepared tuple.
#[inline]
unsafe fn put(page: *mut u8, blkno: pg_sys::BlockNumber, t: pg_sys::HeapTuple, appendable: bool) {
    // SAFETY: as the function's contract: the line pointer goes at `pd_lower` and the tuple
    // at `pd_upper - MAXALIGN(len)`, both inside the page's free space.
    unsafe {
        let len = (*t).t_len as usize;
        let (off, at) = if appendable {
            let (off, upper) = append_item(page, len);
            copy_short((*t).t_data as *const u8, page.add(upper), len);
            (off, upper)
        } else {
            let off = pg_sys::PageAddItemExtended(
                page as pg_sys::Page,
                (*t).t_data as pg_sys::Item,
                len,
                pg_sys::InvalidOffsetNumber,
                pg_sys::PAI_IS_HEAP as c_int,
            );
            if off == pg_sys::InvalidOffsetNumber {
                // (in the critical section: as the server's elog, a PANIC)
                pgrx::ereport!(
                    pgrx::PgLogLevel::PANIC,
                    pgrx::PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "failed to add tuple to page"
                );
            }
            let lp = page.add(PAGE_HEADER + (off as usize - 1) * LINE_POINTER)
                as *const pg_sys::ItemIdData;
            (off as usize, (*lp).lp_off() as usize)
        };
        let tid = tid_of(blkno, off as u16);
        (*t).t_self = tid;
        (*(page.add(at) as pg_sys::HeapTupleHeader)).t_ctid = tid;
    }
}

/// On an appendable page (no unused line pointers): the next line pointer, set for a
/// tuple of `len` bytes at the top of the free space, and the free space shrunk by both;
/// returns the tuple's offset number and its place on the page. The tuple's bytes are the
/// caller's to write.
///
/// # Safety
/// The page is locked exclusively and has room for the tuple and a line pointer.
#[inline(always)]
unsafe fn append_item(page: *mut u8, len: usize) -> (usize, usize) {
    // SAFETY: as the function's contract: the line pointer goes at `pd_lower`, inside the
    // page's free space.
    unsafe {
        let hdr = page as *mut pg_sys::PageHeaderData;
        let lower = (*hdr).pd_lower as usize;
        let upper = (*hdr).pd_upper as usize - maxalign(len);
        let mut lp = pg_sys::ItemIdData::default();
        lp.set_lp_off(upper as u32);
        lp.set_lp_flags(pg_sys::LP_NORMAL);
        lp.set_lp_len(len as u32);
        (page.add(lower) as *mut pg_sys::ItemIdData).write(lp);
        (*hdr).pd_lower = (lower + LINE_POINTER) as u16;
        (*hdr).pd_upper = upper as u16;
        ((lower - PAGE_HEADER) / LINE_POINTER + 1, upper)
    }
}

/// The TID of line pointer `off` on block `blkno`.
#[inline(always)]
fn tid_of(blkno: pg_sys::BlockNumber, off: u16) -> pg_sys::ItemPointerData {
    pg_sys::ItemPointerData {
        ip_blkid: pg_sys::BlockIdData {
            bi_hi: (blkno >> 16) as u16,
            bi_lo: blkno as u16,
        },
        ip_posid: off,
    }
}

/// `put` for tuple `i` of a uniform batch: its prepared header bytes, then its data bytes;
/// returns its offset number.
///
/// # Safety
/// As `put`; `i < u.count`, the header prepared.
#[inline(always)]
unsafe fn put_uniform(
    page: *mut u8,
    blkno: pg_sys::BlockNumber,
    u: &Uniform,
    i: usize,
    appendable: bool,
) -> u16 {
    let len = u.len;
    // SAFETY: as the function's contract: the line pointer and the tuple go into the page's
    // free space as in `put`; a uniform tuple is at most TOAST_THRESHOLD bytes
    // (`push_formed`), so it fits `whole`.
    unsafe {
        if !appendable {
            // through PageAddItemExtended, as `put`, from the tuple put together here
            let mut whole = [0u64; TOAST_THRESHOLD / 8 + 1];
            let td = whole.as_mut_ptr() as *mut u8;
            u.write_tuple(i, td);
            let mut t = pg_sys::HeapTupleData {
                t_len: len as u32,
                t_self: pg_sys::ItemPointerData::default(),
                t_tableOid: pg_sys::InvalidOid,
                t_data: td as pg_sys::HeapTupleHeader,
            };
            put(page, blkno, &raw mut t, false);
            return t.t_self.ip_posid;
        }
        let (off, upper) = append_item(page, len);
        let to = page.add(upper);
        u.write_tuple(i, to);
        (*(to as pg_sys::HeapTupleHeader)).t_ctid = tid_of(blkno, off as u16);
        off as u16
    }
}

/// `CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber)`: table-level SSI locks.
///
/// # Safety
/// `rel` is open; in a transaction, on the backend thread.
unsafe fn serializable_check(rel: pg_sys::Relation) {
    // SAFETY: as the function's contract; the closure only calls the C function.
    unsafe {
        pg_sys::ffi::pg_guard_ffi_boundary(|| {
            c::CheckForSerializableConflictIn(rel, std::ptr::null_mut(), pg_sys::InvalidBlockNumber)
        })
    }
}

/// `RelationGetBufferForTuple` for a tuple of `len` bytes, through pgrx's FFI guard. 16+
/// passes `num_pages`, the pages the rest of the batch needs at worst (the extension's size;
/// asked once per call there), 15 has no such argument.
///
/// # Safety
/// As [`Pages::insert`]; `vmbuffer` points to the caller's visibility map buffer.
unsafe fn relation_get_buffer_for_tuple(
    rel: pg_sys::Relation,
    len: usize,
    options: c_int,
    bistate: pg_sys::BulkInsertState,
    vmbuffer: *mut pg_sys::Buffer,
    num_pages: impl FnOnce() -> usize,
) -> pg_sys::Buffer {
    let invalid = pg_sys::InvalidBuffer as pg_sys::Buffer;
    let len = len as pg_sys::Size;
    let other = std::ptr::null_mut();
    // SAFETY: as the function's contract; the call goes through pgrx's FFI guard, so that an
    // ERROR unwinds as pgrx expects.
    unsafe {
        #[cfg(feature = "pg15")]
        let _ = num_pages;
        #[cfg(feature = "pg15")]
        let call =
            || c::RelationGetBufferForTuple(rel, len, invalid, options, bistate, vmbuffer, other);
        #[cfg(not(feature = "pg15"))]
        let num_pages = num_pages() as c_int;
        #[cfg(not(feature = "pg15"))]
        let call = || {
            c::RelationGetBufferForTuple(
                rel, len, invalid, options, bistate, vmbuffer, other, num_pages,
            )
        };
        pg_sys::ffi::pg_guard_ffi_boundary(call)
    }
}

/// `heap_multi_insert`'s estimate of the pages the rest of a batch needs (16+'s `num_pages`):
/// counted again after a page that was not empty before, one fewer for each empty page used.
#[derive(Default)]
struct PagesLeft {
    npages: usize,
    used: usize,
    /// The last page filled was empty.
    last_empty: bool,
}

impl PagesLeft {
    /// The estimate for the next page; `first`: the batch's first page.
    fn next(&mut self, first: bool, needed: impl FnOnce() -> usize) -> usize {
        if first || !self.last_empty {
            self.npages = needed();
            self.used = 0;
        } else {
            self.used += 1;
        }
        self.npages - self.used
    }
}
