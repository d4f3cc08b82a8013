//! The fastcopy.* settings: defaults, ranges, enum values, the PostgreSQL 15 refusal.

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    #[allow(unused_imports)]
    use crate::suites::util::*;
    #[allow(unused_imports)]
    use pgrx::prelude::*;

    #[pg_test]
    fn guc_defaults() {
        for (name, want) in [
            ("fastcopy.max_buffered_tuples", "1000"),
            ("fastcopy.max_buffered_bytes", "64kB"),
            ("fastcopy.extend_strategy", "auto"),
            ("fastcopy.extend_pages", "64"),
            ("fastcopy.extend_method", "auto"),
        ] {
            let got = Spi::get_one::<String>(&format!("SHOW {name}"))
                .unwrap()
                .unwrap();
            assert_eq!(got, want, "{name}");
        }
    }

    #[pg_test]
    fn guc_ranges_rejected() {
        for stmt in [
            "SET fastcopy.max_buffered_tuples = 0",
            "SET fastcopy.max_buffered_tuples = 1000001",
            "SET fastcopy.max_buffered_bytes = 0",
            "SET fastcopy.max_buffered_bytes = '2GB'",
            "SET fastcopy.extend_pages = 0",
            "SET fastcopy.extend_pages = 8193",
            "SET fastcopy.extend_strategy = 'bogus'",
            "SET fastcopy.extend_method = 'bogus'",
        ] {
            let got = outcome(stmt);
            assert!(got.starts_with("err:22023:"), "{stmt}: {got}");
        }
        // the bounds themselves are accepted
        for stmt in [
            "SET fastcopy.max_buffered_tuples = 1",
            "SET fastcopy.max_buffered_tuples = 1000000",
            "SET fastcopy.max_buffered_bytes = 1",
            "SET fastcopy.max_buffered_bytes = '1GB'",
            "SET fastcopy.extend_pages = 1",
            "SET fastcopy.extend_pages = 8192",
        ] {
            assert_eq!(outcome(stmt), "ok:<null>", "{stmt}");
        }
    }

    #[pg_test]
    fn guc_settable_per_session() {
        Spi::run("SET fastcopy.max_buffered_bytes = '1MB'").unwrap();
        assert_eq!(
            Spi::get_one::<String>("SHOW fastcopy.max_buffered_bytes")
                .unwrap()
                .unwrap(),
            "1MB"
        );
        for v in ["server", "fixed", "sticky", "auto"] {
            Spi::run(&format!("SET fastcopy.extend_strategy = '{v}'")).unwrap();
            assert_eq!(
                Spi::get_one::<String>("SHOW fastcopy.extend_strategy")
                    .unwrap()
                    .unwrap(),
                v
            );
        }
        for v in ["zero", "auto"] {
            Spi::run(&format!("SET fastcopy.extend_method = '{v}'")).unwrap();
            assert_eq!(
                Spi::get_one::<String>("SHOW fastcopy.extend_method")
                    .unwrap()
                    .unwrap(),
                v
            );
        }
        // enum values are case-insensitive, as the server's own
        Spi::run("SET fastcopy.extend_strategy = 'FIXED'").unwrap();
        assert_eq!(
            Spi::get_one::<String>("SHOW fastcopy.extend_strategy")
                .unwrap()
                .unwrap(),
            "fixed"
        );
    }

    #[pg_test]
    fn guc_fallocate_needs_16() {
        let got = outcome("SET fastcopy.extend_method = 'fallocate'");
        if server_major() == 15 {
            assert!(got.starts_with("err:0A000:"), "{got}");
            assert!(got.contains("needs PostgreSQL 16 or later"), "{got}");
            assert_eq!(
                Spi::get_one::<String>("SHOW fastcopy.extend_method")
                    .unwrap()
                    .unwrap(),
                "auto"
            );
        } else {
            assert_eq!(got, "ok:<null>");
            assert_eq!(
                Spi::get_one::<String>("SHOW fastcopy.extend_method")
                    .unwrap()
                    .unwrap(),
                "fallocate"
            );
        }
    }
}
