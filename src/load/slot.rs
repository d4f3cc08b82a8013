//! The heap-tuple slots that carry the tuples `tuple.rs` forms to `table_multi_insert` and the
//! executor: a formed tuple stored as if the slot owned it, forgotten again without a free,
//! and the slot operations that are inline functions in C (`ExecClearTuple`, `ExecCopySlot`,
//! `ExecMaterializeSlot`, ...), through pgrx's FFI guard.

use pgrx::pg_sys;

/// Whether one of the attributes `attrs` (0-based, ascending) is NULL in `tuple`, as `heap_attisnull`
/// reads the null bitmap; an attribute beyond the tuple's own count is taken as NULL (the
/// server's test then decides).
///
/// # Safety
/// `tuple` is a valid heap tuple.
#[inline]
pub unsafe fn has_null_in(tuple: pg_sys::HeapTuple, attrs: &[u16]) -> bool {
    // SAFETY: `t_data` of a valid tuple is its header; the null bitmap has a bit for each of
    // the tuple's attributes when HEAP_HASNULL is set, and only those are read.
    unsafe {
        let t = (*tuple).t_data;
        let natts = (*t).t_infomask2 & pg_sys::HEAP_NATTS_MASK as u16;
        if (*t).t_infomask & pg_sys::HEAP_HASNULL as u16 == 0 {
            // (`attrs` ascending: the last is the highest)
            return attrs.last().is_some_and(|&a| a >= natts);
        }
        let bits = (*t).t_bits.as_ptr();
        attrs
            .iter()
            .any(|&a| a >= natts || *bits.add(a as usize / 8) & (1 << (a % 8)) == 0)
    }
}

/// Puts `tuple` into a heap-tuple slot as if the slot owned it (so materializing is a no-op).
/// Only writes to the slot: the slots of a big batch are rarely in cache, and a read of their
/// flags stalled the load loop. `flags` is the slot's constant flags (`TTS_FLAG_FIXED`).
///
/// # Safety
/// `slot` is an empty slot of `TTSOpsHeapTuple` (so it is a `HeapTupleTableSlot`) for the
/// descriptor `tuple` was formed for, and `flags` its `constant_flags`; `tuple` stays valid
/// while the slot holds it. The slot must be emptied with `forget`, never cleared, while it
/// holds a tuple that is not a palloc chunk of its own (an arena one): with
/// TTS_FLAG_SHOULDFREE set, a clear would pfree it.
#[inline]
pub unsafe fn store(
    slot: *mut pg_sys::TupleTableSlot,
    tuple: pg_sys::HeapTuple,
    relid: pg_sys::Oid,
    flags: u16,
) {
    // SAFETY: `slot` is a valid `HeapTupleTableSlot` (# Safety), so the field writes are in
    // bounds; they set what `tts_heap_store_tuple` sets for an owned tuple. Per-row path:
    // one block.
    unsafe {
        let h = slot as *mut pg_sys::HeapTupleTableSlot;
        (*h).tuple = tuple;
        (*h).off = 0;
        (*slot).tts_nvalid = 0;
        (*slot).tts_tableOid = relid;
        (*slot).tts_flags = flags | pg_sys::TTS_FLAG_SHOULDFREE as u16;
    }
}

/// Empties a slot filled by `store` without freeing its tuple (the batch memory owns it).
///
/// # Safety
/// `slot` is a slot of `TTSOpsHeapTuple` (filled by `store`), `flags` its `constant_flags`;
/// its tuple is not used through it afterwards.
#[inline]
pub unsafe fn forget(slot: *mut pg_sys::TupleTableSlot, flags: u16) {
    // SAFETY: `slot` is a valid `HeapTupleTableSlot` (# Safety); the writes leave it empty,
    // as `tts_heap_clear` does, without the pfree. Per-row path: one block.
    unsafe {
        let h = slot as *mut pg_sys::HeapTupleTableSlot;
        (*h).tuple = std::ptr::null_mut();
        (*h).off = 0;
        (*slot).tts_nvalid = 0;
        (*slot).tts_flags = flags | pg_sys::TTS_FLAG_EMPTY as u16;
    }
}

/// The flags of an empty heap-tuple slot that stay set whatever it holds.
///
/// # Safety
/// `slot` points to a valid `TupleTableSlot`.
pub unsafe fn constant_flags(slot: *mut pg_sys::TupleTableSlot) -> u16 {
    // SAFETY: a read of a valid slot (# Safety).
    unsafe {
        (*slot).tts_flags
            & !((pg_sys::TTS_FLAG_EMPTY | pg_sys::TTS_FLAG_SHOULDFREE | pg_sys::TTS_FLAG_SLOW)
                as u16)
    }
}

/// `ExecClearTuple` (a static inline function in C).
///
/// # Safety
/// `slot` is a valid slot whose contents may be freed (not one `store` filled with an arena
/// tuple); on the backend thread. The callback goes through pgrx's FFI guard, so that an
/// ERROR in it unwinds as a panic instead of a longjmp past Rust frames.
#[inline]
pub unsafe fn clear(slot: *mut pg_sys::TupleTableSlot) {
    // SAFETY: `slot` is valid (# Safety), so `tts_ops` points to its slot type's static
    // `TupleTableSlotOps`, whose `clear` every slot type sets; this is `ExecClearTuple`.
    unsafe { pg_sys::ffi::pg_guard_ffi_boundary(|| ((*(*slot).tts_ops).clear.unwrap())(slot)) }
}

/// `ExecCopySlot`: `dst` gets its own copy of `src`'s tuple.
///
/// # Safety
/// `dst` and `src` are valid slots of the same row type, `src` holds a row, `dst` may be
/// cleared (as `clear`); on the backend thread. Through pgrx's FFI guard, as `clear`.
#[inline]
pub unsafe fn copy(dst: *mut pg_sys::TupleTableSlot, src: *mut pg_sys::TupleTableSlot) {
    // SAFETY: `dst` is valid (# Safety), so `tts_ops` points to its static
    // `TupleTableSlotOps`, whose `copyslot` every slot type sets; this is `ExecCopySlot`.
    unsafe {
        pg_sys::ffi::pg_guard_ffi_boundary(|| ((*(*dst).tts_ops).copyslot.unwrap())(dst, src))
    }
}

/// `ExecMaterializeSlot`: the slot's tuple no longer points into anything else.
///
/// # Safety
/// `slot` is a valid slot holding a row; on the backend thread. Through pgrx's FFI guard, as
/// `clear`.
#[inline]
pub unsafe fn materialize(slot: *mut pg_sys::TupleTableSlot) {
    // SAFETY: `slot` is valid (# Safety), so `tts_ops` points to its static
    // `TupleTableSlotOps`, whose `materialize` every slot type sets; this is
    // `ExecMaterializeSlot`.
    unsafe {
        pg_sys::ffi::pg_guard_ffi_boundary(|| ((*(*slot).tts_ops).materialize.unwrap())(slot))
    }
}

/// Stores `values`/`nulls` in `slot` as a virtual tuple (the Datums are not copied).
///
/// # Safety
/// `slot` is a valid slot that may be cleared (as `clear`) whose descriptor has exactly
/// `values.len()` attributes (its `tts_values` and `tts_isnull` hold that many), and
/// `nulls.len() == values.len()`; by-reference Datums stay valid while the slot holds them.
/// On the backend thread.
#[inline]
pub unsafe fn store_values(
    slot: *mut pg_sys::TupleTableSlot,
    values: &[pg_sys::Datum],
    nulls: &[bool],
) {
    // SAFETY: per # Safety, the copies write `values.len()` entries into arrays of that
    // length, which do not overlap the caller's slices; the flag and count writes are what
    // `ExecStoreVirtualTuple` does after the clear. Per-row path: one block.
    unsafe {
        clear(slot);
        std::ptr::copy_nonoverlapping(values.as_ptr(), (*slot).tts_values, values.len());
        std::ptr::copy_nonoverlapping(nulls.as_ptr(), (*slot).tts_isnull, nulls.len());
        // what ExecStoreVirtualTuple does to an empty slot, without a guarded call per row
        (*slot).tts_flags &= !(pg_sys::TTS_FLAG_EMPTY as u16);
        (*slot).tts_nvalid = values.len() as pg_sys::AttrNumber;
    }
}
