//! Heap tuples formed straight into batch memory, and the heap-tuple slots that carry them to
//! `table_multi_insert` without a copy.
//!
//! COPY fills a virtual slot and lets `heap_multi_insert` materialize it (`heap_form_tuple`
//! into a fresh palloc chunk per row, freed again when the slot is cleared). fastcopy forms
//! the tuple itself: for tables whose columns are all fixed-width by-value types (ints,
//! floats, dates, timestamps, bool, ...) and a row without NULLs, at offsets computed once per
//! load, into a bump arena in the batch memory; otherwise with `heap_form_tuple` in the same
//! memory. The slot is marked as owning its tuple, so materializing it is a no-op; it never
//! frees it: `forget` empties the slot after the flush and the batch memory is reset at once.

use super::heap_layout::{HEAPTUPLESIZE, HOFF, MAXALIGN, TOAST_THRESHOLD, chunk_t_len, maxalign};
use fastcopy_core::input::Field;
use fastcopy_core::numeric::Typmod;
use fastcopy_core::pipeline::TuplePlan;
use fastcopy_core::varying::{Fixed, Limit, NullHeader, Piece, VaryingPlan, Zone};
use pgrx::pg_sys;
use std::mem::{offset_of, size_of};

const ARENA_BLOCK: usize = 256 * 1024;

/// Forms the tuples of one relation.
pub struct Former {
    tupdesc: pg_sys::TupleDesc,
    /// (offset in the data area, attlen) of every attribute, when all are fixed-width by-value.
    fixed: Option<Vec<(usize, usize)>>,
    /// Size of the tuple chunk (HeapTupleData + header + data) on the fixed path.
    fixed_chunk: usize,
    fixed_len: u32,
}

impl Former {
    pub fn new(tupdesc: pg_sys::TupleDesc) -> Former {
        // SAFETY: `tupdesc` is the `rd_att` of the relation the load inserts into, open and
        // locked RowExclusiveLock (`Target::open` passes it): the lock keeps its columns from
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
    unsafe fn write_fixed(
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

/// Where the reader takes a column of the tuples it forms from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// An integer input field of `width` bytes (the column's own width).
    Int { field: usize, width: usize },
    /// A `char(n)` input field (`Chars::Bpchar`): an ASCII value padded to n.
    Padded { field: usize, n: usize },
    /// A `text`, `varchar` or `varchar(n)` input field (n: at most n bytes taken as they
    /// are; longer ones go to the input function).
    Text { field: usize, max: Option<usize> },
    /// A `date`, `timestamp`, `timestamptz`, `numeric`, `float4`, `float8`, `bool` or `uuid`
    /// input field, converted by the reader where it is written in a spelling the core reads
    /// (`fastcopy_core::datetime`, `numeric`, `float`, `boolean`, `uuid`).
    Typed { field: usize, kind: Typed },
}

/// The types a [`Source::Typed`] converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Typed {
    Date,
    Timestamp,
    /// With how a value's UTC offset is found (the session's time zone's fixed offset for a
    /// value without one, where the zone has one).
    Timestamptz(Zone),
    /// A fixed-width type the core converts (float4, float8, bool, uuid).
    Fixed(Fixed),
    /// With the column's typmod, if it has one the core takes (scale between 0 and the
    /// precision).
    Numeric(Option<Typmod>),
}

/// Values of the typed columns in [`Former::varying_plan`]'s check (the server's input
/// functions read them too).
const SAMPLE_DATES: [&str; 5] = [
    "2000-01-01",
    "2024-02-29",
    "0001-01-01",
    "9999-12-31",
    "1969-07-20",
];
const SAMPLE_TIMESTAMPS: [&str; 4] = [
    "2000-01-01 00:00:00",
    "2024-02-29 23:59:59.999999",
    "1901-12-13 20:45:52.5",
    "2038-01-19 03:14:08.01",
];
const SAMPLE_OFFSETS: [&str; 4] = ["+00", "-15:59", "+05:30", "Z"];
/// Values of the fixed-width typed columns (the core takes each: its bits are checked, NaN's
/// and the infinities' included).
const SAMPLE_FLOATS: [&str; 10] = [
    "0",
    "-0",
    "1.5",
    "3.141592653589793",
    "-2.5e-3",
    "1e-40",
    "NaN",
    "Infinity",
    "-Infinity",
    "123456.789",
];
/// (a denormal double: out of range for float4)
const SAMPLE_FLOAT8_ONLY: &str = "4.9e-324";
const SAMPLE_BOOLS: [&str; 5] = ["t", "f", "TRUE", "off", "Of"];
const SAMPLE_UUIDS: [&str; 3] = [
    "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
    "{00000000000000000000000000000000}",
    "FFFFFFFF-ffff-FFFF-ffff-FFFFFFFFFFFF",
];
const SAMPLE_NUMERICS: [&str; 9] = [
    "0",
    "-0.005",
    "1.005",
    "-12.5",
    "123456.789",
    "0.0001",
    "99.995",
    "-7",
    "31415926535.8979",
];

/// A sample row of [`Former::varying_plan`]'s check, per input field: its integer, its text
/// value, whether it is NULL.
type Sample = (Vec<Option<i64>>, Vec<Option<Vec<u8>>>, Vec<bool>);

/// A varying plan's pieces, one per attribute, with whether each may be NULL and its type
/// (`Former::varying_pieces`).
struct Pieces {
    pieces: Vec<Piece>,
    nullable: Vec<bool>,
    types: Vec<(pg_sys::Oid, i32)>,
}

/// A sample row for a varying plan's pieces: per field an integer with distinct bytes (as
/// the column's width keeps it) and a text value of `len` bytes (as far as the column's limit
/// allows); NULL in the nullable columns `null_at` picks (of the columns in order). `round`
/// picks the typed values: each sample is used in some round.
fn sample_row(
    pieces: &Pieces,
    nfields: usize,
    len: usize,
    round: usize,
    null_at: &dyn Fn(usize) -> bool,
) -> Option<Sample> {
    let mut ints = vec![None; nfields];
    let mut texts = vec![None; nfields];
    let mut null = vec![false; nfields];
    for (i, p) in pieces.pieces.iter().enumerate() {
        null[p.field()] = pieces.nullable[i] && null_at(i);
        match *p {
            Piece::Int { field, width, .. } => {
                let v = 0x2122_2324_2526_2728_i64 + 0x0101 * i as i64;
                ints[field] = Some(match width {
                    2 => v as i16 as i64,
                    4 => v as i32 as i64,
                    _ => v,
                });
            }
            Piece::Text { field, limit, .. } => {
                let n = match limit {
                    Limit::Any => len,
                    Limit::Bytes(n) | Limit::Padded(n) => len.min(n),
                };
                texts[field] = Some((0..n).map(|j| b'a' + ((i + j) % 26) as u8).collect());
            }
            Piece::Date { field, .. } => {
                texts[field] = Some(SAMPLE_DATES[(round + i) % SAMPLE_DATES.len()].into());
            }
            Piece::Timestamp { field, zone, .. } => {
                let t = SAMPLE_TIMESTAMPS[(round + i) % SAMPLE_TIMESTAMPS.len()];
                let z = SAMPLE_OFFSETS[(round + i) % SAMPLE_OFFSETS.len()];
                // (every other round without an offset where the core reads it
                // so: in the zone's fixed offset, or a window of its table)
                let bare = zone.is_some_and(|zone| {
                    round % 2 == 1
                        && fastcopy_core::datetime::parse_timestamptz(t.as_bytes(), zone).is_some()
                });
                let v = match zone {
                    None => t.to_string(),
                    Some(_) if bare => t.to_string(),
                    Some(_) => format!("{t}{z}"),
                };
                texts[field] = Some(v.into_bytes());
            }
            Piece::Fixed { field, kind, .. } => {
                let pick = |v: &[&str]| v[(round + i) % v.len()].as_bytes().to_vec();
                texts[field] = Some(match kind {
                    Fixed::Float8 if round % 5 == 4 => SAMPLE_FLOAT8_ONLY.into(),
                    Fixed::Float4 | Fixed::Float8 => pick(&SAMPLE_FLOATS),
                    Fixed::Bool => pick(&SAMPLE_BOOLS),
                    Fixed::Uuid => pick(&SAMPLE_UUIDS),
                });
            }
            Piece::Numeric { field, typmod, .. } => {
                // the first of the samples from this one on that the core takes
                // (another is the server's error, or its spelling)
                let mut body = [0u8; fastcopy_core::numeric::MAX_BODY];
                texts[field] = (0..SAMPLE_NUMERICS.len())
                    .map(|k| SAMPLE_NUMERICS[(round + i + k) % SAMPLE_NUMERICS.len()])
                    .find(|v| {
                        fastcopy_core::numeric::parse_numeric(v.as_bytes(), typmod, &mut body)
                            .is_some()
                    })
                    .map(|v| v.as_bytes().to_vec());
                texts[field].as_ref()?;
            }
        }
    }
    Some((ints, texts, null))
}

/// The plan's head from the server's tuple of a row without NULLs (`empty`): the chunk's
/// `HeapTupleData` and tuple header with the lengths zeroed, where the lengths go, and where
/// the null bitmap and flags are; `None` unless the header is as this build expects.
fn varying_head(empty: &[u8]) -> Option<(Vec<u8>, Vec<(usize, u32)>, NullHeader)> {
    let head_len = HEAPTUPLESIZE + HOFF;
    if empty.len() < head_len {
        return None;
    }
    // (a tuple without NULLs has no bitmap: its data starts at HOFF)
    if empty[HEAPTUPLESIZE + offset_of!(pg_sys::HeapTupleHeaderData, t_hoff)] as usize != HOFF {
        return None;
    }
    let mut head = empty[..head_len].to_vec();
    // t_len, and the header's datum length (`HeapTupleHeaderSetDatumLength`: a varlena
    // size word, the length shifted left by 2)
    let len_at = vec![
        (offset_of!(pg_sys::HeapTupleData, t_len), 0),
        (
            HEAPTUPLESIZE + offset_of!(pg_sys::HeapTupleHeaderData, t_choice),
            2,
        ),
    ];
    for &(at, _) in &len_at {
        head[at..at + 4].fill(0);
    }
    let header = NullHeader {
        bits_at: HEAPTUPLESIZE + offset_of!(pg_sys::HeapTupleHeaderData, t_bits),
        hoff_at: HEAPTUPLESIZE + offset_of!(pg_sys::HeapTupleHeaderData, t_hoff),
        infomask_at: HEAPTUPLESIZE + offset_of!(pg_sys::HeapTupleHeaderData, t_infomask),
        has_null: pg_sys::HEAP_HASNULL as u16,
        has_varwidth: pg_sys::HEAP_HASVARWIDTH as u16,
    };
    Some((head, len_at, header))
}

/// `VARATT_SHORT_MAX`: the largest varlena, header included, a one-byte header can describe.
const SHORT_VARLENA_MAX: usize = 0x7f;

impl Former {
    /// What the reader thread needs to form this relation's tuples itself ([`TuplePlan`]):
    /// the chunk the loader would form for all-zero values and `char(n)` values of n spaces
    /// (its `t_data` pointer zero: set by [`Former::copy_formed`]), and where each
    /// attribute's value goes. `sources[a]` is where attribute `a` comes from; `None` unless
    /// every attribute has a source: fixed-width by-value columns each fed by an integer
    /// field of its own width, and `char(n)` columns whose values are short varlenas.
    /// `binary`: the fields are COPY binary values (text and typed columns: a varying plan).
    pub fn tuple_plan(
        &self,
        sources: &[Option<Source>],
        nfields: usize,
        binary: bool,
    ) -> Option<TuplePlan> {
        if sources
            .iter()
            .any(|s| matches!(s, Some(Source::Text { .. } | Source::Typed { .. })))
        {
            return self.varying_plan(sources, nfields, binary);
        }
        if binary
            && sources
                .iter()
                .any(|s| matches!(s, Some(Source::Padded { .. })))
        {
            return self.varying_plan(sources, nfields, binary);
        }
        if sources
            .iter()
            .any(|s| matches!(s, Some(Source::Padded { .. })))
        {
            // (char(n) values too long for a one-byte header: a layout of their own per row)
            return self
                .padded_plan(sources, nfields)
                .or_else(|| self.varying_plan(sources, nfields, false));
        }
        let layout = self.fixed.as_ref()?;
        if sources.len() != layout.len() {
            return None;
        }
        let mut columns = Vec::with_capacity(layout.len());
        for (&(off, len), source) in layout.iter().zip(sources) {
            let Some(Source::Int { field, width }) = *source else {
                return None;
            };
            if width != len {
                return None;
            }
            columns.push((field, HEAPTUPLESIZE + HOFF + off, len));
        }
        let mut words = vec![0u64; self.fixed_chunk / 8]; // (a multiple of MAXALIGN)
        let zeros = vec![pg_sys::Datum::from(0usize); layout.len()];
        // SAFETY: `words` is `fixed_chunk` zeroed bytes, 8-byte aligned; `layout`
        // is `self.fixed` and `zeros` has an entry per attribute; the descriptor is valid
        // (`new`). The pointer `write_fixed` stores into `t_data` is cleared at once.
        unsafe {
            let chunk = words.as_mut_ptr() as *mut u8;
            let tuple = self.write_fixed(chunk, layout, &zeros);
            (*tuple).t_data = std::ptr::null_mut();
        }
        let template = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        // (the data bytes, after the header: what the page writer takes of a uniform tuple)
        let data = HEAPTUPLESIZE + HOFF..HEAPTUPLESIZE + self.fixed_len as usize;
        TuplePlan::new(template, columns, nfields).map(|tp| tp.with_data(data.start, data.end))
    }

    /// [`Former::tuple_plan`] for a table with `char(n)` columns. Every tuple has the same
    /// layout (no NULLs, every `char(n)` value n bytes): integers at their aligned offsets,
    /// each `char(n)` value as `heap_fill_tuple` stores a varlena it can pack, a one-byte
    /// header and the n bytes, unaligned (the column must allow packing and n + 1 fit the
    /// header). The template is the server's own tuple for zeros and spaces
    /// (`heap_form_tuple`); a second tuple the server forms from other values must equal the
    /// plan's, byte for byte, or there is no plan.
    fn padded_plan(&self, sources: &[Option<Source>], nfields: usize) -> Option<TuplePlan> {
        // SAFETY: the descriptor is valid for the Former's life (`new`).
        let natts = unsafe { (*self.tupdesc).natts } as usize;
        if sources.len() != natts {
            return None;
        }
        let (mut ints, mut padded, mut off) = (Vec::new(), Vec::new(), 0usize);
        for (i, source) in sources.iter().enumerate() {
            // SAFETY: `i < natts`; the descriptor is valid (above).
            let a = unsafe { crate::compat::tuple_desc_attr(self.tupdesc, i) };
            if a.attisdropped {
                return None;
            }
            match (*source)? {
                Source::Int { field, width } => {
                    if !a.attbyval || a.attlen as usize != width {
                        return None;
                    }
                    off = att_align(off, a);
                    ints.push((field, HEAPTUPLESIZE + HOFF + off, width));
                    off += width;
                }
                Source::Padded { field, n } => {
                    if a.attlen != -1
                        || a.attstorage as u8 == pg_sys::TYPSTORAGE_PLAIN
                        || n + 1 > SHORT_VARLENA_MAX
                    {
                        return None;
                    }
                    padded.push((field, HEAPTUPLESIZE + HOFF + off + 1, n));
                    off += 1 + n;
                }
                // (a table with text columns has a varying plan)
                Source::Text { .. } | Source::Typed { .. } => return None,
            }
        }
        let t_len = HOFF + off;
        let chunk = maxalign(HEAPTUPLESIZE + t_len);
        // the server's tuples: zeros and spaces (the template), then other values (the check)
        let sample = |int: &dyn Fn(usize, usize) -> i64, text: &dyn Fn(usize) -> Vec<u8>| {
            let values: Vec<pg_sys::Datum> = sources
                .iter()
                .enumerate()
                .map(|(i, s)| match s {
                    Some(Source::Int { width, .. }) => pg_sys::Datum::from(int(i, *width)),
                    Some(Source::Padded { n, .. }) => bpchar_datum(&text(i), *n),
                    Some(Source::Text { .. } | Source::Typed { .. }) | None => {
                        pg_sys::Datum::from(0usize)
                    }
                })
                .collect();
            let nulls = vec![false; natts];
            // SAFETY: one value per attribute, of its type (an integer Datum of the column's
            // width, a bpchar varlena); heap_form_tuple only reads them, and returns one
            // palloc chunk: the HeapTupleData, then the tuple at HEAPTUPLESIZE.
            unsafe {
                let t = pg_sys::heap_form_tuple(
                    self.tupdesc,
                    values.as_ptr() as *mut _,
                    nulls.as_ptr() as *mut _,
                );
                let bytes = ((*t).t_len as usize == t_len).then(|| {
                    let mut b = vec![0u8; chunk];
                    std::ptr::copy_nonoverlapping(
                        t as *const u8,
                        b.as_mut_ptr(),
                        HEAPTUPLESIZE + t_len,
                    );
                    b
                });
                pg_sys::heap_freetuple(t);
                bytes
            }
        };
        let mut template = sample(&|_, _| 0, &|_| Vec::new())?;
        let t_data = offset_of!(pg_sys::HeapTupleData, t_data);
        template[t_data..t_data + size_of::<usize>()].fill(0);
        // other values: distinct bytes in every integer, "ab" (or "a") before the spaces
        let int = |i: usize, width: usize| -> i64 {
            let v = 0x2122_2324_2526_2728_i64 + i as i64;
            match width {
                2 => v as i16 as i64,
                4 => v as i32 as i64,
                _ => v,
            }
        };
        let text = |i: usize| -> Vec<u8> {
            let n = match sources[i] {
                Some(Source::Padded { n, .. }) => n,
                _ => 0,
            };
            (0..n.min(2)).map(|j| b'a' + (j + i % 3) as u8).collect()
        };
        let server = sample(&int, &text)?;
        let mut ours = template.clone();
        let (mut ki, mut kp) = (0, 0);
        for (i, source) in sources.iter().enumerate() {
            match *source {
                Some(Source::Int { width, .. }) => {
                    let at = ints[ki].1;
                    ours[at..at + width].copy_from_slice(&int(i, width).to_le_bytes()[..width]);
                    ki += 1;
                }
                Some(Source::Padded { .. }) => {
                    let at = padded[kp].1;
                    let v = text(i);
                    ours[at..at + v.len()].copy_from_slice(&v);
                    kp += 1;
                }
                Some(Source::Text { .. } | Source::Typed { .. }) | None => {}
            }
        }
        if ours[HEAPTUPLESIZE..] != server[HEAPTUPLESIZE..] {
            return None;
        }
        TuplePlan::new(template, ints, nfields)?.with_padded(padded)
    }

    /// [`Former::tuple_plan`] for a table with text columns: a [`VaryingPlan`] of the
    /// attributes in order (integers at their alignment; `text`, `varchar` and `char(n)` as
    /// `heap_fill_tuple` stores a value of a packable column: a one-byte header where it
    /// fits, else a 4-byte one at the column's alignment), in front of the data the server's
    /// own tuple's `HeapTupleData` and header, the tuple's length written in both
    /// (`t_len`, and the header's datum length, which `heap_form_tuple` sets). Tuples longer
    /// than `TOAST_TUPLE_THRESHOLD` are left to the loader (the toaster's). The plan is used
    /// only if the tuples it forms for sample rows (short, empty and long values) equal,
    /// byte for byte, those `heap_form_tuple` forms of the same values.
    ///
    /// With `binary`, the plan reads COPY binary values (`VaryingPlan::with_binary`), and the
    /// sample rows are given to it as the server's send functions write their values.
    fn varying_plan(
        &self,
        sources: &[Option<Source>],
        nfields: usize,
        binary: bool,
    ) -> Option<TuplePlan> {
        let p = self.varying_pieces(sources)?;
        let empty = self.server_tuple(&p, &sample_row(&p, nfields, 0, 0, &|_| false)?)?;
        let (head, len_at, header) = varying_head(&empty)?;
        let plan = VaryingPlan::new(
            head,
            HEAPTUPLESIZE,
            len_at,
            p.pieces.clone(),
            TOAST_THRESHOLD,
            nfields,
        )?
        .with_nulls(header, p.nullable.clone())?;
        let plan = if binary { plan.with_binary()? } else { plan };
        self.forms_as_server(&plan, &p, nfields, binary)?;
        Some(TuplePlan::varying(plan))
    }

    /// The pieces of a varying plan for `sources` (one per attribute), with whether each
    /// attribute may be NULL and its type: `None` when an attribute is dropped or its source
    /// does not fit its type's storage.
    fn varying_pieces(&self, sources: &[Option<Source>]) -> Option<Pieces> {
        // SAFETY: the descriptor is valid for the Former's life (`new`).
        let natts = unsafe { (*self.tupdesc).natts } as usize;
        if sources.len() != natts {
            return None;
        }
        let mut pieces = Vec::with_capacity(natts);
        let mut nullable = Vec::with_capacity(natts);
        let mut types = Vec::with_capacity(natts);
        for (i, source) in sources.iter().enumerate() {
            // SAFETY: `i < natts`; the descriptor is valid (above).
            let a = unsafe { crate::compat::tuple_desc_attr(self.tupdesc, i) };
            let align = alignment(a);
            if a.attisdropped {
                return None;
            }
            // (a NULL in a NOT NULL column is the loader's, for the constraint's error)
            nullable.push(!a.attnotnull);
            // a varlena that heap_fill_tuple may give a one-byte header
            let packable = a.attlen == -1 && a.attstorage as u8 != pg_sys::TYPSTORAGE_PLAIN;
            pieces.push(match (*source)? {
                Source::Int { field, width } => {
                    if !a.attbyval || a.attlen as usize != width {
                        return None;
                    }
                    Piece::Int {
                        field,
                        width,
                        align,
                    }
                }
                Source::Padded { field, n } if packable => Piece::Text {
                    field,
                    limit: Limit::Padded(n),
                    align,
                },
                Source::Text { field, max } if packable => Piece::Text {
                    field,
                    limit: max.map_or(Limit::Any, Limit::Bytes),
                    align,
                },
                Source::Typed { field, kind } => match kind {
                    Typed::Date if a.attbyval && a.attlen == 4 => Piece::Date { field, align },
                    Typed::Timestamp if a.attbyval && a.attlen == 8 => Piece::Timestamp {
                        field,
                        zone: None,
                        align,
                    },
                    Typed::Timestamptz(zone) if a.attbyval && a.attlen == 8 => Piece::Timestamp {
                        field,
                        zone: Some(zone),
                        align,
                    },
                    // (bool, float4 and float8 by value; uuid by reference, 16 bytes)
                    Typed::Fixed(f)
                        if a.attlen as usize == f.width() && a.attbyval == (f != Fixed::Uuid) =>
                    {
                        Piece::Fixed {
                            field,
                            kind: f,
                            align,
                        }
                    }
                    Typed::Numeric(typmod) if packable => Piece::Numeric {
                        field,
                        typmod,
                        align,
                    },
                    _ => return None,
                },
                _ => return None,
            });
            types.push((a.atttypid, a.atttypmod));
        }
        Some(Pieces {
            pieces,
            nullable,
            types,
        })
    }

    /// The server's tuple of one sample row (`heap_form_tuple`): the chunk up to the end of
    /// the tuple, its `t_data` pointer zeroed (`copy_formed` sets it).
    fn server_tuple(&self, p: &Pieces, (ints, texts, null): &Sample) -> Option<Vec<u8>> {
        let values: Vec<pg_sys::Datum> = p
            .pieces
            .iter()
            .enumerate()
            .map(|(i, piece)| match *piece {
                Piece::Int { field, .. } => pg_sys::Datum::from(ints[field].unwrap_or(0)),
                Piece::Text { field, limit, .. } => {
                    let v = texts[field].as_deref().unwrap_or_default();
                    match limit {
                        Limit::Padded(n) => bpchar_datum(v, n),
                        _ => bpchar_datum(v, v.len()),
                    }
                }
                Piece::Date { field, .. }
                | Piece::Timestamp { field, .. }
                | Piece::Fixed { field, .. }
                | Piece::Numeric { field, .. } => {
                    let (typid, typmod) = p.types[i];
                    input_datum(typid, typmod, texts[field].as_deref().unwrap_or_default())
                }
            })
            .collect();
        let nulls: Vec<bool> = p.pieces.iter().map(|piece| null[piece.field()]).collect();
        // SAFETY: one value per attribute, of its type (an integer Datum of the column's
        // width, a text varlena: bpchar_datum's value with no spaces added); heap_form_tuple
        // only reads them, and returns one palloc chunk: the HeapTupleData, then the tuple
        // at HEAPTUPLESIZE.
        unsafe {
            let t = pg_sys::heap_form_tuple(
                self.tupdesc,
                values.as_ptr() as *mut _,
                nulls.as_ptr() as *mut _,
            );
            let len = HEAPTUPLESIZE + (*t).t_len as usize;
            let mut b = vec![0u8; len];
            std::ptr::copy_nonoverlapping(t as *const u8, b.as_mut_ptr(), len);
            pg_sys::heap_freetuple(t);
            let t_data = offset_of!(pg_sys::HeapTupleData, t_data);
            b[t_data..t_data + size_of::<usize>()].fill(0);
            Some(b)
        }
    }

    /// `Some` if `plan` forms the server's own tuple (`server_tuple`) for sample rows of every
    /// length class and NULL pattern (or leaves to the loader only what the toaster would
    /// see).
    fn forms_as_server(
        &self,
        plan: &VaryingPlan,
        p: &Pieces,
        nfields: usize,
        binary: bool,
    ) -> Option<()> {
        let patterns: [&dyn Fn(usize) -> bool; 4] =
            [&|_| false, &|_| true, &|i| i % 2 == 0, &|i| i % 2 == 1];
        for (round, (len, null_at)) in [0, 1, 2, 5, 126, 127, 300]
            .into_iter()
            .flat_map(|len| patterns.iter().map(move |p| (len, p)))
            .enumerate()
        {
            let row = sample_row(p, nfields, len, round, null_at)?;
            let server = self.server_tuple(p, &row)?;
            let (ints, texts, null) = &row;
            // binary: the typed values as their send functions write them (integers are in
            // `ints`, text values as they are)
            let sent: Vec<Option<Vec<u8>>> = if binary {
                let mut sent = texts.clone();
                for (i, piece) in p.pieces.iter().enumerate() {
                    let f = piece.field();
                    if matches!(piece, Piece::Int { .. } | Piece::Text { .. }) || null[f] {
                        continue;
                    }
                    let (typid, typmod) = p.types[i];
                    let d = input_datum(typid, typmod, texts[f].as_deref().unwrap_or_default());
                    sent[f] = Some(send_bytes(typid, d));
                }
                sent
            } else {
                Vec::new()
            };
            let texts = if binary { &sent } else { texts };
            let field = |f: usize| match &texts[f] {
                _ if null[f] => Field::Null,
                Some(t) => Field::Value(t),
                None => Field::Value(b"0"),
            };
            let mut ours = Vec::new();
            let n = plan.form(ints, field, &mut ours);
            let same = match n {
                Some(n) => n == maxalign(server.len()) && ours[..server.len()] == server[..],
                // left to the loader: only a tuple the toaster would see
                None => server.len() - HEAPTUPLESIZE > TOAST_THRESHOLD,
            };
            if !same {
                pgrx::debug1!(
                    "fastcopy: the reader's tuples differ from the server's (values of {len} bytes): not used"
                );
                return None;
            }
        }
        Some(())
    }

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

/// The bytes the type's send function writes for `d` (COPY's binary format of the value).
fn send_bytes(typid: pg_sys::Oid, d: pg_sys::Datum) -> Vec<u8> {
    let (mut func, mut varlena) = (pg_sys::InvalidOid, false);
    // SAFETY: a catalog lookup and the type's send function on the backend thread (pgrx
    // guards them); `d` is a value of the type; the result is a bytea varlena with a 4-byte
    // header in the current memory context, read and left to it.
    unsafe {
        pg_sys::getTypeBinaryOutputInfo(typid, &mut func, &mut varlena);
        let b = pg_sys::OidSendFunctionCall(func, d);
        let size = (b as *const u32).read_unaligned() as usize >> 2;
        std::slice::from_raw_parts(
            (b as *const u8).add(pg_sys::VARHDRSZ),
            size - pg_sys::VARHDRSZ,
        )
        .to_vec()
    }
}

/// `att_align_nominal`: `off` rounded up to the attribute's alignment.
fn att_align(off: usize, a: &pg_sys::FormData_pg_attribute) -> usize {
    let align = alignment(a);
    (off + align - 1) & !(align - 1)
}

/// The attribute's alignment in bytes (`attalign`).
fn alignment(a: &pg_sys::FormData_pg_attribute) -> usize {
    match a.attalign as u8 {
        b'c' => 1,
        b's' => 2,
        b'i' => 4,
        _ => 8,
    }
}

/// The Datum the type's input function makes of `value` (which it accepts: a sample of
/// [`Former::varying_plan`] the core reads).
fn input_datum(typid: pg_sys::Oid, typmod: i32, value: &[u8]) -> pg_sys::Datum {
    let text = std::ffi::CString::new(value).unwrap_or_default();
    let (mut func, mut typioparam) = (pg_sys::InvalidOid, pg_sys::InvalidOid);
    // SAFETY: catalog lookup and a call of the type's input function on the backend thread
    // (pgrx guards them: an ERROR is raised as one); the string lives through the call.
    unsafe {
        pg_sys::getTypeInputInfo(typid, &mut func, &mut typioparam);
        pg_sys::OidInputFunctionCall(func, text.as_ptr() as *mut _, typioparam, typmod)
    }
}

/// A `char(n)` Datum as `bpchar_input` returns it: `value` (at most n bytes, ASCII) and
/// spaces to n, in a palloc chunk with a 4-byte header.
fn bpchar_datum(value: &[u8], n: usize) -> pg_sys::Datum {
    let size = pg_sys::VARHDRSZ + n;
    // SAFETY: palloc (guarded: an ERROR rather than NULL) returns `size` writable bytes,
    // aligned; SET_VARSIZE is the size shifted left by 2, little-endian; `value.len() <= n`.
    unsafe {
        let p = pg_sys::palloc(size) as *mut u8;
        (p as *mut u32).write((size as u32) << 2);
        std::ptr::copy_nonoverlapping(value.as_ptr(), p.add(pg_sys::VARHDRSZ), value.len());
        std::ptr::write_bytes(p.add(pg_sys::VARHDRSZ + value.len()), b' ', n - value.len());
        pg_sys::Datum::from(p)
    }
}

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
