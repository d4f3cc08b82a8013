#!/usr/bin/env bash
# Dirty data: 1,000,000 rows of three ints, 1% of them with a value int refuses, into an
# UNLOGGED table: COPY with ON_ERROR ignore (17+) vs fastcopy.load with on_error => 'ignore'
# and with a rejects table (rejects => ..., dropped before each load); and the same rows without
# the bad values (clean), fastcopy without and with a rejects table (what keeping one costs
# when nothing is rejected: the table's creation included). Each statement is timed in the
# server (bench_ms, as bench/lotsaints.sh and bench/types.sh: the connection's start, the same
# for every loader, is not the load's); the wall time around psql is printed too. Each loader
# once per round, in a random order, after a warm-up round; the speed-ups are medians of the
# rounds' ratios (ROUNDS, default 9).
#   bench/dirty.sh [majors...]      default: 17 18
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=(${@:-17 18})
rounds=${ROUNDS:-9}
loaders=(copy ignore rejects clean clean_rejects)
for m in "${majors[@]}"; do
  use_major "$m" >/dev/null
  f=$FASTCOPY_RUN/dirty-1m.txt
  dirty_data "$f"
  g=$FASTCOPY_RUN/clean-1m.txt
  dirty_data "$g" clean
  psql -c "DROP TABLE IF EXISTS dt, dt_rej" -c "CREATE UNLOGGED TABLE dt (a int, b int, c int)" \
       -c "$BENCH_MS_SQL" >/dev/null
  declare -A t=() w=() x=()
  for r in $(seq 0 "$rounds"); do
    declare -A ms=()
    for i in $(random_order ${#loaders[@]} "$m$r"); do
      k=${loaders[$i]}
      case $k in
        copy) q="COPY dt FROM '$f' (ON_ERROR ignore)" ;;
        ignore) q="SELECT fastcopy.load('dt', '$f', on_error => 'ignore')" ;;
        rejects) q="SELECT fastcopy.load('dt', '$f', rejects => 'dt_rej')" ;;
        clean) q="SELECT fastcopy.load('dt', '$g')" ;;
        clean_rejects) q="SELECT fastcopy.load('dt', '$g', rejects => 'dt_rej')" ;;
      esac
      psql -c "TRUNCATE dt" -c "DROP TABLE IF EXISTS dt_rej" >/dev/null 2>&1
      s=$(date +%s%N)
      ms[$k]=$(psql -c "SET client_min_messages = warning" -c "SELECT bench_ms(\$q\$$q\$q\$)")
      e=$(( ($(date +%s%N) - s) / 1000000 ))
      if [ "$r" -gt 0 ]; then t[$k]+="${ms[$k]} "; w[$k]+="$e "; fi
    done
    if [ "$r" -gt 0 ]; then
      x[ignore]+="$(ratio "${ms[copy]}" "${ms[ignore]}") "
      x[rejects]+="$(ratio "${ms[copy]}" "${ms[rejects]}") "
      x[clean_rejects]+="$(ratio "${ms[clean_rejects]}" "${ms[clean]}") "
    fi
    unset ms
  done
  med() { printf %.0f "$(median ${t[$1]})"; }
  echo "PostgreSQL $m, 1 M rows, 1% bad: COPY ON_ERROR ignore $(med copy) ms; fastcopy on_error ignore $(med ignore) ms ($(printf %.2f "$(median ${x[ignore]})")×); fastcopy with a rejects table $(med rejects) ms ($(printf %.2f "$(median ${x[rejects]})")×)"
  echo "PostgreSQL $m, the same rows, none bad: fastcopy $(med clean) ms, with a rejects table $(med clean_rejects) ms ($(printf %.3f "$(median ${x[clean_rejects]})")× the time)"
  echo "PostgreSQL $m, wall ms around psql (its connection included): COPY $(median ${w[copy]}), ignore $(median ${w[ignore]}), rejects $(median ${w[rejects]}), clean $(median ${w[clean]}), clean with rejects $(median ${w[clean_rejects]})"
  psql -c "DROP TABLE IF EXISTS dt, dt_rej" >/dev/null
  unset t w x
done
