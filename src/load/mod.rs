//! One load, from bytes to heap pages: [`run`] reads top to bottom in the order of the data
//! path and of COPY's checks (front door → `Opened::open` → the options → `Opened::prepare` →
//! `Source::open` → `Prepared::begin` → decoder on the reader thread(s) → `Loader` → `Batch`
//! → heap pages → `Target::close`). docs/architecture.md walks that path
//! stage by stage with the file of each stage, and says which thread runs what.
//!
//! Small inputs are decoded on the backend thread (no reader thread). A new data format is
//! one decoder in the core and one arm in [`start_blocks`] (binary: `BinaryReader`, its
//! values through receive functions, `receive.rs`); a new source is one arm in
//! `input/source.rs` (a source only the backend may read feeds the reader through
//! `fastcopy_core::stream`).

mod batch;
mod btree_writer;
mod buffer;
mod columns;
mod common;
pub(crate) mod convert;
pub(crate) mod datum;
mod filter;
pub(crate) mod heap_layout;
mod index_build;
pub(crate) mod input;
mod loader;
mod page_wal;
mod pages;
mod position;
mod progress;
mod receive;
mod rejects;
mod row_needs;
mod slot;
pub mod spec;

mod target;
mod tuple;
mod tuple_plan;

use crate::compat::server_major;
pub use common::{Front, LoadStats};
use fastcopy_core::binary::BinaryReader;
use fastcopy_core::input::RowReader;
use fastcopy_core::pipeline::{IntPlan, RowBlock};
use input::blocks::Blocks;
pub use input::source::Source;
use loader::Loader;
use pgrx::pg_sys;
use pgrx::prelude::*;
use position::{ContextGuard, Position};
use progress::Progress;
use spec::{Format, LoadSpec, LogVerbosity, SqlOptions};
use target::{Opened, Target};

/// Bytes the decoder asks of the source at a time.
const READ_CHUNK: usize = 1 << 20;

/// Runs one load and returns what it did. `relid` names the table where `DoCopy` opens it
/// (after the read-only gate and the file privilege check).
pub fn run(
    relid: impl FnOnce() -> pg_sys::Oid,
    source: Source<'_>,
    opts: &SqlOptions,
    front: Front,
) -> LoadStats {
    let started = std::time::Instant::now();
    // DoCopy: the source's kind against the options, the read-only gate, the file's
    // privileges, then the relation
    let text_value = check_text_value(&source, opts);
    target::copy_gate();
    source.check_privileges();
    let relid = relid();
    let source_name = source.describe();
    // the table opened and checked as COPY does before it looks at the options
    let opened = Opened::open(
        relid,
        opts.columns.as_deref(),
        opts.where_clause.as_ref(),
        front,
    );
    // BeginCopyFrom: the options, then the input columns and the encoding plan
    let spec = parse_options(opts, text_value);
    let prepared = opened.prepare(&spec);
    // where BeginCopyFrom opens the file or tells the client to send
    let (input, threaded) =
        source.open(prepared.input_columns(), spec.binary(), &prepared.encoding);
    let progress = Progress::start(relid, input.kind, input.total);
    // CopyFrom: the statement begins (result relation, triggers, routing)
    let target = prepared.begin(relid, &spec);
    let pos = Position::new(front.verb(), &target.relname, target.cols.binary());
    // the rejects table, created if missing, before the first row is read
    let mut rejects = spec
        .rejects
        .as_ref()
        .map(|name| rejects::Rejects::open(name, relid, &source_name));
    let mut stats = std::thread::scope(|scope| {
        let mut blocks = start_blocks(scope, threaded, &spec, &target, input);
        // before the guard: the position points into the current block's rows, also while an
        // ERROR unwinds and the guard copies it
        let mut block = RowBlock::placeholder();
        let guard = ContextGuard::push(&pos);
        let mut loader = Loader::new(&target, &spec, &pos, &progress);
        if let Some(r) = rejects.take() {
            loader.keep_rejects(r);
        }
        loop {
            // while the next block comes (and a client stream is read), an error is about
            // the line after the last one loaded, without its text (COPY: while reading)
            pos.at_line(block.lines_read + 1);
            let done = std::mem::replace(&mut block, blocks.next());
            if !done.is_placeholder() {
                blocks.recycle(done);
            }
            if loader.load_block(&block) {
                break;
            }
        }
        // A client's stream is read up to CopyDone now, as COPY does when it reads the end
        // marker (an error there is about the marker's line), before the last rows go in.
        pos.at_line(block.lines_read);
        blocks.finish();
        let stats = loader.finish();
        drop(guard);
        stats
    });
    // As in COPY, AFTER STATEMENT triggers and the queued AFTER ROW ones (foreign key checks)
    // run after the line context is gone.
    target.close();
    drop(progress);
    if spec.log_verbosity >= LogVerbosity::Default {
        report(&spec, &stats);
    }
    stats.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    stats
}

/// The options, checked where `BeginCopyFrom` checks them; a text value's input is in the
/// database encoding.
fn parse_options(opts: &SqlOptions, text_value: bool) -> LoadSpec {
    let mut spec = LoadSpec::parse(opts, server_major());
    if text_value {
        // SAFETY: reads the database's encoding.
        spec.encoding = Some(unsafe { pg_sys::GetDatabaseEncoding() });
    }
    spec
}

/// Whether the source is a text value, which is in the database encoding already (the server
/// converted it from the client's): only bytes are read in an input encoding, or as binary.
fn check_text_value(source: &Source<'_>, opts: &SqlOptions) -> bool {
    let text_value = matches!(source, Source::Text(_));
    if text_value && opts.encoding.is_some() {
        crate::error::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "encoding applies to bytea data: a text value is in the database encoding",
        );
    }
    if text_value && opts.format.as_deref() == Some("binary") {
        crate::error::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "format binary needs bytea data",
        );
    }
    text_value
}

/// The closing NOTICEs: the rejects table's, or ON_ERROR's.
fn report(spec: &LoadSpec, stats: &LoadStats) {
    match (&spec.rejects, stats.load_id) {
        (Some(table), Some(id)) => {
            report_rejects(stats.rows_skipped, table, id);
            report_on_error(0, stats.rows_set_null);
        }
        _ => report_on_error(stats.rows_skipped, stats.rows_set_null),
    }
}

/// The decoder for the load's format, on a reader thread of `scope` or on this one.
fn start_blocks<'a, 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    threaded: bool,
    spec: &LoadSpec,
    target: &Target,
    input: input::source::Input<'a>,
) -> Blocks<'a>
where
    'a: 'scope,
{
    let plan: Option<IntPlan> = target.int_plan();
    if plan.as_ref().is_some_and(|p| p.tuple.is_some()) {
        pgrx::debug1!(
            "fastcopy: the reader forms the tuples of \"{}\" (rows of integers and text values)",
            target.relname.to_string_lossy()
        );
    }
    match &spec.format {
        Format::Delimited(options) => {
            let mut options = options.clone();
            // a value stands for COPY FROM STDIN (its end-marker rule), a file for a file
            options.stream = input.kind != progress::SourceKind::File;
            options.no_columns = target.cols.columns.is_empty();
            // a line invalid in its encoding is a reject too (with the checks on the reader
            // thread: not when the backend converts the input)
            options.skip_invalid_lines = spec.rejects.is_some();
            options.input_encoding = target.encoding.input.clone();
            options.server_encoding = target.encoding.server.clone();
            if spec.header_match {
                options.header_match = Some(target.header_match());
            }
            let decoder = RowReader::with_capacity(input.read, options, READ_CHUNK);
            if threaded {
                Blocks::spawn(scope, decoder, plan, input.pump)
            } else {
                Blocks::inline(decoder, plan)
            }
        }
        Format::Binary => {
            let decoder = BinaryReader::new(
                input.read,
                target.cols.columns.len(),
                READ_CHUNK,
                server_major(),
            );
            if threaded {
                Blocks::spawn(scope, decoder, plan, input.pump)
            } else {
                Blocks::inline(decoder, plan)
            }
        }
    }
}

/// The closing NOTICE of a load that keeps rejects (instead of ON_ERROR's: rows are also
/// rejected for their structure or a constraint): how many, and where they are.
fn report_rejects(rejected: u64, table: &str, load_id: i64) {
    if rejected > 0 {
        let rows = if rejected == 1 {
            "row was"
        } else {
            "rows were"
        };
        pgrx::ereport!(
            PgLogLevel::NOTICE,
            PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION,
            format!("{rejected} {rows} rejected and kept in \"{table}\" with load_id {load_id}")
        );
    }
}

/// The closing NOTICEs of ON_ERROR: rows `ignore` skipped (COPY's), rows in which `set_null`
/// made values NULL (PostgreSQL 19's); none for 0 rows.
fn report_on_error(skipped: u64, set_null: u64) {
    let notices = [
        (
            skipped,
            "{n} row was skipped due to data type incompatibility",
            "{n} rows were skipped due to data type incompatibility",
        ),
        (
            set_null,
            "in {n} row, columns were set to null due to data type incompatibility",
            "in {n} rows, columns were set to null due to data type incompatibility",
        ),
    ];
    for (n, one, many) in notices {
        if n > 0 {
            let text = if n == 1 { one } else { many };
            pgrx::ereport!(
                PgLogLevel::NOTICE,
                PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION,
                text.replace("{n}", &n.to_string())
            );
        }
    }
}
