#!/usr/bin/env bash
# Multi-session behaviour of fastcopy.load that #[pg_test] cannot show (each #[pg_test] is one
# rolled-back transaction in one session): progress seen from another session, cancel and
# statement_timeout stopping a long load promptly, two sessions loading one table at once.
# Runs against the build `cargo pgrx test pgNN` just installed, on the throwaway cluster.
#   pgrx-tests/scenarios/load.sh 17
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
. scripts/scenario_lib.sh
scripts/cluster.sh start "$m" >/dev/null
data="$FASTCOPY_RUN/sessions-$m.copy"
psql -v ON_ERROR_STOP=1 <<SQL
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fastcopy CASCADE;
CREATE EXTENSION fastcopy;
DROP TABLE IF EXISTS s_load, s_copy;
CREATE TABLE s_load (a int, b int, c text);
CREATE TABLE s_copy (a int, b int, c text);
COPY (SELECT g, g % 1000, 'row ' || g FROM generate_series(1, 1500000) g) TO '$data';
SQL

# The first row QUERY returns, asked every 10 ms until it returns one (empty after 5 s).
poll() {
  local out=""
  for _ in $(seq 1 500); do
    out=$(psql -c "$1")
    [ -n "$out" ] && break
    sleep 0.01
  done
  echo "$out"
}

# 1. progress is visible from another session while a load runs
psql -c "SELECT fastcopy.load('s_load', '$data')" >/dev/null &
seen=$(poll "SELECT tuples_processed FROM pg_stat_progress_copy WHERE relid = 's_load'::regclass AND command = 'COPY FROM' AND type = 'FILE' AND bytes_total > 0 AND tuples_processed > 0")
wait
check "pg_stat_progress_copy shows the running load (tuples_processed=$seen)" '[ -n "$seen" ]'

# 2. statement_timeout stops a long load within a fraction of a second, nothing stays (four
#    copies of the data: longer than the timeout in any build)
big="$FASTCOPY_RUN/sessions-$m-big.copy"
cat "$data" "$data" "$data" "$data" > "$big"
psql -c "TRUNCATE s_load"
t0=$(date +%s%N)
err=$(psql -c "SET statement_timeout = '200ms'" -c "SELECT fastcopy.load('s_load', '$big')" 2>&1 >/dev/null)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "statement_timeout cancels the load ($ms ms): $err" '[[ "$err" == *"statement timeout"* ]] && [ "$ms" -lt 1500 ]'
check "nothing of the timed-out load is visible" '[ "$(psql -c "SELECT count(*) FROM s_load")" = 0 ]'

# 3. pg_cancel_backend stops it promptly too: sent once the load is seen running (its
#    progress row), on the four copies
psql -c "SELECT fastcopy.load('s_load', '$big')" > "$FASTCOPY_RUN/cancel-$m.out" 2>&1 &
pid=$(poll "SELECT pid FROM pg_stat_progress_copy WHERE relid = 's_load'::regclass AND tuples_processed > 0")
t0=$(date +%s%N)
psql -c "SELECT pg_cancel_backend($pid)" >/dev/null
wait
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
rm -f "$big"
check "pg_cancel_backend stops the load ($ms ms)" 'grep -q "canceling statement due to user request" "$FASTCOPY_RUN/cancel-$m.out" && [ "$ms" -lt 1500 ]'

# 4. two sessions load one table at once (RowExclusiveLock): every row once
psql -c "TRUNCATE s_load" -c "TRUNCATE s_copy"
psql -c "SELECT fastcopy.load('s_load', '$data')" >/dev/null & p1=$!
psql -c "SELECT fastcopy.load('s_load', '$data')" >/dev/null & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
psql -c "COPY s_copy FROM '$data'" -c "COPY s_copy FROM '$data'"
same=$(psql -c "SELECT NOT EXISTS (SELECT * FROM s_load EXCEPT ALL SELECT * FROM s_copy)
                AND NOT EXISTS (SELECT * FROM s_copy EXCEPT ALL SELECT * FROM s_load)")
check "two concurrent loads: both succeed, rows equal two COPYs" '[ $r1 = 0 ] && [ $r2 = 0 ] && [ "$same" = t ]'

# 5. rows skipped by on_error 'ignore' show in pg_stat_progress_copy while the load runs:
#    tuples_skipped on 17 (as COPY's ON_ERROR), tuples_excluded on 15/16 (no skipped column)
bad="$FASTCOPY_RUN/sessions-$m-bad.copy"
psql -c "TRUNCATE s_load" \
     -c "COPY (SELECT CASE WHEN g % 10 = 0 THEN 'x' || g ELSE g::text END, g % 1000, 'row ' || g
               FROM generate_series(1, 1500000) g) TO '$bad'"
if [ "$m" -ge 17 ]; then col=tuples_skipped; else col=tuples_excluded; fi
psql -c "SELECT rows_skipped FROM fastcopy.load('s_load', '$bad', on_error => 'ignore')" > "$FASTCOPY_RUN/skip-$m.out" 2>/dev/null &
seen=""
for i in $(seq 1 200); do
  seen=$(psql -c "SELECT $col FROM pg_stat_progress_copy WHERE relid = 's_load'::regclass AND $col > 0")
  [ -n "$seen" ] && break
  sleep 0.02
done
wait
check "pg_stat_progress_copy.$col counts skipped rows during the load ($seen), 150000 in the end ($(cat "$FASTCOPY_RUN/skip-$m.out"))" \
  '[ -n "$seen" ] && [ "$(cat "$FASTCOPY_RUN/skip-$m.out")" = 150000 ]'
rm -f "$bad" "$FASTCOPY_RUN/skip-$m.out"

psql -c "DROP TABLE s_load, s_copy"
rm -f "$data" "$FASTCOPY_RUN/cancel-$m.out"
exit $fail
