//! Where a load's bytes come from: one [`Source`] per kind, opened into an [`Input`] that the
//! decoder reads, with its progress type and (when known) total size.
//!
//! Which thread touches what: a file or a value in memory can be read by any thread, so the
//! decoder reads it on the reader thread. A source that only the backend may read (the COPY
//! protocol's `pq_getmessage` family, or a conversion by the server's encoding functions) is a
//! new arm here whose `Input` is a `fastcopy_core::stream::StreamReader`: the backend thread
//! pumps it (`StreamWriter::try_send`, never blocking) between the row blocks it loads, and the
//! reader thread decodes from it as from a file. PostgreSQL functions are never called from
//! the reader thread: they are not thread-safe, and an ERROR there could not unwind into
//! PostgreSQL's error handling.

use super::progress::SourceKind;
use crate::error::raise;
use pgrx::prelude::*;
use std::io::Read;

/// Where the rows come from.
pub enum Source<'a> {
    /// A server file (`fastcopy.load`); privileges are checked by the caller.
    File(&'a str),
    /// The value given to `fastcopy.load_data`.
    Value(&'a [u8]),
}

/// An opened source.
pub struct Input<'a> {
    pub read: Box<dyn Read + Send + 'a>,
    pub kind: SourceKind,
    /// Size in bytes, when known before reading.
    pub total: Option<u64>,
}

impl<'a> Source<'a> {
    pub fn open(self) -> Input<'a> {
        match self {
            Source::File(path) => {
                let file = open_file(path);
                let total = file.metadata().ok().map(|m| m.len());
                Input {
                    read: Box::new(file),
                    kind: SourceKind::File,
                    total,
                }
            }
            Source::Value(bytes) => Input {
                read: Box::new(bytes),
                kind: SourceKind::Callback,
                total: Some(bytes.len() as u64),
            },
        }
    }
}

/// Opens a server file for reading with COPY's errors.
fn open_file(path: &str) -> std::fs::File {
    let e = match std::fs::File::open(path) {
        Ok(f) if f.metadata().map(|m| m.is_dir()).unwrap_or(false) => raise(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!("\"{path}\" is a directory"),
        ),
        Ok(f) => return f,
        Err(e) => e,
    };
    let (code, reason) = match e.kind() {
        std::io::ErrorKind::NotFound => (
            PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
            "No such file or directory".to_string(),
        ),
        std::io::ErrorKind::PermissionDenied => (
            PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
            "Permission denied".to_string(),
        ),
        _ => (PgSqlErrorCode::ERRCODE_IO_ERROR, e.to_string()),
    };
    raise(
        code,
        format!("could not open file \"{path}\" for reading: {reason}"),
    )
}
