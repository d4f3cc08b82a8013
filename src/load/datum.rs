//! Datums made without the server's functions, for the values whose bytes say all: text,
//! varchar and char values copied into a varlena ([`Chars`]), and the values of the types the
//! core reads ([`typed_for`], [`typed_datum`]: dates, timestamps, floats, bool, uuid, numeric,
//! bytea in the hex format),
//! for the text converters (`convert.rs`) and the binary ones (`receive.rs`) alike; the
//! session's time zone as the core reads it ([`session_zone`]).

use super::tuple::Arena;
use super::tuple_plan::Typed;
use fastcopy_core::datetime::{Zone, ZoneTable};
use fastcopy_core::numeric::Typmod;
use fastcopy_core::varying::Fixed;
use pgrx::pg_sys;

/// text, varchar and char values built without their input function where the function
/// would only copy them: the value's bytes in a varlena (`cstring_to_text_with_len`, what
/// `textin` and `varchar_input` return), a char(n) value padded with spaces to n
/// (`bpchar_input`). What takes more, a value longer than n (its extra characters must be
/// spaces, else 22001) or a char(n) value with multibyte characters (padded by characters),
/// goes to the input function. The bytes are valid in the database encoding already (the
/// reader checked them), as the input functions take them; the varlena goes into the batch
/// arena, which lives as long as the batch memory the input function would allocate in (on
/// the short path only, `Target::short_path`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chars {
    /// text, and varchar / char without a length: every value.
    Any,
    /// varchar(n): a value of at most n bytes (so of at most n characters).
    Varchar(usize),
    /// char(n): an ASCII value of at most n bytes, padded to n.
    Bpchar(usize),
}

impl Chars {
    pub(super) fn for_type(typid: pg_sys::Oid, typmod: i32) -> Option<Chars> {
        // the length a typmod gives (`atttypmod - VARHDRSZ`), if any
        let n = (typmod >= pg_sys::VARHDRSZ as i32)
            .then(|| (typmod - pg_sys::VARHDRSZ as i32) as usize);
        match typid {
            pg_sys::TEXTOID => Some(Chars::Any),
            pg_sys::VARCHAROID => Some(n.map_or(Chars::Any, Chars::Varchar)),
            pg_sys::BPCHAROID => Some(n.map_or(Chars::Any, Chars::Bpchar)),
            _ => None,
        }
    }

    /// The varlena of `b` (the value, without the NUL after it), or `None` when the input
    /// function must build it.
    ///
    /// # Safety
    /// As [`Arena::alloc`]: the current memory context is the batch memory.
    #[inline]
    pub(super) unsafe fn datum(self, b: &[u8], arena: &mut Arena) -> Option<pg_sys::Datum> {
        let len = match self {
            Chars::Any => b.len(),
            Chars::Varchar(n) if b.len() <= n => b.len(),
            Chars::Bpchar(n) if b.len() <= n && b.is_ascii() => n,
            _ => return None,
        };
        let size = len + pg_sys::VARHDRSZ;
        if size > MAX_VARLENA {
            return None; // the input function's error
        }
        // SAFETY: as the function's contract; `size` is above 0 and at most MaxAllocSize. The
        // chunk is `size` bytes of its own: a 4-byte header (SET_VARSIZE, little-endian: the
        // size shifted left by 2), the value, the padding spaces.
        unsafe {
            let p = arena.alloc(size);
            (p as *mut u32).write((size as u32) << 2);
            std::ptr::copy_nonoverlapping(b.as_ptr(), p.add(pg_sys::VARHDRSZ), b.len());
            std::ptr::write_bytes(p.add(pg_sys::VARHDRSZ + b.len()), b' ', len - b.len());
            Some(pg_sys::Datum::from(p))
        }
    }
}

/// `MaxAllocSize`: the largest varlena palloc makes (the input functions fail above it).
const MAX_VARLENA: usize = 0x3fff_ffff;

/// The types whose values the core converts (`None` for a domain: its own input function
/// checks its constraints), where the core's value is the input function's for every typmod
/// it takes.
pub(super) fn typed_for(typid: pg_sys::Oid, typmod: i32) -> Option<Typed> {
    Some(match typid {
        pg_sys::DATEOID => Typed::Date,
        // (timestamp(p) below 6 rounds the fraction: the server's input function)
        pg_sys::TIMESTAMPOID if matches!(typmod, -1 | 6) => Typed::Timestamp,
        pg_sys::TIMESTAMPTZOID if matches!(typmod, -1 | 6) => Typed::Timestamptz(session_zone()),
        pg_sys::FLOAT4OID => Typed::Fixed(Fixed::Float4),
        pg_sys::FLOAT8OID => Typed::Fixed(Fixed::Float8),
        pg_sys::BOOLOID => Typed::Fixed(Fixed::Bool),
        pg_sys::UUIDOID => Typed::Fixed(Fixed::Uuid),
        pg_sys::NUMERICOID => Typed::Numeric(numeric_typmod(typmod)?),
        pg_sys::BYTEAOID => Typed::Bytea,
        _ => return None,
    })
}

/// The Datum of `b` for a column of a type the core reads, where it reads this spelling (else
/// `None`: the input function): by-value types as their Datum, uuid, numeric and bytea values
/// in memory from `alloc` (a 16-byte uuid; a numeric or bytea varlena with a 4-byte header, as
/// `numeric_in` and `byteain` return them).
///
/// # Safety
/// `alloc(n)` returns n writable bytes, MAXALIGNed, that live as long as the Datum is used.
#[inline]
pub(super) unsafe fn typed_datum(
    kind: Typed,
    b: &[u8],
    alloc: impl FnOnce(usize) -> *mut u8,
) -> Option<pg_sys::Datum> {
    use fastcopy_core::{boolean, bytea, datetime, float, numeric, uuid};
    Some(match kind {
        Typed::Date => pg_sys::Datum::from(datetime::parse_date(b)?),
        Typed::Timestamp => pg_sys::Datum::from(datetime::parse_timestamp(b)?),
        Typed::Timestamptz(zone) => pg_sys::Datum::from(datetime::parse_timestamptz(b, zone)?),
        // (Float4GetDatum / Float8GetDatum: the bits as an integer Datum)
        Typed::Fixed(Fixed::Float4) => {
            pg_sys::Datum::from(float::parse_float4(b)?.to_bits() as i32)
        }
        Typed::Fixed(Fixed::Float8) => {
            pg_sys::Datum::from(float::parse_float8(b)?.to_bits() as i64)
        }
        Typed::Fixed(Fixed::Bool) => pg_sys::Datum::from(boolean::parse_bool(b)?),
        // SAFETY: `alloc` as this function's contract.
        Typed::Fixed(Fixed::Uuid) => unsafe { bytes_datum(&uuid::parse_uuid(b)?, alloc) },
        Typed::Numeric(typmod) => {
            let mut body = [0u8; numeric::MAX_BODY];
            let n = numeric::parse_numeric(b, typmod, &mut body)?;
            // SAFETY: `alloc` as this function's contract.
            unsafe { varlena_datum(&body[..n], alloc) }
        }
        Typed::Bytea => {
            let len = bytea::hex_len(b)?;
            if pg_sys::VARHDRSZ + len > MAX_VARLENA {
                return None; // (byteain's palloc fails there)
            }
            // SAFETY: `alloc` as this function's contract.
            unsafe { varlena_filled(len, alloc, |body| bytea::decode_hex(b, body))? }
        }
    })
}

/// A by-reference Datum of a fixed-length value (a uuid's 16 bytes): a copy of `bytes` in
/// memory from `alloc`.
///
/// # Safety
/// As [`typed_datum`]'s.
#[inline]
pub(super) unsafe fn bytes_datum(
    bytes: &[u8],
    alloc: impl FnOnce(usize) -> *mut u8,
) -> pg_sys::Datum {
    let p = alloc(bytes.len());
    // SAFETY: `p` is `bytes.len()` writable bytes (# Safety).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    pg_sys::Datum::from(p)
}

/// A varlena Datum of `body` with a 4-byte header (as `numeric_in` and `numeric_recv` return
/// a numeric), in memory from `alloc`.
///
/// # Safety
/// As [`typed_datum`]'s.
#[inline]
pub(super) unsafe fn varlena_datum(
    body: &[u8],
    alloc: impl FnOnce(usize) -> *mut u8,
) -> pg_sys::Datum {
    let copy = |to: &mut [u8]| {
        to.copy_from_slice(body);
        Some(())
    };
    // SAFETY: as this function's contract.
    unsafe { varlena_filled(body.len(), alloc, copy) }.expect("a copy always fills it")
}

/// A varlena Datum of `len` bytes with a 4-byte header, in memory from `alloc`, its bytes
/// written by `fill`; `None` (the chunk left unused) when `fill` refuses.
///
/// # Safety
/// As [`typed_datum`]'s.
#[inline(always)]
unsafe fn varlena_filled(
    len: usize,
    alloc: impl FnOnce(usize) -> *mut u8,
    fill: impl FnOnce(&mut [u8]) -> Option<()>,
) -> Option<pg_sys::Datum> {
    let size = pg_sys::VARHDRSZ + len;
    let p = alloc(size);
    // SAFETY: `p` is `size` writable bytes (# Safety), MAXALIGNed: the header word
    // (SET_VARSIZE, little-endian: the size shifted left by 2), then the `len` bytes `fill`
    // writes.
    unsafe {
        (p as *mut u32).write((size as u32) << 2);
        fill(std::slice::from_raw_parts_mut(p.add(pg_sys::VARHDRSZ), len))?;
    }
    Some(pg_sys::Datum::from(p))
}

/// How the reader finds a `timestamptz` value's UTC offset: a value without one is in the
/// session's `TimeZone`. Where the zone has had one offset only (`UTC`, `Etc/GMT+5`:
/// `pg_get_timezone_offset`, which `DetermineTimeZoneOffset` then agrees with for every date),
/// that offset; else its offsets by windows of local time over [`ZONE_YEARS`] (the server's
/// own transitions, `pg_next_dst_boundary`), without the [`ZONE_MARGIN`] around each
/// transition where a local time may be missing or ambiguous: values there, and outside the
/// years, go to the server. A zone's table is made once per backend (the server keeps its
/// zones for the backend's life too). (The zone cannot change within one statement's rows
/// the reader forms: a trigger that could set it makes the rows go one at a time, without a
/// plan.)
pub(crate) fn session_zone() -> Zone {
    let mut gmtoff: std::ffi::c_long = 0;
    // SAFETY: reads the backend's global; `session_timezone` is its current zone (set at
    // startup, never NULL after it).
    let tz = unsafe { pg_sys::session_timezone };
    // SAFETY: `tz` is a valid zone (above); the call only reads it and writes `gmtoff`.
    let fixed = unsafe { pg_sys::pg_get_timezone_offset(tz, &mut gmtoff) };
    match i32::try_from(gmtoff) {
        Ok(off) if fixed => return Zone::Fixed(off),
        _ => {}
    }
    thread_local! {
        static TABLES: std::cell::RefCell<Vec<(usize, Option<&'static ZoneTable>)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    let key = tz as usize;
    let table = TABLES.with_borrow_mut(|tables| {
        if let Some(&(_, t)) = tables.iter().find(|(k, _)| *k == key) {
            return t;
        }
        // (a leak per zone a backend uses: a few kB, for the backend's life, as the server's
        // own zone cache)
        let t = zone_table(tz).map(|t| &*Box::leak(Box::new(t)));
        tables.push((key, t));
        t
    });
    table.map_or(Zone::Explicit, Zone::Table)
}

/// The years whose local times [`session_zone`]'s tables cover (from the start of the first
/// to the start of the last), as seconds since 1970-01-01.
const ZONE_YEARS: (i64, i64) = (-2_208_988_800, 4_102_444_800); // 1900, 2100
/// Local time left to the server on either side of a transition (DetermineTimeZoneOffset
/// looks for the next transition from a day before the local time).
const ZONE_MARGIN: i64 = 2 * 86_400;

/// The windows of `tz`'s offsets over [`ZONE_YEARS`] (see [`session_zone`]).
fn zone_table(tz: *const pg_sys::pg_tz) -> Option<ZoneTable> {
    let mut windows = Vec::new();
    let mut t: pg_sys::pg_time_t = ZONE_YEARS.0;
    let mut start = ZONE_YEARS.0 + ZONE_MARGIN;
    loop {
        let (mut before, mut after) = (0, 0);
        let (mut before_dst, mut after_dst) = (0, 0);
        let mut boundary: pg_sys::pg_time_t = 0;
        // SAFETY: `tz` is the session's zone; the call reads it and writes the outputs.
        let res = unsafe {
            pg_sys::pg_next_dst_boundary(
                &t,
                &mut before,
                &mut before_dst,
                &mut boundary,
                &mut after,
                &mut after_dst,
                tz,
            )
        };
        let before = i32::try_from(before).ok()?;
        match res {
            0 => {
                // no transition after t: one offset to the end
                windows.push((start, ZONE_YEARS.1, before));
                break;
            }
            1 => {
                let after = i32::try_from(after).ok()?;
                let end = boundary + before.min(after) as i64 - ZONE_MARGIN;
                if start < end.min(ZONE_YEARS.1) {
                    windows.push((start, end.min(ZONE_YEARS.1), before));
                }
                start = boundary + before.max(after) as i64 + ZONE_MARGIN;
                if boundary >= ZONE_YEARS.1 || boundary <= t {
                    break;
                }
                t = boundary;
            }
            _ => return None,
        }
    }
    ZoneTable::new(windows)
}

/// A numeric column's typmod as the core takes it: `Some(None)` without one, `None` for a
/// scale below 0 or above the precision (PostgreSQL 15+), which the core does not round to.
fn numeric_typmod(typmod: i32) -> Option<Option<Typmod>> {
    if typmod < pg_sys::VARHDRSZ as i32 {
        return Some(None);
    }
    let t = typmod - pg_sys::VARHDRSZ as i32;
    let precision = (t >> 16) & 0xffff;
    // the scale: 11 bits, signed (`NUMERIC_TYPMOD_SCALE`)
    let scale = ((t & 0x7ff) ^ 1024) - 1024;
    (0..=precision).contains(&scale).then_some(Some(Typmod {
        precision: precision as u32,
        scale: scale as u32,
    }))
}
