//! ON_ERROR set_null (PostgreSQL 19's, offered on 15-18): a value whose input function refuses
//! it becomes NULL and the row is loaded. The oracle: COPY of the same data with exactly the
//! values the server's own casts refuse replaced by the NULL marker; PostgreSQL 19's messages
//! where a NULL cannot be set (a domain that refuses it, a NOT NULL column).

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    #[allow(unused_imports)]
    use crate::suites::util::*;
    #[allow(unused_imports)]
    use pgrx::prelude::*;

    /// Whether the server's input function (with the column's typmod, as COPY calls it) takes
    /// `value` for column `x` of table `probe`: an INSERT of the literal, rolled back. (Not a cast:
    /// an explicit cast to varchar(3) cuts a longer value where the input function refuses it.)
    fn server_takes(value: &str, probe: &str) -> bool {
        Spi::run(
            r#"CREATE OR REPLACE FUNCTION pg_temp.fc_takes(v text, probe text) RETURNS bool
           LANGUAGE plpgsql AS $f$
           BEGIN
             EXECUTE format('INSERT INTO %I VALUES (%L)', probe, v);
             RAISE SQLSTATE 'FCOK1';
           EXCEPTION
             WHEN SQLSTATE 'FCOK1' THEN RETURN true;
             WHEN data_exception OR integrity_constraint_violation THEN RETURN false;
           END $f$"#,
        )
        .unwrap();
        Spi::get_one_with_args::<bool>(
            "SELECT pg_temp.fc_takes($1, $2)",
            &[value.into(), probe.into()],
        )
        .unwrap()
        .unwrap()
    }

    /// Rows of generated fields, good and bad, for each column type of `fc_sn`: COPY of the data
    /// with the values the casts refuse made `\N` equals fastcopy's set_null load of the data, the
    /// result counts the rows with such values, and the table after the hook (psql is not here:
    /// the same function, through `load_data`) is the same for text and CSV.
    #[pg_test]
    fn set_null_loads_as_copy_with_the_bad_values_made_null() {
        Spi::run(
            "CREATE DOMAIN fc_sn_pos AS int CHECK (VALUE > 0);
         CREATE TABLE fc_sn_copy (i int, b bigint, n numeric(6,2), f float8, r real, d date,
             ts timestamptz, u uuid, ok bool, j jsonb, t text, v varchar(3), p fc_sn_pos);
         CREATE TABLE fc_sn_fast (LIKE fc_sn_copy);",
        )
        .unwrap();
        let columns: [(&str, &[&str]); 13] = [
            (
                "int",
                &[
                    "1",
                    "-2147483648",
                    "2147483648",
                    "x",
                    "",
                    " 7 ",
                    "1.5",
                    "0x1F",
                ],
            ),
            (
                "bigint",
                &["9223372036854775807", "9223372036854775808", "--1", "42"],
            ),
            (
                "numeric(6,2)",
                &[
                    "1.005", "9999.99", "99999.99", "NaN", "1e3", "abc", "-0.001",
                ],
            ),
            (
                "float8",
                &[
                    "1.5", "1e309", "-1e-400", "Infinity", "nan", "1.5.5", "0x10",
                ],
            ),
            ("real", &["3.4e38", "3.5e38", "1e-46", "7", "seven"]),
            (
                "date",
                &[
                    "2024-02-29",
                    "2023-02-29",
                    "epoch",
                    "24-13-01",
                    "2000-01-01 BC",
                ],
            ),
            (
                "timestamptz",
                &[
                    "2024-01-01 00:00:00+00",
                    "2024-01-01 25:00",
                    "now-ish",
                    "infinity",
                ],
            ),
            (
                "uuid",
                &[
                    "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                    "a0eebc99",
                    "{a0eebc999c0b4ef8bb6d6bb9bd380a11}",
                ],
            ),
            ("bool", &["t", "yes", "of", "o", "maybe", "1"]),
            ("jsonb", &["{\"a\":1}", "{\"a\":", "[1,2]", "nul"]),
            ("text", &["anything", "", "x y"]),
            ("varchar(3)", &["abc", "abcd", "ab  ", "a"]),
            ("fc_sn_pos", &["5", "0", "-1", "x", "2147483647"]),
        ];
        for (k, (typ, _)) in columns.iter().enumerate() {
            Spi::run(&format!("CREATE TEMP TABLE fc_probe_{k} (x {typ})")).unwrap();
        }
        let mut takes = std::collections::HashMap::new();
        let mut seed = 0x2545F4914F6CDD1Du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for csv in [false, true] {
            let (mut data, mut nulled) = (String::new(), String::new());
            let mut rows_with_bad = 0;
            for _ in 0..300 {
                let mut bad_in_row = false;
                let (mut fields, mut want) = (Vec::new(), Vec::new());
                for (k, (_, values)) in columns.iter().enumerate() {
                    // now and then a NULL field, which stays NULL (no domain here refuses it)
                    let v = if next(12) == 0 {
                        None
                    } else {
                        Some(values[next(values.len())])
                    };
                    let good = match v {
                        None => true,
                        Some(v) => *takes
                            .entry((v, k))
                            .or_insert_with(|| server_takes(v, &format!("fc_probe_{k}"))),
                    };
                    bad_in_row |= !good;
                    let shown = |v: Option<&str>| match (v, csv) {
                        (None, false) => "\\N".to_string(),
                        (None, true) => String::new(),
                        (Some(v), false) => v.to_string(),
                        (Some(v), true) => format!("\"{}\"", v.replace('"', "\"\"")),
                    };
                    fields.push(shown(v));
                    want.push(shown(if good { v } else { None }));
                }
                rows_with_bad += bad_in_row as i64;
                let sep = if csv { "," } else { "\t" };
                data += &(fields.join(sep) + "\n");
                nulled += &(want.join(sep) + "\n");
            }
            assert!(rows_with_bad > 100, "{rows_with_bad} rows with bad values");
            Spi::run("TRUNCATE fc_sn_copy, fc_sn_fast").unwrap();
            let format = if csv { "csv" } else { "text" };
            let path = scratch_file(&format!("set_null_{format}"), nulled.as_bytes());
            Spi::run(&format!("COPY fc_sn_copy FROM '{path}' (FORMAT {format})")).unwrap();
            let _ = std::fs::remove_file(&path);
            let (loaded, set_null) = Spi::get_two_with_args::<i64, i64>(
                &format!(
                    "SELECT rows_loaded, rows_set_null FROM fastcopy.load_data('fc_sn_fast', $1,
                     format => '{format}', on_error => 'set_null')"
                ),
                &[data.as_str().into()],
            )
            .unwrap();
            assert_eq!(loaded, Some(300), "{format}");
            assert_eq!(
                set_null,
                Some(rows_with_bad),
                "{format}: rows with NULLs set"
            );
            assert_eq!(
                table_text("fc_sn_copy"),
                table_text("fc_sn_fast"),
                "{format}: set_null differs from COPY of the data with the bad values made NULL"
            );
        }
    }

    /// PostgreSQL 19's regression tests of set_null (copy2.sql), their messages and details, and
    /// the rules around them: binary and REJECT_LIMIT refused, FORCE_NOT_NULL combined, a NOT NULL
    /// column refuses the NULL with the usual error, rows counted not values.
    #[pg_test]
    fn set_null_as_postgresql_19() {
        Spi::run(
        r#"CREATE DOMAIN d_int_not_null AS integer NOT NULL CHECK (value > 0);
           CREATE DOMAIN d_int_positive_maybe_null AS integer CHECK (value > 0);
           CREATE TABLE t_on_error_null (a d_int_not_null, b d_int_positive_maybe_null, c integer);
           CREATE TABLE t_nn (a int NOT NULL, b int);
           CREATE OR REPLACE FUNCTION pg_temp.fc_full(q text) RETURNS text LANGUAGE plpgsql AS $f$
           DECLARE r text; d text; c text;
           BEGIN EXECUTE q INTO r; RETURN 'ok:' || coalesce(r, '<null>');
           EXCEPTION WHEN OTHERS THEN
             GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL, c = PG_EXCEPTION_CONTEXT;
             RETURN 'err:' || SQLSTATE || ':' || SQLERRM || ' | ' || d || ' | ' || split_part(c, E'\n', 1);
           END $f$;"#,
    )
    .unwrap();
        let load = |table: &str, data: &str, extra: &str| {
            let extra = extra.replace('\'', "''");
            Spi::get_one_with_args::<String>(
            &format!(
                "SELECT pg_temp.fc_full(format('SELECT (fastcopy.load_data(%L, %L, on_error => ''set_null''{extra}))::text', $1, $2))"
            ),
            &[table.into(), data.into()],
        )
        .unwrap()
        .unwrap()
        .replace("fastcopy.load ", "COPY ")
        };
        let refused = |context: &str| {
            format!(
                "err:23502:domain d_int_not_null does not allow null values | ON_ERROR SET_NULL cannot be applied because column \"a\" (domain d_int_not_null) does not accept null values. | COPY t_on_error_null, line 1, column a: {context}"
            )
        };
        assert_eq!(
            load("t_on_error_null", "\\N\t11\t13\n", ""),
            refused("null input")
        );
        assert_eq!(
            load("t_on_error_null", "11\t\\N\n", ", columns => '{c,a}'"),
            refused("null input")
        );
        assert_eq!(
            load("t_on_error_null", "ss\t11\t14\n", ""),
            refused("\"ss\"")
        );
        assert_eq!(
            load("t_on_error_null", "-1\t11\t13\n", ""),
            refused("\"-1\"")
        );
        assert_eq!(
            load("t_on_error_null", "1,1\n", ", delimiter => ','"),
            "err:22P04:missing data for column \"c\" |  | COPY t_on_error_null, line 1: \"1,1\""
        );
        assert_eq!(
            load("t_on_error_null", "1,2,3,4\n", ", delimiter => ','"),
            "err:22P04:extra data after last expected column |  | COPY t_on_error_null, line 1: \"1,2,3,4\""
        );
        let ok = load(
            "t_on_error_null",
            "10\tx1\tyx\n11\tzx\t12\n13\t14\tea\n",
            ", log_verbosity => 'verbose'",
        );
        assert!(ok.starts_with("ok:(3,0,0,"), "{ok}");
        // (the last columns, load_id and rows_rejected, are NULL: no rejects table)
        assert!(
            ok.ends_with(",3,,)"),
            "3 rows with NULLs set, not 4 values: {ok}"
        );
        assert_eq!(
            table_text("t_on_error_null"),
            "(10,,)\n(11,,12)\n(13,14,)",
            "PostgreSQL 19's result"
        );
        // a NOT NULL column takes the NULL and refuses it as any NULL
        let nn = load("t_nn", "x\t1\n", "");
        assert!(
        nn.starts_with(
            "err:23502:null value in column \"a\" of relation \"t_nn\" violates not-null constraint | Failing row contains (null, 1)."
        ),
        "{nn}"
    );
        // FORCE_NOT_NULL: the empty string is the value, which int refuses: NULL after all
        let forced = load("t_nn", "3,\n", ", format => 'csv', force_not_null => '{b}'");
        assert!(forced.starts_with("ok:(1,0,0,"), "{forced}");
        assert_eq!(table_text("t_nn"), "(3,)");
        // refusals, as PostgreSQL 19 words them
        assert_eq!(
            outcome(
                "SELECT fastcopy.load_data('t_nn', ''::bytea, format => 'binary', on_error => 'set_null')::text"
            ),
            "err:42601:only ON_ERROR STOP is allowed in BINARY mode"
        );
        assert_eq!(
            outcome(
                "SELECT fastcopy.load_data('t_nn', '', on_error => 'set_null', reject_limit => 2)::text"
            ),
            "err:22023:COPY REJECT_LIMIT requires ON_ERROR to be set to IGNORE"
        );
        assert_eq!(
            outcome("SELECT fastcopy.load_data('t_nn', '', on_error => 'SET_NULL')::text").get(..3),
            Some("ok:")
        );
    }
}
