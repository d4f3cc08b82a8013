//! One load, top to bottom: options → target → reader → converter → batch → heap.
//!
//! The reader (fastcopy-core) splits the input into rows of fields without touching
//! PostgreSQL; everything here runs on the backend thread. Rows are converted straight into
//! the slots of the current batch (values in the per-tuple memory context, reset after each
//! flush), checked against NOT NULL and CHECK constraints, and inserted by `table_multi_insert`
//! with one bulk-insert state for the whole load once the batch holds
//! `fastcopy.max_buffered_tuples` rows or `fastcopy.max_buffered_bytes` of input.
//!
//! Two ways from converted values to a buffered row: `store_fast` (the tuple formed straight
//! into batch memory) for plain tables, AFTER triggers and foreign keys included;
//! `store_routed`, in `CopyFrom`'s order, where the executor must see each row: partition
//! routing, BEFORE ROW triggers, stored generated columns. Statement triggers and the AFTER
//! trigger queue are opened and closed by `Target`. `on_error => 'ignore'` is `OnError`.

mod batch;
mod context;
pub mod options;
mod target;
mod tuple;

use crate::compat;
use crate::error::{raise, raise_detail, raise_hint};
use crate::guc;
use crate::parse::{SERVER_GRAMMAR, raise_int_error};
use batch::Batch;
use context::{ContextGuard, Position, Progress};
use fastcopy_core::input::{Field, InputError, Row, RowReader};
use fastcopy_core::int;
use fastcopy_core::pipeline::{IntPlan, IntWidth, RowBlock, produce};
use options::LoadOptions;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::c_char;
use std::io::Read;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use target::{Converter, Target};

/// What a load did (the `fastcopy.load_result` row).
#[derive(Default, Debug)]
pub struct LoadStats {
    pub rows_loaded: u64,
    pub rows_skipped: u64,
    pub bytes_read: u64,
    pub flushes: u64,
    pub pages_extended: u64,
    pub extend_calls: u64,
    pub elapsed_ms: f64,
}

impl LoadStats {
    /// Counts a row `on_error => 'ignore'` skipped, here and in the progress view.
    fn skip_row(&mut self, progress: &Progress) {
        self.rows_skipped += 1;
        progress.skipped(self.rows_skipped);
    }
}

/// Where the rows come from.
pub enum Source<'a> {
    /// A server file (`fastcopy.load`); privileges are checked by the caller.
    File(&'a str),
    /// The text given to `fastcopy.load_data`.
    Data(&'a [u8]),
}

/// Reads a chunk of input; one type for both sources so the load loop is monomorphic.
enum Input<'a> {
    File(std::fs::File),
    Data(&'a [u8]),
}

impl Read for Input<'_> {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Input::File(f) => f.read(buf),
            Input::Data(d) => d.read(buf),
        }
    }
}

const READ_CHUNK: usize = 1 << 20;

pub fn server_major() -> u32 {
    (pg_sys::PG_VERSION_NUM / 10000) as u32
}

/// Runs one load into `relid` and returns what it did.
pub fn run(relid: pg_sys::Oid, source: Source<'_>, opts: &LoadOptions) -> LoadStats {
    let started = std::time::Instant::now();
    let reader_opts = options::reader_options(opts, server_major());
    let target = Target::open(relid, opts, &reader_opts);
    let on_error = OnError::choose(opts.ignore_errors(), &target);

    let (input, from_file, total) = match source {
        Source::File(path) => {
            let file = open_file(path);
            let total = file.metadata().ok().map(|m| m.len());
            (Input::File(file), true, total)
        }
        Source::Data(d) => (Input::Data(d), false, Some(d.len() as u64)),
    };
    let progress = Progress::start(relid, from_file, total);
    let reader = RowReader::with_capacity(input, reader_opts, READ_CHUNK);
    // Splitting rows never calls into PostgreSQL, so for all but small inputs it runs ahead
    // on a thread of its own while this (the backend's) thread converts and inserts.
    let threaded = total.is_none_or(|t| t >= THREAD_MIN_BYTES);

    // The integer columns are converted where the rows are split.
    let plan = IntPlan::new(
        target
            .columns
            .iter()
            .map(|c| match c.conv {
                // FORCE_(NOT_)NULL decide on the raw field, on this thread
                _ if c.force_null || c.force_not_null => None,
                Converter::Int2 => Some(IntWidth::I16),
                Converter::Int4 => Some(IntWidth::I32),
                Converter::Int8 => Some(IntWidth::I64),
                Converter::Input { .. } => None,
            })
            .collect(),
        SERVER_GRAMMAR,
    );

    std::thread::scope(|scope| {
        let mut blocks = if threaded {
            Blocks::spawn(scope, reader, plan)
        } else {
            Blocks::inline(reader, plan)
        };
        let mut block = RowBlock::placeholder();
        let mut batch = Batch::new(
            &target,
            guc::max_buffered_tuples(),
            guc::max_buffered_bytes(),
        );
        let mut stats = LoadStats::default();
        let mut pos = Position {
            verb: c"fastcopy.load",
            relname: target.relname.as_ptr(),
            line: 0,
            attname: std::ptr::null(),
            value: std::ptr::null(),
            value_is_null: false,
        };
        // SAFETY: `pos` and what it points into (target, the rows of `block`) are declared
        // before the guard, so they outlive it, also while an ERROR unwinds.
        let guard = unsafe { ContextGuard::push(&mut pos) };
        let pos_ptr: *mut Position = &mut pos;
        let mut values = vec![pg_sys::Datum::from(0usize); target.natts];
        let mut nulls = vec![true; target.natts];

        loop {
            blocks.advance(&mut block);
            let at = std::cell::Cell::new(0);
            while at.get() < block.rows().len() {
                let mut load = || {
                    load_rows(
                        &target,
                        &block,
                        &at,
                        &mut values,
                        &mut nulls,
                        &mut batch,
                        &mut stats,
                        &progress,
                        on_error,
                        // SAFETY: the callback only reads `pos` inside PostgreSQL calls.
                        unsafe { &mut *pos_ptr },
                    )
                };
                let full = match on_error {
                    OnError::Rollback => {
                        match compat::in_subtransaction(std::panic::AssertUnwindSafe(load)) {
                            Ok(full) => full,
                            // a value its input function rejected: skip that row
                            Err(_) if compat::input_failed() => {
                                stats.skip_row(&progress);
                                false
                            }
                            Err(e) => e.rethrow(),
                        }
                    }
                    _ => load(),
                };
                if full {
                    batch.flush(&target, unsafe { &mut *pos_ptr });
                }
            }
            progress.update(block.bytes_read, stats.rows_loaded);
            pgrx::check_for_interrupts!();
            match &block.end {
                None => {}
                Some(Ok(())) => {
                    stats.bytes_read = block.bytes_read;
                    break;
                }
                Some(Err(e)) => raise_input_error(e, pos_ptr),
            }
        }
        batch.flush(&target, unsafe { &mut *pos_ptr });
        progress.update(stats.bytes_read, stats.rows_loaded);
        batch.finish(&target);
        stats.flushes = batch.flushes;
        stats.pages_extended = batch.pages_extended;
        stats.extend_calls = batch.extend_calls;
        // As in COPY, AFTER STATEMENT triggers and the queued AFTER ROW ones (foreign key
        // checks) run after the line context is gone.
        drop(guard);
        target.close();
        drop(progress);
        if stats.rows_skipped > 0 {
            let n = stats.rows_skipped;
            let msg = if n == 1 {
                format!("{n} row was skipped due to data type incompatibility")
            } else {
                format!("{n} rows were skipped due to data type incompatibility")
            };
            pgrx::ereport!(
                PgLogLevel::NOTICE,
                PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION,
                msg
            );
        }
        stats.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        stats
    })
}

/// Inputs smaller than this are split on the backend thread: a thread would not pay.
const THREAD_MIN_BYTES: u64 = 256 * 1024;
/// Rows per block, blocks in flight (bounds the memory the reader thread may run ahead by).
const BLOCK_ROWS: usize = 1024;
const BLOCK_BYTES: usize = 1 << 20;
const BLOCKS: usize = 4;

/// Where filled row blocks come from: the reader on this thread, or a reader thread.
enum Blocks<'a> {
    Inline {
        reader: RowReader<Input<'a>>,
        spare: Option<RowBlock>,
        plan: Option<IntPlan>,
    },
    Thread {
        full: Receiver<RowBlock>,
        empty: SyncSender<RowBlock>,
    },
}

impl<'a> Blocks<'a> {
    fn inline(reader: RowReader<Input<'a>>, plan: Option<IntPlan>) -> Self {
        Blocks::Inline {
            reader,
            spare: Some(RowBlock::new(BLOCK_ROWS)),
            plan,
        }
    }

    fn spawn<'scope>(
        scope: &'scope std::thread::Scope<'scope, '_>,
        reader: RowReader<Input<'a>>,
        plan: Option<IntPlan>,
    ) -> Self
    where
        'a: 'scope,
    {
        let (full_tx, full) = sync_channel(BLOCKS);
        let (empty, empty_rx) = sync_channel(BLOCKS);
        for _ in 0..BLOCKS {
            empty.send(RowBlock::new(BLOCK_ROWS)).unwrap();
        }
        // PostgreSQL's signal handlers must run on the backend thread: the reader thread
        // starts (and stays) with every signal blocked.
        with_signals_blocked(|| {
            std::thread::Builder::new()
                .name("fastcopy reader".into())
                .spawn_scoped(scope, move || {
                    produce(reader, full_tx, empty_rx, BLOCK_BYTES, plan)
                })
                .unwrap_or_else(|e| {
                    raise(
                        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                        format!("could not start the reader thread: {e}"),
                    )
                })
        });
        Blocks::Thread { full, empty }
    }

    /// Replaces `block` (done with) by the next filled block.
    fn advance(&mut self, block: &mut RowBlock) {
        let next = self.next();
        let done = std::mem::replace(block, next);
        if !done.is_placeholder() {
            self.recycle(done);
        }
    }

    fn next(&mut self) -> RowBlock {
        match self {
            Blocks::Inline {
                reader,
                spare,
                plan,
            } => {
                let mut block = spare.take().unwrap_or_else(|| RowBlock::new(BLOCK_ROWS));
                block.fill(reader, BLOCK_BYTES, plan.as_ref());
                block
            }
            Blocks::Thread { full, .. } => full.recv().unwrap_or_else(|_| {
                raise(
                    PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "the fastcopy reader thread stopped unexpectedly",
                )
            }),
        }
    }

    fn recycle(&mut self, block: RowBlock) {
        match self {
            Blocks::Inline { spare, .. } => *spare = Some(block),
            Blocks::Thread { empty, .. } => {
                let _ = empty.send(block);
            }
        }
    }
}

fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
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

/// What a value that does not convert does (`on_error`).
#[derive(Clone, Copy, PartialEq)]
enum OnError {
    /// ERROR, the load stops (COPY's default).
    Stop,
    /// The row is skipped: ints by the parser's error value, other types through
    /// `compat::input_soft`.
    Ignore,
    /// PostgreSQL 15, which has no soft errors, on the short path: runs of rows are converted
    /// in one subtransaction (`compat::in_subtransaction`, from a row to the next flush), and
    /// a rejected value rolls it back and skips its row, so clean input pays one subtransaction
    /// per batch instead of one per value.
    Rollback,
}

impl OnError {
    fn choose(ignore: bool, target: &Target) -> OnError {
        let inputs = target
            .columns
            .iter()
            .any(|c| matches!(c.conv, Converter::Input { .. }));
        match ignore {
            false => OnError::Stop,
            true if !compat::SOFT_INPUT && target.fast && inputs => OnError::Rollback,
            true => OnError::Ignore,
        }
    }
}

/// Loads the rows of `block` from `at` on until the batch is full (true: flush it now) or the
/// block ends; `at` follows the row being loaded.
#[allow(clippy::too_many_arguments)]
#[inline]
fn load_rows(
    target: &Target,
    block: &RowBlock,
    at: &std::cell::Cell<usize>,
    values: &mut [pg_sys::Datum],
    nulls: &mut [bool],
    batch: &mut Batch,
    stats: &mut LoadStats,
    progress: &Progress,
    on_error: OnError,
    pos: &mut Position,
) -> bool {
    let rows = block.rows();
    while at.get() < rows.len() {
        let r = at.get();
        let row = &rows[r];
        at.set(r + 1);
        if !convert_row(target, row, block.ints(r), values, nulls, on_error, pos) {
            stats.skip_row(progress);
            continue;
        }
        let full = if target.fast {
            Some(unsafe { store_fast(target, values, nulls, row, batch) })
        } else {
            unsafe { store_routed(target, values, nulls, row, batch, pos) }
        };
        let Some(full) = full else { continue };
        stats.rows_loaded += 1;
        if full {
            return true;
        }
    }
    false
}

/// Converts one row into `values`/`nulls` (field count, conversions, defaults), as COPY's
/// `NextCopyFrom`. False when a value did not convert and `on_error` skips the row.
#[inline]
fn convert_row(
    target: &Target,
    row: &Row,
    ints: &[Option<i64>],
    values: &mut [pg_sys::Datum],
    nulls: &mut [bool],
    on_error: OnError,
    pos: &mut Position,
) -> bool {
    pos.at_line(row.line_no());
    let ncols = target.columns.len();
    if (ncols > 0 && row.len() > ncols) || (ncols == 0 && row.line_len() != 0) {
        raise(
            PgSqlErrorCode::ERRCODE_BAD_COPY_FILE_FORMAT,
            "extra data after last expected column",
        );
    }
    unsafe {
        let mem = target.batch_memory();
        let old = pg_sys::MemoryContextSwitchTo(mem.value());
        for (i, col) in target.columns.iter().enumerate() {
            pos.attname = col.name.as_ptr();
            if i >= row.len() {
                pos.value_is_null = true;
                raise(
                    PgSqlErrorCode::ERRCODE_BAD_COPY_FILE_FORMAT,
                    format!("missing data for column \"{}\"", col.name.to_string_lossy()),
                );
            }
            let converted = match ints.get(i) {
                Some(Some(v)) => Some((pg_sys::Datum::from(*v), false)),
                _ => convert(col, row.field(i), pos, target, on_error),
            };
            let Some((datum, isnull)) = converted else {
                pg_sys::MemoryContextSwitchTo(old);
                return false;
            };
            values[col.index] = datum;
            nulls[col.index] = isnull;
        }
        pos.attname = std::ptr::null();
        pos.value = std::ptr::null();
        pos.value_is_null = false;
        for f in &target.fillers {
            let mut isnull = false;
            let eval = (*f.expr).evalfunc.unwrap();
            values[f.index] = eval(f.expr, target.econtext, &mut isnull);
            nulls[f.index] = isnull;
        }
        pg_sys::MemoryContextSwitchTo(old);
    }
    true
}

/// The short path (`Target::fast`): the tuple is formed straight into batch memory and
/// checked against NOT NULL, CHECK and partition constraints. True when the batch is full.
#[inline]
unsafe fn store_fast(
    target: &Target,
    values: &[pg_sys::Datum],
    nulls: &[bool],
    row: &Row,
    batch: &mut Batch,
) -> bool {
    unsafe {
        let mem = target.batch_memory();
        let old = pg_sys::MemoryContextSwitchTo(mem.value());
        let tuple = target.former.form(&mut batch.arena, values, nulls);
        pg_sys::MemoryContextSwitchTo(old);
        let buf = &mut batch.buffers[0];
        // its place on a heap page: MAXALIGNed tuple and a line pointer
        buf.tuple_bytes += ((*tuple).t_len as usize).next_multiple_of(8) + 4;
        let slot = buf.next_slot();
        tuple::store(slot, tuple, target.relid, buf.slot_flags);
        if buf.has_constraints {
            pg_sys::ExecConstraints(target.rri, slot, target.estate);
        }
        if buf.partition_check {
            pg_sys::ExecPartitionCheck(target.rri, slot, target.estate, true);
        }
        batch.add(0, row.line_no(), row.raw_len())
    }
}

/// The executor path, in `CopyFrom`'s order: partition routing, BEFORE ROW triggers, stored
/// generated columns, constraints. `None` when a BEFORE ROW trigger skipped the row, else
/// whether the batch must be flushed now.
unsafe fn store_routed(
    target: &Target,
    values: &[pg_sys::Datum],
    nulls: &[bool],
    row: &Row,
    batch: &mut Batch,
    pos: &mut Position,
) -> Option<bool> {
    unsafe {
        let input = target.input_slot;
        tuple::store_values(input, values, nulls);
        let b = match &target.routing {
            Some(r) => {
                let leaf = compat::exec::ExecFindPartition(
                    r.mtstate,
                    target.rri,
                    r.proute,
                    input,
                    target.estate,
                );
                batch.buffer_for(leaf, target)
            }
            None => 0,
        };
        let buf = &mut batch.buffers[b];
        let (rri, map) = (buf.rri, buf.map);
        // Stored generated columns come after BEFORE ROW triggers, which need the row in the
        // buffer's slot. Without such triggers, and with the input slot's layout (no
        // partitions), they are computed on the input slot, whose values are at hand: the row
        // is then formed once, by the copy below, instead of formed, taken apart and formed
        // again (as COPY forms it once).
        let generated_first = buf.generated && !buf.before_row && target.routing.is_none();
        if generated_first {
            compat::exec::ExecComputeStoredGenerated(
                rri,
                target.estate,
                input,
                pg_sys::CmdType::CMD_INSERT,
            );
        }
        // The row gets a copy of its own (in the slot's memory): a flush below resets the
        // batch memory its values are in.
        let slot = buf.next_slot();
        if map.is_null() {
            tuple::copy(slot, input);
        } else {
            pg_sys::execute_attr_map_slot((*map).attrMap, input, slot);
            tuple::materialize(slot);
        }
        (*slot).tts_tableOid = (*(*rri).ri_RelationDesc).rd_id;
        if buf.single && batch.pending() > 0 {
            // rows before this one are visible to its triggers, as in COPY
            batch.flush(target, pos);
            pos.at_line(row.line_no());
        }
        let b = batch.buffers.iter().position(|x| x.rri == rri).unwrap();
        let buf = &mut batch.buffers[b];
        if buf.before_row && !pg_sys::ExecBRInsertTriggers(target.estate, rri, slot) {
            tuple::clear(slot);
            return None;
        }
        if buf.generated && !generated_first {
            compat::exec::ExecComputeStoredGenerated(
                rri,
                target.estate,
                slot,
                pg_sys::CmdType::CMD_INSERT,
            );
        }
        if buf.has_constraints {
            pg_sys::ExecConstraints(rri, slot, target.estate);
        }
        if buf.partition_check {
            pg_sys::ExecPartitionCheck(rri, slot, target.estate, true);
        }
        tuple::materialize(slot);
        let tuple = (*(slot as *mut pg_sys::HeapTupleTableSlot)).tuple;
        buf.tuple_bytes += ((*tuple).t_len as usize).next_multiple_of(8) + 4;
        Some(batch.add(b, row.line_no(), row.raw_len()))
    }
}

/// One field to a Datum: ints through the fastcopy parser, others through the input function.
/// `None` when the value does not convert and `on_error` skips the row.
#[inline(always)]
unsafe fn convert(
    col: &target::Column,
    field: Field<'_>,
    pos: &mut Position,
    target: &Target,
    on_error: OnError,
) -> Option<(pg_sys::Datum, bool)> {
    let bytes = match field {
        Field::Value(b) if col.force_null && b == target.null_marker.as_bytes() => None,
        Field::Value(b) => Some(b),
        // with FORCE_NOT_NULL the marker is the value (NUL-terminated in `null_marker`)
        Field::Null if col.force_not_null => Some(target.null_marker.as_bytes()),
        Field::Null => None,
        Field::Default => {
            let Some(expr) = col.default else {
                raise_detail(
                    PgSqlErrorCode::ERRCODE_BAD_COPY_FILE_FORMAT,
                    "unexpected default marker in COPY data",
                    format!(
                        "Column \"{}\" has no default value.",
                        col.name.to_string_lossy()
                    ),
                );
            };
            let mut isnull = false;
            let d = unsafe { ((*expr).evalfunc.unwrap())(expr, target.econtext, &mut isnull) };
            return Some((d, isnull));
        }
    };
    let Some(bytes) = bytes else {
        // Domains have their own input function: call it with NULL so that their NOT NULL
        // constraints are checked, as COPY does.
        return match &col.conv {
            Converter::Input {
                flinfo,
                typioparam,
                typmod,
            } => unsafe {
                pos.value_is_null = true;
                let d = input(flinfo, std::ptr::null_mut(), *typioparam, *typmod, on_error);
                pos.value_is_null = false;
                d.map(|d| (d, true))
            },
            _ => Some((pg_sys::Datum::from(0usize), true)),
        };
    };
    pos.value = bytes.as_ptr() as *const c_char;
    let parsed = match &col.conv {
        Converter::Int4 => int::parse_i32(bytes, SERVER_GRAMMAR)
            .map(pg_sys::Datum::from)
            .map_err(|e| (e, "integer")),
        Converter::Int8 => int::parse_i64(bytes, SERVER_GRAMMAR)
            .map(pg_sys::Datum::from)
            .map_err(|e| (e, "bigint")),
        Converter::Int2 => int::parse_i16(bytes, SERVER_GRAMMAR)
            .map(pg_sys::Datum::from)
            .map_err(|e| (e, "smallint")),
        Converter::Input {
            flinfo,
            typioparam,
            typmod,
        } => {
            // The reader guarantees a NUL after every value.
            let s = bytes.as_ptr() as *mut c_char;
            return unsafe { input(flinfo, s, *typioparam, *typmod, on_error) }.map(|d| (d, false));
        }
    };
    match parsed {
        Ok(d) => Some((d, false)),
        Err(_) if on_error != OnError::Stop => None,
        Err((e, type_name)) => raise_int_error(e, bytes, type_name),
    }
}

/// A type's input function; unless `on_error` is `Stop`, a value it rejects gives `None` (or,
/// under `Rollback`, an ERROR marked as the input function's) instead of ERROR.
#[inline(always)]
unsafe fn input(
    flinfo: &pg_sys::FmgrInfo,
    s: *mut c_char,
    typioparam: pg_sys::Oid,
    typmod: i32,
    on_error: OnError,
) -> Option<pg_sys::Datum> {
    let fl = flinfo as *const _ as *mut pg_sys::FmgrInfo;
    unsafe {
        match on_error {
            OnError::Stop => Some(pg_sys::InputFunctionCall(fl, s, typioparam, typmod)),
            OnError::Ignore => compat::input_soft(fl, s, typioparam, typmod),
            OnError::Rollback => Some(compat::input_marked(fl, s, typioparam, typmod)),
        }
    }
}

fn raise_input_error(e: &InputError, pos: *mut Position) -> ! {
    unsafe { (*pos).at_line(e.line) };
    let code = PgSqlErrorCode::from(e.sqlstate().packed());
    match e.hint() {
        Some(h) => raise_hint(code, e.message(), h),
        None => raise(code, e.message()),
    }
}

/// Opens a server file for reading with COPY's errors.
fn open_file(path: &str) -> std::fs::File {
    match std::fs::File::open(path) {
        Ok(f) => {
            if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
                raise(
                    PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
                    format!("\"{path}\" is a directory"),
                );
            }
            f
        }
        Err(e) => {
            let code = match e.kind() {
                std::io::ErrorKind::NotFound => PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
                std::io::ErrorKind::PermissionDenied => {
                    PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE
                }
                _ => PgSqlErrorCode::ERRCODE_IO_ERROR,
            };
            let reason = match e.kind() {
                std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
                std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
                _ => e.to_string(),
            };
            raise(
                code,
                format!("could not open file \"{path}\" for reading: {reason}"),
            )
        }
    }
}
