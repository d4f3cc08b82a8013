//! One load, from bytes to heap pages.
//!
//! ```text
//!  fastcopy.load / load_data (api.rs)
//!        │ SqlOptions
//!        ▼
//!  Target::open (target.rs) ── checks in COPY's order; LoadSpec::parse (spec.rs) in between
//!        │ Target, LoadSpec
//!        ▼
//!  Source::open (source.rs) ── file or value: an Input, its progress type and size
//!        │
//!  ══════╪══════════════════ reader thread (blocks.rs; fastcopy-core only, no PostgreSQL) ═══
//!        ▼
//!  Decoder (core: decode.rs, input/) ── rows of fields; int fields converted per block
//!        │ RowBlock (core: pipeline.rs), bounded queue of 4
//!  ══════╪══════════════════ backend thread ═════════════════════════════════════════════════
//!        ▼
//!  Loader::load_block (loader.rs) ── the row loop, on_error, the only place that flushes
//!        │ convert_row (convert.rs): Datums    Position (position.rs): CONTEXT line
//!        ▼
//!  Batch::store_* (store.rs) ── tuple formed (tuple.rs) or executor path per row
//!        │
//!        ▼
//!  Batch::flush (batch.rs) ── table_multi_insert, indexes, AFTER ROW triggers; extend.rs
//!        │
//!        ▼
//!  Target::close ── AFTER STATEMENT triggers, foreign key checks; progress (progress.rs)
//! ```
//!
//! Small inputs are decoded on the backend thread (no reader thread). A new data format is
//! one decoder in the core and one arm in [`start_blocks`]; a new source is one arm in
//! `source.rs` (a source only the backend may read feeds the reader through
//! `fastcopy_core::stream`).

mod batch;
mod blocks;
mod convert;
mod loader;
mod position;
mod progress;
mod source;
pub mod spec;
mod store;
mod target;
mod tuple;

use blocks::Blocks;
use fastcopy_core::input::RowReader;
use fastcopy_core::pipeline::{IntPlan, RowBlock};
use loader::Loader;
use pgrx::pg_sys;
use pgrx::prelude::*;
use position::{ContextGuard, Position};
use progress::Progress;
pub use source::Source;
use spec::{Format, LoadSpec, SqlOptions};
use target::Target;

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

/// Bytes the decoder asks of the source at a time.
const READ_CHUNK: usize = 1 << 20;
/// Inputs smaller than this are decoded on the backend thread: a thread would not pay.
const THREAD_MIN_BYTES: u64 = 256 * 1024;

pub fn server_major() -> u32 {
    pg_sys::PG_VERSION_NUM / 10000
}

/// Runs one load into `relid` and returns what it did.
pub fn run(relid: pg_sys::Oid, source: Source<'_>, opts: &SqlOptions) -> LoadStats {
    let started = std::time::Instant::now();
    let (target, spec) = Target::open(relid, opts.columns.as_deref(), || {
        LoadSpec::parse(opts, server_major())
    });
    let input = source.open();
    let progress = Progress::start(relid, input.kind, input.total);
    let threaded = input.total.is_none_or(|t| t >= THREAD_MIN_BYTES);
    let pos = Position::new(c"fastcopy.load", &target.relname);
    let mut stats = std::thread::scope(|scope| {
        let mut blocks = start_blocks(scope, threaded, &spec, &target, input);
        // before the guard: the position points into the current block's rows, also while an
        // ERROR unwinds and the guard copies it
        let mut block = RowBlock::placeholder();
        let guard = ContextGuard::push(&pos);
        let mut loader = Loader::new(&target, &spec, &pos, &progress);
        loop {
            let done = std::mem::replace(&mut block, blocks.next());
            if !done.is_placeholder() {
                blocks.recycle(done);
            }
            if loader.load_block(&block) {
                break;
            }
        }
        let stats = loader.finish();
        drop(guard);
        stats
    });
    // As in COPY, AFTER STATEMENT triggers and the queued AFTER ROW ones (foreign key checks)
    // run after the line context is gone.
    target.close();
    drop(progress);
    report_skipped(stats.rows_skipped);
    stats.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    stats
}

/// The decoder for the load's format, on a reader thread of `scope` or on this one.
fn start_blocks<'a, 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    threaded: bool,
    spec: &LoadSpec,
    target: &Target,
    input: source::Input<'a>,
) -> Blocks<'a>
where
    'a: 'scope,
{
    let plan: Option<IntPlan> = convert::int_plan(target);
    match &spec.format {
        Format::Delimited(options) => {
            let mut options = options.clone();
            // a value stands for COPY FROM STDIN (its end-marker rule), a file for a file
            options.stream = input.kind != progress::SourceKind::File;
            options.no_columns = target.columns.is_empty();
            let decoder = RowReader::with_capacity(input.read, options, READ_CHUNK);
            if threaded {
                Blocks::spawn(scope, decoder, plan)
            } else {
                Blocks::inline(decoder, plan)
            }
        }
    }
}

/// COPY's closing NOTICE for rows `on_error => 'ignore'` skipped.
fn report_skipped(n: u64) {
    if n == 0 {
        return;
    }
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
