//! The rejects table (`rejects => 'schema.table'`, the COPY option `REJECTS 'name'`, the
//! setting `fastcopy.rejects`): every row the load skips is kept there with what is needed to
//! fix it, in the load's transaction (rolled back with it).
//!
//! What a row is rejected for: a value its input function refuses (as `on_error => 'ignore'`,
//! which a rejects table implies), and what COPY cannot skip: a row with fewer or more fields
//! than columns, a last CSV row whose quote is never closed, a line invalid in its encoding
//! (the decoder skips it, `Options::skip_invalid_lines`), a row that fails its NOT NULL, CHECK
//! or partition constraint (`Loader::keep_rejects`). The error recorded is the one COPY raises
//! for that row alone: the input function's soft error, or, for a value, the conversion done
//! again in a subtransaction with errors raised, and for a constraint the checks' own ERROR,
//! caught (SQLSTATE, message, detail, and the column). Rows are kept in memory
//! and inserted through SPI in one statement per [`FLUSH_AT`] rejects and at the end of the
//! load, between batches (no buffer is locked then).
//!
//! The table, created if missing (as the caller, who needs CREATE on the schema; loads that
//! would create it at once are serialized by an advisory lock on its name), appended to
//! (INSERT on it, else COPY-style 42501):
//! ```sql
//! load_id bigint, load_started timestamptz, relation text, source text, line bigint,
//! byte_offset bigint, column_name text, attnum int, raw_field bytea, raw_line bytea,
//! sqlstate text, message text, detail text, action text
//! ```

use pgrx::prelude::*;

/// Rejects kept in memory before they are inserted.
const FLUSH_AT: usize = 1000;
/// Bytes of a raw line or field kept (longer ones are cut there).
pub const RAW_MAX: usize = 8192;

/// One rejected row.
struct Reject {
    line: i64,
    offset: Option<i64>,
    column: Option<String>,
    attnum: Option<i32>,
    raw_field: Option<Vec<u8>>,
    raw_line: Vec<u8>,
    sqlstate: String,
    message: String,
    detail: Option<String>,
    /// `skipped` (the row is not loaded) or `set_null` (the value was loaded as NULL).
    action: &'static str,
}

/// The rejects table of one load and the rows not yet inserted into it.
pub struct Rejects {
    /// The table's name, quoted and qualified as given.
    table: String,
    load_id: i64,
    started: pgrx::datum::TimestampWithTimeZone,
    relation: String,
    source: String,
    pending: Vec<Reject>,
    /// Rows recorded so far.
    recorded: u64,
}

/// What the error of a rejected row was.
pub struct RejectError {
    pub sqlstate: String,
    pub message: String,
    pub detail: Option<String>,
}

impl Rejects {
    /// Creates the table named `name` if it does not exist (the name as COPY would read a
    /// qualified identifier: `parse_ident`), and draws the load's id.
    pub fn open(name: &str, relid: pg_sys::Oid, source: &str) -> Rejects {
        let table = Spi::get_one_with_args::<String>(
            "SELECT string_agg(quote_ident(p), '.' ORDER BY n) FROM unnest(parse_ident($1)) WITH ORDINALITY AS u(p, n)",
            &[name.into()],
        )
        .ok()
        .flatten()
        .unwrap_or_else(|| {
            crate::error::raise(
                PgSqlErrorCode::ERRCODE_INVALID_NAME,
                format!("invalid rejects table name \"{name}\""),
            )
        });
        // (an existing table is only appended to: CREATE TABLE IF NOT EXISTS would ask for
        // CREATE on its schema all the same)
        let exists = || {
            Spi::get_one_with_args::<bool>(
                "SELECT to_regclass($1) IS NOT NULL",
                &[table.as_str().into()],
            )
            .ok()
            .flatten()
            .unwrap_or(false)
        };
        if exists() {
            return Rejects::with_table(table, relid, source);
        }
        // Two loads that both find no table would both create it, and the second fail on
        // the catalog's unique index: the creation is serialized by a transaction-level
        // advisory lock on the name, and the name looked up again under it (a load that
        // waited finds the table once the first load's transaction has committed).
        Spi::run_with_args(
            "SELECT pg_advisory_xact_lock(hashtext('fastcopy.rejects'), hashtext($1))",
            &[table.as_str().into()],
        )
        .unwrap_or_else(|e| {
            crate::error::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string())
        });
        if exists() {
            return Rejects::with_table(table, relid, source);
        }
        Spi::run(&format!(
            "CREATE TABLE IF NOT EXISTS {table} (
                 load_id bigint NOT NULL, load_started timestamptz NOT NULL,
                 relation text NOT NULL, source text NOT NULL, line bigint, byte_offset bigint,
                 column_name text, attnum int, raw_field bytea, raw_line bytea,
                 sqlstate text NOT NULL, message text NOT NULL, detail text,
                 action text NOT NULL)"
        ))
        .unwrap_or_else(|e| {
            crate::error::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string())
        });
        Rejects::with_table(table, relid, source)
    }

    /// The load's id, start time and relation, for the rows it will append to `table`.
    fn with_table(table: String, relid: pg_sys::Oid, source: &str) -> Rejects {
        let (load_id, started, relation) =
            Spi::get_three_with_args::<i64, pgrx::datum::TimestampWithTimeZone, String>(
                "SELECT nextval('fastcopy.load_id'), statement_timestamp(), $1::regclass::text",
                &[relid.into()],
            )
            .unwrap_or_else(|e| {
                crate::error::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string())
            });
        Rejects {
            table,
            load_id: load_id.unwrap_or_default(),
            started: started.unwrap_or_else(|| {
                crate::error::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, "no statement time")
            }),
            relation: relation.unwrap_or_default(),
            source: source.to_string(),
            pending: Vec::new(),
            recorded: 0,
        }
    }

    /// Keeps one rejected row (`action`: `skipped`, or `set_null` for one value made NULL,
    /// its row loaded): its line number, where it starts in the input (if known) and its raw
    /// line, and where the error is about one value, its column (name and 0-based attribute
    /// index) and raw field.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        action: &'static str,
        line: u64,
        offset: Option<u64>,
        column: Option<(&std::ffi::CStr, usize)>,
        raw_field: Option<&[u8]>,
        raw_line: &[u8],
        error: RejectError,
    ) {
        let cut = |b: &[u8]| b[..b.len().min(RAW_MAX)].to_vec();
        self.recorded += 1;
        self.pending.push(Reject {
            line: line as i64,
            offset: offset.map(|o| o as i64),
            column: column.map(|(c, _)| c.to_string_lossy().into_owned()),
            attnum: column.map(|(_, index)| index as i32 + 1),
            raw_field: raw_field.map(cut),
            raw_line: cut(raw_line),
            sqlstate: error.sqlstate,
            message: error.message,
            detail: error.detail,
            action,
        });
    }

    /// The load's id in the table.
    pub fn load_id(&self) -> i64 {
        self.load_id
    }

    /// The rows recorded (to be) in the table.
    pub fn recorded(&self) -> u64 {
        self.recorded
    }

    /// Inserts what is pending once there is enough of it (between row runs: never inside a
    /// subtransaction that may still be rolled back).
    pub fn flush_if_full(&mut self) {
        if self.pending.len() >= FLUSH_AT {
            self.flush();
        }
    }

    /// Inserts the pending rows, in one statement.
    pub fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let rows = std::mem::take(&mut self.pending);
        let lines: Vec<Option<i64>> = rows.iter().map(|r| Some(r.line)).collect();
        let offsets: Vec<Option<i64>> = rows.iter().map(|r| r.offset).collect();
        let actions: Vec<Option<&str>> = rows.iter().map(|r| Some(r.action)).collect();
        let columns: Vec<Option<String>> = rows.iter().map(|r| r.column.clone()).collect();
        let attnums: Vec<Option<i32>> = rows.iter().map(|r| r.attnum).collect();
        let fields: Vec<Option<Vec<u8>>> = rows.iter().map(|r| r.raw_field.clone()).collect();
        let raw: Vec<Option<Vec<u8>>> = rows.iter().map(|r| Some(r.raw_line.clone())).collect();
        let states: Vec<Option<String>> = rows.iter().map(|r| Some(r.sqlstate.clone())).collect();
        let messages: Vec<Option<String>> = rows.iter().map(|r| Some(r.message.clone())).collect();
        let details: Vec<Option<String>> = rows.iter().map(|r| r.detail.clone()).collect();
        let sql = format!(
            "INSERT INTO {} (load_id, load_started, relation, source, line, byte_offset,
                 column_name, attnum, raw_field, raw_line, sqlstate, message, detail, action)
             SELECT $1, $2, $3, $4, r.line, r.off, r.col, r.attnum, r.field, r.raw, r.state,
                    r.msg, r.detail, r.action
             FROM unnest($5::bigint[], $6::text[], $7::int[], $8::bytea[], $9::bytea[],
                         $10::text[], $11::text[], $12::text[], $13::bigint[], $14::text[])
                  AS r(line, col, attnum, field, raw, state, msg, detail, off, action)",
            self.table
        );
        Spi::run_with_args(
            &sql,
            &[
                self.load_id.into(),
                self.started.into(),
                self.relation.as_str().into(),
                self.source.as_str().into(),
                lines.into(),
                columns.into(),
                attnums.into(),
                fields.into(),
                raw.into(),
                states.into(),
                messages.into(),
                details.into(),
                offsets.into(),
                actions.into(),
            ],
        )
        .unwrap_or_else(|e| {
            crate::error::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string())
        });
    }
}
