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

use super::btree_writer::BtreeWriter;
use super::heap_layout::maxalign;
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
    /// Where the key attributes (and those before them) are in a tuple without NULLs when
    /// all of them are fixed-width: read there, without the slot.
    fixed: Option<Vec<FixedAttr>>,
    values: Vec<pg_sys::Datum>,
    nulls: Vec<bool>,
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
    /// A unique own-built index's repeated-key check, on the words of its entries.
    word_keys: Option<WordKeys>,
    /// The (key, TID) entries fastcopy writes the index from itself; `None` for an index the
    /// server's build makes from the table.
    own: Option<OwnBuild>,
}

/// The entries of an index whose key columns fastcopy can order itself (integers, dates,
/// timestamps, uuids with their default opclass, ascending, NULLS LAST, no INCLUDE column):
/// each row's key as words that compare as the opclass orders the values, then its heap TID.
struct OwnBuild {
    cols: Vec<KeyCol>,
    /// Key words a row.
    words: usize,
    /// The key words of the batch's rows, before their TIDs are known.
    staged: Vec<u64>,
    entries: Box<dyn Entries>,
    /// No NULL key came: the entries are every row's (else the server's build makes it).
    usable: bool,
    /// The bytes of one leaf tuple (all of one size: fixed-width keys, no NULL).
    tuple_size: usize,
}

/// One key column of an own-built index.
struct KeyCol {
    /// 0-based attribute number in the table.
    attr: usize,
    kind: KeyKind,
    /// Where the value starts in the leaf tuple.
    offset: usize,
}

#[derive(Clone, Copy)]
enum KeyKind {
    /// A signed integer of this many bytes (int2, int4, int8, date, timestamp, timestamptz).
    Int(usize),
    /// 16 bytes compared as unsigned bytes (uuid).
    Uuid,
}

impl KeyKind {
    fn words(self) -> usize {
        match self {
            KeyKind::Int(_) => 1,
            KeyKind::Uuid => 2,
        }
    }
}

/// The (key words, TID) entries of one index, of a fixed width.
trait Entries {
    fn push(&mut self, entry: &[u64]);
    fn bytes(&self) -> usize;
    fn len(&self) -> usize;
    /// Sorts the entries (a no-op when they came in order) and tells whether two adjacent
    /// ones have equal keys.
    fn sort(&mut self) -> bool;
    fn get(&self, i: usize) -> &[u64];
    /// Two equal keys came one after the other while the entries were in order.
    fn repeats(&self) -> bool;
}

struct Fixed<const N: usize> {
    v: Vec<[u64; N]>,
    sorted: bool,
    repeats: bool,
}

impl<const N: usize> Entries for Fixed<N> {
    #[inline]
    fn push(&mut self, entry: &[u64]) {
        let mut e = [0u64; N];
        e.copy_from_slice(entry);
        if self.sorted
            && let Some(l) = self.v.last()
        {
            if *l > e {
                self.sorted = false;
            } else if l[..N - 1] == e[..N - 1] {
                self.repeats = true;
            }
        }
        self.v.push(e);
    }
    fn bytes(&self) -> usize {
        // the entries written (a vector's room beyond them is address space the process has
        // not touched yet)
        self.v.len() * N * 8
    }
    fn len(&self) -> usize {
        self.v.len()
    }
    fn sort(&mut self) -> bool {
        if !self.sorted {
            self.v.sort_unstable();
            self.sorted = true;
        }
        self.v.windows(2).any(|w| w[0][..N - 1] == w[1][..N - 1])
    }
    fn get(&self, i: usize) -> &[u64] {
        &self.v[i]
    }
    fn repeats(&self) -> bool {
        self.repeats
    }
}

fn entries(width: usize) -> Option<Box<dyn Entries>> {
    fn fixed<const N: usize>() -> Box<dyn Entries> {
        Box::new(Fixed::<N> {
            v: Vec::new(),
            sorted: true,
            repeats: false,
        })
    }
    Some(match width {
        2 => fixed::<2>(),
        3 => fixed::<3>(),
        4 => fixed::<4>(),
        5 => fixed::<5>(),
        _ => return None,
    })
}

impl OwnBuild {
    /// The own build of `index` on `heap`, when its key columns allow it.
    ///
    /// # Safety
    /// `index` is an open btree index of `heap`, `info` its IndexInfo.
    unsafe fn of(
        heap: pg_sys::Relation,
        index: pg_sys::Relation,
        info: *mut pg_sys::IndexInfo,
    ) -> Option<OwnBuild> {
        // SAFETY: as the function's contract.
        unsafe {
            let nkeys = (*info).ii_NumIndexKeyAttrs as usize;
            if (*info).ii_NumIndexAttrs as usize != nkeys {
                return None;
            }
            let idesc = (*index).rd_att;
            let mut cols = Vec::new();
            // the leaf tuple's data follows its 8-byte header (no NULL bitmap)
            let mut off = 8usize;
            for k in 0..nkeys {
                let attr = (*info).ii_IndexAttrNumbers[k] as usize - 1;
                let typid = attribute(heap, attr).atttypid;
                let kind = match typid {
                    pg_sys::INT2OID => KeyKind::Int(2),
                    pg_sys::INT4OID | pg_sys::DATEOID => KeyKind::Int(4),
                    pg_sys::INT8OID | pg_sys::TIMESTAMPOID | pg_sys::TIMESTAMPTZOID => {
                        KeyKind::Int(8)
                    }
                    pg_sys::UUIDOID => KeyKind::Uuid,
                    _ => return None,
                };
                // the type's default opclass (its family: integer_ops, datetime_ops,
                // uuid_ops), ascending, NULLS LAST
                let default = pg_sys::GetDefaultOpClass(typid, pg_sys::BTREE_AM_OID);
                if *(*index).rd_indoption.add(k) != 0
                    || default == pg_sys::InvalidOid
                    || *(*index).rd_opfamily.add(k) != pg_sys::get_opclass_family(default)
                    || *(*index).rd_opcintype.add(k) != typid
                {
                    return None;
                }
                let iatt = compat::tuple_desc_attr(idesc, k);
                off = align_to(off, iatt.attalign);
                cols.push(KeyCol {
                    attr,
                    kind,
                    offset: off,
                });
                off += iatt.attlen as usize;
            }
            let words: usize = cols.iter().map(|c| c.kind.words()).sum();
            Some(OwnBuild {
                cols,
                words,
                staged: Vec::new(),
                entries: entries(words + 1)?,
                usable: true,
                tuple_size: maxalign(off),
            })
        }
    }

    /// Notes one row's key words; false when it has a NULL key, which ends the own build
    /// (the server's makes the index).
    ///
    /// # Safety
    /// `values` and `nulls` hold the row's attributes up to every key column.
    #[inline]
    unsafe fn stage(&mut self, values: &[pg_sys::Datum], nulls: &[bool], unique: bool) -> bool {
        // (a unique index's keys are staged for its check even without entries)
        if !self.usable && !unique {
            return true;
        }
        for c in &self.cols {
            if nulls[c.attr] {
                self.give_up();
                return false;
            }
            let v = values[c.attr];
            match c.kind {
                KeyKind::Int(_) => self.staged.push((v.value() as i64 as u64) ^ (1 << 63)),
                KeyKind::Uuid => {
                    // SAFETY: a uuid datum points to its 16 bytes.
                    let b = unsafe { std::slice::from_raw_parts(v.cast_mut_ptr::<u8>(), 16) };
                    self.staged
                        .push(u64::from_be_bytes(b[..8].try_into().unwrap_or_default()));
                    self.staged
                        .push(u64::from_be_bytes(b[8..].try_into().unwrap_or_default()));
                }
            }
        }
        true
    }

    /// No own build after all: the entries freed, the server's build makes the index.
    fn give_up(&mut self) {
        self.usable = false;
        self.staged.clear();
        self.entries = entries(self.words + 1).expect("the width was taken before");
    }

    /// The staged rows' entries, with their TIDs, in batch order.
    fn attach(&mut self, tids: &[u64], unique: bool) {
        if !self.usable {
            self.staged.clear();
            return;
        }
        let mut e = [0u64; 5];
        let w = self.words;
        for (i, &tid) in tids.iter().enumerate() {
            e[..w].copy_from_slice(&self.staged[i * w..(i + 1) * w]);
            e[w] = tid;
            self.entries.push(&e[..=w]);
        }
        self.staged.clear();
        // equal keys in an index that is not unique: the server's build makes posting lists
        if !unique && self.entries.repeats() {
            self.give_up();
        }
    }

    /// Leaf tuple `i` (after `sort`) into `buf` (`tuple_size` bytes).
    fn form(&self, i: usize, buf: &mut [u8]) {
        let e = self.entries.get(i);
        buf.fill(0);
        let tid = e[self.words];
        let block = (tid >> 16) as u32;
        buf[0..2].copy_from_slice(&((block >> 16) as u16).to_ne_bytes());
        buf[2..4].copy_from_slice(&((block & 0xFFFF) as u16).to_ne_bytes());
        buf[4..6].copy_from_slice(&((tid & 0xFFFF) as u16).to_ne_bytes());
        buf[6..8].copy_from_slice(&(self.tuple_size as u16).to_ne_bytes());
        let mut w = 0;
        for c in &self.cols {
            match c.kind {
                KeyKind::Int(n) => {
                    let v = (e[w] ^ (1 << 63)) as i64;
                    // the value's own n bytes, in the server's byte order
                    let bytes = v.to_ne_bytes();
                    let low = if cfg!(target_endian = "big") {
                        &bytes[8 - n..]
                    } else {
                        &bytes[..n]
                    };
                    buf[c.offset..c.offset + n].copy_from_slice(low);
                    w += 1;
                }
                KeyKind::Uuid => {
                    buf[c.offset..c.offset + 8].copy_from_slice(&e[w].to_be_bytes());
                    buf[c.offset + 8..c.offset + 16].copy_from_slice(&e[w + 1].to_be_bytes());
                    w += 2;
                }
            }
        }
    }
}

/// `off` rounded up to an attribute's alignment (`att_align_nominal`: 'c', 's', 'i', 'd').
fn align_to(off: usize, attalign: std::ffi::c_char) -> usize {
    let align = match attalign as u8 {
        b's' => 2,
        b'i' => 4,
        b'd' => 8,
        _ => 1,
    };
    off.div_ceil(align) * align
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

/// The repeated-key check of a unique index fastcopy writes itself, on its key words: while
/// the keys ascend, the last one is all it needs (a key above it is new); at the first that
/// does not, a set of the hashes of every key so far, then of each one after. A hash seen
/// twice is taken as a repeat (rarely wrongly: the load then goes row by row).
#[derive(Default)]
struct WordKeys {
    last: Vec<u64>,
    set: Option<HashSet<u64, BuildHasherDefault<Mix>>>,
}

impl WordKeys {
    /// Whether the key just staged in `own` repeats one before it (attached or staged);
    /// `None` when that cannot be told: a key below the last after the entries were given up.
    fn repeats(&mut self, own: &OwnBuild) -> Option<bool> {
        let w = own.words;
        let n = own.staged.len() / w;
        let key = &own.staged[(n - 1) * w..];
        if self.set.is_none() {
            if self.last.is_empty() || key > &self.last[..] {
                self.last.clear();
                self.last.extend_from_slice(key);
                return Some(false);
            }
            if key == &self.last[..] {
                return Some(true);
            }
            if !own.usable {
                return None;
            }
            // the first key below the last: every key so far into the set
            let mut set = HashSet::default();
            for i in 0..own.entries.len() {
                set.insert(hash_words(&own.entries.get(i)[..w]));
            }
            for k in own.staged[..(n - 1) * w].chunks_exact(w) {
                set.insert(hash_words(k));
            }
            self.set = Some(set);
        }
        let set = self.set.as_mut().expect("made above");
        Some(!set.insert(hash_words(key)))
    }

    fn bytes(&self) -> usize {
        self.set.as_ref().map_or(0, set_bytes)
    }
}

/// What a set of 8-byte keys allocates: a slot and a control byte for each of its buckets,
/// about 8 for 7 of its capacity (every page of it touched, as keys land anywhere).
fn set_bytes<T>(set: &HashSet<T, BuildHasherDefault<Mix>>) -> usize {
    set.capacity() * 9 * 8 / 7
}

fn hash_words(words: &[u64]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    for &w in words {
        h.write_u64(w);
    }
    h.finish()
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
                let own = OwnBuild::of(heap, rel, info);
                let unique = (*info).ii_Unique;
                // a unique index fastcopy writes itself checks its keys on its entries
                let keys = (unique && own.is_none()).then(|| Keys::new(heap, info));
                let word_keys = (unique && own.is_some()).then(WordKeys::default);
                indexes.push(Index {
                    pos,
                    rel,
                    keys,
                    word_keys,
                    own,
                });
            }
            if indexes.is_empty() {
                return None;
            }
            for ix in &indexes {
                *(*rri).ri_IndexRelationDescs.add(ix.pos) = std::ptr::null_mut();
            }
            let max_attnum = indexes
                .iter()
                .flat_map(|ix| {
                    let unique = ix.keys.iter().flat_map(|k| k.attrs.iter().copied());
                    let own = ix.own.iter().flat_map(|o| o.cols.iter().map(|c| c.attr));
                    unique.chain(own).collect::<Vec<_>>()
                })
                .map(|a| a as i32 + 1)
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
                fixed: fixed_layout(heap, max_attnum as usize),
                values: vec![pg_sys::Datum::from(0); max_attnum as usize],
                nulls: vec![false; max_attnum as usize],
                max_attnum,
                budget: pg_sys::maintenance_work_mem as usize * 1024,
                key: Vec::new(),
            })
        }
    }

    /// Whether a batch's rows' keys are needed: a unique index's, or an own-built one's.
    pub fn checks_keys(&self) -> bool {
        self.max_attnum > 0
    }

    /// After the batch's rows reached the heap: their TIDs, in batch order, complete the
    /// entries of the own-built indexes.
    pub fn attach_tids(&mut self, tids: impl Iterator<Item = pg_sys::ItemPointerData>) {
        if !self.indexes.iter().any(|ix| ix.own.is_some()) {
            return;
        }
        let packed: Vec<u64> = tids
            .map(|t| {
                let block = (u32::from(t.ip_blkid.bi_hi) << 16) | u32::from(t.ip_blkid.bi_lo);
                (u64::from(block) << 16) | u64::from(t.ip_posid)
            })
            .collect();
        for ix in &mut self.indexes {
            if let Some(own) = ix.own.as_mut() {
                own.attach(&packed, ix.word_keys.is_some());
            }
        }
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
        let n = self.max_attnum as usize;
        for tuple in tuples {
            // SAFETY: as the function's contract: a valid heap tuple of the target.
            let direct = unsafe { self.read_fixed(tuple) };
            let (values, nulls): (&[pg_sys::Datum], &[bool]) = if direct {
                (&self.values, &self.nulls)
            } else {
                // SAFETY: as the function's contract; the slot is over the target's
                // descriptor, and `slot_getsomeattrs` fills its first `n` values and flags.
                unsafe {
                    pg_sys::ExecStoreHeapTuple(tuple, self.slot, false);
                    pg_sys::slot_getsomeattrs(self.slot, self.max_attnum);
                    (
                        std::slice::from_raw_parts((*self.slot).tts_values, n),
                        std::slice::from_raw_parts((*self.slot).tts_isnull, n),
                    )
                }
            };
            for ix in &mut self.indexes {
                if let Some(own) = ix.own.as_mut() {
                    let unique = ix.word_keys.is_some();
                    // SAFETY: the values are the tuple's, of the heap's descriptor.
                    let staged = unsafe { own.stage(values, nulls, unique) };
                    if let Some(wk) = ix.word_keys.as_mut() {
                        // (a NULL key of a unique index fastcopy writes: row by row, where
                        // the server decides; also a key below the last once the entries
                        // are gone)
                        if !staged || wk.repeats(own) != Some(false) {
                            return Batch::PerRow;
                        }
                    }
                }
                let Some(keys) = ix.keys.as_mut() else {
                    continue;
                };
                // SAFETY: the values are the tuple's, of the heap's descriptor.
                if unsafe { keys.repeats(self.heap, values, nulls, &mut self.key) } {
                    return Batch::PerRow;
                }
            }
        }
        // SAFETY: the slot holds a tuple of the batch's memory; emptied before it is freed.
        unsafe { pg_sys::ExecClearTuple(self.slot) };
        // over the budget: entries go, those of indexes that are not unique first (equal keys
        // may yet end their own build), the largest first (the index then gets the server's
        // build from the table); the load goes row by row only when the unique keys alone
        // are over it
        while self.bytes_used() > self.budget {
            let largest = self
                .indexes
                .iter_mut()
                .filter(|ix| ix.own.as_ref().is_some_and(|o| o.usable))
                .max_by_key(|ix| {
                    let bytes = ix.own.as_ref().map_or(0, |o| o.entries.bytes());
                    (ix.word_keys.is_none(), bytes)
                })
                .and_then(|ix| ix.own.as_mut());
            match largest {
                Some(o) => o.give_up(),
                None => {
                    pgrx::debug1!(
                        "fastcopy: the keys of the load's unique indexes take {} bytes, over maintenance_work_mem",
                        self.bytes_used()
                    );
                    return Batch::PerRow;
                }
            }
        }
        Batch::Deferred
    }

    /// The tuple's first attributes into `values` as `slot_getsomeattrs` would fetch them,
    /// when the layout is fixed and the tuple has no NULL and every attribute; false (nothing
    /// read) otherwise.
    ///
    /// # Safety
    /// `tuple` is a valid heap tuple of the target.
    #[inline]
    unsafe fn read_fixed(&mut self, tuple: pg_sys::HeapTuple) -> bool {
        let Some(layout) = &self.fixed else {
            return false;
        };
        // SAFETY: as the function's contract: the header's fields, then the data at the
        // offsets the descriptor gives every tuple without NULLs.
        unsafe {
            let t = (*tuple).t_data;
            let natts = ((*t).t_infomask2 & pg_sys::HEAP_NATTS_MASK as u16) as usize;
            if (*t).t_infomask & pg_sys::HEAP_HASNULL as u16 != 0 || natts < layout.len() {
                return false;
            }
            let data = t.cast::<u8>().add((*t).t_hoff as usize);
            for (i, a) in layout.iter().enumerate() {
                let p = data.add(a.offset);
                // fetch_att: a pass-by-value attribute's bytes as a (sign-extended) datum,
                // any other a pointer to it
                self.values[i] = match (a.byval, a.len) {
                    (true, 1) => pg_sys::Datum::from(p.cast::<i8>().read() as i64),
                    (true, 2) => pg_sys::Datum::from(p.cast::<i16>().read_unaligned() as i64),
                    (true, 4) => pg_sys::Datum::from(p.cast::<i32>().read_unaligned() as i64),
                    (true, 8) => pg_sys::Datum::from(p.cast::<i64>().read_unaligned()),
                    _ => pg_sys::Datum::from(p),
                };
            }
            true
        }
    }

    /// Bytes the unique keys and the entries take.
    fn bytes_used(&self) -> usize {
        self.indexes
            .iter()
            .map(|ix| {
                ix.keys.as_ref().map_or(0, Keys::bytes)
                    + ix.word_keys.as_ref().map_or(0, WordKeys::bytes)
                    + ix.own
                        .as_ref()
                        .map_or(0, |o| o.entries.bytes() + o.staged.len() * 8)
            })
            .sum()
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
            for ix in self.indexes {
                build(self.heap, ix.rel, ix.own);
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
            let word = attrs.len() == 1 && attribute(heap, attrs[0]).attbyval;
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
            } => ascending.len() * 8 + set_bytes(others),
            Seen::Hashed(set) => set_bytes(set),
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
        let len = att.attlen;
        if att.attbyval {
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

/// Where one attribute is in a tuple whose attributes before it are all fixed-width.
struct FixedAttr {
    offset: usize,
    len: usize,
    byval: bool,
}

/// The offsets of the first `n` attributes of `heap`'s tuples without NULLs, when each of
/// them is fixed-width (as `attcacheoff` gives them); `None` otherwise.
///
/// # Safety
/// `heap` is open.
unsafe fn fixed_layout(heap: pg_sys::Relation, n: usize) -> Option<Vec<FixedAttr>> {
    let mut off = 0usize;
    let mut layout = Vec::with_capacity(n);
    for a in 0..n {
        // SAFETY: as the function's contract; `a` is below natts (a key column's number).
        let att = unsafe { attribute(heap, a) };
        if att.attlen <= 0
            || att.attisdropped
            || (att.attbyval && ![1, 2, 4, 8].contains(&att.attlen))
        {
            return None;
        }
        off = align_to(off, att.attalign);
        layout.push(FixedAttr {
            offset: off,
            len: att.attlen as usize,
            byval: att.attbyval,
        });
        off += att.attlen as usize;
    }
    Some(layout)
}

/// The attribute `a` (0-based) of `heap`'s descriptor.
///
/// # Safety
/// `heap` is open and `a` one of its attributes.
unsafe fn attribute<'a>(heap: pg_sys::Relation, a: usize) -> &'a pg_sys::FormData_pg_attribute {
    // SAFETY: as the function's contract.
    unsafe { compat::tuple_desc_attr((*heap).rd_att, a) }
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
unsafe fn build(heap: pg_sys::Relation, index: pg_sys::Relation, own: Option<OwnBuild>) {
    // SAFETY: as the function's contract; the access method's functions are called through
    // the FFI guard, which turns an ERROR they raise into a Rust panic pgrx re-raises.
    unsafe {
        let unique = (*(*index).rd_index).indisunique;
        // fastcopy writes it when it has every row's entry and, for an index that may hold
        // equal keys, none repeats (the server's build would make posting lists of them)
        let own = own.filter(|o| o.usable).and_then(|mut o| {
            let repeats = o.entries.sort();
            (unique || !repeats).then_some(o)
        });
        let name =
            std::ffi::CStr::from_ptr((*(*index).rd_rel).relname.data.as_ptr()).to_string_lossy();
        compat::transfer_predicate_locks(index);
        compat::set_new_file(index, (*(*index).rd_rel).relpersistence);
        let am = (*index).rd_indam;
        if let Some(o) = own {
            pgrx::debug1!(
                "fastcopy: index \"{name}\": {} entries written bottom-up",
                o.entries.len()
            );
            let mut writer = BtreeWriter::new(index);
            let mut buf = vec![0u8; o.tuple_size];
            for i in 0..o.entries.len() {
                if i % 65536 == 0 {
                    pgrx::check_for_interrupts!();
                }
                o.form(i, &mut buf);
                writer.add_leaf(&buf);
            }
            writer.finish(compat::btree_all_equal_image(index));
        } else {
            pgrx::debug1!("fastcopy: index \"{name}\": the server's build from the table");
            let info = pg_sys::BuildIndexInfo(index);
            // workers to scan and sort, as REINDEX plans them (none for a temporary table)
            (*info).ii_ParallelWorkers =
                pg_sys::plan_create_index_workers((*heap).rd_id, (*index).rd_id);
            let ambuild = (*am).ambuild.expect("an index access method builds");
            pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| ambuild(heap, index, info));
        }
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
