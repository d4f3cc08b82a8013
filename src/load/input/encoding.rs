//! The input's encoding, as COPY decides and handles it.
//!
//! The input is in the ENCODING option's encoding, else in `client_encoding` (for a file as
//! for STDIN); the database encoding is the server's. As `BeginCopyFrom` decides it:
//! - no conversion when the two are the same or either is SQL_ASCII: the reader checks the
//!   bytes as `pg_verify_mbstr` of the *input* encoding does (UTF-8 rules, or for SQL_ASCII and
//!   the single-byte encodings: no NUL byte);
//! - else the server's default conversion (`FindDefaultConversionProc`; COPY's 42883 when
//!   there is none) runs on the backend thread ([`Transcoder`], `CopyConvertBuf`'s way: as much
//!   as converts, a character split between two reads kept for the next, and the server's
//!   own error, 22021 or 22P05, once the reader reaches the bytes that do not convert), and the
//!   reader gets bytes in the database encoding, checked.
//!
//! Text fields that de-escaping gave high-bit bytes or NUL are checked in the *database*
//! encoding (`pg_verifymbstr`), by the reader. The reader knows every encoding the server has
//! (UTF-8, the NUL-free single-byte ones, and the other multibyte ones in
//! `fastcopy_core::mb`, client-only ones included: SJIS into a SQL_ASCII database is checked
//! as SJIS and scanned byte by byte, as COPY does); an encoding it did not know would be
//! refused with 0A000.

use crate::compat;
use crate::error::raise;
use fastcopy_core::input::Encoding;
use fastcopy_core::sqlstate::SqlState;
use fastcopy_core::stream::ServerError;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::c_int;

/// How one load reads its input.
pub struct Plan {
    /// `None`: the backend converts the input ([`Plan::convert`]); else how the reader checks
    /// it.
    pub input: Option<Encoding>,
    /// What de-escaped text fields are checked against.
    pub server: Encoding,
    /// The conversion, when one is needed.
    pub convert: Option<Conversion>,
}

/// The server's conversion of one load.
#[derive(Clone, Copy)]
pub struct Conversion {
    proc_: pg_sys::Oid,
    from: c_int,
    to: c_int,
}

/// The input encoding of a load (the ENCODING option, else client_encoding) and the
/// database's, as ids.
pub fn encodings(option: Option<c_int>) -> (c_int, c_int) {
    // SAFETY: backend thread; these read the session's settings.
    unsafe {
        (
            option.unwrap_or_else(|| pg_sys::pg_get_client_encoding()),
            pg_sys::GetDatabaseEncoding(),
        )
    }
}

/// What fastcopy cannot read in these encodings (COPY can), e.g. "a database in encoding
/// EUC_JP".
pub fn unsupported(input: c_int, database: c_int) -> Option<String> {
    let sql_ascii = pg_sys::pg_enc::PG_SQL_ASCII as c_int;
    if check_of(database).is_none() {
        return Some(format!(
            "a database in encoding {}",
            compat::encoding_name(database)
        ));
    }
    let converts = input != database && input != sql_ascii && database != sql_ascii;
    if !converts && check_of(input).is_none() {
        return Some(format!(
            "input in encoding {} into a database in encoding {}",
            compat::encoding_name(input),
            compat::encoding_name(database)
        ));
    }
    None
}

/// How the reader checks bytes in `encoding`, if it can.
fn check_of(encoding: c_int) -> Option<Encoding> {
    let name = compat::encoding_name(encoding);
    if encoding == pg_sys::pg_enc::PG_UTF8 as c_int {
        return Some(Encoding::utf8());
    }
    // SAFETY: a lookup in the encoding table.
    if unsafe { pg_sys::pg_encoding_max_length(encoding) } == 1 {
        return Some(Encoding::nul_free(&name));
    }
    use fastcopy_core::mb::MbEncoding;
    use pg_sys::pg_enc::*;
    let mb = match encoding as u32 {
        PG_EUC_JP | PG_EUC_JIS_2004 => MbEncoding::EucJp,
        PG_EUC_CN => MbEncoding::EucCn,
        PG_EUC_KR => MbEncoding::EucKr,
        PG_EUC_TW => MbEncoding::EucTw,
        PG_MULE_INTERNAL => MbEncoding::MuleInternal,
        // client-only: input that goes unconverted into a SQL_ASCII database
        PG_SJIS | PG_SHIFT_JIS_2004 => MbEncoding::Sjis,
        PG_BIG5 => MbEncoding::Big5,
        PG_GBK => MbEncoding::Gbk,
        PG_UHC => MbEncoding::Uhc,
        PG_GB18030 => MbEncoding::Gb18030,
        PG_JOHAB => MbEncoding::Johab,
        _ => return None,
    };
    Some(Encoding::multibyte(&name, mb))
}

/// The plan for a load whose ENCODING option is `option` (an id), where `BeginCopyFrom` looks
/// up the conversion: COPY's error when there is no default conversion, 0A000 for what
/// fastcopy does not read. `binary` data is never converted or checked as a whole (its text
/// fields are, by their receive functions), but the conversion is looked up all the same, as
/// COPY does.
pub fn plan(option: Option<c_int>, binary: bool) -> Plan {
    let (input, database) = encodings(option);
    if !binary && let Some(what) = unsupported(input, database) {
        raise(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("fastcopy does not support {what}"),
        );
    }
    let server =
        check_of(database).unwrap_or_else(|| Encoding::nul_free(&compat::encoding_name(database)));
    let sql_ascii = pg_sys::pg_enc::PG_SQL_ASCII as c_int;
    if input == database || input == sql_ascii || database == sql_ascii {
        return Plan {
            input: if binary { None } else { check_of(input) },
            server,
            convert: None,
        };
    }
    // SAFETY: a catalog lookup on the backend thread.
    let proc_ = unsafe { pg_sys::FindDefaultConversionProc(input, database) };
    if proc_ == pg_sys::InvalidOid {
        raise(
            PgSqlErrorCode::ERRCODE_UNDEFINED_FUNCTION,
            format!(
                "default conversion function for encoding \"{}\" to \"{}\" does not exist",
                compat::encoding_name(input),
                compat::encoding_name(database)
            ),
        );
    }
    Plan {
        input: None,
        server,
        convert: (!binary).then_some(Conversion {
            proc_,
            from: input,
            to: database,
        }),
    }
}

/// Input bytes that may not convert yet: fewer than this at the end of what was read may be
/// the start of a character (`MAX_CONVERSION_INPUT_LENGTH`).
const MAX_CONVERSION_INPUT_LENGTH: usize = 16;
/// `MAX_CONVERSION_GROWTH`: converted bytes per input byte, at most.
const MAX_CONVERSION_GROWTH: usize = 4;

/// The server's conversion of a stream of input chunks (backend thread only).
pub struct Transcoder {
    conversion: Conversion,
    /// Input bytes not converted yet (a character split between two chunks).
    leftover: Vec<u8>,
}

impl Transcoder {
    pub fn new(conversion: Conversion) -> Transcoder {
        Transcoder {
            conversion,
            leftover: Vec::new(),
        }
    }

    /// Converts `raw` after what was left over into `out` (appended). `at_end`: no more
    /// input comes. On bytes that do not convert, everything before them is in `out` and
    /// the server's error for them is returned, as `CopyConvertBuf` then
    /// `CopyConversionError` find it.
    pub fn convert(
        &mut self,
        raw: &[u8],
        at_end: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), ServerError> {
        self.leftover.extend_from_slice(raw);
        let mut at = 0;
        while at < self.leftover.len() {
            let n = self.convert_some(at, out);
            at += n;
            if n == 0 {
                let rest = self.leftover.len() - at;
                if !at_end && rest < MAX_CONVERSION_INPUT_LENGTH {
                    break; // may be a character whose end has not come yet
                }
                let error = self.error_at(at);
                self.leftover.clear();
                return Err(error);
            }
        }
        self.leftover.drain(..at);
        Ok(())
    }

    /// `pg_do_encoding_conversion_buf(..., noError)` on `leftover[at..]` (in pieces that keep
    /// the output buffer small): the input bytes converted.
    fn convert_some(&mut self, at: usize, out: &mut Vec<u8>) -> usize {
        let src = &mut self.leftover[at..];
        let len = src.len().min(1 << 20);
        let start = out.len();
        out.resize(start + len * MAX_CONVERSION_GROWTH + 1, 0);
        let c = self.conversion;
        // SAFETY: backend thread; `src` holds `len` bytes and the output room is what the
        // server asks for (`srclen * MAX_CONVERSION_GROWTH + 1`). With noError the function
        // does not raise for bad input; it writes a NUL-terminated result.
        let n = unsafe {
            pg_sys::pg_do_encoding_conversion_buf(
                c.proc_,
                c.from,
                c.to,
                src.as_mut_ptr(),
                len as c_int,
                out.as_mut_ptr().add(start),
                (len * MAX_CONVERSION_GROWTH + 1) as c_int,
                true,
            )
        } as usize;
        let written = out[start..].iter().position(|&b| b == 0).unwrap_or(0);
        out.truncate(start + written);
        n
    }

    /// The server's error for the bytes at `leftover[at..]`: the conversion again, without
    /// noError, as `CopyConversionError` does; the ERROR caught and kept for the reader.
    fn error_at(&mut self, at: usize) -> ServerError {
        let c = self.conversion;
        let mut src = self.leftover[at..].to_vec();
        let mut dst = vec![0u8; src.len() * MAX_CONVERSION_GROWTH + 1];
        let (sp, sl, dp, dl) = (src.as_mut_ptr(), src.len(), dst.as_mut_ptr(), dst.len());
        let caught = PgTryBuilder::new(|| {
            // SAFETY: as in `convert_some`, on `src`/`dst`, alive for the call; without noError
            // the function raises for the first bytes that do not convert, which PgTryBuilder
            // catches. Catching it without a subtransaction is sound here: a conversion
            // function takes no locks, pins no buffers and opens nothing, so there is no
            // resource for an abort to release (the error state is flushed by the catch).
            unsafe {
                pg_sys::pg_do_encoding_conversion_buf(
                    c.proc_,
                    c.from,
                    c.to,
                    sp,
                    sl as c_int,
                    dp,
                    dl as c_int,
                    false,
                );
            }
            None
        })
        .catch_others(|e| match e {
            pg_sys::panic::CaughtError::PostgresError(r)
            | pg_sys::panic::CaughtError::ErrorReport(r) => {
                Some((r.sql_error_code(), r.message().to_string()))
            }
            other => other.rethrow(),
        })
        .execute();
        // the load raises this error again where the reader reaches the bytes, with the
        // context of that moment: not the copy `error::exact` made now
        crate::error::clear_captured();
        let (code, message) = caught.unwrap_or((
            PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
            "encoding conversion failed without error".to_string(),
        ));
        ServerError {
            sqlstate: SqlState::from_packed(code as i32).unwrap_or(SqlState::INTERNAL_ERROR),
            message,
        }
    }
}

/// A small input converted at once: its bytes in the database encoding, then the conversion
/// (or read) error where they stop (if any), as a reader sees a stream.
pub fn convert_all(mut raw: Box<dyn std::io::Read + '_>, mut t: Transcoder) -> Converted {
    let mut bytes = Vec::new();
    // a read error comes after what was read, as from a stream
    let failed = raw.read_to_end(&mut bytes).err();
    let mut out = Vec::new();
    let error = match t.convert(&bytes, true, &mut out) {
        Err(e) => Some(e),
        Ok(()) => failed.as_ref().map(fastcopy_core::input::read_failure),
    };
    Converted {
        data: out,
        at: 0,
        error,
    }
}

/// See [`convert_all`].
pub struct Converted {
    data: Vec<u8>,
    at: usize,
    error: Option<ServerError>,
}

impl std::io::Read for Converted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.data.len() {
            return match &self.error {
                Some(e) => Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    e.clone(),
                )),
                None => Ok(0),
            };
        }
        let n = buf.len().min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
