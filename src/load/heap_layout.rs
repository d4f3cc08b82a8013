//! The heap's page and tuple layout, as the server's headers define it: what the tuple former
//! (`tuple.rs`), the page writer (`pages.rs`) and its WAL record (`page_wal.rs`) share.
//! Constants checked against `pg_sys`'s structs where they have one, and [`copy_short`], the
//! copy of a tuple's bytes; nothing here calls the server.

use pgrx::pg_sys;
use std::mem::{offset_of, size_of};

pub(super) const BLCKSZ: usize = pg_sys::BLCKSZ as usize;
pub(super) const MAXALIGN: usize = 8;
/// `MAXALIGN`.
pub(crate) const fn maxalign(n: usize) -> usize {
    (n + MAXALIGN - 1) & !(MAXALIGN - 1)
}
/// `SizeOfPageHeaderData`.
pub(super) const PAGE_HEADER: usize = offset_of!(pg_sys::PageHeaderData, pd_linp);
pub(crate) const LINE_POINTER: usize = size_of::<pg_sys::ItemIdData>();
/// `SizeofHeapTupleHeader`: the fixed part of a tuple header, which the WAL record leaves out.
pub(super) const TUPLE_HEADER: usize = offset_of!(pg_sys::HeapTupleHeaderData, t_bits);
/// `MaxHeapTuplesPerPage`.
pub(crate) const MAX_TUPLES_PER_PAGE: usize =
    (BLCKSZ - PAGE_HEADER) / (maxalign(TUPLE_HEADER) + LINE_POINTER);
/// `TOAST_TUPLE_THRESHOLD`: longer tuples go through the toaster (`heap_prepare_insert`).
pub(super) const TOAST_THRESHOLD: usize =
    ((BLCKSZ - maxalign(PAGE_HEADER + 4 * LINE_POINTER)) / 4) & !7;
/// `HEAPTUPLESIZE`: the `HeapTupleData` in front of the tuple in the same chunk.
pub(super) const HEAPTUPLESIZE: usize = maxalign(size_of::<pg_sys::HeapTupleData>());
/// `t_hoff` of a tuple without a null bitmap.
pub(super) const HOFF: usize = maxalign(offset_of!(pg_sys::HeapTupleHeaderData, t_bits));

const _: () = assert!(PAGE_HEADER == 24 && LINE_POINTER == 4 && TUPLE_HEADER == 23);
const _: () = assert!(BLCKSZ != 8192 || (MAX_TUPLES_PER_PAGE == 291 && TOAST_THRESHOLD == 2032));

/// The `t_len` of a tuple chunk's bytes (its `HeapTupleData` first, as the reader forms them).
#[inline]
pub(super) fn chunk_t_len(chunk: &[u8]) -> usize {
    const _: () = assert!(offset_of!(pg_sys::HeapTupleData, t_len) == 0);
    u32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) as usize
}

/// Tuples up to this many bytes are copied by [`copy_short`] (inline), longer ones by memcpy.
const SHORT_COPY: usize = 64;

/// `len` bytes from `from` to `to`, exactly those (the page's padding after a tuple stays as
/// the server leaves it): a short tuple word by word, inline (the page writer copies each
/// tuple twice, onto the page and into the record; a call to memcpy for the 4 data bytes of
/// an int column cost more than the copy), a longer one by memcpy.
///
/// # Safety
/// `from` readable and `to` writable for `len` bytes, not overlapping.
#[inline(always)]
pub(super) unsafe fn copy_short(from: *const u8, to: *mut u8, len: usize) {
    // SAFETY: as the function's contract: every access is inside the first `len` bytes of
    // each (8-byte steps while 8 remain, then 4, 2, 1), unaligned.
    unsafe {
        if len > SHORT_COPY {
            std::ptr::copy_nonoverlapping(from, to, len);
            return;
        }
        let mut i = 0;
        while i + 8 <= len {
            (to.add(i) as *mut u64).write_unaligned((from.add(i) as *const u64).read_unaligned());
            i += 8;
        }
        if i + 4 <= len {
            (to.add(i) as *mut u32).write_unaligned((from.add(i) as *const u32).read_unaligned());
            i += 4;
        }
        if i + 2 <= len {
            (to.add(i) as *mut u16).write_unaligned((from.add(i) as *const u16).read_unaligned());
            i += 2;
        }
        if i < len {
            *to.add(i) = *from.add(i);
        }
    }
}
