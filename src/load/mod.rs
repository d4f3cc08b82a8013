//! One load, top to bottom: options → target → reader → converter → batch → heap.
//!
//! The reader (fastcopy-core) splits the input into rows of fields without touching
//! PostgreSQL; everything here runs on the backend thread. Rows are converted straight into
//! the slots of the current batch (values in the per-tuple memory context, reset after each
//! flush), checked against NOT NULL and CHECK constraints, and inserted by `table_multi_insert`
//! with one bulk-insert state for the whole load once the batch holds
//! `fastcopy.max_buffered_tuples` rows or `fastcopy.max_buffered_bytes` of input.

mod batch;
mod context;
pub mod options;
mod target;
mod tuple;

use crate::guc;
use crate::parse::{SERVER_GRAMMAR, raise_int_error};
use batch::Batch;
use context::{ContextGuard, Position, Progress};
use fastcopy_core::input::{Field, InputError, Row, RowReader};
use fastcopy_core::int;
use options::LoadOptions;
use crate::error::{raise, raise_detail, raise_hint};
use pgrx::prelude::*;
use pgrx::pg_sys;
use std::ffi::c_char;
use std::io::Read;
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
    let with_defaults = reader_opts.default.is_some();
    let target = Target::open(relid, opts.columns.as_deref(), with_defaults);

    let (input, from_file, total) = match source {
        Source::File(path) => {
            let file = open_file(path);
            let total = file.metadata().ok().map(|m| m.len());
            (Input::File(file), true, total)
        }
        Source::Data(d) => (Input::Data(d), false, Some(d.len() as u64)),
    };
    let progress = Progress::start(relid, from_file, total);
    let mut reader = RowReader::with_capacity(input, reader_opts, READ_CHUNK);

    let mut batch = Batch::new(guc::max_buffered_tuples(), guc::max_buffered_bytes());
    let mut stats = LoadStats::default();
    let mut row = Row::new();
    let mut pos = Position {
        verb: c"fastcopy.load",
        relname: target.relname.as_ptr(),
        line: 0,
        attname: std::ptr::null(),
        value: std::ptr::null(),
        value_is_null: false,
    };
    // SAFETY: `pos` and what it points into (target, row) are declared before the guard, so
    // they outlive it, also while an ERROR unwinds.
    let guard = unsafe { ContextGuard::push(&mut pos) };
    let pos_ptr: *mut Position = &mut pos;
    let ncols = target.columns.len();
    // Columns neither in the input nor filled by a default stay NULL for every row.
    let mut values = vec![pg_sys::Datum::from(0usize); target.natts];
    let mut nulls = vec![true; target.natts];

    loop {
        match reader.next_row(&mut row) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => raise_input_error(e, pos_ptr),
        }
        // SAFETY: single-threaded; the callback only reads `pos` while we are inside a call.
        let pos = unsafe { &mut *pos_ptr };
        pos.at_line(row.line_no());
        if row.len() > ncols && !(ncols == 0 && row.len() == 1 && matches!(row.field(0), Field::Value(b""))) {
            raise(PgSqlErrorCode::ERRCODE_BAD_COPY_FILE_FORMAT, "extra data after last expected column");
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
                let (datum, isnull) = convert(col, row.field(i), pos, &target);
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
            let tuple = target.former.form(&mut batch.arena, &values, &nulls);
            pg_sys::MemoryContextSwitchTo(old);
            let slot = batch.next_slot(&target);
            tuple::store(slot, tuple, target.relid);
            if target.has_constraints {
                pg_sys::ExecConstraints(target.rri, slot, target.estate);
            }
        }
        stats.rows_loaded += 1;
        if batch.add(row.line_no(), row.raw_len()) {
            batch.flush(&target, unsafe { &mut *pos_ptr });
            progress.update(reader.bytes_read(), stats.rows_loaded);
            pgrx::check_for_interrupts!();
        } else if stats.rows_loaded % 4096 == 0 {
            pgrx::check_for_interrupts!();
        }
    }
    batch.flush(&target, unsafe { &mut *pos_ptr });
    stats.bytes_read = reader.bytes_read();
    progress.update(stats.bytes_read, stats.rows_loaded);
    stats.flushes = batch.flushes;
    batch.finish(&target);
    drop(guard);
    drop(progress);
    target.close();
    stats.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    stats
}

/// One field to a Datum: ints through the fastcopy parser, others through the input function.
#[inline(always)]
unsafe fn convert(col: &target::Column, field: Field<'_>, pos: &mut Position, target: &Target) -> (pg_sys::Datum, bool) {
    let bytes = match field {
        Field::Value(b) => b,
        Field::Null => {
            pos.value_is_null = true;
            return match &col.conv {
                // Domains have their own input function: call it with NULL so that their
                // NOT NULL constraints are checked, as COPY does.
                Converter::Input { flinfo, typioparam, typmod } => unsafe {
                    let fl = flinfo.as_ref() as *const _ as *mut pg_sys::FmgrInfo;
                    let d = pg_sys::InputFunctionCall(fl, std::ptr::null_mut(), *typioparam, *typmod);
                    pos.value_is_null = false;
                    (d, true)
                },
                _ => {
                    pos.value_is_null = false;
                    (pg_sys::Datum::from(0usize), true)
                }
            };
        }
        Field::Default => {
            let Some(expr) = col.default else {
                raise_detail(PgSqlErrorCode::ERRCODE_BAD_COPY_FILE_FORMAT, "unexpected default marker in COPY data", format!("Column \"{}\" has no default value.", col.name.to_string_lossy()));
            };
            let mut isnull = false;
            let d = unsafe { ((*expr).evalfunc.unwrap())(expr, target.econtext, &mut isnull) };
            return (d, isnull);
        }
    };
    pos.value = bytes.as_ptr() as *const c_char;
    match &col.conv {
        Converter::Int4 => match int::parse_i32(bytes, SERVER_GRAMMAR) {
            Ok(v) => (pg_sys::Datum::from(v), false),
            Err(e) => raise_int_error(e, bytes, "integer"),
        },
        Converter::Int8 => match int::parse_i64(bytes, SERVER_GRAMMAR) {
            Ok(v) => (pg_sys::Datum::from(v), false),
            Err(e) => raise_int_error(e, bytes, "bigint"),
        },
        Converter::Int2 => match int::parse_i16(bytes, SERVER_GRAMMAR) {
            Ok(v) => (pg_sys::Datum::from(v), false),
            Err(e) => raise_int_error(e, bytes, "smallint"),
        },
        Converter::Input { flinfo, typioparam, typmod } => unsafe {
            // The reader guarantees a NUL after every value.
            let fl = flinfo.as_ref() as *const _ as *mut pg_sys::FmgrInfo;
            let d = pg_sys::InputFunctionCall(fl, bytes.as_ptr() as *mut c_char, *typioparam, *typmod);
            (d, false)
        },
    }
}

fn raise_input_error(e: InputError, pos: *mut Position) -> ! {
    unsafe { (*pos).at_line(e.line) };
    let code = match e.sqlstate() {
        "22021" => PgSqlErrorCode::ERRCODE_CHARACTER_NOT_IN_REPERTOIRE,
        "22P04" => PgSqlErrorCode::ERRCODE_BAD_COPY_FILE_FORMAT,
        _ => PgSqlErrorCode::ERRCODE_IO_ERROR,
    };
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
                raise(PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE, format!("\"{path}\" is a directory"));
            }
            f
        }
        Err(e) => {
            let code = match e.kind() {
                std::io::ErrorKind::NotFound => PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
                std::io::ErrorKind::PermissionDenied => PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                _ => PgSqlErrorCode::ERRCODE_IO_ERROR,
            };
            let reason = match e.kind() {
                std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
                std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
                _ => e.to_string(),
            };
            raise(code, format!("could not open file \"{path}\" for reading: {reason}"))
        }
    }
}
