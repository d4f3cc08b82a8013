//! Binary fields to Datums (COPY's `CopyReadBinaryAttribute`): the column type's receive
//! function, looked up once per load (`getTypeBinaryInputInfo`), called with the field's bytes
//! in a buffer of our own; the whole buffer must be consumed ("incorrect binary data format",
//! 22P03). A NULL goes to the receive function too, as NULL, so that a domain checks it.
//!
//! Read by fastcopy itself ([`Native`]), without a function-manager call: the fixed-width types whose receive
//! functions only read the bytes and check a range, and for text: each takes a value only
//! when it is exactly what the receive function would return without error (the right length,
//! in range, valid text), and hands everything else to the receive function, which then
//! raises its own error.

use super::datum::{Chars, bytes_datum, typed_for, varlena_datum};
use super::tuple_plan::Typed;
use crate::error::raise;
use fastcopy_core::chunks::is_utf8_text;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::cell::RefCell;
use std::ffi::c_char;

const USECS_PER_DAY: i64 = 86_400_000_000;

/// The types whose binary form fastcopy reads itself, without the receive function's call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Native {
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Bool,
    /// `date_recv`: ±infinity or `IS_VALID_DATE`.
    Date,
    /// `time_recv` without a typmod: 0 to 24:00:00.
    Time,
    /// `timestamp_recv` / `timestamptz_recv` without a typmod: ±infinity or
    /// `IS_VALID_TIMESTAMP`.
    Timestamp,
    /// `textrecv` / `varcharrecv` without a typmod, when the client encoding is the database's
    /// and both are UTF-8 (`pq_getmsgtext` then only verifies): valid UTF-8 without NUL.
    Text,
    /// `uuid_recv`: 16 bytes, copied.
    Uuid,
    /// `numeric_recv` without a typmod (`fastcopy_core::numeric::numeric_from_binary`).
    Numeric,
}

/// How one binary field becomes a Datum.
pub struct Receive {
    native: Option<Native>,
    flinfo: Box<pg_sys::FmgrInfo>,
    typioparam: pg_sys::Oid,
    typmod: i32,
    /// The field's bytes, NUL-terminated, for the receive function (COPY's `attribute_buf`:
    /// receive functions of arrays and records write into it while they read).
    scratch: RefCell<Vec<u8>>,
    /// How the reader may take the column's values when it forms tuples (binary varying
    /// plans, `fastcopy_core::varying`): text, varchar and char values where the session and
    /// the database are in UTF-8 (`textrecv` only verifies them then), and the fixed-width,
    /// date/time and untyped numeric types.
    pub chars: Option<Chars>,
    pub typed: Option<Typed>,
}

impl Receive {
    /// The receive function of `typid` (COPY's error when it has none), and whether
    /// fastcopy reads the type itself ([`Native`]).
    pub fn for_type(typid: pg_sys::Oid, typmod: i32) -> Receive {
        let (func, typioparam) = lookup(typid);
        // SAFETY: the FmgrInfo is ours, boxed (fmgr_info keeps no pointer to it, and it must
        // not move while in use); fmgr_info on the backend thread.
        let flinfo = unsafe {
            let mut flinfo = Box::new(std::mem::zeroed::<pg_sys::FmgrInfo>());
            pg_sys::fmgr_info(func, flinfo.as_mut());
            flinfo
        };
        let untyped = typmod < 0;
        let native = match typid {
            pg_sys::INT2OID => Some(Native::Int2),
            pg_sys::INT4OID => Some(Native::Int4),
            pg_sys::INT8OID => Some(Native::Int8),
            pg_sys::FLOAT4OID => Some(Native::Float4),
            pg_sys::FLOAT8OID => Some(Native::Float8),
            pg_sys::BOOLOID => Some(Native::Bool),
            pg_sys::DATEOID => Some(Native::Date),
            pg_sys::TIMEOID if untyped => Some(Native::Time),
            pg_sys::TIMESTAMPOID | pg_sys::TIMESTAMPTZOID if untyped => Some(Native::Timestamp),
            pg_sys::TEXTOID | pg_sys::VARCHAROID if untyped && utf8_session() => Some(Native::Text),
            pg_sys::UUIDOID => Some(Native::Uuid),
            pg_sys::NUMERICOID if untyped => Some(Native::Numeric),
            _ => None,
        };
        let binary_typed = |t: Typed| !matches!(t, Typed::Numeric(Some(_)));
        Receive {
            native,
            flinfo,
            typioparam,
            typmod,
            scratch: RefCell::new(Vec::new()),
            chars: Chars::for_type(typid, typmod).filter(|_| utf8_session()),
            typed: typed_for(typid, typmod).filter(|&t| binary_typed(t)),
        }
    }

    /// The integer width the reader thread converts this column's fields in (int2/4/8).
    pub fn int_width(&self) -> Option<fastcopy_core::pipeline::IntWidth> {
        use fastcopy_core::pipeline::IntWidth;
        match self.native {
            Some(Native::Int2) => Some(IntWidth::I16),
            Some(Native::Int4) => Some(IntWidth::I32),
            Some(Native::Int8) => Some(IntWidth::I64),
            _ => None,
        }
    }

    /// The Datum of `bytes` (`None`: NULL), or the receive function's ERROR.
    #[inline]
    pub fn convert(&self, bytes: Option<&[u8]>) -> pg_sys::Datum {
        let Some(b) = bytes else {
            return self.call(None);
        };
        let d = match self.native {
            Some(Native::Text) if is_utf8_text(b) => Some(text(b)),
            Some(f) => native(f, b),
            None => None,
        };
        d.unwrap_or_else(|| self.call(Some(b)))
    }

    /// `ReceiveFunctionCall`, then COPY's check that it read the whole field. Out of line
    /// (see `Loader::load_routed`: the FFI guard's lookup stays out of the row loop).
    #[inline(never)]
    fn call(&self, bytes: Option<&[u8]>) -> pg_sys::Datum {
        let fl = self.flinfo.as_ref() as *const _ as *mut pg_sys::FmgrInfo;
        let Some(b) = bytes else {
            // SAFETY: the receive function fmgr_info filled in; NULL for a NULL field, as COPY
            // passes it (a strict function is not called, a domain's checks NOT NULL).
            return unsafe {
                pg_sys::ReceiveFunctionCall(fl, std::ptr::null_mut(), self.typioparam, self.typmod)
            };
        };
        let mut scratch = self.scratch.borrow_mut();
        scratch.clear();
        scratch.extend_from_slice(b);
        scratch.push(0);
        let len = i32::try_from(b.len()).expect("a field length is an int32");
        let mut buf = pg_sys::StringInfoData {
            data: scratch.as_mut_ptr() as *mut c_char,
            len,
            maxlen: len + 1,
            cursor: 0,
        };
        // SAFETY: `buf` holds the field's bytes and a NUL after them (as `attribute_buf`), in
        // memory we own and lend mutably for the call; receive functions read it and may
        // write into it while they do, never past `len` or reallocate it.
        let d = unsafe { pg_sys::ReceiveFunctionCall(fl, &mut buf, self.typioparam, self.typmod) };
        if buf.cursor != buf.len {
            raise(
                PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
                "incorrect binary data format",
            );
        }
        d
    }
}

/// `getTypeBinaryInputInfo`: the receive function and typioparam of `typid` (42883 "no binary
/// input function available for type %s" when it has none).
pub fn lookup(typid: pg_sys::Oid) -> (pg_sys::Oid, pg_sys::Oid) {
    let mut func = pg_sys::InvalidOid;
    let mut typioparam = pg_sys::InvalidOid;
    // SAFETY: a catalog lookup on the backend thread; it raises COPY's own error.
    unsafe { pg_sys::getTypeBinaryInputInfo(typid, &mut func, &mut typioparam) };
    (func, typioparam)
}

/// The session's client encoding and the database's are both UTF-8.
fn utf8_session() -> bool {
    let utf8 = pg_sys::pg_enc::PG_UTF8 as i32;
    // SAFETY: reads the session's settings.
    unsafe { pg_sys::pg_get_client_encoding() == utf8 && pg_sys::GetDatabaseEncoding() == utf8 }
}

/// `b` read as type `f` by fastcopy itself, or `None` when the receive function must decide.
#[inline(always)]
fn native(f: Native, b: &[u8]) -> Option<pg_sys::Datum> {
    let d = match f {
        Native::Int2 => pg_sys::Datum::from(i16::from_be_bytes(b.try_into().ok()?)),
        Native::Int4 => pg_sys::Datum::from(i32::from_be_bytes(b.try_into().ok()?)),
        Native::Int8 => pg_sys::Datum::from(i64::from_be_bytes(b.try_into().ok()?)),
        // Float4GetDatum: the bits as an int32 Datum
        Native::Float4 => pg_sys::Datum::from(i32::from_be_bytes(b.try_into().ok()?)),
        Native::Float8 => pg_sys::Datum::from(i64::from_be_bytes(b.try_into().ok()?)),
        Native::Bool => match b {
            [v] => pg_sys::Datum::from(*v != 0),
            _ => return None,
        },
        Native::Date => pg_sys::Datum::from(fastcopy_core::datetime::date_from_binary(b)?),
        Native::Time => {
            let v = i64::from_be_bytes(b.try_into().ok()?);
            if !(0..=USECS_PER_DAY).contains(&v) {
                return None;
            }
            pg_sys::Datum::from(v)
        }
        Native::Timestamp => {
            pg_sys::Datum::from(fastcopy_core::datetime::timestamp_from_binary(b)?)
        }
        Native::Uuid => {
            let u: &[u8; 16] = b.try_into().ok()?;
            // SAFETY: palloc'd in the current memory context (the batch's, which convert_row
            // made current), as uuid_recv allocates.
            unsafe { bytes_datum(u, palloc) }
        }
        Native::Numeric => return numeric(b),
        Native::Text => return None,
    };
    Some(d)
}

/// The numeric Datum `numeric_recv` returns for `b` (a varlena with a 4-byte header), where
/// the core computes it.
#[inline(never)]
fn numeric(b: &[u8]) -> Option<pg_sys::Datum> {
    // (a body is never longer than its binary form: 2 header bytes for 8)
    let mut body = [0u8; 256];
    let n = fastcopy_core::numeric::numeric_from_binary(b, body.get_mut(..b.len())?)?;
    // SAFETY: palloc'd in the current memory context (the batch's), as numeric_recv allocates.
    Some(unsafe { varlena_datum(&body[..n], palloc) })
}

/// n bytes of the current memory context (palloc raises rather than return NULL).
fn palloc(n: usize) -> *mut u8 {
    // SAFETY: on the backend thread, in the current memory context.
    unsafe { pg_sys::palloc(n) as *mut u8 }
}

/// A text Datum of `b` (valid text in the database encoding), as `textrecv` builds it.
#[inline(never)]
fn text(b: &[u8]) -> pg_sys::Datum {
    // SAFETY: `b` is a valid slice; cstring_to_text_with_len copies `len` bytes into a new
    // varlena in the current memory context (the batch's).
    let t =
        unsafe { pg_sys::cstring_to_text_with_len(b.as_ptr() as *const c_char, b.len() as i32) };
    pg_sys::Datum::from(t)
}

/// COPY's check of every attribute's binary input, input column or not (`BeginCopyFrom`
/// looks up every non-dropped attribute's function).
///
/// # Safety
/// `rel` is open.
pub unsafe fn check_all_attributes(rel: pg_sys::Relation) {
    // SAFETY: as the function's contract.
    unsafe {
        let tupdesc = (*rel).rd_att;
        for i in 0..(*tupdesc).natts as usize {
            let a = crate::compat::tuple_desc_attr(tupdesc, i);
            if !a.attisdropped {
                lookup(a.atttypid);
            }
        }
    }
}
