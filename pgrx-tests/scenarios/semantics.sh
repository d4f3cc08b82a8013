#!/usr/bin/env bash
# Full COPY semantics, differentially: every scenario builds two identical schemas
# (tables c_* for COPY, f_* for fastcopy.load, each side with its own audit tables, partitions,
# referenced tables), loads the SAME file with `COPY c_x FROM file WITH (...)` and with
# `fastcopy.load('f_x', file, ...)`, then compares every affected table both ways (EXCEPT ALL
# and row counts), or, when an error is expected, the SQLSTATE of both and that nothing of
# either load is visible. Triggers (statement, row, WHEN, transition tables, BEFORE ROW that
# modifies or skips), foreign keys, generated columns, partitions (tuple routing, other column
# orders, sub-partitions, partition triggers, partition constraints), FREEZE (contents and the
# frozen state of the pages), on_error 'ignore', default_string, force_not_null / force_null,
# WHERE, FORCE_* *, log_verbosity, reject_limit, views with INSTEAD OF triggers, foreign tables
# and foreign partitions (postgres_fdw back into the same database).
# Runs against the build `cargo pgrx test pgNN` just installed, on the throwaway cluster.
#   pgrx-tests/scenarios/semantics.sh 17
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
. scripts/scenario_lib.sh
scripts/cluster.sh start "$m" >/dev/null
export PGOPTIONS="-c search_path=sem,public"
f() { echo "$FASTCOPY_RUN/sem-$m-$1"; }   # a data file of this script

# SQL with @ for the table prefix, run once with c_ and once with f_ (stdin).
both() {
  local s; s=$(cat)
  psql -v ON_ERROR_STOP=1 <<<"SET client_min_messages = warning;
${s//@/c_}
${s//@/f_}" || { echo "FAIL setup SQL of the scenario (script bug)"; fail=1; }
}
# One session running a SQL script: "ok", or "SQLSTATE: message | CONTEXT" of the error that
# stopped it (the first CONTEXT line), with the scenario's table prefix (c_ / f_) as @ and
# fastcopy's CONTEXT verb as COPY's, so that COPY's and fastcopy's errors compare as text.
err_of() {
  local out rc msg ctx
  out=$(psql -v ON_ERROR_STOP=1 -v VERBOSITY=verbose <<<"$1" 2>&1 >/dev/null); rc=$?
  msg=$(sed -n 's/^.*ERROR:  //p' <<<"$out" | head -1)
  ctx=$(sed -n 's/^CONTEXT:  //p' <<<"$out" | head -1 | sed 's/^fastcopy\.load /COPY /')
  if [ -n "$msg" ]; then sed -E 's/(^|[^a-z0-9_])[cf]_/\1@/g' <<<"$msg | $ctx"
  elif [ $rc != 0 ]; then echo "psql rc=$rc"; else echo ok; fi
}
code() { echo "${1%%:*}"; }
# "x=N y=N ..." for the tables c_x/f_x, c_y/f_y...; a pair that differs shows DIFF(...).
cmp() { psql -c "SELECT sem.cmp(VARIADIC string_to_array('$*', ' '))"; }

# same_ok LABEL WANT COPY-SQL LOAD-SQL TABLES...: both succeed, the tables compare as WANT
same_ok() {
  local label=$1 want=$2 ce fe r; ce=$(err_of "$3"); fe=$(err_of "$4"); shift 4; r=$(cmp "$@")
  check "$label: $r" '[ "$ce" = ok ] && [ "$fe" = ok ] && [ "$r" = "$want" ]' \
        "copy: $ce | fastcopy: $fe | want: $want"
}
# same_err LABEL SQLSTATE WANT COPY-SQL LOAD-SQL TABLES...: both fail with SQLSTATE (COPY's),
# the same message and CONTEXT line; the tables compare as WANT afterwards (nothing visible)
same_err() {
  local label=$1 st=$2 want=$3 ce fe r; ce=$(err_of "$4"); fe=$(err_of "$5"); shift 5; r=$(cmp "$@")
  check "$label: copy $(code "$ce"), fastcopy $(code "$fe"), $r" \
        '[ "$(code "$ce")" = "$st" ] && [ "$fe" = "$ce" ] && [ "$r" = "$want" ]' \
        "copy: $ce | fastcopy: $fe | want: $st, $want"
}

psql -v ON_ERROR_STOP=1 <<'SQL' || { echo "FAIL setup"; exit 1; }
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fastcopy CASCADE;
CREATE EXTENSION fastcopy;
DROP SCHEMA IF EXISTS sem CASCADE;
CREATE SCHEMA sem;
CREATE FUNCTION sem.cmp(VARIADIC names text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE x text; c regclass; f regclass; nc bigint; nf bigint; cf bigint; fc bigint; o text[] := '{}';
BEGIN
  FOREACH x IN ARRAY names LOOP
    c := to_regclass('sem.c_' || x); f := to_regclass('sem.f_' || x);
    IF c IS NULL OR f IS NULL THEN
      o := o || format('%s=MISSING(%s)', x, CASE WHEN c IS NULL THEN 'copy' ELSE 'fastcopy' END);
      CONTINUE;
    END IF;
    EXECUTE format('SELECT (SELECT count(*) FROM %1$s), (SELECT count(*) FROM %2$s),
                    (SELECT count(*) FROM (SELECT * FROM %1$s EXCEPT ALL SELECT * FROM %2$s) d),
                    (SELECT count(*) FROM (SELECT * FROM %2$s EXCEPT ALL SELECT * FROM %1$s) d)', c, f)
      INTO nc, nf, cf, fc;
    IF nc = nf AND cf = 0 AND fc = 0 THEN o := o || format('%s=%s', x, nc);
    ELSE o := o || format('%s=DIFF(copy %s fastcopy %s; copy-fastcopy %s fastcopy-copy %s)', x, nc, nf, cf, fc);
    END IF;
  END LOOP;
  RETURN array_to_string(o, ' ');
END $$;
-- the row count COPY reports (its command tag)
CREATE FUNCTION sem.copy_count(sql text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint; BEGIN EXECUTE sql; GET DIAGNOSTICS n = ROW_COUNT; RETURN n; END $$;
-- 'ok' or 'SQLSTATE: message', the statement run in a subtransaction
CREATE FUNCTION sem.sqlstate_of(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE sql; RETURN 'ok'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$;
SQL

# ---- the data files ----
psql -v ON_ERROR_STOP=1 <<SQL || { echo "FAIL writing the data files"; exit 1; }
COPY (SELECT g, g % 7, 'r' || g FROM generate_series(1, 1000) g) TO '$(f abc)';
COPY (SELECT g, g % 7, 'r' || g FROM generate_series(1, 20000) g) TO '$(f big)';
COPY (SELECT g, g % 100 + 1, 'r' || g FROM generate_series(1, 2000) g) TO '$(f fk_ok)';
COPY (SELECT g, CASE g WHEN 1500 THEN 1000 ELSE g % 100 + 1 END, 'r' || g FROM generate_series(1, 2000) g) TO '$(f fk_bad)';
COPY (SELECT CASE g WHEN 800 THEN 5 ELSE g END, g % 7, 'r' || g FROM generate_series(1, 1000) g) TO '$(f dup)';
COPY (SELECT g, 'x' || g, g % 5 FROM generate_series(1, 1000) g) TO '$(f gen)';
COPY (SELECT 'x' || g, g FROM generate_series(1, 1000) g) TO '$(f gen_ca)';
COPY (SELECT g, g % 4, 'v' || g, g * 3 FROM generate_series(1, 3000) g) TO '$(f part)';
COPY (SELECT g, CASE g WHEN 500 THEN 7 ELSE g % 3 END FROM generate_series(1, 999) g) TO '$(f pn_bad)';
COPY (SELECT g, 0 FROM generate_series(1, 500) g) TO '$(f p0_ok)';
COPY (SELECT g, g % 2 FROM generate_series(1, 500) g) TO '$(f ptt)';
COPY (SELECT g FROM generate_series(1, 1000) g) TO '$(f vd)';
COPY (SELECT g, CASE g WHEN 300 THEN 1 ELSE 0 END FROM generate_series(1, 500) g) TO '$(f p0_bad)';
COPY (SELECT g, CASE g WHEN 700 THEN NULL ELSE g % 7 END, 'r' || g FROM generate_series(1, 1000) g) TO '$(f nn)';
CREATE TABLE sem.bad (g int, col text, val text);
INSERT INTO sem.bad VALUES (1, 'a', 'x1'), (1000, 'a', '99999999999'), (2345, 'a', ''),
  (3000, 'b', '2024-02-30'), (4567, 'b', 'notadate'), (5000, 'c', 'abc'), (6001, 'c', '123456.7'),
  (7777, 'd', 'maybe'), (9000, 'd', '2'), (10000, 'a', '1.5');
CREATE VIEW sem.oe_rows AS
  SELECT g, CASE WHEN x.col = 'a' THEN x.val ELSE g::text END AS a,
         CASE WHEN x.col = 'b' THEN x.val ELSE (date '2020-01-01' + g)::text END AS b,
         CASE WHEN x.col = 'c' THEN x.val ELSE (g % 9999 / 100.0)::numeric(6,2)::text END AS c,
         CASE WHEN x.col = 'd' THEN x.val ELSE (g % 2 = 0)::text END AS d,
         'row ' || g AS e, x.g IS NOT NULL AS is_bad
  FROM generate_series(1, 10000) g LEFT JOIN sem.bad x USING (g);
COPY (SELECT a, b, c, d, e FROM sem.oe_rows ORDER BY g) TO '$(f oe)';
COPY (SELECT a, b, c, d, e FROM sem.oe_rows WHERE NOT is_bad ORDER BY g) TO '$(f oe_clean)';
COPY (SELECT CASE WHEN g = 50 THEN NULL ELSE g END, 'r' || g FROM generate_series(1, 100) g) TO '$(f oe_nn)';
SQL
printf '%s\n' '1	\D	x	\D	5' '2	7	\D	2024-05-01	8' '3	\N	\D	\D	\N' '4	\D	\\D	2024-01-01	4' > "$(f ds_text)"
printf '%s\n' '1,DEF,x,DEF,5' '2,7,DEF,2024-05-01,8' '3,,"DEF",DEF,' '4,DEF,"",,4' > "$(f ds_csv)"
printf '%s\n' '1	\D	9' '2	abc	8' '3	\D	\N' > "$(f ds_cols)"
printf '%s\n' '1	\D	x	2024-01-01	5' '2	7	y	2024-01-01	\D' > "$(f ds_nodefault)"
# line 50 of 100 clean on_error rows: an extra field / a missing field, with or without a bad value
head -100 "$(f oe_clean)" > "$(f oe100)"
awk 'NR == 50 { $0 = $0 "\textra" } 1' "$(f oe100)" > "$(f oe_extra)"
awk 'NR == 50 { $0 = "x1\t2020-01-01\t1.00\ttrue\trow x\textra" } 1' "$(f oe100)" > "$(f oe_extra_bad)"
awk -F '\t' 'NR == 50 { $0 = $1 "\t" $2 "\t" $3 } 1' "$(f oe100)" > "$(f oe_missing)"
awk 'NR == 50 { $0 = "x1\t2020-01-01" } 1' "$(f oe100)" > "$(f oe_missing_bad)"
awk 'NR != 50' "$(f oe100)" > "$(f oe_missing_bad_clean)"
printf '%s\n' '1,,"",x' '2,"",,y' '3,NULL,"NULL",z' '4,b,c,' '5,"NULL",NULL,""' > "$(f fn)"

# ---- 1. statement triggers fire once each ----
both <<'SQL'
CREATE TABLE @st (a int, b int, c text);
CREATE TABLE @st_audit (what text, rows_seen bigint);
CREATE FUNCTION @st_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO @st_audit SELECT TG_WHEN || ' ' || TG_LEVEL || ' ' || TG_OP, count(*) FROM @st; RETURN NULL; END $$;
CREATE TRIGGER b BEFORE INSERT ON @st FOR EACH STATEMENT EXECUTE FUNCTION @st_log();
CREATE TRIGGER a AFTER INSERT ON @st FOR EACH STATEMENT EXECUTE FUNCTION @st_log();
SQL
same_ok "statement triggers BEFORE/AFTER fire once each" "st=1000 st_audit=2" \
  "COPY c_st FROM '$(f abc)'" "SELECT fastcopy.load('f_st', '$(f abc)')" st st_audit

# ---- 2. AFTER ROW triggers (with WHEN), transition tables ----
both <<'SQL'
CREATE TABLE @rt (a int, b int, c text);
CREATE TABLE @rt_audit (a int, b int, c text, rows_seen bigint);
CREATE FUNCTION @rt_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO @rt_audit SELECT NEW.a, NEW.b, NEW.c, count(*) FROM @rt; RETURN NULL; END $$;
CREATE FUNCTION @rt_when() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO @rt_audit VALUES (NEW.a, NEW.b, 'when b = 0', -1); RETURN NULL; END $$;
CREATE TRIGGER r AFTER INSERT ON @rt FOR EACH ROW EXECUTE FUNCTION @rt_log();
CREATE TRIGGER w AFTER INSERT ON @rt FOR EACH ROW WHEN (NEW.b = 0) EXECUTE FUNCTION @rt_when();
CREATE TABLE @tt (a int, b int, c text);
CREATE TABLE @tt_audit (n bigint, s bigint, h text);
CREATE FUNCTION @tt_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO @tt_audit SELECT count(*), sum(a), md5(string_agg(a || ',' || b || ',' || c, ';' ORDER BY a)) FROM n; RETURN NULL; END $$;
CREATE TRIGGER t AFTER INSERT ON @tt REFERENCING NEW TABLE AS n FOR EACH STATEMENT EXECUTE FUNCTION @tt_log();
SQL
same_ok "AFTER ROW triggers (one with WHEN) see every row, fire after the last" "rt=1000 rt_audit=1142" \
  "COPY c_rt FROM '$(f abc)'" "SELECT fastcopy.load('f_rt', '$(f abc)')" rt rt_audit
r=$(psql -c "SELECT count(*) FILTER (WHERE rows_seen = 1000) || '/' || count(*) FILTER (WHERE rows_seen <> -1) FROM c_rt_audit")
check "COPY's AFTER ROW triggers all ran after the last row was inserted ($r)" '[ "$r" = "1000/1000" ]'
same_ok "AFTER STATEMENT trigger with a transition table (count, sum, hash of NEW TABLE)" "tt=1000 tt_audit=1" \
  "COPY c_tt FROM '$(f abc)'" "SELECT fastcopy.load('f_tt', '$(f abc)')" tt tt_audit

# ---- 3. foreign keys ----
both <<'SQL'
CREATE TABLE @parent (id int PRIMARY KEY);
INSERT INTO @parent SELECT generate_series(1, 100);
CREATE TABLE @child (a int, pid int REFERENCES @parent, c text);
SQL
same_ok "foreign key, every key exists" "child=2000 parent=100" \
  "COPY c_child FROM '$(f fk_ok)'" "SELECT fastcopy.load('f_child', '$(f fk_ok)')" child parent
psql -c "TRUNCATE c_child, f_child"
same_err "foreign key, one key missing (line 1500): nothing visible" 23503 "child=0" \
  "COPY c_child FROM '$(f fk_bad)'" "SELECT fastcopy.load('f_child', '$(f fk_bad)')" child
# the error caught in a subtransaction, then a good load in the same transaction
same_ok "FK error caught in a subtransaction, then a good load in the same transaction" "child=2000" \
  "BEGIN; SELECT sem.sqlstate_of(\$s\$COPY c_child FROM '$(f fk_bad)'\$s\$); COPY c_child FROM '$(f fk_ok)'; COMMIT;" \
  "BEGIN; SELECT sem.sqlstate_of(\$s\$SELECT fastcopy.load('f_child', '$(f fk_bad)')\$s\$); SELECT fastcopy.load('f_child', '$(f fk_ok)'); COMMIT;" \
  child
r=$(psql -c "SELECT sem.sqlstate_of(\$s\$SELECT fastcopy.load('f_child', '$(f fk_bad)')\$s\$)")
check "the FK error in a subtransaction is 23503 ($r)" '[ "$(code "$r")" = 23503 ]'

# ---- 4. BEFORE ROW triggers: modify, skip, then constraints and indexes ----
both <<'SQL'
CREATE FUNCTION @mod() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.b := NEW.b * 2; NEW.c := upper(NEW.c); RETURN NEW; END $$;
CREATE FUNCTION @skip() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF NEW.a % 3 = 0 THEN RETURN NULL; END IF; RETURN NEW; END $$;
CREATE FUNCTION @nullb() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF NEW.a = 700 THEN NEW.b := NULL; END IF; RETURN NEW; END $$;
CREATE TABLE @bm (a int, b int, c text);
CREATE TRIGGER m BEFORE INSERT ON @bm FOR EACH ROW EXECUTE FUNCTION @mod();
CREATE TABLE @bs (a int, b int, c text);
CREATE TRIGGER s BEFORE INSERT ON @bs FOR EACH ROW EXECUTE FUNCTION @skip();
CREATE TABLE @bu (a int PRIMARY KEY, b int, c text);
CREATE INDEX ON @bu (c);
CREATE TRIGGER m BEFORE INSERT ON @bu FOR EACH ROW EXECUTE FUNCTION @mod();
CREATE TABLE @bn (a int, b int NOT NULL, c text);
CREATE TRIGGER n BEFORE INSERT ON @bn FOR EACH ROW EXECUTE FUNCTION @nullb();
SQL
same_ok "BEFORE ROW trigger modifying the row" "bm=1000" \
  "COPY c_bm FROM '$(f abc)'" "SELECT fastcopy.load('f_bm', '$(f abc)')" bm
cn=$(psql -c "SELECT sem.copy_count(\$s\$COPY c_bs FROM '$(f abc)'\$s\$)" 2>&1)
fn=$(psql -c "SELECT rows_loaded FROM fastcopy.load('f_bs', '$(f abc)')" 2>&1)
r=$(cmp bs)
check "BEFORE ROW trigger skipping every third row: $r, rows counted copy $cn fastcopy $fn" \
  '[ "$r" = "bs=667" ] && [ "$cn" = 667 ] && [ "$fn" = 667 ]'
same_ok "BEFORE ROW trigger on a table with indexes" "bu=1000" \
  "COPY c_bu FROM '$(f abc)'" "SELECT fastcopy.load('f_bu', '$(f abc)')" bu
psql -c "TRUNCATE c_bu, f_bu"
same_err "BEFORE ROW trigger, unique violation (line 800): nothing visible" 23505 "bu=0" \
  "COPY c_bu FROM '$(f dup)'" "SELECT fastcopy.load('f_bu', '$(f dup)')" bu
same_err "NOT NULL checked on the row the BEFORE trigger returns (b := NULL at line 700)" 23502 "bn=0" \
  "COPY c_bn FROM '$(f abc)'" "SELECT fastcopy.load('f_bn', '$(f abc)')" bn

# ---- 5. stored generated columns ----
both <<'SQL'
CREATE TABLE @gen (a int, g1 int GENERATED ALWAYS AS (a * 2) STORED, c text,
                   g2 text GENERATED ALWAYS AS (upper(c) || '!') STORED, b int);
CREATE TABLE @gent (LIKE @gen INCLUDING GENERATED);
CREATE FUNCTION @bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.a := NEW.a + 1000; NEW.c := NEW.c || 't'; RETURN NEW; END $$;
CREATE TRIGGER t BEFORE INSERT ON @gent FOR EACH ROW EXECUTE FUNCTION @bump();
SQL
same_ok "generated columns computed (file has the other columns)" "gen=1000" \
  "COPY c_gen FROM '$(f gen)'" "SELECT fastcopy.load('f_gen', '$(f gen)')" gen
same_ok "generated columns with a reordered column list (c, a)" "gen=2000" \
  "COPY c_gen (c, a) FROM '$(f gen_ca)'" "SELECT fastcopy.load('f_gen', '$(f gen_ca)', columns => ARRAY['c', 'a'])" gen
same_ok "generated columns computed after a BEFORE ROW trigger changed their inputs" "gent=1000" \
  "COPY c_gent FROM '$(f gen)'" "SELECT fastcopy.load('f_gent', '$(f gen)')" gent
psql -c "TRUNCATE c_gen, f_gen"
same_err "a generated column named in the column list is refused" 42P10 "gen=0" \
  "COPY c_gen (a, g1, c) FROM '$(f abc)'" "SELECT fastcopy.load('f_gen', '$(f abc)', columns => ARRAY['a', 'g1', 'c'])" gen

# generated from a default, a CHECK on the generated value, a partitioned table with one
both <<'SQL'
CREATE TABLE @gd (a int, b int DEFAULT 7, g int GENERATED ALWAYS AS (a + b) STORED CHECK (g < 2000));
CREATE TABLE @gx (a int, b int DEFAULT 7, g int GENERATED ALWAYS AS (a + b) STORED CHECK (g < 900));
CREATE TABLE @gp (a int, g int GENERATED ALWAYS AS (a * 3) STORED) PARTITION BY RANGE (a);
CREATE TABLE @gp_lo PARTITION OF @gp FOR VALUES FROM (MINVALUE) TO (500);
CREATE TABLE @gp_hi PARTITION OF @gp FOR VALUES FROM (500) TO (MAXVALUE);
SQL
same_ok "generated column computed from a column's default (column list without it)" "gd=1000" \
  "COPY c_gd (a) FROM '$(f vd)'" "SELECT fastcopy.load('f_gd', '$(f vd)', columns => ARRAY['a'])" gd
same_err "CHECK on a generated column (a + 7 reaches 900 at line 893): nothing visible" 23514 "gx=0" \
  "COPY c_gx (a) FROM '$(f vd)'" "SELECT fastcopy.load('f_gx', '$(f vd)', columns => ARRAY['a'])" gx
same_ok "generated column in a partitioned table" "gp=1000" \
  "COPY c_gp (a) FROM '$(f vd)'" "SELECT fastcopy.load('f_gp', '$(f vd)', columns => ARRAY['a'])" gp

# ---- 5b. a volatile default that reads the table: rows one at a time, as COPY ----
both <<'SQL'
CREATE TABLE @vd (a int, n bigint);
CREATE FUNCTION @vd_count() RETURNS bigint LANGUAGE sql VOLATILE AS 'SELECT count(*) FROM sem.@vd';
ALTER TABLE @vd ALTER COLUMN n SET DEFAULT @vd_count();
SQL
same_ok "a volatile default sees every earlier row (n = 0, 1, 2, ...)" "vd=1000" \
  "COPY c_vd (a) FROM '$(f vd)'" "SELECT fastcopy.load('f_vd', '$(f vd)', columns => ARRAY['a'])" vd

# ---- 6. partitioned tables ----
both <<'SQL'
CREATE TABLE @pt (k int, r int, v text, d int) PARTITION BY LIST (r);
CREATE INDEX ON @pt (k);
CREATE TABLE @pt_0 (v text, d int, k int, r int);                  -- another column order
ALTER TABLE @pt ATTACH PARTITION @pt_0 FOR VALUES IN (0);
CREATE TABLE @pt_1 PARTITION OF @pt FOR VALUES IN (1);
CREATE FUNCTION @pt_1_mod() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.v := NEW.v || '-p1'; NEW.d := -NEW.d; RETURN NEW; END $$;
CREATE TRIGGER m BEFORE INSERT ON @pt_1 FOR EACH ROW EXECUTE FUNCTION @pt_1_mod();
CREATE TABLE @pt_2 PARTITION OF @pt FOR VALUES IN (2) PARTITION BY RANGE (k);   -- sub-partitioned
CREATE TABLE @pt_2a PARTITION OF @pt_2 FOR VALUES FROM (MINVALUE) TO (1500);
CREATE TABLE @pt_2b PARTITION OF @pt_2 FOR VALUES FROM (1500) TO (MAXVALUE);
CREATE TABLE @pt_def (x int, k int, r int, v text, d int);         -- a dropped column
ALTER TABLE @pt_def DROP COLUMN x;
ALTER TABLE @pt ATTACH PARTITION @pt_def DEFAULT;
CREATE TABLE @pt_audit (what text, k int, v text);
CREATE FUNCTION @pt_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'ROW' THEN INSERT INTO @pt_audit VALUES (substr(TG_TABLE_NAME, 3), NEW.k, NEW.v);
  ELSE INSERT INTO @pt_audit VALUES (TG_WHEN || ' STATEMENT ' || substr(TG_TABLE_NAME, 3), NULL, NULL);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER a AFTER INSERT ON @pt FOR EACH ROW EXECUTE FUNCTION @pt_log();
CREATE TRIGGER s AFTER INSERT ON @pt FOR EACH STATEMENT EXECUTE FUNCTION @pt_log();
CREATE TRIGGER s BEFORE INSERT ON @pt_1 FOR EACH STATEMENT EXECUTE FUNCTION @pt_log();
CREATE FUNCTION @pt_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO @pt_audit SELECT 'NEW TABLE', count(*), sum(k) || ' ' || md5(string_agg(v, ',' ORDER BY k)) FROM n; RETURN NULL; END $$;
CREATE TRIGGER n AFTER INSERT ON @pt REFERENCING NEW TABLE AS n FOR EACH STATEMENT EXECUTE FUNCTION @pt_new();
CREATE TABLE @ptt (k int, r int) PARTITION BY LIST (r);             -- only a transition table
CREATE TABLE @ptt_0 PARTITION OF @ptt FOR VALUES IN (0);
CREATE TABLE @ptt_1 PARTITION OF @ptt DEFAULT;
CREATE TABLE @ptt_audit (n bigint, s bigint);
CREATE FUNCTION @ptt_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO @ptt_audit SELECT count(*), sum(k) FROM n; RETURN NULL; END $$;
CREATE TRIGGER n AFTER INSERT ON @ptt REFERENCING NEW TABLE AS n FOR EACH STATEMENT EXECUTE FUNCTION @ptt_new();
CREATE TABLE @pn (k int, r int) PARTITION BY LIST (r);
CREATE TABLE @pn_0 PARTITION OF @pn FOR VALUES IN (0);
CREATE TABLE @pn_1 PARTITION OF @pn FOR VALUES IN (1);
CREATE TABLE @pn_2 PARTITION OF @pn FOR VALUES IN (2);
SQL
cn=$(psql -c "SELECT sem.copy_count(\$s\$COPY c_pt FROM '$(f part)'\$s\$)" 2>&1)
fn=$(psql -c "SELECT rows_loaded FROM fastcopy.load('f_pt', '$(f part)')" 2>&1)
r=$(cmp pt pt_0 pt_1 pt_2 pt_2a pt_2b pt_def pt_audit)
check "partitioned table, rows interleaved over 3 partitions (one sub-partitioned) + DEFAULT, with a transition table on the root: $r, rows copy $cn fastcopy $fn" \
  '[ "$r" = "pt=3000 pt_0=750 pt_1=750 pt_2=750 pt_2a=375 pt_2b=375 pt_def=750 pt_audit=3002" ] && [ "$cn" = 3000 ] && [ "$fn" = 3000 ]'
same_ok "partitioned table whose only trigger has a transition table (rows of every partition in it)" \
  "ptt=500 ptt_0=250 ptt_1=250 ptt_audit=1" \
  "COPY c_ptt FROM '$(f ptt)'" "SELECT fastcopy.load('f_ptt', '$(f ptt)')" ptt ptt_0 ptt_1 ptt_audit
same_err "partitioned table without DEFAULT, a row fitting no partition (line 500)" 23514 "pn=0" \
  "COPY c_pn FROM '$(f pn_bad)'" "SELECT fastcopy.load('f_pn', '$(f pn_bad)')" pn
same_ok "directly into one partition" "pn=500 pn_0=500" \
  "COPY c_pn_0 FROM '$(f p0_ok)'" "SELECT fastcopy.load('f_pn_0', '$(f p0_ok)')" pn pn_0
psql -c "TRUNCATE c_pn, f_pn"
same_err "directly into one partition, a row outside its bound (line 300)" 23514 "pn=0 pn_0=0" \
  "COPY c_pn_0 FROM '$(f p0_bad)'" "SELECT fastcopy.load('f_pn_0', '$(f p0_bad)')" pn pn_0

# ---- 7. FREEZE ----
have_pi=0; have_vis=0
psql -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS pageinspect" 2>/dev/null && have_pi=1
psql -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS pg_visibility" 2>/dev/null && have_vis=1
psql -v ON_ERROR_STOP=1 <<'SQL'
-- "tuples frozen pages all_visible_pages vm_all_frozen" ('-' where the extension is missing)
CREATE FUNCTION sem.frozen_state(rel regclass, pi boolean, vis boolean) RETURNS text LANGUAGE plpgsql AS $$
DECLARE pages int := pg_relation_size(rel) / current_setting('block_size')::int;
        t bigint; fr bigint; av bigint; vf text := '-'; bad text := '-'; s text;
BEGIN
  IF pi THEN   -- the extensions may live in any schema
    SELECT quote_ident(extnamespace::regnamespace::text) INTO s FROM pg_extension WHERE extname = 'pageinspect';
    EXECUTE format('SELECT count(*), count(*) FILTER (WHERE t_infomask & 768 = 768)
             FROM generate_series(0, $2 - 1) p, %1$s.heap_page_items(%1$s.get_raw_page($1::text, p)) WHERE lp_flags = 1', s)
      INTO t, fr USING rel, pages;
    EXECUTE format('SELECT count(*) FROM generate_series(0, $2 - 1) p
             WHERE (%1$s.page_header(%1$s.get_raw_page($1::text, p))).flags & 4 <> 0', s) INTO av USING rel, pages;
  END IF;
  IF vis THEN
    SELECT quote_ident(extnamespace::regnamespace::text) INTO s FROM pg_extension WHERE extname = 'pg_visibility';
    EXECUTE format('SELECT count(*) FILTER (WHERE all_frozen)::text FROM %s.pg_visibility_map($1)', s) INTO vf USING rel;
    EXECUTE format('SELECT count(*)::text FROM %s.pg_check_frozen($1)', s) INTO bad USING rel;
  END IF;
  RETURN format('%s %s %s %s %s %s', coalesce(t::text, '-'), coalesce(fr::text, '-'), pages, coalesce(av::text, '-'), vf, bad);
END $$;
SQL
frozen_check() {  # LABEL TABLE-SUFFIX: same contents, every tuple and page frozen on both sides
  local label=$1 x=$2 r cs fs
  r=$(cmp "$x")
  if [ $have_pi = 0 ] && [ $have_vis = 0 ]; then
    check "$label: $r (frozen state not checked: no pageinspect, no pg_visibility)" '[[ "$r" == "$x="[1-9]* ]] && [[ "$r" != *DIFF* ]]'
    return
  fi
  local pi=false vis=false; [ $have_pi = 1 ] && pi=true; [ $have_vis = 1 ] && vis=true
  cs=$(psql -c "SELECT sem.frozen_state('c_$x', $pi, $vis)" 2>&1)
  fs=$(psql -c "SELECT sem.frozen_state('f_$x', $pi, $vis)" 2>&1)
  # "tuples frozen pages all_visible vm_frozen check_frozen": every tuple frozen, the pages marked
  # all-visible are those the VM has all-frozen, pg_check_frozen finds nothing. How many pages
  # are all-visible depends on the insert batches (COPY marks only pages it starts empty).
  all_frozen() { local t fr p av vf bad; read -r t fr p av vf bad <<<"$1"
    [ "$p" -gt 0 ] 2>/dev/null && { [ "$t" = - ] || [ "$fr" = "$t" ]; } &&
      { [ "$av" = - ] || [ "$vf" = - ] || [ "$av" = "$vf" ]; } && { [ "$bad" = - ] || [ "$bad" = 0 ]; }; }
  check "$label: $r; tuples frozen pages all-visible vm-all-frozen check-frozen: copy [$cs] fastcopy [$fs]" \
    '[[ "$r" == "$x="[1-9]* ]] && [[ "$r" != *DIFF* ]] && all_frozen "$cs" && all_frozen "$fs"'
}
psql -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS c_fz, f_fz, c_fzt, f_fzt"
r1=$(err_of "BEGIN; CREATE TABLE c_fz (a int, b int, c text); COPY c_fz FROM '$(f big)' WITH (FREEZE); COMMIT;")
r2=$(err_of "BEGIN; CREATE TABLE f_fz (a int, b int, c text); SELECT fastcopy.load('f_fz', '$(f big)', freeze => true); COMMIT;")
check "freeze into a table created in the transaction: copy $r1, fastcopy $r2" '[ "$r1" = ok ] && [ "$r2" = ok ]'
frozen_check "freeze, table created in the transaction" fz
both <<'SQL'
CREATE TABLE @fzt (a int, b int, c text);
INSERT INTO @fzt VALUES (1, 2, 'old'), (3, 4, 'old');
SQL
r1=$(err_of "BEGIN; TRUNCATE c_fzt; COPY c_fzt FROM '$(f big)' WITH (FREEZE); COMMIT;")
r2=$(err_of "BEGIN; TRUNCATE f_fzt; SELECT fastcopy.load('f_fzt', '$(f big)', freeze => true); COMMIT;")
check "freeze into a table truncated in the transaction: copy $r1, fastcopy $r2" '[ "$r1" = ok ] && [ "$r2" = ok ]'
frozen_check "freeze, table truncated in the transaction" fzt
both <<'SQL'
CREATE TABLE @fzn (a int, b int, c text);
SQL
same_err "freeze into a table neither created nor truncated in the transaction" 55000 "fzn=0" \
  "COPY c_fzn FROM '$(f abc)' WITH (FREEZE)" "SELECT fastcopy.load('f_fzn', '$(f abc)', freeze => true)" fzn
same_err "freeze into a table created before the current savepoint" 55000 "fzn=0" \
  "BEGIN; TRUNCATE c_fzn; SAVEPOINT s; COPY c_fzn FROM '$(f abc)' WITH (FREEZE); COMMIT;" \
  "BEGIN; TRUNCATE f_fzn; SAVEPOINT s; SELECT fastcopy.load('f_fzn', '$(f abc)', freeze => true); COMMIT;" fzn
same_err "freeze with an open cursor (prior transaction activity)" 25000 "fzn=0" \
  "BEGIN; TRUNCATE c_fzn; DECLARE cur CURSOR FOR SELECT 1 FROM generate_series(1, 10); FETCH 1 FROM cur; COPY c_fzn FROM '$(f abc)' WITH (FREEZE); COMMIT;" \
  "BEGIN; TRUNCATE f_fzn; DECLARE cur CURSOR FOR SELECT 1 FROM generate_series(1, 10); FETCH 1 FROM cur; SELECT fastcopy.load('f_fzn', '$(f abc)', freeze => true); COMMIT;" fzn
same_err "freeze into a partitioned table" 0A000 "pn=0" \
  "COPY c_pn FROM '$(f pn_bad)' WITH (FREEZE)" "SELECT fastcopy.load('f_pn', '$(f pn_bad)', freeze => true)" pn
same_err "freeze into a partitioned table even when created in the transaction" 0A000 "pn=0" \
  "BEGIN; CREATE TABLE c_pz (k int, r int) PARTITION BY LIST (r); CREATE TABLE c_pz_0 PARTITION OF c_pz DEFAULT; COPY c_pz FROM '$(f p0_ok)' WITH (FREEZE); COMMIT;" \
  "BEGIN; CREATE TABLE f_pz (k int, r int) PARTITION BY LIST (r); CREATE TABLE f_pz_0 PARTITION OF f_pz DEFAULT; SELECT fastcopy.load('f_pz', '$(f p0_ok)', freeze => true); COMMIT;" pn

# ---- 8. on_error 'ignore' ----
both <<'SQL'
CREATE TABLE @oe (a int, b date, c numeric(6,2), d bool, e text);
CREATE TABLE @oenn (a int NOT NULL, b text);
SQL
if [ "$m" -ge 17 ]; then
  cout=$(psql -c "COPY c_oe FROM '$(f oe)' WITH (ON_ERROR ignore)" 2>&1)
else
  cout=$(psql -c "COPY c_oe FROM '$(f oe_clean)'" 2>&1)
fi
fout=$(psql -F ' ' -c "SELECT rows_loaded, rows_skipped FROM fastcopy.load('f_oe', '$(f oe)', on_error => 'ignore')" 2>&1)
r=$(cmp oe)
res=$(grep -v NOTICE <<<"$fout")
check "on_error ignore, 10 bad rows (int syntax, int range, empty int, bad dates, numeric syntax/overflow, bool) among 10000: $r, rows_loaded rows_skipped = $res" \
  '[ "$r" = "oe=9990" ] && [ "$res" = "9990 10" ]' "copy: $cout | fastcopy: $fout"
check "on_error ignore NOTICE: fastcopy [$(grep NOTICE <<<"$fout")] copy [$cout]" \
  'grep NOTICE <<<"$fout" | grep -q "10 rows" && grep NOTICE <<<"$fout" | grep -q skipped && { [ "$m" -lt 17 ] || grep -q "10 rows were skipped" <<<"$cout"; }'
psql -c "TRUNCATE c_oe, f_oe"
opt=""; [ "$m" -ge 17 ] && opt="WITH (ON_ERROR ignore)"
cout=$(psql -c "COPY c_oe FROM '$(f oe_clean)' $opt" 2>&1)
fout=$(psql -F ' ' -c "SELECT rows_loaded, rows_skipped FROM fastcopy.load('f_oe', '$(f oe_clean)', on_error => 'ignore')" 2>&1)
r=$(cmp oe)
check "on_error ignore, clean file: $r, rows_loaded rows_skipped = $fout (no NOTICE)" \
  '[ "$r" = "oe=9990" ] && [ "$fout" = "9990 0" ] && [ -z "$cout" ]' "copy: $cout"
psql -c "TRUNCATE c_oe, f_oe"
same_err "on_error ignore, an extra field (line 50) still aborts" 22P04 "oe=0" \
  "COPY c_oe FROM '$(f oe_extra)' $opt" "SELECT fastcopy.load('f_oe', '$(f oe_extra)', on_error => 'ignore')" oe
same_err "on_error ignore, an extra field on a line with a bad value (line 50) still aborts" 22P04 "oe=0" \
  "COPY c_oe FROM '$(f oe_extra_bad)' $opt" "SELECT fastcopy.load('f_oe', '$(f oe_extra_bad)', on_error => 'ignore')" oe
same_err "on_error ignore, a missing field (line 50) still aborts" 22P04 "oe=0" \
  "COPY c_oe FROM '$(f oe_missing)' $opt" "SELECT fastcopy.load('f_oe', '$(f oe_missing)', on_error => 'ignore')" oe
# COPY 17 converts field by field and skips the line at its first bad value, before it notices
# that fields are missing: such a line is skipped, not an error
if [ "$m" -ge 17 ]; then ignore_copy="COPY c_oe FROM '$(f oe_missing_bad)' $opt"
else ignore_copy="COPY c_oe FROM '$(f oe_missing_bad_clean)'"; fi
same_ok "on_error ignore, a bad value on a line with missing fields (line 50) is skipped" "oe=99" \
  "$ignore_copy" "SELECT fastcopy.load('f_oe', '$(f oe_missing_bad)', on_error => 'ignore')" oe
psql -c "TRUNCATE c_oe, f_oe"
same_err "on_error ignore, a NOT NULL violation (line 50) still aborts" 23502 "oenn=0" \
  "COPY c_oenn FROM '$(f oe_nn)' $opt" "SELECT fastcopy.load('f_oenn', '$(f oe_nn)', on_error => 'ignore')" oenn
same_err "on_error stop (the default), first bad row aborts" 22P02 "oe=0" \
  "COPY c_oe FROM '$(f oe)'" "SELECT fastcopy.load('f_oe', '$(f oe)', on_error => 'stop')" oe

# ---- 9. default_string (16+) ----
if [ "$m" -ge 16 ]; then
  both <<'SQL'
CREATE TABLE @ds (a int, b int DEFAULT 42, c text DEFAULT 'dflt', d date DEFAULT '2000-01-01', e int);
SQL
  same_ok "default_string '\\D', text format (a \\\\D field stays text, no-default column gets NULL)" "ds=4" \
    "COPY c_ds FROM '$(f ds_text)' WITH (DEFAULT '\\D')" "SELECT fastcopy.load('f_ds', '$(f ds_text)', default_string => '\\D')" ds
  psql -c "TRUNCATE c_ds, f_ds"
  same_ok "default_string 'DEF', csv (a quoted \"DEF\" is data)" "ds=4" \
    "COPY c_ds FROM '$(f ds_csv)' WITH (FORMAT csv, DEFAULT 'DEF')" \
    "SELECT fastcopy.load('f_ds', '$(f ds_csv)', format => 'csv', default_string => 'DEF')" ds
  psql -c "TRUNCATE c_ds, f_ds"
  same_ok "default_string with a column list (the others take their defaults too)" "ds=3" \
    "COPY c_ds (a, c, e) FROM '$(f ds_cols)' WITH (DEFAULT '\\D')" \
    "SELECT fastcopy.load('f_ds', '$(f ds_cols)', columns => ARRAY['a', 'c', 'e'], default_string => '\\D')" ds
  r=$(psql -c "SELECT count(*) FROM c_ds WHERE b = 42 AND (c = 'dflt') = (a <> 2)")
  check "COPY's default_string rows as expected ($r of 3)" '[ "$r" = 3 ]'
  psql -c "TRUNCATE c_ds, f_ds"
  same_err "default_string marker in a column without a default" 22P04 "ds=0" \
    "COPY c_ds FROM '$(f ds_nodefault)' WITH (DEFAULT '\\D')" \
    "SELECT fastcopy.load('f_ds', '$(f ds_nodefault)', default_string => '\\D')" ds
else
  echo "skip default_string: PostgreSQL $m has no COPY DEFAULT"
fi

# ---- 10. force_not_null / force_null (csv) ----
both <<'SQL'
CREATE TABLE @fn (a int, b text, c text, d text);
SQL
fnv() {  # LABEL COPY-OPTIONS LOAD-ARGS
  psql -c "TRUNCATE c_fn, f_fn"
  same_ok "csv $1" "fn=5" "COPY c_fn FROM '$(f fn)' WITH (FORMAT csv$2)" \
    "SELECT fastcopy.load('f_fn', '$(f fn)', format => 'csv'$3)" fn
}
fnv "without force options" "" ""
fnv "force_not_null b" ", FORCE_NOT_NULL (b)" ", force_not_null => ARRAY['b']"
fnv "force_null c" ", FORCE_NULL (c)" ", force_null => ARRAY['c']"
fnv "force_not_null b, force_null c, d" ", FORCE_NOT_NULL (b), FORCE_NULL (c, d)" ", force_not_null => ARRAY['b'], force_null => ARRAY['c', 'd']"
fnv "null_string 'NULL', force_not_null b, force_null c" ", NULL 'NULL', FORCE_NOT_NULL (b), FORCE_NULL (c)" \
    ", null_string => 'NULL', force_not_null => ARRAY['b'], force_null => ARRAY['c']"
fnv "null_string 'NULL', force_not_null and force_null on the same columns" ", NULL 'NULL', FORCE_NOT_NULL (b, c, d), FORCE_NULL (b, c, d)" \
    ", null_string => 'NULL', force_not_null => ARRAY['b', 'c', 'd'], force_null => ARRAY['b', 'c', 'd']"
r=$(psql -c "SELECT count(*) FILTER (WHERE b IS NULL) || ' ' || count(*) FILTER (WHERE c IS NULL) FROM c_fn")
check "COPY, NULL 'NULL' + both forces on b, c: NULL in b / c = $r (unquoted NULL is the text 'NULL', quoted \"NULL\" is NULL)" '[ "$r" = "1 1" ]'
psql -c "TRUNCATE c_fn, f_fn"
same_err "force_null in text format is refused" 0A000 "fn=0" \
  "COPY c_fn FROM '$(f abc)' WITH (FORCE_NULL (c))" "SELECT fastcopy.load('f_fn', '$(f abc)', force_null => ARRAY['c'])" fn
same_err "force_not_null in text format is refused" 0A000 "fn=0" \
  "COPY c_fn FROM '$(f abc)' WITH (FORCE_NOT_NULL (c))" "SELECT fastcopy.load('f_fn', '$(f abc)', force_not_null => ARRAY['c'])" fn
same_err "force_null on a column not in the column list" 42P10 "fn=0" \
  "COPY c_fn (a, b) FROM '$(f fn)' WITH (FORMAT csv, FORCE_NULL (c))" \
  "SELECT fastcopy.load('f_fn', '$(f fn)', columns => ARRAY['a', 'b'], format => 'csv', force_null => ARRAY['c'])" fn
same_err "force_not_null on a column not in the column list" 42P10 "fn=0" \
  "COPY c_fn (a, b) FROM '$(f fn)' WITH (FORMAT csv, FORCE_NOT_NULL (d))" \
  "SELECT fastcopy.load('f_fn', '$(f fn)', columns => ARRAY['a', 'b'], format => 'csv', force_not_null => ARRAY['d'])" fn
same_err "force_null on a column that does not exist" 42703 "fn=0" \
  "COPY c_fn FROM '$(f fn)' WITH (FORMAT csv, FORCE_NULL (zz))" \
  "SELECT fastcopy.load('f_fn', '$(f fn)', format => 'csv', force_null => ARRAY['zz'])" fn

# ---- 11. load_data follows COPY FROM STDIN's end-of-data rule ----
# 15-17: on a stream, `\.` after data on its line ends the data (that data is the last row; a
# file reads on); 18: the marker must be alone on its line. psql sends the lines as they are
# (none is exactly `\.`).
psql -c "CREATE DOMAIN sem.fc_pos AS int CHECK (VALUE > 0)" >/dev/null
both <<'SQL'
CREATE TABLE @em (a fc_pos);
SQL
em_copy=$'COPY c_em FROM STDIN;\n1\n5\\.\n0\n\\.\n'
em_load=$'SELECT fastcopy.load_data(\'f_em\', E\'1\\n5\\\\.\\n0\\n\')'
if [ "$m" -ge 18 ]; then
  same_err "\\. after data on its line (18: not alone on its line)" 22P04 "em=0" "$em_copy" "$em_load" em
else
  same_ok "\\. after data on its line ends STDIN and load_data there (5 is the last row)" "em=2" \
    "$em_copy" "$em_load" em
fi

# a CRLF line `1<TAB>\.`, sent by psql from a file (no line of it is exactly `\.`)
printf '1\t\\.\r\n' > "$(f em2)"
both <<'SQL'
CREATE TABLE @em2 (a int, b text);
SQL
stdin_err() {  # SQL < file: "ok" or the error
  local out; out=$(psql -v ON_ERROR_STOP=1 -c "$1" < "$2" 2>&1 >/dev/null)
  out=$(sed -n 's/^.*ERROR:  //p' <<<"$out" | head -1 | sed -E 's/(^|[^a-z0-9_])[cf]_/\1@/g')
  echo "${out:-ok}"
}
ce=$(stdin_err "COPY c_em2 FROM STDIN" "$(f em2)")
fe=$(stdin_err "SELECT fastcopy.load_data('f_em2', pg_read_binary_file('$(f em2)'))" /dev/null)
r=$(cmp em2)
if [ "$m" -ge 18 ]; then want="em2=0"; else want="em2=1"; fi
check "a CRLF line '1<TAB>\\.' from STDIN and load_data: $r, copy: $ce" \
  '[ "$ce" = "$fe" ] && [ "$r" = "$want" ]' "copy: $ce | fastcopy: $fe | want: $want"

# ---- 12. virtual generated columns (18: the default kind of generated column) ----
if [ "$m" -ge 18 ]; then
  both <<'SQL'
CREATE TABLE @vg (a int, b int, v int GENERATED ALWAYS AS (a * 2) VIRTUAL);
CREATE TABLE @vn (a int, v int GENERATED ALWAYS AS (nullif(a, 0)) VIRTUAL NOT NULL);
CREATE TABLE @vc (a int, v int GENERATED ALWAYS AS (a - 10) VIRTUAL CHECK (v < 0));
SQL
  same_ok "virtual generated column: not stored, the same rows" "vg=3" \
    $'COPY c_vg FROM STDIN;\n1\t2\n3\t4\n5\t6\n\\.\n' \
    "SELECT fastcopy.load_data('f_vg', E'1\\t2\\n3\\t4\\n5\\t6\\n')" vg
  same_err "a virtual generated column in the column list is refused" 42P10 "vg=3" \
    $'COPY c_vg (a, v) FROM STDIN;\n1\t2\n\\.\n' \
    "SELECT fastcopy.load_data('f_vg', E'1\\t2\\n', columns => '{a,v}')" vg
  same_err "NOT NULL on a virtual generated column (line 2)" 23502 "vn=0" \
    $'COPY c_vn FROM STDIN;\n1\n0\n\\.\n' "SELECT fastcopy.load_data('f_vn', E'1\\n0\\n')" vn
  same_err "CHECK on a virtual generated column (line 3)" 23514 "vc=0" \
    $'COPY c_vc FROM STDIN;\n1\n2\n30\n\\.\n' "SELECT fastcopy.load_data('f_vc', E'1\\n2\\n30\\n')" vc
fi

# ---- 13. WHERE (where_clause): rows, errors, counts and progress as COPY's ----
psql -v ON_ERROR_STOP=1 -c "COPY (SELECT g, 'r' || g FROM generate_series(1, 1000) g) TO '$(f ac)'" >/dev/null
both <<'SQL'
CREATE TABLE @wh (a int, b int DEFAULT 5, c text, g int GENERATED ALWAYS AS (a + 1) STORED);
CREATE TABLE @whp (a int, b int, c text) PARTITION BY LIST ((a % 2));
CREATE TABLE @whp0 PARTITION OF @whp FOR VALUES IN (0);
CREATE TABLE @whp1 PARTITION OF @whp FOR VALUES IN (1);
CREATE TABLE @whv (a int);
CREATE FUNCTION @whv_count() RETURNS bigint VOLATILE LANGUAGE sql AS 'SELECT count(*) FROM sem.@whv';
-- what pg_stat_progress_copy says once every row is in (AFTER STATEMENT triggers run then)
CREATE TABLE @whprog (processed bigint, excluded bigint, skipped bigint);
CREATE FUNCTION @whprog() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO sem.@whprog SELECT tuples_processed, tuples_excluded,
    (to_jsonb(p) ->> 'tuples_skipped')::bigint FROM pg_stat_progress_copy p WHERE pid = pg_backend_pid();
  RETURN NULL; END $$;
CREATE TRIGGER @whprog AFTER INSERT ON @wh FOR EACH STATEMENT EXECUTE FUNCTION @whprog();
SQL
wh() {  # LABEL WANT COPY-COLUMNS WHERE-CONDITION [FILE] [TABLE]
  local file=${5:-abc} t=${6:-wh}
  psql -c "TRUNCATE c_$t, f_$t"
  same_ok "WHERE $1" "$2" "COPY c_$t $3 FROM '$(f "$file")' WHERE ${4//@/c_}" \
    "SELECT fastcopy.load('f_$t', '$(f "$file")'$([ -n "$3" ] && echo ", columns => '{$(tr -d '() ' <<<"$3")}'"), where_clause => \$w\$${4//@/f_}\$w\$)" "$t"
}
wh "on input columns" "wh=333" "" "a % 3 = 0 AND c LIKE 'r%'"
wh "on a column the input does not supply (its default)" "wh=99" "(a, c)" "b = 5 AND a < 100" ac
wh "that is NULL for some rows (they are excluded)" "wh=500" "" "nullif(a % 2, 0) = 1"
wh "on tableoid" "wh=1000" "" "tableoid = 'sem.@wh'::regclass"
wh "that folds to true" "wh=1000" "" "1 = 1"
wh "that folds to false" "wh=0" "" "1 = 2 AND a > 0"
wh "with a volatile function that reads the table (rows one at a time)" "whv=10" "(a)" "sem.@whv_count() < 10" vd whv
wh "into a partitioned table" "whp=857" "" "b <> 3" abc whp
psql -c "TRUNCATE c_wh, f_wh, c_whprog, f_whprog"
sql="SELECT rows_loaded || ' ' || rows_excluded FROM fastcopy.load('f_wh', '$(f abc)', where_clause => 'a <= 250')"
counts=$(psql -c "$sql"); ccount=$(psql -c "SELECT sem.copy_count(\$\$COPY c_wh FROM '$(f abc)' WHERE a <= 250\$\$)")
check "WHERE: rows_loaded and rows_excluded ($counts) as COPY's count ($ccount) and the rest" '[ "$counts" = "$ccount 750" ]'
r=$(cmp whprog)
check "WHERE: pg_stat_progress_copy's tuples_processed / excluded / skipped as COPY's: $r" '[ "$r" = "whprog=1" ]' \
  "$(psql -c "TABLE c_whprog" -c "TABLE f_whprog")"
wherr() {  # LABEL SQLSTATE WHERE-CONDITION
  psql -c "TRUNCATE c_wh, f_wh"
  same_err "WHERE $1" "$2" "wh=0" "COPY c_wh FROM '$(f abc)' WHERE ${3//@/c_}" \
    "SELECT fastcopy.load('f_wh', '$(f abc)', where_clause => \$w\$${3//@/f_}\$w\$)" wh
}
wherr "naming a generated column is refused" 42P10 "g > 1"
wherr "with a whole-row reference (a generated column in it) is refused" 42P10 "@wh IS NOT NULL"
wherr "naming an unknown column" 42703 "nosuch > 1"
wherr "with a subquery" 0A000 "a > (SELECT 1)"
wherr "with an aggregate" 42803 "count(*) > 0"
wherr "with a set-returning function" 0A000 "generate_series(1, 2) > a"
wherr "that is not boolean" 42804 "a + 1"
wherr "that fails at line 500 (division by zero)" 22012 "1 / (a - 500) > 0"
wherr "on a system column other than tableoid" 0A000 "xmin = '1'"
wherr "with a syntax error" 42601 "a >"
r=$(err_of "SELECT fastcopy.load('f_wh', '$(f abc)', where_clause => 'true; DROP TABLE sem.f_wh')")
check "where_clause holds one condition, not a second statement: $r" \
  '[ "$r" = "42601: where_clause must be a single condition | " ] && [ "$(cmp wh)" = "wh=0" ]'

# ---- 14. FORCE_NOT_NULL * / FORCE_NULL * (COPY 17+; fastcopy's '{*}' on every major) ----
both <<'SQL'
CREATE TABLE @fa (a text, b text, c text, d text);
SQL
fa() {  # LABEL COPY-OPTION LOAD-ARG
  psql -c "TRUNCATE c_fa, f_fa"
  same_ok "csv $1" "fa=5" "COPY c_fa FROM '$(f fn)' WITH (FORMAT csv, NULL 'NULL', $2)" \
    "SELECT fastcopy.load('f_fa', '$(f fn)', format => 'csv', null_string => 'NULL', $3)" fa
}
if [ "$m" -ge 17 ]; then
  fa "force_not_null * (COPY FORCE_NOT_NULL *)" "FORCE_NOT_NULL *" "force_not_null => '{*}'"
  fa "force_null * (COPY FORCE_NULL *)" "FORCE_NULL *" "force_null => '{*}'"
  fa "force_not_null * and force_null *" "FORCE_NOT_NULL *, FORCE_NULL *" "force_not_null => '{*}', force_null => '{*}'"
else
  fa "force_not_null '{*}' = COPY's FORCE_NOT_NULL of every column" "FORCE_NOT_NULL (a, b, c, d)" "force_not_null => '{*}'"
  fa "force_null '{*}' = COPY's FORCE_NULL of every column" "FORCE_NULL (a, b, c, d)" "force_null => '{*}'"
fi

# ---- 15. log_verbosity and reject_limit (COPY 17 / 18; fastcopy on every major) ----
# NOTICEs as psql shows them, with their CONTEXT, COPY's verb for fastcopy's
notices() { psql -v VERBOSITY=default -v SHOW_CONTEXT=always -c "$1" 2>&1 >/dev/null \
  | grep -E '^(NOTICE|CONTEXT):' | sed 's/^CONTEXT:  fastcopy\.load /CONTEXT:  COPY /; s/[cf]_oe/@oe/g'; }
for v in verbose default silent; do
  psql -c "TRUNCATE c_oe, f_oe"
  fn=$(notices "SELECT fastcopy.load('f_oe', '$(f oe)', on_error => 'ignore', log_verbosity => '$v')")
  if [ "$m" -ge 18 ] || { [ "$m" -ge 17 ] && [ "$v" != silent ]; }; then
    cn=$(notices "COPY c_oe FROM '$(f oe)' WITH (ON_ERROR ignore, LOG_VERBOSITY $v)")
    r=$(cmp oe)
    check "log_verbosity $v: the NOTICEs ($(grep -c '^NOTICE' <<<"$fn")) as COPY's, $r" \
      '[ "$fn" = "$cn" ] && [ "$r" = "oe=9990" ]' "copy: $cn | fastcopy: $fn"
  else
    r=$(psql -c "SELECT count(*) FROM f_oe")
    want=$(case $v in verbose) echo 11;; default) echo 1;; silent) echo 0;; esac)
    check "log_verbosity $v: $want NOTICEs (COPY $m has no such option), $r rows" \
      '[ "$(grep -c "^NOTICE" <<<"$fn")" = "$want" ] && [ "$r" = 9990 ] && { [ "$v" != verbose ] || grep -qx "NOTICE:  skipping row due to data type incompatibility at line 1 for column \"a\": \"x1\"" <<<"$fn"; }' "$fn"
  fi
done
psql -c "TRUNCATE c_oe, f_oe"
if [ "$m" -ge 18 ]; then
  same_err "reject_limit 9 with 10 bad rows fails at the 10th (line 10000)" 22P02 "oe=0" \
    "COPY c_oe FROM '$(f oe)' WITH (ON_ERROR ignore, REJECT_LIMIT 9)" \
    "SELECT fastcopy.load('f_oe', '$(f oe)', on_error => 'ignore', reject_limit => 9)" oe
  same_ok "reject_limit 10 with 10 bad rows loads the rest" "oe=9990" \
    "COPY c_oe FROM '$(f oe)' WITH (ON_ERROR ignore, REJECT_LIMIT 10)" \
    "SELECT fastcopy.load('f_oe', '$(f oe)', on_error => 'ignore', reject_limit => 10)" oe
else
  r=$(err_of "SELECT fastcopy.load('f_oe', '$(f oe)', on_error => 'ignore', reject_limit => 9)")
  check "reject_limit 9 with 10 bad rows fails at the 10th as COPY 18 (COPY $m has no such option): $r" \
    '[ "$r" = "22P02: skipped more than REJECT_LIMIT (9) rows due to data type incompatibility | COPY @oe, line 10000, column a: \"1.5\"" ] && [ "$(cmp oe)" = "oe=0" ]'
  r=$(psql -c "SELECT rows_loaded FROM fastcopy.load('f_oe', '$(f oe)', on_error => 'ignore', reject_limit => 10)" 2>/dev/null)
  check "reject_limit 10 with 10 bad rows loads the rest: $r" '[ "$r" = 9990 ]'
fi

# ---- 16. a view with an INSTEAD OF INSERT trigger ----
both <<'SQL'
CREATE TABLE @vbase (a int, b text, via text);
CREATE VIEW @vw AS SELECT a, b FROM @vbase;
CREATE FUNCTION @vw_ins() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  IF NEW.a % 10 = 0 THEN RETURN NULL; END IF;
  INSERT INTO sem.@vbase VALUES (NEW.a, NEW.b, TG_NAME); RETURN NEW; END $$;
CREATE TRIGGER vw_ins INSTEAD OF INSERT ON @vw FOR EACH ROW EXECUTE FUNCTION @vw_ins();
CREATE VIEW @vno AS SELECT a, b FROM @vbase;
SQL
same_ok "into a view: each row through its INSTEAD OF trigger" "vbase=900" \
  "COPY c_vw FROM '$(f ac)'" "SELECT fastcopy.load('f_vw', '$(f ac)')" vbase
ccount=$(psql -c "SELECT sem.copy_count(\$\$COPY c_vw FROM '$(f ac)'\$\$)")
fcount=$(psql -c "SELECT rows_loaded FROM fastcopy.load('f_vw', '$(f ac)')")
check "into a view: the rows counted as COPY counts them, also those the trigger dropped ($fcount, COPY $ccount)" \
  '[ "$fcount" = "$ccount" ] && [ "$ccount" = 1000 ]'
psql -c "TRUNCATE c_vbase, f_vbase"
same_ok "into a view with WHERE" "vbase=45" \
  "COPY c_vw FROM '$(f ac)' WHERE a < 50" "SELECT fastcopy.load('f_vw', '$(f ac)', where_clause => 'a < 50')" vbase
same_err "a view without an INSTEAD OF INSERT trigger is refused" 42809 "vbase=45" \
  "COPY c_vno FROM '$(f ac)'" "SELECT fastcopy.load('f_vno', '$(f ac)')" vbase

# ---- 17. foreign tables (postgres_fdw back into this database; file_fdw takes no rows) ----
psql -v ON_ERROR_STOP=1 >/dev/null <<SQL || { echo "FAIL setup of the foreign server"; fail=1; }
SET client_min_messages = warning;
DROP SERVER IF EXISTS sem_loop CASCADE;
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
CREATE EXTENSION IF NOT EXISTS file_fdw;
CREATE SERVER sem_loop FOREIGN DATA WRAPPER postgres_fdw
  OPTIONS (host '$FASTCOPY_RUN', port '54$m', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER sem_loop OPTIONS (user 'postgres');
DROP SERVER IF EXISTS sem_files CASCADE;
CREATE SERVER sem_files FOREIGN DATA WRAPPER file_fdw;
SQL
both <<'SQL'
CREATE TABLE @rf (a int PRIMARY KEY, b text, c text DEFAULT 'remote');
CREATE FOREIGN TABLE @ft (a int, b text, c text DEFAULT 'local') SERVER sem_loop
  OPTIONS (schema_name 'sem', table_name '@rf');
CREATE TABLE @ft_audit (a int, op text, tab text);
CREATE FUNCTION @ft_before() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  IF NEW.a % 10 = 0 THEN RETURN NULL; END IF;
  NEW.b := NEW.b || '+'; RETURN NEW; END $$;
CREATE FUNCTION @ft_after() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  INSERT INTO sem.@ft_audit VALUES (NEW.a, TG_NAME, substr(TG_RELID::regclass::text, 3)); RETURN NULL; END $$;
CREATE TABLE @rf2 (a int, b text);
CREATE FOREIGN TABLE @ft2 (a int, b text) SERVER sem_loop OPTIONS (schema_name 'sem', table_name '@rf2');
CREATE TRIGGER ft2_before BEFORE INSERT ON @ft2 FOR EACH ROW EXECUTE FUNCTION @ft_before();
CREATE TRIGGER ft2_after AFTER INSERT ON @ft2 FOR EACH ROW EXECUTE FUNCTION @ft_after();
CREATE TABLE @fp (a int, b text) PARTITION BY RANGE (a);
CREATE TABLE @fp_local PARTITION OF @fp FOR VALUES FROM (MINVALUE) TO (500);
CREATE TABLE @rfp (a int, b text);
CREATE FOREIGN TABLE @fp_remote PARTITION OF @fp FOR VALUES FROM (500) TO (MAXVALUE)
  SERVER sem_loop OPTIONS (schema_name 'sem', table_name '@rfp');
CREATE FOREIGN TABLE @fro (a int, b text) SERVER sem_files OPTIONS (filename '/dev/null');
SQL
same_ok "into a foreign table: every row through its FDW, the local default for a column not given" "rf=1000" \
  "COPY c_ft (a, b) FROM '$(f ac)'" "SELECT fastcopy.load('f_ft', '$(f ac)', columns => '{a,b}')" rf
ccount=$(psql -c "SELECT sem.copy_count(\$\$COPY c_ft2 FROM '$(f ac)'\$\$)")
fcount=$(psql -c "SELECT rows_loaded FROM fastcopy.load('f_ft2', '$(f ac)')")
check "a foreign table's BEFORE ROW trigger skips and changes rows, its AFTER ROW trigger sees them ($fcount, COPY $ccount): $(cmp rf2 ft_audit)" \
  '[ "$fcount" = "$ccount" ] && [ "$ccount" = 900 ] && [ "$(cmp rf2 ft_audit)" = "rf2=900 ft_audit=900" ]'
same_ok "into a partitioned table with a foreign partition" "fp_local=499 rfp=501" \
  "COPY c_fp FROM '$(f ac)'" "SELECT fastcopy.load('f_fp', '$(f ac)')" fp_local rfp
psql -c "TRUNCATE c_rf, f_rf"
same_err "a remote unique violation in a foreign table (the remote error, the load's line)" 23505 "rf=0" \
  "BEGIN; COPY c_ft (a, b) FROM '$(f ac)'; COPY c_ft (a, b) FROM '$(f ac)'; COMMIT" \
  "BEGIN; SELECT fastcopy.load('f_ft', '$(f ac)', columns => '{a,b}'); SELECT fastcopy.load('f_ft', '$(f ac)', columns => '{a,b}'); COMMIT" rf
# (18 refuses it; 15-17 only find that the table was not created in this subtransaction)
same_err "FREEZE into a foreign table is refused" "$([ "$m" -ge 18 ] && echo 0A000 || echo 55000)" "rf=0" \
  "BEGIN; TRUNCATE c_rf; COPY c_ft (a, b) FROM '$(f ac)' WITH (FREEZE); COMMIT" \
  "BEGIN; TRUNCATE f_rf; SELECT fastcopy.load('f_ft', '$(f ac)', columns => '{a,b}', freeze => true); COMMIT" rf
same_err "a foreign table whose FDW takes no rows (file_fdw) is refused" \
  "$(code "$(err_of "COPY c_fro FROM '$(f ac)'")")" "fro=0" \
  "COPY c_fro FROM '$(f ac)'" "SELECT fastcopy.load('f_fro', '$(f ac)')" fro
psql -c "SET client_min_messages = warning" -c "DROP SERVER sem_loop CASCADE" -c "DROP SERVER sem_files CASCADE" >/dev/null

psql -c "SET client_min_messages = warning" -c "DROP SCHEMA sem CASCADE"
rm -f "$FASTCOPY_RUN/sem-$m-"*
exit $fail
