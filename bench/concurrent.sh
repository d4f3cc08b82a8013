#!/usr/bin/env bash
# Concurrent loads and buffering: 1, 2 and 4 sessions loading one UNLOGGED
# (LOGGED=1: logged) table at once, 2,000,000 lotsaints rows in total (each session its
# share), COPY vs fastcopy.load under each extend_strategy/extend_method, and fastcopy under
# max_buffered_tuples 1000 / 5000 / 10000. Wall time until every session is done, median of
# ROUNDS (default 9), TRUNCATE and CHECKPOINT before each; every round runs each loader once,
# in a random order, and the ratios are medians of each round's ratio to COPY and to
# fastcopy's default (extend_strategy auto). Also fastcopy with fastcopy.page_path = off (rows
# through heap_multi_insert).
# Two ways to start the sessions (START): `connected` (the default): every session connects
# first and waits for an advisory lock, which is released once all of them wait; the time is
# from the release until every session is done (the loads only, as sessions of a pool or an
# ETL tool run them). `new`: every session is a new psql process started at time 0 (its
# process start, connection and backend start timed too, the same for every loader; with ~100
# ms loads that is ~5-10% of the time). QUICK=1: only COPY, fastcopy's default,
# extend_strategy server and page_path off, under both starts; OUT: the result file (default
# bench/results/concurrent.md).
#   bench/concurrent.sh [majors...]      default: 15 16 17 18
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-9}
out=${OUT:-bench/results/concurrent.md}
tmp=$(mktemp)
kind=UNLOGGED create="CREATE UNLOGGED TABLE"
[ -n "${LOGGED:-}" ] && kind=LOGGED create="CREATE TABLE"
# start_connected N SETTINGS STATEMENT: N sessions connect, run SETTINGS and wait for an
# advisory lock a holder session has; once all N wait, the holder lets them go at t0, and each
# runs STATEMENT on its file. Sets t0; returns when every session is done.
start_connected() {
  local n=$1 settings=$2 stmt=$3 k q waiting pids=()
  coproc HOLDER { scripts/cluster.sh psql "$m" -qAt -v ON_ERROR_STOP=1 2>&1; }
  echo "SELECT pg_advisory_lock(4242); SELECT 'held';" >&"${HOLDER[1]}"
  read -r _ <&"${HOLDER[0]}"
  read -r _ <&"${HOLDER[0]}"
  for k in $(seq 0 $((n - 1))); do
    q="${stmt//FILE/$FASTCOPY_RUN/conc-$n-$k.copy}"  # lotsaints_data "$k" "$n" wrote it
    scripts/cluster.sh psql "$m" -qAt -v ON_ERROR_STOP=1 -c "$settings SELECT pg_advisory_lock_shared(4242)" \
      -c "$q" >/dev/null & pids+=($!)
  done
  waiting=0
  until [ "$waiting" = "$n" ]; do
    sleep 0.01
    waiting=$(psql -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted")
  done
  t0=$(date +%s%N)
  echo "SELECT pg_advisory_unlock(4242);" >&"${HOLDER[1]}"
  for k in "${pids[@]}"; do wait "$k"; done
  echo '\q' >&"${HOLDER[1]}"
  wait "$HOLDER_PID" 2>/dev/null || true
}

for m in "${majors[@]}"; do
  use_major "$m"
  psql -c "DROP TABLE IF EXISTS conc_t" -c "$create conc_t (a int, b int, c int)" >/dev/null
  for n in 1 2 4; do
    for k in $(seq 0 $((n - 1))); do
      lotsaints_data "$k" "$n" >/dev/null
    done
  done
  version=$(psql -c "SHOW server_version")
  # label|settings|statement with FILE as the file placeholder
  configs=("COPY||COPY conc_t FROM 'FILE'"
           "fastcopy default (extend_strategy auto)||SELECT fastcopy.load('conc_t', 'FILE')"
           "fastcopy extend_strategy server|SET fastcopy.extend_strategy = server;|SELECT fastcopy.load('conc_t', 'FILE')"
           "fastcopy fixed/auto, 64 pages|SET fastcopy.extend_strategy = fixed;|SELECT fastcopy.load('conc_t', 'FILE')"
           "fastcopy fixed/zero, 64 pages|SET fastcopy.extend_strategy = fixed; SET fastcopy.extend_method = zero;|SELECT fastcopy.load('conc_t', 'FILE')"
           "fastcopy sticky/auto, 64 pages|SET fastcopy.extend_strategy = sticky;|SELECT fastcopy.load('conc_t', 'FILE')"
           "fastcopy max_buffered_tuples 5000|SET fastcopy.max_buffered_tuples = 5000; SET fastcopy.max_buffered_bytes = '1MB';|SELECT fastcopy.load('conc_t', 'FILE')"
           "fastcopy max_buffered_tuples 10000|SET fastcopy.max_buffered_tuples = 10000; SET fastcopy.max_buffered_bytes = '1MB';|SELECT fastcopy.load('conc_t', 'FILE')")
  configs+=("fastcopy page_path off|SET fastcopy.page_path = off;|SELECT fastcopy.load('conc_t', 'FILE')")
  # QUICK=1: COPY, fastcopy's default, extend_strategy server and the page path off only
  [ -n "${QUICK:-}" ] && configs=("${configs[0]}" "${configs[1]}" "${configs[2]}" "${configs[-1]}")
  if [ "$m" -ge 16 ] && [ -z "${QUICK:-}" ]; then
    configs+=("fastcopy fixed/fallocate, 64 pages|SET fastcopy.extend_strategy = fixed; SET fastcopy.extend_method = fallocate;|SELECT fastcopy.load('conc_t', 'FILE')")
  fi
  nc=${#configs[@]}
  starts=(${START:-connected})
  [ -n "${QUICK:-}" ] && [ -z "${START:-}" ] && starts=(connected new)
  for start in "${starts[@]}"; do
    declare -A ms=() vs_copy=() vs_server=()
    for n in 1 2 4; do
      for r in $(seq 0 "$rounds"); do
        # Every loader once per round, in a random order drawn anew every round (seeded by the
        # round): the two sides of every ratio are measured moments apart, and none always
        # follows the same other one.
        declare -A t=()
        for i in $(random_order "$nc" "$n.$r"); do
          IFS='|' read -r label settings stmt <<<"${configs[$i]}"
          # a checkpoint before every load: the WAL segments of the last round are recycled
          # (as on a server in steady state), not created and zero-filled anew by the loads
          psql -c "TRUNCATE conc_t" -c "CHECKPOINT"
          if [ "$start" = new ]; then
            t0=$(date +%s%N)
            pids=()
            for k in $(seq 0 $((n - 1))); do
              q="${stmt//FILE/$FASTCOPY_RUN/conc-$n-$k.copy}"  # lotsaints_data "$k" "$n" wrote it
              scripts/cluster.sh psql "$m" -qAt -v ON_ERROR_STOP=1 -c "$settings $q" >/dev/null & pids+=($!)
            done
            for p in "${pids[@]}"; do wait "$p"; done
          else
            start_connected "$n" "$settings" "$stmt"
          fi
          t[$i]=$(( ($(date +%s%N) - t0) / 1000000 ))
          rows=$(psql -c "SELECT count(*) FROM conc_t")
          [ "$rows" = 2000000 ] || { echo "conc: $label with $n sessions loaded $rows rows"; exit 1; }
        done
        if [ "$r" -gt 0 ]; then
          for i in $(seq 0 $((nc - 1))); do
            ms[$i.$n]+="${t[$i]} "
            vs_copy[$i.$n]+="$(ratio "${t[0]}" "${t[$i]}") "
            vs_server[$i.$n]+="$(ratio "${t[1]}" "${t[$i]}") "
          done
        fi
        echo "pg$m $start, $n sessions, round $r: ${t[*]}"
        unset t
      done
    done
    for i in $(seq 0 $((nc - 1))); do
      IFS='|' read -r label settings stmt <<<"${configs[$i]}"
      row="| $version | $start | $label |"
      for n in 1 2 4; do
        cell="$(median ${ms[$i.$n]})"
        [ "$i" -gt 0 ] && cell+=" ($(printf '%.2f' "$(median ${vs_copy[$i.$n]})")×"
        [ "$i" -gt 1 ] && cell+=", $(printf '%.2f' "$(median ${vs_server[$i.$n]})")×"
        [ "$i" -gt 0 ] && cell+=")"
        row="$row $cell |"
      done
      echo "$row" | tee -a "$tmp"
    done
    unset ms vs_copy vs_server
  done
  psql -c "DROP TABLE conc_t" >/dev/null
done
{
  echo "# Concurrent loads and buffering"
  echo
  echo "2,000,000 lotsaints rows in total into one $kind table, split over 1, 2 or 4 sessions loading at once;"
  echo "wall ms until all are done (start \`connected\`: the sessions connected first and released together by an"
  echo "advisory lock, the loads timed; \`new\`: a new psql process per session started at time 0, its connection timed too),"
  echo "median of $rounds rounds after a warm-up, a CHECKPOINT before every load. Every round runs each loader once, in a random"
  echo "order drawn anew every round; in parentheses the median over the rounds of each round's ratio to COPY and (for"
  echo "the strategies and buffer sizes) to fastcopy's default (extend_strategy auto; above 1 = faster). Machine: $(nproc) cores"
  echo "(so 4 sessions share 2 cores, and fastcopy's reader threads share them too). Run: \`make bench-concurrent\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | start | loader | 1 session | 2 sessions | 4 sessions |"
  echo "|---|---|---|---|---|---|"
  cat "$tmp"
} > "$out"
rm -f "$tmp"
cat "$out"
