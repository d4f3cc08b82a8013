//! A client's COPY data read from its socket by a thread of its own, so that the client's
//! data keeps arriving while the backend inserts.
//!
//! Through the pump (`pump.rs`) the backend reads the client between the row blocks it
//! loads; while it loads one, nobody reads, and a client that produces as fast as the server
//! loads (pg_restore decompressing, pgbench formatting) finds the socket full and waits. Here
//! a third thread reads the socket ([`fastcopy_core::copyin`]: the same messages, checks and
//! log lines as the server's `CopyGetData`, never a byte past the message it is in) and
//! writes the data into the reader thread's stream, waiting when that is full; the backend
//! only loads. It runs only on a plain connection (no TLS or GSSAPI encryption, which only the
//! backend's `secure_read` can undo) whose receive buffer is empty when the data begins, and
//! without an encoding conversion (the server's, on the backend); otherwise, and with
//! `fastcopy.client_thread = off`, the pump reads.
//!
//! The thread calls nothing of the server's: it reads the socket with `recv` and `poll`, with
//! every signal blocked (the server's handlers run on the backend thread). Its ends: the
//! client's CopyDone, CopyFail, a message type COPY does not expect (left unread, as the pump
//! leaves it), the connection's end; each error is handed to the reader after the data
//! before it, as the pump hands it. When the backend stops (an ERROR while loading), the
//! thread finishes the message it is in, so that the server's main loop finds the next one
//! whole, and stops.

use super::client;
use crate::guc;
use fastcopy_core::copyin::{CopyIn, Event, Wire};
use fastcopy_core::stream::{ReaderState, StreamWriter};
use pgrx::pg_sys;
use std::ffi::c_int;
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Bytes gathered before they go to the reader as one chunk.
const CHUNK: usize = 256 * 1024;
/// With less than this gathered when nothing more has arrived, the thread waits a moment for
/// more before it hands the data on (so that a client sending 8 kB at a time does not wake
/// this thread and the reader for each). pg_restore decompressing a gzip dump sends at about
/// the pace the load takes it: with 32 kB and 200 us the restore of bench/types.sh's dump
/// took 4.4-4.8 s on 17, with 128 kB and 500 us 4.1-4.4 s (same server, builds alternating).
const SMALL: usize = 128 * 1024;
/// How long it waits then.
const NAP: Duration = Duration::from_micros(500);

/// The backend's word to the thread.
const RUN: u8 = 0;
/// Stop after the message being read.
const FINISH: u8 = 1;
/// Stop now (the backend is terminating: the connection ends anyway).
const ABANDON: u8 = 2;

/// How the thread ended.
enum End {
    Done,
    Fail(String),
    Unexpected(u8),
    Eof,
    Stopped,
}

/// What the backend must do before the ERROR the reader reports for the connection's end or
/// a message COPY does not expect: set by the thread before it hands that error on.
#[derive(Default)]
struct Pending {
    /// The server log line of `pq_getmessage` for the connection's end.
    log: Option<String>,
    /// The type of the message left unread.
    unread: Option<u8>,
    /// The connection ended.
    eof: bool,
}

/// The backend's side of the socket thread.
pub struct SocketThread {
    stop: Arc<AtomicU8>,
    end: Receiver<End>,
    pending: Arc<Mutex<Pending>>,
    finished: bool,
}

/// The client's socket, if the socket thread may read it: the setting is on, the connection
/// is neither TLS- nor GSSAPI-encrypted, and nothing of the client's is in the server's
/// receive buffer.
pub fn plain_socket() -> Option<c_int> {
    if !guc::client_thread() || !client::receive_buffer_empty() {
        return None;
    }
    // SAFETY: backend thread. `MyBEEntry` is this backend's status entry (set at its start,
    // NULL checked), whose `st_ssl`, `st_gss` and `st_gssstatus` (15-18) say whether the
    // connection is encrypted; `MyProcPort` is set for a remote client (the COPY hook takes
    // STDIN only then), and `sock`, a C int, is the first member of `Port` in 15-18.
    unsafe {
        let be = pg_sys::MyBEEntry;
        if be.is_null() || pg_sys::MyProcPort.is_null() || (*be).st_ssl {
            return None;
        }
        if (*be).st_gss && ((*be).st_gssstatus.is_null() || (*(*be).st_gssstatus).gss_enc) {
            return None;
        }
        Some(*(pg_sys::MyProcPort as *const c_int))
    }
}

impl SocketThread {
    /// Starts the thread on `scope` (the caller blocks signals around the call), writing into
    /// `writer`.
    pub fn spawn<'scope>(
        scope: &'scope std::thread::Scope<'scope, '_>,
        fd: c_int,
        writer: StreamWriter,
    ) -> io::Result<SocketThread> {
        let stop = Arc::new(AtomicU8::new(RUN));
        let pending = Arc::new(Mutex::new(Pending::default()));
        let (end_tx, end) = sync_channel(1);
        let (stop2, pending2) = (stop.clone(), pending.clone());
        std::thread::Builder::new()
            .name("fastcopy socket".into())
            .spawn_scoped(scope, move || run(fd, writer, &stop2, &pending2, end_tx))?;
        Ok(SocketThread {
            stop,
            end,
            pending,
            finished: false,
        })
    }

    /// Before the ERROR the reader reports where the data stopped: for the connection's
    /// end, the server's log line and its state (a message half read); for a message left
    /// unread, its type byte is read before the ERROR, as the pump does.
    pub fn before_error(&self) {
        let p = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(line) = &p.log {
            client::log_protocol_violation(line);
        }
        if p.eof {
            client::leave_message_half_read();
        }
        if let Some(mtype) = p.unread {
            client::leave_unread(mtype as c_int);
        }
    }

    /// After the last block: waits until the thread has read the client's stream to its
    /// end (CopyDone), as COPY reads it after the end-of-data marker; the client's CopyFail,
    /// a message COPY does not expect or the connection's end then raise the server's ERROR.
    pub fn finish(&mut self) {
        let end = loop {
            match self.end.recv_timeout(Duration::from_millis(10)) {
                Ok(end) => break end,
                Err(RecvTimeoutError::Timeout) => die_check(),
                Err(RecvTimeoutError::Disconnected) => client::raise_thread_gone(),
            }
        };
        self.finished = true;
        match end {
            End::Done | End::Stopped => {}
            End::Fail(text) => {
                super::pump::raise_server_error(client::copy_failed(&text));
            }
            End::Unexpected(mtype) => client::raise_unexpected_message(mtype as c_int),
            End::Eof => {
                self.before_error();
                super::pump::raise_server_error(client::connection_lost());
            }
        }
    }
}

impl Drop for SocketThread {
    /// An ERROR unwinds the load: the thread stops after the message it is in (while the
    /// backend waits here, a termination request lets it stop at once).
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.stop.store(FINISH, Ordering::SeqCst);
        loop {
            match self.end.recv_timeout(Duration::from_millis(20)) {
                Ok(_) | Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => {
                    // SAFETY: a flag of the backend's signal handler, read on its thread.
                    if unsafe { pg_sys::ProcDiePending } != 0 {
                        self.stop.store(ABANDON, Ordering::SeqCst);
                    }
                }
            }
        }
    }
}

/// While the backend waits for the client through the thread: a termination request is
/// acted on, as `secure_read` acts on it while the server waits for the client (a cancel
/// waits for the next row, as in COPY).
pub fn die_check() {
    // SAFETY: a flag of the backend's signal handler, read on its thread.
    if unsafe { pg_sys::ProcDiePending } != 0 {
        pgrx::check_for_interrupts!();
    }
}

/// The client's socket, read without waiting.
struct Socket(c_int);

impl Socket {
    fn recv(&mut self, buf: &mut [MaybeUninit<u8>], flags: c_int) -> io::Result<usize> {
        // SAFETY: `buf` is writable for its length; recv writes at most that many bytes.
        let n = unsafe {
            libc::recv(
                self.0,
                buf.as_mut_ptr().cast(),
                buf.len(),
                flags | libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }

    /// Waits up to `ms` for the socket to be readable (or to have ended, or failed).
    fn wait(&self, ms: c_int) -> bool {
        let mut fd = libc::pollfd {
            fd: self.0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut fd, 1, ms) != 0 }
    }
}

impl Wire for Socket {
    fn peek(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        self.recv(buf, libc::MSG_PEEK)
    }
    fn read(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        self.recv(buf, 0)
    }
}

/// The thread: messages read into chunks for the reader until the stream's end.
fn run(
    fd: c_int,
    writer: StreamWriter,
    stop: &AtomicU8,
    pending: &Mutex<Pending>,
    end_tx: SyncSender<End>,
) {
    let mut out = Out {
        writer: Some(writer),
        gathered: Vec::with_capacity(CHUNK),
    };
    let mut cin = CopyIn::new(Socket(fd));
    let mut napped = false;
    let end = loop {
        match stop.load(Ordering::SeqCst) {
            RUN => {}
            FINISH if cin.in_message() => out.writer = None,
            _ => break End::Stopped,
        }
        let room = CHUNK.saturating_sub(out.gathered.len()).max(1);
        let event = cin.next(&mut out.gathered, room);
        if event != Event::Idle {
            napped = false;
        }
        match event {
            Event::Data => {
                if out.writer.is_none() {
                    // the reader is done (the end marker, or the load stopped): thrown away
                    out.gathered.clear();
                } else if out.gathered.len() >= CHUNK {
                    out.hand_on();
                }
            }
            Event::Idle => {
                if out.gathered.len() < SMALL && !napped {
                    // let the client's data gather a moment (fewer, fuller reads)
                    std::thread::sleep(NAP);
                    napped = true;
                    continue;
                }
                out.hand_on();
                wait_for_client(&Socket(fd), &out, stop);
            }
            Event::Done => {
                out.hand_on();
                if let Some(w) = &mut out.writer {
                    let _ = w.finish_wait();
                }
                break End::Done;
            }
            Event::Fail(text) => {
                out.fail(client::copy_failed(&text));
                break End::Fail(text);
            }
            Event::Unexpected(mtype) => {
                pending.lock().unwrap_or_else(|e| e.into_inner()).unread = Some(mtype);
                out.fail(client::unexpected(mtype as c_int));
                break End::Unexpected(mtype);
            }
            Event::Eof(line) => {
                {
                    let mut p = pending.lock().unwrap_or_else(|e| e.into_inner());
                    p.log = line;
                    p.eof = true;
                }
                out.fail(client::connection_lost());
                break End::Eof;
            }
        }
    };
    let _ = end_tx.send(end);
}

/// The client sends nothing at the moment. COPY loads every complete line it has before it
/// waits for the next message: a reader holding rows is asked for them, and asked again while
/// the client stays silent (it may begin to hold after the first look).
fn wait_for_client(socket: &Socket, out: &Out, stop: &AtomicU8) {
    loop {
        if let Some(w) = &out.writer
            && w.reader_state() == ReaderState::Holding
        {
            w.request_rows();
        }
        if socket.wait(20) || stop.load(Ordering::SeqCst) != RUN {
            return;
        }
    }
}

/// The data gathered and where it goes.
struct Out {
    /// `None` once the reader no longer reads (the rest of the stream is thrown away).
    writer: Option<StreamWriter>,
    gathered: Vec<u8>,
}

impl Out {
    /// What was gathered, to the reader (waiting for room).
    fn hand_on(&mut self) {
        if self.gathered.is_empty() {
            return;
        }
        let Some(w) = &mut self.writer else {
            self.gathered.clear();
            return;
        };
        let mut next = w.buffer();
        next.reserve(CHUNK);
        let chunk = std::mem::replace(&mut self.gathered, next);
        if w.send_wait(chunk).is_err() {
            self.writer = None;
        }
    }

    /// The data before it, then the error where the data stops.
    fn fail(&mut self, e: fastcopy_core::stream::ServerError) {
        self.hand_on();
        if let Some(w) = &mut self.writer {
            let _ = w.fail_wait(e);
        }
    }
}
