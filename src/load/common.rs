//! What every module of `src/load` may use: what a load did ([`LoadStats`]), the front door
//! it came through ([`Front`]), and whether an interrupt is waiting ([`interrupt_pending`]).
//! Depends on nothing in `src/load`.

/// What a load did (the `fastcopy.load_result` row).
#[derive(Default, Debug)]
pub struct LoadStats {
    pub rows_loaded: u64,
    pub rows_skipped: u64,
    /// Rows with values `on_error => 'set_null'` made NULL.
    pub rows_set_null: u64,
    /// Rows the WHERE condition excluded.
    pub rows_excluded: u64,
    /// With a rejects table: the load's id there, and the rows it wrote there (rows skipped,
    /// and values `set_null` made NULL).
    pub load_id: Option<i64>,
    pub rows_rejected: Option<u64>,
    pub bytes_read: u64,
    pub flushes: u64,
    pub pages_extended: u64,
    pub extend_calls: u64,
    pub elapsed_ms: f64,
}

/// The front door a load came through: what it is called in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Front {
    /// `fastcopy.load` / `load_data`.
    Function,
    /// A `COPY … FROM` statement taken by the COPY hook: COPY's own wording throughout.
    Statement,
}

impl Front {
    /// The CONTEXT line's verb (`COPY t, line 3, column b: "x"`).
    pub fn verb(self) -> &'static std::ffi::CStr {
        match self {
            Front::Function => c"fastcopy.load",
            Front::Statement => c"COPY",
        }
    }
}

/// A cancel, a timeout or a termination is waiting for `CHECK_FOR_INTERRUPTS`.
#[inline]
pub fn interrupt_pending() -> bool {
    // SAFETY: backend thread; a signal handler sets the flag, so it is read volatile, as
    // the server's INTERRUPTS_PENDING_CONDITION reads it.
    unsafe { std::ptr::read_volatile(&raw const pgrx::pg_sys::InterruptPending) != 0 }
}
