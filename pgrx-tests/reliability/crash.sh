#!/usr/bin/env bash
# Crash mid-load: a load into a LOGGED table with a primary key and a second
# index is killed part-way (`kill -9` of the loading backend, or an immediate shutdown of the
# server), once per extension strategy and method, and once with freeze. After crash recovery
# the table must hold exactly what it held before the load, amcheck (verify_heapam,
# bt_index_check with heapallindexed) and pg_visibility find nothing, and a new load into the
# same table must equal COPY's into a twin. One line per scenario.
#   pgrx-tests/reliability/crash.sh 17 [quick]
# quick: two scenarios with a smaller load (what `make test` runs).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
quick=${2:-}
. scripts/scenario_lib.sh
. pgrx-tests/reliability/lib.sh
scripts/cluster.sh start "$m" >/dev/null

rows=2000000; [ -n "$quick" ] && rows=400000
data="$FASTCOPY_RUN/crash-$m.txt"
fresh_extensions || { echo "FAIL crash setup"; exit 1; }
psql -v ON_ERROR_STOP=1 >/dev/null <<SQL || { echo "FAIL crash setup"; exit 1; }
SET client_min_messages = warning;
DROP TABLE IF EXISTS cr, cr_copy;
COPY (SELECT g, g % 1009, 'row ' || g || repeat('x', g % 40) FROM generate_series(1001, 1000 + $rows) g) TO '$data';
CREATE TABLE cr (a int PRIMARY KEY, b int, c text);
CREATE INDEX cr_b ON cr (b);
INSERT INTO cr SELECT g, g % 1009, 'before ' || g FROM generate_series(1, 1000) g;
-- the twin: the rows before the load, then COPY's load of the file
CREATE TABLE cr_copy (LIKE cr INCLUDING ALL);
INSERT INTO cr_copy SELECT * FROM cr;
COPY cr_copy FROM '$data';
CHECKPOINT;
SQL
before=$(table_sum cr)

# crash MODE SETTINGS LOAD-SQL LABEL: the load killed once a third of it is in
crash() {
  local mode=$1 settings=$2 load=$3 label=$4 pid got after problems reload
  psql -c "SELECT pg_stat_reset_shared('bgwriter')" >/dev/null 2>&1
  PGOPTIONS="" psql -c "$settings" -c "$load" >/dev/null 2>&1 &
  local client=$!
  pid=""
  for _ in $(seq 1 600); do
    got=$(psql -F ' ' -c "SELECT pid, tuples_processed FROM pg_stat_progress_copy WHERE relid = 'cr'::regclass" 2>/dev/null)
    if [ -n "$got" ] && [ "${got#* }" -ge $((rows / 3)) ]; then pid=${got% *}; break; fi
    sleep 0.05
  done
  if [ -z "$pid" ]; then
    wait $client
    check "crash $mode $label: the load was caught running" false
    return
  fi
  case "$mode" in
    kill-9) kill -9 "$pid" ;;
    immediate) as_owner "$bindir/pg_ctl" -D "$FASTCOPY_RUN/data-$m" -m immediate stop >/dev/null ;;
  esac
  wait $client 2>/dev/null
  scripts/cluster.sh start "$m" >/dev/null
  wait_ready
  after=$(table_sum cr)
  problems=$(amcheck_problems cr)
  # the next load into the same table equals COPY's into its twin
  psql -c "$settings" -c "SELECT fastcopy.load('cr', '$data')" >/dev/null
  reload=$(same_rows cr cr_copy)
  local more; more=$(amcheck_problems cr)
  check "crash $mode $label at ${got#* } of $rows rows: the table as before ($after), amcheck/pg_visibility: $problems, the next load as COPY's: $reload ($more)" \
    '[ "$after" = "$before" ] && [ "$problems" = clean ] && [ "$reload" = same ] && [ "$more" = clean ]' \
    "before: $before"
  # back to the state before the load
  psql -c "DELETE FROM cr WHERE a > 1000" -c "VACUUM cr" -c "CHECKPOINT" >/dev/null
}

methods="zero"; [ "$m" -ge 16 ] && methods="zero fallocate"
if [ -n "$quick" ]; then
  crash kill-9 "SET fastcopy.extend_strategy = fixed" "SELECT fastcopy.load('cr', '$data')" "fixed"
  crash immediate "SET fastcopy.extend_strategy = sticky" "SELECT fastcopy.load('cr', '$data')" "sticky"
else
  for mode in kill-9 immediate; do
    crash "$mode" "SET fastcopy.extend_strategy = server" "SELECT fastcopy.load('cr', '$data')" "server"
    # the default (on 15: pages added ahead for the page path, kept out of the free space map)
    crash "$mode" "SET fastcopy.extend_strategy = auto" "SELECT fastcopy.load('cr', '$data')" "auto"
    for s in fixed sticky; do
      for meth in $methods; do
        crash "$mode" "SET fastcopy.extend_strategy = $s; SET fastcopy.extend_method = $meth" \
          "SELECT fastcopy.load('cr', '$data')" "$s/$meth"
      done
    done
    # freeze: the table truncated in the load's transaction; the crash undoes both
    crash "$mode" "SET fastcopy.extend_strategy = fixed" \
      "BEGIN; TRUNCATE cr; SELECT fastcopy.load('cr', '$data', freeze => true); COMMIT" "freeze"
  done
fi
psql -c "DROP TABLE cr, cr_copy" >/dev/null
rm -f "$data"
exit $fail
