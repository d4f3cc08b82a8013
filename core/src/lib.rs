//! The PostgreSQL-free core of fastcopy.
//!
//! Nothing in this crate calls into PostgreSQL, allocates with palloc or knows pgrx types: it is
//! what `cargo test`, the property tests and the cargo-fuzz targets exercise without a server,
//! and what may run on a second thread while the backend inserts.
//!
//! - [`int`]: integer text input with the grammars of PostgreSQL 15 and 16+.
//! - [`decode`]: the [`decode::Decoder`] trait every data format implements.
//! - [`binary`]: the COPY binary format's decoder.
//! - [`bytea`]: `bytea` values in the hex format without whitespace, as `byteain` stores them.
//! - [`boolean`]: `bool` values in every spelling `boolin` takes without whitespace.
//! - [`datetime`]: `date`, `timestamp` and `timestamptz` in the ISO spelling pg_dump writes.
//! - [`float`]: `float4` and `float8` in plain decimal and exponent spellings, bit for bit.
//! - [`copyin`]: the COPY-in protocol's messages, read from the client's socket.
//! - [`chunks`]: the chunked, verified input buffer every format reads from.
//! - [`input`]: the COPY text-format and CSV row splitters.
//! - [`mb`]: the checks of the multibyte server encodings other than UTF-8 (EUC_*, MULE).
//! - [`numeric`]: `numeric` values written as plain decimal numbers, as numeric_in stores them.
//! - [`pipeline`]: blocks of rows, and the loop of a reader thread that fills them.
//! - [`uuid`]: `uuid` values in every spelling `uuid_in` takes.
//! - [`stream`]: a bounded byte stream from the backend thread to the reader thread.
//! - [`varying`]: tuples of integers and text values, whose layout varies from row to row.
//! - [`sqlstate`]: the SQLSTATEs of the errors computed here, as a typed value.

pub mod binary;
pub mod boolean;
pub mod bytea;
pub mod chunks;
pub mod copyin;
pub mod datetime;
pub mod decode;
pub mod field;
pub mod float;
pub mod input;
pub mod int;
pub mod mb;
pub mod numeric;
pub mod pipeline;
pub mod plan;
pub mod sqlstate;
pub mod stream;
pub mod uuid;
pub mod varying;
