//! Every PostgreSQL 15 / 16 / 17 difference the loader meets, each behind one `cfg` here.

use pgrx::pg_sys;

/// `InvalidSubTransactionId` (a C macro, not bound).
const INVALID_SUBXACT: pg_sys::SubTransactionId = 0;

/// Builds the range table of one INSERT target the way COPY does (`addRangeTableEntryForRelation`
/// with ACL_INSERT on the inserted columns), checks those privileges as COPY does (whole-table
/// INSERT, or INSERT on every listed column: ERROR 42501 otherwise), and installs the range table
/// in `estate`. `attnums` are 1-based attribute numbers.
///
/// # Safety
/// `rel` is open and locked RowExclusiveLock; `estate` is fresh from `CreateExecutorState`.
pub unsafe fn init_range_table(
    estate: *mut pg_sys::EState,
    rel: pg_sys::Relation,
    attnums: &[i16],
) {
    unsafe {
        let pstate = pg_sys::make_parsestate(std::ptr::null_mut());
        let nsitem = pg_sys::addRangeTableEntryForRelation(
            pstate,
            rel,
            pg_sys::RowExclusiveLock as i32,
            std::ptr::null_mut(),
            false,
            false,
        );
        let mut cols: *mut pg_sys::Bitmapset = std::ptr::null_mut();
        for &a in attnums {
            cols =
                pg_sys::bms_add_member(cols, a as i32 - pg_sys::FirstLowInvalidHeapAttributeNumber);
        }
        #[cfg(feature = "pg15")]
        {
            let rte = (*nsitem).p_rte;
            (*rte).requiredPerms = pg_sys::ACL_INSERT as pg_sys::AclMode;
            (*rte).insertedCols = cols;
            pg_sys::ExecCheckRTPerms((*pstate).p_rtable, true);
            pg_sys::ExecInitRangeTable(estate, (*pstate).p_rtable);
        }
        #[cfg(not(feature = "pg15"))]
        {
            let perminfo = (*nsitem).p_perminfo;
            (*perminfo).requiredPerms = pg_sys::ACL_INSERT as pg_sys::AclMode;
            (*perminfo).insertedCols = cols;
            pg_sys::ExecCheckPermissions((*pstate).p_rtable, (*pstate).p_rteperminfos, true);
            pg_sys::ExecInitRangeTable(estate, (*pstate).p_rtable, (*pstate).p_rteperminfos);
        }
    }
}

/// Inserts the index entries of one just-inserted tuple (its TID is in the slot); returns the
/// list of indexes that need a recheck (deferred constraints), which the caller frees.
///
/// # Safety
/// Indexes of `rri` are open (`ExecOpenIndices`); `slot` holds a tuple inserted into the heap.
#[inline]
pub unsafe fn insert_index_tuples(
    rri: *mut pg_sys::ResultRelInfo,
    slot: *mut pg_sys::TupleTableSlot,
    estate: *mut pg_sys::EState,
) -> *mut pg_sys::List {
    unsafe {
        #[cfg(feature = "pg15")]
        {
            pg_sys::ExecInsertIndexTuples(
                rri,
                slot,
                estate,
                false,
                false,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        }
        #[cfg(not(feature = "pg15"))]
        {
            pg_sys::ExecInsertIndexTuples(
                rri,
                slot,
                estate,
                false,
                false,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                false,
            )
        }
    }
}

/// Whether the relation (or its current file) was created in this transaction, in which case
/// COPY skips the free space map (TABLE_INSERT_SKIP_FSM).
///
/// # Safety
/// `rel` is an open relation.
pub unsafe fn created_in_this_transaction(rel: pg_sys::Relation) -> bool {
    unsafe {
        #[cfg(feature = "pg15")]
        let first = (*rel).rd_firstRelfilenodeSubid;
        #[cfg(not(feature = "pg15"))]
        let first = (*rel).rd_firstRelfilelocatorSubid;
        (*rel).rd_createSubid != INVALID_SUBXACT || first != INVALID_SUBXACT
    }
}

/// SQLSTATE of COPY's "delimiter must not appear in the NULL specification" and "CSV quote
/// character must not appear in the NULL specification": 15 and 16 report them as a feature not
/// supported, 17 as an invalid parameter value.
#[cfg(any(feature = "pg15", feature = "pg16"))]
pub const MARKER_IN_NULL: pgrx::PgSqlErrorCode =
    pgrx::PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED;
#[cfg(not(any(feature = "pg15", feature = "pg16")))]
pub const MARKER_IN_NULL: pgrx::PgSqlErrorCode =
    pgrx::PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE;
