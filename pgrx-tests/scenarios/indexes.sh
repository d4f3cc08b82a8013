#!/usr/bin/env bash
# Indexes of a table private to the load's transaction (created or truncated in it, or
# temporary, empty as the load begins), built at the end of the load (fastcopy.index_build =
# auto), differentially: each scenario makes two identical tables (c_* loaded by the server's
# COPY, f_* by the same COPY statement through fastcopy's hook under copy_from = require), then
# compares the tables (EXCEPT ALL both ways), each index's contents (an index scan of every
# index, its rows and their TIDs, and amcheck's bt_index_parent_check with heapallindexed and
# rootdescend), or, when the load fails, the error (SQLSTATE, message, DETAIL and CONTEXT
# line) and that nothing of either load is visible. Also: which indexes fastcopy built at
# the end (DEBUG1), savepoints, FREEZE, unlogged and temporary tables, an AFTER trigger and
# a self-referencing foreign key that read the index.
#   pgrx-tests/scenarios/indexes.sh 17
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
. scripts/scenario_lib.sh
scripts/cluster.sh start "$m" >/dev/null
export PGOPTIONS="-c search_path=ix,public"
f() { echo "$FASTCOPY_RUN/ix-$m-$1"; }
# the session settings of each side
C="SET fastcopy.copy_from = off;"
F="LOAD 'fastcopy'; SET fastcopy.copy_from = require;"

# One session's SQL script: "ok", or "SQLSTATE: message | DETAIL | CONTEXT" of its error,
# with the table prefix (c_ / f_) as @.
err_of() {
  local out rc msg det ctx
  out=$(psql -v ON_ERROR_STOP=1 -v VERBOSITY=verbose <<<"SET client_min_messages = warning; $1" 2>&1 >/dev/null); rc=$?
  msg=$(sed -n 's/^.*ERROR:  //p' <<<"$out" | head -1)
  det=$(sed -n 's/^DETAIL:  //p' <<<"$out" | head -1)
  ctx=$(sed -n 's/^CONTEXT:  //p' <<<"$out" | head -1)
  if [ -n "$msg" ]; then sed -E 's/(^|[^a-z0-9_])[cf]_/\1@/g' <<<"$msg | $det | $ctx"
  elif [ $rc != 0 ]; then echo "psql rc=$rc"; else echo ok; fi
}
code() { echo "${1%%:*}"; }
# the two sides of one SQL text: @ becomes c_ (after $C) and f_ (after $F)
side() { local s=$2; echo "$1 ${s//@/$3}"; }
# "x=N ..." for the tables c_x/f_x (rows and indexes equal), DIFF(...) where they differ
cmp() { psql -c "SELECT ix.cmp(VARIADIC string_to_array('$*', ' '))"; }

# same_ok LABEL WANT SQL TABLES...: both sides succeed, the tables and their indexes compare
# as WANT
same_ok() {
  local label=$1 want=$2 ce fe r; ce=$(err_of "$(side "$C" "$3" c_)"); fe=$(err_of "$(side "$F" "$3" f_)"); shift 3; r=$(cmp "$@")
  check "$label: $r" '[ "$ce" = ok ] && [ "$fe" = ok ] && [ "$r" = "$want" ]' \
        "copy: $ce | fastcopy: $fe | want: $want"
}
# same_err LABEL SQLSTATE WANT SQL TABLES...: both sides fail with SQLSTATE, the same message,
# DETAIL and CONTEXT; the tables compare as WANT afterwards
same_err() {
  local label=$1 st=$2 want=$3 ce fe r; ce=$(err_of "$(side "$C" "$4" c_)"); fe=$(err_of "$(side "$F" "$4" f_)"); shift 4; r=$(cmp "$@")
  check "$label: copy $(code "$ce"), fastcopy $(code "$fe"), $r" \
        '[ "$(code "$ce")" = "$st" ] && [ "$fe" = "$ce" ] && [ "$r" = "$want" ]' \
        "copy: $ce | fastcopy: $fe | want: $st, $want"
}
# indexes_said SED-EXPRESSION SQL: the index names (without f_, sorted) that the DEBUG1 lines of
# fastcopy's load in SQL (f_ side) name as SED-EXPRESSION picks them; the transaction is
# rolled back
indexes_said() {
  psql -v ON_ERROR_STOP=0 <<<"$F SET client_min_messages = debug1; BEGIN; ${2//@/f_}; ROLLBACK;" 2>&1 \
    | sed -n "$1" | sort | tr '\n' ' '
}
# written LABEL WANT SQL: the indexes fastcopy writes itself from the load's entries (the
# rest the server builds from the table)
written() {
  local r want=$2; r=$(indexes_said 's/.*fastcopy: index "f_\([a-z0-9_]*\)": [0-9]* entries written bottom-up.*/\1/p' "$3")
  check "$1: written by fastcopy: [${r% }]" '[ "${r% }" = "$want" ]'
}
# built LABEL WANT SQL: the indexes fastcopy's load builds at the end, as "name name ..."
built() {
  local r want=$2; r=$(indexes_said 's/.*fastcopy: index "f_\([a-z0-9_]*\)" built at the end of the load.*/\1/p' "$3")
  check "$1: built at the end: [${r% }]" '[ "${r% }" = "$want" ]'
}

psql -v ON_ERROR_STOP=1 <<'SQL' || { echo "FAIL setup"; exit 1; }
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fastcopy CASCADE;
CREATE EXTENSION fastcopy;
CREATE EXTENSION IF NOT EXISTS amcheck;
DROP SCHEMA IF EXISTS ix CASCADE;
CREATE SCHEMA ix;
-- per index of `t`: its name without the prefix, and an md5 of an index scan's rows (key
-- columns and ctid, in index order); each index checked by amcheck first
CREATE FUNCTION ix.index_sums(t regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE i record; h text; o text[] := '{}';
BEGIN
  SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off;
  SET LOCAL enable_indexonlyscan = off;
  FOR i IN SELECT x.indexrelid::regclass AS idx, c.relname,
                  (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.n)
                     FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(att, n)
                     JOIN pg_attribute a ON a.attrelid = t AND a.attnum = k.att
                    WHERE k.n <= x.indnkeyatts) AS cols,
                  am.amname
             FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid JOIN pg_am am ON am.oid = c.relam
            WHERE x.indrelid = t ORDER BY c.relname LOOP
    IF i.amname = 'btree' THEN
      PERFORM bt_index_parent_check(i.idx, true, true);
    END IF;
    IF i.cols IS NULL THEN  -- an expression index: its rows through the table
      o := o || substr(i.relname, 3); CONTINUE;
    END IF;
    EXECUTE format('SELECT md5(string_agg(s::text, %L)) FROM (SELECT %s, ctid FROM %s ORDER BY %s) s',
                   ',', i.cols, t, i.cols) INTO h;
    o := o || (substr(i.relname, 3) || ':' || coalesce(h, 'empty'));
  END LOOP;
  RETURN array_to_string(o, ' ');
END $$;
CREATE FUNCTION ix.cmp(VARIADIC names text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE x text; c regclass; f regclass; nc bigint; nf bigint; cf bigint; fc bigint; ic text; iff text; o text[] := '{}';
BEGIN
  FOREACH x IN ARRAY names LOOP
    c := to_regclass('c_' || x); f := to_regclass('f_' || x);
    IF c IS NULL OR f IS NULL THEN
      o := o || format('%s=MISSING', x); CONTINUE;
    END IF;
    EXECUTE format('SELECT (SELECT count(*) FROM %1$s), (SELECT count(*) FROM %2$s),
                    (SELECT count(*) FROM (SELECT ctid, * FROM %1$s EXCEPT ALL SELECT ctid, * FROM %2$s) d),
                    (SELECT count(*) FROM (SELECT ctid, * FROM %2$s EXCEPT ALL SELECT ctid, * FROM %1$s) d)', c, f)
      INTO nc, nf, cf, fc;
    ic := ix.index_sums(c); iff := ix.index_sums(f);
    IF nc = nf AND cf = 0 AND fc = 0 AND ic = iff THEN o := o || format('%s=%s', x, nc);
    ELSE o := o || format('%s=DIFF(rows copy %s fastcopy %s; copy-fastcopy %s fastcopy-copy %s; indexes copy [%s] fastcopy [%s])', x, nc, nf, cf, fc, ic, iff);
    END IF;
  END LOOP;
  RETURN array_to_string(o, ' ');
END $$;
SQL

# ---- the data files ----
psql -v ON_ERROR_STOP=1 <<SQL || { echo "FAIL writing the data files"; exit 1; }
COPY (SELECT g, (g * 7919) % 10007, 't' || (g % 97) FROM generate_series(1, 20000) g) TO '$(f asc)';
COPY (SELECT g, g % 13, 't' || g FROM generate_series(20000, 1, -1) g) TO '$(f desc)';
COPY (SELECT (g * 7919) % 20011, g, 't' || g FROM generate_series(1, 20000) g) TO '$(f rnd)';
COPY (SELECT md5(g::text)::uuid, 'k' || g, g FROM generate_series(1, 20000) g) TO '$(f uuid)';
COPY (SELECT g / 4 + 1, g % 4 + 1, g FROM generate_series(0, 19999) g) TO '$(f pair)';
-- a key repeated: inside the first batch (line 800 repeats line 5), across batches (line
-- 15001 repeats line 42), at the first line of the second batch
COPY (SELECT CASE g WHEN 800 THEN 5 ELSE g END, g, 'x' FROM generate_series(1, 20000) g) TO '$(f dup_in)';
COPY (SELECT CASE g WHEN 15001 THEN 42 ELSE g END, g, 'x' FROM generate_series(1, 20000) g) TO '$(f dup_across)';
COPY (SELECT CASE g WHEN 1001 THEN 1000 ELSE g END, g, 'x' FROM generate_series(1, 20000) g) TO '$(f dup_edge)';
-- two unique indexes: b repeats at line 700, a at line 900; both at line 1200
COPY (SELECT CASE g WHEN 900 THEN 3 ELSE g END, CASE g WHEN 700 THEN 1 ELSE g END, 'x' FROM generate_series(1, 2000) g) TO '$(f dup_two)';
COPY (SELECT CASE g WHEN 1200 THEN 7 ELSE g END, CASE g WHEN 1200 THEN 8 ELSE g END, 'x' FROM generate_series(1, 2000) g) TO '$(f dup_both)';
-- NULL keys: many (distinct under a plain unique index)
COPY (SELECT CASE WHEN g % 10 = 0 THEN NULL ELSE g END, CASE WHEN g % 10 = 0 THEN NULL ELSE g END, 'x' FROM generate_series(1, 5000) g) TO '$(f nulls)';
-- uuid and text keys repeated across batches
COPY (SELECT md5(CASE g WHEN 9000 THEN 17 ELSE g END::text)::uuid, 'k' || g, g FROM generate_series(1, 20000) g) TO '$(f uuid_dup)';
COPY (SELECT md5(g::text)::uuid, 'k' || CASE g WHEN 12345 THEN 3 ELSE g END, g FROM generate_series(1, 20000) g) TO '$(f text_dup)';
-- numeric 1.0 and 1.00 (equal, not equal as bytes); words that differ only in case
COPY (SELECT CASE g WHEN 1500 THEN '7.00' ELSE g || '.0' END, g, 'x' FROM generate_series(1, 3000) g) TO '$(f numeric)';
COPY (SELECT CASE g WHEN 1500 THEN 'WORD7' ELSE 'word' || g END, g, 'x' FROM generate_series(1, 3000) g) TO '$(f words)';
-- a parse error after a repeated key: in the same batch (line 900 after 800) and in a later
-- one (line 5000)
COPY (SELECT CASE g WHEN 800 THEN 5 ELSE g END, CASE WHEN g = 900 THEN 'bad' ELSE g::text END, 'x' FROM generate_series(1, 20000) g) TO '$(f dup_then_bad_same)';
COPY (SELECT CASE g WHEN 800 THEN 5 ELSE g END, CASE WHEN g = 5000 THEN 'bad' ELSE g::text END, 'x' FROM generate_series(1, 20000) g) TO '$(f dup_then_bad_later)';
-- the expression index's function fails at line 1700
COPY (SELECT g, CASE g WHEN 1700 THEN 0 ELSE g END, 'x' FROM generate_series(1, 3000) g) TO '$(f zero)';
COPY (SELECT g, CASE WHEN g = 1 THEN NULL ELSE g - 1 END, 't' || g FROM generate_series(1, 5000) g) TO '$(f tree)';
COPY (SELECT g, g::bigint * 1000003, 't' || (g % 50), date '2020-01-01' + g % 3000, timestamptz '2024-01-01' + g * interval '1 min', md5(g::text)::uuid, g % 7 FROM generate_series(1, 20000) g) TO '$(f wide)';
SQL

head -12000 "$(f asc)" > "$(f asc_head)"; tail -n +12001 "$(f asc)" > "$(f asc_tail)"
tac "$(f dup_across)" > "$(f dup_across_desc)"

# ---- 1. which indexes are built at the end ----
built "created in the transaction: a primary key, a plain and a unique index, a two-column index" \
  "p1_b p1_bc p1_c_key p1_pkey" \
  "CREATE TABLE @p1 (a int PRIMARY KEY, b int, c text UNIQUE); CREATE INDEX @p1_b ON @p1 (b); CREATE INDEX @p1_bc ON @p1 (b, c); COPY @p1 FROM '$(f asc)'"
built "expression, partial, hash, numeric-unique and deferrable indexes stay per row" \
  "p2_pkey" \
  "CREATE TABLE @p2 (a int PRIMARY KEY, b int, c text, d numeric UNIQUE, e int UNIQUE DEFERRABLE); CREATE INDEX @p2_e ON @p2 (lower(c)); CREATE INDEX @p2_p ON @p2 (b) WHERE b > 10; CREATE INDEX @p2_h ON @p2 USING hash (b); COPY @p2 (a, b, c) FROM '$(f asc)'"
built "a table with rows before the load: per row" "" \
  "CREATE TABLE @p3 (a int PRIMARY KEY, b int, c text); INSERT INTO @p3 VALUES (0, 0, ''); COPY @p3 FROM '$(f asc)'"
psql -c "CREATE TABLE ix.f_pre (a int PRIMARY KEY, b int, c text)" >/dev/null
built "a table created before the transaction: per row" "" \
  "COPY ix.f_pre FROM '$(f asc)'"
built "truncated in the transaction: built at the end" "pre_pkey" \
  "TRUNCATE @pre; COPY @pre FROM '$(f asc)'"
written "int, bigint, date, timestamptz and uuid keys; text keys and repeated keys by the server's build" \
  "w_a w_bd w_pkey w_u_key" \
  "CREATE TABLE @w (a int PRIMARY KEY, b bigint, c text, d date, e timestamptz, u uuid UNIQUE, f int);
   CREATE INDEX @w_bd ON @w (b, d); CREATE INDEX @w_c ON @w (c); CREATE INDEX @w_f ON @w (f); CREATE INDEX @w_a ON @w (e, a);
   INSERT INTO @w SELECT 0 WHERE false;
   COPY @w FROM '$(f wide)'"
built "fastcopy.index_build = per_row: per row" "" \
  "SET LOCAL fastcopy.index_build = per_row; CREATE TABLE @p4 (a int PRIMARY KEY, b int, c text); COPY @p4 FROM '$(f asc)'"

# ---- 2. equal tables and indexes ----
same_ok "created in the transaction: ascending primary key, two secondary indexes" "t1=20000" \
  "BEGIN; CREATE TABLE @t1 (a int PRIMARY KEY, b int, c text); CREATE INDEX ON @t1 (b); CREATE INDEX ON @t1 (c, b); COPY @t1 FROM '$(f asc)'; COMMIT;" t1
same_ok "truncated in the transaction, descending keys" "t2=20000" \
  "CREATE TABLE @t2 (a int PRIMARY KEY, b int, c text); CREATE INDEX ON @t2 (b); INSERT INTO @t2 VALUES (1, 1, 'gone'); BEGIN; TRUNCATE @t2; COPY @t2 FROM '$(f desc)'; COMMIT;" t2
same_ok "random int keys" "t3=20000" \
  "BEGIN; CREATE TABLE @t3 (a int PRIMARY KEY, b int UNIQUE, c text); COPY @t3 FROM '$(f rnd)'; COMMIT;" t3
same_ok "a uuid primary key and a unique text column" "t4=20000" \
  "BEGIN; CREATE TABLE @t4 (u uuid PRIMARY KEY, k text UNIQUE, n int); CREATE INDEX ON @t4 (n); COPY @t4 FROM '$(f uuid)'; COMMIT;" t4
same_ok "a two-column primary key (order key, line number)" "t5=20000" \
  "BEGIN; CREATE TABLE @t5 (o int, l int, v int, PRIMARY KEY (o, l)); COPY @t5 FROM '$(f pair)'; COMMIT;" t5
same_ok "NULL keys in unique indexes (distinct)" "t6=5000" \
  "BEGIN; CREATE TABLE @t6 (a int UNIQUE, b int, c text); CREATE UNIQUE INDEX ON @t6 (b, c); COPY @t6 FROM '$(f nulls)'; COMMIT;" t6
same_ok "an unlogged table" "t7=20000" \
  "BEGIN; CREATE UNLOGGED TABLE @t7 (a int PRIMARY KEY, b int, c text); CREATE INDEX ON @t7 (c); COPY @t7 FROM '$(f asc)'; COMMIT;" t7
r=$(psql -c "SELECT string_agg(substr(c.relname, 1, 1) || ':' || ((pg_stat_file(pg_relation_filepath(c.oid) || '_init', true)).size IS NOT NULL), ' ' ORDER BY c.relname) FROM pg_class c WHERE c.relname ~ '^[cf]_t7_' AND c.relkind = 'i'")
check "the unlogged table's indexes have their init forks ($r)" '[ "$r" = "c:true c:true f:true f:true" ]'
same_ok "int, bigint, date, timestamptz and uuid keys beside text and repeated ones" "w=20000" \
  "BEGIN; CREATE TABLE @w (a int PRIMARY KEY, b bigint, c text, d date, e timestamptz, u uuid UNIQUE, f int);
   CREATE INDEX @w_bd ON @w (b, d); CREATE INDEX @w_c ON @w (c); CREATE INDEX @w_f ON @w (f); CREATE INDEX @w_a ON @w (e, a);
   COPY @w FROM '$(f wide)'; COMMIT;" w
same_ok "descending and NULLS FIRST columns, INCLUDE, a non-default opclass: the server's build" "w2=20000" \
  "BEGIN; CREATE TABLE @w2 (a int, b bigint, c text, d date, e timestamptz, u uuid, f int);
   CREATE UNIQUE INDEX ON @w2 (a DESC); CREATE INDEX ON @w2 (b NULLS FIRST); CREATE UNIQUE INDEX ON @w2 (u) INCLUDE (f);
   CREATE INDEX ON @w2 (c text_pattern_ops); COPY @w2 FROM '$(f wide)'; COMMIT;" w2
same_ok "partial, expression, hash and GIN indexes (row by row) beside ones built at the end" "t14=20000" \
  "BEGIN; CREATE TABLE @t14 (a int PRIMARY KEY, b int, c text); CREATE INDEX ON @t14 (b) WHERE b % 2 = 0;
   CREATE INDEX ON @t14 (lower(c)); CREATE INDEX ON @t14 USING hash (c); CREATE INDEX ON @t14 USING gin (to_tsvector('simple', c));
   COPY @t14 FROM '$(f rnd)'; COMMIT;" t14
same_ok "FREEZE" "t8=20000" \
  "BEGIN; CREATE TABLE @t8 (a int PRIMARY KEY, b int, c text); COPY @t8 FROM '$(f asc)' WITH (FREEZE); COMMIT;" t8
same_ok "two loads in one transaction (the second per row)" "t9=20000" \
  "BEGIN; CREATE TABLE @t9 (a int PRIMARY KEY, b int, c text); CREATE INDEX ON @t9 (b); COPY @t9 FROM '$(f asc_head)'; COPY @t9 FROM '$(f asc_tail)'; COMMIT;" t9
same_ok "a savepoint rolled back around the load, then a load" "t10=20000" \
  "BEGIN; CREATE TABLE @t10 (a int PRIMARY KEY, b int, c text); SAVEPOINT s; COPY @t10 FROM '$(f asc)'; ROLLBACK TO s; COPY @t10 FROM '$(f rnd)'; COMMIT;" t10
same_ok "a savepoint rolled back around a truncate and load: the old rows and index" "t11=20000" \
  "CREATE TABLE @t11 (a int PRIMARY KEY, b int, c text); COPY @t11 FROM '$(f rnd)'; BEGIN; SAVEPOINT s; TRUNCATE @t11; COPY @t11 FROM '$(f asc)'; ROLLBACK TO s; COMMIT;" t11
same_ok "a rolled back load, then the same in a new transaction" "t12=20000" \
  "CREATE TABLE @t12 (a int PRIMARY KEY, b int, c text); BEGIN; TRUNCATE @t12; COPY @t12 FROM '$(f asc)'; ROLLBACK; BEGIN; TRUNCATE @t12; COPY @t12 FROM '$(f desc)'; COMMIT;" t12
psql -c "CREATE TABLE ix.tmp_out (a int, b int, c text, n bigint, i text)" >/dev/null
r1=$(psql <<<"$C CREATE TEMP TABLE tt (a int PRIMARY KEY, b int, c text); CREATE INDEX ON tt (b); COPY tt FROM '$(f rnd)'; SELECT count(*), ix.index_sums('tt') FROM tt;")
r2=$(psql <<<"$F CREATE TEMP TABLE tt (a int PRIMARY KEY, b int, c text); CREATE INDEX ON tt (b); COPY tt FROM '$(f rnd)'; SELECT count(*), ix.index_sums('tt') FROM tt;")
check "a temporary table: the same rows and indexes" '[ -n "$r1" ] && [ "$r1" = "$r2" ]' "copy: $r1 | fastcopy: $r2"
same_ok "an AFTER ROW trigger and a self-referencing foreign key read the finished index" "t13=5000 t13_log=5000" \
  "BEGIN; CREATE TABLE @t13 (a int PRIMARY KEY, p int REFERENCES @t13, c text); CREATE TABLE @t13_log (a int, found bool);
   CREATE FUNCTION @t13_f() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN INSERT INTO @t13_log SELECT NEW.a, EXISTS (SELECT 1 FROM @t13 WHERE a = NEW.a); RETURN NULL; END \$\$;
   CREATE TRIGGER r AFTER INSERT ON @t13 FOR EACH ROW EXECUTE FUNCTION @t13_f();
   COPY @t13 FROM '$(f tree)'; COMMIT;" t13 t13_log
r=$(psql -c "SELECT count(*) FILTER (WHERE found) FROM f_t13_log")
check "the AFTER ROW trigger found every row through the index ($r)" '[ "$r" = 5000 ]'

# ---- 3. the same errors ----
same_err "a key repeated inside the first batch (line 800)" 23505 "e0=MISSING" \
  "BEGIN; CREATE TABLE @e0 (a int PRIMARY KEY, b int, c text); COPY @e0 FROM '$(f dup_in)'; COMMIT;" e0
psql -c "CREATE TABLE ix.c_e1 (a int PRIMARY KEY, b int, c text); CREATE TABLE ix.f_e1 (a int PRIMARY KEY, b int, c text)" >/dev/null
same_err "a key repeated across batches (line 15001 repeats line 42), truncated table" 23505 "e1=0" \
  "BEGIN; TRUNCATE @e1; COPY @e1 FROM '$(f dup_across)'; COMMIT;" e1
same_err "a key repeated at the first line of a batch" 23505 "e1=0" \
  "BEGIN; TRUNCATE @e1; COPY @e1 FROM '$(f dup_edge)'; COMMIT;" e1
same_err "descending keys, one repeated" 23505 "e1=0" \
  "BEGIN; TRUNCATE @e1; COPY @e1 FROM '$(f dup_across_desc)'; COMMIT;" e1
psql -c "CREATE TABLE ix.c_e2 (a int PRIMARY KEY, b int UNIQUE, c text); CREATE TABLE ix.f_e2 (a int PRIMARY KEY, b int UNIQUE, c text)" >/dev/null
same_err "two unique indexes, the second's key repeats first" 23505 "e2=0" \
  "BEGIN; TRUNCATE @e2; COPY @e2 FROM '$(f dup_two)'; COMMIT;" e2
same_err "two unique indexes, both repeat at one row (the first index in OID order)" 23505 "e2=0" \
  "BEGIN; TRUNCATE @e2; COPY @e2 FROM '$(f dup_both)'; COMMIT;" e2
same_err "NULLS NOT DISTINCT: a second NULL" 23505 "e3=MISSING" \
  "BEGIN; CREATE TABLE @e3 (a int, b int, c text, UNIQUE NULLS NOT DISTINCT (a)); COPY @e3 FROM '$(f nulls)'; COMMIT;" e3
same_err "a uuid key repeated across batches" 23505 "e4=MISSING" \
  "BEGIN; CREATE TABLE @e4 (u uuid PRIMARY KEY, k text UNIQUE, n int); COPY @e4 FROM '$(f uuid_dup)'; COMMIT;" e4
same_err "a text key repeated across batches" 23505 "e4=MISSING" \
  "BEGIN; CREATE TABLE @e4 (u uuid PRIMARY KEY, k text UNIQUE, n int); COPY @e4 FROM '$(f text_dup)'; COMMIT;" e4
same_err "numeric 7.0 and 7.00 (per row)" 23505 "e5=MISSING" \
  "BEGIN; CREATE TABLE @e5 (a numeric PRIMARY KEY, b int, c text); COPY @e5 FROM '$(f numeric)'; COMMIT;" e5
if [ "$(psql -c "SELECT count(*) FROM pg_collation WHERE collname = 'und-u-ks-level2-x-icu'")" = 1 ] || \
   psql -c "CREATE COLLATION IF NOT EXISTS ix.nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false)" >/dev/null 2>&1; then
  same_err "a nondeterministic collation: words equal but for case (per row)" 23505 "e6=MISSING" \
    "BEGIN; CREATE TABLE @e6 (w text COLLATE ix.nocase PRIMARY KEY, b int, c text); COPY @e6 FROM '$(f words)'; COMMIT;" e6
fi
same_err "a repeated key, then a bad value in the same batch: the bad value" 22P02 "e7=MISSING" \
  "BEGIN; CREATE TABLE @e7 (a int PRIMARY KEY, b int, c text); COPY @e7 FROM '$(f dup_then_bad_same)'; COMMIT;" e7
same_err "a repeated key, then a bad value in a later batch: the key" 23505 "e7=MISSING" \
  "BEGIN; CREATE TABLE @e7 (a int PRIMARY KEY, b int, c text); COPY @e7 FROM '$(f dup_then_bad_later)'; COMMIT;" e7
same_err "an expression index whose function fails at line 1700, beside one built at the end" 22012 "e8=MISSING" \
  "BEGIN; CREATE TABLE @e8 (a int PRIMARY KEY, b int, c text); CREATE INDEX ON @e8 ((100 / b)); COPY @e8 FROM '$(f zero)'; COMMIT;" e8
same_err "a row inserted earlier in the transaction (per row)" 23505 "e9=MISSING" \
  "BEGIN; CREATE TABLE @e9 (a int PRIMARY KEY, b int, c text); INSERT INTO @e9 VALUES (19999, 0, 'x'); COPY @e9 FROM '$(f asc)'; COMMIT;" e9
# (ON_ERROR_STOP stops the script at the caught error: run it as one that ignores it)
ce=$(psql -v ON_ERROR_STOP=0 <<<"$C SET client_min_messages = error; BEGIN; CREATE TABLE c_e11 (a int PRIMARY KEY, b int, c text); SAVEPOINT s; COPY c_e11 FROM '$(f dup_across)'; ROLLBACK TO s; COPY c_e11 FROM '$(f asc)'; COMMIT;" 2>/dev/null | tail -1)
fe=$(psql -v ON_ERROR_STOP=0 <<<"$F SET client_min_messages = error; BEGIN; CREATE TABLE f_e11 (a int PRIMARY KEY, b int, c text); SAVEPOINT s; COPY f_e11 FROM '$(f dup_across)'; ROLLBACK TO s; COPY f_e11 FROM '$(f asc)'; COMMIT;" 2>/dev/null | tail -1)
r=$(cmp e11)
check "a duplicate error rolled back to a savepoint, then a good load: $r" '[ "$r" = "e11=20000" ]' "copy: $ce | fastcopy: $fe"

# ---- 4. crashes, wal_consistency_checking, wal_level = minimal ----
. pgrx-tests/reliability/lib.sh
crash() { as_owner "$bindir/pg_ctl" -D "$FASTCOPY_RUN/data-$m" -m immediate stop >/dev/null; scripts/cluster.sh start "$m" >/dev/null; }
# both sides loaded, with every record of the fastcopy side's (and COPY's) checked against a
# page image when recovery replays it; then a crash, and recovery
W="SET wal_consistency_checking = 'heap,heap2,btree';"
same_ok "built at the end, wal_consistency_checking on" "k1=20000" \
  "$W BEGIN; CREATE TABLE @k1 (a int PRIMARY KEY, b int, c text); CREATE INDEX ON @k1 (c, b); COPY @k1 FROM '$(f rnd)'; COMMIT;" k1
psql -c "CREATE TABLE ix.f_k2 (a int PRIMARY KEY, b int, c text); CREATE INDEX ON ix.f_k2 (b)" -c "COPY ix.f_k2 FROM '$(f rnd)'" >/dev/null
before=$(psql -c "SELECT count(*), sum(a), ix.index_sums('ix.f_k2') FROM ix.f_k2")
# a crash while a long load into the truncated table runs (its indexes not built yet, or
# being built)
for _ in $(seq 1 60); do cat "$(f asc)"; done | awk -F '\t' '{ print NR "\t" $2 "\t" $3 }' > "$(f long)"
psql <<<"$F BEGIN; TRUNCATE ix.f_k2; COPY ix.f_k2 FROM '$(f long)'; COMMIT;" >/dev/null 2>&1 &
sleep 0.3; crash; wait
after=$(psql -c "SELECT count(*), sum(a), ix.index_sums('ix.f_k2') FROM ix.f_k2")
check "a crash during a load into a truncated table: the table and its indexes as before, amcheck clean" \
  '[ -n "$before" ] && [ "$after" = "$before" ]' "before: $before | after: $after"
crash
r=$(cmp k1)
check "after a crash and recovery with consistency checks: $r" '[ "$r" = "k1=20000" ]'
# wal_level = minimal: the new files are synced at commit instead of logged
psql -c "ALTER SYSTEM SET wal_level = minimal" -c "ALTER SYSTEM SET max_wal_senders = 0" >/dev/null
scripts/cluster.sh stop "$m"; scripts/cluster.sh start "$m" >/dev/null
check "wal_level is minimal for the next checks" '[ "$(psql -c "SHOW wal_level")" = minimal ]'
same_ok "wal_level = minimal, created in the transaction" "k3=20000" \
  "BEGIN; CREATE TABLE @k3 (a int PRIMARY KEY, b int, c text); CREATE INDEX ON @k3 (b); COPY @k3 FROM '$(f desc)'; COMMIT;" k3
same_ok "wal_level = minimal, truncated in the transaction" "k4=20000" \
  "CREATE TABLE @k4 (u uuid PRIMARY KEY, k text UNIQUE, n int); BEGIN; TRUNCATE @k4; COPY @k4 FROM '$(f uuid)'; COMMIT;" k4
crash
r=$(cmp k3 k4)
check "wal_level = minimal, after a crash: $r" '[ "$r" = "k3=20000 k4=20000" ]'
psql -c "ALTER SYSTEM RESET wal_level" -c "ALTER SYSTEM RESET max_wal_senders" >/dev/null
scripts/cluster.sh stop "$m"; scripts/cluster.sh start "$m" >/dev/null

psql -c "SET client_min_messages = warning" -c "DROP SCHEMA ix CASCADE" >/dev/null
rm -f "$FASTCOPY_RUN/ix-$m-"*
exit $fail
