//! Tuples whose layout varies from row to row: rows of integers and text values, formed by
//! the reader thread as `heap_form_tuple` forms them (for a row without NULLs).
//!
//! A fixed [`TuplePlan`](crate::pipeline::TuplePlan) writes a row's values into a template at
//! offsets known once per load. A text value moves everything after it, and its own header
//! depends on its length, so here the tuple is written column by column, as
//! `heap_fill_tuple` does:
//!
//! - an integer at the next offset aligned to its column's alignment, little-endian;
//! - a text value whose varlena (value and a one-byte header) fits 127 bytes as a *short*
//!   varlena: the header byte `(len + 1) << 1 | 1`, then the value, unaligned (what
//!   `heap_fill_tuple` makes of a packable column's 4-byte-header value that
//!   `VARATT_CAN_MAKE_SHORT`);
//! - a longer one with a 4-byte header `(len + 4) << 2` at the next offset aligned to its
//!   column's alignment;
//! - the bytes skipped for alignment are zero, as in the server's zeroed chunk.
//!
//! In front of the data goes the plan's `head` (the memory in front of the tuple and the
//! tuple's header, made by the extension from the server's own tuple), with the tuple's length
//! written at the places the plan names. The chunk ends zero-padded to 8 bytes. The encodings
//! of the headers are those of a little-endian server; the extension checks the plan against
//! tuples the server forms before it uses it.
//!
//! Which values are taken as they are is the backend's rule for these columns: any value
//! ([`Limit::Any`], `text`), a value of at most n bytes ([`Limit::Bytes`], `varchar(n)`: n
//! bytes are at most n characters), or a plain-ASCII value of at most n bytes padded with
//! spaces to n ([`Limit::Padded`], `char(n)`). A value outside its limit, a NULL, a DEFAULT
//! marker, an integer that did not convert, or a tuple longer than the plan's `max_len` (the
//! server would compress or move values out of line) leaves the row to the loader.
//!
//! `date`, `timestamp`, `timestamptz`, `numeric`, `float4`, `float8`, `bool`, `uuid` and
//! `bytea` values are converted on the way, when they are written as [`crate::datetime`],
//! [`crate::numeric`], [`crate::float`], [`crate::boolean`], [`crate::uuid`] and
//! [`crate::bytea`] read them (else the row is the loader's, whose input function reads them):
//! dates and timestamps stored as integers, a numeric or a bytea as a varlena like a text
//! value, the others as their fixed number of bytes ([`Fixed`]).
//!
//! With a [`NullHeader`], a NULL in a column that allows it is formed too: the row's header
//! grows the null bitmap, and the value takes no room.
//!
//! A plan [`VaryingPlan::with_binary`] reads COPY's binary format instead (big-endian values
//! of exactly their width, as the receive functions read them): integers as the reader
//! converted them; text as it is when it is valid UTF-8 without NUL (the session and the
//! database in UTF-8, checked by the extension); a date or timestamp finite in its type's
//! range or infinite; float4/float8/uuid as their bytes, a bool as `boolrecv` (any non-zero
//! byte is true); a numeric without a typmod as [`crate::numeric::numeric_from_binary`]; a
//! bytea's bytes as they are (`bytearecv`).

use crate::datetime;
pub use crate::datetime::Zone;
use crate::field::Field;
use crate::numeric::{self, Typmod};
use crate::{boolean, bytea, float, uuid};

/// How a text column takes a row's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Every value, as it is.
    Any,
    /// A value of at most n bytes, as it is.
    Bytes(usize),
    /// A value of plain ASCII (bytes 1 to 127) of at most n bytes, padded with spaces to n.
    Padded(usize),
}

/// One column of the tuple, in attribute order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Input field `field`'s integer in `width` bytes (2, 4 or 8), at an offset aligned to
    /// `align`.
    Int {
        field: usize,
        width: usize,
        align: usize,
    },
    /// Input field `field`'s value as a varlena; `align` is the column's alignment (for a
    /// value too long for a one-byte header).
    Text {
        field: usize,
        limit: Limit,
        align: usize,
    },
    /// A `date` ([`crate::datetime::parse_date`]): 4 bytes, aligned to `align`.
    Date { field: usize, align: usize },
    /// A `timestamp`, or with `zone` a `timestamptz` ([`crate::datetime`]): 8 bytes,
    /// aligned to `align`.
    Timestamp {
        field: usize,
        zone: Option<Zone>,
        align: usize,
    },
    /// A value of a fixed number of bytes ([`Fixed`]), aligned to `align`.
    Fixed {
        field: usize,
        kind: Fixed,
        align: usize,
    },
    /// A `numeric` ([`crate::numeric::parse_numeric`]) as a varlena, as a text value is
    /// stored.
    Numeric {
        field: usize,
        typmod: Option<Typmod>,
        align: usize,
    },
    /// A `bytea` in the hex format ([`crate::bytea`]), or in the binary format its bytes as
    /// they are, as a varlena.
    Bytea { field: usize, align: usize },
}

/// The fixed-width types [`Piece::Fixed`] converts, and their stored bytes (those of a
/// little-endian server: the extension checks them against the server's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixed {
    /// `float4` ([`crate::float::parse_float4`]): 4 bytes.
    Float4,
    /// `float8` ([`crate::float::parse_float8`]): 8 bytes.
    Float8,
    /// `bool` ([`crate::boolean::parse_bool`]): 1 byte, 0 or 1.
    Bool,
    /// `uuid` ([`crate::uuid::parse_uuid`]): its 16 bytes in order.
    Uuid,
}

impl Fixed {
    /// The stored width in bytes.
    pub fn width(self) -> usize {
        match self {
            Fixed::Float4 => 4,
            Fixed::Float8 => 8,
            Fixed::Bool => 1,
            Fixed::Uuid => 16,
        }
    }

    /// The stored bytes of `v` at the start of `out` (`width` of them), or `None` when the
    /// server's input function must read it.
    #[inline(always)]
    pub fn convert(self, v: &[u8], out: &mut [u8; 16]) -> Option<()> {
        match self {
            Fixed::Float4 => out[..4].copy_from_slice(&float::parse_float4(v)?.to_le_bytes()),
            Fixed::Float8 => out[..8].copy_from_slice(&float::parse_float8(v)?.to_le_bytes()),
            Fixed::Bool => out[0] = boolean::parse_bool(v)? as u8,
            Fixed::Uuid => *out = uuid::parse_uuid(v)?,
        }
        Some(())
    }
}

/// The largest varlena, header included, a one-byte header describes (`VARATT_SHORT_MAX`).
const SHORT_MAX: usize = 0x7f;

/// Where a tuple's header tells of its NULLs, as `heap_fill_tuple` writes them: a bitmap of
/// the attributes that have a value (one bit per piece), after which the data starts at the
/// next multiple of 8 (`t_hoff`), and the infomask's bits for a NULL and for a varlena value
/// (which a row whose only varlena values are NULL does not have). Offsets are into the plan's
/// `head`, which holds the header of a row without NULLs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NullHeader {
    /// The bitmap (`t_bits`).
    pub bits_at: usize,
    /// `t_hoff` (one byte): the data's offset from the tuple's start.
    pub hoff_at: usize,
    /// The infomask (a native-endian u16).
    pub infomask_at: usize,
    /// `HEAP_HASNULL`.
    pub has_null: u16,
    /// `HEAP_HASVARWIDTH`.
    pub has_varwidth: u16,
}

/// How the rows of one relation become tuples of varying layout.
#[derive(Clone, Debug)]
pub struct VaryingPlan {
    /// The bytes in front of the tuple's data: the memory in front of the tuple, then its
    /// header (a multiple of 8 bytes, so that the data starts 8-byte aligned).
    head: Vec<u8>,
    /// Where the tuple (its header) starts in `head`: the tuple's length counts from there.
    tuple_at: usize,
    /// Where the tuple's length is written inside `head`, and shifted left by how many bits
    /// (a native-endian u32 each: `t_len`, and the header's datum length, which is a varlena
    /// size word, `SET_VARSIZE`).
    len_at: Vec<(usize, u32)>,
    pieces: Vec<Piece>,
    /// A longer tuple is left to the loader.
    max_len: usize,
    /// A row must have exactly this many fields.
    pub(crate) nfields: usize,
    /// With NULLs: the header's places, and per piece whether its value may be NULL (a row
    /// with a NULL elsewhere, or without a `NullHeader` at all, is the loader's).
    nulls: Option<(NullHeader, Vec<bool>)>,
    /// The fields are COPY binary values (see the module docs).
    binary: bool,
}

impl VaryingPlan {
    /// `None` unless `head` is a multiple of 8 bytes long, `tuple_at` and every `len_at` (4
    /// bytes, a shift below 8) lie inside it, every piece names a field below `nfields` with a power-of-two
    /// alignment of at most 8 and an integer width of 2, 4 or 8, and there is a piece.
    pub fn new(
        head: Vec<u8>,
        tuple_at: usize,
        len_at: Vec<(usize, u32)>,
        pieces: Vec<Piece>,
        max_len: usize,
        nfields: usize,
    ) -> Option<VaryingPlan> {
        let aligned = |a: usize| matches!(a, 1 | 2 | 4 | 8);
        let piece_ok = |p: &Piece| match *p {
            Piece::Int {
                field,
                width,
                align,
            } => field < nfields && matches!(width, 2 | 4 | 8) && aligned(align),
            Piece::Text { field, align, .. }
            | Piece::Date { field, align }
            | Piece::Timestamp { field, align, .. }
            | Piece::Fixed { field, align, .. }
            | Piece::Numeric { field, align, .. }
            | Piece::Bytea { field, align } => field < nfields && aligned(align),
        };
        let ok = head.len().is_multiple_of(8)
            && tuple_at <= head.len()
            && len_at
                .iter()
                .all(|&(at, shift)| at + 4 <= head.len() && shift < 8)
            && !pieces.is_empty()
            && pieces.iter().all(piece_ok);
        ok.then_some(VaryingPlan {
            head,
            tuple_at,
            len_at,
            pieces,
            max_len,
            nfields,
            nulls: None,
            binary: false,
        })
    }

    /// The plan, forming rows with NULLs as well: `nullable[i]` says whether piece i's value
    /// may be NULL. `None` unless there is one entry per piece and the header's places lie
    /// inside the head before the bitmap, after the tuple's start.
    pub fn with_nulls(mut self, header: NullHeader, nullable: Vec<bool>) -> Option<VaryingPlan> {
        let h = &header;
        let ok = nullable.len() == self.pieces.len()
            && self.tuple_at <= h.hoff_at
            && h.hoff_at < h.bits_at
            && h.infomask_at >= self.tuple_at
            && h.infomask_at + 2 <= h.bits_at
            && h.bits_at <= self.head.len();
        self.nulls = Some((header, nullable));
        ok.then_some(self)
    }

    /// The plan, reading fields of COPY's binary format (see the module docs). `None` when a
    /// piece is a numeric with a typmod (`numeric_recv` rounds to it: the loader's).
    pub fn with_binary(mut self) -> Option<VaryingPlan> {
        let typmod = |p: &Piece| {
            matches!(
                p,
                Piece::Numeric {
                    typmod: Some(_),
                    ..
                }
            )
        };
        self.binary = true;
        (!self.pieces.iter().any(typmod)).then_some(self)
    }

    /// Appends the tuple of one row to `out`: `ints[f]` is input field f converted (where it
    /// is an integer field), `field(f)` the field (a value, NULL or DEFAULT). Returns the
    /// chunk's length (a multiple of 8), or `None` when the loader must form the row, with
    /// `out` as it was. `out`'s length is a multiple of 8 before and after.
    #[inline]
    pub fn form<'v>(
        &self,
        ints: &[Option<i64>],
        field: impl Fn(usize) -> Field<'v>,
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        let start = out.len();
        let formed = self.write(ints, field, out, start);
        if formed.is_none() {
            out.truncate(start);
        }
        formed
    }

    #[inline(always)]
    fn write<'v>(
        &self,
        ints: &[Option<i64>],
        field: impl Fn(usize) -> Field<'v>,
        out: &mut Vec<u8>,
        start: usize,
    ) -> Option<usize> {
        let mut has_null = false;
        if let Some((_, nullable)) = &self.nulls {
            for (piece, &may) in self.pieces.iter().zip(nullable) {
                match field(piece.field()) {
                    Field::Value(_) => {}
                    Field::Null if may => has_null = true,
                    _ => return None,
                }
            }
        }
        match &self.nulls {
            Some((h, _)) if has_null => self.write_null_header(h, &field, out, start),
            _ => append(out, &self.head),
        }
        // offsets are aligned relative to the data's start, which is 8-byte aligned in the
        // chunk (the head is a multiple of 8 bytes, so is `t_hoff`, and so is `start`)
        let data = out.len();
        let limit = start + self.tuple_at + self.max_len;
        for piece in &self.pieces {
            match *piece {
                Piece::Int {
                    field: f,
                    width,
                    align,
                } => {
                    if has_null && field(f) == Field::Null {
                        continue;
                    }
                    let v = ints.get(f).copied().flatten()?;
                    pad(out, data, align);
                    let le = v.to_le_bytes();
                    match width {
                        2 if i16::try_from(v).is_ok() => out.extend_from_slice(&le[..2]),
                        4 if i32::try_from(v).is_ok() => out.extend_from_slice(&le[..4]),
                        8 => out.extend_from_slice(&le),
                        _ => return None,
                    }
                }
                Piece::Text {
                    field: f,
                    limit: take,
                    align,
                } => {
                    let v = match field(f) {
                        Field::Value(v) if !self.binary || crate::chunks::is_utf8_text(v) => v,
                        Field::Null if has_null => continue,
                        _ => return None,
                    };
                    // the value's length once stored, and the spaces after it
                    let len = match take {
                        Limit::Any => v.len(),
                        Limit::Bytes(n) if v.len() <= n => v.len(),
                        // (a NUL byte goes to the server's function: it ends the C string)
                        Limit::Padded(n) if v.len() <= n && plain_ascii(v) => n,
                        _ => return None,
                    };
                    if len > self.max_len {
                        return None; // (and the header's length fits a u32)
                    }
                    varlena_header(out, data, len, align);
                    append(out, v);
                    fill(out, len - v.len(), b' ');
                }
                Piece::Date { field: f, align } => {
                    let v = match field(f) {
                        Field::Value(v) if self.binary => binary::date(v)?,
                        Field::Value(v) => datetime::parse_date(v)?,
                        Field::Null if has_null => continue,
                        _ => return None,
                    };
                    pad(out, data, align);
                    out.extend_from_slice(&v.to_le_bytes());
                }
                Piece::Timestamp {
                    field: f,
                    zone,
                    align,
                } => {
                    let v = match field(f) {
                        Field::Value(v) if self.binary => binary::timestamp(v)?,
                        Field::Value(v) => match zone {
                            None => datetime::parse_timestamp(v)?,
                            Some(zone) => datetime::parse_timestamptz(v, zone)?,
                        },
                        Field::Null if has_null => continue,
                        _ => return None,
                    };
                    pad(out, data, align);
                    out.extend_from_slice(&v.to_le_bytes());
                }
                Piece::Fixed {
                    field: f,
                    kind,
                    align,
                } => {
                    let mut bytes = [0u8; 16];
                    match field(f) {
                        Field::Value(v) if self.binary => binary::fixed(kind, v, &mut bytes)?,
                        Field::Value(v) => kind.convert(v, &mut bytes)?,
                        Field::Null if has_null => continue,
                        _ => return None,
                    }
                    pad(out, data, align);
                    // (each width a copy of a known size)
                    match kind.width() {
                        1 => out.push(bytes[0]),
                        4 => out.extend_from_slice(&bytes[..4]),
                        8 => out.extend_from_slice(&bytes[..8]),
                        _ => out.extend_from_slice(&bytes),
                    }
                }
                Piece::Numeric {
                    field: f,
                    typmod,
                    align,
                } => {
                    let mut body = [0u8; numeric::MAX_BODY];
                    let len = match field(f) {
                        Field::Value(v) if self.binary => {
                            numeric::numeric_from_binary(v, body.get_mut(..v.len())?)?
                        }
                        Field::Value(v) => numeric::parse_numeric(v, typmod, &mut body)?,
                        Field::Null if has_null => continue,
                        _ => return None,
                    };
                    varlena_header(out, data, len, align);
                    append(out, &body[..len]);
                }
                Piece::Bytea { field: f, align } => {
                    let v = match field(f) {
                        Field::Value(v) => v,
                        Field::Null if has_null => continue,
                        _ => return None,
                    };
                    // (bytearecv stores the bytes sent as they are)
                    let len = if self.binary {
                        v.len()
                    } else {
                        bytea::hex_len(v)?
                    };
                    if len > self.max_len {
                        return None;
                    }
                    varlena_header(out, data, len, align);
                    if self.binary {
                        append(out, v);
                    } else {
                        let at = out.len();
                        out.resize(at + len, 0);
                        bytea::decode_hex(v, &mut out[at..])?;
                    }
                }
            }
            if out.len() > limit {
                return None;
            }
        }
        let t_len = out.len() - start - self.tuple_at;
        for &(at, shift) in &self.len_at {
            let word = (t_len as u32) << shift;
            out[start + at..start + at + 4].copy_from_slice(&word.to_ne_bytes());
        }
        pad(out, start, 8);
        Some(out.len() - start)
    }
}

impl VaryingPlan {
    /// The header of a row with a NULL: the head up to the bitmap, the bitmap (a bit per
    /// piece, set for a value), zeros to `t_hoff` (the next multiple of 8 from the tuple's
    /// start), `t_hoff` and the infomask's bits set.
    #[inline(never)]
    fn write_null_header<'v>(
        &self,
        h: &NullHeader,
        field: &impl Fn(usize) -> Field<'v>,
        out: &mut Vec<u8>,
        start: usize,
    ) {
        out.extend_from_slice(&self.head[..h.bits_at]);
        let mut varwidth = false;
        let mut byte = 0u8;
        for (i, piece) in self.pieces.iter().enumerate() {
            if field(piece.field()) != Field::Null {
                byte |= 1 << (i % 8);
                varwidth |= matches!(
                    piece,
                    Piece::Text { .. } | Piece::Numeric { .. } | Piece::Bytea { .. }
                );
            }
            if i % 8 == 7 || i + 1 == self.pieces.len() {
                out.push(byte);
                byte = 0;
            }
        }
        let hoff = (out.len() - start - self.tuple_at).next_multiple_of(8);
        out.resize(start + self.tuple_at + hoff, 0);
        out[start + h.hoff_at] = hoff as u8;
        let at = start + h.infomask_at;
        let mut infomask = u16::from_ne_bytes([out[at], out[at + 1]]);
        infomask = (infomask & !h.has_varwidth) | h.has_null;
        if varwidth {
            infomask |= h.has_varwidth;
        }
        out[at..at + 2].copy_from_slice(&infomask.to_ne_bytes());
    }
}

impl Piece {
    /// The input field the piece takes its value from.
    pub fn field(&self) -> usize {
        match *self {
            Piece::Int { field, .. }
            | Piece::Text { field, .. }
            | Piece::Date { field, .. }
            | Piece::Timestamp { field, .. }
            | Piece::Fixed { field, .. }
            | Piece::Numeric { field, .. }
            | Piece::Bytea { field, .. } => field,
        }
    }
}

/// COPY binary values of the fixed-width types, as their receive functions read them.
mod binary {
    use super::Fixed;
    pub use crate::datetime::{date_from_binary as date, timestamp_from_binary as timestamp};

    /// float4/float8 (their bits, little-endian as stored), bool (`boolrecv`: non-zero is
    /// true), uuid (its bytes).
    #[inline]
    pub fn fixed(kind: Fixed, v: &[u8], out: &mut [u8; 16]) -> Option<()> {
        match kind {
            Fixed::Float4 => {
                out[..4].copy_from_slice(&u32::from_be_bytes(v.try_into().ok()?).to_le_bytes())
            }
            Fixed::Float8 => {
                out[..8].copy_from_slice(&u64::from_be_bytes(v.try_into().ok()?).to_le_bytes())
            }
            Fixed::Bool => match v {
                [b] => out[0] = (*b != 0) as u8,
                _ => return None,
            },
            Fixed::Uuid => *out = v.try_into().ok()?,
        }
        Some(())
    }
}

/// The varlena header of a value of `len` bytes: one byte where it fits, else 4 bytes at the
/// next offset aligned to `align` (`heap_fill_tuple` for a column that allows packing).
#[inline(always)]
fn varlena_header(out: &mut Vec<u8>, data: usize, len: usize, align: usize) {
    if len < SHORT_MAX {
        out.push(((len + 1) as u8) << 1 | 1);
    } else {
        pad(out, data, align);
        out.extend_from_slice(&(((len + 4) as u32) << 2).to_le_bytes());
    }
}

/// Every byte of `v` is plain ASCII other than NUL (1 to 127). Without a branch per byte, so
/// that the loop vectorizes: a byte's top bit, or the top bit of the byte less one (set for
/// NUL only, among bytes below 128), marks it.
#[inline]
pub(crate) fn plain_ascii(v: &[u8]) -> bool {
    v.iter().fold(0u8, |acc, &b| acc | b | b.wrapping_sub(1)) & 0x80 == 0
}

/// Zero bytes up to the next offset from `data` aligned to `align`.
#[inline(always)]
fn pad(out: &mut Vec<u8>, data: usize, align: usize) {
    let at = out.len() - data;
    let to = (at + align - 1) & !(align - 1);
    fill(out, to - at, 0);
}

/// Appends `v` to `out`, as `extend_from_slice` does, a value of up to 32 bytes without a call
/// to memcpy: bytes of a fixed count appended, the value's first and last bytes written over
/// them in pieces of a fixed size (overlapping where the value is shorter than two), the rest
/// cut off. A tuple is a dozen short pieces (its head, numerics, texts, pads), and the calls
/// were a sixth of the tuple former's time on lineitem (17).
#[inline(always)]
fn append(out: &mut Vec<u8>, v: &[u8]) {
    /// `v` (of `N` to `2N` bytes) over `2N` bytes appended to `out`, cut to its length.
    #[inline(always)]
    fn halves<const N: usize, const M: usize>(out: &mut Vec<u8>, v: &[u8]) {
        let (at, n) = (out.len(), v.len());
        out.extend_from_slice(&[0u8; M]);
        let d = &mut out[at..at + M];
        d[..N].copy_from_slice(&v[..N]);
        d[n - N..n].copy_from_slice(&v[n - N..]);
        out.truncate(at + n);
    }
    let n = v.len();
    match n {
        0 => {}
        1..=3 => {
            let at = out.len();
            out.extend_from_slice(&[v[0], v[n / 2], v[n - 1]]);
            out.truncate(at + n);
        }
        4..=7 => halves::<4, 8>(out, v),
        8..=16 => halves::<8, 16>(out, v),
        17..=32 => halves::<16, 32>(out, v),
        // (longer ones: memcpy's call costs little beside the copy; on the mixed table of
        // `bench/types.sh`, whose text values are 40-odd bytes, pieces of 32 cost more)
        _ => out.extend_from_slice(v),
    }
}

/// Appends `n` bytes `b` to `out`, as `resize` does, up to 64 of them without a call to memset
/// (see [`append`]).
#[inline(always)]
fn fill(out: &mut Vec<u8>, n: usize, b: u8) {
    /// `n` (at most `M`) bytes `b`: `M` appended, the rest cut off.
    #[inline(always)]
    fn upto<const M: usize>(out: &mut Vec<u8>, n: usize, b: u8) {
        let at = out.len();
        out.extend_from_slice(&[b; M]);
        out.truncate(at + n);
    }
    match n {
        0 => {}
        1..=8 => upto::<8>(out, n, b),
        9..=16 => upto::<16>(out, n, b),
        17..=64 => upto::<64>(out, n, b),
        _ => out.resize(out.len() + n, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// head: 8 bytes in front of the tuple, then an 8-byte header; the length at 0, and at 8
    /// as a varlena size word.
    fn plan(pieces: Vec<Piece>, max_len: usize) -> VaryingPlan {
        let head = vec![
            0xAA, 0xAA, 0xAA, 0xAA, 0xBB, 0xBB, 0xBB, 0xBB, 0, 0, 0, 0, 7, 7, 7, 7,
        ];
        VaryingPlan::new(head, 8, vec![(0, 0), (8, 2)], pieces, max_len, 5).unwrap()
    }

    fn form(p: &VaryingPlan, ints: &[Option<i64>], vals: &[Option<&[u8]>]) -> Option<Vec<u8>> {
        let mut out = vec![0x55; 8]; // a tuple before it
        let field = |f: usize| vals[f].map_or(Field::Null, Field::Value);
        match p.form(ints, field, &mut out) {
            Some(n) => {
                assert_eq!(out.len(), 8 + n);
                assert_eq!(n % 8, 0);
                Some(out.split_off(8))
            }
            None => {
                assert_eq!(
                    out,
                    vec![0x55; 8],
                    "a row not formed leaves the buffer as it was"
                );
                None
            }
        }
    }

    /// The chunk for `data` (the tuple's data bytes) after the head, lengths filled in.
    fn chunk(data: &[u8]) -> Vec<u8> {
        let t_len = (8 + data.len()) as u32;
        let mut c = Vec::new();
        c.extend_from_slice(&t_len.to_ne_bytes());
        c.extend_from_slice(&[0xBB; 4]);
        c.extend_from_slice(&(t_len << 2).to_ne_bytes());
        c.extend_from_slice(&[7; 4]);
        c.extend_from_slice(data);
        c.resize(c.len().next_multiple_of(8), 0);
        c
    }

    fn pieces() -> Vec<Piece> {
        vec![
            Piece::Int {
                field: 0,
                width: 4,
                align: 4,
            },
            Piece::Text {
                field: 1,
                limit: Limit::Any,
                align: 4,
            },
            Piece::Int {
                field: 2,
                width: 8,
                align: 8,
            },
            Piece::Text {
                field: 3,
                limit: Limit::Bytes(3),
                align: 4,
            },
            Piece::Text {
                field: 4,
                limit: Limit::Padded(4),
                align: 4,
            },
        ]
    }

    const INTS: [Option<i64>; 5] = [Some(-2), None, Some(0x0102_0304_0506_0708), None, None];

    /// int4, text, int8, varchar(3), char(4): one-byte headers, unaligned; the integers
    /// aligned after them with zeros in the gaps; char(n) padded with spaces.
    #[test]
    fn short_values_are_packed_and_integers_aligned_after_them() {
        let p = plan(pieces(), 2032);
        let t = form(
            &p,
            &INTS,
            &[None, Some(b"hey"), None, Some(b"ab"), Some(b"x")],
        )
        .unwrap();
        let mut data = Vec::new();
        data.extend_from_slice(&(-2i32).to_le_bytes()); // 0..4
        data.extend_from_slice(&[(4 << 1) | 1, b'h', b'e', b'y']); // 4..8
        data.extend_from_slice(&0x0102_0304_0506_0708i64.to_le_bytes()); // 8..16
        data.extend_from_slice(&[(3 << 1) | 1, b'a', b'b']); // 16..19
        data.extend_from_slice(&[(5 << 1) | 1, b'x', b' ', b' ', b' ']); // 19..24
        assert_eq!(t, chunk(&data));
        // empty values: a header byte alone; the int8 after 3 zero bytes
        let t = form(
            &p,
            &INTS,
            &[None, Some(b""), None, Some(b""), Some(b"abcd")],
        )
        .unwrap();
        let mut data = Vec::new();
        data.extend_from_slice(&(-2i32).to_le_bytes()); // 0..4
        data.extend_from_slice(&[1 << 1 | 1, 0, 0, 0]); // 4..8
        data.extend_from_slice(&0x0102_0304_0506_0708i64.to_le_bytes()); // 8..16
        data.extend_from_slice(&[1 << 1 | 1]); // 16
        data.extend_from_slice(&[(5 << 1) | 1, b'a', b'b', b'c', b'd']); // 17..22
        assert_eq!(t, chunk(&data));
    }

    /// 126 bytes of value take a one-byte header, 127 a 4-byte one at the column's alignment.
    #[test]
    fn a_value_of_127_bytes_takes_an_aligned_four_byte_header() {
        let p = plan(pieces(), 2032);
        let v126 = vec![b'q'; 126];
        let t = form(&p, &INTS, &[None, Some(&v126), None, Some(b"a"), Some(b"")]).unwrap();
        assert_eq!(t[16 + 4], 127 << 1 | 1);
        assert_eq!(&t[16 + 5..16 + 131], &v126[..]);
        let v127 = vec![b'q'; 127];
        let t = form(&p, &INTS, &[None, Some(&v127), None, Some(b"a"), Some(b"")]).unwrap();
        let mut data = Vec::new();
        data.extend_from_slice(&(-2i32).to_le_bytes()); // 0..4 (4 is 4-aligned)
        data.extend_from_slice(&((127u32 + 4) << 2).to_le_bytes()); // 4..8
        data.extend_from_slice(&v127); // 8..135
        data.resize(136, 0);
        data.extend_from_slice(&0x0102_0304_0506_0708i64.to_le_bytes()); // 136..144
        data.extend_from_slice(&[(2 << 1) | 1, b'a']);
        data.extend_from_slice(&[(5 << 1) | 1, b' ', b' ', b' ', b' ']);
        assert_eq!(t, chunk(&data));
        // after a one-byte header the 4-byte one is aligned: 3 zero bytes first
        let p = plan(
            vec![
                Piece::Text {
                    field: 3,
                    limit: Limit::Bytes(3),
                    align: 4,
                },
                Piece::Text {
                    field: 1,
                    limit: Limit::Any,
                    align: 4,
                },
            ],
            2032,
        );
        let t = form(&p, &INTS, &[None, Some(&v127), None, Some(b""), None]).unwrap();
        assert_eq!(&t[16..24], &[3, 0, 0, 0, 131 << 2 & 0xff, 131 >> 6, 0, 0]);
    }

    /// NULL, an integer that did not convert or does not fit, a value beyond its limit, a
    /// char(n) value that is not plain ASCII, a tuple beyond max_len: left to the loader.
    #[test]
    fn rows_it_cannot_form_are_left_as_they_were() {
        let p = plan(pieces(), 2032);
        let ok: [Option<&[u8]>; 5] = [None, Some(b"a"), None, Some(b"abc"), Some(b"abcd")];
        assert!(form(&p, &INTS, &ok).is_some());
        let mut ints = INTS;
        ints[0] = None;
        assert!(form(&p, &ints, &ok).is_none());
        ints[0] = Some(1 << 31);
        assert!(form(&p, &ints, &ok).is_none());
        for (f, v, formed) in [
            (1, None, false),
            (3, Some(&b"abcd"[..]), false),
            (4, Some(&b"abcde"[..]), false),
            (4, Some("é".as_bytes()), false),
            (4, Some(&[b'a', 0][..]), false),
            (4, Some(&b""[..]), true),
            (4, Some(&b"\x7f"[..]), true),
        ] {
            let mut vals = ok;
            vals[f] = v;
            assert_eq!(form(&p, &INTS, &vals).is_some(), formed, "{f} {v:?}");
        }
        let mut vals;
        // max_len: the tuple's length counts the header (8) and the data
        let long = vec![b'z'; 300];
        vals = ok;
        vals[1] = Some(&long);
        let t = form(&p, &INTS, &vals).unwrap();
        let t_len = u32::from_ne_bytes(t[..4].try_into().unwrap()) as usize;
        assert!(form(&plan(pieces(), t_len), &INTS, &vals).is_some());
        assert!(form(&plan(pieces(), t_len - 1), &INTS, &vals).is_none());
        assert!(form(&plan(pieces(), 100), &INTS, &vals).is_none());
    }

    /// A head like the server's: 8 bytes in front, a 24-byte header with the infomask at 20
    /// (`HEAP_HASVARWIDTH` set, 2), `t_hoff` 24 at 22 and the bitmap from 23.
    fn null_plan(pieces: Vec<Piece>, nullable: Vec<bool>) -> VaryingPlan {
        let mut head = vec![0u8; 32];
        head[8 + 20..8 + 22].copy_from_slice(&2u16.to_ne_bytes());
        head[8 + 22] = 24;
        let header = NullHeader {
            bits_at: 8 + 23,
            hoff_at: 8 + 22,
            infomask_at: 8 + 20,
            has_null: 1,
            has_varwidth: 2,
        };
        let nfields = pieces.len();
        VaryingPlan::new(head, 8, vec![(0, 0)], pieces, 2032, nfields)
            .unwrap()
            .with_nulls(header, nullable)
            .unwrap()
    }

    /// NULLs in nullable columns: the bitmap (a bit per attribute with a value), `t_hoff`
    /// past it, `HEAP_HASNULL`, `HEAP_HASVARWIDTH` only with a text value; a NULL value takes
    /// no room. A NULL where the column does not allow it is the loader's.
    #[test]
    fn nulls_take_a_bitmap_and_no_room() {
        // int4, text, int8 (of `pieces`), the int8 NOT NULL
        let p = null_plan(pieces()[..3].to_vec(), vec![true, true, false]);
        let ints = [Some(1), None, Some(5)];
        let without = form(&p, &ints, &[Some(b"1"), Some(b"ab"), Some(b"5")]).unwrap();
        assert_eq!(&without[8 + 20..8 + 24], &[2, 0, 24, 0]);
        let t = form(&p, &[None, None, Some(5)], &[None, Some(b"ab"), Some(b"5")]).unwrap();
        assert_eq!(&t[8 + 20..8 + 24], &[3, 0, 24, 0b110]);
        assert_eq!(
            &t[32..48],
            &[
                3 << 1 | 1,
                b'a',
                b'b',
                0,
                0,
                0,
                0,
                0,
                5,
                0,
                0,
                0,
                0,
                0,
                0,
                0
            ]
        );
        assert_eq!(t.len(), 48);
        assert_eq!(u32::from_ne_bytes(t[..4].try_into().unwrap()), 40);
        // the text value NULL: no varlena left, so no HEAP_HASVARWIDTH
        let t = form(&p, &ints, &[Some(b"1"), None, Some(b"5")]).unwrap();
        assert_eq!(&t[8 + 20..8 + 24], &[1, 0, 24, 0b101]);
        assert_eq!(
            &t[32..48],
            &[1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0]
        );
        // not nullable; a DEFAULT marker
        assert!(form(&p, &[Some(1), None, None], &[Some(b"1"), Some(b"x"), None]).is_none());
        let mut out = Vec::new();
        let default = |f: usize| {
            if f == 1 {
                Field::Default
            } else {
                Field::Value(b"1")
            }
        };
        assert!(p.form(&ints, default, &mut out).is_none());
        assert!(out.is_empty());
        // nine attributes: a bitmap of two bytes, the data from 32
        let pieces = (0..9)
            .map(|f| Piece::Text {
                field: f,
                limit: Limit::Any,
                align: 4,
            })
            .collect();
        let p = null_plan(pieces, vec![true; 9]);
        let mut vals: Vec<Option<&[u8]>> = vec![Some(b"v"); 9];
        vals[8] = None;
        let t = form(&p, &[None; 9], &vals).unwrap();
        assert_eq!(&t[8 + 20..8 + 25], &[3, 0, 32, 0xff, 0]);
        assert_eq!(&t[8 + 25..8 + 32], &[0; 7]);
        assert_eq!(&t[8 + 32..8 + 34], &[2 << 1 | 1, b'v']);
        assert_eq!(
            u32::from_ne_bytes(t[..4].try_into().unwrap()) as usize,
            32 + 8 * 2
        );
    }

    /// date, timestamptz and numeric(12,2) values converted on the way: the int4 and int8
    /// at their alignment, the numeric body behind a one-byte header; a value in another
    /// spelling is the loader's.
    #[test]
    fn dates_timestamps_and_numerics_are_converted() {
        let p = plan(
            vec![
                Piece::Date { field: 0, align: 4 },
                Piece::Numeric {
                    field: 1,
                    typmod: Some(Typmod {
                        precision: 12,
                        scale: 2,
                    }),
                    align: 4,
                },
                Piece::Timestamp {
                    field: 2,
                    zone: Some(Zone::Explicit),
                    align: 8,
                },
                Piece::Timestamp {
                    field: 3,
                    zone: None,
                    align: 8,
                },
                Piece::Numeric {
                    field: 4,
                    typmod: None,
                    align: 4,
                },
            ],
            2032,
        );
        let vals: [Option<&[u8]>; 5] = [
            Some(b"2000-01-03"),
            Some(b"-1.5"),
            Some(b"2000-01-01 01:00:00+01"),
            Some(b"2000-01-01 00:00:01.5"),
            Some(b"7"),
        ];
        let t = form(&p, &[None; 5], &vals).unwrap();
        let mut data = Vec::new();
        data.extend_from_slice(&2i32.to_le_bytes()); // 0..4
        let h: u16 = 0x8000 | 0x2000 | (2 << 7);
        data.push(7 << 1 | 1); // 4: a body of 6 bytes
        data.extend_from_slice(&h.to_ne_bytes());
        data.extend_from_slice(&1u16.to_ne_bytes());
        data.extend_from_slice(&5000u16.to_ne_bytes()); // ..11
        data.resize(16, 0);
        data.extend_from_slice(&0i64.to_le_bytes()); // 16..24
        data.extend_from_slice(&1_500_000i64.to_le_bytes()); // 24..32
        data.push(5 << 1 | 1);
        data.extend_from_slice(&0x8000u16.to_ne_bytes());
        data.extend_from_slice(&7u16.to_ne_bytes());
        assert_eq!(t, chunk(&data));
        for (f, v) in [
            (0, &b"2000-02-30"[..]),
            (1, b"1e3"),
            (2, b"2000-01-01 00:00:00"),
            (4, b"NaN"),
        ] {
            let mut bad = vals;
            bad[f] = Some(v);
            assert!(form(&p, &[None; 5], &bad).is_none(), "{f}");
        }
    }

    /// The same values in COPY's binary format form the same tuple as in text; a numeric
    /// with a typmod makes no binary plan; out-of-range dates, wrong widths and invalid
    /// UTF-8 are the loader's.
    #[test]
    fn binary_values_form_the_tuples_text_values_form() {
        let pieces = vec![
            Piece::Date { field: 0, align: 4 },
            Piece::Timestamp {
                field: 1,
                zone: Some(Zone::Explicit),
                align: 8,
            },
            Piece::Fixed {
                field: 2,
                kind: Fixed::Float8,
                align: 8,
            },
            Piece::Fixed {
                field: 3,
                kind: Fixed::Bool,
                align: 1,
            },
            Piece::Fixed {
                field: 4,
                kind: Fixed::Uuid,
                align: 1,
            },
            Piece::Numeric {
                field: 5,
                typmod: None,
                align: 4,
            },
            Piece::Text {
                field: 6,
                limit: Limit::Any,
                align: 4,
            },
            Piece::Fixed {
                field: 7,
                kind: Fixed::Float4,
                align: 4,
            },
        ];
        let head = vec![0u8; 16];
        let text =
            VaryingPlan::new(head.clone(), 8, vec![(0, 0)], pieces.clone(), 2032, 8).unwrap();
        let bin = VaryingPlan::new(head, 8, vec![(0, 0)], pieces, 2032, 8)
            .unwrap()
            .with_binary()
            .unwrap();
        let tv: [&[u8]; 8] = [
            b"2000-01-03",
            b"2000-01-01 00:00:01+00",
            b"-2.5",
            b"t",
            b"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            b"-123.45",
            b"h\xc3\xa9",
            b"0.5",
        ];
        let mut numeric = Vec::new();
        for w in [2u16, 0, 0x4000, 2, 123, 4500] {
            numeric.extend_from_slice(&w.to_be_bytes());
        }
        let uuid = crate::uuid::parse_uuid(tv[4]).unwrap();
        let bv: Vec<Vec<u8>> = vec![
            2i32.to_be_bytes().to_vec(),
            1_000_000i64.to_be_bytes().to_vec(),
            (-2.5f64).to_be_bytes().to_vec(),
            vec![7],
            uuid.to_vec(),
            numeric,
            "hé".as_bytes().to_vec(),
            0.5f32.to_be_bytes().to_vec(),
        ];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        assert!(
            text.form(&[None; 8], |f| Field::Value(tv[f]), &mut a)
                .is_some()
        );
        assert!(
            bin.form(&[None; 8], |f| Field::Value(&bv[f]), &mut b)
                .is_some()
        );
        assert_eq!(a, b);
        for (f, v) in [
            (0, (i32::MAX - 1).to_be_bytes().to_vec()),
            (0, vec![0, 0, 2]),
            (1, vec![0; 7]),
            (2, vec![0; 4]),
            (3, vec![]),
            (4, vec![0; 15]),
            (6, vec![b'a', 0xff]),
            (6, vec![b'a', 0]),
        ] {
            let mut bad = bv.clone();
            bad[f] = v;
            assert!(
                bin.form(&[None; 8], |k| Field::Value(&bad[k]), &mut Vec::new())
                    .is_none(),
                "{f}"
            );
        }
        let typmod = Piece::Numeric {
            field: 0,
            typmod: Some(Typmod {
                precision: 5,
                scale: 2,
            }),
            align: 4,
        };
        assert!(
            VaryingPlan::new(vec![0; 16], 8, vec![], vec![typmod], 2032, 1)
                .unwrap()
                .with_binary()
                .is_none()
        );
    }

    /// bytea in the hex format: a short value behind a one-byte header, a long one (over 126
    /// bytes) behind a 4-byte header at its column's alignment, the same tuple from the
    /// binary format's bytes; other spellings, and a value past `max_len`, are the loader's.
    #[test]
    fn bytea_hex_values_are_decoded() {
        let pieces = vec![
            Piece::Bytea { field: 0, align: 4 },
            Piece::Int {
                field: 1,
                width: 2,
                align: 2,
            },
            Piece::Bytea { field: 2, align: 4 },
        ];
        let p = plan(pieces.clone(), 2032);
        let long: Vec<u8> = (0..200u32).map(|i| (i * 7) as u8).collect();
        let long_hex: String = long.iter().map(|b| format!("{b:02X}")).collect();
        let long_hex = format!("\\x{long_hex}");
        let vals: [Option<&[u8]>; 3] = [
            Some(b"\\xdeadBEEF00"),
            Some(b"3"),
            Some(long_hex.as_bytes()),
        ];
        let ints = [None, Some(3), None];
        let t = form(&p, &ints, &vals).unwrap();
        let mut data = vec![6 << 1 | 1, 0xde, 0xad, 0xbe, 0xef, 0]; // 0..6
        data.extend_from_slice(&3i16.to_le_bytes()); // 6..8
        data.extend_from_slice(&((204u32) << 2).to_ne_bytes()); // 8..12
        data.extend_from_slice(&long);
        assert_eq!(t, chunk(&data));
        // binary: the bytes as they are
        let bin = VaryingPlan::new(t[..16].to_vec(), 8, vec![(0, 0), (8, 2)], pieces, 2032, 5)
            .unwrap()
            .with_binary()
            .unwrap();
        let bv: [&[u8]; 3] = [&[0xde, 0xad, 0xbe, 0xef, 0], b"3", &long];
        let mut b = vec![0x55; 8];
        assert!(bin.form(&ints, |f| Field::Value(bv[f]), &mut b).is_some());
        let mut a = vec![0x55; 8];
        a.extend_from_slice(&t);
        assert_eq!(a, b);
        for v in [
            &b"\\xdead BEEF"[..],
            b"\\xdea",
            b"\\xdeag",
            b"abc",
            b"\\Xdead",
        ] {
            let mut bad = vals;
            bad[0] = Some(v);
            assert!(form(&p, &ints, &bad).is_none(), "{v:?}");
        }
        let small = plan(vec![Piece::Bytea { field: 0, align: 4 }], 100);
        assert!(form(&small, &[None], &[Some(long_hex.as_bytes())]).is_none());
        assert!(form(&small, &[None], &[Some(b"\\x00")]).is_some());
    }

    #[test]
    fn append_and_fill_are_extend_and_resize() {
        let src: Vec<u8> = (1..=200u8).collect();
        for before in 0..9 {
            for n in 0..=130 {
                let mut got: Vec<u8> = vec![0xAA; before];
                let mut want = got.clone();
                append(&mut got, &src[..n]);
                want.extend_from_slice(&src[..n]);
                assert_eq!(got, want, "append {n} after {before}");
                fill(&mut got, n, b' ');
                want.resize(want.len() + n, b' ');
                assert_eq!(got, want, "fill {n} after {before}");
            }
        }
    }

    #[test]
    fn plain_ascii_is_bytes_1_to_127() {
        for b in 0..=255u8 {
            let want = b != 0 && b.is_ascii();
            assert_eq!(plain_ascii(&[b]), want, "{b}");
            assert_eq!(plain_ascii(&[b'a', b, b'z']), want, "{b}");
            assert_eq!(
                plain_ascii(&[b'x'; 40].iter().copied().chain([b]).collect::<Vec<_>>()),
                want
            );
        }
        assert!(plain_ascii(b""));
    }

    #[test]
    fn plans_are_checked() {
        let new = |head: usize, len_at: usize, pieces: Vec<Piece>| {
            VaryingPlan::new(vec![0; head], 8, vec![(len_at, 0)], pieces, 2032, 5).is_some()
        };
        assert!(new(16, 12, pieces()));
        assert!(!new(12, 0, pieces()), "a head of a multiple of 8 bytes");
        assert!(!new(16, 13, pieces()), "the length inside the head");
        assert!(!new(16, 0, vec![]));
        assert!(!new(
            16,
            0,
            vec![Piece::Int {
                field: 5,
                width: 4,
                align: 4
            }]
        ));
        assert!(!new(
            16,
            0,
            vec![Piece::Int {
                field: 0,
                width: 3,
                align: 4
            }]
        ));
        assert!(!new(
            16,
            0,
            vec![Piece::Text {
                field: 0,
                limit: Limit::Any,
                align: 3
            }]
        ));
    }
}
