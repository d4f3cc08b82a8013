#!/usr/bin/env bash
# COPY … FROM statements through fastcopy (fastcopy.copy_from), with real clients: the load
# corpus through psql STDIN (off vs require: the same tables or the same errors), the COPY-in
# protocol byte by byte (copy_protocol.py), the command
# tag, hand-over reasons, privileges of a non-superuser, pgbench -i (FREEZE), a client that
# cancels (CopyFail) or dies mid-stream, progress of a stream, and the connection staying
# usable after a failed COPY.
# Runs against the build `cargo pgrx test pgNN` just installed, on the throwaway cluster.
#   pgrx-tests/scenarios/copy_hook.sh 17
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
. scripts/scenario_lib.sh
scripts/cluster.sh start "$m" >/dev/null
bindir=$(dirname "$(pg_config_for "$m")")
sock=(-h "$FASTCOPY_RUN" -p "54$m")
on="-c session_preload_libraries=fastcopy -c fastcopy.copy_from"
# psql_as MODE [psql args]: a session with fastcopy.copy_from = MODE (off: the library not even loaded)
psql_as() {
  local mode=$1; shift
  if [ "$mode" = off ]; then PGOPTIONS="" psql "$@"; else PGOPTIONS="$on=$mode" psql "$@"; fi
}
psql -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fastcopy CASCADE;
CREATE EXTENSION fastcopy;
DROP TABLE IF EXISTS hk, hk2;
CREATE TABLE hk (a int PRIMARY KEY, b text);
CREATE TABLE hk2 (a int, b text);
SQL

# 1. the corpus, off vs require
python3 pgrx-tests/scenarios/copy_hook_corpus.py "$m" "$bindir/psql" "${sock[@]}" -U postgres || fail=1

# 1b. the protocol byte by byte: tiny messages, Flush/Sync, CopyFail, an unexpected message
python3 pgrx-tests/scenarios/copy_protocol.py "$FASTCOPY_RUN" "54$m" || fail=1

# 1c. a driver: psycopg 3 (scripts/setup.sh installs it), many small CopyData messages, CopyFail
PYTHONPATH="$FASTCOPY_PY" python3 pgrx-tests/scenarios/copy_psycopg.py "$FASTCOPY_RUN" "54$m" || fail=1

# 2. the command tag counts the rows, as COPY's
psql -c "TRUNCATE hk"
tag=$(printf '1\tx\n2\ty\n3\tz\n' | PGOPTIONS="$on=require" "$bindir/psql" "${sock[@]}" -U postgres -X -At -c "COPY hk FROM STDIN")
check "command tag of a taken COPY: $tag" '[ "$tag" = "COPY 3" ]'

# 3. hand-overs: with on the server's COPY runs (same outcome as off), with require the
# ERROR says why
for stmt in "COPY hk FROM PROGRAM 'cat /dev/null'|program" \
            "COPY hk FROM STDIN (FORMAT binary, DELIMITER ',')|options are invalid" \
            "COPY hk FROM STDIN (FREEZE, FREEZE)|given more than once"; do
  sql=${stmt%%|*}; why=${stmt##*|}
  req=$(printf '5\tq\n' | psql_as require -c "TRUNCATE hk" -c "$sql" 2>&1 >/dev/null)
  a=$(printf '5\tq\n' | psql_as off -c "TRUNCATE hk" -c "$sql" -c "SELECT count(*) FROM hk" 2>&1)
  b=$(printf '5\tq\n' | psql_as on -c "TRUNCATE hk" -c "$sql" -c "SELECT count(*) FROM hk" 2>&1)
  check "handed over ($why): require says so, on = off" \
    '[[ "$req" == *"fastcopy cannot take this COPY"*"$why"* ]] && [ "$a" = "$b" ]' "require: $req | off: $a | on: $b"
done
dbg=$(printf '5\tq\n' | psql_as on -c "SET client_min_messages = debug1" -c "COPY hk FROM PROGRAM 'cat /dev/null'" 2>&1 >/dev/null)
check "with on, DEBUG1 names the reason of a hand-over" '[[ "$dbg" == *"DEBUG:  fastcopy hands this COPY to the server: it reads from a program"* ]]' "$dbg"
# 3a. statements copy_from is not about go to the server under every setting, require too:
# COPY TO, and COPY FROM in a format fastcopy does not read (another extension's, as Citus's
# `result`; here the server refuses it as an unknown format); DEBUG1 says why
for stmt in "COPY hk TO STDOUT|it is COPY TO" \
            "COPY (SELECT a FROM hk ORDER BY a) TO STDOUT (FORMAT csv)|it is COPY TO" \
            "COPY hk FROM STDIN (FORMAT result)|format \"result\" is not one fastcopy reads"; do
  sql=${stmt%%|*}; why=${stmt##*|}
  a=$(printf '5\tq\n' | psql_as off -c "TRUNCATE hk" -c "INSERT INTO hk VALUES (7, 'r')" -c "$sql" 2>&1)
  b=$(printf '5\tq\n' | psql_as require -c "TRUNCATE hk" -c "INSERT INTO hk VALUES (7, 'r')" -c "$sql" 2>&1)
  d=$(printf '5\tq\n' | psql_as require -c "SET client_min_messages = debug1" -c "$sql" 2>&1 >/dev/null)
  check "not about copy_from ($why): require = off, DEBUG1 says why" \
    '[ "$a" = "$b" ] && [[ "$b" != *"fastcopy cannot take"* ]] && [[ "$d" == *"fastcopy hands this COPY to the server: $why"* ]]' \
    "off: $a | require: $b | debug: $d"
done

# 3b. statements with COPY 15-18's other options and targets are taken: the same outcome
# (rows, NOTICEs, errors with their position and CONTEXT) as the server's COPY
psql -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP VIEW IF EXISTS hkv; DROP TABLE IF EXISTS hkb;
CREATE TABLE hkb (a int, b text);
CREATE VIEW hkv AS SELECT a, b FROM hkb;
CREATE FUNCTION hkv_ins() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  IF NEW.a = 2 THEN RETURN NULL; END IF; INSERT INTO hkb VALUES (NEW.a * 10, NEW.b); RETURN NEW; END $$;
CREATE TRIGGER hkv_ins INSTEAD OF INSERT ON hkv FOR EACH ROW EXECUTE FUNCTION hkv_ins();
SQL
psql -v ON_ERROR_STOP=1 >/dev/null <<SQL
COPY (SELECT g, 'r' || g FROM generate_series(1, 10) g) TO '$FASTCOPY_RUN/hk-where-$m.txt';
CREATE OR REPLACE FUNCTION hk_where() RETURNS void LANGUAGE plpgsql
  AS \$\$ BEGIN COPY hk2 FROM '$FASTCOPY_RUN/hk-where-$m.txt' WHERE a > 5 AND b <> 'r7'; END \$\$;
SQL
taken() {  # LABEL DATA SQL: off and require give the same output, and require took it
  local a b
  a=$(printf "$2" | psql_as off -v VERBOSITY=default -c "TRUNCATE hk2, hkb" -c "$3" -c "SELECT count(*), string_agg(a || ':' || coalesce(b, '<null>'), ' ' ORDER BY a) FROM (SELECT * FROM hk2 UNION ALL SELECT * FROM hkb) t" 2>&1)
  b=$(printf "$2" | psql_as require -v VERBOSITY=default -c "TRUNCATE hk2, hkb" -c "$3" -c "SELECT count(*), string_agg(a || ':' || coalesce(b, '<null>'), ' ' ORDER BY a) FROM (SELECT * FROM hk2 UNION ALL SELECT * FROM hkb) t" 2>&1)
  check "taken, as the server's COPY: $1" '[ "$a" = "$b" ] && [[ "$b" != *"fastcopy cannot take"* ]]' "off: $a | require: $b"
}
taken "WHERE" '1\tx\n2\ty\n3\tz\n' "COPY hk2 FROM STDIN WHERE a > 1 AND b <> 'z'"
taken "WHERE that fails at line 2" '1\tx\n2\ty\n' "COPY hk2 FROM STDIN WHERE a / (a - 2) > 0"
taken "WHERE naming an unknown column (the error's position in the statement)" '1\tx\n' "COPY hk2 FROM STDIN WHERE nosuch > 1"
taken "HEADER MATCH" 'a\tb\n1\tx\n' "COPY hk2 FROM STDIN (HEADER match)"
taken "HEADER MATCH with a column list, mismatched" 'a\tb\n1\tx\n' "COPY hk2 (b, a) FROM STDIN WITH (HEADER MATCH)"
taken "WHERE in a function's cached plan, run twice" '' "SELECT hk_where(); SELECT hk_where()"
taken "a view with an INSTEAD OF INSERT trigger" '1\tx\n2\ty\n3\tz\n' "COPY hkv FROM STDIN"
if [ "$m" -ge 17 ]; then
  taken "FORCE_NOT_NULL *, FORCE_NULL *" '1,,""\n' "COPY hk2 FROM STDIN (FORMAT csv, FORCE_NOT_NULL *, FORCE_NULL *)"
  taken "ON_ERROR ignore, LOG_VERBOSITY verbose" 'x\ty\n1\tz\n2\t\\N\n' "COPY hk2 FROM STDIN (ON_ERROR ignore, LOG_VERBOSITY verbose)"
fi
if [ "$m" -ge 18 ]; then
  taken "REJECT_LIMIT, exceeded at line 3" 'x\ty\n1\tz\nq\tw\n' "COPY hk2 FROM STDIN (ON_ERROR ignore, REJECT_LIMIT 1)"
  taken "LOG_VERBOSITY silent" 'x\ty\n1\tz\n' "COPY hk2 FROM STDIN (ON_ERROR ignore, LOG_VERBOSITY silent)"
fi

# 3c. PostgreSQL 19's HEADER n, which 15-18 refuse themselves: taken, as the server's HEADER
# true on the same data with n - 1 lines fewer (errors n - 1 lines further on)
q="SELECT count(*), string_agg(a || ':' || coalesce(b, '<null>'), ' ' ORDER BY a) FROM hk2"
a=$(printf 'h3\n1\tx\n2\ty\n' | psql_as off -c "TRUNCATE hk2" -c "COPY hk2 FROM STDIN (HEADER true)" -c "$q" 2>&1)
b=$(printf 'h1\nh2\nh3\n1\tx\n2\ty\n' | psql_as require -c "TRUNCATE hk2" -c "COPY hk2 FROM STDIN (HEADER 3)" -c "$q" 2>&1)
check "HEADER 3 taken: as HEADER true with two lines fewer ($b)" '[ "$a" = "$b" ] && [[ "$b" == *"1:x 2:y"* ]]' "off: $a | require: $b"
a=$(printf 'h3\n1\tx\nbad\ty\n' | psql_as off -v VERBOSITY=default -c "COPY hk2 FROM STDIN (HEADER true)" 2>&1)
b=$(printf 'h1\nh2\nh3\n1\tx\nbad\ty\n' | psql_as require -v VERBOSITY=default -c "COPY hk2 FROM STDIN (HEADER 3)" 2>&1)
check "HEADER 3 taken: an error's line counts the header lines" '[ "${a/line 3/line 5}" = "$b" ] && [[ "$b" == *"line 5"* ]]' "off: $a | require: $b"
off=$(printf 'h1\nh2\n1\tx\n' | psql_as off -c "COPY hk2 FROM STDIN (HEADER 2)" 2>&1)
check "HEADER 2 without fastcopy: the server's own refusal on $m" '[[ "$off" == *"ERROR"*"header"* ]]' "$off"

# 3d. PostgreSQL 19's regression test of ON_ERROR set_null, verbatim, through the hook on
# every major (15-18 refuse the option themselves): its expected output, byte for byte (HEADER
# n with copy_from on: its COPY TO goes to the server, and a HEADER n handed over would fail)
psql -c "DROP TABLE IF EXISTS t_on_error_null" -c "DROP DOMAIN IF EXISTS d_int_not_null, d_int_positive_maybe_null" >/dev/null 2>&1
got=$(PGOPTIONS="$on=require" "$bindir/psql" "${sock[@]}" -U postgres -X -a -q <pgrx-tests/scenarios/pg19/set_null.sql 2>&1)
check "PostgreSQL 19's set_null regression test through the hook: its expected output" \
  '[ "$got" = "$(cat pgrx-tests/scenarios/pg19/set_null.out)" ]' "$(diff <(echo "$got") pgrx-tests/scenarios/pg19/set_null.out)"

got=$(PGOPTIONS="$on=on" "$bindir/psql" "${sock[@]}" -U postgres -X -a -q <pgrx-tests/scenarios/pg19/header.sql 2>&1)
check "PostgreSQL 19's HEADER n regression test through the hook: its expected output" \
  '[ "$got" = "$(cat pgrx-tests/scenarios/pg19/header.out)" ]' "$(diff <(echo "$got") pgrx-tests/scenarios/pg19/header.out)"

# 3e. the rejects table through the hook: the COPY option REJECTS from psql \copy, and the
# setting fastcopy.rejects for a client that cannot change its statement
psql -c "DROP TABLE IF EXISTS hk_rej, hk_rej2" >/dev/null 2>&1
printf '1\tx\nbad\ty\n3\tz\n4\n' >"$FASTCOPY_RUN/hk-rej-$m.txt"
r=$(PGOPTIONS="$on=require" "$bindir/psql" "${sock[@]}" -U postgres -X -At -v ON_ERROR_STOP=1 \
      -c "TRUNCATE hk2" -c "\\copy hk2 FROM '$FASTCOPY_RUN/hk-rej-$m.txt' WITH (REJECTS 'hk_rej')" \
      -c "SELECT count(*) FROM hk2" \
      -c "SELECT string_agg(line || ':' || sqlstate || ':' || coalesce(column_name, '-') || ':' || source, ' ' ORDER BY line) FROM hk_rej" 2>&1)
check "\\copy with REJECTS: 2 rows loaded, lines 2 and 4 kept" \
  '[[ "$r" == *"COPY 2"* ]] && [[ "$r" == *"2 rows were rejected and kept in \"hk_rej\" with load_id "* ]] && [ "${r##*$'"'"'\n'"'"'}" = "2:22P02:a:STDIN 4:22P04:-:STDIN" ]' "$r"
r=$(PGOPTIONS="$on=on -c fastcopy.rejects=hk_rej2" "$bindir/psql" "${sock[@]}" -U postgres -X -At -v ON_ERROR_STOP=1 \
      -c "TRUNCATE hk2" -c "\\copy hk2 FROM '$FASTCOPY_RUN/hk-rej-$m.txt'" \
      -c "SELECT count(*) FROM hk_rej2" 2>&1)
check "fastcopy.rejects for an unchanged \\copy: its 2 bad rows kept" '[[ "$r" == *"COPY 2"* ]] && [ "${r##*$'"'"'\n'"'"'}" = 2 ]' "$r"

r=$(PGOPTIONS="$on=require" "$bindir/psql" "${sock[@]}" -U postgres -X -At \
      -c "\\copy hk2 FROM '$FASTCOPY_RUN/hk-rej-$m.txt' WITH (REJECTS 'hk_rej', REJECT_RATIO 0.4)" 2>&1)
check "REJECT_RATIO 0.4 with 2 of 4 rows skipped: the load fails" '[[ "$r" == *"skipped more than REJECT_RATIO (0.4)"* ]]' "$r"

# two loads at once into one rejects table that does not exist yet: both load, both keep
# their rejects (two load ids), no catalog conflict
psql -c "DROP TABLE IF EXISTS hk_rej3" >/dev/null 2>&1
for k in 1 2; do
  PGOPTIONS="$on=require" "$bindir/psql" "${sock[@]}" -U postgres -X -At -v ON_ERROR_STOP=1 \
    -c "BEGIN" -c "\\copy hk2 FROM '$FASTCOPY_RUN/hk-rej-$m.txt' WITH (REJECTS 'hk_rej3')" \
    -c "SELECT pg_sleep(0.5)" -c "COMMIT" >"$FASTCOPY_RUN/hk-rej3-$m-$k.out" 2>&1 &
done
wait
r=$(psql -c "SELECT count(*) || ' ' || count(DISTINCT load_id) FROM hk_rej3")
check "two loads at once creating one rejects table: 4 rows, 2 load ids ($r)" '[ "$r" = "4 2" ]' \
  "$(cat "$FASTCOPY_RUN"/hk-rej3-$m-*.out)"

# tables another extension manages (their catalogs mocked: neither extension is installed here)
psql -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SET client_min_messages = warning;
SET allow_system_table_mods = on;
DROP TABLE IF EXISTS pg_catalog.pg_dist_partition;
CREATE TABLE pg_catalog.pg_dist_partition (logicalrelid regclass, partmethod "char");
INSERT INTO pg_catalog.pg_dist_partition VALUES ('hk', 'h');
DROP SCHEMA IF EXISTS _timescaledb_catalog CASCADE;
CREATE SCHEMA _timescaledb_catalog;
CREATE TABLE _timescaledb_catalog.hypertable (id int, schema_name name, table_name name);
INSERT INTO _timescaledb_catalog.hypertable VALUES (1, 'public', 'hk2');
SQL
c=$(printf '5\tq\n' | psql_as require -c "COPY hk FROM STDIN" 2>&1)
t=$(printf '5\tq\n' | psql_as require -c "COPY hk2 FROM STDIN" 2>&1)
psql -c "SET allow_system_table_mods = on" -c "DROP TABLE pg_catalog.pg_dist_partition" -c "DROP SCHEMA _timescaledb_catalog CASCADE" >/dev/null 2>&1
check "a Citus table (in pg_dist_partition) is handed over" '[[ "$c" == *"managed by Citus"* ]]' "$c"
check "a TimescaleDB hypertable is handed over" '[[ "$t" == *"managed by TimescaleDB"* ]]' "$t"
req=$(psql_as require -c "LOAD 'fastcopy'" -c "SELECT fastcopy.load('hk', '/nonexistent')" 2>&1 >/dev/null)
check "fastcopy.load is not a COPY statement (not handed over): $req" '[[ "$req" == *"could not open file"* ]]'

# 4. a non-superuser: STDIN with INSERT works, a file is refused with COPY's message, a table
# without INSERT too
psql -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SET client_min_messages = warning;
DO $$ BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'hk_user') THEN DROP OWNED BY hk_user; DROP ROLE hk_user; END IF;
END $$;
CREATE ROLE hk_user LOGIN;
-- how a DBA turns it on for a role that may not load libraries itself
ALTER ROLE hk_user SET session_preload_libraries = 'fastcopy';
GRANT USAGE ON SCHEMA public TO hk_user;
GRANT INSERT ON hk2 TO hk_user;
GRANT INSERT (a) ON hk TO hk_user;
SQL
as_user() { PGOPTIONS="-c fastcopy.copy_from=$2" "$bindir/psql" "${sock[@]}" -U hk_user -d postgres -X -qAt -c "$1" 2>&1; }
r=$(printf '7\tu\n' | as_user "COPY hk2 FROM STDIN" require; psql -c "SELECT count(*) FROM hk2 WHERE a = 7")
check "non-superuser COPY FROM STDIN with INSERT: $r" '[ "$r" = 1 ]'
for stmt in "COPY hk2 FROM '/etc/hostname'|a file" "COPY hk FROM STDIN|a table without INSERT" \
            "COPY hk (b) FROM STDIN|a column without INSERT"; do
  sql=${stmt%%|*}; what=${stmt##*|}
  a=$(printf '8\tu\n' | as_user "$sql" off); b=$(printf '8\tu\n' | as_user "$sql" require)
  check "non-superuser, $what: COPY's error ($b)" '[ "$a" = "$b" ] && [[ "$a" == "ERROR:  "* ]] && { [[ "$a" == *permission* ]] || [[ "$a" == *superuser* ]]; }' "off: $a | require: $b"
done
r=$(printf '9\n' | as_user "COPY hk (a) FROM STDIN" require; psql -c "SELECT count(*) FROM hk WHERE a = 9")
check "non-superuser with INSERT on the listed column: loaded ($r)" '[ "$r" = 1 ]'

# 5. pgbench -i (COPY ... FROM STDIN WITH (FREEZE ON)): the same tables with the switch off and on
sum() { psql -c "SELECT md5(string_agg(t::text, ',' ORDER BY aid)) FROM pgbench_accounts t"; }
PGOPTIONS="" "$bindir/pgbench" "${sock[@]}" -U postgres -i -s 2 -q postgres >/dev/null 2>&1; a=$(sum)
PGOPTIONS="$on=require" "$bindir/pgbench" "${sock[@]}" -U postgres -i -s 2 -q postgres >/dev/null 2>&1; b=$(sum)
frozen=$(psql -c "CREATE EXTENSION IF NOT EXISTS pg_visibility" -c "SELECT count(*) FILTER (WHERE all_frozen) > 0 FROM pg_visibility_map('pgbench_accounts')" 2>/dev/null | tail -1)
check "pgbench -i -s 2 (FREEZE): same pgbench_accounts on and off, frozen pages ($frozen)" '[ -n "$a" ] && [ "$a" = "$b" ] && [ "$frozen" = t ]'

# 5b. pg_dump / pg_restore (and a plain dump through psql) of a database with many types,
# indexes, a foreign key, partitions, generated and identity columns: restored with
# fastcopy.copy_from = require, every table equals the source
dbq() { PGOPTIONS="" "$bindir/psql" "${sock[@]}" -U postgres -X -qAt -v ON_ERROR_STOP=1 -d "$@"; }
psql -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS hk_src" -c "CREATE DATABASE hk_src" >/dev/null
dbq hk_src >/dev/null <<'SQL'
CREATE EXTENSION fastcopy;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE parent (id int PRIMARY KEY, name text UNIQUE);
CREATE TABLE kinds (
  id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, parent int REFERENCES parent,
  i2 int2, i8 int8, n numeric(20,5), f4 float4, f8 float8, b bool, t text, vc varchar(10),
  by bytea, d date, ts timestamp, tz timestamptz, iv interval, j json, jb jsonb, a int[],
  ta text[], u uuid, ip inet, m mood, doubled int GENERATED ALWAYS AS (i2 * 2) STORED);
CREATE INDEX ON kinds (t);
CREATE TABLE parted (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE parted_lo PARTITION OF parted FOR VALUES FROM (MINVALUE) TO (1000);
CREATE TABLE parted_hi PARTITION OF parted FOR VALUES FROM (1000) TO (MAXVALUE);
INSERT INTO parent SELECT g, 'p' || g FROM generate_series(1, 100) g;
INSERT INTO kinds (parent, i2, i8, n, f4, f8, b, t, vc, by, d, ts, tz, iv, j, jb, a, ta, u, ip, m)
SELECT 1 + g % 100, (g % 30000)::int2, g::int8 * 1000003, g / 7.0, g / 3.0, g / 9.0, g % 2 = 0,
       CASE g % 5 WHEN 0 THEN NULL WHEN 1 THEN E'tab\there' WHEN 2 THEN E'line\nbreak\\back' WHEN 3 THEN 'ünïcödé €' ELSE '' END,
       left(md5(g::text), 10), decode(md5(g::text), 'hex'), date '2000-01-01' + g,
       timestamp '2020-01-01' + g * interval '1 min', timestamptz '2020-01-01 00:00+02' + g * interval '1 h',
       g * interval '1 s', json_build_object('g', g), jsonb_build_object('k', g, 'a', ARRAY[g, -g]),
       ARRAY[g, NULL, -g], ARRAY['x', NULL, E'q"u\\o'], md5(g::text)::uuid, ('10.0.' || g % 256 || '.1')::inet,
       (ARRAY['sad', 'ok', 'happy'])[1 + g % 3]::mood
FROM generate_series(1, 20000) g;
INSERT INTO parted SELECT g, 'v' || g FROM generate_series(1, 3000) g;
SQL
sig() { dbq "$1" -c "SELECT string_agg(c || ':' || n || ':' || md5, ' ' ORDER BY c) FROM (
  SELECT 'parent' c, count(*) n, md5(string_agg(t::text, ',' ORDER BY t::text)) FROM parent t UNION ALL
  SELECT 'kinds', count(*), md5(string_agg(t::text, ',' ORDER BY t::text)) FROM kinds t UNION ALL
  SELECT 'parted_lo', count(*), md5(string_agg(t::text, ',' ORDER BY t::text)) FROM parted_lo t UNION ALL
  SELECT 'parted_hi', count(*), md5(string_agg(t::text, ',' ORDER BY t::text)) FROM parted_hi t) s"; }
"$bindir/pg_dump" "${sock[@]}" -U postgres -Fc -f "$FASTCOPY_RUN/hk-$m.dump" hk_src
psql -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS hk_dst" -c "CREATE DATABASE hk_dst" >/dev/null
r=$(PGOPTIONS="$on=require" "$bindir/pg_restore" "${sock[@]}" -U postgres --exit-on-error -d hk_dst "$FASTCOPY_RUN/hk-$m.dump" 2>&1)
a=$(sig hk_src); b=$(sig hk_dst)
check "pg_restore with require: every table equals the source ($(wc -c <"$FASTCOPY_RUN/hk-$m.dump") byte dump)" '[ -z "$r" ] && [[ "$a" == *kinds:20000:* ]] && [ "$a" = "$b" ]' "restore: $r | src: $a | dst: $b"
psql -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS hk_dst" -c "CREATE DATABASE hk_dst" >/dev/null
r=$("$bindir/pg_dump" "${sock[@]}" -U postgres -Fp hk_src | PGOPTIONS="$on=require" "$bindir/psql" "${sock[@]}" -U postgres -X -q -v ON_ERROR_STOP=1 -d hk_dst 2>&1 >/dev/null)
b=$(sig hk_dst)
check "a plain dump through psql with require: every table equals the source" '[ -z "$r" ] && [ "$a" = "$b" ]' "psql: $r | src: $a | dst: $b"
# pg_dump (COPY TO) as a role whose sessions load fastcopy with copy_from = require
psql -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS hk_dumper" \
     -c "CREATE ROLE hk_dumper LOGIN SUPERUSER" \
     -c "ALTER ROLE hk_dumper SET session_preload_libraries = 'fastcopy'" \
     -c "ALTER ROLE hk_dumper SET fastcopy.copy_from = 'require'" >/dev/null
# (without the \restrict lines, whose key is new in every dump)
a=$("$bindir/pg_dump" "${sock[@]}" -U postgres -Fp hk_src 2>&1 | grep -v '^\\\(un\)\?restrict ' | md5sum)
r=$("$bindir/pg_dump" "${sock[@]}" -U hk_dumper -Fp -f "$FASTCOPY_RUN/hk-$m-require.sql" hk_src 2>&1)
b=$(grep -v '^\\\(un\)\?restrict ' "$FASTCOPY_RUN/hk-$m-require.sql" | md5sum)
s=$("$bindir/psql" "${sock[@]}" -U hk_dumper -XAt -d hk_src -c "SHOW fastcopy.copy_from" 2>&1)
check "pg_dump as a role with copy_from = require ($s): succeeds, the same dump as without" \
  '[ -z "$r" ] && [ "$s" = require ] && [ "$a" = "$b" ]' "pg_dump: $r | setting: $s"
psql -c "DROP ROLE hk_dumper" >/dev/null
psql -c "DROP DATABASE hk_src" -c "DROP DATABASE hk_dst" >/dev/null

# 6. a client that cancels mid-stream (psql sends CopyFail), a cancel request from another
# session, and a client that dies mid-stream: nothing loaded, the backend gone, the server up.
slow() { for i in $(seq 1 200000); do printf '%d\tslow\n' "$i"; [ $((i % 20000)) = 0 ] && sleep 0.3; done; }
# burst: 30,000 rows, then 4 s of nothing, then 30,000 more. A SIGINT during the pause finds
# psql waiting for input, where it sends CopyFail; a SIGINT while psql is writing makes it send
# a cancel request instead (psql's choice, not the server's), so the pause makes the test
# deterministic.
burst() { seq 1 30000 | sed 's/$/\tslow/'; sleep 4; seq 30001 60000 | sed 's/$/\tslow/'; }
# interrupt_once MODE HOW: HOW = sigint (psql's CopyFail) or cancel (pg_cancel_backend)
interrupt_once() {
  psql -c "TRUNCATE hk2" >/dev/null
  (burst | psql_as "$1" -c "COPY hk2 FROM STDIN" 2>&1) & local p=$!
  sleep 1.5
  # this major's psql only (its port on the command line): other majors' sessions may run too
  if [ "$2" = sigint ]; then pkill -INT -f "psql .*-p 54$m .*COPY hk2 FROM STDIN"
  else psql -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = 'COPY hk2 FROM STDIN'" >/dev/null; fi
  wait $p
}
a=$(interrupt_once off sigint); b=$(interrupt_once require sigint); n=$(psql -c "SELECT count(*) FROM hk2")
check "client cancel (CopyFail): COPY's error ($b), nothing loaded" '[ "$a" = "$b" ] && [[ "$b" == *"COPY from stdin failed: canceled by user"* ]] && [ "$n" = 0 ]' "off: $a | require: $b"
# A cancel is acted on at the next row once data comes again; which row that is depends on
# where the client's flushes cut its messages (libpq sends 8 kB at a time), for COPY as for
# fastcopy: the same error and a CONTEXT of the same shape (a line and its text), numbers aside.
cancel_shape() { interrupt_once "$1" cancel | sed -E 's/line [0-9]+: "[0-9]+/line N: "N/'; }
a=$(cancel_shape off); b=$(cancel_shape require); n=$(psql -c "SELECT count(*) FROM hk2")
check "pg_cancel_backend mid-stream: COPY's error ($b), nothing loaded" '[ "$a" = "$b" ] && [[ "$b" == *"canceling statement due to user request"*"line N: "* ]] && [ "$n" = 0 ]' "off: $a | require: $b"
(slow | psql_as require -c "COPY hk2 FROM STDIN" >/dev/null 2>&1) &
sleep 1; pkill -KILL -f "psql .*-p 54$m .*COPY hk2 FROM STDIN"; wait 2>/dev/null
for i in $(seq 1 50); do
  left=$(psql -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'COPY hk2%'")
  [ "$left" = 0 ] && break; sleep 0.1
done
n=$(psql -c "SELECT count(*) FROM hk2")
check "client killed mid-stream: nothing loaded ($n), its backend gone ($left left), server up" '[ "$n" = 0 ] && [ "$left" = 0 ]'

# 6b. statement_timeout stops a stream that keeps coming within a second (the backend stops
# being active: seen from another session); nothing stays
psql -c "TRUNCATE hk2" >/dev/null
(seq 1 100000000 | sed 's/$/\tx/' | psql_as require -c "SET statement_timeout = '300ms'" -c "COPY hk2 FROM STDIN" >"$FASTCOPY_RUN/hk-timeout-$m.out" 2>&1) &
feeder=$!
t0=$(date +%s%N); ms=""
for i in $(seq 1 100); do
  a=$(psql -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'COPY hk2 FROM STDIN%' AND state = 'active'")
  if [ "$a" = 0 ] && [ "$i" -gt 2 ]; then ms=$(( ($(date +%s%N) - t0) / 1000000 )); break; fi
  sleep 0.05
done
pkill -P "$feeder" -x seq; wait 2>/dev/null
n=$(psql -c "SELECT count(*) FROM hk2"); err=$(cat "$FASTCOPY_RUN/hk-timeout-$m.out")
check "statement_timeout 300ms stops a stream (no longer active after ${ms:-?} ms), nothing loaded ($n)" \
  '[[ "$err" == *"statement timeout"* ]] && [ -n "$ms" ] && [ "$ms" -lt 1300 ] && [ "$n" = 0 ]' "$err"

# 7. progress of a stream: type PIPE, tuples growing
psql -c "TRUNCATE hk2" >/dev/null
(slow | psql_as require -c "COPY hk2 FROM STDIN" >/dev/null 2>&1) & p=$!
seen=""
for i in $(seq 1 100); do
  seen=$(psql -c "SELECT tuples_processed FROM pg_stat_progress_copy WHERE relid = 'hk2'::regclass AND type = 'PIPE' AND tuples_processed > 0")
  [ -n "$seen" ] && break; sleep 0.05
done
wait $p
n=$(psql -c "SELECT count(*) FROM hk2")
check "pg_stat_progress_copy of a stream: type PIPE ($seen rows so far), all $n rows loaded" '[ -n "$seen" ] && [ "$n" = 200000 ]'

# 8. after a failed COPY the session goes on
out=$(printf '1\tx\n1\ty\n' | psql_as require -c "TRUNCATE hk" -c "COPY hk FROM STDIN" 2>&1; psql_as require -c "SELECT count(*) FROM hk")
check "a failed COPY (unique violation) leaves the connection usable" '[[ "$out" == *"duplicate key"* ]] && [[ "$out" == *0 ]]' "$out"
r=$(printf '1\tx\n1\ty\n' | PGOPTIONS="$on=require" "$bindir/psql" "${sock[@]}" -U postgres -X -qAt -c "COPY hk FROM STDIN" -c "SELECT 'next'" 2>&1)
check "the next statement of the same session runs" '[[ "$r" == *next* ]] && [[ "$r" == *"duplicate key"* ]]' "$r"

# 9. pg_stat_statements counts the rows of a taken COPY when fastcopy is listed before it
# (its hook then runs outside fastcopy's); the server restarted with both preloaded
psql -c "ALTER SYSTEM SET shared_preload_libraries = fastcopy, pg_stat_statements" >/dev/null
scripts/cluster.sh stop "$m"; scripts/cluster.sh start "$m" >/dev/null
psql -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "SELECT pg_stat_statements_reset()" -c "TRUNCATE hk2" >/dev/null
printf '1\ta\n2\tb\n3\tc\n4\td\n' | PGOPTIONS="-c fastcopy.copy_from=require" psql -c "COPY hk2 FROM STDIN"
counted=$(psql -c "SELECT rows FROM pg_stat_statements WHERE query LIKE 'COPY hk2 FROM STDIN%'")
n=$(psql -c "SELECT count(*) FROM hk2")
psql -c "ALTER SYSTEM RESET shared_preload_libraries" >/dev/null
scripts/cluster.sh stop "$m"; scripts/cluster.sh start "$m" >/dev/null
check "shared_preload_libraries = 'fastcopy, pg_stat_statements': the COPY's rows counted ($counted of $n)" '[ "$counted" = 4 ] && [ "$n" = 4 ]'

exit $fail
