//! Errors that pass through fastcopy: the server's reach the client as the server raised them
//! (no Rust backtrace in DETAIL, whatever RUST_BACKTRACE says; scenarios/error.sh runs the same
//! comparison on a server started with RUST_BACKTRACE=1), and a panic is one ERROR.

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    #[allow(unused_imports)]
    use crate::suites::util::*;
    #[allow(unused_imports)]
    use pgrx::prelude::*;

    /// Panics, for the test of what a bug inside fastcopy looks like to the client.
    #[pg_extern]
    fn fc_panic() -> i32 {
        panic!("fc_panic: a bug on purpose")
    }

    /// `sqlstate|message|detail|hint` of the error `query` raises (empty fields where none).
    fn error_fields(query: &str) -> String {
        match error_diagnostics(query) {
            Some(d) => d[..4].join("|"),
            None => "no error".into(),
        }
    }

    #[pg_test]
    fn server_errors_pass_through_unchanged() {
        Spi::run(
            "CREATE DOMAIN fc_e_pos AS int CHECK (VALUE > 0);
         CREATE TABLE fc_e_parent (a int PRIMARY KEY);
         INSERT INTO fc_e_parent VALUES (1);",
        )
        .unwrap();
        let cases = [
            ("a int PRIMARY KEY", "1\n1\n"),
            ("a int NOT NULL, b text", "1\tx\n\\N\ty\n"),
            ("a int CHECK (a > 0)", "5\n-1\n"),
            ("a fc_e_pos", "3\n-7\n"),
            ("a int REFERENCES fc_e_parent", "1\n2\n"),
            ("d date", "2024-01-01\n2024-13-45\n"),
            ("a int", "1\nx2\n"),
        ];
        for (n, (defs, rows)) in cases.iter().enumerate() {
            let (a, b) = (format!("fc_e{n}_copy"), format!("fc_e{n}_fast"));
            Spi::run(&format!(
                "CREATE TABLE {a} ({defs}); CREATE TABLE {b} ({defs})"
            ))
            .unwrap();
            let path = scratch_file(&format!("err{n}"), rows.as_bytes());
            let copy = error_fields(&format!("COPY {a} FROM '{path}'"));
            let fast = error_fields(&format!(
                "SELECT fastcopy.load_data('{b}', {})",
                quote_literal(rows)
            ));
            let _ = std::fs::remove_file(&path);
            assert!(copy != "no error", "{defs}: COPY accepted {rows:?}");
            // the relation name is part of some messages: compare with it replaced
            assert_eq!(copy.replace(&a, "T"), fast.replace(&b, "T"), "{defs}");
        }
    }

    #[pg_test]
    fn a_panic_is_one_error() {
        assert_eq!(
            error_fields("SELECT tests.fc_panic()"),
            "XX000|fc_panic: a bug on purpose||"
        );
    }
}
