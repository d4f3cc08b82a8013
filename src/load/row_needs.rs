//! What every row of one result relation needs on its way into the relation, read once from
//! the relation: the one place that decides it, for the target (`target.rs`: whether rows can
//! take the short path) and for each insert buffer (`buffer.rs`: which checks and steps each
//! row gets). Depends on nothing in `src/load`.

use crate::compat;
use pgrx::pg_sys;

/// The facts about a result relation that decide a row's steps.
pub(super) struct RowNeeds {
    /// A foreign table's FDW inserts the rows (NULL: a heap).
    pub foreign: *mut pg_sys::FdwRoutine,
    /// BEFORE ROW INSERT triggers.
    pub before_row: bool,
    /// AFTER ROW INSERT triggers or a transition table of the relation's own triggers.
    pub after_row: bool,
    pub has_indexes: bool,
    /// Stored generated columns, computed per row.
    pub generated: bool,
    /// NOT NULL or CHECK constraints to test per row (COPY tests them in heap tables only).
    pub has_constraints: bool,
    /// The constraints are NOT NULL constraints of stored columns only (no CHECK constraint,
    /// no virtual generated column): `ExecConstraints` can fail only for a row with a NULL in
    /// one of `not_null`, so a tuple without one skips it.
    pub not_null_only: bool,
    /// The attributes (0-based, ascending) with a NOT NULL constraint.
    pub not_null: Vec<u16>,
    /// The relation is a partition (its partition constraint may need a test per row).
    pub is_partition: bool,
}

impl RowNeeds {
    /// Read from `rri` (its indexes opened already, where it has any).
    ///
    /// # Safety
    /// `rri` is an initialized result relation of an open, locked relation; backend thread.
    pub(super) unsafe fn of(rri: *mut pg_sys::ResultRelInfo) -> RowNeeds {
        // SAFETY: as the function's contract: the result relation and its relation are open.
        unsafe {
            let rel = (*rri).ri_RelationDesc;
            // (tuple routing began a foreign partition's insert, as for COPY)
            let foreign = (*rri).ri_FdwRoutine;
            let trig = (*rri).ri_TrigDesc;
            let constr = (*(*rel).rd_att).constr;
            RowNeeds {
                foreign,
                before_row: !trig.is_null() && (*trig).trig_insert_before_row,
                after_row: !trig.is_null()
                    && ((*trig).trig_insert_after_row || (*trig).trig_insert_new_table),
                // (an index built at the end of the load is out of the list: `index_build.rs`)
                has_indexes: (0..(*rri).ri_NumIndices as usize)
                    .any(|i| !(*(*rri).ri_IndexRelationDescs.add(i)).is_null()),
                generated: !constr.is_null() && (*constr).has_generated_stored,
                has_constraints: foreign.is_null()
                    && !constr.is_null()
                    && ((*constr).has_not_null || (*constr).num_check > 0),
                not_null_only: foreign.is_null()
                    && !constr.is_null()
                    && (*(*rel).rd_rel).relchecks == 0
                    && !has_virtual_columns((*rel).rd_att),
                not_null: not_null_attributes((*rel).rd_att),
                is_partition: (*(*rel).rd_rel).relispartition,
            }
        }
    }
}

/// Whether a column of `desc` is a virtual generated column (18: stored as NULL, its NOT NULL
/// constraint checked by evaluating its expression).
///
/// # Safety
/// `desc` is the descriptor of an open relation.
unsafe fn has_virtual_columns(desc: pg_sys::TupleDesc) -> bool {
    // SAFETY: as the function's contract; every index is below `natts`.
    unsafe {
        (0..(*desc).natts as usize)
            .any(|i| compat::tuple_desc_attr(desc, i).attgenerated as u8 == b'v')
    }
}

/// The attributes of `desc` (0-based) with a NOT NULL constraint (`attnotnull`, which
/// `ExecConstraints` tests).
///
/// # Safety
/// `desc` is the descriptor of an open relation.
unsafe fn not_null_attributes(desc: pg_sys::TupleDesc) -> Vec<u16> {
    // SAFETY: as the function's contract; every index is below `natts`.
    unsafe {
        (0..(*desc).natts as usize)
            .filter(|&i| compat::tuple_desc_attr(desc, i).attnotnull)
            .map(|i| i as u16)
            .collect()
    }
}
