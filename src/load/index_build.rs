//! Btree indexes built bottom-up at the end of a load, where the table is private to the
//! load's transaction (`fastcopy.index_build = auto`).
//!
//! When the table was created or truncated in this transaction, or is temporary, no other
//! session can see it or its indexes; when it is also empty as the load begins, every entry
//! its indexes will hold is one of the load's rows. Then the entries need not go in row by
//! row as COPY puts them (`ExecInsertIndexTuples` → `_bt_doinsert`, one WAL record per row
//! and index): [`Deferred::plan`] takes the eligible indexes out of the result relation's
//! index list (a NULL entry, which `ExecInsertIndexTuples` skips), and [`Deferred::finish`]
//! gives each a new, empty file and has the btree access method build it from the table, as
//! REINDEX does (sorted, written bottom-up, full pages logged unless `wal_level = minimal`
//! skips the WAL of a file new in the transaction, an init fork for an unlogged index).
//!
//! What COPY would raise stays COPY's: at each batch, before its rows reach the heap,
//! [`Deferred::check_batch`] looks for a key of a unique index that repeats one seen before
//! (byte equality, which the index's opclasses promise is equality: `_bt_allequalimage`).
//! At the first batch with one (or when the keys kept would outgrow
//! `maintenance_work_mem`), the indexes are built from the rows before that batch, put back,
//! and the batch and the rest of the load go through the server's insert row by row, so the
//! server raises COPY's error at COPY's row, with its message, DETAIL and CONTEXT.
//!
//! Indexes that stay on the per-row path: other access methods, expression and partial
//! indexes (their functions would run outside the row's CONTEXT), exclusion and deferrable
//! constraints, indexes not valid or not ready, an index another part of the session has
//! open. Differences from COPY a user can see: the index gets a new file (its
//! `pg_class.relfilenode` changes, as REINDEX's does); the table's statistics are untouched.

use crate::compat;
use crate::guc;
use pgrx::pg_sys;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// The indexes of one load's target that are built at its end, and what finds the first
/// repeated key of its unique ones.
pub struct Deferred {
    rri: *mut pg_sys::ResultRelInfo,
    heap: pg_sys::Relation,
    indexes: Vec<Index>,
    /// A slot over the table's rows, where batch tuples are taken apart for their keys.
    slot: *mut pg_sys::TupleTableSlot,
    /// The highest attribute number a unique index's key uses.
    max_attnum: i32,
    /// Bytes the kept keys may take (`maintenance_work_mem`).
    budget: usize,
    key: Vec<u8>,
}

/// One deferred index: its place in the result relation's arrays, and its keys so far.
struct Index {
    pos: usize,
    rel: pg_sys::Relation,
    /// `None` for an index that is not unique.
    keys: Option<Keys>,
}

/// The keys of a unique index seen so far.
struct Keys {
    /// 0-based attribute numbers of the key columns.
    attrs: Vec<usize>,
    /// `NULLS NOT DISTINCT`: a NULL equals a NULL.
    nulls_equal: bool,
    seen: Seen,
}

enum Seen {
    /// One pass-by-value column: the datums themselves (exact). Keys that ascend are appended
    /// to `ascending` (sorted, so looked up by binary search), the others go to `others`.
    Word {
        ascending: Vec<i64>,
        others: HashSet<i64, BuildHasherDefault<Mix>>,
        null_seen: bool,
    },
    /// Any other key: a 64-bit hash of its bytes. Two keys with one hash are taken as a
    /// repeat, which only sends the load to the per-row path, where the server decides.
    Hashed(HashSet<u64, BuildHasherDefault<Mix>>),
}

/// A hasher for keys that are words already: one multiply (Fibonacci hashing), enough to
/// spread ascending integers over the table.
#[derive(Default)]
struct Mix(u64);

impl Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
}

/// What [`Deferred::check_batch`] found.
pub enum Batch {
    /// No key repeats: the batch's entries wait for the build.
    Deferred,
    /// A key may repeat (or the keys outgrew the budget): build now and go row by row.
    PerRow,
}

impl Deferred {
    /// The target's btree indexes that can be built at the end, taken out of `rri`'s index
    /// list; `None` (the list untouched) when the table is not private to the transaction and
    /// empty, or no index qualifies. `rows_in_batches`: rows reach the heap in batches of the
    /// target's own buffer (not one at a time, not through tuple routing).
    ///
    /// # Safety
    /// `rri` is the target's result relation, its indexes open (`ExecOpenIndices`); backend
    /// thread.
    pub unsafe fn plan(rri: *mut pg_sys::ResultRelInfo, rows_in_batches: bool) -> Option<Deferred> {
        if !rows_in_batches || guc::index_build() != guc::IndexBuild::Auto {
            return None;
        }
        // SAFETY: as the function's contract: `rri`, its relation and its open indexes are
        // valid; the reads are of relcache entries and the IndexInfo ExecOpenIndices built.
        unsafe {
            let heap = (*rri).ri_RelationDesc;
            let n = (*rri).ri_NumIndices as usize;
            if n == 0 {
                return None;
            }
            if !private_and_empty(heap) {
                pgrx::debug1!(
                    "fastcopy: indexes filled row by row: the table is not new in this transaction and empty"
                );
                return None;
            }
            let mut indexes = Vec::new();
            for pos in 0..n {
                let rel = *(*rri).ri_IndexRelationDescs.add(pos);
                let info = *(*rri).ri_IndexRelationInfo.add(pos);
                if rel.is_null() {
                    continue;
                }
                let name = std::ffi::CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr())
                    .to_string_lossy();
                if let Err(why) = eligible(rel, info) {
                    pgrx::debug1!("fastcopy: index \"{name}\" filled row by row: {why}");
                    continue;
                }
                pgrx::debug1!("fastcopy: index \"{name}\" built at the end of the load");
                let keys = (*info).ii_Unique.then(|| Keys::new(heap, info));
                indexes.push(Index { pos, rel, keys });
            }
            if indexes.is_empty() {
                return None;
            }
            for ix in &indexes {
                *(*rri).ri_IndexRelationDescs.add(ix.pos) = std::ptr::null_mut();
            }
            let max_attnum = indexes
                .iter()
                .filter_map(|ix| ix.keys.as_ref())
                .flat_map(|k| k.attrs.iter().map(|&a| a as i32 + 1))
                .max()
                .unwrap_or(0);
            let slot = pg_sys::MakeSingleTupleTableSlot(
                (*heap).rd_att,
                &raw const pg_sys::TTSOpsHeapTuple,
            );
            Some(Deferred {
                rri,
                heap,
                indexes,
                slot,
                max_attnum,
                budget: pg_sys::maintenance_work_mem as usize * 1024,
                key: Vec::new(),
            })
        }
    }

    /// Whether a unique index is among the deferred ones (a batch then needs its keys).
    pub fn checks_keys(&self) -> bool {
        self.max_attnum > 0
    }

    /// Looks at the keys of one batch's tuples, in input order, before they reach the heap:
    /// [`Batch::PerRow`] at the first that repeats a key of the load's (this batch's or an
    /// earlier one's), or once the keys kept would take more than `maintenance_work_mem`.
    ///
    /// # Safety
    /// Each tuple is a valid heap tuple of the target's row type; backend thread.
    pub unsafe fn check_batch(&mut self, tuples: impl Iterator<Item = pg_sys::HeapTuple>) -> Batch {
        if !self.checks_keys() {
            return Batch::Deferred;
        }
        let mut used = 0;
        for tuple in tuples {
            // SAFETY: as the function's contract; the slot is over the target's descriptor.
            unsafe {
                pg_sys::ExecStoreHeapTuple(tuple, self.slot, false);
                pg_sys::slot_getsomeattrs(self.slot, self.max_attnum);
            }
            let (values, nulls) = {
                // SAFETY: `slot_getsomeattrs` filled the first `max_attnum` values and flags.
                unsafe {
                    let n = self.max_attnum as usize;
                    (
                        std::slice::from_raw_parts((*self.slot).tts_values, n),
                        std::slice::from_raw_parts((*self.slot).tts_isnull, n),
                    )
                }
            };
            for ix in &mut self.indexes {
                let Some(keys) = ix.keys.as_mut() else {
                    continue;
                };
                // SAFETY: the values are the tuple's, of the heap's descriptor.
                if unsafe { keys.repeats(self.heap, values, nulls, &mut self.key) } {
                    return Batch::PerRow;
                }
            }
            used = self
                .indexes
                .iter()
                .filter_map(|ix| ix.keys.as_ref())
                .map(Keys::bytes)
                .sum::<usize>();
            if used > self.budget {
                break;
            }
        }
        // SAFETY: the slot holds a tuple of the batch's memory; emptied before it is freed.
        unsafe { pg_sys::ExecClearTuple(self.slot) };
        if used > self.budget {
            return Batch::PerRow;
        }
        Batch::Deferred
    }

    /// Builds every deferred index from the table as it is now and puts the indexes back
    /// into the result relation's list: at the end of the load (before its AFTER triggers
    /// fire), or before a batch that goes row by row.
    ///
    /// # Safety
    /// In the load's transaction, the table holding no row but the load's; nothing refers to
    /// the slot's tuple; backend thread.
    pub unsafe fn finish(self) {
        // SAFETY: as the function's contract.
        unsafe {
            pg_sys::ExecDropSingleTupleTableSlot(self.slot);
            for ix in &self.indexes {
                build(self.heap, ix.rel);
                *(*self.rri).ri_IndexRelationDescs.add(ix.pos) = ix.rel;
            }
        }
    }

    /// Puts the indexes back without building them: the load inserted no row.
    ///
    /// # Safety
    /// As `finish`, before any row reached the heap.
    pub unsafe fn put_back(self) {
        // SAFETY: as the function's contract.
        unsafe {
            pg_sys::ExecDropSingleTupleTableSlot(self.slot);
            for ix in &self.indexes {
                *(*self.rri).ri_IndexRelationDescs.add(ix.pos) = ix.rel;
            }
        }
    }
}

impl Keys {
    /// # Safety
    /// `info` is the IndexInfo of a unique btree index on plain columns of `heap`.
    unsafe fn new(heap: pg_sys::Relation, info: *mut pg_sys::IndexInfo) -> Keys {
        // SAFETY: as the function's contract.
        unsafe {
            let nkeys = (*info).ii_NumIndexKeyAttrs as usize;
            let attrs: Vec<usize> = (0..nkeys)
                .map(|k| (*info).ii_IndexAttrNumbers[k] as usize - 1)
                .collect();
            let word = attrs.len() == 1 && {
                let att = attribute(heap, attrs[0]);
                (*att).attbyval
            };
            Keys {
                attrs,
                nulls_equal: (*info).ii_NullsNotDistinct,
                seen: if word {
                    Seen::Word {
                        ascending: Vec::new(),
                        others: HashSet::default(),
                        null_seen: false,
                    }
                } else {
                    Seen::Hashed(HashSet::default())
                },
            }
        }
    }

    /// Bytes the keys kept take (about: a hash set's slot is taken as 16 bytes).
    fn bytes(&self) -> usize {
        match &self.seen {
            Seen::Word {
                ascending, others, ..
            } => ascending.capacity() * 8 + others.capacity() * 16,
            Seen::Hashed(set) => set.capacity() * 16,
        }
    }

    /// Notes one row's key; true when it repeats one noted before.
    ///
    /// # Safety
    /// `values` and `nulls` hold the row's first attributes (every key column) of `heap`.
    unsafe fn repeats(
        &mut self,
        heap: pg_sys::Relation,
        values: &[pg_sys::Datum],
        nulls: &[bool],
        key: &mut Vec<u8>,
    ) -> bool {
        let any_null = self.attrs.iter().any(|&a| nulls[a]);
        // a NULL makes the key distinct from every other, unless NULLS NOT DISTINCT
        if any_null && !self.nulls_equal {
            return false;
        }
        match &mut self.seen {
            Seen::Word {
                ascending,
                others,
                null_seen,
            } => {
                if any_null {
                    return std::mem::replace(null_seen, true);
                }
                let v = values[self.attrs[0]].value() as i64;
                match ascending.last() {
                    Some(&last) if v <= last => {
                        ascending.binary_search(&v).is_ok() || !others.insert(v)
                    }
                    // above every key so far: new (`others` holds keys below an earlier last)
                    _ => {
                        ascending.push(v);
                        false
                    }
                }
            }
            Seen::Hashed(set) => {
                key.clear();
                for &a in &self.attrs {
                    // SAFETY: as the function's contract.
                    unsafe { key_bytes(heap, a, values[a], nulls[a], key) };
                }
                let mut h = std::hash::DefaultHasher::new();
                h.write(key);
                !set.insert(h.finish())
            }
        }
    }
}

/// Appends one key column's value to `key` as bytes that are equal exactly when the values
/// are (for equal-image opclasses): a NULL flag, then the value's bytes (a varlena's data
/// without its header, detoasted first if it is compressed or external).
///
/// # Safety
/// `value` is attribute `a` (0-based) of a row of `heap`, not NULL unless `null`.
unsafe fn key_bytes(
    heap: pg_sys::Relation,
    a: usize,
    value: pg_sys::Datum,
    null: bool,
    key: &mut Vec<u8>,
) {
    key.push(null as u8);
    if null {
        return;
    }
    // SAFETY: as the function's contract: the attribute's length and by-value flag say what
    // `value` is.
    unsafe {
        let att = attribute(heap, a);
        let len = (*att).attlen;
        if (*att).attbyval {
            key.extend_from_slice(&value.value().to_ne_bytes());
        } else if len > 0 {
            let p = value.cast_mut_ptr::<u8>();
            key.extend_from_slice(std::slice::from_raw_parts(p, len as usize));
        } else if len == -1 {
            let mut v = value.cast_mut_ptr::<pg_sys::varlena>();
            if pgrx::varlena::varatt_is_1b_e(v) || pgrx::varlena::varatt_is_4b_c(v) {
                v = pg_sys::pg_detoast_datum_packed(v);
            }
            let n = pgrx::varlena::varsize_any_exhdr(v);
            let p = pgrx::varlena::vardata_any(v).cast::<u8>();
            key.extend_from_slice(&(n as u64).to_ne_bytes());
            key.extend_from_slice(std::slice::from_raw_parts(p, n));
        } else {
            let s = std::ffi::CStr::from_ptr(value.cast_mut_ptr::<std::ffi::c_char>());
            key.extend_from_slice(s.to_bytes_with_nul());
        }
    }
}

/// The attribute `a` (0-based) of `heap`'s descriptor.
///
/// # Safety
/// `heap` is open and `a` one of its attributes.
unsafe fn attribute(heap: pg_sys::Relation, a: usize) -> *const pg_sys::FormData_pg_attribute {
    // SAFETY: as the function's contract.
    unsafe { (*(*heap).rd_att).attrs.as_ptr().add(a) }
}

/// The table was created or truncated in this transaction (or is temporary), so no other
/// session can reach it, and it has no block yet.
///
/// # Safety
/// `heap` is open and locked.
unsafe fn private_and_empty(heap: pg_sys::Relation) -> bool {
    // SAFETY: as the function's contract.
    unsafe {
        let temp = (*(*heap).rd_rel).relpersistence as u8 == pg_sys::RELPERSISTENCE_TEMP;
        (temp || compat::created_in_this_transaction(heap))
            && pg_sys::RelationGetNumberOfBlocksInFork(heap, pg_sys::ForkNumber::MAIN_FORKNUM) == 0
    }
}

/// A btree index on plain columns, valid and ready, no predicate, not an exclusion or a
/// deferrable constraint, opened by the load alone; a unique one only where byte equality
/// of its keys is the opclasses' equality.
///
/// # Safety
/// `index` is open, `info` its IndexInfo.
unsafe fn eligible(
    index: pg_sys::Relation,
    info: *mut pg_sys::IndexInfo,
) -> Result<(), &'static str> {
    // SAFETY: as the function's contract.
    unsafe {
        let form = (*index).rd_index;
        let plain =
            (0..(*info).ii_NumIndexAttrs as usize).all(|k| (*info).ii_IndexAttrNumbers[k] > 0);
        if (*(*index).rd_rel).relam != pg_sys::BTREE_AM_OID {
            Err("not a btree index")
        } else if !((*form).indisvalid && (*form).indisready && (*form).indislive) {
            Err("not valid or not ready")
        } else if !(*form).indimmediate
            || (*form).indisexclusion
            || !(*info).ii_ExclusionOps.is_null()
        {
            Err("a deferrable or exclusion constraint")
        } else if !plain || !(*info).ii_Expressions.is_null() {
            Err("an expression index")
        } else if !(*info).ii_Predicate.is_null() {
            Err("a partial index")
        } else if (*index).rd_refcnt != 1 {
            Err("the index is open elsewhere in this session")
        } else if (*info).ii_Unique && !compat::btree_all_equal_image(index) {
            Err("a unique index whose equal keys may differ as bytes")
        } else {
            Ok(())
        }
    }
}

/// Gives `index` a new, empty file and builds it from `heap` with its access method's build
/// (the btree's sort and bottom-up write), as REINDEX does, without REINDEX's statistics
/// update of the table; an unlogged index gets its init fork.
///
/// # Safety
/// `index` is an open btree index of `heap`, both private to the transaction; backend thread.
unsafe fn build(heap: pg_sys::Relation, index: pg_sys::Relation) {
    // SAFETY: as the function's contract; the access method's functions are called through
    // the FFI guard, which turns an ERROR they raise into a Rust panic pgrx re-raises.
    unsafe {
        compat::transfer_predicate_locks(index);
        compat::set_new_file(index, (*(*index).rd_rel).relpersistence);
        let info = pg_sys::BuildIndexInfo(index);
        // workers to scan and sort, as REINDEX plans them (none for a temporary table)
        (*info).ii_ParallelWorkers =
            pg_sys::plan_create_index_workers((*heap).rd_id, (*index).rd_id);
        let am = (*index).rd_indam;
        let ambuild = (*am).ambuild.expect("an index access method builds");
        pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| ambuild(heap, index, info));
        if (*(*index).rd_rel).relpersistence as u8 == pg_sys::RELPERSISTENCE_UNLOGGED {
            compat::create_init_fork(index);
            let empty = (*am)
                .ambuildempty
                .expect("an index access method builds empty");
            pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| empty(index));
        }
        pg_sys::CommandCounterIncrement();
    }
}
