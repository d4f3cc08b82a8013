//! Differential tests of fastcopy.parse_int2/4/8 and try_parse_int2/4/8 against the server's own
//! casts, over the corpus in pgrx-tests/corpus/ints.txt.

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    #[allow(unused_imports)]
    use crate::suites::util::*;
    #[allow(unused_imports)]
    use pgrx::prelude::*;

    /// For every corpus input and one integer type: the outcome of `s::<ty>` and of
    /// `fastcopy.parse_<fname>(s)` must be equal (value, or SQLSTATE and message), and
    /// `try_parse_<fname>` must be NULL exactly where the cast raises. Returns the differences.
    fn int_differences(ty: &str, fname: &str) -> Vec<String> {
        make_outcome_functions();
        let inputs = corpus_lines(include_str!("corpus/ints.txt"));
        assert!(inputs.len() >= 300, "corpus has {} inputs", inputs.len());
        let sql = format!(
            r#"
        SELECT coalesce(string_agg(format('%L: cast=%s fastcopy=%s try=%s', s, a, b, t), E'\n'), '')
        FROM (
          SELECT s,
                 pg_temp.fc_outcome_arg('SELECT $1::{ty}::text', s) AS a,
                 pg_temp.fc_outcome_arg('SELECT fastcopy.parse_{fname}($1)::text', s) AS b,
                 fastcopy.try_parse_{fname}(s)::text AS t
          FROM unnest($1::text[]) AS s
        ) x
        WHERE a IS DISTINCT FROM b
           OR (a LIKE 'err:%') <> (t IS NULL)
           OR (t IS NOT NULL AND a <> 'ok:' || t)
        "#
        );
        let diffs = Spi::get_one_with_args::<String>(&sql, &[inputs.into()])
            .unwrap()
            .unwrap();
        diffs.lines().map(str::to_owned).collect()
    }

    #[pg_test]
    fn parse_int2_matches_server() {
        let d = int_differences("int2", "int2");
        assert!(d.is_empty(), "{} differences:\n{}", d.len(), d.join("\n"));
    }

    #[pg_test]
    fn parse_int4_matches_server() {
        let d = int_differences("int4", "int4");
        assert!(d.is_empty(), "{} differences:\n{}", d.len(), d.join("\n"));
    }

    #[pg_test]
    fn parse_int8_matches_server() {
        let d = int_differences("int8", "int8");
        assert!(d.is_empty(), "{} differences:\n{}", d.len(), d.join("\n"));
    }

    #[pg_test]
    fn parse_errors_quote_original_input() {
        make_outcome_functions();
        assert_eq!(
            outcome("SELECT fastcopy.parse_int4(' 12x ')::text"),
            "err:22P02:invalid input syntax for type integer: \" 12x \""
        );
        assert_eq!(
            outcome("SELECT fastcopy.parse_int2('40000')::text"),
            "err:22003:value \"40000\" is out of range for type smallint"
        );
        assert_eq!(
            outcome("SELECT fastcopy.parse_int8('9223372036854775808')::text"),
            "err:22003:value \"9223372036854775808\" is out of range for type bigint"
        );
        assert_eq!(
            outcome("SELECT fastcopy.parse_int4(NULL)::text"),
            "ok:<null>"
        );
    }

    #[pg_test]
    fn parse_functions_are_immutable_strict_parallel_safe() {
        let n = Spi::get_one::<i64>(
            "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = 'fastcopy' AND p.proname ~ '^(try_)?parse_int[248]$'
           AND p.provolatile = 'i' AND p.proisstrict AND p.proparallel = 's'",
        )
        .unwrap()
        .unwrap();
        assert_eq!(n, 6);
    }

    #[pg_test]
    fn parse_grammar_follows_server_version() {
        // PostgreSQL 16 added 0x/0o/0b and underscores; 15 rejects them like its own int4in.
        let hex = Spi::get_one::<i32>("SELECT fastcopy.try_parse_int4('0x1F')").unwrap();
        let under = Spi::get_one::<i32>("SELECT fastcopy.try_parse_int4('1_000')").unwrap();
        if server_major() == 15 {
            assert_eq!((hex, under), (None, None));
        } else {
            assert_eq!((hex, under), (Some(31), Some(1000)));
        }
    }

    #[pg_test]
    fn bench_int_parser_parsers_agree() {
        // The benchmark driver's three parsers sum the same values (it raises if not), and that sum
        // is the server's: -7 + 12 + 300 + 0 + 41 = 346 per pass; the checksum is one repetition's,
        // and 82 passes over its 41 repetitions are 2 passes each.
        let rows = Spi::get_one::<String>(
            "SELECT string_agg(parser || '=' || checksum, ',' ORDER BY parser)
         FROM fastcopy.bench_int_parser(ARRAY['-7', '12', '300', '0', '041'], 32, 82)",
        )
        .unwrap()
        .unwrap();
        assert_eq!(rows, "fastcopy=692,fastcopy_slice=692,server=692");
    }

    #[pg_test(error = "input \"x\" is not a valid integer")]
    fn bench_int_parser_refuses_invalid_input() {
        Spi::run("SELECT * FROM fastcopy.bench_int_parser(ARRAY['1', 'x'], 32, 1)").unwrap();
    }
}
