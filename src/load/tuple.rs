//! Heap tuples formed straight into batch memory, and the heap-tuple slots that carry them to
//! `table_multi_insert` without a copy.
//!
//! COPY fills a virtual slot and lets `heap_multi_insert` materialize it (`heap_form_tuple`
//! into a fresh palloc chunk per row, freed again when the slot is cleared). fastcopy forms
//! the tuple itself: for tables whose columns are all fixed-width by-value types (ints,
//! floats, dates, timestamps, bool, ...) and a row without NULLs, at offsets computed once per
//! load, into a bump arena in the batch memory; otherwise with `heap_form_tuple` in the same
//! memory. The slot is marked as owning its tuple, so materializing it is a no-op; it never
//! frees it: `forget` empties the slot after the flush and the batch memory is reset at once
//! (the slots: `slot.rs`). The plans by which the reader thread forms the same tuples itself:
//! `tuple_plan.rs`.

use super::heap_layout::{HEAPTUPLESIZE, HOFF, MAXALIGN, chunk_t_len, maxalign};
use pgrx::pg_sys;

const ARENA_BLOCK: usize = 256 * 1024;

/// Forms the tuples of one relation.
pub struct Former {
    pub(super) tupdesc: pg_sys::TupleDesc,
    /// (offset in the data area, attlen) of every attribute, when all are fixed-width by-value.
    pub(super) fixed: Option<Vec<(usize, usize)>>,
    /// Size of the tuple chunk (HeapTupleData + header + data) on the fixed path.
    pub(super) fixed_chunk: usize,
    pub(super) fixed_len: u32,
}

impl Former {
    pub fn new(tupdesc: pg_sys::TupleDesc) -> Former {
        // SAFETY: `tupdesc` is the `rd_att` of the relation the load inserts into, open and
        // locked RowExclusiveLock (`Prepared::begin` passes it): the lock keeps its columns from
        // changing, and the relcache keeps an unchanged descriptor across rebuilds, so it is
        // valid here and for the `Former`'s life (the load's); read on the backend thread.
        let natts = unsafe { (*tupdesc).natts } as usize;
        let mut layout = Vec::with_capacity(natts);
        let mut off = 0usize;
        for i in 0..natts {
            // SAFETY: `i < natts`; the descriptor is valid (above) and not changed while `a`
            // is used.
            let a = unsafe { crate::compat::tuple_desc_attr(tupdesc, i) };
            let len = a.attlen as isize;
            if a.attisdropped || !a.attbyval || !matches!(len, 1 | 2 | 4 | 8) {
                layout.clear();
                break;
            }
            off = att_align(off, a);
            layout.push((off, len as usize));
            off += len as usize;
        }
        let fixed = (natts > 0 && layout.len() == natts).then_some(layout);
        Former {
            tupdesc,
            fixed,
            fixed_chunk: maxalign(HEAPTUPLESIZE + HOFF + off),
            fixed_len: (HOFF + off) as u32,
        }
    }

    /// Forms one tuple from `values`/`nulls` (one entry per attribute) in the batch memory:
    /// the arena's blocks on the fixed-width path, a palloc chunk of `heap_form_tuple`'s on the
    /// fallback path (both in the current memory context, which must be the batch memory).
    ///
    /// # Safety
    /// The relation whose descriptor `new` got is still open; `values` and `nulls` hold one
    /// entry per attribute of it (`heap_form_tuple` reads that many), by-reference Datums
    /// point to valid values. The current memory context is the batch memory on both paths
    /// (`heap_form_tuple` allocates there, and so does the arena when it needs a new block),
    /// and `arena.reset()` follows every reset of it: the tuple is valid until then. On the
    /// backend thread.
    #[inline]
    pub unsafe fn form(
        &self,
        arena: &mut Arena,
        values: &[pg_sys::Datum],
        nulls: &[bool],
    ) -> pg_sys::HeapTuple {
        // SAFETY: the # Safety section's conditions are those of `form_fixed` (with `layout`
        // being `self.fixed`) and of `heap_form_tuple`, which only reads `values` and `nulls`
        // (the `*mut` casts are for its C signature). One block around the match: this is the
        // per-row path, inlined into the load loop.
        unsafe {
            match &self.fixed {
                Some(layout) if !nulls.contains(&true) => self.form_fixed(arena, layout, values),
                _ => pg_sys::heap_form_tuple(
                    self.tupdesc,
                    values.as_ptr() as *mut _,
                    nulls.as_ptr() as *mut _,
                ),
            }
        }
    }

    /// What `heap_form_tuple` builds for a row without NULLs and without variable-width
    /// attributes: header without null bitmap, values stored by value at their aligned offsets.
    ///
    /// # Safety
    /// As `form`, and `layout` is `self.fixed` (so that `fixed_chunk` bytes hold every value
    /// at its offset).
    #[inline]
    unsafe fn form_fixed(
        &self,
        arena: &mut Arena,
        layout: &[(usize, usize)],
        values: &[pg_sys::Datum],
    ) -> pg_sys::HeapTuple {
        // SAFETY: `chunk` is `fixed_chunk` fresh, zeroed bytes of the batch memory, MAXALIGNed
        // (see `Arena::alloc_zeroed`), so the `HeapTupleData` at its start and the header at
        // HEAPTUPLESIZE (a multiple of MAXALIGN) are aligned, and every `off + len` of `layout`
        // lies within the chunk (`fixed_chunk` counts `HOFF` plus the end of the last
        // attribute); the values are written unaligned. `tupdesc` is valid (# Safety). One block
        // for the whole body: this is the per-row path, inlined into the load loop.
        unsafe {
            let chunk = arena.alloc_zeroed(self.fixed_chunk);
            self.write_fixed(chunk, layout, values)
        }
    }

    /// `form_fixed`'s tuple, written into `chunk`.
    ///
    /// # Safety
    /// `chunk` is `fixed_chunk` zeroed, MAXALIGNed bytes; `layout` is `self.fixed`, `values`
    /// hold one entry per attribute; `tupdesc` is valid (as `form`).
    #[inline(always)]
    pub(super) unsafe fn write_fixed(
        &self,
        chunk: *mut u8,
        layout: &[(usize, usize)],
        values: &[pg_sys::Datum],
    ) -> pg_sys::HeapTuple {
        // SAFETY: see `form_fixed`: every write lies within the chunk, aligned where typed.
        unsafe {
            let tuple = chunk as pg_sys::HeapTuple;
            (*tuple).t_len = self.fixed_len;
            (*tuple).t_self = invalid_item_pointer();
            (*tuple).t_tableOid = pg_sys::InvalidOid;
            let td = chunk.add(HEAPTUPLESIZE) as pg_sys::HeapTupleHeader;
            (*tuple).t_data = td;
            // HeapTupleHeaderSetDatumLength / SetTypeId / SetTypMod (SET_VARSIZE, little-endian)
            (*td).t_choice.t_datum = pg_sys::DatumTupleFields {
                datum_len_: (self.fixed_len << 2) as i32,
                datum_typmod: (*self.tupdesc).tdtypmod,
                datum_typeid: (*self.tupdesc).tdtypeid,
            };
            (*td).t_ctid = invalid_item_pointer();
            (*td).t_infomask2 = layout.len() as u16; // HeapTupleHeaderSetNatts
            (*td).t_infomask = 0;
            (*td).t_hoff = HOFF as u8;
            let data = (td as *mut u8).add(HOFF);
            for (&(off, len), v) in layout.iter().zip(values) {
                let v = v.value() as u64;
                let p = data.add(off);
                match len {
                    8 => (p as *mut u64).write_unaligned(v),
                    4 => (p as *mut u32).write_unaligned(v as u32),
                    2 => (p as *mut u16).write_unaligned(v as u16),
                    _ => *p = v as u8,
                }
            }
            tuple
        }
    }
}

fn invalid_item_pointer() -> pg_sys::ItemPointerData {
    pg_sys::ItemPointerData {
        ip_blkid: pg_sys::BlockIdData {
            bi_hi: 0xFFFF,
            bi_lo: 0xFFFF,
        },
        ip_posid: 0,
    }
}

/// Bump allocation of MAXALIGNed, zeroed chunks from blocks palloc'd in the batch memory;
/// everything goes away when that memory context is reset (after each flush).
pub struct Arena {
    cur: *mut u8,
    left: usize,
}

impl Arena {
    pub fn new() -> Arena {
        Arena {
            cur: std::ptr::null_mut(),
            left: 0,
        }
    }

    /// Forget the blocks: call right after the batch memory was reset.
    pub fn reset(&mut self) {
        self.cur = std::ptr::null_mut();
        self.left = 0;
    }

    /// A zeroed chunk of `size` bytes, valid until the memory context it was taken from is
    /// reset.
    ///
    /// # Safety
    /// As [`Arena::alloc`], and `size` is a multiple of MAXALIGN.
    #[inline]
    unsafe fn alloc_zeroed(&mut self, size: usize) -> *mut u8 {
        // SAFETY: as the function's contract.
        let p = unsafe { self.alloc(size) };
        // Zero just this chunk: it is about to be written, so it is in cache anyway.
        // SAFETY: `p..p + size` is the chunk just taken (`alloc`), used by nothing else.
        unsafe { std::ptr::write_bytes(p, 0, size) };
        p
    }

    /// As [`Arena::alloc`], from the memory context `mem` (the batch memory) whatever the
    /// current one: switched to only when a new block is needed.
    ///
    /// # Safety
    /// As `alloc`, with `mem` as the batch memory.
    #[inline]
    pub unsafe fn alloc_in(&mut self, mem: pg_sys::MemoryContext, size: usize) -> *mut u8 {
        // SAFETY: as the function's contract; with enough left, `alloc` takes no block.
        unsafe {
            if maxalign(size) <= self.left {
                return self.alloc(size);
            }
            let old = pg_sys::MemoryContextSwitchTo(mem);
            let p = self.alloc(size);
            pg_sys::MemoryContextSwitchTo(old);
            p
        }
    }

    /// A chunk of at least `size` bytes (not zeroed; MAXALIGNed, as every chunk stays: the
    /// size taken is rounded up to MAXALIGN, and palloc's blocks are MAXALIGNed), valid until
    /// the memory context it was taken from is reset.
    ///
    /// # Safety
    /// The current memory context is the batch memory, and `reset` is called whenever that is
    /// reset or deleted (the blocks would dangle otherwise); `size` is above 0 and below
    /// MaxAllocSize. On the backend thread.
    #[inline(always)]
    pub unsafe fn alloc(&mut self, size: usize) -> *mut u8 {
        let size = maxalign(size);
        if size > self.left {
            // SAFETY: as this function's contract.
            unsafe { self.new_block(size) };
        }
        let p = self.cur;
        // SAFETY: `size <= left`, the bytes left of the current block from `p` on, so the
        // result stays within the block or one past its end.
        self.cur = unsafe { p.add(size) };
        self.left -= size;
        p
    }

    /// A new block for at least `size` bytes (out of line: once per `ARENA_BLOCK`).
    ///
    /// # Safety
    /// As [`Arena::alloc`].
    #[cold]
    #[inline(never)]
    unsafe fn new_block(&mut self, size: usize) {
        let block = size.max(ARENA_BLOCK);
        // SAFETY: on the backend thread, in the batch memory (# Safety); pgrx's guarded
        // palloc raises an ERROR rather than return NULL.
        self.cur = unsafe { pg_sys::palloc(block) } as *mut u8;
        self.left = block;
    }
}

impl Former {
    /// The `t_len` of a tuple the reader formed (the template's: the same for every tuple of
    /// a plan), read from the reader's bytes.
    #[inline]
    pub fn formed_len(formed: &[u8]) -> usize {
        chunk_t_len(formed)
    }

    /// A tuple the reader formed by this relation's [`TuplePlan`], copied into the batch
    /// memory: the same tuple `form` makes from the row's values.
    ///
    /// # Safety
    /// As `form`, except that `mem` is the batch memory (the current context may be any);
    /// `formed` is a tuple of this former's plan (its template's length, a multiple of 8).
    #[inline]
    pub unsafe fn copy_formed(
        &self,
        arena: &mut Arena,
        mem: pg_sys::MemoryContext,
        formed: &[u8],
    ) -> pg_sys::HeapTuple {
        debug_assert_eq!(formed.len() % MAXALIGN, 0);
        // SAFETY: `chunk` is `formed.len()` fresh MAXALIGNed bytes of the batch memory (a
        // multiple of 8, # Safety, so the word copy stays inside it and inside `formed`), which
        // hold the `HeapTupleData` and the tuple; the header starts HEAPTUPLESIZE into the
        // chunk, where `t_data` points.
        unsafe {
            let chunk = arena.alloc_in(mem, formed.len());
            // word by word, inline (a call to memcpy costs more than these few words); the
            // chunk is MAXALIGNed, the formed bytes need not be
            let from = formed.as_ptr() as *const u64;
            for i in 0..formed.len() / 8 {
                (chunk as *mut u64)
                    .add(i)
                    .write(from.add(i).read_unaligned());
            }
            let tuple = chunk as pg_sys::HeapTuple;
            (*tuple).t_data = chunk.add(HEAPTUPLESIZE) as pg_sys::HeapTupleHeader;
            tuple
        }
    }
}

/// `att_align_nominal`: `off` rounded up to the attribute's alignment.
pub(super) fn att_align(off: usize, a: &pg_sys::FormData_pg_attribute) -> usize {
    let align = alignment(a);
    (off + align - 1) & !(align - 1)
}

/// The attribute's alignment in bytes (`attalign`).
pub(super) fn alignment(a: &pg_sys::FormData_pg_attribute) -> usize {
    match a.attalign as u8 {
        b'c' => 1,
        b's' => 2,
        b'i' => 4,
        _ => 8,
    }
}
