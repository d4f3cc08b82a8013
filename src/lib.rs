//! fastcopy: load data into heap tables faster than COPY FROM.
//!
//! The SQL-facing layer is thin; the data path of one load reads top to bottom in `load`:
//! options → target → reader (fastcopy-core) → converter → batch → heap.
//!
//! - `api`: `fastcopy.load` / `fastcopy.load_data` and `fastcopy.load_result` (SQL in sql/).
//! - `load`: one load: options, target, batch, error context and progress.
//! - `compat`: the PostgreSQL 15/16/17 differences the loader meets, in one place.
//! - `bench`: `fastcopy.bench_int_parser`, the parser benchmark's in-process driver.
//! - `extend`: relation extension strategies (`fastcopy.extend_*`), version differences included.
//! - `guc`: the `fastcopy.*` settings.
//! - `parse`: `fastcopy.parse_int*` over the int core of `fastcopy-core`.

use pgrx::prelude::*;

mod api;
mod bench;
mod compat;
mod error;
mod extend;
mod guc;
mod load;
mod parse;

::pgrx::pg_module_magic!();

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    error::install_panic_hook();
    guc::init();
}

/// In-database suites: the files live in `pgrx-tests/` and share this module's imports.
#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    #[allow(unused_imports)]
    use pgrx::prelude::*;
    include!("../pgrx-tests/util.rs");
    include!("../pgrx-tests/guc.rs");
    include!("../pgrx-tests/parse.rs");
    include!("../pgrx-tests/load.rs");
    include!("../pgrx-tests/errors.rs");
}

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
