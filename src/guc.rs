//! The `fastcopy.*` settings, registered in `_PG_init`, all settable per session.
//!
//! Read them only on the backend thread (pgrx checks this) through the typed accessors below.

use pgrx::guc::{GucContext, GucEnum, GucFlags, GucRegistry, GucSetting, PostgresGucEnum};
use pgrx::pg_sys;
use std::ffi::{c_int, c_void};

/// Who decides how far the table grows.
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum ExtendStrategy {
    /// `server` while no other session extends the table; `sticky` from the first batch that
    /// finds another session extending it (its relation extension lock held).
    #[name = c"auto"]
    Auto,
    /// PostgreSQL extends the table itself, as COPY does.
    #[name = c"server"]
    Server,
    /// fastcopy pre-extends in steps of exactly `extend_pages`.
    #[name = c"fixed"]
    Fixed,
    /// Start at what the insert needs, double up to `extend_pages`, never shrink.
    #[name = c"sticky"]
    Sticky,
}

/// How new blocks are allocated (PostgreSQL 16+ distinguishes fallocate and zero-writes).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum ExtendMethod {
    /// The server's rule: fallocate above 8 blocks per call, zero-writes otherwise.
    #[name = c"auto"]
    Auto,
    /// Only zero-writes: extension calls of at most 8 blocks.
    #[name = c"zero"]
    Zero,
    /// Only fallocate: extension calls of at least 9 blocks (PostgreSQL 16+).
    #[name = c"fallocate"]
    Fallocate,
}

/// Whether fastcopy takes `COPY … FROM` statements (the COPY hook, `copy_hook/`).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum CopyFrom {
    /// Every COPY runs as the server's.
    #[name = c"off"]
    Off,
    /// fastcopy takes what it can do exactly, the server runs the rest.
    #[name = c"on"]
    On,
    /// As `on`, and a statement fastcopy cannot take is an ERROR that says why.
    #[name = c"require"]
    Require,
}

/// How a load puts rows' entries into the table's btree indexes.
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum IndexBuild {
    /// Bottom-up at the end of the load where the table is private to the transaction and
    /// empty when the load begins (created or truncated in it, or temporary); per row
    /// elsewhere (`load/index_build.rs`).
    #[name = c"auto"]
    Auto,
    /// Every entry as COPY inserts it, row by row through the server's insert.
    #[name = c"per_row"]
    PerRow,
}

pub static INDEX_BUILD: GucSetting<IndexBuild> = GucSetting::<IndexBuild>::new(IndexBuild::Auto);

/// `fastcopy.index_build`.
pub fn index_build() -> IndexBuild {
    INDEX_BUILD.get()
}

pub static COPY_FROM: GucSetting<CopyFrom> = GucSetting::<CopyFrom>::new(CopyFrom::Off);

/// `fastcopy.copy_from`.
pub fn copy_from() -> CopyFrom {
    COPY_FROM.get()
}

pub static MAX_BUFFERED_TUPLES: GucSetting<i32> = GucSetting::<i32>::new(1000);
pub static MAX_BUFFERED_BYTES_KB: GucSetting<i32> = GucSetting::<i32>::new(64);
pub static EXTEND_STRATEGY: GucSetting<ExtendStrategy> =
    GucSetting::<ExtendStrategy>::new(ExtendStrategy::Auto);
pub static EXTEND_PAGES: GucSetting<i32> = GucSetting::<i32>::new(64);
pub static EXTEND_METHOD: GucSetting<ExtendMethod> =
    GucSetting::<ExtendMethod>::new(ExtendMethod::Auto);
pub static PAGE_PATH: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static REJECTS: GucSetting<Option<std::ffi::CString>> =
    GucSetting::<Option<std::ffi::CString>>::new(None);

/// `fastcopy.rejects`: the rejects table of text and CSV loads that name none (and choose no
/// other ON_ERROR than ignore); `None` when unset or empty.
pub fn rejects() -> Option<String> {
    REJECTS
        .get()
        .map(|c| c.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
}
pub static CLIENT_THREAD: GucSetting<bool> = GucSetting::<bool>::new(true);

/// Whether a thread of fastcopy's reads a client's COPY data from its socket (`load/input/socket.rs`).
pub fn client_thread() -> bool {
    CLIENT_THREAD.get()
}

/// `fastcopy.page_path`: buffered rows of plain heap tables go onto heap pages through
/// fastcopy's page writer (`load/pages.rs`) rather than `heap_multi_insert`.
pub fn page_path() -> bool {
    PAGE_PATH.get()
}

/// Rows buffered before a flush (COPY's fixed MAX_BUFFERED_TUPLES).
pub fn max_buffered_tuples() -> usize {
    MAX_BUFFERED_TUPLES.get() as usize
}

/// Input bytes buffered before a flush (COPY's fixed MAX_BUFFERED_BYTES).
/// The batch's limit in input bytes: a batch is full once its lines hold this many or more.
/// One byte under the setting, so that the default 64 kB is COPY's `MAX_BUFFERED_BYTES`
/// (65535), and batches end where COPY's end (the same WAL records).
pub fn max_buffered_bytes() -> usize {
    MAX_BUFFERED_BYTES_KB.get() as usize * 1024 - 1
}

pub fn init() {
    GucRegistry::define_enum_guc(
        c"fastcopy.copy_from",
        c"Whether fastcopy takes COPY FROM statements: off, on or require.",
        c"on: fastcopy loads the COPY FROM statements it can load exactly and hands the rest to the server (DEBUG1 says why); require: a statement it cannot take is an ERROR.",
        &COPY_FROM,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_enum_guc(
        c"fastcopy.index_build",
        c"How loads fill btree indexes: auto or per_row.",
        c"auto: where the table was created or truncated in the load's transaction (or is temporary) and is empty when the load begins, its btree indexes on plain columns are built bottom-up at the end of the load; per_row: every entry is inserted as COPY inserts it.",
        &INDEX_BUILD,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"fastcopy.max_buffered_tuples",
        c"Rows fastcopy buffers before it inserts them in one batch.",
        c"COPY FROM uses a fixed 1000.",
        &MAX_BUFFERED_TUPLES,
        1,
        1_000_000,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"fastcopy.max_buffered_bytes",
        c"Input bytes fastcopy buffers before it inserts them in one batch.",
        c"COPY FROM uses a fixed 64kB (65535 bytes of lines, their line endings not counted), as the default does.",
        &MAX_BUFFERED_BYTES_KB,
        1,
        1_048_576,
        GucContext::Userset,
        GucFlags::UNIT_KB,
    );
    GucRegistry::define_enum_guc(
        c"fastcopy.extend_strategy",
        c"Who decides how far a loaded table grows: auto, server, fixed or sticky.",
        c"",
        &EXTEND_STRATEGY,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"fastcopy.rejects",
        c"Rejects table of loads that name none: rows they skip are kept there.",
        c"For clients that cannot change their COPY statements (pg_restore): text and CSV loads that choose no ON_ERROR other than ignore skip bad rows and keep them in this table.",
        &REJECTS,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"fastcopy.extend_pages",
        c"Pages per extension for extend_strategy fixed, the cap for sticky.",
        c"",
        &EXTEND_PAGES,
        1,
        8192,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"fastcopy.page_path",
        c"Whether fastcopy writes the heap pages of plain tables itself.",
        c"on: rows go onto heap pages through fastcopy's page writer, logged as heap_multi_insert logs them; off: through heap_multi_insert.",
        &PAGE_PATH,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"fastcopy.client_thread",
        c"Whether a thread of fastcopy's reads a client's COPY data from its socket.",
        c"on: on a connection without TLS or GSSAPI encryption, a thread reads the client's messages while the backend inserts; off: the backend reads them between the row blocks it loads.",
        &CLIENT_THREAD,
        GucContext::Userset,
        GucFlags::default(),
    );
    // SAFETY: pgrx asks that hooks which may panic be #[pg_guard]ed: the check hook is, and
    // is a plain function of its arguments. Called from `_PG_init` on the backend thread;
    // `EXTEND_METHOD` and the C string literals are 'static, as the GUC machinery, which
    // keeps pointers to them, needs.
    unsafe {
        GucRegistry::define_enum_guc_with_hooks(
            c"fastcopy.extend_method",
            c"How new blocks are allocated: auto, zero or fallocate (fallocate needs PostgreSQL 16+).",
            c"",
            &EXTEND_METHOD,
            GucContext::Userset,
            GucFlags::default(),
            Some(check_extend_method),
            None,
            None,
        );
    }
    // SAFETY: a 'static NUL-terminated string; called from `_PG_init` on the backend thread,
    // after all of this prefix's settings are defined, as guc.c expects (placeholders of the
    // prefix left over are then reported and removed).
    unsafe { pg_sys::MarkGUCPrefixReserved(c"fastcopy".as_ptr()) };
}

/// PostgreSQL 15 extends one block per write, so there is no fallocate to choose.
///
/// # Safety
/// Only for guc.c, as the `GucEnumCheckHook` of `fastcopy.extend_method`: `newval` points to
/// the proposed value (an ordinal of `ExtendMethod`); on the backend thread.
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn check_extend_method(
    newval: *mut c_int,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    let fallocate = ExtendMethod::Fallocate.to_ordinal();
    // SAFETY: guc.c passes a valid `int *newval` to an enum check hook (# Safety above).
    if cfg!(feature = "pg15") && unsafe { *newval } == fallocate {
        // SAFETY: on the backend thread, inside guc.c's call of the check hook, which resets
        // and then reads `GUC_check_errcode_value`, `GUC_check_errmsg_string` and
        // `GUC_check_errdetail_string` (the globals the C macros set). The strings are
        // pstrdup'd into the current memory context, which lasts until guc.c has reported
        // them; the C literals are NUL-terminated.
        unsafe {
            pg_sys::GUC_check_errcode(pgrx::PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED as c_int);
            pg_sys::GUC_check_errmsg_string = pg_sys::pstrdup(
                c"fastcopy.extend_method = 'fallocate' needs PostgreSQL 16 or later".as_ptr(),
            );
            pg_sys::GUC_check_errdetail_string = pg_sys::pstrdup(
                c"PostgreSQL 15 extends a relation one zero-filled block per write; use 'auto' or 'zero'."
                    .as_ptr(),
            );
        }
        return false;
    }
    true
}
