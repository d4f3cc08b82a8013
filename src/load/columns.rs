//! The input's columns as the converters see them (`convert.rs`): each input column, its
//! converter (text and CSV fields: a [`TextConverter`]; binary ones: a [`Receive`]), the
//! defaults of the columns the input does not supply, the NULL and DEFAULT
//! markers, and where the values go ([`Columns`], the part of the target the row conversion
//! needs; `Prepared::begin` makes it).

use super::datum::{Chars, typed_for};
use super::receive::Receive;
use super::tuple_plan::Typed;
use pgrx::pg_sys;
use std::ffi::CString;

/// One column the input supplies, in input order.
pub struct Column {
    /// 0-based position in the tuple.
    pub index: usize,
    pub name: CString,
    /// Default expression, when the DEFAULT marker may ask for it (PostgreSQL 16+).
    pub default: Option<*mut pg_sys::ExprState>,
    /// CSV FORCE_NOT_NULL: the NULL marker unquoted is a value, not NULL.
    pub force_not_null: bool,
    /// CSV FORCE_NULL: the NULL marker quoted is NULL too.
    pub force_null: bool,
    /// `on_error => 'set_null'`: the column's type is a domain with constraints, which may
    /// refuse the NULL a bad value would become (asked of its input function then).
    pub constrained_domain: bool,
}

/// A column the input does not supply, filled from its default per row.
pub struct Filler {
    pub index: usize,
    pub expr: *mut pg_sys::ExprState,
}

/// What converting a row needs of its target.
pub struct Columns {
    /// The input's columns, in input order.
    pub columns: Vec<Column>,
    /// Their converters, in the same order: one kind per load, the format's.
    pub converters: Converters,
    /// The columns the input does not supply that have a default.
    pub fillers: Vec<Filler>,
    /// The relation's attributes (a row's values).
    pub natts: usize,
    /// The NULL marker, the value of a FORCE_NOT_NULL column's unquoted marker.
    pub null_marker: CString,
    /// The load has a DEFAULT marker (16+).
    pub default_marker: bool,
    /// The target's short path (`Target::short_path`): text values may go into the batch arena.
    pub short_path: bool,
    /// The executor's per-tuple context: its memory is the batch memory, its expression
    /// context evaluates the defaults.
    pub econtext: *mut pg_sys::ExprContext,
}

impl Columns {
    /// The data is in COPY's binary format (the columns have receive converters).
    #[inline]
    pub fn binary(&self) -> bool {
        matches!(self.converters, Converters::Binary(_))
    }

    /// The text and CSV converters (`None` for binary data).
    #[inline]
    pub fn text(&self) -> Option<&[TextConverter]> {
        match &self.converters {
            Converters::Text(c) => Some(c),
            Converters::Binary(_) => None,
        }
    }

    /// The per-tuple memory context: converted values live here until their batch is inserted.
    #[inline]
    pub fn batch_memory(&self) -> pg_sys::MemoryContext {
        // SAFETY: `econtext` is the estate's per-tuple context, alive until `close`.
        unsafe { (*self.econtext).ecxt_per_tuple_memory }
    }

    /// Evaluates a default expression (in the current memory context). Out of line: the FFI
    /// guard's thread check and `sigsetjmp` would otherwise be inlined into the row loop,
    /// which then paid for the thread-local lookup on every row (hoisted out of the branch).
    #[inline(never)]
    pub fn eval_default(&self, expr: *mut pg_sys::ExprState) -> (pg_sys::Datum, bool) {
        let mut isnull = false;
        // SAFETY: `expr` was built by ExecInitExpr for this load and `econtext` is alive. The
        // call goes through pgrx's FFI guard: ExecEvalExpr is an inline function (not bound),
        // and an ERROR in the expression must unwind as a panic, not longjmp past Rust frames.
        let d = unsafe {
            pg_sys::ffi::pg_guard_ffi_boundary(|| {
                ((*expr).evalfunc.unwrap())(expr, self.econtext, &mut isnull)
            })
        };
        (d, isnull)
    }

    /// The defaults of the columns the input does not supply, into a row's values (in the
    /// current memory context: the batch's).
    #[inline]
    pub fn fill_defaults(&self, datums: &mut [pg_sys::Datum], nulls: &mut [bool]) {
        for f in &self.fillers {
            let (datum, isnull) = self.eval_default(f.expr);
            datums[f.index] = datum;
            nulls[f.index] = isnull;
        }
    }
}

/// The converters of a load's input columns, by format.
pub enum Converters {
    Text(Vec<TextConverter>),
    /// COPY's binary format: each type's receive function, or fastcopy's own reading of it (`receive.rs`).
    Binary(Vec<Receive>),
}

/// How one text or CSV field becomes a Datum.
pub enum TextConverter {
    /// int2/int4/int8: the fastcopy parser, no function-manager call.
    Int2,
    Int4,
    Int8,
    /// Any other type: its input function.
    Input(InputFunction),
}

/// A type's input function, looked up once per load (text, varchar and char values that need
/// nothing but a copy are built without it, `chars`; values of the types the core reads, in
/// the spellings it reads them, too, `typed`).
pub struct InputFunction {
    pub flinfo: Box<pg_sys::FmgrInfo>,
    pub typioparam: pg_sys::Oid,
    pub typmod: i32,
    pub chars: Option<Chars>,
    pub typed: Option<Typed>,
}

impl TextConverter {
    /// The converter for a column of type `typid`.
    pub fn for_type(typid: pg_sys::Oid, typmod: i32) -> TextConverter {
        match typid {
            pg_sys::INT2OID => TextConverter::Int2,
            pg_sys::INT4OID => TextConverter::Int4,
            pg_sys::INT8OID => TextConverter::Int8,
            typid => {
                let mut func = pg_sys::InvalidOid;
                let mut typioparam = pg_sys::InvalidOid;
                // SAFETY: plain catalog lookups on the backend thread; the FmgrInfo is ours
                // (boxed: fmgr_info keeps no pointer to it, and it must not move while in use).
                let flinfo = unsafe {
                    pg_sys::getTypeInputInfo(typid, &mut func, &mut typioparam);
                    let mut flinfo = Box::new(std::mem::zeroed::<pg_sys::FmgrInfo>());
                    pg_sys::fmgr_info(func, flinfo.as_mut());
                    flinfo
                };
                TextConverter::Input(InputFunction {
                    flinfo,
                    typioparam,
                    typmod,
                    chars: Chars::for_type(typid, typmod),
                    typed: typed_for(typid, typmod),
                })
            }
        }
    }
}
