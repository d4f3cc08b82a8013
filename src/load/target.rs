//! The table a load writes into: opened and checked as COPY FROM checks it (relation kind,
//! privileges, row-level security, column list, FORCE_(NOT_)NULL columns, FREEZE's rules), with
//! one converter per input column and the default expressions of the columns the input does not
//! supply; and the statement-level executor state COPY sets up around its rows: AFTER trigger
//! queue, transition tables, BEFORE/AFTER STATEMENT triggers, partition routing.

use super::options::LoadOptions;
use super::tuple::Former;
use crate::compat;
use crate::error::{raise, raise_detail, raise_hint};
use fastcopy_core::input::Options;
use pgrx::prelude::*;
use pgrx::{PgMemoryContexts, pg_sys};
use std::ffi::{CStr, CString};

/// How one input field becomes a Datum.
pub enum Converter {
    /// int2/int4/int8: the fastcopy parser, no function-manager call.
    Int2,
    Int4,
    Int8,
    /// Any other type: its input function, looked up once per load.
    Input {
        flinfo: Box<pg_sys::FmgrInfo>,
        typioparam: pg_sys::Oid,
        typmod: i32,
    },
}

/// One column the input supplies, in input order.
pub struct Column {
    /// 0-based position in the tuple.
    pub index: usize,
    pub name: CString,
    pub conv: Converter,
    /// Default expression, when the DEFAULT marker may ask for it (PostgreSQL 16+).
    pub default: Option<*mut pg_sys::ExprState>,
    /// CSV FORCE_NOT_NULL: the NULL marker unquoted is a value, not NULL.
    pub force_not_null: bool,
    /// CSV FORCE_NULL: the NULL marker quoted is NULL too.
    pub force_null: bool,
}

/// A column the input does not supply, filled from its default per row.
pub struct Filler {
    pub index: usize,
    pub expr: *mut pg_sys::ExprState,
}

pub struct Target {
    pub rel: pg_sys::Relation,
    pub relid: pg_sys::Oid,
    /// Forms this relation's tuples.
    pub former: Former,
    pub relname: CString,
    pub estate: *mut pg_sys::EState,
    pub rri: *mut pg_sys::ResultRelInfo,
    pub econtext: *mut pg_sys::ExprContext,
    pub columns: Vec<Column>,
    pub fillers: Vec<Filler>,
    pub natts: usize,
    pub ti_options: i32,
    /// Rows take the short path: tuples formed into batch memory by `former`, no per-row
    /// executor step but constraint checks. False when a BEFORE ROW trigger, a stored generated
    /// column or partition routing must see each row in a slot of its own (`input_slot`).
    pub fast: bool,
    /// A virtual slot over the target's row type: where rows start on the executor path.
    pub input_slot: *mut pg_sys::TupleTableSlot,
    /// Partition routing, when the target is partitioned.
    pub routing: Option<Routing>,
    /// A default expression is volatile: rows are inserted one at a time (COPY's
    /// `volatile_defexprs`).
    pub volatile_defaults: bool,
    /// Transition tables of AFTER triggers (NULL when none).
    pub transition_capture: *mut pg_sys::TransitionCaptureState,
    /// The NULL marker, the value of a FORCE_NOT_NULL column's unquoted marker.
    pub null_marker: CString,
}

/// Tuple routing into the partitions of a partitioned target (COPY's dummy ModifyTableState).
pub struct Routing {
    pub mtstate: *mut pg_sys::ModifyTableState,
    pub proute: *mut pg_sys::PartitionTupleRouting,
}

fn wrong_object(relname: &str, what: &str) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
        format!("cannot copy to {what} \"{relname}\""),
    )
}

fn not_yet(msg: String, detail: &str) -> ! {
    raise_detail(
        PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
        msg,
        detail.to_string(),
    )
}

impl Target {
    /// Opens `relid` with RowExclusiveLock and prepares everything a load with these options
    /// (`reader`: as `options::reader_options` checked them) needs.
    pub fn open(relid: pg_sys::Oid, opts: &LoadOptions, reader: &Options) -> Target {
        unsafe {
            let rel = pg_sys::table_open(relid, pg_sys::RowExclusiveLock as i32);
            let relname_str = CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr())
                .to_string_lossy()
                .into_owned();
            let relkind = (*(*rel).rd_rel).relkind as u8;
            let partitioned = relkind == pg_sys::RELKIND_PARTITIONED_TABLE;
            match relkind {
                pg_sys::RELKIND_RELATION => {}
                pg_sys::RELKIND_VIEW => wrong_object(&relname_str, "view"),
                pg_sys::RELKIND_MATVIEW => wrong_object(&relname_str, "materialized view"),
                pg_sys::RELKIND_SEQUENCE => wrong_object(&relname_str, "sequence"),
                pg_sys::RELKIND_PARTITIONED_TABLE => {}
                pg_sys::RELKIND_FOREIGN_TABLE => not_yet(
                    format!("fastcopy.load does not support foreign table \"{relname_str}\""),
                    "Use COPY.",
                ),
                _ => wrong_object(&relname_str, "non-table relation"),
            }

            // COPY FROM refuses row-level security outright.
            if pg_sys::check_enable_rls(relid, pg_sys::InvalidOid, false)
                == pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
            {
                raise_hint(
                    PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                    "fastcopy.load is not supported with row-level security",
                    "Use INSERT statements instead.",
                );
            }

            let tupdesc = (*rel).rd_att;
            let natts = (*tupdesc).natts as usize;
            let attr = |i: usize| &*(*tupdesc).attrs.as_ptr().add(i);
            let att_name = |i: usize| CStr::from_ptr(attr(i).attname.data.as_ptr()).to_owned();

            // The column list, as COPY's CopyGetAttnums: unknown, duplicate, generated refused.
            let indexes: Vec<usize> = match &opts.columns {
                None => (0..natts)
                    .filter(|&i| !attr(i).attisdropped && attr(i).attgenerated == 0)
                    .collect(),
                Some(list) => attnums(rel, &relname_str, list, "columns"),
            };
            // FORCE_NOT_NULL / FORCE_NULL columns must be among the loaded ones.
            let force = |list: &Option<Vec<Option<String>>>, what: &str| -> Vec<usize> {
                let Some(list) = list else { return Vec::new() };
                let found = attnums(rel, &relname_str, list, what);
                if let Some(&i) = found.iter().find(|i| !indexes.contains(i)) {
                    raise(
                        PgSqlErrorCode::ERRCODE_INVALID_COLUMN_REFERENCE,
                        format!(
                            "{} column \"{}\" not referenced by COPY",
                            what.to_uppercase(),
                            att_name(i).to_string_lossy()
                        ),
                    );
                }
                found
            };
            let force_not_null = force(&opts.force_not_null, "force_not_null");
            let force_null = force(&opts.force_null, "force_null");

            // Privileges and the executor state, as COPY sets them up.
            let estate = pg_sys::CreateExecutorState();
            let attnums: Vec<i16> = indexes.iter().map(|&i| (i + 1) as i16).collect();
            compat::init_range_table(estate, rel, &attnums);

            let rri = PgBox::<pg_sys::ResultRelInfo>::alloc_node(pg_sys::NodeTag::T_ResultRelInfo)
                .into_pg();
            pg_sys::ExecInitResultRelation(estate, rri, 1);
            let constr = (*tupdesc).constr;
            if !partitioned {
                pg_sys::ExecOpenIndices(rri, false);
            }
            let econtext = pg_sys::MakePerTupleExprContext(estate);

            // A volatile default (nextval aside) may look at the rows inserted before it: as
            // COPY, such loads insert one row at a time.
            let volatile_defaults = std::cell::Cell::new(false);
            let default_expr = |i: usize| -> Option<*mut pg_sys::ExprState> {
                let expr = pg_sys::build_column_default(rel, (i + 1) as i32);
                if expr.is_null() {
                    return None;
                }
                let planned = pg_sys::expression_planner(expr as *mut pg_sys::Expr);
                if pg_sys::contain_volatile_functions_not_nextval(planned as *mut pg_sys::Node) {
                    volatile_defaults.set(true);
                }
                Some(pg_sys::ExecInitExpr(planned, std::ptr::null_mut()))
            };

            let mut cols = Vec::with_capacity(indexes.len());
            for &i in &indexes {
                let a = attr(i);
                let conv = match a.atttypid {
                    pg_sys::INT2OID => Converter::Int2,
                    pg_sys::INT4OID => Converter::Int4,
                    pg_sys::INT8OID => Converter::Int8,
                    typid => {
                        let mut func = pg_sys::InvalidOid;
                        let mut typioparam = pg_sys::InvalidOid;
                        pg_sys::getTypeInputInfo(typid, &mut func, &mut typioparam);
                        let mut flinfo = Box::new(std::mem::zeroed::<pg_sys::FmgrInfo>());
                        pg_sys::fmgr_info(func, flinfo.as_mut());
                        Converter::Input {
                            flinfo,
                            typioparam,
                            typmod: a.atttypmod,
                        }
                    }
                };
                // the DEFAULT marker may ask for it (16+)
                let default = reader.default.as_ref().and_then(|_| default_expr(i));
                cols.push(Column {
                    index: i,
                    name: att_name(i),
                    conv,
                    default,
                    force_not_null: force_not_null.contains(&i),
                    force_null: force_null.contains(&i),
                });
            }
            // Defaults for the columns not in the list (identity and serial included).
            let mut fillers = Vec::new();
            for i in 0..natts {
                let a = attr(i);
                if a.attisdropped || a.attgenerated != 0 || indexes.contains(&i) {
                    continue;
                }
                if let Some(expr) = default_expr(i) {
                    fillers.push(Filler { index: i, expr });
                }
            }

            let mut ti_options = 0;
            if !partitioned && compat::created_in_this_transaction(rel) {
                ti_options |= pg_sys::TABLE_INSERT_SKIP_FSM as i32;
            }
            if opts.freeze.unwrap_or(false) {
                ti_options |= check_freeze(rel, partitioned);
            }
            let trig = (*rel).trigdesc;
            let before_row = !trig.is_null() && (*trig).trig_insert_before_row;
            let generated = !constr.is_null() && (*constr).has_generated_stored;

            // Statement-level work before the first row, as CopyFrom: the query level for
            // AFTER triggers, transition tables, BEFORE STATEMENT triggers.
            pg_sys::AfterTriggerBeginQuery();
            let transition_capture =
                pg_sys::MakeTransitionCaptureState(trig, relid, pg_sys::CmdType::CMD_INSERT);
            let routing = partitioned.then(|| {
                let mtstate = PgBox::<pg_sys::ModifyTableState>::alloc_node(
                    pg_sys::NodeTag::T_ModifyTableState,
                )
                .into_pg();
                (*mtstate).ps.plan = std::ptr::null_mut();
                (*mtstate).ps.state = estate;
                (*mtstate).operation = pg_sys::CmdType::CMD_INSERT;
                (*mtstate).mt_nrels = 1;
                (*mtstate).resultRelInfo = rri;
                (*mtstate).rootResultRelInfo = rri;
                (*mtstate).mt_transition_capture = transition_capture;
                Routing {
                    mtstate,
                    proute: compat::exec::ExecSetupPartitionTupleRouting(estate, rel),
                }
            });
            pg_sys::ExecBSInsertTriggers(estate, rri);
            let input_slot = pg_sys::ExecInitExtraTupleSlot(
                estate,
                (*rel).rd_att,
                &raw const pg_sys::TTSOpsVirtual,
            );
            Target {
                rel,
                relid,
                former: Former::new((*rel).rd_att),
                relname: CString::new(relname_str).unwrap(),
                estate,
                rri,
                econtext,
                columns: cols,
                fillers,
                natts,
                ti_options,
                fast: !partitioned && !before_row && !generated,
                input_slot,
                routing,
                volatile_defaults: volatile_defaults.get(),
                transition_capture,
                null_marker: CString::new(reader.null.clone()).unwrap_or_default(),
            }
        }
    }

    /// The per-tuple memory context: converted values live here until their batch is inserted.
    pub fn batch_memory(&self) -> PgMemoryContexts {
        unsafe { PgMemoryContexts::For((*self.econtext).ecxt_per_tuple_memory) }
    }

    /// Closes what `open` opened; the lock stays until the transaction ends, as COPY's.
    pub fn close(self) {
        unsafe {
            pg_sys::ExecASInsertTriggers(self.estate, self.rri, self.transition_capture);
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

/// COPY FREEZE's preconditions (`CopyFrom`); returns the insert option that freezes rows.
unsafe fn check_freeze(rel: pg_sys::Relation, partitioned: bool) -> i32 {
    unsafe {
        if partitioned {
            raise(
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                "cannot perform COPY FREEZE on a partitioned table",
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

/// 0-based attribute indexes of the named columns, as COPY's `CopyGetAttnums`: NULL, unknown,
/// generated and duplicate names refused. `what` names the option in errors.
unsafe fn attnums(
    rel: pg_sys::Relation,
    relname: &str,
    names: &[Option<String>],
    what: &str,
) -> Vec<usize> {
    unsafe {
        let tupdesc = (*rel).rd_att;
        let attr = |i: usize| &*(*tupdesc).attrs.as_ptr().add(i);
        let mut out: Vec<usize> = Vec::with_capacity(names.len());
        for name in names {
            let Some(name) = name else {
                raise(
                    PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
                    format!("column names in {what} must not be NULL"),
                );
            };
            let found = (0..(*tupdesc).natts as usize).find(|&i| {
                !attr(i).attisdropped
                    && CStr::from_ptr(attr(i).attname.data.as_ptr()).to_bytes() == name.as_bytes()
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
}
