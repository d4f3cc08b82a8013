//! The reader's tuple plans ([`Former::tuple_plan`]): where each column of a tuple comes from
//! in the input ([`FromField`]), and, once per load, a plan the core carries out on the reader
//! thread (`fastcopy_core::pipeline::TuplePlan`), kept only when it forms the server's own
//! tuples (`heap_form_tuple`) for sample rows of every length class and NULL pattern.

use super::heap_layout::{HEAPTUPLESIZE, HOFF, TOAST_THRESHOLD, maxalign};
use super::tuple::{Former, alignment, att_align};
use fastcopy_core::datetime::Zone;
use fastcopy_core::input::Field;
use fastcopy_core::numeric::Typmod;
use fastcopy_core::pipeline::TuplePlan;
use fastcopy_core::varying::{Fixed, Limit, NullHeader, Piece, VaryingPlan};
use pgrx::pg_sys;
use std::mem::{offset_of, size_of};

/// Where the reader takes a column of the tuples it forms from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FromField {
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

/// The types a [`FromField::Typed`] converts.
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
    /// bytea: the hex format (text), the bytes as they are (binary).
    Bytea,
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
            Piece::Bytea { field, .. } => {
                // `len` bytes in hex, upper and lower case digits
                let hex: String = (0..len)
                    .map(|j| match (i + j + round) % 3 {
                        0 => format!("{:02x}", (j * 37 + i) as u8),
                        _ => format!("{:02X}", (j * 91 + round) as u8),
                    })
                    .collect();
                texts[field] = Some(format!("\\x{hex}").into_bytes());
            }
        }
    }
    Some((ints, texts, null))
}

/// The plan's head from the server's tuple of a row without NULLs (`empty`): the chunk's
/// `HeapTupleData` and tuple header with the lengths zeroed, where the lengths go, and where
/// the null bitmap and flags are; `None` unless the header is as this build expects.
#[allow(clippy::type_complexity)]
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
        sources: &[Option<FromField>],
        nfields: usize,
        binary: bool,
    ) -> Option<TuplePlan> {
        if sources
            .iter()
            .any(|s| matches!(s, Some(FromField::Text { .. } | FromField::Typed { .. })))
        {
            return self.varying_plan(sources, nfields, binary);
        }
        if binary
            && sources
                .iter()
                .any(|s| matches!(s, Some(FromField::Padded { .. })))
        {
            return self.varying_plan(sources, nfields, binary);
        }
        if sources
            .iter()
            .any(|s| matches!(s, Some(FromField::Padded { .. })))
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
            let Some(FromField::Int { field, width }) = *source else {
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
    fn padded_plan(&self, sources: &[Option<FromField>], nfields: usize) -> Option<TuplePlan> {
        let (ints, padded, t_len) = self.padded_columns(sources)?;
        // the server's tuples: zeros and spaces (the template), then other values (the check)
        let mut template = self.padded_sample(sources, t_len, &|_, _| 0, &|_| Vec::new())?;
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
                Some(FromField::Padded { n, .. }) => n,
                _ => 0,
            };
            (0..n.min(2)).map(|j| b'a' + (j + i % 3) as u8).collect()
        };
        let server = self.padded_sample(sources, t_len, &int, &text)?;
        let mut ours = template.clone();
        let (mut ki, mut kp) = (0, 0);
        for (i, source) in sources.iter().enumerate() {
            match *source {
                Some(FromField::Int { width, .. }) => {
                    let at = ints[ki].1;
                    ours[at..at + width].copy_from_slice(&int(i, width).to_le_bytes()[..width]);
                    ki += 1;
                }
                Some(FromField::Padded { .. }) => {
                    let at = padded[kp].1;
                    let v = text(i);
                    ours[at..at + v.len()].copy_from_slice(&v);
                    kp += 1;
                }
                Some(FromField::Text { .. } | FromField::Typed { .. }) | None => {}
            }
        }
        if ours[HEAPTUPLESIZE..] != server[HEAPTUPLESIZE..] {
            return None;
        }
        TuplePlan::new(template, ints, nfields)?.with_padded(padded)
    }

    /// Where a fixed plan's columns go: per integer column (its field, its offset in the
    /// chunk, its width), per `char(n)` column (its field, the offset of its n bytes, n), and
    /// the tuple's length; `None` unless every column is one of the two and fits.
    #[allow(clippy::type_complexity)]
    fn padded_columns(
        &self,
        sources: &[Option<FromField>],
    ) -> Option<(
        Vec<(usize, usize, usize)>,
        Vec<(usize, usize, usize)>,
        usize,
    )> {
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
                FromField::Int { field, width } => {
                    if !a.attbyval || a.attlen as usize != width {
                        return None;
                    }
                    off = att_align(off, a);
                    ints.push((field, HEAPTUPLESIZE + HOFF + off, width));
                    off += width;
                }
                FromField::Padded { field, n } => {
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
                FromField::Text { .. } | FromField::Typed { .. } => return None,
            }
        }
        Some((ints, padded, HOFF + off))
    }

    /// The server's tuple (`heap_form_tuple`) of a row of the fixed plan's columns: the
    /// integers `int(attribute, width)`, the `char(n)` values `text(attribute)` padded to n;
    /// the chunk (its `HeapTupleData` first), MAXALIGNed, or `None` if its length is not
    /// `t_len`.
    fn padded_sample(
        &self,
        sources: &[Option<FromField>],
        t_len: usize,
        int: &dyn Fn(usize, usize) -> i64,
        text: &dyn Fn(usize) -> Vec<u8>,
    ) -> Option<Vec<u8>> {
        let chunk = maxalign(HEAPTUPLESIZE + t_len);
        let values: Vec<pg_sys::Datum> = sources
            .iter()
            .enumerate()
            .map(|(i, s)| match s {
                Some(FromField::Int { width, .. }) => pg_sys::Datum::from(int(i, *width)),
                Some(FromField::Padded { n, .. }) => bpchar_datum(&text(i), *n),
                Some(FromField::Text { .. } | FromField::Typed { .. }) | None => {
                    pg_sys::Datum::from(0usize)
                }
            })
            .collect();
        let nulls = vec![false; sources.len()];
        // SAFETY: one value per attribute, of its type (an integer Datum of the column's
        // width, a bpchar varlena); heap_form_tuple only reads them, and returns one palloc
        // chunk: the HeapTupleData, then the tuple at HEAPTUPLESIZE.
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
        sources: &[Option<FromField>],
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
    fn varying_pieces(&self, sources: &[Option<FromField>]) -> Option<Pieces> {
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
                FromField::Int { field, width } => {
                    if !a.attbyval || a.attlen as usize != width {
                        return None;
                    }
                    Piece::Int {
                        field,
                        width,
                        align,
                    }
                }
                FromField::Padded { field, n } if packable => Piece::Text {
                    field,
                    limit: Limit::Padded(n),
                    align,
                },
                FromField::Text { field, max } if packable => Piece::Text {
                    field,
                    limit: max.map_or(Limit::Any, Limit::Bytes),
                    align,
                },
                FromField::Typed { field, kind } => match kind {
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
                    Typed::Bytea if packable => Piece::Bytea { field, align },
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
                | Piece::Numeric { field, .. }
                | Piece::Bytea { field, .. } => {
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
