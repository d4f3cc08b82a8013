//! Every PostgreSQL 15 / 16 / 17 / 18 difference of the executor calls the loader makes, each
//! behind one `cfg` here, and the server's major ([`server_major`]) for those decided at run
//! time. Each other mechanism keeps its differences in one file of its own:
//! - relation extension: `extend/` (one module per version's mechanism, chosen by its `mod`
//!   line: `extend_buffered_rel_by.rs` on 16+, `smgrextend.rs` on 15);
//! - the page writer's buffer call (`RelationGetBufferForTuple`, 16+'s `num_pages`):
//!   `load/pages.rs`;
//! - whether bytes wait in the client's receive buffer (17 renamed `pq_buffer_has_data`):
//!   `load/input/client.rs`;
//! - the integer grammar (16's hex, octal, binary and underscores): `parse.rs`;
//! - how a new index file is written (17's bulk writer, `smgrextend` and `log_newpage` on
//!   15 and 16): `load/btree_writer.rs`;
//! - `extend_method = fallocate`, refused on 15: `guc.rs`.
//!
//! Decided at run time by [`server_major`]: COPY's options per major (which exist, their
//! wording; `load/spec.rs`, given the major by `load/mod.rs` and `copy_hook/claim.rs`), the
//! wording of the file-privilege error (16+, `load/input/source.rs`), FREEZE refused for a
//! foreign table (18, `load/target.rs`), and the end-of-data rules and the binary header in
//! the core's readers (given the major by `load/mod.rs`).

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
    // SAFETY: `rel` and `estate` are valid as the # Safety section requires, on the backend
    // thread; `make_parsestate` and `addRangeTableEntryForRelation` return valid palloc'd nodes
    // (the RTE, and on 16+ its RTEPermissionInfo) that the writes below fill in, as COPY does.
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
            #[cfg(not(feature = "pg18"))]
            pg_sys::ExecInitRangeTable(estate, (*pstate).p_rtable, (*pstate).p_rteperminfos);
            // 18: the relations not pruned away: the one entry (as COPY passes it)
            #[cfg(feature = "pg18")]
            pg_sys::ExecInitRangeTable(
                estate,
                (*pstate).p_rtable,
                (*pstate).p_rteperminfos,
                pg_sys::bms_make_singleton(1),
            );
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
    // SAFETY: `rri`, `slot` and `estate` are valid as the # Safety section requires; the
    // arguments are those of the version's `ExecInsertIndexTuples` (16 added
    // `onlySummarizing`), with no speculative insertion and no arbiter indexes.
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

// Declared here as pgrx does not bind them; the same in 15-18 but for the type of
// `log_smgrcreate`'s first argument (a RelFileNode on 15, a RelFileLocator of the same three
// OIDs on 16+).
unsafe extern "C-unwind" {
    // access/nbtree.h
    fn _bt_allequalimage(rel: pg_sys::Relation, debugmessage: bool) -> bool;
    // storage/predicate.h
    fn TransferPredicateLocksToHeapRelation(relation: pg_sys::Relation);
    // catalog/storage.h
    #[cfg(feature = "pg15")]
    fn log_smgrcreate(rnode: *const pg_sys::RelFileNode, fork: pg_sys::ForkNumber::Type);
    #[cfg(not(feature = "pg15"))]
    fn log_smgrcreate(rlocator: *const pg_sys::RelFileLocator, fork: pg_sys::ForkNumber::Type);
}

/// Whether equal keys of the btree `index` are always equal as bytes (each key column's
/// opclass has equal-image semantics), as deduplication asks.
///
/// # Safety
/// `index` is an open btree index; backend thread.
pub unsafe fn btree_all_equal_image(index: pg_sys::Relation) -> bool {
    // SAFETY: as the function's contract; it reads the opclasses' support functions.
    unsafe { pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| _bt_allequalimage(index, false)) }
}

/// Moves the predicate locks on `index` to its table, as REINDEX does before it gives the
/// index a new file.
///
/// # Safety
/// `index` is open; backend thread.
pub unsafe fn transfer_predicate_locks(index: pg_sys::Relation) {
    // SAFETY: as the function's contract.
    unsafe {
        pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| TransferPredicateLocksToHeapRelation(index))
    }
}

/// A new, empty file for `rel` (transactional: the old one is dropped at commit, the new one
/// on abort), as REINDEX and TRUNCATE give one (15: `RelationSetNewRelfilenode`).
///
/// # Safety
/// `rel` is open and no other session can reach it; backend thread.
pub unsafe fn set_new_file(rel: pg_sys::Relation, persistence: std::ffi::c_char) {
    // SAFETY: as the function's contract.
    unsafe {
        #[cfg(feature = "pg15")]
        pg_sys::RelationSetNewRelfilenode(rel, persistence);
        #[cfg(not(feature = "pg15"))]
        pg_sys::RelationSetNewRelfilenumber(rel, persistence);
    }
}

/// A full-page WAL record of `page` as block `blkno` of `rel`'s main fork (`log_newpage`,
/// which takes the relfilenode on 15, the relfilelocator on 16+), setting the page's LSN.
///
/// 15 and 16 only: 17+'s bulk writer logs the pages it writes.
///
/// # Safety
/// `rel` is open; `page` is a standard page of BLCKSZ bytes; backend thread.
#[cfg(not(any(feature = "pg17", feature = "pg18")))]
pub unsafe fn log_new_page(rel: pg_sys::Relation, blkno: pg_sys::BlockNumber, page: pg_sys::Page) {
    // SAFETY: as the function's contract.
    unsafe {
        #[cfg(feature = "pg15")]
        let locator = &raw mut (*rel).rd_node;
        #[cfg(not(feature = "pg15"))]
        let locator = &raw mut (*rel).rd_locator;
        pg_sys::log_newpage(locator, pg_sys::ForkNumber::MAIN_FORKNUM, blkno, page, true);
    }
}

/// Creates the init fork of the unlogged `rel` and logs its creation, as `index_build` does
/// before the access method writes the empty index into it.
///
/// # Safety
/// `rel` is an open unlogged relation whose file was just made; backend thread.
pub unsafe fn create_init_fork(rel: pg_sys::Relation) {
    // SAFETY: as the function's contract.
    unsafe {
        let smgr = pg_sys::RelationGetSmgr(rel);
        if pg_sys::smgrexists(smgr, pg_sys::ForkNumber::INIT_FORKNUM) {
            return;
        }
        pg_sys::smgrcreate(smgr, pg_sys::ForkNumber::INIT_FORKNUM, false);
        #[cfg(feature = "pg15")]
        let locator = &raw const (*rel).rd_node;
        #[cfg(not(feature = "pg15"))]
        let locator = &raw const (*rel).rd_locator;
        pgrx::pg_sys::ffi::pg_guard_ffi_boundary(|| {
            log_smgrcreate(locator, pg_sys::ForkNumber::INIT_FORKNUM)
        });
    }
}

/// Whether the relation (or its current file) was created in this transaction, in which case
/// COPY skips the free space map (TABLE_INSERT_SKIP_FSM).
///
/// # Safety
/// `rel` is an open relation.
pub unsafe fn created_in_this_transaction(rel: pg_sys::Relation) -> bool {
    // SAFETY: `rel` points to an open relcache entry (# Safety); these are plain field reads.
    unsafe {
        #[cfg(feature = "pg15")]
        let first = (*rel).rd_firstRelfilenodeSubid;
        #[cfg(not(feature = "pg15"))]
        let first = (*rel).rd_firstRelfilelocatorSubid;
        (*rel).rd_createSubid != INVALID_SUBXACT || first != INVALID_SUBXACT
    }
}

/// Attribute `i` (0-based) of a tuple descriptor.
///
/// # Safety
/// `tupdesc` is valid and `i < natts`; the result lives as long as the descriptor.
pub unsafe fn tuple_desc_attr<'a>(
    tupdesc: pg_sys::TupleDesc,
    i: usize,
) -> &'a pg_sys::FormData_pg_attribute {
    // SAFETY: as the function's contract: 15-17 keep the attributes in `attrs[natts]`.
    #[cfg(not(feature = "pg18"))]
    unsafe {
        &*(*tupdesc).attrs.as_ptr().add(i)
    }
    // SAFETY: as the function's contract: 18 keeps `compact_attrs[natts]` first and the full
    // attributes after them, where its TupleDescAttr (a shim here) finds them.
    #[cfg(feature = "pg18")]
    unsafe {
        &*pg_sys::TupleDescAttr(tupdesc, i as i32)
    }
}

/// Whether `rel` was created, or got a new relfilenode (TRUNCATE), in the current
/// subtransaction: COPY FREEZE's precondition.
///
/// # Safety
/// `rel` is an open relation.
pub unsafe fn new_in_current_subtransaction(rel: pg_sys::Relation) -> bool {
    // SAFETY: `rel` points to an open relcache entry (# Safety), read on the backend thread
    // inside a transaction, where `GetCurrentSubTransactionId` is valid.
    unsafe {
        let current = pg_sys::GetCurrentSubTransactionId();
        #[cfg(feature = "pg15")]
        let new_file = (*rel).rd_newRelfilenodeSubid;
        #[cfg(not(feature = "pg15"))]
        let new_file = (*rel).rd_newRelfilelocatorSubid;
        (*rel).rd_createSubid == current || new_file == current
    }
}

/// The map from the partitioned root's rows to this leaf partition's (NULL if they match).
///
/// # Safety
/// `leaf` came from `ExecFindPartition` on `estate`.
pub unsafe fn root_to_child_map(
    leaf: *mut pg_sys::ResultRelInfo,
    estate: *mut pg_sys::EState,
) -> *mut pg_sys::TupleConversionMap {
    // SAFETY: `leaf` and `estate` are valid as the # Safety section requires: 15 has the map
    // in the leaf's `ri_RootToPartitionMap` (set up by `ExecFindPartition`), 16+ builds it
    // on demand in `ExecGetRootToChildMap`.
    unsafe {
        #[cfg(feature = "pg15")]
        {
            let _ = estate;
            (*leaf).ri_RootToPartitionMap
        }
        #[cfg(not(feature = "pg15"))]
        {
            pg_sys::ExecGetRootToChildMap(leaf, estate)
        }
    }
}

/// Whether input functions can report a bad value without an ERROR (16+).
pub const SOFT_INPUT: bool = cfg!(not(feature = "pg15"));

/// Calls a type's input function, turning a failed conversion into `None` instead of an ERROR
/// (`on_error => 'ignore'`). 16+: the soft-error path (`InputFunctionCallSafe`), as COPY 17
/// does. 15 has none: the call runs in a subtransaction that is rolled back on ERROR. With
/// `details`, the error (SQLSTATE, message, detail) is kept for [`take_refusal`].
///
/// # Safety
/// `flinfo` is an input function's; `s` is NUL-terminated or NULL.
pub unsafe fn input_soft(
    flinfo: *mut pg_sys::FmgrInfo,
    s: *mut std::ffi::c_char,
    typioparam: pg_sys::Oid,
    typmod: i32,
    details: bool,
) -> Option<pg_sys::Datum> {
    // SAFETY: `flinfo` and `s` are valid as the # Safety section requires. 16+: `escontext`
    // and `out` are locals that outlive the call; `escontext` is a zeroed `ErrorSaveContext`
    // with its node tag set, as the soft-error API needs; with details wanted, a failed call
    // leaves a palloc'd `ErrorData` in it (its strings NUL-terminated or null), read here and
    // left to the current memory context. 15: the same arguments go to `input_marked`.
    unsafe {
        #[cfg(not(feature = "pg15"))]
        {
            let mut escontext = pg_sys::ErrorSaveContext {
                type_: pg_sys::NodeTag::T_ErrorSaveContext,
                details_wanted: details,
                ..Default::default()
            };
            let mut out = pg_sys::Datum::from(0usize);
            let ok = pg_sys::InputFunctionCallSafe(
                flinfo,
                s,
                typioparam,
                typmod,
                &raw mut escontext as *mut pg_sys::Node,
                &mut out,
            );
            if !ok && details && !escontext.error_data.is_null() {
                let e = &*escontext.error_data;
                let text = |p: *const std::ffi::c_char| {
                    (!p.is_null())
                        .then(|| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned())
                };
                keep_refusal(Refusal {
                    sqlstate: e.sqlerrcode,
                    message: text(e.message).unwrap_or_default(),
                    detail: text(e.detail),
                });
            }
            ok.then_some(out)
        }
        #[cfg(feature = "pg15")]
        {
            // Only a data error of the input function counts as a bad value, as only soft
            // errors do on 16+: a cancel, a timeout or an out-of-memory still stops the load.
            match in_subtransaction(|| input_marked(flinfo, s, typioparam, typmod)) {
                Ok(d) => Some(d),
                Err(e) if input_failed() && is_data_error(&e) => {
                    if details && let pgrx::pg_sys::panic::CaughtError::PostgresError(r) = &e {
                        keep_refusal(Refusal {
                            sqlstate: r.sql_error_code() as i32,
                            message: r.message().to_string(),
                            detail: r.detail().map(str::to_string),
                        });
                    }
                    None
                }
                Err(e) => e.rethrow(),
            }
        }
    }
}

/// An input function's refusal of a value, kept by [`input_soft`] when details are wanted.
pub struct Refusal {
    /// The packed SQLSTATE (`MAKE_SQLSTATE`).
    pub sqlstate: i32,
    pub message: String,
    pub detail: Option<String>,
}

thread_local! {
    static REFUSAL: std::cell::RefCell<Option<Refusal>> = const { std::cell::RefCell::new(None) };
}

fn keep_refusal(r: Refusal) {
    REFUSAL.with(|c| *c.borrow_mut() = Some(r));
}

/// The last refusal [`input_soft`] kept (taken: the next call finds none).
pub fn take_refusal() -> Option<Refusal> {
    REFUSAL.with(|c| c.borrow_mut().take())
}

/// Set while `input_marked` is inside an input function (see `input_failed`).
static IN_INPUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `InputFunctionCall`, marked so that an ERROR it raises can be told from any other.
///
/// # Safety
/// As `input_soft`.
#[inline]
pub unsafe fn input_marked(
    flinfo: *mut pg_sys::FmgrInfo,
    s: *mut std::ffi::c_char,
    typioparam: pg_sys::Oid,
    typmod: i32,
) -> pg_sys::Datum {
    use std::sync::atomic::Ordering::Relaxed;
    IN_INPUT.store(true, Relaxed);
    // SAFETY: `flinfo` is an input function's and `s` NUL-terminated or NULL (# Safety).
    let d = unsafe { pg_sys::InputFunctionCall(flinfo, s, typioparam, typmod) };
    IN_INPUT.store(false, Relaxed);
    d
}

/// Whether the last ERROR caught came from an input function called by `input_marked`
/// (clears the mark).
pub fn input_failed() -> bool {
    IN_INPUT.swap(false, std::sync::atomic::Ordering::Relaxed)
}

/// The running server's major version (15 to 18): the one the extension was built for.
pub fn server_major() -> u32 {
    pg_sys::PG_VERSION_NUM / 10000
}

/// Set while [`checking`] runs a row's constraint checks (see `check_failed`).
static IN_CHECK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Runs a row's constraint checks (`ExecConstraints`, `ExecPartitionCheck`), marked so that an
/// ERROR they raise can be told from any other.
#[inline]
pub fn checking<T>(f: impl FnOnce() -> T) -> T {
    use std::sync::atomic::Ordering::Relaxed;
    IN_CHECK.store(true, Relaxed);
    let out = f();
    IN_CHECK.store(false, Relaxed);
    out
}

/// Whether the last ERROR caught came from a row's constraint checks run by [`checking`]
/// (clears the mark).
pub fn check_failed() -> bool {
    IN_CHECK.swap(false, std::sync::atomic::Ordering::Relaxed)
}

/// `pg_char_to_encoding`: the encoding id of a name, -1 if there is none (17 exports it as
/// `pg_char_to_encoding_private`, behind a macro of the old name). Does not raise.
pub fn encoding_id(name: &std::ffi::CStr) -> std::ffi::c_int {
    // SAFETY: a lookup in the encoding name table; `name` is NUL-terminated.
    unsafe {
        #[cfg(any(feature = "pg15", feature = "pg16"))]
        let id = pg_sys::pg_char_to_encoding(name.as_ptr());
        #[cfg(not(any(feature = "pg15", feature = "pg16")))]
        let id = pg_sys::pg_char_to_encoding_private(name.as_ptr());
        id
    }
}

/// `pg_encoding_to_char`: the name of an encoding id (17 exports it as
/// `pg_encoding_to_char_private`, behind a macro of the old name). Does not raise.
pub fn encoding_name(id: std::ffi::c_int) -> String {
    // SAFETY: a lookup in the encoding name table; it returns a static string ("" for an
    // invalid id).
    unsafe {
        #[cfg(any(feature = "pg15", feature = "pg16"))]
        let name = pg_sys::pg_encoding_to_char(id);
        #[cfg(not(any(feature = "pg15", feature = "pg16")))]
        let name = pg_sys::pg_encoding_to_char_private(id);
        std::ffi::CStr::from_ptr(name)
            .to_string_lossy()
            .into_owned()
    }
}

/// Runs `f` in a subtransaction: committed into the caller's transaction when `f` returns,
/// rolled back when it raises an ERROR, which is returned. Memory context and resource owner
/// are the caller's again afterwards, as in PL/pgSQL's exception blocks.
// (pgrx's error as it comes, on the path of a refused row only)
#[allow(clippy::result_large_err)]
pub fn in_subtransaction<T>(
    f: impl FnOnce() -> T + std::panic::UnwindSafe,
) -> Result<T, pgrx::pg_sys::panic::CaughtError> {
    // SAFETY: reads of the backend's globals, on the backend thread (pgrx's functions only run
    // there), inside a transaction (the load's), where both are set.
    let (mem, owner) = unsafe { (pg_sys::CurrentMemoryContext, pg_sys::CurrentResourceOwner) };
    IN_INPUT.store(false, std::sync::atomic::Ordering::Relaxed);
    IN_CHECK.store(false, std::sync::atomic::Ordering::Relaxed);
    // SAFETY: on the backend thread inside a transaction, as `BeginInternalSubTransaction`
    // needs (a NULL name is allowed). It switches to the subtransaction's memory context;
    // switching back to `mem`, the caller's context, which outlives the subtransaction, is
    // what PL/pgSQL's exception blocks do.
    unsafe {
        pg_sys::BeginInternalSubTransaction(std::ptr::null());
        pg_sys::MemoryContextSwitchTo(mem);
    }
    let out = pgrx::PgTryBuilder::new(|| Ok(f()))
        .catch_others(Err)
        .execute();
    // SAFETY: the subtransaction begun above is still the current one: `f` returned or its
    // ERROR was caught (pgrx has flushed the error state), and subtransactions of its own, if
    // any, were ended (nested calls of this function end theirs on both paths). Ending it
    // restores its parent's transaction state; `mem` and `owner` are the caller's memory
    // context and resource owner, which outlive the subtransaction.
    unsafe {
        if out.is_ok() {
            pg_sys::ReleaseCurrentSubTransaction();
        } else {
            pg_sys::RollbackAndReleaseCurrentSubTransaction();
        }
        pg_sys::MemoryContextSwitchTo(mem);
        pg_sys::CurrentResourceOwner = owner;
    }
    out
}

/// An ERROR of class 22 (data exception) or 23 (a domain's constraint): what an input function
/// raises about its value (15's stand-in for a soft error).
pub fn is_data_error(e: &pgrx::pg_sys::panic::CaughtError) -> bool {
    let pgrx::pg_sys::panic::CaughtError::PostgresError(r) = e else {
        return false;
    };
    // the class is the first two characters: the low 12 bits of the packed code
    let class = |c: pgrx::PgSqlErrorCode| (c as i32) & 0xFFF;
    let got = class(r.sql_error_code());
    got == class(pgrx::PgSqlErrorCode::ERRCODE_DATA_EXCEPTION)
        || got == class(pgrx::PgSqlErrorCode::ERRCODE_INTEGRITY_CONSTRAINT_VIOLATION)
}

/// Executor functions pgrx does not bind (their signatures are the same in 15, 16 and 17),
/// each called through pgrx's FFI guard so that an ERROR unwinds as pgrx expects.
#[allow(non_snake_case)]
pub mod exec {
    use pgrx::pg_sys::ffi::pg_guard_ffi_boundary;
    use pgrx::pg_sys::{
        CmdType, EState, ModifyTableState, PartitionTupleRouting, Relation, ResultRelInfo,
        TupleTableSlot,
    };

    mod c {
        use super::*;
        // SAFETY: the declarations match executor/execPartition.h and
        // executor/nodeModifyTable.h of 15, 16 and 17.
        unsafe extern "C-unwind" {
            pub fn ExecSetupPartitionTupleRouting(
                estate: *mut EState,
                rel: Relation,
            ) -> *mut PartitionTupleRouting;
            pub fn ExecFindPartition(
                mtstate: *mut ModifyTableState,
                rootResultRelInfo: *mut ResultRelInfo,
                proute: *mut PartitionTupleRouting,
                slot: *mut TupleTableSlot,
                estate: *mut EState,
            ) -> *mut ResultRelInfo;
            pub fn ExecCleanupTupleRouting(
                mtstate: *mut ModifyTableState,
                proute: *mut PartitionTupleRouting,
            );
            pub fn ExecComputeStoredGenerated(
                resultRelInfo: *mut ResultRelInfo,
                estate: *mut EState,
                slot: *mut TupleTableSlot,
                cmdtype: CmdType::Type,
            );
        }
    }

    /// # Safety
    /// As the C function: `estate` is a live executor state and `rel` the open, locked
    /// partitioned table; on the backend thread.
    pub unsafe fn ExecSetupPartitionTupleRouting(
        estate: *mut EState,
        rel: Relation,
    ) -> *mut PartitionTupleRouting {
        // SAFETY: the arguments are valid as the # Safety section requires; the closure only
        // calls the C function (nothing in it to drop if it raises an ERROR), on the backend
        // thread, which `pg_guard_ffi_boundary` needs. The declaration matches
        // executor/execPartition.h of 15, 16 and 17.
        unsafe { pg_guard_ffi_boundary(|| c::ExecSetupPartitionTupleRouting(estate, rel)) }
    }

    /// # Safety
    /// As the C function: `proute` came from `ExecSetupPartitionTupleRouting` on `estate` for
    /// `root`'s relation, `mtstate` is the ModifyTableState it routes for, `slot` holds a row
    /// of the root's row type; on the backend thread.
    pub unsafe fn ExecFindPartition(
        mtstate: *mut ModifyTableState,
        root: *mut ResultRelInfo,
        proute: *mut PartitionTupleRouting,
        slot: *mut TupleTableSlot,
        estate: *mut EState,
    ) -> *mut ResultRelInfo {
        // SAFETY: as in `ExecSetupPartitionTupleRouting`: valid arguments (# Safety), a closure
        // that only calls the C function, the backend thread, a matching declaration.
        unsafe {
            pg_guard_ffi_boundary(|| c::ExecFindPartition(mtstate, root, proute, slot, estate))
        }
    }

    /// # Safety
    /// As the C function: `proute` came from `ExecSetupPartitionTupleRouting` and is not used
    /// afterwards, `mtstate` is the ModifyTableState it routed for; on the backend thread.
    pub unsafe fn ExecCleanupTupleRouting(
        mtstate: *mut ModifyTableState,
        proute: *mut PartitionTupleRouting,
    ) {
        // SAFETY: as in `ExecSetupPartitionTupleRouting`: valid arguments (# Safety), a closure
        // that only calls the C function, the backend thread, a matching declaration.
        unsafe { pg_guard_ffi_boundary(|| c::ExecCleanupTupleRouting(mtstate, proute)) }
    }

    /// # Safety
    /// As the C function: `rri` is a result relation of `estate` whose relation has stored
    /// generated columns, `slot` holds a row of that relation; on the backend thread.
    pub unsafe fn ExecComputeStoredGenerated(
        rri: *mut ResultRelInfo,
        estate: *mut EState,
        slot: *mut TupleTableSlot,
        cmdtype: CmdType::Type,
    ) {
        // SAFETY: as in `ExecSetupPartitionTupleRouting`: valid arguments (# Safety), a closure
        // that only calls the C function, the backend thread, a matching declaration
        // (executor/nodeModifyTable.h; `CmdType` is a C enum, an unsigned int here).
        unsafe {
            pg_guard_ffi_boundary(|| c::ExecComputeStoredGenerated(rri, estate, slot, cmdtype))
        }
    }
}

/// The pg_stat_progress_copy column for rows skipped by `on_error => 'ignore'`: 17 has COPY's
/// own `tuples_skipped`; 15 and 16 have none, so `tuples_excluded` carries them.
#[cfg(any(feature = "pg15", feature = "pg16"))]
pub const PROGRESS_SKIPPED: i32 = pg_sys::PROGRESS_COPY_TUPLES_EXCLUDED as i32;
#[cfg(not(any(feature = "pg15", feature = "pg16")))]
pub const PROGRESS_SKIPPED: i32 = pg_sys::PROGRESS_COPY_TUPLES_SKIPPED as i32;

/// `CheckValidResultRel(rri, CMD_INSERT, …)`: COPY's check that a result relation takes
/// inserts (for a foreign table: its FDW inserts, and the table allows it). 17 added the MERGE
/// actions, 18 the ON CONFLICT action.
///
/// # Safety
/// `rri` was set up by `ExecInitResultRelation`.
pub unsafe fn check_valid_insert_target(rri: *mut pg_sys::ResultRelInfo) {
    let insert = pg_sys::CmdType::CMD_INSERT;
    // SAFETY: as the function's contract; it raises the server's own errors.
    unsafe {
        #[cfg(any(feature = "pg15", feature = "pg16"))]
        pg_sys::CheckValidResultRel(rri, insert);
        #[cfg(feature = "pg17")]
        pg_sys::CheckValidResultRel(rri, insert, std::ptr::null_mut());
        #[cfg(feature = "pg18")]
        pg_sys::CheckValidResultRel(
            rri,
            insert,
            pg_sys::OnConflictAction::ONCONFLICT_NONE,
            std::ptr::null_mut(),
        );
    }
}
