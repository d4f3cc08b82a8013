//! The COPY-in sub-protocol's messages, read straight from the client's socket by a thread of
//! their own (`src/load/input/socket.rs`), so that the client's data keeps arriving while the
//! backend inserts.
//!
//! The messages are those `CopyGetData` (copyfromparse.c) reads: CopyData (`d`) is data,
//! CopyDone (`c`) the end, CopyFail (`f`) the client's error, Flush (`H`) and Sync (`S`) are
//! skipped, anything else is left unread for the backend to report. Lengths are checked as
//! `pq_getmessage` checks them (at least 4; at most `PQ_LARGE_MESSAGE_LIMIT` for CopyData and
//! `PQ_SMALL_MESSAGE_LIMIT` for the others).
//!
//! Nothing is ever read past the message being read: after CopyDone (or a CopyFail, or at a
//! type COPY does not expect) the connection is exactly where the server's own reading would
//! have left it, for the backend's next message. So a CopyData run is first *peeked*, then
//! exactly the bytes of the CopyData messages in it (the last one possibly only begun) are
//! consumed, and their headers cut out in place; a message of another type is read with
//! reads of exactly its header and its body.

use std::io;
use std::mem::MaybeUninit;

/// `PQ_LARGE_MESSAGE_LIMIT`: the longest CopyData message (its length word included).
pub const LARGE_MESSAGE_LIMIT: usize = 0x3fff_ffff - 1;
/// `PQ_SMALL_MESSAGE_LIMIT`: the longest message of the other types.
pub const SMALL_MESSAGE_LIMIT: usize = 10000;
/// Type byte and length word.
const HEADER: usize = 5;

/// The connection, as the framing reads it: a non-blocking byte stream. Both calls return
/// `ErrorKind::WouldBlock` when nothing has arrived, `Ok(0)` when the connection ended, and
/// otherwise have written the first `n` bytes of `buf`.
pub trait Wire {
    /// Copies up to `buf.len()` bytes that have arrived, leaving them to be read.
    fn peek(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize>;
    /// Reads up to `buf.len()` bytes.
    fn read(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize>;
}

/// What [`CopyIn::next`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    /// CopyData bytes were appended to the buffer.
    Data,
    /// Nothing more has arrived yet: wait until the connection is readable.
    Idle,
    /// CopyDone was read.
    Done,
    /// CopyFail was read, with the client's text.
    Fail(String),
    /// A message of a type COPY does not expect begins here; nothing of it was read.
    Unexpected(u8),
    /// The connection ended (or failed, or sent a length the protocol does not allow), with
    /// the line `pq_getmessage` would write to the server log, if any.
    Eof(Option<String>),
}

/// Where the reading is.
#[derive(Debug)]
enum State {
    /// At the start of a message.
    Boundary,
    /// In the header of a message of an expected type: `have` bytes of it read.
    Header { buf: [u8; HEADER], have: usize },
    /// In a CopyData body, this many bytes still to come.
    Body(usize),
    /// In the body of a CopyDone, CopyFail, Flush or Sync message.
    Other {
        mtype: u8,
        body: Vec<u8>,
        need: usize,
    },
    /// After the last message COPY reads (or the connection's end).
    Ended,
}

/// The message types of the COPY-in sub-protocol.
pub fn expected(mtype: u8) -> bool {
    matches!(mtype, b'd' | b'c' | b'f' | b'H' | b'S')
}

/// The COPY-in messages of one connection.
pub struct CopyIn<W> {
    wire: W,
    state: State,
}

impl<W: Wire> CopyIn<W> {
    pub fn new(wire: W) -> CopyIn<W> {
        CopyIn {
            wire,
            state: State::Boundary,
        }
    }

    /// Whether a message has been begun and not finished (stopping now would leave the
    /// connection in the middle of it).
    pub fn in_message(&self) -> bool {
        !matches!(self.state, State::Boundary | State::Ended)
    }

    /// Reads on: CopyData bytes (up to `max` of them) appended to `into`, or what else came.
    pub fn next(&mut self, into: &mut Vec<u8>, max: usize) -> Event {
        loop {
            match &mut self.state {
                State::Ended => return Event::Eof(None),
                State::Body(rest) => {
                    let rest = *rest;
                    match read_into(&mut self.wire, into, rest.min(max.max(1))) {
                        Ok(n) => {
                            self.state = match rest - n {
                                0 => State::Boundary,
                                left => State::Body(left),
                            };
                            return Event::Data;
                        }
                        Err(e) => return self.stopped(e, "incomplete message from client"),
                    }
                }
                State::Boundary => match self.peek_run(into, max) {
                    Ok(Some(event)) => return event,
                    Ok(None) => {}
                    Err(e) => return self.stopped(e, ""),
                },
                State::Header { buf, have } => {
                    let mut part = [MaybeUninit::<u8>::uninit(); HEADER];
                    let want = HEADER - *have;
                    match read_some(&mut self.wire, &mut part[..want]) {
                        Ok(n) => {
                            for (i, b) in part[..n].iter().enumerate() {
                                // SAFETY: `read_some` wrote the first `n` bytes
                                buf[*have + i] = unsafe { b.assume_init() };
                            }
                            *have += n;
                            if *have == HEADER {
                                let buf = *buf;
                                if let Some(event) = self.header(buf) {
                                    return event;
                                }
                            }
                        }
                        Err(e) => {
                            return self.stopped(e, "unexpected EOF within message length word");
                        }
                    }
                }
                State::Other { body, need, .. } => {
                    let want = *need - body.len();
                    if want > 0 {
                        if let Err(e) = read_into(&mut self.wire, body, want) {
                            return self.stopped(e, "incomplete message from client");
                        }
                        continue;
                    }
                    let State::Other { mtype, body, .. } =
                        std::mem::replace(&mut self.state, State::Boundary)
                    else {
                        unreachable!("matched above")
                    };
                    match mtype {
                        b'c' => {
                            self.state = State::Ended;
                            return Event::Done;
                        }
                        b'f' => {
                            self.state = State::Ended;
                            // pq_getmsgstring: the text up to its terminating NUL
                            let end = body.iter().position(|&b| b == 0).unwrap_or(body.len());
                            return Event::Fail(String::from_utf8_lossy(&body[..end]).into_owned());
                        }
                        // Flush and Sync: skipped, as the server skips them during COPY
                        _ => {}
                    }
                }
            }
        }
    }

    /// At a message boundary: a run of CopyData messages peeked and consumed (`Some(Data)`
    /// when it held data), or the header of another message begun (`None`: read on), or what
    /// the connection holds (`Idle`, `Unexpected`, its end).
    fn peek_run(&mut self, into: &mut Vec<u8>, max: usize) -> io::Result<Option<Event>> {
        let window = max.max(HEADER);
        into.reserve(window);
        let at = into.len();
        let spare = &mut into.spare_capacity_mut()[..window];
        let n = match self.wire.peek(spare) {
            Ok(0) => {
                self.state = State::Ended;
                return Ok(Some(Event::Eof(None)));
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Some(Event::Idle)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(None),
            Err(e) => return Err(e),
        };
        // SAFETY: `peek` wrote the first `n` bytes of the spare capacity.
        let peeked: &[u8] = unsafe { std::slice::from_raw_parts(spare.as_ptr().cast(), n) };
        let mtype = peeked[0];
        if !expected(mtype) {
            self.state = State::Ended;
            return Ok(Some(Event::Unexpected(mtype)));
        }
        let run = data_run(peeked);
        if run == 0 {
            // another type, a CopyData header not all there or with a bad length: read the
            // header alone
            self.state = State::Header {
                buf: [0; HEADER],
                have: 0,
            };
            return Ok(None);
        }
        // the run's bytes have arrived: read exactly them (a read returns what is there, so
        // more than one read is only a precaution), then keep their bodies
        let mut got = 0;
        while got < run {
            let spare = &mut into.spare_capacity_mut()[got..run];
            match self.wire.read(spare) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && got > 0 => break,
                Err(e) => return Err(e),
            }
        }
        // SAFETY: the reads wrote the first `got` bytes of the spare capacity.
        unsafe { into.set_len(at + got) };
        let kept = self.cut_headers(&mut into[at..]);
        into.truncate(at + kept);
        if got == 0 {
            self.state = State::Ended;
            return Ok(Some(Event::Eof(None)));
        }
        Ok((kept > 0).then_some(Event::Data))
    }

    /// Removes the CopyData headers from `buf` (consumed CopyData bytes, starting at the
    /// current state), moving the bodies together; the bytes kept.
    fn cut_headers(&mut self, buf: &mut [u8]) -> usize {
        let (mut rd, mut wr) = (0, 0);
        while rd < buf.len() {
            match &mut self.state {
                State::Boundary => {
                    self.state = State::Header {
                        buf: [0; HEADER],
                        have: 0,
                    }
                }
                State::Header { buf: h, have } => {
                    let k = (HEADER - *have).min(buf.len() - rd);
                    h[*have..*have + k].copy_from_slice(&buf[rd..rd + k]);
                    *have += k;
                    rd += k;
                    if *have == HEADER {
                        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
                        // (`data_run` took only CopyData headers with valid lengths)
                        self.state = match len - 4 {
                            0 => State::Boundary,
                            body => State::Body(body),
                        };
                    }
                }
                State::Body(rest) => {
                    let k = (*rest).min(buf.len() - rd);
                    buf.copy_within(rd..rd + k, wr);
                    rd += k;
                    wr += k;
                    *rest -= k;
                    if *rest == 0 {
                        self.state = State::Boundary;
                    }
                }
                State::Other { .. } | State::Ended => unreachable!("only CopyData is cut"),
            }
        }
        wr
    }

    /// A complete header of an expected type: a CopyData body or another message's body to
    /// read (`None`), or a length the protocol does not allow.
    fn header(&mut self, h: [u8; HEADER]) -> Option<Event> {
        let mtype = h[0];
        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
        let limit = match mtype {
            b'd' => LARGE_MESSAGE_LIMIT,
            _ => SMALL_MESSAGE_LIMIT,
        };
        if !(4..=limit).contains(&len) {
            self.state = State::Ended;
            return Some(Event::Eof(Some("invalid message length".into())));
        }
        self.state = match (mtype, len - 4) {
            (b'd', 0) => State::Boundary,
            (b'd', body) => State::Body(body),
            (_, need) => State::Other {
                mtype,
                body: Vec::new(),
                need,
            },
        };
        None
    }

    /// A read that did not go on: nothing there yet (`Idle`), or the connection's end (with
    /// `eof_line`, the server's log line for an end in the middle of a message) or failure.
    fn stopped(&mut self, e: io::Error, eof_line: &str) -> Event {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Event::Idle,
            io::ErrorKind::UnexpectedEof => {
                self.state = State::Ended;
                Event::Eof((!eof_line.is_empty()).then(|| eof_line.to_string()))
            }
            _ => {
                self.state = State::Ended;
                Event::Eof(Some(format!("could not receive data from client: {e}")))
            }
        }
    }
}

/// The bytes at the start of `peeked` that belong to CopyData messages with valid lengths:
/// whole ones, and the last one from its complete header on even when its body has not all
/// arrived. It stops before anything else.
fn data_run(peeked: &[u8]) -> usize {
    let mut pos = 0;
    while pos + HEADER <= peeked.len() && peeked[pos] == b'd' {
        let len = u32::from_be_bytes([
            peeked[pos + 1],
            peeked[pos + 2],
            peeked[pos + 3],
            peeked[pos + 4],
        ]) as usize;
        if !(4..=LARGE_MESSAGE_LIMIT).contains(&len) {
            break;
        }
        pos = (pos + 1 + len).min(peeked.len());
    }
    pos
}

/// One read of up to `buf.len()` bytes: the count, or `UnexpectedEof` at the connection's
/// end, `WouldBlock` when nothing is there.
fn read_some<W: Wire>(wire: &mut W, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
    match wire.read(buf)? {
        0 => Err(io::ErrorKind::UnexpectedEof.into()),
        n => Ok(n),
    }
}

/// One read of up to `want` bytes appended to `into`.
fn read_into<W: Wire>(wire: &mut W, into: &mut Vec<u8>, want: usize) -> io::Result<usize> {
    into.reserve(want);
    let at = into.len();
    let n = read_some(wire, &mut into.spare_capacity_mut()[..want])?;
    // SAFETY: the read wrote the first `n` bytes of the spare capacity.
    unsafe { into.set_len(at + n) };
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection that has `data` (delivered at most `step` bytes per read and per peek,
    /// `WouldBlock` every third call when `stutter`), then ends or, without `end`, blocks.
    struct Pipe {
        data: Vec<u8>,
        at: usize,
        step: usize,
        stutter: bool,
        tick: u32,
        end: bool,
    }

    impl Pipe {
        fn new(data: Vec<u8>, step: usize, stutter: bool, end: bool) -> Pipe {
            Pipe {
                data,
                at: 0,
                step,
                stutter,
                tick: 0,
                end,
            }
        }
        fn avail(&mut self, want: usize) -> io::Result<usize> {
            self.tick += 1;
            if self.stutter && self.tick % 3 == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = want.min(self.step).min(self.data.len() - self.at);
            if n == 0 && want > 0 && !self.end {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(n)
        }
    }

    impl Wire for Pipe {
        fn peek(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
            // a peek sees everything that has arrived
            let n = match self.avail(usize::MAX) {
                Ok(_) => (self.data.len() - self.at).min(buf.len()),
                Err(e) => return Err(e),
            };
            if n == 0 && !self.end {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            for (d, s) in buf.iter_mut().zip(&self.data[self.at..self.at + n]) {
                d.write(*s);
            }
            Ok(n)
        }
        fn read(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
            let n = self.avail(buf.len())?;
            for (d, s) in buf.iter_mut().zip(&self.data[self.at..self.at + n]) {
                d.write(*s);
            }
            self.at += n;
            Ok(n)
        }
    }

    fn msg(mtype: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![mtype];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    /// Everything read until an event other than Data/Idle, and where the pipe stood then.
    fn run(pipe: Pipe, max: usize) -> (Vec<u8>, Event, usize) {
        let mut cin = CopyIn::new(pipe);
        let mut out = Vec::new();
        for _ in 0..1_000_000 {
            match cin.next(&mut out, max) {
                Event::Data | Event::Idle => {}
                other => return (out, other, cin.wire.at),
            }
        }
        panic!("no end: {out:?} {:?}", cin.state);
    }

    #[test]
    fn data_then_done_stops_exactly_after_copydone() {
        let mut wire = Vec::new();
        let mut want = Vec::new();
        for i in 0..200u32 {
            let body: Vec<u8> = (0..(i * 7 % 300)).map(|j| (i + j) as u8).collect();
            want.extend_from_slice(&body);
            wire.extend(msg(b'd', &body));
            if i % 50 == 0 {
                wire.extend(msg(b'H', b""));
                wire.extend(msg(b'S', b""));
            }
        }
        wire.extend(msg(b'c', b""));
        let done_at = wire.len();
        wire.extend(msg(b'Q', b"SELECT 1\0"));
        for step in [1, 2, 3, 5, 7, 64, 4096, usize::MAX] {
            for max in [1, 6, 100, 65536] {
                for stutter in [false, true] {
                    let (out, ev, at) = run(Pipe::new(wire.clone(), step, stutter, true), max);
                    assert_eq!(ev, Event::Done, "step {step} max {max}");
                    assert_eq!(out, want, "step {step} max {max}");
                    assert_eq!(at, done_at, "read past CopyDone: step {step} max {max}");
                }
            }
        }
    }

    #[test]
    fn copyfail_text_and_position() {
        let mut wire = msg(b'd', b"1\t2\n");
        wire.extend(msg(b'f', b"client gave up\0"));
        let end = wire.len();
        wire.extend(msg(b'X', b""));
        let (out, ev, at) = run(Pipe::new(wire, 3, true, true), 100);
        assert_eq!(out, b"1\t2\n");
        assert_eq!(ev, Event::Fail("client gave up".into()));
        assert_eq!(at, end);
    }

    #[test]
    fn unexpected_type_is_left_unread() {
        for step in [1, 4, 100] {
            let mut wire = msg(b'd', b"abc");
            let before = wire.len();
            wire.extend(msg(b'Q', b"SELECT 1\0"));
            let (out, ev, at) = run(Pipe::new(wire, step, false, true), 100);
            assert_eq!(
                (out.as_slice(), ev, at),
                (&b"abc"[..], Event::Unexpected(b'Q'), before)
            );
        }
    }

    #[test]
    fn ends_and_bad_lengths_as_pq_getmessage() {
        // at a boundary: no log line
        let (_, ev, _) = run(Pipe::new(msg(b'd', b"x"), 100, false, true), 100);
        assert_eq!(ev, Event::Eof(None));
        // in a length word
        let mut wire = msg(b'd', b"x");
        wire.extend_from_slice(&[b'd', 0, 0]);
        let (_, ev, _) = run(Pipe::new(wire, 100, false, true), 100);
        assert_eq!(
            ev,
            Event::Eof(Some("unexpected EOF within message length word".into()))
        );
        // in a body
        let mut wire = msg(b'd', b"x");
        wire.extend_from_slice(&[b'd', 0, 0, 0, 9, b'a']);
        let (out, ev, _) = run(Pipe::new(wire, 100, false, true), 100);
        assert_eq!(out, b"xa");
        assert_eq!(
            ev,
            Event::Eof(Some("incomplete message from client".into()))
        );
        // lengths: below 4, CopyDone over the small limit, CopyData over the large one
        for bad in [
            vec![b'd', 0, 0, 0, 3],
            vec![b'c', 0, 0, 0x27, 0x11],
            vec![b'd', 0x40, 0, 0, 0],
        ] {
            let mut wire = msg(b'd', b"ok");
            let at_bad = wire.len() + HEADER;
            wire.extend_from_slice(&bad);
            wire.extend_from_slice(&[0; 16]);
            let (out, ev, at) = run(Pipe::new(wire, 100, false, true), 100);
            assert_eq!(out, b"ok");
            assert_eq!(ev, Event::Eof(Some("invalid message length".into())));
            assert_eq!(at, at_bad, "the header is read, as pq_getmessage reads it");
        }
    }

    #[test]
    fn idle_when_nothing_arrived_and_in_message_while_begun() {
        let mut wire = msg(b'd', b"hello");
        wire.truncate(7);
        let mut cin = CopyIn::new(Pipe::new(wire, 100, false, false));
        let mut out = Vec::new();
        assert!(!cin.in_message());
        assert_eq!(cin.next(&mut out, 100), Event::Data);
        assert_eq!(out, b"he");
        assert!(cin.in_message());
        assert_eq!(cin.next(&mut out, 100), Event::Idle);
        assert!(cin.in_message());
    }
}
