#!/usr/bin/env bash
# Peak memory of a backend taking a long COPY … FROM STDIN stream: COPIES copies of the
# lotsaints file (43 MB each; 120 = 5.2 GB, 240,000,000 rows) piped through psql into an
# UNLOGGED table, fastcopy.copy_from off, then require. The backend's VmHWM (peak RSS, from
# /proc) is read while it runs. Writes bench/results/stream_memory.md.
#   bench/stream_memory.sh [major]       COPIES=120 by default
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
m=${1:-17}
copies=${COPIES:-120}
out=bench/results/stream_memory.md
use_major "$m"
bindir=$(dirname "$(pg_config_for "$m")")
conn=(-h "$FASTCOPY_RUN" -p "54$m" -U postgres)
data=$(lotsaints_data)
psql -c "DROP TABLE IF EXISTS stream_mem" -c "CREATE UNLOGGED TABLE stream_mem (a int, b int, c int)"
rows=()
for mode in off require; do
  psql -c "TRUNCATE stream_mem"
  opts=""; [ "$mode" = require ] && opts="-c session_preload_libraries=fastcopy -c fastcopy.copy_from=require"
  (for i in $(seq 1 "$copies"); do cat "$data"; done |
     PGOPTIONS="$opts" "$bindir/psql" "${conn[@]}" -X -q -c "SET application_name = stream_mem" -c "COPY stream_mem FROM STDIN") &
  pid=""
  for i in $(seq 1 100); do
    pid=$(psql -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'stream_mem'")
    [ -n "$pid" ] && break; sleep 0.1
  done
  hwm=0; t0=$(date +%s%N)
  while kill -0 "$pid" 2>/dev/null; do
    h=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true); [ -n "$h" ] && hwm=$h
    sleep 0.5
  done
  wait
  s=$(( ($(date +%s%N) - t0) / 1000000000 ))
  n=$(psql -c "SELECT count(*) FROM stream_mem")
  echo "$mode: peak RSS ${hwm} kB, ${s} s, $n rows"
  rows+=("| $mode | $((hwm / 1024)) | $s | $n |")
done
{
  echo "# A long COPY FROM STDIN stream: the backend's peak memory"
  echo
  echo "$copies copies of the lotsaints file ($(( copies * $(stat -c %s "$data") / 1000000 )) MB) piped through psql into an UNLOGGED"
  echo "table; the backend's VmHWM (peak RSS) from /proc while it runs. PostgreSQL $(psql -c 'SHOW server_version'), release build,"
  echo "shared_buffers 1GB. Run: \`bench/stream_memory.sh $m\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| fastcopy.copy_from | backend peak RSS MB | seconds | rows |"
  echo "|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} > "$out"
cat "$out"
