//! The table a load writes into, opened and checked in the order COPY checks it, and the
//! statement-level executor state COPY sets up around its rows.
//!
//! Three phases, each a type, in the order of `DoCopy` → `BeginCopyFrom` → `CopyFrom` (the
//! loader parses the options between the first two, and opens the source between the last
//! two, where COPY does):
//! - [`Opened::open`], steps 1-5;
//! - [`Opened::prepare`] into [`Prepared`], steps 7-8;
//! - [`Prepared::begin`] into [`Target`], steps 9-10.
//!
//! The steps:
//! 1. the read-only gate of `standard_ProcessUtility` (parallel mode, recovery);
//! 2. the relation, locked RowExclusiveLock;
//! 3. the column list (`CopyGetAttnums`: unknown, generated, duplicate names);
//! 4. INSERT privileges on the table or the listed columns;
//! 5. row-level security (refused), a read-only transaction (unless a temporary table);
//! 6. the options ([`LoadSpec::parse`]);
//! 7. FORCE_NOT_NULL / FORCE_NULL columns against the column list, the input's encoding
//!    and its conversion (`input/encoding.rs`);
//! 8. one converter per input column, the default expressions;
//! 9. the relation kind, FREEZE's rules;
//! 10. result relation, indexes, AFTER trigger queue, transition tables, BEFORE STATEMENT
//!     triggers, partition routing.

use super::columns::{Column, Columns, Converters, Filler, TextConverter};
use super::common::Front;
use super::datum::Chars;
use super::filter::{self, Filter, Qual};
use super::index_build::Deferred;
use super::input::encoding;
use super::receive::{self, Receive};
use super::row_needs::RowNeeds;
use super::spec::{ForceList, LoadSpec, OnErrorChoice, WhereClause};
use super::tuple::Former;
use super::tuple_plan::FromField;
use crate::compat;
use crate::error::{raise, raise_detail, raise_hint};
use crate::parse::SERVER_GRAMMAR;
use fastcopy_core::pipeline::{IntPlan, IntWidth};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::cell::Cell;
use std::ffi::{CStr, CString};

pub struct Target {
    pub rel: pg_sys::Relation,
    pub relid: pg_sys::Oid,
    /// Forms this relation's tuples.
    pub former: Former,
    pub relname: CString,
    pub estate: *mut pg_sys::EState,
    pub rri: *mut pg_sys::ResultRelInfo,
    /// What converting a row needs: the input columns, the defaults, the markers.
    pub cols: Columns,
    pub ti_options: i32,
    /// Rows take the short path: tuples formed into batch memory by `former`, no per-row
    /// executor step but constraint checks. False when a BEFORE ROW trigger, a stored generated
    /// column or partition routing must see each row in a slot of its own (`input_slot`).
    pub short_path: bool,
    /// A virtual slot over the target's row type: where rows start on the executor path.
    pub input_slot: *mut pg_sys::TupleTableSlot,
    /// Partition routing, when the target is partitioned.
    pub routing: Option<Routing>,
    /// A default expression or the WHERE condition is volatile: rows are inserted one at a
    /// time (COPY's `volatile_defexprs`, and `CIM_SINGLE` for a volatile WHERE).
    pub single_rows: bool,
    /// The WHERE condition.
    pub filter: Option<Filter>,
    /// A view with an INSTEAD OF INSERT row trigger: each row goes to the trigger.
    pub instead_row: bool,
    /// How the input's encoding is checked or converted.
    pub encoding: encoding::Plan,
    /// Transition tables of AFTER triggers (NULL when none).
    pub transition_capture: *mut pg_sys::TransitionCaptureState,
    /// A foreign table: its FDW's BeginForeignInsert ran (EndForeignInsert at `close`).
    pub foreign: bool,
    /// The indexes built at the end of the load, until the target's buffer takes them.
    pub deferred: Cell<Option<Deferred>>,
}

/// Tuple routing into the partitions of a partitioned target (COPY's dummy ModifyTableState).
pub struct Routing {
    pub mtstate: *mut pg_sys::ModifyTableState,
    pub proute: *mut pg_sys::PartitionTupleRouting,
}

/// The relation as COPY has opened it before it looks at the options (steps 1-5).
pub struct Opened {
    rel: pg_sys::Relation,
    relname: String,
    /// 0-based indexes of the input columns, in input order.
    indexes: Vec<usize>,
    estate: *mut pg_sys::EState,
    qual: Option<Qual>,
}

impl Opened {
    /// Opens `relid` for a load of `columns` (NULL: all but generated ones) and checks it as
    /// COPY does before it looks at the options (steps 1-5, after [`copy_gate`]).
    pub fn open(
        relid: pg_sys::Oid,
        columns: Option<&[Option<String>]>,
        where_clause: Option<&WhereClause>,
        front: Front,
    ) -> Opened {
        // SAFETY: backend thread, inside a transaction (a SQL function call or a COPY
        // statement); the relation stays open and locked for the rest of the load; a parsed
        // WHERE clause is the statement's.
        unsafe { open_checked(relid, columns, where_clause, front) }
    }

    /// Steps 7-8, with the options parsed: the FORCE lists against the column list, the
    /// input's encoding and its conversion, one converter per input column, the defaults.
    pub fn prepare(self, spec: &LoadSpec) -> Prepared {
        // SAFETY: the relation is open and locked, `estate` its executor state (`open`).
        unsafe { prepare(self, spec) }
    }
}

/// The input columns and the encoding plan ready (steps 7-8): where COPY's `BeginCopyFrom`
/// opens the file or tells the client to send, and then [`Prepared::begin`].
pub struct Prepared {
    opened: Opened,
    econtext: *mut pg_sys::ExprContext,
    columns: Vec<Column>,
    converters: Converters,
    fillers: Vec<Filler>,
    /// How the input's encoding is checked or converted.
    pub encoding: encoding::Plan,
    /// A default expression is volatile.
    volatile_defaults: bool,
}

impl Prepared {
    /// The number of input columns (the binary format's field count, the CopyInResponse's).
    pub fn input_columns(&self) -> usize {
        self.columns.len()
    }

    /// Steps 9-10, as `CopyFrom` begins: the relation kind, FREEZE's rules, the result
    /// relation and its indexes, the AFTER trigger queue, transition tables, BEFORE
    /// STATEMENT triggers, partition routing.
    pub fn begin(self, relid: pg_sys::Oid, spec: &LoadSpec) -> Target {
        // SAFETY: as `prepare`: the relation is open and locked, `estate` its executor state.
        unsafe { begin(relid, self, spec) }
    }
}

impl Target {
    /// The per-tuple memory context: converted values live here until their batch is inserted.
    #[inline]
    pub fn batch_memory(&self) -> pg_sys::MemoryContext {
        self.cols.batch_memory()
    }

    /// The int fields the reader thread converts (`None` when there are none): not those whose
    /// raw field FORCE_(NOT_)NULL must see first.
    pub fn int_plan(&self) -> Option<IntPlan> {
        let fields = match &self.cols.converters {
            // (binary: read by fastcopy itself, if it is an int)
            Converters::Binary(receives) => receives.iter().map(Receive::int_width).collect(),
            Converters::Text(converters) => (self.cols.columns.iter().zip(converters))
                .map(|(c, conv)| match conv {
                    _ if c.force_null || c.force_not_null => None,
                    TextConverter::Int2 => Some(IntWidth::I16),
                    TextConverter::Int4 => Some(IntWidth::I32),
                    TextConverter::Int8 => Some(IntWidth::I64),
                    TextConverter::Input(_) => None,
                })
                .collect(),
        };
        // (a plan without int fields too when the reader forms the tuples: a table of text, of
        // uuids, of bytea values)
        let plan = self.with_tuples(IntPlan {
            fields,
            grammar: SERVER_GRAMMAR,
            binary: self.cols.binary(),
            tuple: None,
        });
        (plan.tuple.is_some() || plan.fields.iter().any(Option::is_some)).then_some(plan)
    }

    /// The plan, and the reader forms the tuples too when each of the table's columns is an int
    /// field of the plan or a `text`, `varchar` or `char` field (text or CSV, no FORCE_NULL /
    /// FORCE_NOT_NULL) and a
    /// row needs nothing else before its tuple is formed: the short path, no WHERE, no column
    /// filled by a default (then the tuple is all the loader would make of the row:
    /// [`Former::tuple_plan`](super::tuple::Former::tuple_plan)).
    fn with_tuples(&self, mut plan: IntPlan) -> IntPlan {
        if !self.cols.short_path
            || self.filter.is_some()
            || !self.cols.fillers.is_empty()
            || self.single_rows
        {
            return plan;
        }
        let mut sources = vec![None; self.cols.natts];
        for (field, (col, width)) in self.cols.columns.iter().zip(&plan.fields).enumerate() {
            // (text and binary columns: what the reader may take of their values)
            let (chars, typed) = match &self.cols.converters {
                Converters::Text(c) => match &c[field] {
                    TextConverter::Input(f) => (f.chars, f.typed),
                    _ => (None, None),
                },
                Converters::Binary(r) => (r[field].chars, r[field].typed),
            };
            let forced = col.force_null || col.force_not_null;
            let source = match (width, chars, typed) {
                (Some(IntWidth::I16), ..) => FromField::Int { field, width: 2 },
                (Some(IntWidth::I32), ..) => FromField::Int { field, width: 4 },
                (Some(IntWidth::I64), ..) => FromField::Int { field, width: 8 },
                (None, Some(chars), _) if !forced => match chars {
                    Chars::Bpchar(n) => FromField::Padded { field, n },
                    Chars::Varchar(n) => FromField::Text {
                        field,
                        max: Some(n),
                    },
                    Chars::Any => FromField::Text { field, max: None },
                },
                (None, None, Some(kind)) if !forced => FromField::Typed { field, kind },
                _ => return plan,
            };
            if let Some(slot) = sources.get_mut(col.index) {
                *slot = Some(source);
            }
        }
        plan.tuple = self
            .former
            .tuple_plan(&sources, self.cols.columns.len(), self.cols.binary());
        plan
    }

    /// What HEADER MATCH compares the header with: the input columns' names and whether the
    /// DEFAULT marker may stand in their field.
    pub fn header_match(&self) -> fastcopy_core::input::HeaderMatch {
        fastcopy_core::input::HeaderMatch {
            names: self
                .cols
                .columns
                .iter()
                .map(|c| c.name.as_bytes().to_vec())
                .collect(),
            has_default: self
                .cols
                .columns
                .iter()
                .map(|c| c.default.is_some())
                .collect(),
        }
    }

    /// Closes what `open` opened: AFTER STATEMENT triggers, the queued AFTER ROW triggers
    /// (foreign key checks); the lock stays until the transaction ends, as COPY's.
    pub fn close(self) {
        // SAFETY: the executor state `open` built, used by nothing after this.
        unsafe {
            // no row came: the indexes are as they were
            if let Some(d) = self.deferred.take() {
                d.put_back();
            }
            pg_sys::ExecASInsertTriggers(self.estate, self.rri, self.transition_capture);
            if self.foreign
                && let Some(end) = (*(*self.rri).ri_FdwRoutine).EndForeignInsert
            {
                pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| end(self.estate, self.rri));
            }
            pg_sys::AfterTriggerEndQuery(self.estate);
            pg_sys::ExecResetTupleTable((*self.estate).es_tupleTable, false);
            if let Some(r) = &self.routing {
                compat::exec::ExecCleanupTupleRouting(r.mtstate, r.proute);
            }
            pg_sys::ExecCloseResultRelations(self.estate);
            pg_sys::ExecCloseRangeTableRelations(self.estate);
            pg_sys::FreeExecutorState(self.estate);
            pg_sys::table_close(self.rel, pg_sys::NoLock as i32);
        }
    }
}

/// What `standard_ProcessUtility` checks before COPY runs: COPY FROM is "OK in a read-only
/// transaction" for it (into a temporary table), so in read-only states it refuses only
/// parallel mode and recovery here; `open_checked` refuses the rest as `DoCopy`.
pub fn copy_gate() {
    // SAFETY: backend thread; both functions raise COPY's errors or return.
    unsafe {
        if pg_sys::XactReadOnly || pg_sys::IsInParallelMode() {
            pg_sys::PreventCommandIfParallelMode(c"COPY".as_ptr());
            pg_sys::PreventCommandDuringRecovery(c"COPY".as_ptr());
        }
    }
}

/// Steps 1-5.
///
/// # Safety
/// Backend thread, in a transaction.
unsafe fn open_checked(
    relid: pg_sys::Oid,
    columns: Option<&[Option<String>]>,
    where_clause: Option<&WhereClause>,
    front: Front,
) -> Opened {
    // SAFETY: as the function's contract; the relation opened here stays open for the load.
    unsafe {
        let rel = pg_sys::table_open(relid, pg_sys::RowExclusiveLock as i32);
        let relname = CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr())
            .to_string_lossy()
            .into_owned();
        // the WHERE condition before the column list, as DoCopy
        let qual = where_clause.map(|w| filter::transform(rel, w));
        let tupdesc = (*rel).rd_att;
        let natts = (*tupdesc).natts as usize;
        let indexes: Vec<usize> = match columns {
            None => (0..natts)
                .filter(|&i| {
                    let a = compat::tuple_desc_attr(tupdesc, i);
                    !a.attisdropped && a.attgenerated == 0
                })
                .collect(),
            Some(list) => attnums(rel, &relname, list, "columns"),
        };
        let estate = pg_sys::CreateExecutorState();
        let attnos: Vec<i16> = indexes.iter().map(|&i| (i + 1) as i16).collect();
        compat::init_range_table(estate, rel, &attnos);
        if pg_sys::check_enable_rls(relid, pg_sys::InvalidOid, false)
            == pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
        {
            let msg = match front {
                Front::Function => "fastcopy.load is not supported with row-level security",
                Front::Statement => "COPY FROM not supported with row-level security",
            };
            raise_hint(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                msg,
                "Use INSERT statements instead.",
            );
        }
        if !(*rel).rd_islocaltemp {
            pg_sys::PreventCommandIfReadOnly(c"COPY FROM".as_ptr());
        }
        Opened {
            rel,
            relname,
            indexes,
            estate,
            qual,
        }
    }
}

/// Steps 7-8.
///
/// # Safety
/// As `open_checked`; `opened` came from it.
unsafe fn prepare(opened: Opened, spec: &LoadSpec) -> Prepared {
    // SAFETY: as the function's contract: the relation is open and locked, `estate` is its
    // executor state.
    unsafe {
        let econtext = pg_sys::MakePerTupleExprContext(opened.estate);
        let mut defaults = Defaults {
            rel: opened.rel,
            volatile: false,
        };
        let (columns, converters, fillers, encoding) = input_columns(
            opened.rel,
            &opened.relname,
            &opened.indexes,
            spec,
            &mut defaults,
        );
        Prepared {
            opened,
            econtext,
            columns,
            converters,
            fillers,
            encoding,
            volatile_defaults: defaults.volatile,
        }
    }
}

/// Steps 9-10.
///
/// # Safety
/// As `prepare`; `prepared` came from it.
unsafe fn begin(relid: pg_sys::Oid, prepared: Prepared, spec: &LoadSpec) -> Target {
    // SAFETY: as the function's contract: the relation is open and locked, `estate` is its
    // executor state.
    unsafe {
        let Prepared {
            opened:
                Opened {
                    rel,
                    relname,
                    indexes: _,
                    estate,
                    qual,
                },
            econtext,
            columns,
            converters,
            fillers,
            encoding,
            volatile_defaults,
        } = prepared;
        let relkind = (*(*rel).rd_rel).relkind as u8;
        let trig = (*rel).trigdesc;
        let instead_row = !trig.is_null() && (*trig).trig_insert_instead_row;
        check_relkind(relkind, instead_row, &relname);
        let partitioned = relkind == pg_sys::RELKIND_PARTITIONED_TABLE;
        let ti_options = insert_options(rel, partitioned, spec.freeze);
        let rri =
            PgBox::<pg_sys::ResultRelInfo>::alloc_node(pg_sys::NodeTag::T_ResultRelInfo).into_pg();
        pg_sys::ExecInitResultRelation(estate, rri, 1);
        let foreign = relkind == pg_sys::RELKIND_FOREIGN_TABLE;
        if foreign {
            compat::check_valid_insert_target(rri);
        }
        if !partitioned {
            pg_sys::ExecOpenIndices(rri, false);
        }
        // (the rows' needs as the target's own buffer reads them: the short path is for a
        // relation whose rows need no executor step before they are formed)
        let needs = RowNeeds::of(rri);
        let (transition_capture, routing, foreign) =
            begin_statement(estate, rel, rri, relid, partitioned, foreign);
        let input_slot =
            pg_sys::ExecInitExtraTupleSlot(estate, (*rel).rd_att, &raw const pg_sys::TTSOpsVirtual);
        let null_marker = spec.reader().map(|r| r.null.clone()).unwrap_or_default();
        let default_marker = spec.reader().is_some_and(|r| r.default.is_some());
        let filter = qual.as_ref().map(|q| Filter::new(q, rel, estate, econtext));
        let short_path =
            !partitioned && !needs.before_row && !needs.generated && !instead_row && !foreign;
        let single_rows = volatile_defaults || qual.as_ref().is_some_and(|q| q.volatile);
        let deferred = Deferred::plan(rri, short_path && !single_rows);
        Target {
            rel,
            relid,
            former: Former::new((*rel).rd_att),
            relname: CString::new(relname).unwrap_or_default(),
            estate,
            rri,
            cols: Columns {
                columns,
                converters,
                fillers,
                natts: (*(*rel).rd_att).natts as usize,
                null_marker: CString::new(null_marker).unwrap_or_default(),
                default_marker,
                short_path,
                econtext,
            },
            ti_options,
            short_path,
            foreign,
            input_slot,
            routing,
            single_rows,
            filter,
            instead_row,
            encoding,
            transition_capture,
            deferred: Cell::new(deferred),
        }
    }
}

/// The table AM's insert options, as CopyFrom sets them: no free space map for a table made
/// in this transaction, frozen rows with FREEZE (checked as COPY checks it).
///
/// # Safety
/// `rel` is open.
unsafe fn insert_options(rel: pg_sys::Relation, partitioned: bool, freeze: bool) -> i32 {
    let mut ti_options = 0;
    // SAFETY: as the function's contract.
    unsafe {
        if !partitioned && compat::created_in_this_transaction(rel) {
            ti_options |= pg_sys::TABLE_INSERT_SKIP_FSM as i32;
        }
        if freeze {
            ti_options |= check_freeze(rel, partitioned);
        }
    }
    ti_options
}

/// Statement-level work before the first row, as CopyFrom: the query level for AFTER
/// triggers, transition tables, partition routing, a foreign table's FDW readied, BEFORE
/// STATEMENT triggers. Returns the transition capture state, the routing of a partitioned
/// table, and whether the FDW was readied.
///
/// # Safety
/// `rel` is open and `rri` its result relation in `estate`.
unsafe fn begin_statement(
    estate: *mut pg_sys::EState,
    rel: pg_sys::Relation,
    rri: *mut pg_sys::ResultRelInfo,
    relid: pg_sys::Oid,
    partitioned: bool,
    foreign: bool,
) -> (*mut pg_sys::TransitionCaptureState, Option<Routing>, bool) {
    // SAFETY: as the function's contract; on the backend thread, as CopyFrom makes these.
    unsafe {
        pg_sys::AfterTriggerBeginQuery();
        let trig = (*rel).trigdesc;
        let transition_capture =
            pg_sys::MakeTransitionCaptureState(trig, relid, pg_sys::CmdType::CMD_INSERT);
        let routing = partitioned.then(|| routing(estate, rel, rri, transition_capture));
        let fdw_state = foreign.then(|| begin_foreign_insert(estate, rri, transition_capture));
        pg_sys::ExecBSInsertTriggers(estate, rri);
        (transition_capture, routing, fdw_state.is_some())
    }
}

/// A foreign table's FDW readied for the rows (its own ModifyTableState, as COPY's); rows go
/// to it one at a time (COPY's single-row mode; 16+ COPY batches them when the server's
/// batch_size is over 1, with the same rows as the result).
///
/// # Safety
/// `rri` is the foreign table's result relation in `estate`.
unsafe fn begin_foreign_insert(
    estate: *mut pg_sys::EState,
    rri: *mut pg_sys::ResultRelInfo,
    transition_capture: *mut pg_sys::TransitionCaptureState,
) -> *mut pg_sys::ModifyTableState {
    // SAFETY: as the function's contract; the FDW's callback through pgrx's FFI guard.
    unsafe {
        let mtstate = modify_table_state(estate, rri, transition_capture);
        let fdw = (*rri).ri_FdwRoutine;
        if let Some(begin) = (*fdw).BeginForeignInsert {
            pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| begin(mtstate, rri));
        }
        (*rri).ri_BatchSize = 1;
        mtstate
    }
}

/// Steps 7-8: the input columns (FORCE_* checked against them, a converter each, the
/// default the DEFAULT marker may ask for) and the defaults of the columns not in the list
/// (identity and serial included).
///
/// # Safety
/// `rel` is open; `indexes` are its attributes.
unsafe fn input_columns(
    rel: pg_sys::Relation,
    relname: &str,
    indexes: &[usize],
    spec: &LoadSpec,
    defaults: &mut Defaults,
) -> (Vec<Column>, Converters, Vec<Filler>, encoding::Plan) {
    // SAFETY: as the function's contract.
    unsafe {
        let force_not_null = force_list(
            rel,
            relname,
            &spec.force_not_null,
            indexes,
            "force_not_null",
        );
        let force_null = force_list(rel, relname, &spec.force_null, indexes, "force_null");
        // the input's encoding and its conversion are looked up here, as in BeginCopyFrom
        let encoding = encoding::plan(spec.encoding, spec.binary());
        if spec.binary() {
            receive::check_all_attributes(rel);
        }
        let tupdesc = (*rel).rd_att;
        let with_marker = spec.reader().is_some_and(|r| r.default.is_some());
        let (mut text, mut binary) = (Vec::new(), Vec::new());
        let columns = indexes
            .iter()
            .map(|&i| {
                let a = compat::tuple_desc_attr(tupdesc, i);
                if spec.binary() {
                    binary.push(Receive::for_type(a.atttypid, a.atttypmod));
                } else {
                    text.push(TextConverter::for_type(a.atttypid, a.atttypmod));
                }
                Column {
                    index: i,
                    name: CStr::from_ptr(a.attname.data.as_ptr()).to_owned(),
                    default: if with_marker { defaults.expr(i) } else { None },
                    force_not_null: force_not_null.contains(&i),
                    force_null: force_null.contains(&i),
                    constrained_domain: spec.on_error == OnErrorChoice::SetNull
                        && pg_sys::DomainHasConstraints(a.atttypid),
                }
            })
            .collect();
        let fillers = (0..(*tupdesc).natts as usize)
            .filter(|i| {
                let a = compat::tuple_desc_attr(tupdesc, *i);
                !a.attisdropped && a.attgenerated == 0 && !indexes.contains(i)
            })
            .filter_map(|index| defaults.expr(index).map(|expr| Filler { index, expr }))
            .collect();
        let converters = match spec.binary() {
            true => Converters::Binary(binary),
            false => Converters::Text(text),
        };
        (columns, converters, fillers, encoding)
    }
}

/// Default expressions of the relation's columns, planned and ready to evaluate.
struct Defaults {
    rel: pg_sys::Relation,
    /// A default is volatile (nextval aside): it may look at the rows inserted before it, so
    /// as in COPY such loads insert one row at a time.
    volatile: bool,
}

impl Defaults {
    /// # Safety
    /// `self.rel` is open; `i < natts`; the current memory context outlives the load (the
    /// function call's).
    unsafe fn expr(&mut self, i: usize) -> Option<*mut pg_sys::ExprState> {
        // SAFETY: as the function's contract.
        unsafe {
            let expr = pg_sys::build_column_default(self.rel, (i + 1) as i32);
            if expr.is_null() {
                return None;
            }
            let planned = pg_sys::expression_planner(expr as *mut pg_sys::Expr);
            if pg_sys::contain_volatile_functions_not_nextval(planned as *mut pg_sys::Node) {
                self.volatile = true;
            }
            Some(pg_sys::ExecInitExpr(planned, std::ptr::null_mut()))
        }
    }
}

/// COPY's dummy ModifyTableState and tuple routing for a partitioned target.
///
/// # Safety
/// `estate`, `rel`, `rri` as `prepare` made them.
unsafe fn routing(
    estate: *mut pg_sys::EState,
    rel: pg_sys::Relation,
    rri: *mut pg_sys::ResultRelInfo,
    transition_capture: *mut pg_sys::TransitionCaptureState,
) -> Routing {
    // SAFETY: as the function's contract.
    unsafe {
        Routing {
            mtstate: modify_table_state(estate, rri, transition_capture),
            proute: compat::exec::ExecSetupPartitionTupleRouting(estate, rel),
        }
    }
}

/// COPY's dummy ModifyTableState (for tuple routing and FDWs): an INSERT into `rri`.
///
/// # Safety
/// `estate` and `rri` as `prepare` made them.
unsafe fn modify_table_state(
    estate: *mut pg_sys::EState,
    rri: *mut pg_sys::ResultRelInfo,
    transition_capture: *mut pg_sys::TransitionCaptureState,
) -> *mut pg_sys::ModifyTableState {
    // SAFETY: as the function's contract; the node is fresh and ours to fill.
    unsafe {
        let mtstate =
            PgBox::<pg_sys::ModifyTableState>::alloc_node(pg_sys::NodeTag::T_ModifyTableState)
                .into_pg();
        (*mtstate).ps.plan = std::ptr::null_mut();
        (*mtstate).ps.state = estate;
        (*mtstate).operation = pg_sys::CmdType::CMD_INSERT;
        (*mtstate).mt_nrels = 1;
        (*mtstate).resultRelInfo = rri;
        (*mtstate).rootResultRelInfo = rri;
        (*mtstate).mt_transition_capture = transition_capture;
        mtstate
    }
}

fn wrong_object(relname: &str, what: &str) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
        format!("cannot copy to {what} \"{relname}\""),
    )
}

/// CopyFrom's relation kinds: tables, partitioned tables, foreign tables and views with an
/// INSTEAD OF INSERT row trigger are loaded, the rest refused.
fn check_relkind(relkind: u8, instead_row: bool, relname: &str) {
    match relkind {
        pg_sys::RELKIND_RELATION
        | pg_sys::RELKIND_PARTITIONED_TABLE
        | pg_sys::RELKIND_FOREIGN_TABLE => {}
        _ if instead_row => {}
        pg_sys::RELKIND_VIEW => raise_hint(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!("cannot copy to view \"{relname}\""),
            "To enable copying to a view, provide an INSTEAD OF INSERT trigger.",
        ),
        pg_sys::RELKIND_MATVIEW => wrong_object(relname, "materialized view"),
        pg_sys::RELKIND_SEQUENCE => wrong_object(relname, "sequence"),
        _ => wrong_object(relname, "non-table relation"),
    }
}

/// COPY FREEZE's preconditions (`CopyFrom`); returns the insert option that freezes rows.
///
/// # Safety
/// `rel` is open.
unsafe fn check_freeze(rel: pg_sys::Relation, partitioned: bool) -> i32 {
    // SAFETY: as the function's contract.
    unsafe {
        if partitioned {
            raise(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                "cannot perform COPY FREEZE on a partitioned table",
            );
        }
        // (18; before it, a foreign table fails the subtransaction check below, unless it was
        // created in this one: then its FDW gets the rows as usual)
        if (*(*rel).rd_rel).relkind as u8 == pg_sys::RELKIND_FOREIGN_TABLE
            && compat::server_major() >= 18
        {
            raise(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                "cannot perform COPY FREEZE on a foreign table",
            );
        }
        // The catalog snapshot is not a prior snapshot of the caller's (as in CopyFrom).
        pg_sys::InvalidateCatalogSnapshot();
        if !pg_sys::ThereAreNoPriorRegisteredSnapshots() || !pg_sys::ThereAreNoReadyPortals() {
            raise(
                PgSqlErrorCode::ERRCODE_INVALID_TRANSACTION_STATE,
                "cannot perform COPY FREEZE because of prior transaction activity",
            );
        }
        if !compat::new_in_current_subtransaction(rel) {
            raise(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                "cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction",
            );
        }
        pg_sys::TABLE_INSERT_FROZEN as i32
    }
}

/// FORCE_NOT_NULL / FORCE_NULL: the named columns (as `attnums`), each one among the loaded
/// columns `indexes`, as BeginCopyFrom checks them.
///
/// # Safety
/// `rel` is open.
unsafe fn force_list(
    rel: pg_sys::Relation,
    relname: &str,
    list: &ForceList,
    indexes: &[usize],
    what: &str,
) -> Vec<usize> {
    let names = match list {
        // `*`: every input column, nothing to check
        ForceList::All => return indexes.to_vec(),
        ForceList::Columns(names) if names.is_empty() => return Vec::new(),
        ForceList::Columns(names) => names,
    };
    // SAFETY: as the function's contract.
    let found = unsafe { attnums(rel, relname, names, what) };
    if let Some(&i) = found.iter().find(|i| !indexes.contains(i)) {
        // SAFETY: `i` is an attribute of `rel`.
        let name = unsafe {
            CStr::from_ptr(
                compat::tuple_desc_attr((*rel).rd_att, i)
                    .attname
                    .data
                    .as_ptr(),
            )
        };
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_COLUMN_REFERENCE,
            format!(
                "{} column \"{}\" not referenced by COPY",
                what.to_uppercase(),
                name.to_string_lossy()
            ),
        );
    }
    found
}

/// 0-based attribute indexes of the named columns, as COPY's `CopyGetAttnums`: NULL, unknown,
/// generated and duplicate names refused. `what` names the option in errors.
///
/// # Safety
/// `rel` is open.
unsafe fn attnums(
    rel: pg_sys::Relation,
    relname: &str,
    names: &[Option<String>],
    what: &str,
) -> Vec<usize> {
    // SAFETY: as the function's contract.
    let tupdesc = unsafe { (*rel).rd_att };
    // SAFETY: i < natts below.
    let attr = |i: usize| unsafe { compat::tuple_desc_attr(tupdesc, i) };
    // SAFETY: a valid descriptor.
    let natts = unsafe { (*tupdesc).natts } as usize;
    let mut out: Vec<usize> = Vec::with_capacity(names.len());
    for name in names {
        let Some(name) = name else {
            raise(
                PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
                format!("column names in {what} must not be NULL"),
            );
        };
        let found = (0..natts).find(|&i| {
            // SAFETY: attname is a NUL-terminated NameData.
            let n = unsafe { CStr::from_ptr(attr(i).attname.data.as_ptr()) };
            !attr(i).attisdropped && n.to_bytes() == name.as_bytes()
        });
        let Some(i) = found else {
            raise(
                PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
                format!("column \"{name}\" of relation \"{relname}\" does not exist"),
            );
        };
        if attr(i).attgenerated != 0 {
            raise_detail(
                PgSqlErrorCode::ERRCODE_INVALID_COLUMN_REFERENCE,
                format!("column \"{name}\" is a generated column"),
                "Generated columns cannot be used in COPY.",
            );
        }
        if out.contains(&i) {
            raise(
                PgSqlErrorCode::ERRCODE_DUPLICATE_COLUMN,
                format!("column \"{name}\" specified more than once"),
            );
        }
        out.push(i);
    }
    out
}
