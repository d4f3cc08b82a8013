//! The in-database suites (`cargo pgrx test`), one module per file. Each puts its tests in a
//! `#[pg_schema] mod tests`: pgrx's runner calls every test as `tests.<name>()`.

mod util;

mod errors;
mod guc;
mod load;
mod parse;
mod rejects;
mod set_null;
mod types;
