//! The heap's page and tuple layout, as the server's headers define it: what the tuple former
//! (`tuple.rs`) and the page writer (`pages.rs`) share. Constants only, checked against
//! `pg_sys`'s structs where they have one; nothing here calls the server.

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
