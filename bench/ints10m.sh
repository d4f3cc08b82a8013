#!/usr/bin/env bash
# ints10m: 10,000,000 rows of one int column (1..10000000) into a logged table,
# COPY FROM vs fastcopy.load, alternating (the order swapped every round), one warm-up round,
# ROUNDS counted rounds (default 3); TRUNCATE and CHECKPOINT before every load, outside the
# timed part, so that each load starts with no dirty WAL or buffers of the one before. Prints
# and writes medians, the median of each round's ratio, and whether both tables hold the same
# rows, to bench/results/ints10m.md. Release build, throwaway cluster per major.
#
#   bench/ints10m.sh [majors...]        default: 15 16 17 18
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-3}
out=bench/results/ints10m.md
mkdir -p bench/results
tmp=$(mktemp)
for m in "${majors[@]}"; do
  use_major "$m"
  psql -c "DROP TABLE IF EXISTS ints10m_copy, ints10m_fast" \
       -c "CREATE TABLE ints10m_copy (a int)" -c "CREATE TABLE ints10m_fast (a int)" \
       -c "$BENCH_MS_SQL"
  data="$FASTCOPY_RUN/ints10m.copy"
  [ -f "$data" ] || psql -c "COPY (SELECT g FROM generate_series(1, 10000000) g) TO '$data'"
  copy_ms=(); fast_ms=(); ratios=()
  for r in $(seq 0 "$rounds"); do
    order="copy fast"; [ $((r % 2)) -eq 1 ] && order="fast copy"
    declare -A t=()
    for side in $order; do
      psql -c "TRUNCATE ints10m_$side" -c "CHECKPOINT" >/dev/null
      if [ "$side" = copy ]; then
        t[$side]=$(psql -c "SELECT bench_ms('COPY ints10m_copy FROM ''$data''')")
      else
        t[$side]=$(psql -c "SELECT bench_ms('SELECT fastcopy.load(''ints10m_fast'', ''$data'')')")
      fi
    done
    if [ "$r" -gt 0 ]; then
      copy_ms+=("${t[copy]}"); fast_ms+=("${t[fast]}")
      ratios+=("$(ratio "${t[copy]}" "${t[fast]}")")
    fi
    echo "pg$m round $r: COPY ${t[copy]} ms, fastcopy.load ${t[fast]} ms"
    unset t
  done
  same=$(psql -c "SELECT NOT EXISTS (SELECT * FROM ints10m_copy EXCEPT ALL SELECT * FROM ints10m_fast)
                  AND NOT EXISTS (SELECT * FROM ints10m_fast EXCEPT ALL SELECT * FROM ints10m_copy)
                  AND (SELECT count(*) FROM ints10m_fast) = 10000000")
  version=$(psql -c "SHOW server_version")
  cm=$(median "${copy_ms[@]}"); fm=$(median "${fast_ms[@]}"); ratio=$(median "${ratios[@]}")
  echo "pg$m: COPY median ${cm} ms, fastcopy.load median ${fm} ms, ratio ${ratio}x, identical rows: $same"
  printf '| %s | %.0f | %.0f | %.2f M | %.2f M | **%.2f×** | %s |\n' "$version" "$cm" "$fm" \
    "$(awk -v c="$cm" 'BEGIN{print 10/(c/1000)}')" "$(awk -v f="$fm" 'BEGIN{print 10/(f/1000)}')" \
    "$ratio" "$same" >> "$tmp"
  psql -c "DROP TABLE ints10m_copy, ints10m_fast"
  [ "$same" = "t" ] || { echo "ints10m: tables differ on pg$m"; exit 1; }
done
{
  echo "# ints10m: COPY FROM vs fastcopy.load, logged table"
  echo
  echo "10,000,000 rows of one int column (1..10000000, server file) into a logged table (WAL written), $rounds rounds"
  echo "after one warm-up, COPY and fastcopy alternating with the order swapped every round; TRUNCATE and CHECKPOINT"
  echo "before every load, outside the timed part. Medians; speed-up is the median of each round's COPY time over"
  echo "fastcopy's. Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM, $(uname -r),"
  echo "shared_buffers 1GB, release build. Run: \`make bench-ints10m\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | COPY ms | fastcopy ms | COPY rows/s | fastcopy rows/s | speed-up | same rows |"
  echo "|---|---|---|---|---|---|---|"
  cat "$tmp"
} > "$out"
rm -f "$tmp"
cat "$out"
