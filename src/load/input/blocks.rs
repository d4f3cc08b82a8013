//! Row blocks from the decoder: on the backend thread for small inputs, else from a reader
//! thread that runs ahead (bounded: `BLOCKS` blocks in flight). Where the reader forms tuples
//! column by column (text, numeric, date/time, float, uuid columns), it is two threads: one
//! splits a block's rows while the other converts and forms the block before it.
//!
//! The reader threads run only code of fastcopy-core (the decoder, the int conversion of the
//! block's [`IntPlan`], tuple forming); they start with every signal blocked, because
//! PostgreSQL's signal handlers must run on the backend thread. They end when the input does,
//! or as soon as the backend drops its end (an ERROR unwinding the load).

use super::pump::{Pump, Step};
use super::socket::{self, SocketThread};
use crate::error::raise;
use fastcopy_core::decode::Decoder;
use fastcopy_core::pipeline::{
    IntPlan, RowBlock, produce, produce_formed, produce_split, worth_two_stages,
};
use fastcopy_core::stream::ReaderState;
use pgrx::prelude::*;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, sync_channel};

/// Rows per block, and input bytes per block. Each block is two wake-ups between the threads
/// (filled, recycled); on a VM a wake-up of an idle vCPU is costly, and 1,024 rows per block
/// made ~2,700 context switches per lotsaints load (2M rows).
const BLOCK_ROWS: usize = 4096;
const BLOCK_BYTES: usize = 1 << 20;
/// Blocks in flight between the threads (bounds how far the reader runs ahead).
const BLOCKS: usize = 4;
/// How long the backend waits for a block while the client stream is full (then it offers
/// the data again: the reader may need more of it to finish a long row).
const PUMP_WAIT: std::time::Duration = std::time::Duration::from_millis(1);
/// How long the backend waits for a block from a client read by the socket thread before it
/// looks at a termination request.
const SOCKET_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

/// Where filled row blocks come from.
pub enum Blocks<'a> {
    /// The decoder on this thread.
    Inline {
        decoder: Box<dyn Decoder + 'a>,
        spare: Option<Box<RowBlock>>,
        plan: Option<IntPlan>,
    },
    /// A reader thread, reading a source of its own or a stream this thread pumps.
    Thread {
        full: Receiver<RowBlock>,
        empty: SyncSender<RowBlock>,
        pump: Option<Pump<'a>>,
        /// The thread reading a client's socket, instead of the pump.
        socket: Option<SocketThread>,
    },
}

impl<'a> Blocks<'a> {
    /// Blocks from `decoder` on this thread.
    pub fn inline(decoder: impl Decoder + 'a, plan: Option<IntPlan>) -> Blocks<'a> {
        Blocks::Inline {
            decoder: Box::new(decoder),
            spare: Some(Box::new(RowBlock::new(BLOCK_ROWS))),
            plan,
        }
    }

    /// Blocks from `decoder` on a reader thread of `scope`.
    pub fn spawn<'scope, D>(
        scope: &'scope std::thread::Scope<'scope, '_>,
        decoder: D,
        plan: Option<IntPlan>,
        pump: Option<Pump<'a>>,
    ) -> Blocks<'a>
    where
        D: Decoder + Send + 'scope,
    {
        let ready = pump.as_ref().and_then(|p| p.readiness());
        // a client's stream on a plain connection: read by a thread of its own
        let mut pump = pump;
        let mut writer = None;
        if let Some(fd) = pump.as_ref().and_then(|_| socket::plain_socket())
            && let Some(w) = pump.as_mut().and_then(Pump::take_writer)
        {
            writer = Some((fd, w));
            pump = None;
        }
        let (full_tx, full) = sync_channel(BLOCKS);
        let (empty, empty_rx) = sync_channel(BLOCKS);
        for _ in 0..BLOCKS {
            // the receiver is alive: this cannot fail
            let _ = empty.send(RowBlock::new(BLOCK_ROWS));
        }
        // Tuples formed column by column: a second reader thread converts and forms the rows
        // of one block while the first splits the next (not for a stream this thread pumps,
        // whose rows must reach the loader as soon as the reader holds them).
        let staged = worth_two_stages(plan.as_ref()) && pump.is_none();
        let spawned = with_signals_blocked(|| {
            let reader = if staged {
                let (mid_tx, mid_rx) = sync_channel(BLOCKS);
                let former_plan = plan.clone();
                std::thread::Builder::new()
                    .name("fastcopy former".into())
                    .spawn_scoped(scope, move || produce_formed(mid_rx, full_tx, former_plan))
                    .and_then(|_| {
                        std::thread::Builder::new()
                            .name("fastcopy reader".into())
                            .spawn_scoped(scope, move || {
                                produce_split(decoder, mid_tx, empty_rx, BLOCK_BYTES, plan, ready)
                            })
                    })
            } else {
                std::thread::Builder::new()
                    .name("fastcopy reader".into())
                    .spawn_scoped(scope, move || {
                        produce(decoder, full_tx, empty_rx, BLOCK_BYTES, plan, ready)
                    })
            };
            let socket = match (&reader, writer) {
                (Ok(_), Some((fd, w))) => Some(SocketThread::spawn(scope, fd, w)),
                _ => None,
            };
            (reader, socket)
        });
        // raised after the signal mask is back
        let socket = match spawned {
            (Err(e), _) | (_, Some(Err(e))) => raise(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                format!("could not start the reader thread: {e}"),
            ),
            (Ok(_), socket) => socket.map(|s| s.unwrap_or_else(|_| unreachable!("matched above"))),
        };
        Blocks::Thread {
            full,
            empty,
            pump,
            socket,
        }
    }

    /// The next filled block (the last one has `end` set).
    pub fn next(&mut self) -> RowBlock {
        match self {
            Blocks::Inline {
                decoder,
                spare,
                plan,
            } => {
                let mut block = spare
                    .take()
                    .map_or_else(|| RowBlock::new(BLOCK_ROWS), |b| *b);
                block.fill(decoder.as_mut(), BLOCK_BYTES, plan.as_ref(), None);
                block
            }
            Blocks::Thread {
                full,
                socket: Some(socket),
                ..
            } => loop {
                // the socket thread reads the client; this thread only waits for the rows
                match full.recv_timeout(SOCKET_WAIT) {
                    Ok(block) => {
                        if matches!(block.end, Some(Err(_))) {
                            socket.before_error();
                        }
                        return block;
                    }
                    Err(RecvTimeoutError::Timeout) => socket::die_check(),
                    Err(RecvTimeoutError::Disconnected) => reader_gone(),
                }
            },
            Blocks::Thread {
                full, pump: None, ..
            } => full.recv().unwrap_or_else(|_| reader_gone()),
            Blocks::Thread {
                full,
                pump: Some(pump),
                ..
            } => loop {
                // keep the reader fed with what there is so far, without waiting
                let mut step = pump.step(false);
                while step == Step::Moved {
                    step = pump.step(false);
                }
                if step == Step::Done {
                    return full.recv().unwrap_or_else(|_| reader_gone());
                }
                // the reader is busy with what it has, or (Full) waits for this thread
                if let Some(block) = wait_for_reader(full) {
                    return block;
                }
                if step != Step::Idle {
                    continue;
                }
                // Nothing came from the client. COPY reads the next message only once it has
                // loaded every complete line: the rows the reader holds are asked for, and the
                // backend waits for the client only once the reader has handed over every
                // row and waits in the stream. (A file never idles.)
                match pump.reader_state() {
                    ReaderState::Busy => {}
                    ReaderState::Holding => pump.request_rows(),
                    ReaderState::Waiting => {
                        match full.try_recv() {
                            Ok(block) => return block,
                            Err(TryRecvError::Disconnected) => reader_gone(),
                            Err(TryRecvError::Empty) => {}
                        }
                        pump.step(true);
                    }
                }
            },
        }
    }

    /// After the last block: a client stream is read up to its end (CopyDone), as COPY does
    /// after the end-of-data marker.
    pub fn finish(&mut self) {
        match self {
            Blocks::Thread {
                pump: Some(pump), ..
            } => pump.drain(),
            Blocks::Thread {
                socket: Some(socket),
                ..
            } => socket.finish(),
            _ => {}
        }
    }

    /// Hands a block that was loaded back for refilling.
    pub fn recycle(&mut self, block: RowBlock) {
        match self {
            Blocks::Inline { spare, .. } => *spare = Some(Box::new(block)),
            Blocks::Thread { empty, .. } => {
                // the reader may have ended already
                let _ = empty.send(block);
            }
        }
    }
}

/// A block, if the reader finishes one within `PUMP_WAIT`.
fn wait_for_reader(full: &Receiver<RowBlock>) -> Option<RowBlock> {
    match full.recv_timeout(PUMP_WAIT) {
        Ok(block) => Some(block),
        Err(RecvTimeoutError::Disconnected) => reader_gone(),
        // (no interrupt check here: COPY checks once per row, and the loader does so too, at
        // the row, so that a cancel's CONTEXT names a row as COPY's does)
        Err(RecvTimeoutError::Timeout) => None,
    }
}

fn reader_gone() -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
        "the fastcopy reader thread stopped unexpectedly",
    )
}

/// Runs `f` (which must not raise) with every signal blocked on this thread: threads started
/// in `f` inherit the mask.
fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: zeroed sigset_t values are valid to pass to sigfillset/pthread_sigmask, which
    // only touch this thread's mask; the old mask is restored before returning.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let out = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        out
    }
}
