//! The loader: a differential suite against COPY over pgrx-tests/corpus/load, and the behaviour
//! COPY has that a corpus cannot show (privileges, refusals, defaults, batching, errors).

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    #[allow(unused_imports)]
    use crate::suites::util::*;
    #[allow(unused_imports)]
    use pgrx::prelude::*;

    include!(concat!(env!("OUT_DIR"), "/load_corpus.rs"));

    fn corpus_file(name: &str) -> &'static [u8] {
        LOAD_CORPUS
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("corpus file {name} missing"))
            .1
    }

    /// A manifest value: `\t`, `\s`, `\e` (empty) and `\\` escapes.
    fn option_value(v: &str) -> String {
        if v == "\\e" {
            return String::new();
        }
        v.replace("\\t", "\t")
            .replace("\\s", " ")
            .replace("\\\\", "\\")
    }

    struct Case {
        file: String,
        defs: String,
        opts: Vec<(String, String)>,
    }

    impl Case {
        fn opt(&self, key: &str) -> Option<&str> {
            self.opts
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        }

        /// `COPY t [(cols)] FROM 'path' WITH (...)`.
        fn copy_sql(&self, table: &str, path: &str) -> String {
            let mut with = Vec::new();
            let mut cols = String::new();
            for (k, v) in &self.opts {
                match k.as_str() {
                    "format" => with.push(format!("FORMAT {v}")),
                    "header" => with.push(format!("HEADER {v}")),
                    "delimiter" => with.push(format!("DELIMITER {}", quote_literal(v))),
                    "null" => with.push(format!("NULL {}", quote_literal(v))),
                    "quote" => with.push(format!("QUOTE {}", quote_literal(v))),
                    "escape" => with.push(format!("ESCAPE {}", quote_literal(v))),
                    "default" => with.push(format!("DEFAULT {}", quote_literal(v))),
                    "columns" => cols = format!("({v})"),
                    _ => {}
                }
            }
            let with = if with.is_empty() {
                String::new()
            } else {
                format!(" WITH ({})", with.join(", "))
            };
            format!("COPY {table} {cols} FROM {}{with}", quote_literal(path))
        }

        /// `SELECT rows_loaded FROM fastcopy.load('t', 'path', ...)`.
        fn load_sql(&self, table: &str, path: &str) -> String {
            let mut args = vec![quote_literal(table), quote_literal(path)];
            for (k, v) in &self.opts {
                let arg = match k.as_str() {
                    "format" => format!("format => {}", quote_literal(v)),
                    "header" if v == "match" => "header_match => true".to_string(),
                    "header" => format!("header => {v}"),
                    "delimiter" => format!("delimiter => {}", quote_literal(v)),
                    "null" => format!("null_string => {}", quote_literal(v)),
                    "quote" => format!("quote => {}", quote_literal(v)),
                    "escape" => format!("escape => {}", quote_literal(v)),
                    "default" => format!("default_string => {}", quote_literal(v)),
                    "columns" => format!("columns => string_to_array({}, ',')", quote_literal(v)),
                    _ => continue,
                };
                args.push(arg);
            }
            format!(
                "SELECT rows_loaded::text FROM fastcopy.load({})",
                args.join(", ")
            )
        }
    }

    fn parse_manifest(text: &str) -> (Vec<String>, Vec<Case>) {
        let mut setup = Vec::new();
        let mut cases = Vec::new();
        for line in text.lines() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(sql) = line.strip_prefix('!') {
                setup.push(sql.to_string());
                continue;
            }
            let parts: Vec<&str> = line.splitn(3, '|').collect();
            assert!(parts.len() >= 2, "manifest line {line:?}");
            let opts = parts
                .get(2)
                .unwrap_or(&"")
                .split_whitespace()
                .map(|kv| {
                    let (k, v) = kv
                        .split_once('=')
                        .unwrap_or_else(|| panic!("option {kv:?}"));
                    (k.to_string(), option_value(v))
                })
                .collect();
            cases.push(Case {
                file: parts[0].trim().to_string(),
                defs: parts[1].trim().to_string(),
                opts,
            });
        }
        (setup, cases)
    }

    #[pg_test]
    fn load_matches_copy_on_corpus() {
        make_outcome_functions();
        let major = server_major();
        let (setup, cases) = parse_manifest(std::str::from_utf8(corpus_file("cases.txt")).unwrap());
        assert!(cases.len() >= 60, "corpus has {} cases", cases.len());
        for sql in &setup {
            Spi::run(sql).unwrap();
        }
        let mut diffs = Vec::new();
        let (mut ran, mut errors) = (0, 0);
        for (n, case) in cases.iter().enumerate() {
            let min: i32 = case.opt("min").map_or(0, |v| v.parse().unwrap());
            let max: i32 = case.opt("max").map_or(99, |v| v.parse().unwrap());
            if major < min || major > max {
                continue;
            }
            ran += 1;
            let (a, b) = (format!("fc_d{n}_copy"), format!("fc_d{n}_fast"));
            for t in [&a, &b] {
                Spi::run(&format!("CREATE TABLE {t} ({})", case.defs)).unwrap();
            }
            let path = scratch_file(&format!("case{n}"), corpus_file(&case.file));
            // errors compare as SQLSTATE, message and CONTEXT line (line, column, value), with
            // the table names and the CONTEXT's verb made alike
            let copy = outcome_with_context(&case.copy_sql(&a, &path)).replace(&a, "T");
            let fast = outcome_with_context(&case.load_sql(&b, &path))
                .replace(&b, "T")
                .replace("| fastcopy.load T,", "| COPY T,");
            let _ = std::fs::remove_file(&path);
            let what = format!("{} ({})", case.file, case.defs);
            match (sqlstate(&copy), sqlstate(&fast)) {
                (Some(_), Some(_)) => {
                    errors += 1;
                    if copy != fast {
                        diffs.push(format!("{what}:\n  COPY:     {copy}\n  fastcopy: {fast}"));
                    }
                }
                (None, None) => {
                    let (ta, tb) = (table_text(&a), table_text(&b));
                    let count = Spi::get_one::<i64>(&format!("SELECT count(*) FROM {a}"))
                        .unwrap()
                        .unwrap();
                    if ta != tb {
                        diffs.push(format!(
                            "{what}: tables differ\n  COPY:     {ta:.300}\n  fastcopy: {tb:.300}"
                        ));
                    } else if fast != format!("ok:{count}") {
                        diffs.push(format!(
                            "{what}: fastcopy reported {fast}, COPY loaded {count}"
                        ));
                    }
                }
                _ => diffs.push(format!("{what}: COPY {copy} / fastcopy {fast}")),
            }
            // expect18: what COPY 18 does where it differs (the end marker)
            let expect = match case.opt("expect18") {
                Some(e) if major >= 18 => Some(e),
                _ => case.opt("expect"),
            };
            match expect {
                Some("error") if !copy.starts_with("err:") => {
                    diffs.push(format!("{what}: corpus expects an error, COPY: {copy}"))
                }
                Some("ok") if !copy.starts_with("ok:") => {
                    diffs.push(format!("{what}: corpus expects success, COPY: {copy}"))
                }
                _ => {}
            }
        }
        assert!(errors >= 25, "only {errors} of {ran} cases are malformed");
        assert!(
            diffs.is_empty(),
            "{} of {ran} cases differ:\n{}",
            diffs.len(),
            diffs.join("\n")
        );
    }

    /// `COPY T, line N` in a CONTEXT line moved on by `by` lines.
    fn shift_context_line(outcome: &str, by: u64) -> String {
        const AT: &str = "| COPY T, line ";
        let Some(at) = outcome.find(AT) else {
            return outcome.to_string();
        };
        let digits_from = at + AT.len();
        let digits: String = outcome[digits_from..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let Ok(n) = digits.parse::<u64>() else {
            return outcome.to_string();
        };
        format!(
            "{}{}{}",
            &outcome[..digits_from],
            n + by,
            &outcome[digits_from + digits.len()..]
        )
    }

    /// PostgreSQL 19's `HEADER n` (`header_lines => n`), on every major: every text and CSV case
    /// of the corpus with n lines put before it loads as COPY with `HEADER true` loads the case
    /// with one such line before it, or fails as that COPY fails, with the CONTEXT's line n - 1
    /// further on. (Not as COPY loads the case alone: in CSV the newlines inside quotes of the
    /// first line are not counted, as its line ending is not known yet.) The lines put before
    /// would not load (too many fields, not numbers).
    #[pg_test]
    fn header_lines_skip_what_copy_would_not_see() {
        make_outcome_functions();
        let (setup, cases) = parse_manifest(std::str::from_utf8(corpus_file("cases.txt")).unwrap());
        for sql in &setup {
            Spi::run(sql).unwrap();
        }
        let major = server_major();
        let mut diffs = Vec::new();
        let (mut ran, mut errors) = (0, 0);
        for (n, case) in cases.iter().enumerate() {
            let min: i32 = case.opt("min").map_or(0, |v| v.parse().unwrap());
            let max: i32 = case.opt("max").map_or(99, |v| v.parse().unwrap());
            if major < min
                || major > max
                || case.opt("header").is_some()
                || case.opt("format") == Some("binary")
            {
                continue;
            }
            let lines = 1 + (n as u64 % 3);
            let data = corpus_file(&case.file);
            // the data's own line ending (the server takes the first line's for the whole input)
            let eol: &[u8] = match data.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(i) if data[i] == b'\r' && data.get(i + 1) == Some(&b'\n') => b"\r\n",
                Some(i) if data[i] == b'\r' => b"\r",
                _ => b"\n",
            };
            let mut with_header = Vec::new();
            for k in 0..lines {
                with_header
                    .extend_from_slice(format!("skipped {k}\t;|x y z 9999999999999").as_bytes());
                with_header.extend_from_slice(eol);
            }
            with_header.extend_from_slice(data);
            ran += 1;
            let (a, b) = (format!("fc_h{n}_copy"), format!("fc_h{n}_fast"));
            for t in [&a, &b] {
                Spi::run(&format!("CREATE TABLE {t} ({})", case.defs)).unwrap();
            }
            let junk_len = (with_header.len() - data.len()) / lines as usize;
            let one = &with_header[(lines as usize - 1) * junk_len..];
            let plain = scratch_file(&format!("hone{n}"), one);
            let headed = scratch_file(&format!("hlines{n}"), &with_header);
            let copy = case.copy_sql(&a, &plain);
            let copy = format!(
                "{}{}",
                copy.replace(" WITH (", " WITH (HEADER true, "),
                if copy.contains(" WITH (") {
                    ""
                } else {
                    " WITH (HEADER true)"
                }
            );
            let copy = outcome_with_context(&copy).replace(&a, "T");
            let load = case.load_sql(&b, &headed);
            let load = format!("{}, header_lines => {lines})", &load[..load.len() - 1]);
            let fast = outcome_with_context(&load)
                .replace(&b, "T")
                .replace("| fastcopy.load T,", "| COPY T,");
            let _ = (std::fs::remove_file(&plain), std::fs::remove_file(&headed));
            let what = format!("{} ({}), {lines} header lines", case.file, case.defs);
            match (sqlstate(&copy), sqlstate(&fast)) {
                (Some(_), Some(_)) => {
                    errors += 1;
                    if shift_context_line(&copy, lines - 1) != fast {
                        diffs.push(format!("{what}:\n  COPY:     {copy}\n  fastcopy: {fast}"));
                    }
                }
                (None, None) => {
                    if table_text(&a) != table_text(&b) {
                        diffs.push(format!("{what}: tables differ"));
                    }
                }
                _ => diffs.push(format!("{what}: COPY {copy} / fastcopy {fast}")),
            }
        }
        assert!(ran >= 60 && errors >= 20, "{ran} cases, {errors} errors");
        assert!(
            diffs.is_empty(),
            "{} of {ran} cases differ:\n{}",
            diffs.len(),
            diffs.join("\n")
        );
    }

    #[pg_test]
    fn header_lines_options() {
        make_outcome_functions();
        Spi::run("CREATE TABLE fc_hl (a int, b text)").unwrap();
        let load = |data: &str, extra: &str| {
            outcome(&format!(
                "SELECT (fastcopy.load_data('fc_hl', {}{extra})).rows_loaded::text",
                quote_literal(data)
            ))
        };
        // n lines, 0 lines, more lines than the data has
        assert_eq!(load("h1\nh2\n1\tx\n", ", header_lines => 2"), "ok:1");
        assert_eq!(load("1\tx\n", ", header_lines => 0"), "ok:1");
        assert_eq!(load("h1\nh2\n", ", header_lines => 5"), "ok:0");
        // header_lines wins over header; header_match over both
        assert_eq!(
            load("1\tx\n", ", header => true, header_lines => 0"),
            "ok:1"
        );
        assert_eq!(
            load("a\tb\n1\tx\n", ", header_lines => 3, header_match => true"),
            "ok:1"
        );
        // PostgreSQL 19's refusals
        let neg = load("1\tx\n", ", header_lines => -1");
        assert_eq!(
            neg,
            "err:22023:a negative integer value cannot be specified for header_lines"
        );
        let bin = outcome(
            "SELECT fastcopy.load_data('fc_hl', ''::bytea, format => 'binary', header_lines => 2)::text",
        );
        assert_eq!(bin, "err:0A000:cannot specify HEADER in BINARY mode");
    }

    #[pg_test]
    fn load_privileges_as_copy() {
        Spi::run(
            "CREATE ROLE fc_loader; CREATE ROLE fc_reader IN ROLE pg_read_server_files;
         CREATE TABLE fc_priv (a int, b text);
         GRANT USAGE ON SCHEMA fastcopy TO fc_loader, fc_reader;
         GRANT INSERT (a) ON fc_priv TO fc_loader;
         GRANT INSERT ON fc_priv TO fc_reader;",
        )
        .unwrap();
        let path = scratch_file("priv", b"1\tx\n");
        // no INSERT on column b: COPY and fastcopy both refuse, 42501
        let copy = outcome_as("fc_reader", &format!("COPY fc_priv FROM '{path}'"));
        assert!(copy.starts_with("ok:"), "{copy}");
        let denied = outcome_as(
            "fc_loader",
            "SELECT fastcopy.load_data('fc_priv', E'1\\tx\\n')::text",
        );
        assert!(
            denied.starts_with("err:42501:permission denied for table fc_priv"),
            "{denied}"
        );
        // INSERT on the listed column is enough
        let ok = outcome_as(
            "fc_loader",
            "SELECT (fastcopy.load_data('fc_priv', E'7\\n', columns => '{a}')).rows_loaded::text",
        );
        assert_eq!(ok, "ok:1");
        // a server file needs pg_read_server_files, as COPY FROM a file: the same error as COPY's
        let file = outcome_as(
            "fc_loader",
            &format!("SELECT fastcopy.load('fc_priv', '{path}', columns => '{{a}}')::text"),
        );
        let copy = outcome_as("fc_loader", &format!("COPY fc_priv (a) FROM '{path}'"));
        assert!(copy.starts_with("err:42501:"), "{copy}");
        assert_eq!(file, copy);
        let file = outcome_as(
            "fc_reader",
            &format!("SELECT (fastcopy.load('fc_priv', '{path}')).rows_loaded::text"),
        );
        assert_eq!(file, "ok:1");
        let _ = std::fs::remove_file(&path);
    }

    #[pg_test]
    fn load_refuses_row_level_security() {
        Spi::run(
            "CREATE ROLE fc_rls IN ROLE pg_read_server_files;
         CREATE TABLE fc_rls_t (a int); ALTER TABLE fc_rls_t ENABLE ROW LEVEL SECURITY;
         CREATE POLICY p ON fc_rls_t USING (true);
         GRANT USAGE ON SCHEMA fastcopy TO fc_rls; GRANT INSERT, SELECT ON fc_rls_t TO fc_rls;",
        )
        .unwrap();
        let path = scratch_file("rls", b"1\n");
        let copy = outcome_as("fc_rls", &format!("COPY fc_rls_t FROM '{path}'"));
        let fast = outcome_as(
            "fc_rls",
            &format!("SELECT fastcopy.load('fc_rls_t', '{path}')::text"),
        );
        let _ = std::fs::remove_file(&path);
        assert_eq!(sqlstate(&copy), Some("0A000"), "{copy}");
        assert_eq!(sqlstate(&fast), Some("0A000"), "{fast}");
        assert!(fast.contains("row-level security"), "{fast}");
    }

    #[pg_test]
    fn load_refuses_targets_it_cannot_load() {
        make_outcome_functions();
        Spi::run(
            "CREATE TABLE fc_base (a int PRIMARY KEY);
         CREATE VIEW fc_view AS SELECT a FROM fc_base;
         CREATE MATERIALIZED VIEW fc_mat AS SELECT a FROM fc_base;
         CREATE SEQUENCE fc_seq;
         CREATE TABLE fc_gen (a int, b int GENERATED ALWAYS AS (a * 2) STORED);",
        )
        .unwrap();
        let load = |t: &str, extra: &str| {
            outcome(&format!(
                "SELECT fastcopy.load_data('{t}', E'1\\n'{extra})::text"
            ))
        };
        for (t, code, text) in [
            ("fc_view", "42809", "cannot copy to view"),
            ("fc_mat", "42809", "cannot copy to materialized view"),
            ("fc_seq", "42809", "cannot copy to sequence"),
        ] {
            let got = load(t, "");
            assert!(
                got.starts_with(&format!("err:{code}:")) && got.contains(text),
                "{t}: {got}"
            );
        }
        // a generated column in the column list: COPY's own error
        let got = load("fc_gen", ", columns => '{a,b}'");
        assert!(
            got.starts_with("err:42P10:column \"b\" is a generated column"),
            "{got}"
        );
        // nothing was loaded anywhere
        assert_eq!(
            Spi::get_one::<i64>("SELECT count(*) FROM fc_base").unwrap(),
            Some(0)
        );
    }

    #[pg_test]
    fn load_fills_defaults_per_row() {
        Spi::run(
            "CREATE TABLE fc_def (id serial, a int, r float8 DEFAULT random(), k text DEFAULT 'k',
                              i bigint GENERATED ALWAYS AS IDENTITY)",
        )
        .unwrap();
        let n = Spi::get_one::<i64>(
        "SELECT rows_loaded FROM fastcopy.load_data('fc_def', E'10\\n20\\n30\\n', columns => '{a}')",
    )
    .unwrap();
        assert_eq!(n, Some(3));
        let check = Spi::get_one::<bool>(
            "SELECT array_agg(id ORDER BY id) = '{1,2,3}' AND array_agg(i ORDER BY i) = '{1,2,3}'
            AND count(DISTINCT r) = 3 AND bool_and(k = 'k') AND sum(a) = 60 FROM fc_def",
        )
        .unwrap();
        assert_eq!(check, Some(true));
    }

    #[pg_test]
    fn load_constraint_and_unique_violations_abort() {
        make_outcome_functions();
        Spi::run("CREATE TABLE fc_con (a int PRIMARY KEY, b int NOT NULL CHECK (b > 0))").unwrap();
        Spi::run("SET fastcopy.max_buffered_tuples = 100").unwrap();
        let good: String = (1..=1000).map(|i| format!("{i}\t{i}\n")).collect();
        for (bad, code) in [
            ("5\t1\n", "23505"),
            ("2000\t\\N\n", "23502"),
            ("2001\t-1\n", "23514"),
        ] {
            let data = format!("{good}{bad}");
            let got = outcome(&format!(
                "SELECT fastcopy.load_data('fc_con', {})::text",
                quote_literal(&data)
            ));
            assert_eq!(sqlstate(&got), Some(code), "{got}");
            assert_eq!(
                Spi::get_one::<i64>("SELECT count(*) FROM fc_con").unwrap(),
                Some(0)
            );
        }
        let got = outcome("SELECT fastcopy.load_data('fc_con', E'1\\t1\\n1\\t2\\n')::text");
        assert!(
            got.contains("duplicate key value violates unique constraint"),
            "{got}"
        );
    }

    #[pg_test]
    fn load_error_context_names_line_and_column() {
        Spi::run(
            "CREATE TABLE fc_ctx (a int, b int, c text);
         CREATE OR REPLACE FUNCTION pg_temp.fc_context(q text) RETURNS text LANGUAGE plpgsql AS $f$
         DECLARE ctx text; st text;
         BEGIN
           EXECUTE q;
           RETURN 'no error';
         EXCEPTION WHEN OTHERS THEN
           GET STACKED DIAGNOSTICS ctx = PG_EXCEPTION_CONTEXT, st = RETURNED_SQLSTATE;
           RETURN st || ' ' || substring(ctx from 'fastcopy\\.load [^\\n]*');
         END $f$;",
        )
        .unwrap();
        let ctx = |data: &str| {
            Spi::get_one_with_args::<String>(
            "SELECT pg_temp.fc_context(format('SELECT fastcopy.load_data(''fc_ctx'', %L)', $1::text))",
            &[data.into()],
        )
        .unwrap()
        .unwrap()
        };
        assert_eq!(
            ctx("1\t2\tx\n3\tabc\ty\n"),
            "22P02 fastcopy.load fc_ctx, line 2, column b: \"abc\""
        );
        assert_eq!(
            ctx("1\t2\tx\n3\t4\n"),
            "22P04 fastcopy.load fc_ctx, line 2: \"3\t4\""
        );
        // COPY shows the line's text for errors about the whole line
        assert_eq!(
            ctx("1\t2\tx\t9\n"),
            "22P04 fastcopy.load fc_ctx, line 1: \"1\t2\tx\t9\""
        );
        assert_eq!(
            ctx("1\t99999999999\tx\n"),
            "22003 fastcopy.load fc_ctx, line 1, column b: \"99999999999\""
        );
    }

    /// The reader converts dates, timestamps, timestamptz and numerics in one spelling only, whose
    /// meaning does not depend on the session; under other DateStyles and TimeZones the tables
    /// after fastcopy and after COPY are still the same (the other spellings in the file are the
    /// server's, under the session's settings, on both sides). bytea (hex) goes the same ways:
    /// text, binary, and on the backend with a default column.
    #[pg_test]
    fn load_typed_values_match_copy_under_other_datestyles_and_timezones() {
        for (file, defs) in [
            (
                "typed_formed.txt",
                "id bigint, d date, tz timestamptz, ts timestamp, n numeric(12,2), m numeric, note text",
            ),
            (
                "typed_fixed.txt",
                "id int, f8 float8, f4 real, b bool, u uuid, tz timestamptz",
            ),
            ("typed_bytea.txt", "id int, b bytea, note text"),
        ] {
            typed_values_match_copy(file, defs);
        }
    }

    /// One typed corpus file through COPY and fastcopy.load under several DateStyles and time
    /// zones (DST zones, where timestamptz values without an offset are the server's, and zones
    /// of one fixed offset, where the reader takes them), the tables compared as stored.
    fn typed_values_match_copy(file: &str, defs: &str) {
        let path = scratch_file("typed", corpus_file(file));
        for (style, zone) in [
            ("SQL, DMY", "America/New_York"),
            ("German", "Asia/Kolkata"),
            ("Postgres, YMD", "Pacific/Chatham"),
            ("ISO, MDY", "UTC"),
            ("ISO, DMY", "Etc/GMT+5"),
            ("ISO, YMD", "Etc/GMT-14"),
        ] {
            Spi::run(&format!(
                "SET DateStyle = '{style}'; SET TimeZone = '{zone}'"
            ))
            .unwrap();
            Spi::run("DROP TABLE IF EXISTS fc_ty_copy, fc_ty_fast").unwrap();
            Spi::run(&format!(
                "CREATE TABLE fc_ty_copy ({defs}); CREATE TABLE fc_ty_fast ({defs})"
            ))
            .unwrap();
            Spi::run(&format!("COPY fc_ty_copy FROM '{path}'")).unwrap();
            Spi::run(&format!("SELECT fastcopy.load('fc_ty_fast', '{path}')")).unwrap();
            // compared as stored: the text forms in UTC and ISO, then the rows
            Spi::run("SET DateStyle = 'ISO, MDY'; SET TimeZone = 'UTC'").unwrap();
            let (a, b) = (table_text("fc_ty_copy"), table_text("fc_ty_fast"));
            assert!(
                a.len() > 100_000,
                "{file} {style} {zone}: {} bytes",
                a.len()
            );
            assert!(a == b, "{file} {style} {zone}: the tables differ");
        }
        // the same rows as COPY's binary format (the reader forms them from binary values):
        // loaded by COPY and by fastcopy.load, both equal to the text load
        let bin = format!("{path}.bin");
        Spi::run(&format!("COPY fc_ty_copy TO '{bin}' (FORMAT binary)")).unwrap();
        Spi::run("DROP TABLE IF EXISTS fc_ty_bcopy, fc_ty_bfast").unwrap();
        Spi::run(&format!(
            "CREATE TABLE fc_ty_bcopy ({defs}); CREATE TABLE fc_ty_bfast ({defs})"
        ))
        .unwrap();
        Spi::run(&format!("COPY fc_ty_bcopy FROM '{bin}' (FORMAT binary)")).unwrap();
        Spi::run(&format!(
            "SELECT fastcopy.load('fc_ty_bfast', '{bin}', format => 'binary')"
        ))
        .unwrap();
        let (a, b, t) = (
            table_text("fc_ty_bcopy"),
            table_text("fc_ty_bfast"),
            table_text("fc_ty_copy"),
        );
        assert!(a == b, "{file} binary: the tables differ");
        assert!(a == t, "{file} binary: not the text load's rows");
        // a column left to its default: no reader plan, every value converted on the backend (the
        // core's conversions where they take it, else the input function)
        let cols: Vec<&str> = defs
            .split(", ")
            .map(|d| d.split(' ').next().unwrap())
            .collect();
        let cols = cols.join(", ");
        Spi::run("DROP TABLE IF EXISTS fc_ty_dcopy, fc_ty_dfast").unwrap();
        Spi::run(&format!(
            "CREATE TABLE fc_ty_dcopy (extra int DEFAULT 7, {defs}); \
         CREATE TABLE fc_ty_dfast (extra int DEFAULT 7, {defs})"
        ))
        .unwrap();
        Spi::run(&format!("COPY fc_ty_dcopy ({cols}) FROM '{path}'")).unwrap();
        Spi::run(&format!(
            "SELECT fastcopy.load('fc_ty_dfast', '{path}', columns => '{{{cols}}}')"
        ))
        .unwrap();
        let (a, b) = (table_text("fc_ty_dcopy"), table_text("fc_ty_dfast"));
        assert!(
            a.len() > 100_000 && a == b,
            "{file} with a default column: the tables differ"
        );
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(&bin);
    }

    #[pg_test]
    fn load_flushes_follow_buffer_settings() {
        Spi::run("CREATE TABLE fc_buf (a int)").unwrap();
        // 10,000 lines of 8 bytes ("1000000N", then a line ending)
        let data: String = (0..10_000)
            .map(|i| format!("{}\n", 10_000_000 + i))
            .collect();
        let flushes = |settings: &str| {
            Spi::run(settings).unwrap();
            Spi::run("TRUNCATE fc_buf").unwrap();
            let f = Spi::get_one_with_args::<i64>(
                "SELECT flushes FROM fastcopy.load_data('fc_buf', $1)",
                &[data.as_str().into()],
            )
            .unwrap()
            .unwrap();
            assert_eq!(
                Spi::get_one::<i64>("SELECT count(*) FROM fc_buf").unwrap(),
                Some(10_000)
            );
            f
        };
        assert_eq!(
            flushes(
                "SET fastcopy.max_buffered_bytes = '1MB'; SET fastcopy.max_buffered_tuples = 1000"
            ),
            10
        );
        assert_eq!(flushes("SET fastcopy.max_buffered_tuples = 100"), 100);
        assert_eq!(flushes("SET fastcopy.max_buffered_tuples = 3000"), 4);
        // bytes: a flush once the lines hold 1023 bytes (1 kB less one, as COPY's 65535 is 64 kB
        // less one; the line endings not counted, as COPY counts) = every 128 rows of 8 bytes
        assert_eq!(
            flushes(
                "SET fastcopy.max_buffered_tuples = 1000000; SET fastcopy.max_buffered_bytes = 1"
            ),
            10_000_usize.div_ceil(128) as i64
        );
    }

    /// Tuples the reader formed, in batches that span two or three of the reader's blocks (4,096
    /// rows each; max_buffered_tuples above a block) or only a few rows, with rows with a NULL
    /// (formed on the backend) between them: each load leaves the table COPY leaves, every row at
    /// the same TID.
    #[pg_test]
    fn load_formed_tuples_across_blocks() {
        Spi::run("CREATE TABLE fc_fb_copy (a int, b bigint, c smallint)").unwrap();
        Spi::run("CREATE TABLE fc_fb (a int, b bigint, c smallint)").unwrap();
        let data: String = (0..30_000i64)
            .map(|i| match i % 997 {
                0 => format!("{i}\t\\N\t{}\n", i % 30_000),
                _ => format!("{i}\t{}\t{}\n", i * 1_000_003, i % 32_000 - 16_000),
            })
            .collect();
        let path = quote_literal(&scratch_file("formed_blocks", data.as_bytes()));
        Spi::run(&format!("COPY fc_fb_copy FROM {path}")).unwrap();
        for settings in [
            "SET fastcopy.max_buffered_tuples = 1000",
            "SET fastcopy.max_buffered_tuples = 10000; SET fastcopy.max_buffered_bytes = '1MB'",
            "SET fastcopy.max_buffered_tuples = 3",
        ] {
            Spi::run(settings).unwrap();
            Spi::run("TRUNCATE fc_fb").unwrap();
            Spi::run(&format!("SELECT fastcopy.load('fc_fb', {path})")).unwrap();
            let differ = Spi::get_one::<i64>(
                "SELECT count(*) FROM (
               (SELECT ctid, * FROM fc_fb EXCEPT ALL SELECT ctid, * FROM fc_fb_copy)
               UNION ALL
               (SELECT ctid, * FROM fc_fb_copy EXCEPT ALL SELECT ctid, * FROM fc_fb)) d",
            )
            .unwrap();
            assert_eq!(differ, Some(0), "{settings}");
            assert_eq!(
                Spi::get_one::<i64>("SELECT count(*) FROM fc_fb").unwrap(),
                Some(30_000),
                "{settings}"
            );
        }
    }

    #[pg_test]
    fn load_result_reports_what_happened() {
        Spi::run("CREATE TABLE fc_res (a int, b text)").unwrap();
        let data = "1\tx\n2\ty\n3\tz\n";
        let row = Spi::get_one_with_args::<String>(
            "SELECT format('%s %s %s %s %s %s', rows_loaded, rows_skipped, bytes_read, flushes,
                       pages_extended, extend_calls) || ' ' || (elapsed_ms >= 0)
         FROM fastcopy.load_data('fc_res', $1)",
            &[data.into()],
        )
        .unwrap()
        .unwrap();
        assert_eq!(row, format!("3 0 {} 1 0 0 true", data.len()));
    }

    #[pg_test]
    fn load_options_refused_as_copy() {
        make_outcome_functions();
        Spi::run("CREATE TABLE fc_opt (a int, b text)").unwrap();
        let path = scratch_file("opts", b"1\tx\n");
        let major = server_major();
        // (first major, COPY's column list and WITH, fastcopy's arguments): both refuse with the
        // same SQLSTATE and message, in COPY's order where several things are wrong
        for (min, copy_with, fast_args) in [
            (15, "WITH (FORMAT xml)", "format => 'xml'"),
            (15, "WITH (DELIMITER ',,')", "delimiter => ',,'"),
            (15, "WITH (DELIMITER E'\\n')", "delimiter => E'\\n'"),
            (15, "WITH (DELIMITER 'a')", "delimiter => 'a'"),
            (15, "WITH (DELIMITER '\\')", "delimiter => '\\'"),
            (15, "WITH (NULL E'x\\ry')", "null_string => E'x\\ry'"),
            (15, "WITH (QUOTE '''')", "quote => ''''"),
            (15, "WITH (ESCAPE '\\')", "escape => '\\'"),
            (
                15,
                "WITH (FORMAT csv, QUOTE ',')",
                "format => 'csv', quote => ','",
            ),
            (
                15,
                "WITH (FORMAT csv, QUOTE 'ab')",
                "format => 'csv', quote => 'ab'",
            ),
            (
                15,
                "WITH (FORMAT csv, ESCAPE 'ab')",
                "format => 'csv', escape => 'ab'",
            ),
            (
                15,
                "WITH (DELIMITER ',', NULL 'a,b')",
                "delimiter => ',', null_string => 'a,b'",
            ),
            (
                15,
                "WITH (FORMAT csv, NULL '\"')",
                "format => 'csv', null_string => '\"'",
            ),
            (15, "WITH (FORCE_NOT_NULL (a))", "force_not_null => '{a}'"),
            (15, "WITH (FORCE_NULL (a))", "force_null => '{a}'"),
            // the column list before any option
            (
                15,
                "(a, ctid) WITH (FORMAT '')",
                "columns => '{a,ctid}', format => ''",
            ),
            (
                15,
                "(a, a) WITH (FORMAT xml)",
                "columns => '{a,a}', format => 'xml'",
            ),
            // FORCE_* against CSV mode before the NULL marker's conflicts
            (
                15,
                "WITH (DELIMITER 'N', FORCE_NOT_NULL (a))",
                "delimiter => 'N', force_not_null => '{a}'",
            ),
            (
                15,
                "WITH (DELIMITER 'N', FORCE_NULL (a))",
                "delimiter => 'N', force_null => '{a}'",
            ),
            (15, "WITH (DELIMITER 'N')", "delimiter => 'N'"),
            // the DEFAULT marker's checks (16+)
            (16, "WITH (DEFAULT '\\N')", "default_string => '\\N'"),
            (
                16,
                "WITH (DELIMITER ';', DEFAULT 'test;test')",
                "delimiter => ';', default_string => 'test;test'",
            ),
            (
                16,
                "WITH (FORMAT csv, QUOTE '\"', DEFAULT 'test\"test')",
                "format => 'csv', quote => '\"', default_string => 'test\"test'",
            ),
            (16, "WITH (DEFAULT E'a\\nb')", "default_string => E'a\\nb'"),
            // ON_ERROR's value before how options go together (17+: COPY knows ON_ERROR)
            (
                17,
                "WITH (DELIMITER E'\\n', ON_ERROR '')",
                "delimiter => E'\\n', on_error => ''",
            ),
            (17, "WITH (ON_ERROR 'skip')", "on_error => 'skip'"),
        ] {
            if major < min {
                continue;
            }
            let (cols, with) = match copy_with.split_once(" WITH ") {
                Some((c, w)) => (c, format!("WITH {w}")),
                None if copy_with.starts_with("WITH") => ("", copy_with.to_string()),
                None => (copy_with, String::new()),
            };
            let copy = outcome(&format!("COPY fc_opt {cols} FROM '{path}' {with}"));
            let fast = outcome(&format!(
                "SELECT fastcopy.load('fc_opt', '{path}', {fast_args})::text"
            ));
            assert!(
                sqlstate(&copy).is_some(),
                "{copy_with}: COPY accepted it: {copy}"
            );
            assert_eq!(copy, fast, "{copy_with}");
        }
        // ON_ERROR's value in any case, as COPY compares it
        for v in ["Stop", "IGNORE", "iGnOrE"] {
            let fast = outcome(&format!(
                "SELECT (fastcopy.load('fc_opt', '{path}', on_error => '{v}')).rows_loaded::text"
            ));
            assert_eq!(fast, "ok:1", "on_error {v}");
            if major >= 17 {
                let copy = outcome(&format!("COPY fc_opt FROM '{path}' WITH (ON_ERROR '{v}')"));
                assert_eq!(copy, "ok:<null>", "COPY ON_ERROR {v}");
            }
        }
        let _ = std::fs::remove_file(&path);
    }

    /// COPY's option checks and fastcopy's in the same order: every pair of options from a set
    /// of values (bad ones, and ones that only conflict with others) gives the same outcome
    /// through COPY and through fastcopy.load: the same SQLSTATE and message, or both succeed.
    /// COPY reads its options in the order written and fastcopy in a fixed one, so COPY is given
    /// them in ProcessCopyOptions' own order.
    #[pg_test]
    fn load_option_pairs_checked_in_copys_order() {
        make_outcome_functions();
        Spi::run("CREATE TABLE fc_pair (a int, b text)").unwrap();
        let path = scratch_file("pairs", b"1\tx\n");
        let major = server_major();
        // (first major whose COPY has it, option, COPY's spelling, fastcopy's argument), in
        // ProcessCopyOptions' order; the column list goes first
        let options: &[(i32, &str, &str, &str)] = &[
            (15, "columns", "(a, a)", "columns => '{a,a}'"),
            (15, "columns", "(nosuch)", "columns => '{nosuch}'"),
            (15, "format", "FORMAT xml", "format => 'xml'"),
            (15, "format", "FORMAT csv", "format => 'csv'"),
            (15, "freeze", "FREEZE true", "freeze => true"),
            (15, "delimiter", "DELIMITER ',,'", "delimiter => ',,'"),
            (15, "delimiter", "DELIMITER E'\\n'", "delimiter => E'\\n'"),
            (15, "delimiter", "DELIMITER 'a'", "delimiter => 'a'"),
            (15, "delimiter", "DELIMITER 'N'", "delimiter => 'N'"),
            (15, "delimiter", "DELIMITER '\"'", "delimiter => '\"'"),
            (15, "null", "NULL E'x\\ry'", "null_string => E'x\\ry'"),
            (15, "null", "NULL 'a,b'", "null_string => 'a,b'"),
            (15, "null", "NULL 'x\"y'", "null_string => 'x\"y'"),
            (16, "default", "DEFAULT '\\N'", "default_string => '\\N'"),
            (16, "default", "DEFAULT 'x,y'", "default_string => 'x,y'"),
            (16, "default", "DEFAULT 'd\"'", "default_string => 'd\"'"),
            (15, "header", "HEADER true", "header => true"),
            (15, "header", "HEADER match", "header_match => true"),
            (15, "quote", "QUOTE 'ab'", "quote => 'ab'"),
            (15, "quote", "QUOTE ','", "quote => ','"),
            (15, "escape", "ESCAPE '\\'", "escape => '\\'"),
            (15, "escape", "ESCAPE 'ab'", "escape => 'ab'"),
            (
                15,
                "force_not_null",
                "FORCE_NOT_NULL (a)",
                "force_not_null => '{a}'",
            ),
            (
                15,
                "force_not_null",
                "FORCE_NOT_NULL (nosuch)",
                "force_not_null => '{nosuch}'",
            ),
            (15, "force_null", "FORCE_NULL (b)", "force_null => '{b}'"),
            (
                17,
                "force_not_null",
                "FORCE_NOT_NULL *",
                "force_not_null => '{*}'",
            ),
            (17, "force_null", "FORCE_NULL *", "force_null => '{*}'"),
            (17, "on_error", "ON_ERROR 'bogus'", "on_error => 'bogus'"),
            (17, "on_error", "ON_ERROR 'IGNORE'", "on_error => 'IGNORE'"),
            (
                17,
                "log_verbosity",
                "LOG_VERBOSITY 'bogus'",
                "log_verbosity => 'bogus'",
            ),
            (
                17,
                "log_verbosity",
                "LOG_VERBOSITY verbose",
                "log_verbosity => 'verbose'",
            ),
            (
                18,
                "log_verbosity",
                "LOG_VERBOSITY silent",
                "log_verbosity => 'silent'",
            ),
            (18, "reject_limit", "REJECT_LIMIT 0", "reject_limit => 0"),
            (18, "reject_limit", "REJECT_LIMIT 5", "reject_limit => 5"),
        ];
        let usable: Vec<_> = options.iter().filter(|o| major >= o.0).collect();
        let (mut pairs, mut errors) = (0, 0);
        let mut diffs = Vec::new();
        for (i, x) in usable.iter().enumerate() {
            for y in &usable[i + 1..] {
                if x.1 == y.1 {
                    continue; // one option twice: COPY's "conflicting or redundant options"
                }
                let (cols, with): (Vec<&str>, Vec<&str>) = [x, y]
                    .iter()
                    .map(|o| {
                        if o.1 == "columns" {
                            (o.2, "")
                        } else {
                            ("", o.2)
                        }
                    })
                    .unzip();
                let with: Vec<&str> = with.into_iter().filter(|w| !w.is_empty()).collect();
                let with = if with.is_empty() {
                    String::new()
                } else {
                    format!("WITH ({})", with.join(", "))
                };
                let copy = outcome(&format!(
                    "COPY fc_pair {} FROM '{path}' {with}",
                    cols.concat()
                ));
                let fast = outcome(&format!(
                    "SELECT fastcopy.load('fc_pair', '{path}', {}, {})::text",
                    x.3, y.3
                ));
                pairs += 1;
                let same = match (sqlstate(&copy), sqlstate(&fast)) {
                    (Some(_), Some(_)) => {
                        errors += 1;
                        copy == fast
                    }
                    (None, None) => true,
                    _ => false,
                };
                if !same {
                    diffs.push(format!("{} + {}: COPY {copy} / fastcopy {fast}", x.2, y.2));
                }
            }
        }
        let _ = std::fs::remove_file(&path);
        // 15 has no DEFAULT and no ON_ERROR in COPY: fewer pairs there
        assert!(
            pairs >= 180 && errors >= 150,
            "{pairs} pairs, {errors} refused"
        );
        assert!(
            diffs.is_empty(),
            "{} of {pairs} option pairs differ:\n{}",
            diffs.len(),
            diffs.join("\n")
        );
    }

    /// A read-only transaction refuses a load as it refuses COPY FROM (25006), but for a
    /// temporary table, which COPY may fill in one.
    #[pg_test]
    fn load_refused_in_a_read_only_transaction_as_copy() {
        make_outcome_functions();
        Spi::run("CREATE TABLE fc_ro (a int); CREATE TEMP TABLE fc_ro_tmp (a int)").unwrap();
        let path = scratch_file("ro", b"1\n2\n");
        Spi::run("SET LOCAL transaction_read_only = on").unwrap();
        // the outcome function exists already (creating it again is refused now)
        let outcome = |q: &str| {
            Spi::get_one_with_args::<String>("SELECT pg_temp.fc_outcome($1)", &[q.into()])
                .unwrap()
                .unwrap()
        };
        let copy = outcome(&format!("COPY fc_ro FROM '{path}'"));
        let fast = outcome(&format!("SELECT fastcopy.load('fc_ro', '{path}')::text"));
        let data = outcome("SELECT fastcopy.load_data('fc_ro', E'1\\n')::text");
        assert_eq!(
            copy,
            "err:25006:cannot execute COPY FROM in a read-only transaction"
        );
        assert_eq!(fast, copy);
        assert_eq!(data, copy);
        let copy_tmp = outcome(&format!("COPY fc_ro_tmp FROM '{path}'"));
        let fast_tmp = outcome(&format!(
            "SELECT (fastcopy.load('fc_ro_tmp', '{path}')).rows_loaded::text"
        ));
        assert_eq!(
            (copy_tmp.as_str(), fast_tmp.as_str()),
            ("ok:<null>", "ok:2")
        );
        let _ = std::fs::remove_file(&path);
    }
}
