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
//! (`f`) an ERROR with the client's text (raised after the data before it was loaded, as
//! COPY reaches it only then), Flush (`H`) and Sync (`S`) ignored, anything else
//! an ERROR. Every ERROR is raised after the message was read completely; the server's main
//! loop then ignores the CopyData/CopyDone/CopyFail messages still coming. Once the decoder
//! has seen the end of the data (`\.`), the rest of the stream is read and thrown away up to
//! CopyDone, as the server does.

use crate::error::raise;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::c_int;

/// `PQ_LARGE_MESSAGE_LIMIT` and `PQ_SMALL_MESSAGE_LIMIT` (libpq.h).
const LARGE_MESSAGE_LIMIT: c_int = fastcopy_core::copyin::LARGE_MESSAGE_LIMIT as c_int;
const SMALL_MESSAGE_LIMIT: c_int = fastcopy_core::copyin::SMALL_MESSAGE_LIMIT as c_int;

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
        pub fn pq_peekbyte() -> c_int;
        pub fn pq_getmessage(s: pgrx::pg_sys::StringInfo, maxlen: c_int) -> c_int;
        // `char *` in 15 and 16, `void *` from 17: the same call
        pub fn pq_getbytes(b: *mut u8, len: usize) -> c_int;
        pub static PqCommMethods: *const CommMethodsHead;
    }

    // Whether bytes are in the receive buffer: 15 and 16 say yes or no, 17 renamed it and
    // gives the count.
    #[cfg(any(feature = "pg15", feature = "pg16"))]
    unsafe extern "C-unwind" {
        fn pq_buffer_has_data() -> bool;
    }
    #[cfg(not(any(feature = "pg15", feature = "pg16")))]
    unsafe extern "C-unwind" {
        fn pq_buffer_remaining_data() -> isize;
    }

    /// Bytes of the client's are in the server's receive buffer (reading them does not wait).
    ///
    /// # Safety
    /// Backend thread, with a client connection.
    pub unsafe fn buffered() -> bool {
        // SAFETY: as the function's contract; the call only compares two integers.
        #[cfg(any(feature = "pg15", feature = "pg16"))]
        unsafe {
            pq_buffer_has_data()
        }
        #[cfg(not(any(feature = "pg15", feature = "pg16")))]
        // SAFETY: as the function's contract; the call only subtracts two integers.
        unsafe {
            pq_buffer_remaining_data() > 0
        }
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
    /// CopyData: its bytes were appended to the buffer [`ClientReader::read_message`] was
    /// given (or thrown away without one).
    Data,
    /// CopyDone.
    Done,
    /// CopyFail, with the client's text: the server's ERROR is [`copy_failed`] (the pump
    /// raises it where COPY would, after the data before it).
    Fail(String),
    /// A message COPY does not expect, its type byte peeked, not read (only when asked not
    /// to block): the server's ERROR is raised by [`raise_unexpected_message`], where COPY
    /// would reach the message, after the data before it.
    Unexpected(c_int),
    /// The connection ended (or sent a message length the protocol does not allow): the
    /// server's ERROR is [`connection_lost`], which the pump raises where COPY would, after
    /// the data before it. The message is left half read and cancel interrupts held, as the
    /// server's `CopyGetData` raises its ERROR: nothing reads the connection again, and the
    /// ERROR ends it (protocol synchronization was lost).
    Eof,
    /// Nothing has arrived yet (only when asked not to block).
    None,
}

/// Reads the client's COPY-in messages (backend thread only).
pub struct ClientReader {
    msg: pg_sys::StringInfo,
}

thread_local! {
    /// The type byte of a message [`Message::Unexpected`] left unread, until the ERROR about
    /// it is raised (backend thread).
    static UNREAD: std::cell::Cell<Option<c_int>> = const { std::cell::Cell::new(None) };
}

impl ClientReader {
    pub fn new() -> ClientReader {
        UNREAD.set(None);
        // SAFETY: backend thread, in the load's memory context (freed with it).
        let msg = unsafe { pg_sys::makeStringInfo() };
        ClientReader { msg }
    }

    /// `CopyGetData` for one message: CopyData (its bytes appended to `into`, read there
    /// straight from the server's receive buffer, or thrown away without `into`) or CopyDone;
    /// Flush and Sync are skipped; the rest are the server's errors, raised once the message
    /// was read completely. With `block` false, `Message::None` when no message has arrived
    /// (nothing in the receive buffer or on the socket), and the type byte is peeked first: a
    /// type COPY does not expect is left unread ([`Message::Unexpected`]). Once a message has
    /// begun to arrive, the rest of it is read blocking, as it is on its way.
    pub fn read_message(&mut self, block: bool, mut into: Option<&mut Vec<u8>>) -> Message {
        loop {
            let msg = self.msg;
            let buf = into.as_deref_mut().map(std::ptr::from_mut);
            // SAFETY: backend thread, with a remote client (the hook takes STDIN only then).
            // One guard around the whole message (a client that sends a row per message makes
            // this call once per row): the closure holds nothing that needs dropping, so a
            // jump out of the server's code leaks nothing; `buf` is `into`'s vector, alive
            // and not otherwise borrowed during the call.
            let raw = unsafe {
                pg_sys::ffi::pg_guard_ffi_boundary(|| read_one(msg, block, buf.map(|b| &mut *b)))
            };
            let mtype = match raw {
                Raw::Nothing => return Message::None,
                Raw::Peeked(mtype) => return Message::Unexpected(mtype),
                Raw::Refused(mtype) => unexpected_message(mtype),
                Raw::Eof(log) => {
                    if let Some(line) = log {
                        log_protocol_violation(line);
                    }
                    return Message::Eof;
                }
                Raw::Read(mtype) => mtype,
            };
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
                    return Message::Fail(text);
                }
                // Flush and Sync: ignored, as the server does for clients that send them
                _ => continue,
            }
        }
    }
}

/// What [`read_one`] did: plain values only (it runs inside one FFI guard).
#[derive(Clone, Copy)]
enum Raw {
    /// Without blocking: nothing has arrived.
    Nothing,
    /// Without blocking: a type COPY does not expect, peeked and left unread.
    Peeked(c_int),
    /// A type COPY does not expect, read: the server raises here, in the middle of the
    /// message (its ERROR escalates to FATAL: protocol sync is lost).
    Refused(c_int),
    /// A message of this type was read completely.
    Read(c_int),
    /// The connection ended (or sent a length the protocol does not allow), with the line
    /// for the server log `pq_getmessage` would write, if any; cancel interrupts still held
    /// and the message half read, as the server raises its ERROR.
    Eof(Option<&'static str>),
}

/// One message of `CopyGetData`: cancel interrupts held while it is read (an ERROR while a
/// message is half read would lose protocol sync, so nothing here raises one), its type,
/// then the message with the type's length limit: a CopyData body appended to `into` (read
/// there straight from the receive buffer), any other message into `msg`. Without `block`,
/// nothing is read unless something has arrived (then the rest is read blocking, as it is on
/// its way), and a type COPY does not expect is only peeked.
///
/// # Safety
/// Backend thread, with a remote client; inside an FFI guard (the server's calls may jump
/// out on a FATAL); `msg` is the reader's StringInfo.
unsafe fn read_one(msg: pg_sys::StringInfo, block: bool, into: Option<&mut Vec<u8>>) -> Raw {
    // SAFETY: as the function's contract; HOLD_CANCEL_INTERRUPTS, released (RESUME) on every
    // way out but an error, as the server; pq_peekbyte waits only when nothing is buffered and
    // the socket is not readable, which is checked just before.
    unsafe {
        pg_sys::QueryCancelHoldoffCount += 1;
        pq::pq_startmsgread();
        let mtype = if block {
            pq::pq_getbyte()
        } else {
            if !pq::buffered() && !socket_readable() {
                pq::pq_endmsgread();
                pg_sys::QueryCancelHoldoffCount -= 1;
                return Raw::Nothing;
            }
            let peeked = pq::pq_peekbyte();
            if peeked != libc::EOF && !expected(peeked) {
                pq::pq_endmsgread();
                pg_sys::QueryCancelHoldoffCount -= 1;
                return Raw::Peeked(peeked);
            }
            if peeked == libc::EOF {
                peeked
            } else {
                pq::pq_getbyte()
            }
        };
        if mtype == libc::EOF {
            return Raw::Eof(None);
        }
        let limit = match mtype as u8 {
            b'd' => LARGE_MESSAGE_LIMIT,
            b'c' | b'f' | b'H' | b'S' => SMALL_MESSAGE_LIMIT,
            _ => {
                pg_sys::QueryCancelHoldoffCount -= 1;
                return Raw::Refused(mtype);
            }
        };
        match into {
            Some(buf) if mtype as u8 == b'd' => {
                if let Err(line) = read_body(buf, limit) {
                    return Raw::Eof(Some(line));
                }
            }
            _ => {
                if pq::pq_getmessage(msg, limit) == libc::EOF {
                    return Raw::Eof(None);
                }
            }
        }
        pg_sys::QueryCancelHoldoffCount -= 1;
        Raw::Read(mtype)
    }
}

/// `pq_getmessage` for a CopyData message, its body appended to `buf` instead of copied
/// into a StringInfo first (the pump hands `buf` to the reader: one copy of each byte fewer).
/// The same checks as `pq_getmessage`; `Err` with the line it writes to the server log when
/// the connection ended (the caller raises the server's ERROR). Called after the type byte.
///
/// # Safety
/// As [`read_one`], which calls it.
unsafe fn read_body(buf: &mut Vec<u8>, limit: c_int) -> Result<(), &'static str> {
    let mut word = [0u8; 4];
    // SAFETY: pq_getbytes fills the 4 bytes of `word`.
    if unsafe { pq::pq_getbytes(word.as_mut_ptr(), 4) } == libc::EOF {
        return Err("unexpected EOF within message length word");
    }
    let len = i32::from_be_bytes(word);
    if len < 4 || len > limit {
        return Err("invalid message length");
    }
    let body = (len - 4) as usize;
    // Reserving cannot fail short of aborting the process (as the server's palloc of the
    // same size would fail instead): nothing raises in the middle of the message.
    buf.reserve(body);
    let at = buf.len();
    // SAFETY: `reserve` made room for `body` bytes after `at`; pq_getbytes writes exactly
    // `body` bytes there or returns EOF (then the length is left as it was).
    unsafe {
        if pq::pq_getbytes(buf.as_mut_ptr().add(at), body) == libc::EOF {
            return Err("incomplete message from client");
        }
        buf.set_len(at + body);
        // the message is read: what pq_getmessage does last
        pq::pq_endmsgread();
    }
    Ok(())
}

/// `ereport(COMMERROR, …)`: a protocol violation written to the server log only.
pub fn log_protocol_violation(message: &str) {
    ereport!(
        PgLogLevel::LOG_SERVER_ONLY,
        PgSqlErrorCode::ERRCODE_PROTOCOL_VIOLATION,
        message.to_string()
    );
}

/// The message types of the COPY-in sub-protocol.
fn expected(mtype: c_int) -> bool {
    fastcopy_core::copyin::expected(mtype as u8)
}

/// Nothing of the client's is in the server's receive buffer (the socket thread reads the
/// socket itself only then).
pub fn receive_buffer_empty() -> bool {
    // SAFETY: backend thread, with a client connection (the hook takes STDIN only then).
    !unsafe { pq::buffered() }
}

/// Where the socket thread met the connection's end: the server's state as `read_one` leaves
/// it there (a message begun, cancel interrupts held), so that the ERROR ends the connection
/// as the server's does (its main loop finds a message half read: protocol sync is lost).
pub fn leave_message_half_read() {
    // SAFETY: backend thread, with a client connection; nothing is being read (the socket
    // thread has stopped), so pq_startmsgread only marks a message as begun.
    unsafe {
        pg_sys::ffi::pg_guard_ffi_boundary(|| pq::pq_startmsgread());
        pg_sys::QueryCancelHoldoffCount += 1;
    }
}

/// The socket thread ended without saying how (it cannot, short of a panic).
pub fn raise_thread_gone() -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
        "the fastcopy socket thread stopped unexpectedly",
    )
}

/// The client's socket has something to read (data, or its end), without waiting.
fn socket_readable() -> bool {
    // SAFETY: backend thread with a remote client: MyProcPort is set, and `sock`, a C int,
    // is the first member of `Port` in 15-18 (libpq-be.h). poll with a zero timeout only
    // looks.
    unsafe {
        let sock = *(pg_sys::MyProcPort as *const c_int);
        let mut fd = libc::pollfd {
            fd: sock,
            events: libc::POLLIN,
            revents: 0,
        };
        libc::poll(&mut fd, 1, 0) > 0
    }
}

/// A message [`Message::Unexpected`] left unread: the pump reads nothing more, and the
/// ERROR about it comes after the data before it (through the reader, or
/// [`raise_unexpected_message`] if the reader ended first).
pub fn leave_unread(mtype: c_int) {
    UNREAD.set(Some(mtype));
}

/// Before the ERROR about the message left unread is raised: its type byte is read, so that
/// the ERROR comes in the middle of the message as the server's does (and escalates to
/// FATAL: protocol sync is lost). Nothing when no message was left unread.
pub fn read_unread_type() {
    if UNREAD.take().is_none() {
        return;
    }
    // SAFETY: backend thread; the peeked type byte is the next byte of the connection (the
    // pump read nothing after it).
    unsafe {
        pg_sys::ffi::pg_guard_ffi_boundary(|| pq::pq_startmsgread());
        pg_sys::ffi::pg_guard_ffi_boundary(|| pq::pq_getbyte());
    }
}

/// The ERROR about the message left unread, when the reader ended before it.
pub fn raise_unexpected_message(mtype: c_int) -> ! {
    read_unread_type();
    unexpected_message(mtype)
}

/// The server's ERROR for a client's CopyFail (57014), as the pump hands it to the reader.
pub fn copy_failed(text: &str) -> fastcopy_core::stream::ServerError {
    fastcopy_core::stream::ServerError {
        sqlstate: fastcopy_core::sqlstate::SqlState::QUERY_CANCELED,
        message: format!("COPY from stdin failed: {text}"),
    }
}

/// The server's ERROR for a lost connection during COPY (08006), as the pump hands it to
/// the reader.
pub fn connection_lost() -> fastcopy_core::stream::ServerError {
    fastcopy_core::stream::ServerError {
        sqlstate: fastcopy_core::sqlstate::SqlState::CONNECTION_FAILURE,
        message: "unexpected EOF on client connection with an open transaction".into(),
    }
}

/// The server's ERROR for a message type COPY does not expect (08P01), as the pump hands
/// it to the reader.
pub fn unexpected(mtype: c_int) -> fastcopy_core::stream::ServerError {
    fastcopy_core::stream::ServerError {
        sqlstate: fastcopy_core::sqlstate::SqlState::PROTOCOL_VIOLATION,
        message: unexpected_message_text(mtype),
    }
}

/// `unexpected message type 0x51 during COPY from stdin`.
fn unexpected_message_text(mtype: c_int) -> String {
    format!(
        "unexpected message type 0x{:02X} during COPY from stdin",
        mtype
    )
}

fn unexpected_message(mtype: c_int) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_PROTOCOL_VIOLATION,
        unexpected_message_text(mtype),
    )
}
