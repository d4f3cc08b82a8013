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

use super::client::{self, ClientReader};
use super::encoding;
use super::pump::{Origin, Pump};
use crate::error::{raise, raise_detail_hint, raise_hint};
use crate::load::progress::SourceKind;
use pgrx::prelude::*;
use std::io::Read;

/// Where the rows come from.
pub enum Source<'a> {
    /// A server file (`fastcopy.load`, `COPY … FROM 'file'`); privileges are checked by the
    /// caller.
    File(&'a str),
    /// The bytea value given to `fastcopy.load_data`: bytes in the input encoding, as COPY
    /// FROM STDIN's.
    Value(&'a [u8]),
    /// The text value given to `fastcopy.load_data`: already in the database encoding.
    Text(&'a [u8]),
    /// `COPY … FROM STDIN` from a remote client (`client.rs`).
    Client,
}

/// An opened source.
pub struct Input<'a> {
    pub read: Box<dyn Read + Send + 'a>,
    pub kind: SourceKind,
    /// Size in bytes, when known before reading.
    pub total: Option<u64>,
    /// The backend's side of a stream it feeds (a client's data, converted input), pumped
    /// between row blocks.
    pub pump: Option<Pump<'a>>,
}

impl<'a> Source<'a> {
    /// What the rejects table says the rows came from: the file's path, `STDIN`, or
    /// `load_data` for a value.
    pub fn describe(&self) -> String {
        match self {
            Source::File(path) => path.to_string(),
            Source::Value(_) | Source::Text(_) => "load_data".into(),
            Source::Client => "STDIN".into(),
        }
    }

    /// Opens the source for a load of `ncols` columns, where COPY's `BeginCopyFrom` does
    /// (after the options and columns are checked; a client is told to start sending, in
    /// `binary` or text format): the whole feed of the reader, the input in the database
    /// encoding (converted by `plan` where the server must) and whether a reader thread
    /// decodes it ([`Input::into_feed`]).
    pub fn open(self, ncols: usize, binary: bool, plan: &encoding::Plan) -> (Input<'a>, bool) {
        let input = match self {
            Source::File(path) => {
                let file = open_file(path);
                let total = file.metadata().ok().map(|m| m.len());
                Input {
                    read: Box::new(file),
                    kind: SourceKind::File,
                    total,
                    pump: None,
                }
            }
            Source::Value(bytes) | Source::Text(bytes) => Input {
                read: Box::new(bytes),
                kind: SourceKind::Callback,
                total: Some(bytes.len() as u64),
                pump: None,
            },
            Source::Client => {
                let (pump, read) = Pump::new(Origin::Client(ClientReader::new()), None);
                client::send_copy_in_response(ncols, binary);
                Input {
                    read: Box::new(read),
                    kind: SourceKind::Pipe,
                    total: None,
                    pump: Some(pump),
                }
            }
        };
        input.into_feed(plan)
    }
}

impl Source<'_> {
    /// What `DoCopy` checks first: reading a server file needs superuser or
    /// pg_read_server_files (each version's message).
    pub fn check_privileges(&self) {
        if !matches!(self, Source::File(_)) {
            return;
        }
        // SAFETY: catalog lookups on the backend thread.
        let allowed = unsafe {
            pg_sys::superuser()
                || pg_sys::has_privs_of_role(
                    pg_sys::GetUserId(),
                    pg_sys::Oid::from(pg_sys::ROLE_PG_READ_SERVER_FILES),
                )
        };
        if allowed {
            return;
        }
        let code = PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE;
        let hint =
            "Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone.";
        if crate::compat::server_major() >= 16 {
            raise_detail_hint(
                code,
                "permission denied to COPY from a file",
                "Only roles with privileges of the \"pg_read_server_files\" role may COPY from a file.",
                hint,
            )
        } else {
            raise_hint(
                code,
                "must be superuser or have privileges of the pg_read_server_files role to COPY from a file",
                hint,
            )
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
    let msg = format!("could not open file \"{path}\" for reading: {reason}");
    match e.kind() {
        // BeginCopyFrom's hint for ENOENT and EACCES
        std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => raise_hint(
            code,
            msg,
            "COPY FROM instructs the PostgreSQL server process to read a file. You may want a client-side facility such as psql's \\copy.",
        ),
        _ => raise(code, msg),
    }
}

/// Inputs smaller than this are decoded on the backend thread: a thread would not pay.
const THREAD_MIN_BYTES: u64 = 256 * 1024;

impl<'a> Input<'a> {
    /// The whole feed of the reader: whether a reader thread decodes it (a stream, or input
    /// of [`THREAD_MIN_BYTES`] or more), and the input in the database encoding. Input that
    /// needs the server's conversion (`plan`) goes through it on the backend thread: a client
    /// stream's pump converts what it pumps; a file or value read by a reader thread is
    /// pumped (and converted) by the backend instead; a small one, decoded on the backend,
    /// is converted at once, its conversion error (if any) where its bytes stop.
    fn into_feed(mut self, plan: &encoding::Plan) -> (Input<'a>, bool) {
        let threaded = self.pump.is_some() || self.total.is_none_or(|t| t >= THREAD_MIN_BYTES);
        let Some(conversion) = plan.convert else {
            return (self, threaded);
        };
        let transcoder = encoding::Transcoder::new(conversion);
        if let Some(pump) = &mut self.pump {
            pump.convert_with(transcoder);
            return (self, threaded);
        }
        let raw = std::mem::replace(&mut self.read, Box::new(std::io::empty()));
        if threaded {
            let (pump, read) = Pump::new(Origin::Read(raw), Some(transcoder));
            self.read = Box::new(read);
            self.pump = Some(pump);
        } else {
            self.read = Box::new(encoding::convert_all(raw, transcoder));
        }
        (self, threaded)
    }
}
