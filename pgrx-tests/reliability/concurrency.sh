#!/usr/bin/env bash
# Concurrency: for a bounded time, 4 sessions load one LOGGED table with a
# primary key and a second index (each with its own extension strategy, a load per
# transaction), 2 sessions read it (count by a sequential scan, count by an index scan) and a
# session VACUUMs it; meanwhile a fifth loader is cancelled a third of the way into a big load
# and a sixth loads twice in one transaction and rolls it back. Then: no session saw an
# error, every reader saw only whole loads (a count that is the rows before plus whole loads),
# every committed load is in the table exactly once, none of the cancelled or rolled back rows
# is, and amcheck / pg_visibility / the FSM are clean. One line per check.
#   pgrx-tests/reliability/concurrency.sh 17 [quick]
# quick: 15 seconds instead of 60 (what `make test` runs).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
quick=${2:-}
. scripts/scenario_lib.sh
. pgrx-tests/reliability/lib.sh
scripts/cluster.sh start "$m" >/dev/null

seconds=60; [ -n "$quick" ] && seconds=15
per_load=20000     # rows per committed load
big=1500000        # the load that is cancelled
work="$FASTCOPY_RUN/concurrency-$m"
rm -rf "$work"; mkdir -p "$work"; chmod 777 "$work"
fresh_extensions || { echo "FAIL concurrency setup"; exit 1; }
psql -v ON_ERROR_STOP=1 >/dev/null <<SQL || { echo "FAIL concurrency setup"; exit 1; }
SET client_min_messages = warning;
DROP TABLE IF EXISTS cc;
CREATE TABLE cc (a bigint PRIMARY KEY, b int, c text);
CREATE INDEX cc_b ON cc (b);
INSERT INTO cc SELECT g, g % 97, 'before ' || g FROM generate_series(1, 1000) g;
COPY (SELECT -9000000000 - g, g % 97, 'cancelled ' || g FROM generate_series(1, $big) g) TO '$work/big.txt';
-- one committed load: keys from \$1 on
CREATE OR REPLACE FUNCTION cc_rows(first bigint, n int) RETURNS bytea LANGUAGE sql AS
  \$\$ SELECT convert_to(string_agg((first + g) || E'\t' || (g % 97) || E'\t' || 'row ' || (first + g) || repeat('y', g % 30), E'\n') || E'\n', 'UTF8')
      FROM generate_series(0, n - 1) g \$\$;
SQL
end=$(( $(date +%s) + seconds ))

# loader I STRATEGY: one load per transaction until the end; each committed load's first key
# goes to loader-I.ok, any error to loader-I.err
loader() {
  local i=$1 strategy=$2 r=0 first
  while [ "$(date +%s)" -lt "$end" ]; do
    first=$(( (i * 100000 + r) * 100000 ))
    if psql -c "SET fastcopy.extend_strategy = $strategy" \
            -c "SELECT fastcopy.load_data('cc', cc_rows($first, $per_load))" >/dev/null 2>>"$work/loader-$i.err"; then
      echo "$first" >>"$work/loader-$i.ok"
    fi
    r=$((r + 1))
  done
}
# reader I QUERY: the query until the end; each result to reader-I.out
reader() {
  local i=$1 query=$2
  while [ "$(date +%s)" -lt "$end" ]; do
    psql -c "SET enable_seqscan = ${3:-on}" -c "SET enable_bitmapscan = ${3:-on}" -c "$query" >>"$work/reader-$i.out" 2>>"$work/reader-$i.err"
  done
}
vacuumer() {
  local n=0
  while [ "$(date +%s)" -lt "$end" ]; do
    psql -c "VACUUM cc" 2>>"$work/vacuum.err" && n=$((n + 1))
    sleep 0.5
  done
  echo "$n" >"$work/vacuum.count"
}

pids=()
i=1
for strategy in auto fixed sticky server; do
  loader "$i" "$strategy" & pids+=($!); i=$((i + 1))
done
reader 1 "SELECT count(*) FROM cc" & pids+=($!)
reader 2 "SELECT count(*) FROM cc WHERE b >= 0" off & pids+=($!)
vacuumer & pids+=($!)

# the cancelled loader: a big load, cancelled once a third of it is in
sleep 2
psql -c "SELECT fastcopy.load('cc', '$work/big.txt')" >/dev/null 2>"$work/cancel.err" &
cancel_client=$!
got=""
for _ in $(seq 1 600); do
  got=$(psql -F ' ' -c "SELECT pid, tuples_processed FROM pg_stat_progress_copy WHERE relid = 'cc'::regclass AND tuples_processed > $per_load" 2>/dev/null | head -1)
  if [ -n "$got" ] && [ "${got#* }" -ge $((big / 3)) ]; then
    psql -c "SELECT pg_cancel_backend(${got% *})" >/dev/null
    break
  fi
  sleep 0.05
done
wait $cancel_client
cancelled_at=${got#* }
# the rolled back loader: two loads in one transaction, then ROLLBACK
psql -v ON_ERROR_STOP=1 >/dev/null 2>"$work/rollback.err" <<SQL
BEGIN;
SELECT fastcopy.load_data('cc', cc_rows(-8000000000, $per_load));
SET LOCAL fastcopy.extend_strategy = fixed;
SELECT fastcopy.load_data('cc', cc_rows(-8100000000, $per_load));
SELECT pg_sleep(1);
ROLLBACK;
SQL
rolled_back=$?
for p in "${pids[@]}"; do wait "$p"; done

loads=$(cat "$work"/loader-*.ok 2>/dev/null | wc -l)
errors=$(cat "$work"/loader-*.err "$work"/reader-*.err "$work/vacuum.err" 2>/dev/null | grep -c . )
check "concurrency: 4 loaders committed $loads loads of $per_load rows in ${seconds} s with 2 readers and $(cat "$work/vacuum.count") VACUUMs, errors: $errors" \
  '[ "$loads" -ge 4 ] && [ "$errors" -eq 0 ]' "$(cat "$work"/*.err 2>/dev/null | head -5)"
samples=$(cat "$work"/reader-*.out | wc -l)
partial=$(awk -v n=$per_load '($1 - 1000) % n != 0' "$work"/reader-*.out | wc -l)
check "concurrency: the readers saw $samples counts, each the rows before plus whole loads ($partial not)" \
  '[ "$samples" -ge 2 ] && [ "$partial" -eq 0 ]' "$(awk -v n=$per_load '($1 - 1000) % n != 0' "$work"/reader-*.out | head -3)"
cat "$work"/loader-*.ok | sort -n >"$work/committed"
# every committed load exactly once, nothing else but the rows before
got_rows=$(psql -c "SELECT count(*) || ':' || count(DISTINCT a) FROM cc")
expect_rows="$((1000 + loads * per_load)):$((1000 + loads * per_load))"
missing=$(psql -c "CREATE TEMP TABLE ok (first bigint)" -c "\\copy ok FROM '$work/committed'" \
  -c "SELECT count(*) FROM ok WHERE (SELECT count(*) FROM cc WHERE a >= first AND a < first + $per_load) <> $per_load")
stray=$(psql -c "CREATE TEMP TABLE ok (first bigint)" -c "\\copy ok FROM '$work/committed'" \
  -c "SELECT count(*) FROM cc WHERE a > 1000 AND NOT EXISTS (SELECT FROM ok WHERE cc.a >= first AND cc.a < first + $per_load)")
check "concurrency: the table holds the rows before and each committed load exactly once (rows:distinct $got_rows), $missing loads incomplete, $stray rows of no committed load" \
  '[ "$got_rows" = "$expect_rows" ] && [ "$missing" = 0 ] && [ "$stray" = 0 ]' "expected $expect_rows"
cancel_msg=$(grep -o 'ERROR:.*' "$work/cancel.err")
gone=$(psql -c "SELECT count(*) FROM cc WHERE a < 0")
check "concurrency: a load cancelled at ${cancelled_at:-?} of $big rows ($cancel_msg) and a rolled back transaction of two loads (rc $rolled_back) left none of their rows ($gone)" \
  '[ -n "$cancelled_at" ] && [ "$cancel_msg" = "ERROR:  canceling statement due to user request" ] && [ "$rolled_back" = 0 ] && [ "$gone" = 0 ]'
problems=$(amcheck_problems cc)
psql -c "VACUUM cc" >/dev/null
after_vacuum=$(amcheck_problems cc)
check "concurrency: amcheck/pg_visibility/FSM after the run: $problems, after a last VACUUM: $after_vacuum" \
  '[ "$problems" = clean ] && [ "$after_vacuum" = clean ]'
psql -c "DROP TABLE cc" -c "DROP FUNCTION cc_rows" >/dev/null
rm -rf "$work"
exit $fail
