#!/usr/bin/env bash
# `make test-reliability`: the reliability suite (pgrx-tests/reliability/) on each major
# (MAJOR=17 for one): crashes mid-load and recovery, a streaming standby and a point-in-time
# restore, concurrent loaders, readers and VACUUM, a disk that fills up, and the SQL-level
# differential fuzzer for FUZZ_SQL_SECONDS (default 120; `make fuzz-sql` runs it for 10
# minutes). Installs the release build into each major, prints one line per scenario, writes
# the figures to bench/results/reliability.md; exit 1 on any failure.
#   scripts/reliability.sh [majors...]          default: 15 16 17 18
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
scripts/setup.sh >/dev/null || { echo "setup failed"; exit 1; }
majors=(${@:-15 16 17 18})
out=bench/results/reliability.md
rows=()
fail=0
for m in "${majors[@]}"; do
  scripts/install.sh "$m" || { fail=1; continue; }
  scripts/cluster.sh stop "$m"
  for t in crash replication concurrency diskfull fuzz_sql; do
    t0=$(date +%s)
    args=(); [ "$t" = fuzz_sql ] && args=("${FUZZ_SQL_SECONDS:-120}")
    log=$(bash "pgrx-tests/reliability/$t.sh" "$m" "${args[@]}" 2>&1); rc=$?
    echo "$log"
    [ $rc -eq 0 ] || fail=1
    ok=$(grep -c '^ok' <<<"$log"); bad=$(grep -c '^FAIL' <<<"$log")
    crashes=$(grep -c '^ok   crash' <<<"$log")
    fuzzed=$(grep -o '[0-9]* mutated cases' <<<"$log" | awk '{print $1}')
    diffs=$(grep -o '[0-9]* differences' <<<"$log" | awk '{print $1}')
    rows+=("| $("$(pg_config_for "$m")" --version | awk '{print $2}') | $t | $ok | $bad | $crashes | ${fuzzed:--} | ${diffs:--} | $(( $(date +%s) - t0 )) s |")
  done
done
{
  echo "# Reliability suite (\`make test-reliability\`)"
  echo
  echo "Each scenario is one line of the scripts in \`pgrx-tests/reliability/\`: crash.sh (a load into a"
  echo "LOGGED table with a primary key and a second index killed a third of the way in, by \`kill -9\` of"
  echo "its backend and by an immediate shutdown, per extension strategy and method and with freeze; then"
  echo "the table as before, amcheck, pg_visibility and the FSM clean, the next load equal to COPY's) and"
  echo "replication.sh (a standby made by pg_basebackup -R: every load path replayed to equal tables with"
  echo "amcheck clean on the standby, the standby refusing a load as COPY; a point-in-time restore to"
  echo "just after a load), concurrency.sh (4 loaders, 2 readers and VACUUM for 60 s, a cancelled and a"
  echo "rolled back loader: whole loads only, each committed row once, amcheck clean), diskfull.sh (a"
  echo "tablespace on a 24 MB tmpfs filled by the load, per strategy and method: COPY's ERROR, nothing"
  echo "visible, then a load that fits), fuzz_sql.py (mutated corpus inputs, load_data vs COPY FROM STDIN"
  echo "for ${FUZZ_SQL_SECONDS:-120} s). Release build, $(date -u +%Y-%m-%d)."
  echo
  echo "| PostgreSQL | script | checks passed | failed | crashes survived | fuzz cases | differences | time |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} >"$out"
echo "wrote $out"
[ $fail -eq 0 ] && echo "test-reliability: PASSED" || echo "test-reliability: FAILED"
exit $fail
