//! The rejects table: the rows a load skips (values their input functions refuse, rows with
//! too few or too many fields) are kept, each with the error COPY raises for that row alone.
//! The oracle: COPY of each rejected line alone (its SQLSTATE, message and CONTEXT column), and
//! COPY of the input without the rejected lines for the rows loaded.

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    #[allow(unused_imports)]
    use crate::suites::util::*;
    #[allow(unused_imports)]
    use pgrx::prelude::*;

    /// The column a CONTEXT line names (`COPY t, line 1, column b: "x"`), if any.
    fn context_column(outcome: &str) -> Option<String> {
        let at = outcome.find(", column ")? + ", column ".len();
        let rest = &outcome[at..];
        Some(rest[..rest.find(':')?].to_string())
    }

    #[pg_test]
    fn rejects_keep_each_row_with_the_error_copy_raises_for_it() {
        make_outcome_functions();
        Spi::run(
            "CREATE DOMAIN fc_rj_pos AS int CHECK (VALUE > 0);
         CREATE TABLE fc_rj_copy (a int, b numeric(5,2), c date, p fc_rj_pos, t text);
         CREATE TABLE fc_rj_fast (LIKE fc_rj_copy);
         CREATE TABLE fc_rj_one (LIKE fc_rj_copy);",
        )
        .unwrap();
        let good = [
            "1\t1.5\t2024-01-01\t3\tx",
            "2\t\\N\t\\N\t\\N\t\\N",
            "3\t-99.99\t1999-12-31\t7\ty z",
        ];
        let bad = [
            "x\t1\t2024-01-01\t1\tbad int",
            "4\t1000\t2024-01-01\t1\tnumeric overflow",
            "5\t1\t2023-02-29\t1\tbad date",
            "6\t1\t2024-01-01\t0\tdomain check",
            "7\t1\t2024-01-01",
            "8\t1\t2024-01-01\t1\tt\textra",
            "99999999999\tnope\tnope\tnope\ttwo bad values",
        ];
        let (mut data, mut kept, mut rejected) = (String::new(), String::new(), Vec::new());
        for i in 0..120 {
            let (line, is_bad) = if i % 4 == 3 {
                (bad[i / 4 % bad.len()], true)
            } else {
                (good[i % good.len()], false)
            };
            let offset = data.len() as i64;
            data += line;
            data.push('\n');
            if is_bad {
                rejected.push((i as i64 + 1, line, offset));
            } else {
                kept += line;
                kept.push('\n');
            }
        }
        let path = scratch_file("rejects_kept", kept.as_bytes());
        Spi::run(&format!("COPY fc_rj_copy FROM '{path}'")).unwrap();
        let _ = std::fs::remove_file(&path);
        let (loaded, skipped) = Spi::get_two_with_args::<i64, i64>(
        "SELECT rows_loaded, rows_skipped FROM fastcopy.load_data('fc_rj_fast', $1, rejects => 'fc_rj_rejects')",
        &[data.as_str().into()],
    )
    .unwrap();
        assert_eq!(loaded, Some(90));
        assert_eq!(skipped, Some(rejected.len() as i64));
        assert_eq!(table_text("fc_rj_copy"), table_text("fc_rj_fast"));
        // each reject as COPY sees the line alone (its line number moved to the line's own)
        let mut diffs = Vec::new();
        for (line, text, offset) in &rejected {
            Spi::run("TRUNCATE fc_rj_one").unwrap();
            let path = scratch_file("rejects_one", format!("{text}\n").as_bytes());
            let copy = outcome_with_context(&format!("COPY fc_rj_one FROM '{path}'"));
            let _ = std::fs::remove_file(&path);
            let (state, message) = {
                let rest = copy.strip_prefix("err:").expect("COPY refuses the line");
                (&rest[..5], rest[6..rest.find(" | ").unwrap()].to_string())
            };
            let want = format!(
                "{state}|{message}|{}|{}|{offset}|{}",
                context_column(&copy).unwrap_or_default(),
                text,
                "skipped"
            );
            let got = Spi::get_one_with_args::<String>(
                "SELECT sqlstate || '|' || message || '|' || coalesce(column_name, '') || '|'
                    || convert_from(raw_line, 'UTF8') || '|' || byte_offset || '|' || action
             FROM fc_rj_rejects WHERE line = $1",
                &[(*line).into()],
            )
            .unwrap()
            .unwrap_or_default();
            if got != want {
                diffs.push(format!(
                    "line {line}:\n  COPY:     {want}\n  rejects:  {got}"
                ));
            }
        }
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
        // the rest of each reject's row: one load id and time, the relation, the source, the
        // column's number and raw field where the error is about a value
        let summary = Spi::get_one::<String>(
        "SELECT count(*) || ' ' || count(DISTINCT load_id) || ' ' || count(DISTINCT load_started)
                || ' ' || min(relation) || ' ' || min(source)
                || ' ' || count(*) FILTER (WHERE column_name IS NULL AND attnum IS NULL AND raw_field IS NULL)
                || ' ' || count(*) FILTER (WHERE attnum = (SELECT attnum FROM pg_attribute
                       WHERE attrelid = 'fc_rj_fast'::regclass AND attname = column_name))
         FROM fc_rj_rejects",
    )
    .unwrap()
    .unwrap();
        // 30 rejects; 8 of them (lines with 3 or 6 fields) about the row, 22 about a value
        assert_eq!(summary, "30 1 1 fc_rj_fast load_data 8 22");
        // a target on the executor path (a BEFORE ROW trigger): the same rows, the same rejects
        Spi::run(
        "CREATE TABLE fc_rj_trig (LIKE fc_rj_copy);
         CREATE FUNCTION fc_rj_same() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
         CREATE TRIGGER fc_rj_same BEFORE INSERT ON fc_rj_trig FOR EACH ROW EXECUTE FUNCTION fc_rj_same();",
    )
    .unwrap();
        Spi::run_with_args(
            "SELECT fastcopy.load_data('fc_rj_trig', $1, rejects => 'fc_rj_rejects2')",
            &[data.as_str().into()],
        )
        .unwrap();
        assert_eq!(table_text("fc_rj_copy"), table_text("fc_rj_trig"));
        let same = Spi::get_one::<bool>(
        "SELECT NOT EXISTS (
             (SELECT line, byte_offset, column_name, attnum, raw_field, raw_line, sqlstate, message, detail FROM fc_rj_rejects
              EXCEPT ALL
              SELECT line, byte_offset, column_name, attnum, raw_field, raw_line, sqlstate, message, detail FROM fc_rj_rejects2)
             UNION ALL
             (SELECT line, byte_offset, column_name, attnum, raw_field, raw_line, sqlstate, message, detail FROM fc_rj_rejects2
              EXCEPT ALL
              SELECT line, byte_offset, column_name, attnum, raw_field, raw_line, sqlstate, message, detail FROM fc_rj_rejects))",
    )
    .unwrap();
        assert_eq!(same, Some(true), "rejects of the executor path differ");
        let field = Spi::get_one::<String>(
        "SELECT convert_from(raw_field, 'UTF8') FROM fc_rj_rejects WHERE message LIKE '%date%' LIMIT 1",
    )
    .unwrap();
        assert_eq!(field.as_deref(), Some("2023-02-29"));
    }

    #[pg_test]
    fn rejects_in_the_load_transaction_and_its_rules() {
        make_outcome_functions();
        Spi::run("CREATE TABLE fc_rk (a int)").unwrap();
        let load = |extra: &str| {
            outcome(&format!(
                "SELECT (fastcopy.load_data('fc_rk', E'1\\nx\\n3\\n'{extra})).rows_skipped::text"
            ))
        };
        // two loads into one rejects table: two load ids
        assert_eq!(load(", rejects => 'fc_rk_rej'"), "ok:1");
        assert_eq!(load(", rejects => 'public.fc_rk_rej'"), "ok:1");
        assert_eq!(
            Spi::get_one::<i64>("SELECT count(DISTINCT load_id) FROM fc_rk_rej").unwrap(),
            Some(2)
        );
        // the result's load_id is the one of the load's rows there (NULL without a rejects table)
        let id = Spi::get_one::<i64>(
            "SELECT (fastcopy.load_data('fc_rk', E'x\\n', rejects => 'fc_rk_rej')).load_id",
        )
        .unwrap();
        assert_eq!(
            Spi::get_one::<i64>("SELECT max(load_id) FROM fc_rk_rej").unwrap(),
            id
        );
        assert_eq!(
            Spi::get_one::<i64>("SELECT (fastcopy.load_data('fc_rk', E'1\\n')).load_id").unwrap(),
            None
        );
        Spi::run("DELETE FROM fc_rk_rej WHERE load_id = (SELECT max(load_id) FROM fc_rk_rej)")
            .unwrap();
        // the setting, for statements that name no table (and ON_ERROR ignore implied)
        Spi::run("SET fastcopy.rejects = 'fc_rk_rej'").unwrap();
        assert_eq!(load(""), "ok:1");
        assert_eq!(
            Spi::get_one::<i64>("SELECT count(*) FROM fc_rk_rej").unwrap(),
            Some(3)
        );
        // ... but not for a load that chooses ON_ERROR stop
        assert_eq!(
            load(", on_error => 'stop'"),
            "err:22P02:invalid input syntax for type integer: \"x\""
        );
        Spi::run("RESET fastcopy.rejects").unwrap();
        // refusals
        assert_eq!(
            load(", rejects => 'fc_rk_rej', on_error => 'stop'"),
            "err:22023:a rejects table requires ON_ERROR to be IGNORE or SET_NULL"
        );
        assert_eq!(
            outcome(
                "SELECT fastcopy.load_data('fc_rk', ''::bytea, format => 'binary', rejects => 'fc_rk_rej')::text"
            ),
            "err:0A000:a rejects table cannot be used in BINARY mode"
        );
        // without INSERT on the rejects table: COPY-style 42501
        Spi::run(
            "CREATE ROLE fc_rk_user; GRANT USAGE ON SCHEMA fastcopy TO fc_rk_user;
         GRANT INSERT ON fc_rk TO fc_rk_user; GRANT SELECT ON fc_rk_rej TO fc_rk_user;",
        )
        .unwrap();
        let denied = outcome_as(
            "fc_rk_user",
            "SELECT (fastcopy.load_data('fc_rk', E'x\\n', rejects => 'fc_rk_rej')).rows_skipped::text",
        );
        assert_eq!(denied, "err:42501:permission denied for table fc_rk_rej");
        // rolled back with the load's transaction: a failing load (a unique violation, which is
        // not kept as a reject) leaves no rejects behind
        Spi::run("CREATE TABLE fc_rk_nn (a int PRIMARY KEY)").unwrap();
        let failed = outcome(
            "SELECT fastcopy.load_data('fc_rk_nn', E'x\\n1\\n1\\n', rejects => 'fc_rk_rej2')::text",
        );
        assert!(failed.starts_with("err:23505:"), "{failed}");
        assert_eq!(
            Spi::get_one::<bool>("SELECT to_regclass('fc_rk_rej2') IS NULL").unwrap(),
            Some(true)
        );
    }

    /// A CSV quote left open runs to the end of the input: COPY fails there; with a rejects table
    /// the rows before it load and that last row is kept, with COPY's error and line.
    #[pg_test]
    fn rejects_keep_an_unterminated_csv_quote() {
        make_outcome_functions();
        Spi::run("CREATE TABLE fc_rq (a int, b text); CREATE TABLE fc_rq_copy (a int, b text)")
            .unwrap();
        let data = "1,a\n2,\"b\n3,c\n";
        let path = scratch_file("rejects_quote", data.as_bytes());
        let copy = outcome_with_context(&format!("COPY fc_rq_copy FROM '{path}' (FORMAT csv)"));
        let _ = std::fs::remove_file(&path);
        let rest = copy.strip_prefix("err:").expect("COPY fails");
        let (state, message) = (&rest[..5], &rest[6..rest.find(" | ").unwrap()]);
        let line: i64 = {
            let at = copy.find(", line ").unwrap() + ", line ".len();
            copy[at..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let (loaded, skipped) = Spi::get_two_with_args::<i64, i64>(
        "SELECT rows_loaded, rows_skipped FROM fastcopy.load_data('fc_rq', $1, format => 'csv', rejects => 'fc_rq_rej')",
        &[data.into()],
    )
    .unwrap();
        assert_eq!((loaded, skipped), (Some(1), Some(1)));
        assert_eq!(table_text("fc_rq"), "(1,a)");
        let got = Spi::get_one::<String>(
            "SELECT line || '|' || sqlstate || '|' || message || '|' || (column_name IS NULL)
                || '|' || byte_offset
                || '|' || (convert_from(raw_line, 'UTF8') LIKE '2,\"b%') FROM fc_rq_rej",
        )
        .unwrap()
        .unwrap();
        assert_eq!(got, format!("{line}|{state}|{message}|true|4|true"));
    }

    /// REJECT_RATIO: the share of the rows read a load may skip, checked at its end.
    #[pg_test]
    fn reject_ratio_fails_a_load_that_skips_more() {
        make_outcome_functions();
        Spi::run("CREATE TABLE fc_rr (a int)").unwrap();
        let load = |extra: &str| {
            outcome(&format!(
                "SELECT (fastcopy.load_data('fc_rr', E'x\\n1\\n2\\n3\\n'{extra})).rows_skipped::text"
            ))
        };
        // 1 of 4 rows skipped: within 0.3, more than 0.2
        assert_eq!(load(", on_error => 'ignore', reject_ratio => 0.3"), "ok:1");
        assert_eq!(
            load(", on_error => 'ignore', reject_ratio => 0.2"),
            "err:22P02:skipped more than REJECT_RATIO (0.2) of the rows read due to data type incompatibility"
        );
        assert_eq!(
            load(", rejects => 'fc_rr_rej', reject_ratio => 0.25"),
            "ok:1"
        );
        assert_eq!(
            load(", reject_ratio => 0.5"),
            "err:22023:REJECT_RATIO requires ON_ERROR to be set to IGNORE"
        );
        for bad in ["0", "1", "-0.5"] {
            assert_eq!(
                load(&format!(", on_error => 'ignore', reject_ratio => {bad}")),
                format!(
                    "err:22023:REJECT_RATIO ({}) must be greater than zero and less than one",
                    bad.parse::<f64>().unwrap()
                )
            );
        }
        // the failed load left nothing
        assert_eq!(
            Spi::get_one::<i64>("SELECT count(*) FROM fc_rr").unwrap(),
            Some(2 * 3)
        );
    }

    /// Rows that fail their NOT NULL, CHECK or partition constraint are kept as rejects too (COPY
    /// stops at the first), on every path a row can take: the short path with slots (a CHECK
    /// constraint), without (NOT NULL only), a partitioned table whose partition has its own
    /// column order, a BEFORE ROW trigger. The oracle, per target: COPY of each line alone (ok, or
    /// its SQLSTATE, message, detail and column), and COPY of the lines it takes.
    #[pg_test]
    fn rejects_keep_rows_that_fail_their_constraints() {
        Spi::run(
        "CREATE FUNCTION fc_rc_same() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
    )
    .unwrap();
        let checked = "(a int, b int NOT NULL, c text CONSTRAINT c_ok CHECK (c <> 'bad'), CONSTRAINT a_b CHECK (a <> b))";
        let targets: [(&str, String); 4] = [
        ("plain", format!("CREATE TABLE {{t}} {checked}")),
        ("notnull", "CREATE TABLE {t} (a int, b int NOT NULL, c text)".to_string()),
        (
            "part",
            format!(
                "CREATE TABLE {{t}} {checked} PARTITION BY RANGE (a);
                 CREATE TABLE {{t}}_lo PARTITION OF {{t}} FOR VALUES FROM (MINVALUE) TO (0);
                 CREATE TABLE {{t}}_hi (c text CONSTRAINT c_ok CHECK (c <> 'bad'), extra int,
                     b int NOT NULL, a int, CONSTRAINT a_b CHECK (a <> b));
                 ALTER TABLE {{t}}_hi DROP COLUMN extra;
                 ALTER TABLE {{t}} ATTACH PARTITION {{t}}_hi FOR VALUES FROM (0) TO (MAXVALUE);"
            ),
        ),
        (
            "trig",
            format!(
                "CREATE TABLE {{t}} {checked};
                 CREATE TRIGGER same BEFORE INSERT ON {{t}} FOR EACH ROW EXECUTE FUNCTION fc_rc_same();"
            ),
        ),
    ];
        let lines = [
            "1\t2\tx",
            "4\t\\N\tz",
            "5\t5\tw",
            "-6\t1\tbad",
            "x\t1\ty",
            "-7\t\\N\tbad",
            "-3\t8\t\\N",
            "9\t9\tbad",
        ];
        let mut data = String::new();
        let order: Vec<usize> = (0..200).map(|i| (i * 7 + i / 3) % lines.len()).collect();
        for &l in &order {
            data += lines[l];
            data.push('\n');
        }
        let mut diffs = Vec::new();
        for (name, ddl) in &targets {
            let make = |t: &str| Spi::run(&ddl.replace("{t}", t)).unwrap();
            let (fast, copy, one) = (
                format!("fc_rc_{name}"),
                format!("fc_rc_{name}_copy"),
                format!("fc_rc_{name}_one"),
            );
            make(&fast);
            make(&copy);
            make(&one);
            // each distinct line alone through COPY
            let alone: Vec<String> = lines
                .iter()
                .map(|line| {
                    Spi::run(&format!("TRUNCATE {one}")).unwrap();
                    let path = scratch_file("rejects_check_one", format!("{line}\n").as_bytes());
                    // ok, or sqlstate|message|detail|column
                    let got = match error_diagnostics(&format!("COPY {one} FROM '{path}'")) {
                        None => "ok".to_string(),
                        Some(d) => [&d[0], &d[1], &d[2], &d[4]].map(String::as_str).join("|"),
                    };
                    let _ = std::fs::remove_file(&path);
                    // (the messages name the relation: the oracle's as the target's)
                    got.replace(&one, &fast)
                })
                .collect();
            let kept: String = order
                .iter()
                .filter(|&&l| alone[l] == "ok")
                .map(|&l| format!("{}\n", lines[l]))
                .collect();
            let path = scratch_file("rejects_check_kept", kept.as_bytes());
            Spi::run(&format!("COPY {copy} FROM '{path}'")).unwrap();
            let _ = std::fs::remove_file(&path);
            let rejects = format!("{fast}_rej");
            let skipped = Spi::get_one_with_args::<i64>(
            &format!("SELECT rows_skipped FROM fastcopy.load_data('{fast}', $1, rejects => '{rejects}')"),
            &[data.as_str().into()],
        )
        .unwrap();
            let want_skipped = order.iter().filter(|&&l| alone[l] != "ok").count() as i64;
            assert_eq!(skipped, Some(want_skipped), "{name}: rows skipped");
            assert_eq!(table_text(&copy), table_text(&fast), "{name}: rows loaded");
            for (i, &l) in order.iter().enumerate() {
                let got = Spi::get_one::<String>(&format!(
                    "SELECT sqlstate || '|' || message || '|' || coalesce(detail, '') || '|'
                        || coalesce(column_name, '') || '|' || coalesce(attnum::text, '')
                        || '|' || convert_from(raw_line, 'UTF8')
                 FROM {rejects} WHERE line = {}",
                    i + 1
                ))
                .unwrap_or(None);
                let want = (alone[l] != "ok").then(|| {
                let column = alone[l].rsplit('|').next().unwrap();
                let attnum = if column.is_empty() {
                    String::new()
                } else {
                    // the target's own attribute number, also for a partition's row
                    Spi::get_one::<i16>(&format!(
                        "SELECT attnum FROM pg_attribute WHERE attrelid = '{fast}'::regclass AND attname = '{column}'"
                    ))
                    .unwrap()
                    .unwrap()
                    .to_string()
                };
                format!("{}|{attnum}|{}", alone[l], lines[l])
            });
                // (a value that does not convert: its column is kept, COPY's diagnostics name none)
                let got = got.map(|g| {
                    if g.starts_with("22") {
                        let parts: Vec<&str> = g.splitn(6, '|').collect();
                        format!("{}|{}|{}|||{}", parts[0], parts[1], parts[2], parts[5])
                    } else {
                        g
                    }
                });
                if got != want {
                    diffs.push(format!(
                        "{name} line {}:\n  COPY:     {want:?}\n  rejects:  {got:?}",
                        i + 1
                    ));
                }
            }
        }
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    }

    /// A line with bytes invalid in the input's encoding is a reject too (22021, COPY's message
    /// for the line alone), and the load goes on after it: lines of every kind of bad UTF-8, in
    /// a file big enough to be read by the reader thread in chunks, the last one without its line
    /// end. Inside a CSV quote (where the row ends is unknown) the load still stops, as COPY.
    #[pg_test]
    fn rejects_keep_lines_invalid_in_their_encoding() {
        make_outcome_functions();
        Spi::run("CREATE TABLE fc_re (a int, b text); CREATE TABLE fc_re_copy (LIKE fc_re); CREATE TABLE fc_re_one (LIKE fc_re)").unwrap();
        // (the last: a text escape that gives a byte invalid in the database encoding)
        let bad: [&[u8]; 5] = [
            b"bad \xff here",
            b"\xe2\x82",
            b"x\xc3(y",
            b"\xed\xa0\x80 surrogate",
            b"esc \\xff",
        ];
        let (mut data, mut kept, mut rejected) = (Vec::new(), Vec::new(), Vec::new());
        let n = 30000;
        for i in 1..=n {
            let mut line = format!("{i}\t").into_bytes();
            let is_bad = i % 997 == 5 || i == n;
            if is_bad {
                line.extend_from_slice(bad[i % bad.len()]);
                rejected.push((i as i64, data.len() as i64, line.clone()));
            } else {
                line.extend_from_slice(format!("row {i}").as_bytes());
                kept.extend_from_slice(&line);
                kept.push(b'\n');
            }
            data.extend_from_slice(&line);
            if i < n {
                data.push(b'\n');
            }
        }
        let path = scratch_file("rejects_enc_kept", &kept);
        Spi::run(&format!("COPY fc_re_copy FROM '{path}'")).unwrap();
        let path = scratch_file("rejects_enc", &data);
        let skipped = Spi::get_one::<i64>(&format!(
            "SELECT rows_skipped FROM fastcopy.load('fc_re', '{path}', rejects => 'fc_re_rej')"
        ))
        .unwrap();
        assert_eq!(skipped, Some(rejected.len() as i64));
        assert_eq!(table_text("fc_re_copy"), table_text("fc_re"));
        let mut diffs = Vec::new();
        for (line, offset, raw) in &rejected {
            Spi::run("TRUNCATE fc_re_one").unwrap();
            let mut one = raw.clone();
            one.push(b'\n');
            let path = scratch_file("rejects_enc_one", &one);
            let copy = outcome(&format!("COPY fc_re_one FROM '{path}'"));
            let want = format!(
                "{}|{offset}|true",
                copy.strip_prefix("err:")
                    .unwrap_or(&copy)
                    .replacen(':', "|", 1)
            );
            let got = Spi::get_one_with_args::<String>(
            "SELECT sqlstate || '|' || message || '|' || byte_offset || '|' || (raw_line = $2 AND column_name IS NULL)
             FROM fc_re_rej WHERE line = $1",
            &[(*line).into(), raw.clone().into()],
        )
        .unwrap()
        .unwrap_or_default();
            if got != want {
                diffs.push(format!(
                    "line {line}:\n  COPY:     {want}\n  rejects:  {got}"
                ));
            }
        }
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
        // inside a CSV quote: the load stops with COPY's error
        let path = scratch_file("rejects_enc_csv", b"1,a\n2,\"b\xff\nc\"\n3,d\n");
        let copy = outcome(&format!("COPY fc_re_copy FROM '{path}' (FORMAT csv)"));
        let fast = outcome(&format!(
            "SELECT fastcopy.load('fc_re', '{path}', format => 'csv', rejects => 'fc_re_rej')::text"
        ));
        assert!(copy.starts_with("err:22021:"), "{copy}");
        assert_eq!(fast, copy);
        let _ = std::fs::remove_file(&path);
    }

    /// With `set_null`, each value made NULL is kept as a reject row of its own (action
    /// `set_null`: its row is loaded), with its column, raw field and the error its type's input
    /// gives it (the oracle: the same text cast to the column's type); a row that then fails its
    /// NOT NULL constraint is also kept, as `skipped`. The rows loaded are those of a `set_null`
    /// load of the same input without that row.
    #[pg_test]
    fn rejects_keep_each_value_set_null_made_null() {
        make_outcome_functions();
        Spi::run(
            "CREATE TABLE fc_rn (a int, b numeric(5,2), c date, d int NOT NULL);
         CREATE TABLE fc_rn_plain (LIKE fc_rn INCLUDING ALL);",
        )
        .unwrap();
        let lines = [
            "1\t1.5\t2024-01-01\t1",
            "x\t1000\t2024-02-30\t2",
            "3\tabc\t2024-01-03\t3",
            "4\t2\t2024-01-04\tnope",
            "5\t\\N\t\\N\t5",
        ];
        let data: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let (loaded, set_null, rejected) = Spi::get_three_with_args::<i64, i64, i64>(
        "SELECT rows_loaded, rows_set_null, rows_rejected FROM fastcopy.load_data('fc_rn', $1, on_error => 'set_null', rejects => 'fc_rn_rej')",
        &[data.as_str().into()],
    )
    .unwrap();
        // 5 values made NULL in 3 rows, one of which then failed its NOT NULL constraint
        assert_eq!((loaded, set_null, rejected), (Some(4), Some(3), Some(6)));
        let without: String = lines
            .iter()
            .filter(|l| !l.ends_with("nope"))
            .map(|l| format!("{l}\n"))
            .collect();
        Spi::run_with_args(
            "SELECT fastcopy.load_data('fc_rn_plain', $1, on_error => 'set_null')",
            &[without.as_str().into()],
        )
        .unwrap();
        assert_eq!(table_text("fc_rn_plain"), table_text("fc_rn"));
        // every value made NULL, with the cast's error; the NOT NULL failure after it
        let types = ["int", "numeric(5,2)", "date", "int"];
        let mut want = Vec::new();
        for (n, line) in lines.iter().enumerate() {
            for (i, v) in line.split('\t').enumerate() {
                if v == "\\N" {
                    continue;
                }
                let cast = outcome(&format!("SELECT '{v}'::{}::text", types[i]));
                if let Some(err) = cast.strip_prefix("err:") {
                    let column = ["a", "b", "c", "d"][i];
                    want.push(format!(
                        "{}|set_null|{column}|{}|{v}|{}",
                        n + 1,
                        i + 1,
                        err.replacen(':', "|", 1)
                    ));
                }
            }
        }
        want.push(
        "4|skipped|d|4|nope|23502|null value in column \"d\" of relation \"fc_rn\" violates not-null constraint"
            .to_string(),
    );
        let got = Spi::get_one::<String>(
            "SELECT string_agg(line || '|' || action || '|' || column_name || '|' || attnum || '|'
                           || convert_from(raw_field, 'UTF8') || '|' || sqlstate || '|' || message,
                           E'\\n' ORDER BY line, action, attnum)
         FROM fc_rn_rej",
        )
        .unwrap()
        .unwrap_or_default();
        want.sort_by_key(|w| {
            let f: Vec<&str> = w.split('|').collect();
            (
                f[0].parse::<i32>().unwrap(),
                f[1].to_string(),
                f[3].parse::<i32>().unwrap(),
            )
        });
        assert_eq!(got, want.join("\n"));
    }
}
