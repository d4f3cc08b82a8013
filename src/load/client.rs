//! `COPY … FROM STDIN` from a remote client: the COPY-in sub-protocol as the server speaks it
//! (`ReceiveCopyBegin` and `CopyGetData` in `copyfromparse.c`), feeding the reader thread.
//!
//! Only the backend thread may touch the client connection, so the backend reads the
//! protocol messages ([`ClientReader`]) and the pump (`pump.rs`) hands their data to the
//! reader thread through the bounded byte stream of `fastcopy_core::stream`; the reader
//! decodes it as it decodes a file.
//!
//! Per message, as the server: cancel interrupts held while one message is read (an ERROR
//! while a message is half read would lose protocol sync), the type byte, the message with
//! the type's length limit, then CopyData (`d`) is data, CopyDone (`c`) the end, CopyFail
//! (`f`) an ERROR with the client's text, Flush (`H`) and Sync (`S`) ignored, anything else
//! an ERROR. Every ERROR is raised after the message was read completely; the server's main
//! loop then ignores the CopyData/CopyDone/CopyFail messages still coming. Once the decoder
//! has seen the end of the data (`\.`), the rest of the stream is read and thrown away up to
//! CopyDone, as the server does.

use crate::error::raise;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::c_int;

/// `PQ_LARGE_MESSAGE_LIMIT` and `PQ_SMALL_MESSAGE_LIMIT` (libpq.h).
const LARGE_MESSAGE_LIMIT: c_int = 0x3fff_ffff - 1;
const SMALL_MESSAGE_LIMIT: c_int = 10000;

mod pq {
    use std::ffi::c_int;

    /// The head of `PQcommMethods` (libpq.h; the same members from 15 to 18): only `flush`
    /// is called.
    #[repr(C)]
    pub struct CommMethodsHead {
        pub comm_reset: Option<unsafe extern "C-unwind" fn()>,
        pub flush: Option<unsafe extern "C-unwind" fn() -> c_int>,
    }

    // libpq.h, not bound by pgrx. The declarations match the server's.
    unsafe extern "C-unwind" {
        pub fn pq_startmsgread();
        pub fn pq_endmsgread();
        pub fn pq_getbyte() -> c_int;
        pub fn pq_getbyte_if_available(c: *mut u8) -> c_int;
        pub fn pq_getmessage(s: pgrx::pg_sys::StringInfo, maxlen: c_int) -> c_int;
        pub static PqCommMethods: *const CommMethodsHead;
    }
}

/// `ReceiveCopyBegin`: CopyInResponse for `natts` columns in text or `binary` format (the
/// overall format and each column's), flushed.
pub fn send_copy_in_response(natts: usize, binary: bool) {
    // SAFETY: backend thread, the client is remote (the COPY hook takes STDIN only then); the
    // StringInfo is pq_beginmessage's to fill and pq_endmessage's to send and free.
    unsafe {
        let mut buf = pg_sys::StringInfoData {
            data: std::ptr::null_mut(),
            len: 0,
            maxlen: 0,
            cursor: 0,
        };
        pg_sys::pq_beginmessage(&mut buf, b'G' as std::ffi::c_char);
        let format = binary as u16;
        pg_sys::pq_sendbyte(&mut buf, format as _);
        pg_sys::pq_sendint16(&mut buf, natts as u16);
        for _ in 0..natts {
            pg_sys::pq_sendint16(&mut buf, format);
        }
        pg_sys::pq_endmessage(&mut buf);
        flush();
    }
}

/// `pq_flush()`.
fn flush() {
    // SAFETY: PqCommMethods is set for every backend with a client; its `flush` may raise
    // (a COMMERROR is only logged; a FATAL on a dead socket longjmps), so it goes through
    // pgrx's guard.
    unsafe {
        let methods = pq::PqCommMethods;
        if let Some(f) = (*methods).flush {
            pg_sys::ffi::pg_guard_ffi_boundary(|| f());
        }
    }
}

/// What one message was.
pub enum Message {
    /// CopyData: its bytes are in the reader's buffer ([`ClientReader::data`]).
    Data,
    /// CopyDone.
    Done,
    /// Nothing has arrived yet (only when asked not to block).
    None,
}

/// Reads the client's COPY-in messages (backend thread only).
pub struct ClientReader {
    msg: pg_sys::StringInfo,
}

impl ClientReader {
    pub fn new() -> ClientReader {
        // SAFETY: backend thread, in the load's memory context (freed with it).
        let msg = unsafe { pg_sys::makeStringInfo() };
        ClientReader { msg }
    }

    /// The bytes of the CopyData message just read (valid until the next read).
    pub fn data(&self) -> &[u8] {
        // SAFETY: `msg` holds the CopyData message just read, and nothing else touches it
        // until the next read.
        unsafe { message_bytes(self.msg) }
    }

    /// `CopyGetData` for one message: CopyData (its bytes in `msg`) or CopyDone; Flush and
    /// Sync are skipped; the rest are the server's errors, raised once the message was read
    /// completely. With `block` false, `Message::None` when no message has arrived (the
    /// walsender's `pq_getbyte_if_available`; once its type byte is in, the rest of a message
    /// is read blocking, as it is on its way).
    pub fn read_message(&mut self, block: bool) -> Message {
        loop {
            // SAFETY: backend thread. HOLD/RESUME_CANCEL_INTERRUPTS around one message as the
            // server; nothing between pq_startmsgread and the end of pq_getmessage (or
            // pq_endmsgread when nothing came) raises (a FATAL from the socket layer ends the
            // connection, through pgrx's guard).
            let (mtype, ok) = unsafe {
                pg_sys::QueryCancelHoldoffCount += 1;
                pg_sys::ffi::pg_guard_ffi_boundary(|| pq::pq_startmsgread());
                let mtype = if block {
                    pg_sys::ffi::pg_guard_ffi_boundary(|| pq::pq_getbyte())
                } else {
                    let mut c = 0u8;
                    match pg_sys::ffi::pg_guard_ffi_boundary(|| pq::pq_getbyte_if_available(&mut c))
                    {
                        0 => {
                            pg_sys::ffi::pg_guard_ffi_boundary(|| pq::pq_endmsgread());
                            pg_sys::QueryCancelHoldoffCount -= 1;
                            return Message::None;
                        }
                        1 => c as c_int,
                        _ => libc::EOF,
                    }
                };
                if mtype == libc::EOF {
                    (mtype, false)
                } else {
                    let limit = match mtype as u8 {
                        b'd' => LARGE_MESSAGE_LIMIT,
                        b'c' | b'f' | b'H' | b'S' => SMALL_MESSAGE_LIMIT,
                        _ => {
                            // The server raises here, in the middle of the message: its
                            // ERROR escalates to FATAL (protocol sync lost), as here.
                            pg_sys::QueryCancelHoldoffCount -= 1;
                            unexpected_message(mtype);
                        }
                    };
                    let msg = self.msg;
                    let r = pg_sys::ffi::pg_guard_ffi_boundary(|| pq::pq_getmessage(msg, limit));
                    (mtype, r != libc::EOF)
                }
            };
            if !ok {
                eof_error();
            }
            // SAFETY: RESUME_CANCEL_INTERRUPTS, pairing the increment above.
            unsafe { pg_sys::QueryCancelHoldoffCount -= 1 };
            match mtype as u8 {
                b'd' => return Message::Data,
                b'c' => return Message::Done,
                b'f' => {
                    // SAFETY: a complete CopyFail message; pq_getmsgstring reads its string.
                    let text = unsafe {
                        std::ffi::CStr::from_ptr(pg_sys::pq_getmsgstring(self.msg))
                            .to_string_lossy()
                            .into_owned()
                    };
                    raise(
                        PgSqlErrorCode::ERRCODE_QUERY_CANCELED,
                        format!("COPY from stdin failed: {text}"),
                    );
                }
                // Flush and Sync: ignored, as the server does for clients that send them
                _ => continue,
            }
        }
    }
}

/// The bytes of the message in `msg`.
///
/// # Safety
/// `msg` is a StringInfo pq_getmessage filled; the slice lives until it is reused.
unsafe fn message_bytes<'a>(msg: pg_sys::StringInfo) -> &'a [u8] {
    // SAFETY: as the function's contract: `data` holds `len` bytes.
    unsafe { std::slice::from_raw_parts((*msg).data as *const u8, (*msg).len as usize) }
}

/// The server's error for a lost connection during COPY.
fn eof_error() -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_CONNECTION_FAILURE,
        "unexpected EOF on client connection with an open transaction",
    )
}

fn unexpected_message(mtype: c_int) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_PROTOCOL_VIOLATION,
        format!(
            "unexpected message type 0x{:02X} during COPY from stdin",
            mtype
        ),
    )
}
