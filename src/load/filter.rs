//! COPY's WHERE condition (`where_clause` in `fastcopy.load`, `WHERE` in a COPY statement).
//!
//! [`transform`] does what `DoCopy` does with the statement's condition, at the same point
//! (after the relation is opened, before the column list is looked at): the condition is
//! transformed over the target's columns as a `COPY FROM WHERE` expression (so subqueries,
//! aggregates, window and set-returning functions get the parser's own errors), made boolean,
//! its collations fixed, generated columns (also behind a whole-row reference) refused, then
//! simplified into an implicit AND list. [`Filter`] evaluates it per row as `CopyFrom` does:
//! after conversion and defaults, before partition routing, triggers and constraints, in a
//! slot of the target's own kind with its `tableoid`; a NULL result excludes the row.
//!
//! The text of `where_clause` is parsed by the server's grammar as the condition of a COPY
//! statement, so it is exactly what `COPY … WHERE` accepts, and nothing but one condition: a
//! second statement after it is refused. Error positions in it are reported as positions in
//! the condition (an internal query, as for a SQL statement inside a function).

use super::slot;
use super::spec::WhereClause;
use crate::error::raise;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::{CStr, CString, c_char, c_int, c_void};

/// What the condition's text is parsed inside: only the condition is taken from it.
const PREFIX: &str = "COPY fastcopy_where FROM STDIN WHERE ";

/// A transformed condition, ready to prepare: the implicit-AND list `CopyFrom` prepares.
pub struct Qual {
    list: *mut pg_sys::List,
    /// It calls a volatile function: rows go in one at a time (COPY's `CIM_SINGLE`), so that
    /// it sees every row before its own.
    pub volatile: bool,
}

/// `DoCopy`'s WHERE steps on the relation `rel` (open, locked).
///
/// # Safety
/// Backend thread, in a transaction; `rel` is open; a `Parsed` clause's node and source
/// are the statement's, alive for the statement.
pub unsafe fn transform(rel: pg_sys::Relation, clause: &WhereClause) -> Qual {
    match clause {
        WhereClause::Parsed { node, source } => {
            // SAFETY: as the function's contract. The statement's tree may be a cached plan's,
            // and parse analysis may scribble on a raw tree: it gets a copy (as
            // standard_ProcessUtility copies a read-only tree).
            unsafe {
                let copy = pg_sys::copyObjectImpl(*node as *const c_void) as *mut pg_sys::Node;
                transform_raw(rel, copy, *source)
            }
        }
        WhereClause::Text(text) => {
            let source = CString::new(format!("{PREFIX}{text}")).unwrap_or_else(|_| {
                raise(
                    PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                    "where_clause must not contain a NUL byte",
                )
            });
            let internal = InternalQuery {
                query: CString::new(text.as_str()).unwrap_or_default(),
                offset: PREFIX.len() as c_int,
            };
            let _pushed = PositionInQuery::push(&internal);
            // SAFETY: as the function's contract; the parse tree and the transform's
            // positions refer to `source`, alive until the transform is done.
            unsafe {
                let node = parse_condition(source.as_ptr());
                transform_raw(rel, node, source.as_ptr())
            }
        }
    }
}

/// The condition of `COPY … WHERE <text>`, parsed by the server's grammar.
///
/// # Safety
/// Backend thread; `source` is NUL-terminated.
unsafe fn parse_condition(source: *const c_char) -> *mut pg_sys::Node {
    // SAFETY: as the function's contract; raw_parser returns a List of RawStmt.
    unsafe {
        let list = pg_sys::raw_parser(source, pg_sys::RawParseMode::RAW_PARSE_DEFAULT);
        let one = !list.is_null() && pg_sys::list_length(list) == 1;
        if one {
            let raw = pg_sys::list_nth(list, 0) as *mut pg_sys::RawStmt;
            let stmt = (*raw).stmt;
            if !stmt.is_null() && (*stmt).type_ == pg_sys::NodeTag::T_CopyStmt {
                let copy = stmt as *mut pg_sys::CopyStmt;
                if !(*copy).whereClause.is_null() {
                    return (*copy).whereClause;
                }
            }
        }
        raise(
            PgSqlErrorCode::ERRCODE_SYNTAX_ERROR,
            "where_clause must be a single condition",
        )
    }
}

/// # Safety
/// As [`transform`]; `node` is a raw expression whose locations refer to `source`.
unsafe fn transform_raw(
    rel: pg_sys::Relation,
    node: *mut pg_sys::Node,
    source: *const c_char,
) -> Qual {
    // SAFETY: as the function's contract; these are the parser and planner calls DoCopy
    // makes, on a parse state of our own.
    unsafe {
        let pstate = pg_sys::make_parsestate(std::ptr::null_mut());
        (*pstate).p_sourcetext = source;
        let nsitem = pg_sys::addRangeTableEntryForRelation(
            pstate,
            rel,
            pg_sys::RowExclusiveLock as c_int,
            std::ptr::null_mut(),
            false,
            false,
        );
        pg_sys::addNSItemToQuery(pstate, nsitem, false, true, true);
        let mut expr =
            pg_sys::transformExpr(pstate, node, pg_sys::ParseExprKind::EXPR_KIND_COPY_WHERE);
        expr = pg_sys::coerce_to_boolean(pstate, expr, c"WHERE".as_ptr());
        pg_sys::assign_expr_collations(pstate, expr);
        refuse_generated(rel, expr);
        let volatile = pg_sys::contain_volatile_functions(expr);
        expr = pg_sys::eval_const_expressions(std::ptr::null_mut(), expr);
        let canonical = pg_sys::canonicalize_qual(expr as *mut pg_sys::Expr, false);
        let list = pg_sys::make_ands_implicit(canonical);
        pg_sys::free_parsestate(pstate);
        Qual { list, volatile }
    }
}

/// Generated columns in the condition, also through a whole-row reference, are refused as
/// `DoCopy` refuses them (their values are not computed when the condition is tested).
///
/// # Safety
/// `rel` is open; `expr` is transformed over it (range table index 1).
unsafe fn refuse_generated(rel: pg_sys::Relation, expr: *mut pg_sys::Node) {
    let first = pg_sys::FirstLowInvalidHeapAttributeNumber;
    // SAFETY: as the function's contract.
    unsafe {
        let mut attrs: *mut pg_sys::Bitmapset = std::ptr::null_mut();
        pg_sys::pull_varattnos(expr, 1, &mut attrs);
        let natts = (*(*rel).rd_att).natts;
        // a whole-row reference stands for every column, in column order
        if pg_sys::bms_is_member(-first, attrs) {
            for attno in 1..=natts {
                check_not_generated(rel, attno);
            }
            return;
        }
        let mut i = -1;
        loop {
            i = pg_sys::bms_next_member(attrs, i);
            if i < 0 {
                break;
            }
            // system columns are not generated (and not in the descriptor)
            if i + first > 0 {
                check_not_generated(rel, i + first);
            }
        }
    }
}

/// # Safety
/// `rel` is open; `0 < attno <= natts`.
unsafe fn check_not_generated(rel: pg_sys::Relation, attno: c_int) {
    // SAFETY: as the function's contract.
    unsafe {
        let a = crate::compat::tuple_desc_attr((*rel).rd_att, (attno - 1) as usize);
        if a.attgenerated != 0 {
            let name = CStr::from_ptr(a.attname.data.as_ptr()).to_string_lossy();
            crate::error::raise_detail(
                PgSqlErrorCode::ERRCODE_INVALID_COLUMN_REFERENCE,
                "generated columns are not supported in COPY FROM WHERE conditions",
                format!("Column \"{name}\" is a generated column."),
            );
        }
    }
}

/// The condition, prepared for one load.
pub struct Filter {
    /// NULL when the condition folded to true.
    state: *mut pg_sys::ExprState,
    /// A slot of the target's own kind (`table_slot_create`), as COPY's row slot.
    slot: *mut pg_sys::TupleTableSlot,
    econtext: *mut pg_sys::ExprContext,
    relid: pg_sys::Oid,
}

impl Filter {
    /// # Safety
    /// Backend thread; `rel` is open; `estate` and `econtext` live as long as the filter.
    pub unsafe fn new(
        qual: &Qual,
        rel: pg_sys::Relation,
        estate: *mut pg_sys::EState,
        econtext: *mut pg_sys::ExprContext,
    ) -> Filter {
        // SAFETY: as the function's contract.
        unsafe {
            Filter {
                state: pg_sys::ExecInitQual(qual.list, std::ptr::null_mut()),
                slot: pg_sys::table_slot_create(rel, &mut (*estate).es_tupleTable),
                econtext,
                relid: (*rel).rd_id,
            }
        }
    }

    /// Whether the converted row `datums`/`nulls` passes (`ExecQual`). Out of line, as every
    /// per-row call into PostgreSQL off the short path (see `Loader::load_routed`).
    #[inline(never)]
    pub fn passes(&self, datums: &[pg_sys::Datum], nulls: &[bool]) -> bool {
        if self.state.is_null() {
            return true;
        }
        // SAFETY: the slot's descriptor is the target's, as `datums`/`nulls` (one per
        // attribute); the Datums live in the batch memory until the row is flushed. The
        // expression runs in the per-tuple memory as ExecQual's, through the FFI guard
        // (ExecEvalExpr is an inline function: an ERROR must unwind as a panic).
        unsafe {
            slot::store_values(self.slot, datums, nulls);
            (*self.slot).tts_tableOid = self.relid;
            (*self.econtext).ecxt_scantuple = self.slot;
            let state = self.state;
            let econtext = self.econtext;
            let mut isnull = false;
            let d = pg_sys::ffi::pg_guard_ffi_boundary(|| {
                let old = pg_sys::MemoryContextSwitchTo((*econtext).ecxt_per_tuple_memory);
                let d = ((*state).evalfunc.unwrap())(state, econtext, &mut isnull);
                pg_sys::MemoryContextSwitchTo(old);
                d
            });
            !isnull && d.value() != 0
        }
    }
}

/// The text of `where_clause`, where an error's position is to be shown.
struct InternalQuery {
    query: CString,
    /// Characters of [`PREFIX`] before it in the parsed text.
    offset: c_int,
}

/// [`internal_query_position`] on the error context stack while alive. Popped when dropped,
/// also while an ERROR unwinds the frames (the server's error handling would otherwise find a
/// callback whose argument is gone); the server has called it by then for its own errors.
struct PositionInQuery<'a> {
    cb: Box<pg_sys::ErrorContextCallback>,
    _query: std::marker::PhantomData<&'a InternalQuery>,
}

impl<'a> PositionInQuery<'a> {
    fn push(query: &'a InternalQuery) -> PositionInQuery<'a> {
        // SAFETY: backend thread; the callback's argument is borrowed for the guard's life.
        unsafe {
            let mut cb = Box::new(pg_sys::ErrorContextCallback {
                previous: pg_sys::error_context_stack,
                callback: Some(internal_query_position),
                arg: query as *const InternalQuery as *mut c_void,
            });
            pg_sys::error_context_stack = cb.as_mut();
            PositionInQuery {
                cb,
                _query: std::marker::PhantomData,
            }
        }
    }
}

impl Drop for PositionInQuery<'_> {
    fn drop(&mut self) {
        // SAFETY: backend thread; pops the callback only if it is the top of the stack.
        unsafe {
            if std::ptr::eq(pg_sys::error_context_stack, self.cb.as_mut()) {
                pg_sys::error_context_stack = self.cb.previous;
            }
        }
    }
}

/// While `where_clause` is parsed and transformed: an error with a position in the parsed
/// text gets it as a position in the condition, shown as the internal query (as SPI shows
/// the position in a SQL statement run by a function).
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn internal_query_position(arg: *mut c_void) {
    // SAFETY: `arg` is the InternalQuery `transform` keeps alive while this is pushed;
    // called by errfinish, so the err* setters act on the error being raised.
    unsafe {
        let q = &*(arg as *const InternalQuery);
        let pos = pg_sys::geterrposition();
        if pos > 0 {
            pg_sys::errposition(0);
            pg_sys::internalerrposition((pos - q.offset).max(1));
            pg_sys::internalerrquery(q.query.as_ptr());
        }
    }
}
