//! fastcopy: load data into heap tables faster than COPY FROM.
//!
//! The SQL-facing layer is thin; one load reads top to bottom in `load` (its module docs name
//! the stages: options → target → source → decoder on the reader thread → loader → batch →
//! heap; docs/architecture.md walks the path).
//!
//! - `api`: `fastcopy.load` / `fastcopy.load_data`, their options declared once.
//! - `load`: one load.
//! - `copy_hook`: `COPY … FROM` statements through fastcopy (`fastcopy.copy_from`).
//! - `error`: raising ERRORs; server errors leave a load as the server raised them.
//! - `compat`: the PostgreSQL-version differences of the executor calls, in one place.
//! - `extend`: relation extension strategies (`fastcopy.extend_*`), their version differences.
//! - `guc`: the `fastcopy.*` settings.
//! - `parse`: `fastcopy.parse_int*` over the int core of `fastcopy-core`.
//! - `bench` (cargo feature `bench`): `fastcopy.bench_int_parser`, the parser benchmark's
//!   in-process driver.
//!
//! Every `unsafe` block says why it holds (`clippy::undocumented_unsafe_blocks`, denied for the
//! workspace in Cargo.toml; `make lint`).

use pgrx::prelude::*;

mod api;
#[cfg(feature = "bench")]
mod bench;
mod compat;
mod copy_hook;
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
    copy_hook::install();
}

/// The in-database suites (`cargo pgrx test`): one module per file of `pgrx-tests/`.
#[cfg(any(test, feature = "pg_test"))]
#[path = "../pgrx-tests/mod.rs"]
mod suites;

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
