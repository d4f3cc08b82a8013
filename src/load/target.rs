//! The table a load writes into: opened and checked as COPY FROM checks it (relation kind,
//! privileges, row-level security, column list), with one converter per input column and the
//! default expressions of the columns the input does not supply.

use super::tuple::Former;
use crate::compat;
use crate::error::{raise, raise_detail, raise_hint};
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
    /// NOT NULL or CHECK constraints to test per row.
    pub has_constraints: bool,
    pub has_indexes: bool,
    pub ti_options: i32,
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
    /// Opens `relid` with RowExclusiveLock and prepares everything a load needs.
    /// `columns` is the optional column list (NULL elements are refused).
    pub fn open(
        relid: pg_sys::Oid,
        columns: Option<&[Option<String>]>,
        with_defaults: bool,
    ) -> Target {
        unsafe {
            let rel = pg_sys::table_open(relid, pg_sys::RowExclusiveLock as i32);
            let relname_str = CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr())
                .to_string_lossy()
                .into_owned();
            let relkind = (*(*rel).rd_rel).relkind as u8;
            match relkind {
                pg_sys::RELKIND_RELATION => {}
                pg_sys::RELKIND_VIEW => wrong_object(&relname_str, "view"),
                pg_sys::RELKIND_MATVIEW => wrong_object(&relname_str, "materialized view"),
                pg_sys::RELKIND_SEQUENCE => wrong_object(&relname_str, "sequence"),
                pg_sys::RELKIND_PARTITIONED_TABLE => not_yet(
                    format!(
                        "fastcopy.load does not support partitioned table \"{relname_str}\" yet"
                    ),
                    "Load into its partitions, or use COPY.",
                ),
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
            let mut indexes: Vec<usize> = Vec::new();
            match columns {
                None => {
                    for i in 0..natts {
                        let a = attr(i);
                        if !a.attisdropped && a.attgenerated == 0 {
                            indexes.push(i);
                        }
                    }
                }
                Some(list) => {
                    for name in list {
                        let Some(name) = name else {
                            raise(
                                PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
                                "column names in columns must not be NULL",
                            );
                        };
                        let found = (0..natts).find(|&i| {
                            !attr(i).attisdropped && att_name(i).to_bytes() == name.as_bytes()
                        });
                        let Some(i) = found else {
                            raise(
                                PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
                                format!(
                                    "column \"{name}\" of relation \"{relname_str}\" does not exist"
                                ),
                            );
                        };
                        if attr(i).attgenerated != 0 {
                            raise_detail(
                                PgSqlErrorCode::ERRCODE_INVALID_COLUMN_REFERENCE,
                                format!("column \"{name}\" is a generated column"),
                                "Generated columns cannot be used in COPY.",
                            );
                        }
                        if indexes.contains(&i) {
                            raise(
                                PgSqlErrorCode::ERRCODE_DUPLICATE_COLUMN,
                                format!("column \"{name}\" specified more than once"),
                            );
                        }
                        indexes.push(i);
                    }
                }
            }

            // Privileges and the executor state, as COPY sets them up.
            let estate = pg_sys::CreateExecutorState();
            let attnums: Vec<i16> = indexes.iter().map(|&i| (i + 1) as i16).collect();
            compat::init_range_table(estate, rel, &attnums);

            // What this loader does not do yet is refused, never half done.
            if !(*rel).trigdesc.is_null() {
                not_yet(
                    format!(
                        "fastcopy.load does not support tables with triggers yet: \"{relname_str}\" has triggers"
                    ),
                    "Foreign keys are implemented as triggers too. Use COPY for this table.",
                );
            }
            let constr = (*tupdesc).constr;
            if !constr.is_null() && (*constr).has_generated_stored {
                not_yet(
                    format!(
                        "fastcopy.load does not support generated columns yet: \"{relname_str}\" has one"
                    ),
                    "Use COPY for this table.",
                );
            }

            let rri = PgBox::<pg_sys::ResultRelInfo>::alloc_node(pg_sys::NodeTag::T_ResultRelInfo)
                .into_pg();
            pg_sys::ExecInitResultRelation(estate, rri, 1);
            pg_sys::ExecOpenIndices(rri, false);
            let econtext = pg_sys::MakePerTupleExprContext(estate);

            let default_expr = |i: usize| -> Option<*mut pg_sys::ExprState> {
                let expr = pg_sys::build_column_default(rel, (i + 1) as i32);
                if expr.is_null() {
                    return None;
                }
                let planned = pg_sys::expression_planner(expr as *mut pg_sys::Expr);
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
                let default = if with_defaults { default_expr(i) } else { None };
                cols.push(Column {
                    index: i,
                    name: att_name(i),
                    conv,
                    default,
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

            let has_constraints =
                !constr.is_null() && ((*constr).has_not_null || (*constr).num_check > 0);
            let mut ti_options = 0;
            if compat::created_in_this_transaction(rel) {
                ti_options |= pg_sys::TABLE_INSERT_SKIP_FSM as i32;
            }
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
                has_constraints,
                has_indexes: (*rri).ri_NumIndices > 0,
                ti_options,
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
            pg_sys::ExecResetTupleTable((*self.estate).es_tupleTable, false);
            pg_sys::ExecCloseResultRelations(self.estate);
            pg_sys::ExecCloseRangeTableRelations(self.estate);
            pg_sys::FreeExecutorState(self.estate);
            pg_sys::table_close(self.rel, pg_sys::NoLock as i32);
        }
    }
}
