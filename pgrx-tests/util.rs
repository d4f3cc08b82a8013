//! Shared helpers of the in-database suites (included into `mod tests` in src/lib.rs).

use pgrx::prelude::*;

/// Makes `pg_temp.fc_outcome(query, role)` and `pg_temp.fc_outcome_arg(query, arg)`: run
/// `query` (one text value or none; as `role` unless NULL) in a subtransaction and answer
/// `ok:<value>` or `err:<SQLSTATE>:<message>`, so a test can compare outcomes, errors included.
pub(crate) fn make_outcome_functions() {
    Spi::run(
        r#"
        CREATE OR REPLACE FUNCTION pg_temp.fc_outcome(q text, role text DEFAULT NULL) RETURNS text
        LANGUAGE plpgsql AS $f$
        DECLARE r text;
        BEGIN
          IF role IS NOT NULL THEN EXECUTE format('SET LOCAL ROLE %I', role); END IF;
          IF q ~* '^\s*(select|with|values|show)\M' THEN EXECUTE q INTO r; ELSE EXECUTE q; END IF;
          IF role IS NOT NULL THEN RESET ROLE; END IF;
          RETURN 'ok:' || coalesce(r, '<null>');
        EXCEPTION WHEN OTHERS THEN
          RETURN 'err:' || SQLSTATE || ':' || SQLERRM;
        END $f$;
        CREATE OR REPLACE FUNCTION pg_temp.fc_outcome_arg(q text, arg text) RETURNS text
        LANGUAGE plpgsql AS $f$
        DECLARE r text;
        BEGIN
          EXECUTE q INTO r USING arg;
          RETURN 'ok:' || coalesce(r, '<null>');
        EXCEPTION WHEN OTHERS THEN
          RETURN 'err:' || SQLSTATE || ':' || SQLERRM;
        END $f$;
        "#,
    )
    .unwrap();
}

/// The outcome of one statement with the error's first CONTEXT line:
/// `ok:<value>` or `err:<SQLSTATE>:<message> | <context>`.
pub(crate) fn outcome_with_context(query: &str) -> String {
    Spi::run(
        r#"
        CREATE OR REPLACE FUNCTION pg_temp.fc_outcome_ctx(q text) RETURNS text
        LANGUAGE plpgsql AS $f$
        DECLARE r text; c text;
        BEGIN
          IF q ~* '^\s*(select|with|values|show)\M' THEN EXECUTE q INTO r; ELSE EXECUTE q; END IF;
          RETURN 'ok:' || coalesce(r, '<null>');
        EXCEPTION WHEN OTHERS THEN
          GET STACKED DIAGNOSTICS c = PG_EXCEPTION_CONTEXT;
          RETURN 'err:' || SQLSTATE || ':' || SQLERRM || ' | ' || split_part(c, E'\n', 1);
        END $f$;
        "#,
    )
    .unwrap();
    Spi::get_one_with_args::<String>("SELECT pg_temp.fc_outcome_ctx($1)", &[query.into()])
        .unwrap()
        .unwrap()
}

/// The outcome of one statement: `ok:<value>` or `err:<SQLSTATE>:<message>`.
pub(crate) fn outcome(query: &str) -> String {
    make_outcome_functions();
    Spi::get_one_with_args::<String>("SELECT pg_temp.fc_outcome($1)", &[query.into()])
        .unwrap()
        .unwrap()
}

/// The outcome of one statement run as `role` (reset afterwards).
pub(crate) fn outcome_as(role: &str, query: &str) -> String {
    make_outcome_functions();
    Spi::get_one_with_args::<String>(
        "SELECT pg_temp.fc_outcome($1, $2)",
        &[query.into(), role.into()],
    )
    .unwrap()
    .unwrap()
}

/// The server's major version number (15, 16, 17).
pub(crate) fn server_major() -> i32 {
    Spi::get_one::<i32>("SELECT current_setting('server_version_num')::int / 10000")
        .unwrap()
        .unwrap()
}

/// Reads a corpus file of one input per line: `#` starts a comment line, escapes `\\ \t \n \r
/// \v \f`, `\s` for a space, and a line `\e` for the empty string.
pub(crate) fn corpus_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if line == "\\e" {
            out.push(String::new());
            continue;
        }
        let mut s = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                s.push(c);
                continue;
            }
            match chars.next() {
                Some('t') => s.push('\t'),
                Some('n') => s.push('\n'),
                Some('r') => s.push('\r'),
                Some('v') => s.push('\u{0b}'),
                Some('f') => s.push('\u{0c}'),
                Some('s') => s.push(' '),
                Some('\\') => s.push('\\'),
                Some(other) => panic!("corpus: unknown escape \\{other} in {line:?}"),
                None => panic!("corpus: trailing backslash in {line:?}"),
            }
        }
        out.push(s);
    }
    out
}

/// The error `query` raises, as GET STACKED DIAGNOSTICS reads it: SQLSTATE, message, detail,
/// hint and column (empty where none); `None` if it raises none.
pub(crate) fn error_diagnostics(query: &str) -> Option<Vec<String>> {
    Spi::run(
        r#"
        CREATE OR REPLACE FUNCTION pg_temp.fc_error_diagnostics(q text) RETURNS text[]
        LANGUAGE plpgsql AS $f$
        DECLARE s text; m text; d text; h text; c text;
        BEGIN
          EXECUTE q;
          RETURN NULL;
        EXCEPTION WHEN OTHERS THEN
          GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT,
                                  d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT,
                                  c = COLUMN_NAME;
          RETURN ARRAY[s, m, d, h, c];
        END $f$;
        "#,
    )
    .unwrap();
    Spi::get_one_with_args::<Vec<Option<String>>>(
        "SELECT pg_temp.fc_error_diagnostics($1)",
        &[query.into()],
    )
    .unwrap()
    .map(|v| v.into_iter().map(Option::unwrap_or_default).collect())
}

pub(crate) fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A path the server can write and read for this test backend.
pub(crate) fn scratch_file(name: &str, bytes: &[u8]) -> String {
    let path = format!("/tmp/fastcopy-test-{}-{}", std::process::id(), name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Every row of `table` as text, sorted: equal strings mean equal tables.
pub(crate) fn table_text(table: &str) -> String {
    Spi::get_one::<String>(&format!(
        "SELECT coalesce(string_agg(t::text, E'\\n' ORDER BY t::text COLLATE \"C\"), '') FROM {table} t"
    ))
    .unwrap()
    .unwrap()
}

pub(crate) fn sqlstate(outcome: &str) -> Option<&str> {
    outcome.strip_prefix("err:").map(|s| &s[..5])
}
