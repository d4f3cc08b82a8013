#!/usr/bin/env bash
# fastcopy.extend_strategy / extend_pages / extend_method, in committed tables (a table
# created or truncated in the loading transaction is filled without the free space map, which
# a #[pg_test] cannot avoid): every strategy loads what COPY loads, the counters follow the
# strategy, pages extended but not filled are reused, concurrent loads stay correct, `auto`
# (the default) alone leaves the table page for page as COPY does (on 15 from pages it added
# ahead, where the heap would add one) and on 15 extends ahead of the heap once another
# session extends it too (on 16+ it is `server`), and amcheck finds
# nothing wrong with the heap.
#   pgrx-tests/scenarios/extend.sh 17
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
. scripts/scenario_lib.sh
scripts/cluster.sh start "$m" >/dev/null
data="$FASTCOPY_RUN/extend-$m.copy"
psql -v ON_ERROR_STOP=1 <<SQL
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fastcopy CASCADE;
CREATE EXTENSION fastcopy;
CREATE EXTENSION IF NOT EXISTS amcheck;
DROP TABLE IF EXISTS x_copy, x_fast;
-- (no autovacuum: its visibility map and free space map extensions take the table's
-- extension lock, which extend_strategy auto would see as another session extending it)
CREATE TABLE x_copy (a int, b int, c text) WITH (autovacuum_enabled = false);
CREATE TABLE x_fast (a int, b int, c text) WITH (autovacuum_enabled = false);
COPY (SELECT g, g % 977, repeat('x', g % 50) FROM generate_series(1, 300000) g) TO '$data';
COPY x_copy FROM '$data';
SQL
same() {
  psql -c "SELECT NOT EXISTS (SELECT * FROM x_copy EXCEPT ALL SELECT * FROM x_fast)
           AND NOT EXISTS (SELECT * FROM x_fast EXCEPT ALL SELECT * FROM x_copy)"
}
# every row at the same place (ctid) in both tables
same_pages() {
  psql -c "SELECT NOT EXISTS (SELECT ctid, * FROM x_copy EXCEPT ALL SELECT ctid, * FROM x_fast)
           AND NOT EXISTS (SELECT ctid, * FROM x_fast EXCEPT ALL SELECT ctid, * FROM x_copy)"
}
heap_ok() { [ "$(psql -c "SELECT count(*) FROM verify_heapam('x_fast')")" = 0 ]; }

methods="auto zero"; [ "$m" -ge 16 ] && methods="auto zero fallocate"
for strategy in auto server fixed sticky; do
  for method in $methods; do
    psql -c "TRUNCATE x_fast"
    r=$(psql -F ' ' -c "SET fastcopy.extend_strategy = $strategy" -c "SET fastcopy.extend_method = $method" \
             -c "SET fastcopy.extend_pages = 32" \
             -c "SELECT pages_extended, extend_calls FROM fastcopy.load('x_fast', '$data')")
    pages=${r% *}; calls=${r#* }
    what="$strategy/$method: pages_extended=$pages extend_calls=$calls"
    case "$strategy" in
      server) rule='[ "$pages" = 0 ] && [ "$calls" = 0 ]' ;;
      # alone: the same size as under COPY, every row on the page COPY puts it on; 16+: the
      # heap extends; 15: the page path takes, where the heap would extend by one page, the
      # next of a range it added ahead
      auto) rule='[ "$(psql -c "SELECT pg_relation_size('"'x_fast'"') = pg_relation_size('"'x_copy'"')")" = t ] && [ "$(same_pages)" = t ]'
            if [ "$m" -ge 16 ]; then rule="$rule"' && [ "$pages" = 0 ] && [ "$calls" = 0 ]'; else rule="$rule"' && [ "$pages" -gt 0 ]'; fi ;;
      fixed)  rule='[ "$pages" -gt 0 ] && [ $((pages % 32)) = 0 ]' ;;
      sticky) rule='[ "$pages" -gt 0 ]' ;;
    esac
    if [ "$strategy" != server ] && [ "$strategy" != auto ] && [ "$m" -ge 16 ]; then
      case "$method" in
        zero) rule="$rule"' && [ "$calls" -ge $(( (pages + 7) / 8 )) ]' ;;       # no call above 8 blocks
        fallocate) rule="$rule"' && [ "$calls" -le $(( pages / 9 )) ]' ;;         # no call below 9 blocks
      esac
    fi
    check "$what: rows equal COPY's, counters follow the strategy" "[ \"\$(same)\" = t ] && $rule && heap_ok"
  done
done

# pages extended but not filled stay usable: a big fixed step, then plain INSERTs fill them
psql -c "TRUNCATE x_fast"
psql -c "SET fastcopy.extend_strategy = fixed" -c "SET fastcopy.extend_pages = 2000" \
     -c "SELECT fastcopy.load('x_fast', '$data')" >/dev/null
size1=$(psql -c "SELECT pg_relation_size('x_fast')")
psql -c "INSERT INTO x_fast SELECT * FROM x_copy LIMIT 100000" >/dev/null
size2=$(psql -c "SELECT pg_relation_size('x_fast')")
check "unfilled pages are reused by later inserts (size $size1 -> $size2)" '[ "$size1" = "$size2" ]'

# two sessions at once, under each strategy: every row once, heap intact
for strategy in auto server fixed sticky; do
  psql -c "TRUNCATE x_fast"
  set_s="SET fastcopy.extend_strategy = $strategy"
  load_q="SELECT pages_extended FROM fastcopy.load('x_fast', '$data')"
  psql -c "$set_s" -c "$load_q" >"$data.1" & p1=$!
  psql -c "$set_s" -c "$load_q" >"$data.2" & p2=$!
  wait $p1; r1=$?; wait $p2; r2=$?
  n=$(psql -c "SELECT count(*) FROM x_fast")
  dup=$(psql -c "SELECT count(*) FROM (SELECT a FROM x_fast GROUP BY a HAVING count(*) <> 2) d")
  check "two concurrent loads, $strategy: $n rows, each twice" '[ $r1 = 0 ] && [ $r2 = 0 ] && [ "$n" = 600000 ] && [ "$dup" = 0 ] && heap_ok'
  if [ "$strategy" = auto ] && [ "$m" = 15 ]; then
    # each load takes ~1,500 pages one batch at a time; once one of them finds the other
    # extending (the extension lock held at a batch's start), it extends ahead: pages_extended.
    # Whether the two loads overlap depends on when psql starts them: up to 3 tries.
    ext=$(( $(cat "$data.1") + $(cat "$data.2") ))
    for _ in 1 2; do
      [ "$ext" -gt 0 ] && break
      psql -c "$set_s" -c "$load_q" >"$data.1" & p1=$!
      psql -c "$set_s" -c "$load_q" >"$data.2" & p2=$!
      wait $p1; wait $p2
      ext=$(( $(cat "$data.1") + $(cat "$data.2") ))
    done
    check "two concurrent loads, auto: $ext pages extended ahead of the heap" '[ "$ext" -gt 0 ] && heap_ok'
  elif [ "$strategy" = auto ]; then
    # 16+: auto is server (their heap extends many pages per lock itself)
    ext=$(( $(cat "$data.1") + $(cat "$data.2") ))
    check "two concurrent loads, auto on $m: the heap extends ($ext pages ahead)" '[ "$ext" = 0 ]'
  fi
done
rm -f "$data.1" "$data.2"

psql -c "DROP TABLE x_copy, x_fast"
rm -f "$data"
exit $fail
