#!/usr/bin/env bash
# Concurrent loads and buffering (SPEC §4.3, §4.4): 1, 2 and 4 sessions loading one UNLOGGED
# table at once, 2,000,000 lotsaints rows in total (each session its share), COPY vs
# fastcopy.load under each extend_strategy/extend_method, and fastcopy under
# max_buffered_tuples 1000 / 5000 / 10000. Wall time until every session is done, median of
# ROUNDS (default 9), TRUNCATE before each; every round runs each loader once, in a random
# order, and the ratios are medians of each round's ratio to COPY and to fastcopy's default
# (server/auto). Also fastcopy with fastcopy.page_path = off (rows through heap_multi_insert).
# QUICK=1: only COPY, fastcopy's default and page_path off; OUT: the result file. Writes
# bench/results/concurrent.md.
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
for m in "${majors[@]}"; do
  use_major "$m"
  psql -c "DROP TABLE IF EXISTS conc_t" -c "CREATE UNLOGGED TABLE conc_t (a int, b int, c int)" >/dev/null
  for n in 1 2 4; do
    for k in $(seq 0 $((n - 1))); do
      lotsaints_data "$k" "$n" >/dev/null
    done
  done
  version=$(psql -c "SHOW server_version")
  # label|settings|statement with FILE as the file placeholder
  configs=("COPY||COPY conc_t FROM 'FILE'"
           "fastcopy server/auto||SELECT fastcopy.load('conc_t', 'FILE')"
           "fastcopy fixed/auto, 64 pages|SET fastcopy.extend_strategy = fixed;|SELECT fastcopy.load('conc_t', 'FILE')"
           "fastcopy fixed/zero, 64 pages|SET fastcopy.extend_strategy = fixed; SET fastcopy.extend_method = zero;|SELECT fastcopy.load('conc_t', 'FILE')"
           "fastcopy sticky/auto, 64 pages|SET fastcopy.extend_strategy = sticky;|SELECT fastcopy.load('conc_t', 'FILE')"
           "fastcopy server, max_buffered_tuples 5000|SET fastcopy.max_buffered_tuples = 5000; SET fastcopy.max_buffered_bytes = '1MB';|SELECT fastcopy.load('conc_t', 'FILE')"
           "fastcopy server, max_buffered_tuples 10000|SET fastcopy.max_buffered_tuples = 10000; SET fastcopy.max_buffered_bytes = '1MB';|SELECT fastcopy.load('conc_t', 'FILE')")
  configs+=("fastcopy server, page_path off|SET fastcopy.page_path = off;|SELECT fastcopy.load('conc_t', 'FILE')")
  # QUICK=1: COPY, fastcopy's default and the page path off only
  [ -n "${QUICK:-}" ] && configs=("${configs[0]}" "${configs[1]}" "${configs[-1]}")
  if [ "$m" -ge 16 ] && [ -z "${QUICK:-}" ]; then
    configs+=("fastcopy fixed/fallocate, 64 pages|SET fastcopy.extend_strategy = fixed; SET fastcopy.extend_method = fallocate;|SELECT fastcopy.load('conc_t', 'FILE')")
  fi
  nc=${#configs[@]}
  declare -A ms=() vs_copy=() vs_server=()
  for n in 1 2 4; do
    for r in $(seq 0 "$rounds"); do
      # Every loader once per round, in a random order drawn anew every round (seeded by the
      # round): the two sides of every ratio are measured moments apart, and none always
      # follows the same other one.
      declare -A t=()
      for i in $(random_order "$nc" "$n.$r"); do
        IFS='|' read -r label settings stmt <<<"${configs[$i]}"
        psql -c "TRUNCATE conc_t"
        t0=$(date +%s%N)
        pids=()
        for k in $(seq 0 $((n - 1))); do
          q="${stmt//FILE/$FASTCOPY_RUN/conc-$n-$k.copy}"  # lotsaints_data "$k" "$n" wrote it
          scripts/cluster.sh psql "$m" -qAt -v ON_ERROR_STOP=1 -c "$settings $q" >/dev/null & pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p"; done
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
      echo "pg$m $n sessions, round $r: ${t[*]}"
      unset t
    done
  done
  for i in $(seq 0 $((nc - 1))); do
    IFS='|' read -r label settings stmt <<<"${configs[$i]}"
    row="| $version | $label |"
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
  psql -c "DROP TABLE conc_t" >/dev/null
done
{
  echo "# Concurrent loads and buffering"
  echo
  echo "2,000,000 lotsaints rows in total into one UNLOGGED table, split over 1, 2 or 4 sessions loading at once;"
  echo "wall ms until all are done, median of $rounds rounds after a warm-up. Every round runs each loader once, in a random"
  echo "order drawn anew every round; in parentheses the median over the rounds of each round's ratio to COPY and (for"
  echo "the strategies and buffer sizes) to fastcopy server/auto, the default (above 1 = faster). Machine: $(nproc) cores"
  echo "(so 4 sessions share 2 cores, and fastcopy's reader threads share them too). Run: \`make bench-concurrent\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | loader | 1 session | 2 sessions | 4 sessions |"
  echo "|---|---|---|---|---|"
  cat "$tmp"
} > "$out"
rm -f "$tmp"
cat "$out"
