//! The backend's side of a byte stream to the reader thread, for input that only the backend
//! may read or convert: a client's CopyData messages (`client.rs`), and input in another
//! encoding than the database's, which the server's conversion turns into the database
//! encoding (`encoding.rs`) whatever its source.
//!
//! The backend pumps between the row blocks it loads (`Blocks::next`), never blocking on a
//! full stream, so neither thread waits for the other forever. A conversion error is sent
//! after the bytes before it, so that the reader reports it where it reaches those bytes (as
//! COPY reports it once it has used every byte that converted).

use super::client::{ClientReader, Message};
use super::encoding::Transcoder;
use fastcopy_core::stream::{
    self, ReaderState, Readiness, Refused, ServerError, StreamReader, StreamWriter,
};
use pgrx::prelude::PgSqlErrorCode;
use std::io::Read;

/// Bytes gathered before they go to the reader as one chunk (clients send anything from one
/// row per message to 64 kB and more).
const CHUNK: usize = 256 * 1024;
/// Chunks in flight to the reader: with `CHUNK`, at most 2 MB is buffered.
const CHUNKS: usize = 8;

/// What one [`Pump::step`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Read something or handed data on: call again.
    Moved,
    /// Without blocking: nothing has arrived (what was gathered went to the reader).
    Idle,
    /// The stream to the reader is full: load a block first.
    Full,
    /// The input ended and the end was handed on (or the reader no longer wants data).
    Done,
}

/// Where the pumped bytes come from.
pub enum Origin<'a> {
    /// A client's COPY-in messages.
    Client(ClientReader),
    /// Anything else the backend reads itself (a file or a value to convert).
    Read(Box<dyn Read + 'a>),
}

/// The backend's side of the stream.
pub struct Pump<'a> {
    origin: Origin<'a>,
    /// `None` once the end (or an error) was handed on, or the reader stopped reading.
    writer: Option<StreamWriter>,
    /// Input gathered, not yet handed on.
    gathered: Vec<u8>,
    /// A chunk the full stream refused.
    pending: Option<Vec<u8>>,
    /// A conversion error to hand on after the pending chunk.
    failure: Option<ServerError>,
    /// The origin ended (CopyDone, end of file).
    ended: bool,
    /// The server's conversion into the database encoding, when the input needs it.
    transcoder: Option<Transcoder>,
    /// Whether the reader has input queued (see [`Pump::readiness`]).
    ready: Readiness,
    /// How the client ended the stream other than by CopyDone (CopyFail, a message COPY
    /// does not expect), also handed to the reader: if the reader ended before it (at the end
    /// marker), [`Pump::drain`] raises it, as COPY does after the marker.
    client_end: Option<ClientEnd>,
}

impl<'a> Pump<'a> {
    /// The pump and the reader's end of its stream.
    pub fn new(origin: Origin<'a>, transcoder: Option<Transcoder>) -> (Pump<'a>, StreamReader) {
        let (writer, reader) = stream::channel(CHUNKS);
        let ready = reader.readiness();
        let pump = Pump {
            origin,
            writer: Some(writer),
            gathered: Vec::with_capacity(CHUNK),
            pending: None,
            failure: None,
            ended: false,
            transcoder,
            ready,
            client_end: None,
        };
        (pump, reader)
    }

    /// For a client's stream, what tells the reader thread that it would wait for the client:
    /// it then hands over the rows it has split (COPY loads every complete line it has before
    /// it reads the next message). A file or value read here never waits on anyone.
    pub fn readiness(&self) -> Option<Readiness> {
        matches!(self.origin, Origin::Client(_)).then(|| self.ready.clone())
    }

    /// What the reader is doing with the stream (`Waiting` once it no longer reads it).
    pub fn reader_state(&self) -> ReaderState {
        self.writer
            .as_ref()
            .map_or(ReaderState::Waiting, |w| w.reader_state())
    }

    /// Asks a reader that holds rows to hand them over.
    pub fn request_rows(&self) {
        if let Some(w) = &self.writer {
            w.request_rows();
        }
    }

    /// The stream's writer, for the socket thread (`socket.rs`) to write into instead: from a
    /// client's stream with nothing to convert, before anything was pumped (the pump is then
    /// done with).
    pub fn take_writer(&mut self) -> Option<StreamWriter> {
        let fresh = matches!(self.origin, Origin::Client(_))
            && self.transcoder.is_none()
            && self.gathered.is_empty()
            && self.pending.is_none()
            && !self.ended;
        if fresh { self.writer.take() } else { None }
    }

    /// Converts with `transcoder` from now on (before anything was pumped).
    pub fn convert_with(&mut self, transcoder: Transcoder) {
        self.transcoder = Some(transcoder);
    }

    /// One step: hand on what is pending, else read more. With `block` false, a client's
    /// message is read only if it has (begun to) arrive, and when none has, what was gathered
    /// goes to the reader at once (so that it has work while the client sends).
    pub fn step(&mut self, block: bool) -> Step {
        if let Some(chunk) = self.pending.take() {
            return self.offer(chunk);
        }
        if self.failure.is_some() {
            return self.fail();
        }
        if self.ended {
            return self.end();
        }
        // No interrupt check here: as in COPY, a cancel that arrives while the client's data is
        // read is acted on at the next row (the loader's check), with that row in the CONTEXT.
        let wanted = self.writer.is_some();
        match &mut self.origin {
            Origin::Client(client) => {
                match client.read_message(block, wanted.then_some(&mut self.gathered)) {
                    Message::Data => {}
                    Message::Done => self.ended = true,
                    Message::Fail(text) => return self.client_ended(ClientEnd::Fail(text)),
                    Message::Eof => return self.client_ended(ClientEnd::Eof),
                    Message::Unexpected(mtype) => {
                        super::client::leave_unread(mtype);
                        return self.client_ended(ClientEnd::Unexpected(mtype));
                    }
                    Message::None => {
                        if self.gathered.is_empty() {
                            return Step::Idle;
                        }
                        return match self.hand_on() {
                            Step::Moved => Step::Idle,
                            other => other,
                        };
                    }
                }
            }
            Origin::Read(read) => {
                let at = self.gathered.len();
                self.gathered.resize(at + CHUNK, 0);
                let n = loop {
                    match read.read(&mut self.gathered[at..]) {
                        Ok(n) => break n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            // handed on after what was read, as a reader thread would see it
                            self.failure = Some(fastcopy_core::input::read_failure(&e));
                            break 0;
                        }
                    }
                };
                self.gathered.truncate(at + n);
                self.ended = n == 0;
            }
        }
        if self.gathered.len() >= CHUNK || (self.ended && !self.gathered.is_empty()) {
            return self.hand_on();
        }
        if self.ended && self.transcoder.is_some() {
            // what was left over must convert now
            return self.hand_on();
        }
        Step::Moved
    }

    /// The client failed the stream: COPY reaches the CopyFail (or the message it does not
    /// expect, or the connection's end) only after it has loaded every line before it, so
    /// the data gathered goes on (converted as far as it converts: a partial character stays
    /// unread, as in COPY), then the error, which the reader reports at the line it is
    /// reading (an earlier conversion error first). Nothing more is read.
    fn client_ended(&mut self, end: ClientEnd) -> Step {
        let step = if self.gathered.is_empty() {
            Step::Moved
        } else {
            self.hand_on()
        };
        self.failure.get_or_insert(end.error());
        self.client_end = Some(end);
        self.ended = true;
        step
    }

    /// Hands what was gathered on, converted if the input needs it.
    fn hand_on(&mut self) -> Step {
        let next = self.next_buffer();
        let raw = std::mem::replace(&mut self.gathered, next);
        if self.transcoder.is_none() {
            return self.offer(raw);
        }
        let mut out = self.next_buffer();
        let ended = self.ended;
        let t = self.transcoder.as_mut().expect("checked above");
        if let Err(e) = t.convert(&raw, ended, &mut out) {
            self.failure = Some(e);
        }
        if out.is_empty() {
            return if self.failure.is_some() {
                self.fail()
            } else {
                Step::Moved
            };
        }
        self.offer(out)
    }

    /// Reads and throws away the rest of a client's stream, up to CopyDone (after the
    /// decoder saw the end of the data, as the server does).
    pub fn drain(&mut self) {
        self.writer = None;
        self.pending = None;
        match self.client_end.take() {
            Some(ClientEnd::Fail(text)) => raise_server_error(super::client::copy_failed(&text)),
            Some(ClientEnd::Unexpected(mtype)) => super::client::raise_unexpected_message(mtype),
            Some(ClientEnd::Eof) => raise_server_error(super::client::connection_lost()),
            None => {}
        }
        let Origin::Client(client) = &mut self.origin else {
            return;
        };
        while !self.ended {
            pgrx::check_for_interrupts!();
            match client.read_message(true, None) {
                Message::Done => self.ended = true,
                Message::Fail(text) => raise_server_error(super::client::copy_failed(&text)),
                Message::Eof => raise_server_error(super::client::connection_lost()),
                Message::Unexpected(_) => unreachable!("only a read that does not block peeks"),
                Message::Data | Message::None => {}
            }
        }
    }

    fn next_buffer(&mut self) -> Vec<u8> {
        let mut b = match &mut self.writer {
            Some(w) => w.buffer(),
            None => Vec::new(),
        };
        b.reserve(CHUNK);
        b
    }

    fn offer(&mut self, chunk: Vec<u8>) -> Step {
        let Some(w) = &mut self.writer else {
            return if self.ended { Step::Done } else { Step::Moved };
        };
        match w.try_send(chunk) {
            Ok(()) => Step::Moved,
            Err(Refused::Full(c)) => {
                self.pending = Some(c);
                Step::Full
            }
            Err(Refused::Closed) => {
                // the reader has what it needs (or stopped): the rest is read and dropped
                self.writer = None;
                Step::Moved
            }
        }
    }

    /// Hands the conversion error on; the input after it is read and dropped.
    fn fail(&mut self) -> Step {
        let Some(e) = self.failure.take() else {
            return Step::Moved;
        };
        let Some(w) = &mut self.writer else {
            return Step::Moved;
        };
        match w.try_fail(e) {
            Ok(()) | Err((_, Refused::Closed)) => {
                self.writer = None;
                // a file or value need not be read further; a client's stream is, to CopyDone
                self.ended |= matches!(self.origin, Origin::Read(_));
                Step::Moved
            }
            Err((e, Refused::Full(_))) => {
                self.failure = Some(e);
                Step::Full
            }
        }
    }

    fn end(&mut self) -> Step {
        let Some(w) = &mut self.writer else {
            return Step::Done;
        };
        match w.try_finish() {
            Ok(()) | Err(Refused::Closed) => {
                self.writer = None;
                Step::Done
            }
            Err(Refused::Full(_)) => Step::Full,
        }
    }
}

/// How a client ended its stream other than by CopyDone.
enum ClientEnd {
    /// CopyFail, with the client's text.
    Fail(String),
    /// A message type COPY does not expect, left unread.
    Unexpected(std::ffi::c_int),
    /// The connection ended, in or before a message.
    Eof,
}

impl ClientEnd {
    fn error(&self) -> ServerError {
        match self {
            ClientEnd::Fail(text) => super::client::copy_failed(text),
            ClientEnd::Unexpected(mtype) => super::client::unexpected(*mtype),
            ClientEnd::Eof => super::client::connection_lost(),
        }
    }
}

pub(in crate::load) fn raise_server_error(e: ServerError) -> ! {
    crate::error::raise(PgSqlErrorCode::from(e.sqlstate.packed()), e.message)
}
