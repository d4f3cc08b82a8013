//! The page writer's WAL record (`pages.rs` calls [`log_page`]): a page's
//! `XLOG_HEAP2_MULTI_INSERT`, byte for byte as `heap_multi_insert` writes it, so that
//! recovery, standbys and logical decoding replay and decode it as the server's own. The
//! layouts of heapam_xlog.h's record structs are mirrored here with compile-time checks.
//! Depends on nothing in `src/load` but the heap layout.

use super::heap_layout::{LINE_POINTER, PAGE_HEADER, TUPLE_HEADER, copy_short};
use pgrx::pg_sys;
use std::mem::{offset_of, size_of};

// access/heapam_xlog.h (the same in 15, 16, 17 and 18)
const XLOG_HEAP2_MULTI_INSERT: u8 = 0x50;
const XLOG_HEAP_INIT_PAGE: u8 = 0x80;
pub(super) const XLH_INSERT_LAST_IN_MULTI: u8 = 1 << 1;
const XLH_INSERT_CONTAINS_NEW_TUPLE: u8 = 1 << 3;
pub(super) const XLH_INSERT_ALL_FROZEN_SET: u8 = 1 << 5;

/// `xl_heap_multi_insert` without its `offsets[]` (which start at `SizeOfHeapMultiInsert`).
#[repr(C)]
struct XlHeapMultiInsert {
    flags: u8,
    ntuples: u16,
}
/// `xl_multi_insert_tuple`; `SizeOfMultiInsertTuple` is its size without the tail padding.
#[repr(C)]
struct XlMultiInsertTuple {
    datalen: u16,
    t_infomask2: u16,
    t_infomask: u16,
    t_hoff: u8,
}
const SIZE_OF_MULTI_INSERT: usize = size_of::<XlHeapMultiInsert>();
const SIZE_OF_MULTI_INSERT_TUPLE: usize = offset_of!(XlMultiInsertTuple, t_hoff) + 1;
const _: () = assert!(
    offset_of!(XlHeapMultiInsert, flags) == 0
        && offset_of!(XlHeapMultiInsert, ntuples) == 2
        && SIZE_OF_MULTI_INSERT == 4
);
const _: () = assert!(
    offset_of!(XlMultiInsertTuple, datalen) == 0
        && offset_of!(XlMultiInsertTuple, t_infomask2) == 2
        && offset_of!(XlMultiInsertTuple, t_infomask) == 4
        && SIZE_OF_MULTI_INSERT_TUPLE == 7
);

/// The tuples a record describes, in page order.
#[derive(Clone, Copy)]
pub(super) enum Entries<'a> {
    /// Tuples of one length and one header (a uniform batch: `pages.rs`'s `Uniform`), each
    /// read from the page at its offset number.
    Uniform {
        /// `t_len` of each.
        len: usize,
        /// The shared header.
        head: pg_sys::HeapTupleHeader,
        /// Their offset numbers on the page.
        offsets: &'a [u16],
    },
    /// Tuples of their own, put on the page (`t_self` set).
    Tuples(&'a [pg_sys::HeapTuple]),
}

/// The page's `XLOG_HEAP2_MULTI_INSERT` record for `entries`, as heap_multi_insert builds it
/// in `scratch`: the record header (and the offsets, unless the page was empty and is
/// re-initialized at replay, `init`), then per tuple its `xl_multi_insert_tuple` at a
/// two-byte boundary and the tuple without its fixed header. `logical`:
/// `RelationIsLogicallyLogged` (the tuples are kept with a page image too).
///
/// # Safety
/// In the page writer's critical section, the tuples put on the page of `buffer`, which is
/// locked and dirtied; `scratch` is a block of `BLCKSZ` bytes, 8-aligned, which the record
/// fits in (at most 8 + t_len - 23 + 2 bytes a tuple: fewer than the tuple takes on the page).
pub(super) unsafe fn log_page(
    scratch: *mut u8,
    buffer: pg_sys::Buffer,
    page: *const u8,
    entries: Entries<'_>,
    init: bool,
    mut flags: u8,
    logical: bool,
) -> pg_sys::XLogRecPtr {
    let base = scratch;
    let k = match entries {
        Entries::Uniform { offsets, .. } => offsets.len(),
        Entries::Tuples(tuples) => tuples.len(),
    };
    let data_at = SIZE_OF_MULTI_INSERT + if init { 0 } else { 2 * k };
    let mut p = data_at;
    // SAFETY: the record stays within the scratch block (the function's contract); the
    // tuples are valid; the server calls are made as heap_multi_insert makes them.
    unsafe {
        // uniform tuples: one length and one header for all, the entry's header bytes
        // made once; the tuples from their line pointers on the page
        let uniform_entry = match entries {
            Entries::Uniform { len, head, .. } => entry_head(len - TUPLE_HEADER, head),
            Entries::Tuples(_) => 0,
        };
        for i in 0..k {
            let (posid, td, entry, datalen) = match entries {
                Entries::Uniform { len, offsets, .. } => {
                    let posid = offsets[i];
                    let lp = page.add(PAGE_HEADER + (posid as usize - 1) * LINE_POINTER)
                        as *const pg_sys::ItemIdData;
                    let td = page.add((*lp).lp_off() as usize) as pg_sys::HeapTupleHeader;
                    (posid, td, uniform_entry, len - TUPLE_HEADER)
                }
                Entries::Tuples(tuples) => {
                    let t = tuples[i];
                    let datalen = (*t).t_len as usize - TUPLE_HEADER;
                    let td = (*t).t_data;
                    ((*t).t_self.ip_posid, td, entry_head(datalen, td), datalen)
                }
            };
            if !init {
                let off = base.add(SIZE_OF_MULTI_INSERT + 2 * i) as *mut u16;
                off.write_unaligned(posid);
            }
            p = (p + 1) & !1; // SHORTALIGN
            // the entry's 7 header bytes as one 8-byte store: its last byte is then
            // overwritten by the data (at least one byte: t_hoff is at least 24)
            (base.add(p) as *mut u64).write_unaligned(entry);
            p += SIZE_OF_MULTI_INSERT_TUPLE;
            copy_short((td as *const u8).add(TUPLE_HEADER), base.add(p), datalen);
            p += datalen;
        }
        let mut info = XLOG_HEAP2_MULTI_INSERT;
        let mut bufflags = pg_sys::REGBUF_STANDARD as u8;
        if logical {
            flags |= XLH_INSERT_CONTAINS_NEW_TUPLE;
            bufflags |= pg_sys::REGBUF_KEEP_DATA as u8;
        }
        if init {
            info |= XLOG_HEAP_INIT_PAGE;
            bufflags |= pg_sys::REGBUF_WILL_INIT as u8;
        }
        *base = flags;
        *base.add(1) = 0;
        (base.add(2) as *mut u16).write_unaligned(k as u16);
        pg_sys::XLogBeginInsert();
        pg_sys::XLogRegisterData(base as _, data_at as _);
        pg_sys::XLogRegisterBuffer(0, buffer, bufflags);
        pg_sys::XLogRegisterBufData(0, base.add(data_at) as _, (p - data_at) as _);
        pg_sys::XLogSetRecordFlags(pg_sys::XLOG_INCLUDE_ORIGIN as u8);
        pg_sys::XLogInsert(pg_sys::RmgrIds::RM_HEAP2_ID as pg_sys::RmgrId, info)
    }
}

/// The `xl_multi_insert_tuple` of a tuple with `datalen` bytes after its fixed header and
/// the header `td`: `datalen`, `t_infomask2`, `t_infomask`, `t_hoff`, in the 7 low bytes
/// of a word as they lie in memory (the layout asserted above).
///
/// # Safety
/// `td` is a valid tuple header.
#[inline(always)]
unsafe fn entry_head(datalen: usize, td: pg_sys::HeapTupleHeader) -> u64 {
    let mut entry = [0u8; 8];
    // SAFETY: as the function's contract.
    unsafe {
        entry[..2].copy_from_slice(&(datalen as u16).to_ne_bytes());
        entry[2..4].copy_from_slice(&(*td).t_infomask2.to_ne_bytes());
        entry[4..6].copy_from_slice(&(*td).t_infomask.to_ne_bytes());
        entry[6] = (*td).t_hoff;
    }
    u64::from_ne_bytes(entry)
}
