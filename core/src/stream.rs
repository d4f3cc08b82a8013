//! A bounded byte stream from the backend thread to the reader thread, for sources that only
//! the backend may read: a client's COPY data (the protocol's `pq_getmessage` and friends) or
//! input that the server's own encoding conversion has to convert. The reader thread sees a
//! plain [`Read`] and decodes from it like from a file.
//!
//! The backend never blocks on a full stream: [`StreamWriter::try_send`] hands the chunk back
//! when `chunks` are in flight, and the backend then goes back to loading the row blocks the
//! reader thread has produced, which frees room. (A backend blocked on the stream while the
//! reader is blocked on a full block queue would wait forever.) The stream ends only by
//! [`StreamWriter::try_finish`]: a writer dropped without it (an ERROR on the backend) is an error
//! on the reader's side, never a clean end of the data.
//!
//! A writer on a thread of its own (the socket reader of `src/load/input/socket.rs`, which nothing
//! waits for) may block instead: [`StreamWriter::send_wait`] and its kin wait for room.

use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Condvar, Mutex};

/// What travels: a chunk of data, the end of it, or an error where the data stops.
enum Msg {
    Data(Vec<u8>),
    End,
    Fail(ServerError),
}

/// An error the server raised where the data stops (an encoding conversion that failed): the
/// reader returns it as an [`io::Error`] of kind `InvalidData` after the data before it, and
/// [`crate::input::InputError`] reports its SQLSTATE and message as they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerError {
    pub sqlstate: crate::sqlstate::SqlState,
    pub message: String,
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.sqlstate, self.message)
    }
}

impl std::error::Error for ServerError {}

/// What both ends see of the stream's state, for the server's order of work: COPY reads
/// more input only after it has loaded every complete line it has. When the next row would
/// wait for input, the reader thread holds its block ([`Readiness::hold`]) until data comes
/// or the backend, about to wait for the client, asks for the rows
/// ([`StreamWriter::request_rows`]); the backend waits for the client only once the reader
/// waits in the stream itself ([`ReaderState::Waiting`]). While data flows, blocks stay full.
#[derive(Default)]
struct Shared {
    /// Messages sent and not yet taken by the reader, with [`WAITING`] (the reader waits for
    /// a message, or is about to, and has taken none since it said so) and [`HOLDING`] (it
    /// holds split rows until data comes or they are asked for). One word, so that "waiting
    /// with nothing queued" is one observation.
    state: AtomicUsize,
    /// The backend asked for the rows held.
    flush: AtomicBool,
    /// The writer is gone.
    closed: AtomicBool,
    /// With `wake`: a holding reader sleeps until a send, a request or the writer's end.
    lock: Mutex<()>,
    wake: Condvar,
}

const WAITING: usize = 1 << (usize::BITS - 1);
const HOLDING: usize = 1 << (usize::BITS - 2);
const FLAGS: usize = WAITING | HOLDING;

impl Shared {
    fn queued(&self) -> bool {
        self.state.load(Ordering::SeqCst) & !FLAGS > 0
    }

    /// Wakes a holding reader (under the lock, so that a reader between its check and its
    /// sleep does not miss it).
    fn wake(&self) {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.wake.notify_one();
    }
}

/// The reader side's view of whether input is there to read without waiting.
#[derive(Clone)]
pub struct Readiness(Arc<Shared>);

impl Readiness {
    /// A message (data, the end, an error) is queued: reading will not wait for the writer.
    #[inline]
    pub fn queued(&self) -> bool {
        self.0.queued()
    }

    /// The next row would wait for the writer and the reader has rows: waits until data is
    /// queued (`false`: go on filling the block) or the writer asks for the rows or is gone
    /// (`true`: hand the block over now).
    pub fn hold(&self) -> bool {
        let sh = &*self.0;
        let mut g = sh.lock.lock().unwrap_or_else(|e| e.into_inner());
        sh.state.fetch_or(HOLDING, Ordering::SeqCst);
        let hand_over = loop {
            if sh.queued() {
                sh.flush.store(false, Ordering::SeqCst);
                break false;
            }
            if sh.flush.swap(false, Ordering::SeqCst) || sh.closed.load(Ordering::SeqCst) {
                break true;
            }
            g = sh.wake.wait(g).unwrap_or_else(|e| e.into_inner());
        };
        sh.state.fetch_and(!HOLDING, Ordering::SeqCst);
        hand_over
    }
}

/// What the reader is doing, as the writer sees it.
#[derive(Debug, PartialEq, Eq)]
pub enum ReaderState {
    /// Splitting what it has (or waiting for an empty block).
    Busy,
    /// It has split everything and holds rows until data comes or they are asked for.
    Holding,
    /// It has handed over every row and waits for data in the stream.
    Waiting,
}

/// A stream of at most `chunks` chunks in flight.
pub fn channel(chunks: usize) -> (StreamWriter, StreamReader) {
    let (tx, rx) = sync_channel(chunks.max(1));
    let (back_tx, back_rx) = sync_channel(chunks.max(1) + 1);
    let shared = Arc::new(Shared::default());
    (
        StreamWriter {
            tx,
            spare: back_rx,
            shared: shared.clone(),
        },
        StreamReader {
            rx,
            shared,
            back: back_tx,
            cur: Vec::new(),
            at: 0,
            ended: false,
            failed: None,
        },
    )
}

/// The backend's end.
pub struct StreamWriter {
    tx: SyncSender<Msg>,
    spare: Receiver<Vec<u8>>,
    shared: Arc<Shared>,
}

impl Drop for StreamWriter {
    /// A holding reader hands its rows over and then finds the stream abandoned (or ended).
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        self.shared.wake();
    }
}

/// Why [`StreamWriter::try_send`] did not take a chunk.
#[derive(Debug)]
pub enum Refused {
    /// `chunks` are in flight: try again after the reader has made progress.
    Full(Vec<u8>),
    /// The reader is gone (it stopped with an error, or the load is over).
    Closed,
}

impl StreamWriter {
    /// An empty buffer to fill: one the reader has finished with, or a new one.
    pub fn buffer(&mut self) -> Vec<u8> {
        match self.spare.try_recv() {
            Ok(mut b) => {
                b.clear();
                b
            }
            Err(_) => Vec::new(),
        }
    }

    /// Offers a chunk without blocking.
    pub fn try_send(&mut self, chunk: Vec<u8>) -> Result<(), Refused> {
        match self.send(Msg::Data(chunk)) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(Msg::Data(c))) => Err(Refused::Full(c)),
            Err(TrySendError::Full(_)) => unreachable!("only data is offered"),
            Err(TrySendError::Disconnected(_)) => Err(Refused::Closed),
        }
    }

    /// Offers the end of the data without blocking (like [`try_send`](Self::try_send): a
    /// full stream is [`Refused::Full`], with an empty buffer, and the caller tries again
    /// later). Once it is `Ok`, nothing more may be sent.
    pub fn try_finish(&mut self) -> Result<(), Refused> {
        match self.send(Msg::End) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(Refused::Full(Vec::new())),
            Err(TrySendError::Disconnected(_)) => Err(Refused::Closed),
        }
    }
}

impl StreamWriter {
    /// What the reader is doing: [`ReaderState::Waiting`] once it has taken every message
    /// sent, split all of it and handed over the rows.
    pub fn reader_state(&self) -> ReaderState {
        match self.shared.state.load(Ordering::SeqCst) {
            WAITING => ReaderState::Waiting,
            HOLDING => ReaderState::Holding,
            _ => ReaderState::Busy,
        }
    }

    /// Asks a holding reader for its rows (the backend is about to wait for the client).
    pub fn request_rows(&self) {
        self.shared.flush.store(true, Ordering::SeqCst);
        self.shared.wake();
    }

    /// Sends without blocking, counted as queued (before it can be taken, so that the count
    /// never goes below zero).
    fn send(&mut self, msg: Msg) -> Result<(), TrySendError<Msg>> {
        self.shared.state.fetch_add(1, Ordering::SeqCst);
        let sent = self.tx.try_send(msg);
        if sent.is_err() {
            self.shared.state.fetch_sub(1, Ordering::SeqCst);
        } else {
            self.shared.wake();
        }
        sent
    }

    /// Offers the error where the data stops, without blocking (as
    /// [`try_finish`](Self::try_finish): `Full` hands it back to try again). Once it is `Ok`,
    /// nothing more may be sent.
    pub fn try_fail(&mut self, error: ServerError) -> Result<(), (ServerError, Refused)> {
        match self.send(Msg::Fail(error)) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(Msg::Fail(e))) => Err((e, Refused::Full(Vec::new()))),
            Err(TrySendError::Full(_)) => unreachable!("an error is offered"),
            Err(TrySendError::Disconnected(Msg::Fail(e))) => Err((e, Refused::Closed)),
            Err(TrySendError::Disconnected(_)) => unreachable!("an error is offered"),
        }
    }
}

impl StreamWriter {
    /// Sends a chunk, waiting while `chunks` are in flight; `Err(Closed)` once the reader is
    /// gone. Only for a writer that no one waits for (see the module comment).
    pub fn send_wait(&mut self, chunk: Vec<u8>) -> Result<(), Refused> {
        self.send_blocking(Msg::Data(chunk))
    }

    /// The end of the data, as [`send_wait`](Self::send_wait) sends.
    pub fn finish_wait(&mut self) -> Result<(), Refused> {
        self.send_blocking(Msg::End)
    }

    /// The error where the data stops, as [`send_wait`](Self::send_wait) sends.
    pub fn fail_wait(&mut self, error: ServerError) -> Result<(), Refused> {
        self.send_blocking(Msg::Fail(error))
    }

    /// As `send`, waiting for room (counted as queued while it waits: the reader, which
    /// finds a message queued, reads and gets it once it is in).
    fn send_blocking(&mut self, msg: Msg) -> Result<(), Refused> {
        self.shared.state.fetch_add(1, Ordering::SeqCst);
        match self.tx.send(msg) {
            Ok(()) => {
                self.shared.wake();
                Ok(())
            }
            Err(_) => {
                self.shared.state.fetch_sub(1, Ordering::SeqCst);
                Err(Refused::Closed)
            }
        }
    }
}

impl StreamReader {
    /// Whether input is queued, for the decoder's caller (it outlives the reader's move into
    /// the decoder).
    pub fn readiness(&self) -> Readiness {
        Readiness(self.shared.clone())
    }
}

/// The reader thread's end: a [`Read`] over the chunks, in order.
pub struct StreamReader {
    rx: Receiver<Msg>,
    shared: Arc<Shared>,
    back: SyncSender<Vec<u8>>,
    cur: Vec<u8>,
    at: usize,
    ended: bool,
    failed: Option<ServerError>,
}

impl Read for StreamReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.cur.len() {
            if let Some(e) = &self.failed {
                return Err(io::Error::new(io::ErrorKind::InvalidData, e.clone()));
            }
            if self.ended || buf.is_empty() {
                return Ok(0);
            }
            let done = std::mem::take(&mut self.cur);
            if done.capacity() > 0 {
                // the writer may reuse it; if it has enough spares, let this one go
                let _ = self.back.try_send(done);
            }
            self.at = 0;
            self.shared.state.fetch_or(WAITING, Ordering::SeqCst);
            let msg = self.rx.recv();
            // taken: one message fewer, and no longer waiting, in one step
            let taken = usize::from(msg.is_ok());
            let _ = self
                .shared
                .state
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| {
                    Some((v & !WAITING) - taken)
                });
            match msg {
                Ok(Msg::Data(c)) => self.cur = c,
                Ok(Msg::End) => self.ended = true,
                Ok(Msg::Fail(e)) => self.failed = Some(e),
                Err(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the data stream was abandoned",
                    ));
                }
            }
        }
        let n = buf.len().min(self.cur.len() - self.at);
        buf[..n].copy_from_slice(&self.cur[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_arrive_in_order_and_end_cleanly() {
        let (mut w, mut r) = channel(2);
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        std::thread::scope(|s| {
            let h = s.spawn(move || {
                let mut out = Vec::new();
                let mut buf = [0u8; 777];
                loop {
                    let n = r.read(&mut buf).unwrap();
                    if n == 0 {
                        return out;
                    }
                    out.extend_from_slice(&buf[..n]);
                }
            });
            for part in data.chunks(4096) {
                let mut chunk = w.buffer();
                chunk.extend_from_slice(part);
                loop {
                    match w.try_send(chunk) {
                        Ok(()) => break,
                        Err(Refused::Full(c)) => {
                            chunk = c;
                            std::thread::yield_now();
                        }
                        Err(Refused::Closed) => panic!("reader gone"),
                    }
                }
            }
            loop {
                match w.try_finish() {
                    Ok(()) => break,
                    Err(Refused::Full(_)) => std::thread::yield_now(),
                    Err(Refused::Closed) => panic!("reader gone"),
                }
            }
            assert_eq!(h.join().unwrap(), data);
        });
    }

    #[test]
    fn a_full_stream_hands_the_chunk_back() {
        let (mut w, _r) = channel(2);
        assert!(w.try_send(vec![1]).is_ok());
        assert!(w.try_send(vec![2]).is_ok());
        match w.try_send(vec![3]) {
            Err(Refused::Full(c)) => assert_eq!(c, vec![3]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_abandoned_stream_is_an_error_not_an_end() {
        let (mut w, mut r) = channel(2);
        w.try_send(b"12\n".to_vec()).unwrap();
        drop(w);
        let mut buf = [0u8; 16];
        assert_eq!(r.read(&mut buf).unwrap(), 3);
        let e = r.read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn the_end_waits_for_room_without_blocking() {
        let (mut w, mut r) = channel(1);
        w.try_send(vec![7]).unwrap();
        assert!(matches!(w.try_finish(), Err(Refused::Full(_))));
        let mut buf = [0u8; 4];
        assert_eq!(r.read(&mut buf).unwrap(), 1);
        w.try_finish().unwrap();
        assert_eq!(r.read(&mut buf).unwrap(), 0);
    }

    #[test]
    fn a_gone_reader_closes_the_stream() {
        let (mut w, r) = channel(1);
        drop(r);
        assert!(matches!(w.try_send(vec![1]), Err(Refused::Closed)));
    }

    #[test]
    fn an_error_comes_after_the_data_before_it() {
        let (mut w, mut r) = channel(4);
        w.try_send(b"1\tok\n2\tab".to_vec()).unwrap();
        let e = ServerError {
            sqlstate: crate::sqlstate::SqlState::parse("22P05").unwrap(),
            message: "character with byte sequence 0xe6 has no equivalent".into(),
        };
        w.try_fail(e.clone()).unwrap();
        let mut got = Vec::new();
        let err = r.read_to_end(&mut got).unwrap_err();
        assert_eq!(got, b"1\tok\n2\tab");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            err.get_ref().unwrap().downcast_ref::<ServerError>(),
            Some(&e)
        );
        // and again on the next read
        assert!(r.read(&mut [0u8; 4]).is_err());
    }

    #[test]
    fn a_blocking_writer_waits_for_room_and_sees_the_reader_go() {
        let (mut w, mut r) = channel(1);
        let data: Vec<u8> = (0..50_000u32).map(|i| (i % 241) as u8).collect();
        std::thread::scope(|s| {
            let h = s.spawn(move || {
                let mut out = Vec::new();
                r.read_to_end(&mut out).unwrap();
                out
            });
            for part in data.chunks(1000) {
                w.send_wait(part.to_vec()).unwrap();
            }
            w.finish_wait().unwrap();
            assert_eq!(h.join().unwrap(), data);
        });
        // the reader gone: refused, not blocked
        let (mut w, r) = channel(1);
        w.send_wait(vec![1]).unwrap();
        drop(r);
        assert!(matches!(w.send_wait(vec![2]), Err(Refused::Closed)));
        assert!(matches!(
            w.fail_wait(ServerError {
                sqlstate: crate::sqlstate::SqlState::QUERY_CANCELED,
                message: "x".into()
            }),
            Err(Refused::Closed)
        ));
    }
}
