#!/usr/bin/env bash
# The bulk page path (src/load/pages.rs) against heap_multi_insert, in the same build: each
# scenario loads the same input into two tables set up alike, once with fastcopy.page_path =
# off (heap_multi_insert) and once on, and compares what the server would show for each:
# - the heap pages byte for byte (pageinspect: every line pointer, tuple header field, null
#   bitmap and tuple data; every page header's lower, upper, special and flags), after both
#   tables were read once (so both carry the same hint bits); only xmin/cmin and the LSNs differ;
# - the WAL of the load (pg_walinspect): every record touching the table, in order, with its
#   resource manager, type, lengths (main data, page image) and description;
# - the visibility map (pg_visibility_map), the free space map (pg_freespace), the inserted
#   count in the transaction's statistics, amcheck (verify_heapam, bt_index_check with
#   heapallindexed) and the rows themselves;
# - that the page path was taken (its DEBUG1 line), or, for TOAST-size rows, not.
# Scenarios: ints only, ints of three widths with NULLs, ints/text/NULLs, FREEZE into a table created in the transaction,
# fillfactor 70, a table with rows, deletions and VACUUM (the free space map, unused line
# pointers, all-visible pages), an index, UNLOGGED, TEMP, TOAST-size values.
#   pgrx-tests/scenarios/pages.sh 17
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
. scripts/scenario_lib.sh
scripts/cluster.sh start "$m" >/dev/null
data="$FASTCOPY_RUN/pages-$m"
# Both sides must start from the same table: an autovacuum ANALYZE of the other table holds a
# snapshot, and a VACUUM in a scenario's setup then keeps dead rows that the other side's
# VACUUM removed (a different free space map, other all-visible pages). Autovacuum is off for
# this script, and each side's table is compared before the load too.
psql -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_reload_conf()" >/dev/null
trap 'psql -c "ALTER SYSTEM RESET autovacuum" -c "SELECT pg_reload_conf()" >/dev/null 2>&1' EXIT
for _ in $(seq 600); do
  [ "$(psql -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")" = 0 ] && break
  sleep 0.1
done
psql -v ON_ERROR_STOP=1 <<SQL || { echo "FAIL pages: the setup failed"; exit 1; }
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fastcopy CASCADE;
CREATE EXTENSION fastcopy;
CREATE EXTENSION IF NOT EXISTS amcheck;
CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE EXTENSION IF NOT EXISTS pg_visibility;
CREATE EXTENSION IF NOT EXISTS pg_freespacemap;
CREATE EXTENSION IF NOT EXISTS pg_walinspect;
COPY (SELECT g, (g * 7919) % 100003 - 50000, 3243423 FROM generate_series(1, 200000) g) TO '$data-ints';
COPY (SELECT (g % 30000 - 15000)::int2, CASE WHEN g % 13 = 0 THEN NULL ELSE g * 1000000007::int8 END, -g
      FROM generate_series(1, 150000) g) TO '$data-widths';
COPY (SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE repeat(chr(97 + g % 26), g % 90) END,
             CASE WHEN g % 11 = 0 THEN NULL ELSE g * 3 END, (g % 3 = 0)
      FROM generate_series(1, 100000) g) TO '$data-mixed';
COPY (SELECT g, CASE WHEN g % 3000 = 0
                     THEN (SELECT string_agg(md5((g * 1000 + i)::text), '') FROM generate_series(1, 100) i)
                     ELSE 'short ' || g END, g
      FROM generate_series(1, 20000) g) TO '$data-toast';
COPY (SELECT g, CASE g % 9 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN 'abcdef' WHEN 3 THEN 'é'
                          WHEN 4 THEN 'abcdef   ' WHEN 5 THEN 'a\tb' ELSE 'x' || g % 1000 END,
             g::int8 * 1000003, chr(65 + g % 26), CASE WHEN g % 50 = 0 THEN 'filler' ELSE '' END
      FROM generate_series(1, 100000) g) TO '$data-chars';
COPY (SELECT g, CASE WHEN g % 11 = 0 THEN NULL ELSE repeat(chr(97 + g % 26), g % 140) END,
             g::int8 * -1000003, CASE WHEN g % 5 = 0 THEN 'véééé' || g ELSE left(md5(g::text), g % 13) END,
             repeat('x', g % 131)
      FROM generate_series(1, 100000) g) TO '$data-texts';
DROP FUNCTION IF EXISTS pages_of(regclass), headers_of(regclass), wal_flushed(pg_lsn);
-- The end of a side's WAL range: a transactional message of its own (so that the range is never
-- empty: COPY into a TEMP table writes none), whose commit flushes it; then waited for until
-- flushed all the same (pg_walinspect reads only flushed WAL: 15 refuses an end beyond it, 18 a
-- start not before it; a non-transactional message would wait for the next flush of another).
CREATE FUNCTION wal_flushed(l pg_lsn) RETURNS pg_lsn LANGUAGE plpgsql AS \$\$
BEGIN
  WHILE pg_current_wal_flush_lsn() < l LOOP PERFORM pg_sleep(0.01); END LOOP;
  RETURN l;
END \$\$;
CREATE FUNCTION pages_of(t regclass) RETURNS TABLE (blk bigint, lp smallint, lp_off smallint,
    lp_flags smallint, lp_len smallint, t_infomask2 integer, t_infomask integer, t_hoff smallint,
    t_bits text, t_ctid tid, t_data bytea) LANGUAGE sql AS \$\$
  SELECT b, lp, lp_off, lp_flags, lp_len, t_infomask2, t_infomask, t_hoff, t_bits, t_ctid,
         CASE WHEN t_infomask & 4 = 0 THEN t_data END  -- (a TOAST pointer names its own table)
  FROM generate_series(0, pg_relation_size(t) / current_setting('block_size')::int - 1) b,
       heap_page_items(get_raw_page(t::text, b)) \$\$;
CREATE FUNCTION headers_of(t regclass) RETURNS TABLE (blk bigint, lower int, upper int,
    special int, flags int, prune_xid xid) LANGUAGE sql AS \$\$
  SELECT b, h.lower, h.upper, h.special, h.flags, h.prune_xid
  FROM generate_series(0, pg_relation_size(t) / current_setting('block_size')::int - 1) b,
       page_header(get_raw_page(t::text, b)) h \$\$;
SQL

# md5 over a query's rows in their order (a text form of everything it returns).
digest() { echo "md5(coalesce(string_agg(x::text, '|'), ''))"; }

# side SIDE DDL PRE LOAD: table pg_SIDE made by DDL and PRE (%T: its name), then LOAD with
# fastcopy.page_path = SIDE in one psql session; prints one line: the page digest, the header
# digest, VM, FSM, WAL digests, the transaction's inserted count, amcheck, the DEBUG1 line.
side() {
  local s=$1 t="pg_$1" ddl=${2//%T/pg_$1} pre=${3//%T/pg_$1} load=${4//%T/pg_$1}
  psql -v ON_ERROR_STOP=1 -c "DROP TABLE IF EXISTS $t" >/dev/null 2>&1
  # one session for a TEMP table (it exists in that session only)
  psql -v ON_ERROR_STOP=1 -F ' ' 2>&1 <<SQL
SET client_min_messages = warning;
$ddl;
$pre;
CHECKPOINT;
SELECT coalesce(to_regclass('$t')::text, '') AS r \gset
SELECT 'before', (SELECT $(digest) FROM pages_of(NULLIF(:'r', '')::regclass) x),
       (SELECT $(digest) FROM (SELECT blk, lower, upper, special, flags  -- (prune_xid: the xids differ)
               FROM headers_of(NULLIF(:'r', '')::regclass)) x),
       (SELECT $(digest) FROM pg_visibility_map(NULLIF(:'r', '')::regclass) x),
       (SELECT $(digest) FROM pg_freespace(NULLIF(:'r', '')::regclass) x);
SELECT pg_current_wal_insert_lsn() AS start \gset
SET fastcopy.page_path = $([ $s = copy ] && echo DEFAULT || echo $s);
SET client_min_messages = debug1;
BEGIN;
-- (the backend's pending counts of earlier transactions, not flushed yet within a second, are
-- in the function's result too: the load's are the difference)
SELECT coalesce(pg_stat_get_xact_tuples_inserted(to_regclass('$t')), 0) AS inserted0 \gset
$load;
SELECT pg_stat_get_xact_tuples_inserted('$t'::regclass) - :inserted0 AS inserted \gset
COMMIT;
SET client_min_messages = warning;
SELECT pg_logical_emit_message(true, 'fastcopy', 'end') AS stop \gset
SELECT wal_flushed(:'stop') \g /dev/null
SELECT count(*) FROM $t \g /dev/null
SELECT 'pages', (SELECT $(digest) FROM pages_of('$t') x),
       'headers', (SELECT $(digest) FROM headers_of('$t') x),
       'vm', (SELECT $(digest) FROM pg_visibility_map('$t') x),
       'fsm', (SELECT $(digest) FROM pg_freespace('$t') x),
       'wal', (SELECT $(digest) FROM (SELECT resource_manager, record_type, record_length,
                      main_data_length, fpi_length, description
               FROM pg_get_wal_records_info(:'start', :'stop')
               WHERE block_ref LIKE '%/' || pg_relation_filenode('$t') || ' %' ORDER BY start_lsn) x),
       'walrecords', (SELECT count(*) FROM pg_get_wal_records_info(:'start', :'stop')
               WHERE block_ref LIKE '%/' || pg_relation_filenode('$t') || ' %'),
       'inserted', :inserted,
       'heapcheck', (SELECT count(*) FROM verify_heapam('$t')),
       'rows', (SELECT $(digest) FROM (SELECT * FROM $t ORDER BY 1, 2, 3) x);
SELECT 'indexcheck', count(bt_index_check(i.indexrelid, true))
  FROM pg_index i WHERE i.indrelid = '$t'::regclass;
SQL
}

# The server's COPY for a LOAD of fastcopy.load(TABLE, FILE[, freeze => true]).
as_copy() {
  sed -e "s/SELECT fastcopy.load('\([^']*\)', '\([^']*\)')/COPY \1 FROM '\2'/" \
      -e "s/SELECT fastcopy.load('\([^']*\)', '\([^']*\)', freeze => true)/COPY \1 FROM '\2' WITH (FREEZE)/" <<<"$1"
}

# scenario LABEL DDL PRE LOAD [toast]: both sides, and the same load by the server's COPY (the
# pages of page_path off, where fastcopy forms the tuples and heap_multi_insert places them,
# are COPY's), then the checks.
scenario() {
  local label=$1 off on copy
  off=$(side off "$2" "$3" "$4")
  on=$(side on "$2" "$3" "$4")
  copy=$(side copy "$2" "$3" "$(as_copy "$4")")
  local o n c
  o=$(grep -E '^(before|pages) ' <<<"$off"); n=$(grep -E '^(before|pages) ' <<<"$on")
  c=$(grep -E '^(before|pages) ' <<<"$copy")
  check "pages $label: COPY leaves the same pages, headers, VM, FSM, WAL records, stats and rows as fastcopy" \
    '[ -n "$c" ] && [ "$c" = "$o" ] && grep -q " heapcheck 0 " <<<"$c" && ! grep -q ERROR <<<"$copy"' \
    "copy: $copy
       off:  $off"
  local debug rows toasted visible reused uniform taken
  debug=$(grep -o 'fastcopy: [0-9]* rows of "pg_on" onto heap pages by the page path; to heap_multi_insert: [0-9]* batches with TOAST-size rows, [0-9]* from an all-visible page on; [0-9]* pages' <<<"$on")
  read -r rows toasted visible reused < <(sed -n 's/fastcopy: \([0-9]*\) rows.*insert: \([0-9]*\) batches.*rows, \([0-9]*\) from.* on; \([0-9]*\) pages/\1 \2 \3 \4/p' <<<"$debug")
  case "${5:-}" in
    toast) taken='[ "$toasted" -gt 0 ] && [ "$visible" = 0 ]' ;;
    visible) taken='[ "$toasted" = 0 ] && [ "$visible" -gt 0 ]' ;;
    reused) taken='[ "$toasted" = 0 ] && [ "$reused" -gt 0 ]' ;;
    *) taken='[ "$toasted" = 0 ] && [ "$visible" = 0 ]' ;;
  esac
  # tables of ints only: the reader forms their rows by a fixed plan, the writer puts them from
  # their data bytes
  uniform=$(sed -n 's/.*; \([0-9]*\) rows from the data bytes of tuples the reader formed.*/\1/p' <<<"$on" | tail -1)
  case "$label" in
    "ints ("*|"ints:"*|*", ints") taken="$taken"' && [ -n "$uniform" ] && [ "$uniform" -gt 0 ]' ;;
  esac
  taken='[ -n "$rows" ] && [ "$rows" -gt 0 ] && '"$taken"
  check "pages $label: the same table before; pages, headers, VM, FSM, WAL records, stats, rows as heap_multi_insert's; amcheck clean; ${rows:-?} rows by the page path, ${toasted:-?} batches with TOAST-size rows and ${visible:-?} from an all-visible page on to heap_multi_insert, ${reused:-?} pages with unused line pointers, ${uniform:-?} rows from their data bytes" \
    '[ -n "$o" ] && [ "$o" = "$n" ] && grep -q " heapcheck 0 " <<<"$n" && ! grep -q ERROR <<<"$off$on" && grep -q "^indexcheck" <<<"$on" && '"$taken" \
    "off: $off
       on:  $on"
}

scenario "ints (a int, b int, c int)" \
  "CREATE TABLE %T (a int, b int, c int)" "SELECT 1" \
  "SELECT fastcopy.load('%T', '$data-ints')"
scenario "int2, int8, int4 with NULLs (a null bitmap in every 13th row)" \
  "CREATE TABLE %T (a int2, b int8, c int4)" "SELECT 1" \
  "SELECT fastcopy.load('%T', '$data-widths')"
scenario "ints/text/NULLs, logged" \
  "CREATE TABLE %T (a int, b text, c bigint, d bool)" "SELECT 1" \
  "SELECT fastcopy.load('%T', '$data-mixed')"
scenario "FREEZE into a table created in the transaction" \
  "SELECT 1" "SELECT 1" \
  "CREATE TABLE %T (a int, b text, c bigint, d bool); SELECT fastcopy.load('%T', '$data-mixed', freeze => true)"
scenario "FREEZE after TRUNCATE in the transaction, ints" \
  "CREATE TABLE %T (a int, b int, c int)" "INSERT INTO %T VALUES (1, 2, 3)" \
  "TRUNCATE %T; SELECT fastcopy.load('%T', '$data-ints', freeze => true)"
scenario "fillfactor 70" \
  "CREATE TABLE %T (a int, b text, c bigint, d bool) WITH (fillfactor = 70)" "SELECT 1" \
  "SELECT fastcopy.load('%T', '$data-mixed')"
scenario "rows, deletions and VACUUM before (free space map, unused line pointers, all-visible pages)" \
  "CREATE TABLE %T (a int, b text, c bigint, d bool)" \
  "SELECT fastcopy.load('%T', '$data-mixed'); DELETE FROM %T WHERE a % 5 = 0 OR a BETWEEN 20000 AND 30000; VACUUM %T" \
  "SELECT fastcopy.load('%T', '$data-mixed')" visible
scenario "all-visible pages with room, then a load (visibility map bits cleared)" \
  "CREATE TABLE %T (a int, b text, c bigint, d bool) WITH (fillfactor = 50)" \
  "INSERT INTO %T SELECT g, 'v', g, true FROM generate_series(1, 3000) g; VACUUM (FREEZE) %T; ALTER TABLE %T SET (fillfactor = 100)" \
  "SELECT fastcopy.load('%T', '$data-mixed')" visible
scenario "pages with unused line pointers that are not all-visible (VACUUM, then updates)" \
  "CREATE TABLE %T (a int, b text, c bigint, d bool)" \
  "SELECT fastcopy.load('%T', '$data-mixed'); DELETE FROM %T WHERE a % 2 = 0; VACUUM %T; UPDATE %T SET c = c + 1 WHERE a % 40 = 1" \
  "SELECT fastcopy.load('%T', '$data-mixed')" reused
# the same with rows the reader forms by a fixed plan (kept as data bytes by the page writer:
# onto pages with unused line pointers through PageAddItemExtended, and handed to
# heap_multi_insert at an all-visible page)
scenario "ints: rows, deletions and VACUUM before (free space map, unused line pointers, all-visible pages)" \
  "CREATE TABLE %T (a int, b int, c int)" \
  "SELECT fastcopy.load('%T', '$data-ints'); DELETE FROM %T WHERE a % 5 = 0 OR a BETWEEN 20000 AND 30000; VACUUM %T" \
  "SELECT fastcopy.load('%T', '$data-ints')" visible
scenario "ints: pages with unused line pointers that are not all-visible (VACUUM, then updates)" \
  "CREATE TABLE %T (a int, b int, c int)" \
  "SELECT fastcopy.load('%T', '$data-ints'); DELETE FROM %T WHERE a % 2 = 0; VACUUM %T; UPDATE %T SET c = c + 1 WHERE a % 40 = 1" \
  "SELECT fastcopy.load('%T', '$data-ints')" reused
# reader_formed LABEL FILE: loading FILE again into the last scenario's table, the reader formed
# its tuples (the DEBUG1 line that says so)
reader_formed() {
  local formed
  formed=$(psql -c "SET client_min_messages = debug1" -c "TRUNCATE pg_on" \
                -c "SELECT fastcopy.load('pg_on', '$2')" 2>&1)
  check "$1: the reader formed the tuples (its DEBUG1 line)" \
    'grep -q "the reader forms the tuples of \"pg_on\"" <<<"$formed"' "$formed"
}
scenario "int, char(n) of three lengths (a pgbench_accounts-like filler), bigint: tuples the reader forms" \
  "CREATE TABLE %T (a int, c char(6), b bigint, d char, e char(84))" "SELECT 1" \
  "SELECT fastcopy.load('%T', '$data-chars')"
reader_formed "char(n) columns" "$data-chars"
scenario "int, text of 0 to 139 bytes, bigint, varchar(12) (over 12 bytes: the input function's), char(130): tuples of their own layout the reader forms" \
  "CREATE TABLE %T (a int, t text, b bigint, v varchar(12), c char(130))" "SELECT 1" \
  "SELECT fastcopy.load('%T', '$data-texts')"
reader_formed "text columns" "$data-texts"
scenario "a primary key and an index" \
  "CREATE TABLE %T (a int PRIMARY KEY, b text, c bigint, d bool); CREATE INDEX ON %T (c)" "SELECT 1" \
  "SELECT fastcopy.load('%T', '$data-mixed')"
scenario "UNLOGGED" \
  "CREATE UNLOGGED TABLE %T (a int, b int, c int)" "SELECT 1" \
  "SELECT fastcopy.load('%T', '$data-ints')"
scenario "TEMP" \
  "CREATE TEMP TABLE %T (a int, b text, c bigint, d bool)" "SELECT 1" \
  "SELECT fastcopy.load('%T', '$data-mixed')"
scenario "TOAST-size values (their batches go to heap_multi_insert)" \
  "CREATE TABLE %T (a int, b text, c int)" "SELECT 1" \
  "SELECT fastcopy.load('%T', '$data-toast')" toast

# wal_level = logical: the records carry the new tuples (and keep them next to a page image)
# for logical decoding, as heap_multi_insert's; test_decoding shows the same changes
restart() { scripts/cluster.sh stop "$m" >/dev/null; scripts/cluster.sh start "$m" >/dev/null; }
psql -c "ALTER SYSTEM SET wal_level = logical" >/dev/null
restart
check "wal_level is logical for the next checks" '[ "$(psql -c "SHOW wal_level")" = logical ]'
scenario "ints/text/NULLs under wal_level = logical" \
  "CREATE TABLE %T (a int, b text, c bigint, d bool)" "SELECT 1" \
  "SELECT fastcopy.load('%T', '$data-mixed')"
scenario "rows, deletions and VACUUM before, under wal_level = logical (page images)" \
  "CREATE TABLE %T (a int, b text, c bigint, d bool)" \
  "SELECT fastcopy.load('%T', '$data-mixed'); DELETE FROM %T WHERE a % 2 = 0; VACUUM %T; UPDATE %T SET c = c + 1 WHERE a % 40 = 1" \
  "SELECT fastcopy.load('%T', '$data-mixed')" reused
psql -c "SELECT pg_drop_replication_slot('fastcopy_pages')" >/dev/null 2>&1
psql -c "SELECT pg_create_logical_replication_slot('fastcopy_pages', 'test_decoding')" >/dev/null
decoded() {
  local s=$1 file=$2 cols=$3
  psql -c "DROP TABLE IF EXISTS pg_$s" -c "CREATE TABLE pg_$s $cols" >/dev/null
  psql -c "SELECT count(*) FROM pg_logical_slot_get_changes('fastcopy_pages', NULL, NULL)" >/dev/null
  psql -c "SET fastcopy.page_path = $s" -c "SELECT fastcopy.load('pg_$s', '$file')" >/dev/null
  psql -c "SELECT data FROM pg_logical_slot_get_changes('fastcopy_pages', NULL, NULL, 'include-xids', '0')" |
    sed "s/pg_$s/pg_T/"
}
for f in mixed toast; do
  cols="(a int, b text, c bigint, d bool)"; [ $f = toast ] && cols="(a int, b text, c int)"
  off=$(decoded off "$data-$f" "$cols"); on=$(decoded on "$data-$f" "$cols")
  inserts=$(grep -c '^table public.pg_T: INSERT: a\[integer\]' <<<"$on")
  check "pages logical decoding ($f): test_decoding shows the same $inserts INSERTs, in order, with their values" \
    '[ "$inserts" -gt 1000 ] && [ "$off" = "$on" ] && ! grep -q "no-tuple-data" <<<"$on"' \
    "$(diff <(echo "$off") <(echo "$on") | head -5)"
done
psql -c "SELECT pg_drop_replication_slot('fastcopy_pages')" >/dev/null
psql -c "ALTER SYSTEM RESET wal_level" -c "ALTER SYSTEM RESET autovacuum" >/dev/null
restart

psql -c "DROP TABLE IF EXISTS pg_off, pg_on, pg_copy" >/dev/null 2>&1
rm -f "$data"-*
exit $fail
