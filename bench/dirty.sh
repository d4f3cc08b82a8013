#!/usr/bin/env bash
# Dirty data (#38): 1,000,000 rows of three ints, 1% of them with a value int refuses, into an
# UNLOGGED table: COPY with ON_ERROR ignore (17+) vs fastcopy.load with on_error => 'ignore'
# and with a rejects table (rejects => ..., dropped before each load); and the same rows without
# the bad values (clean), fastcopy without and with a rejects table (what keeping one costs
# when nothing is rejected: the table's creation included). Wall ms around psql
# (connection included, the same for each), median of ROUNDS (default 7) after a warm-up,
# each loader once per round.
#   bench/dirty.sh [majors...]      default: 17 18
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=(${@:-17 18})
rounds=${ROUNDS:-7}
for m in "${majors[@]}"; do
  use_major "$m" >/dev/null
  f=$FASTCOPY_RUN/dirty-1m.txt
  dirty_data "$f"
  g=$FASTCOPY_RUN/clean-1m.txt
  dirty_data "$g" clean
  psql -c "DROP TABLE IF EXISTS dt, dt_rej" -c "CREATE UNLOGGED TABLE dt (a int, b int, c int)" >/dev/null
  declare -A t=()
  for r in $(seq 0 "$rounds"); do
    for k in copy ignore rejects clean clean_rejects; do
      case $k in
        copy) q="COPY dt FROM '$f' (ON_ERROR ignore)" ;;
        ignore) q="SELECT fastcopy.load('dt', '$f', on_error => 'ignore')" ;;
        rejects) q="SELECT fastcopy.load('dt', '$f', rejects => 'dt_rej')" ;;
        clean) q="SELECT fastcopy.load('dt', '$g')" ;;
        clean_rejects) q="SELECT fastcopy.load('dt', '$g', rejects => 'dt_rej')" ;;
      esac
      psql -c "TRUNCATE dt" -c "DROP TABLE IF EXISTS dt_rej" >/dev/null 2>&1
      s=$(date +%s%N)
      psql -c "SET client_min_messages = warning" -c "$q" >/dev/null
      e=$(( ($(date +%s%N) - s) / 1000000 ))
      [ "$r" -gt 0 ] && t[$k]+="$e "
    done
  done
  c=$(median ${t[copy]}); i=$(median ${t[ignore]}); j=$(median ${t[rejects]})
  echo "PostgreSQL $m, 1 M rows, 1% bad: COPY ON_ERROR ignore $c ms; fastcopy on_error ignore $i ms ($(printf %.2f "$(ratio "$c" "$i")")×); fastcopy with a rejects table $j ms ($(printf %.2f "$(ratio "$c" "$j")")×)"
  k=$(median ${t[clean]}); l=$(median ${t[clean_rejects]})
  echo "PostgreSQL $m, the same rows, none bad: fastcopy $k ms, with a rejects table $l ms ($(printf %.3f "$(ratio "$l" "$k")")× the time)"
  psql -c "DROP TABLE IF EXISTS dt, dt_rej" >/dev/null
  unset t
done
