#!/usr/bin/env bash
# Concurrent loads and buffering (SPEC §4.3, §4.4): 1, 2 and 4 sessions loading one UNLOGGED
# table at once, 2,000,000 lotsaints rows in total (each session its share), COPY vs
# fastcopy.load under each extend_strategy/extend_method, and fastcopy under
# max_buffered_tuples 1000 / 5000 / 10000. Wall time until every session is done, median of
# ROUNDS (default 3), TRUNCATE before each. Writes bench/results/concurrent.md.
#   bench/concurrent.sh [majors...]      default: 15 16 17
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-3}
out=bench/results/concurrent.md
tmp=$(mktemp)
for m in "${majors[@]}"; do
  use_major "$m"
  psql -c "DROP EXTENSION IF EXISTS fastcopy CASCADE" -c "CREATE EXTENSION fastcopy" \
       -c "DROP TABLE IF EXISTS conc_t" -c "CREATE UNLOGGED TABLE conc_t (a int, b int, c int)" >/dev/null
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
  if [ "$m" -ge 16 ]; then
    configs+=("fastcopy fixed/fallocate, 64 pages|SET fastcopy.extend_strategy = fixed; SET fastcopy.extend_method = fallocate;|SELECT fastcopy.load('conc_t', 'FILE')")
  fi
  for c in "${configs[@]}"; do
    IFS='|' read -r label settings stmt <<<"$c"
    row="| $version | $label |"
    for n in 1 2 4; do
      times=()
      for r in $(seq 0 "$rounds"); do
        psql -c "TRUNCATE conc_t"
        t0=$(date +%s%N)
        pids=()
        for k in $(seq 0 $((n - 1))); do
          q="${stmt//FILE/$FASTCOPY_RUN/conc-$n-$k.copy}"  # lotsaints_data "$k" "$n" wrote it
          scripts/cluster.sh psql "$m" -qAt -v ON_ERROR_STOP=1 -c "$settings $q" >/dev/null & pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p"; done
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        [ "$r" -gt 0 ] && times+=("$ms")
      done
      rows=$(psql -c "SELECT count(*) FROM conc_t")
      [ "$rows" = 2000000 ] || { echo "conc: $label with $n sessions loaded $rows rows"; exit 1; }
      med=$(median "${times[@]}")
      echo "pg$m $label, $n sessions: $med ms"
      row="$row $med |"
    done
    echo "$row" >> "$tmp"
  done
  psql -c "DROP TABLE conc_t" >/dev/null
done
{
  echo "# Concurrent loads and buffering"
  echo
  echo "2,000,000 lotsaints rows in total into one UNLOGGED table, split over 1, 2 or 4 sessions loading at once;"
  echo "wall ms until all are done, median of $rounds rounds after a warm-up. Machine: $(nproc) cores (so 4 sessions share"
  echo "2 cores, and fastcopy's reader threads share them too). Run: \`make bench-concurrent\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | loader | 1 session | 2 sessions | 4 sessions |"
  echo "|---|---|---|---|---|"
  cat "$tmp"
} > "$out"
rm -f "$tmp"
cat "$out"
