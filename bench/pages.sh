#!/usr/bin/env bash
# The bulk page path (src/load/pages.rs) in one server and one build: per workload COPY FROM,
# fastcopy.load with fastcopy.page_path = off (heap_multi_insert) and with it on, in a random
# order per round (one warm-up round, ROUNDS counted), TRUNCATE and CHECKPOINT before every load
# (so that no checkpoint the WAL of earlier loads set off runs during a load: a full run writes
# ~15 GB of WAL, past max_wal_size); medians of
# the per-round ratios. Workloads: lotsaints UNLOGGED and LOGGED (2,000,000 rows of 3 ints),
# ints10m (10,000,000 rows of one int, logged), lotsaints into a table with a primary key.
# Checks that every load left the same rows as COPY; writes bench/results/pages.md.
#   bench/pages.sh [majors...]        default: 15 16 17 18; ROUNDS=7, WORKLOADS to choose
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-7}
workloads=${WORKLOADS:-"lotsaints_unlogged lotsaints_logged ints10m pk3"}
out=${OUT:-bench/results/pages.md}
rows=()
for m in "${majors[@]}"; do
  use_major "$m"
  psql -c "$BENCH_MS_SQL"
  version=$(psql -c "SHOW server_version")
  for w in $workloads; do
    case $w in
      lotsaints_unlogged) kw=UNLOGGED cols="a int, b int, c int" data=$(lotsaints_data) ;;
      lotsaints_logged) kw="" cols="a int, b int, c int" data=$(lotsaints_data) ;;
      pk3) kw="" cols="a int PRIMARY KEY, b int, c int" data=$(lotsaints_data) ;;
      ints10m) kw="" cols="a int" data="$FASTCOPY_RUN/ints10m.copy"
        [ -f "$data" ] || psql -c "COPY (SELECT g FROM generate_series(1, 10000000) g) TO '$data'" ;;
    esac
    for t in b_copy b_off b_on; do
      psql -c "DROP TABLE IF EXISTS $t" -c "CREATE $kw TABLE $t ($cols)"
    done
    c=(); o=(); n=(); r_off=(); r_on=(); r_gain=(); ticks=$(cpu_ticks)
    for r in $(seq 0 "$rounds"); do
      for k in $(random_order 3 "$r$w"); do
        case $k in
          0) psql -c "TRUNCATE b_copy" -c "CHECKPOINT"; cm=$(psql -c "SELECT bench_ms('COPY b_copy FROM ''$data''')") ;;
          1) psql -c "TRUNCATE b_off" -c "CHECKPOINT"
             om=$(psql -c "SET fastcopy.page_path = off" -c "SELECT bench_ms('SELECT fastcopy.load(''b_off'', ''$data'')')") ;;
          2) psql -c "TRUNCATE b_on" -c "CHECKPOINT"
             nm=$(psql -c "SET fastcopy.page_path = on" -c "SELECT bench_ms('SELECT fastcopy.load(''b_on'', ''$data'')')") ;;
        esac
      done
      echo "pg$m $w round $r: COPY $cm ms, page_path off $om ms, on $nm ms"
      [ "$r" -gt 0 ] || continue
      c+=("$cm"); o+=("$om"); n+=("$nm")
      r_off+=("$(ratio "$cm" "$om")"); r_on+=("$(ratio "$cm" "$nm")"); r_gain+=("$(ratio "$om" "$nm")")
    done
    same=$(psql -c "SELECT NOT EXISTS (SELECT * FROM b_on EXCEPT ALL SELECT * FROM b_copy)
                    AND NOT EXISTS (SELECT * FROM b_copy EXCEPT ALL SELECT * FROM b_on)
                    AND NOT EXISTS (SELECT * FROM b_off EXCEPT ALL SELECT * FROM b_copy)
                    AND (SELECT count(*) FROM b_on) = (SELECT count(*) FROM b_copy)")
    [ "$same" = t ] || { echo "pages: $w tables differ on pg$m"; exit 1; }
    row=$(printf '| %s | %s | %.0f | %.0f | %.0f | %.2f× | **%.2f×** | %.3f | %s | %s |' "$version" "$w" \
      "$(median "${c[@]}")" "$(median "${o[@]}")" "$(median "${n[@]}")" \
      "$(median "${r_off[@]}")" "$(median "${r_on[@]}")" "$(median "${r_gain[@]}")" "$same" \
      "$(steal_pct "$ticks")")
    echo "$row"; rows+=("$row")
    psql -c "DROP TABLE b_copy, b_off, b_on"
  done
done
{
  echo "# The bulk page path: COPY vs fastcopy.load, page_path off / on"
  echo
  echo "\`bench/pages.sh\` ($(date -u +%Y-%m-%d)): per workload COPY FROM, fastcopy.load with"
  echo "\`fastcopy.page_path = off\` (heap_multi_insert) and \`on\` (the page writer), one build, one"
  echo "server, random order per round, $rounds rounds after a warm-up, TRUNCATE and CHECKPOINT before each load;"
  echo "medians (ms) and medians of per-round ratios. Machine: $(nproc) vCPUs, $(uname -r),"
  echo "shared_buffers 1GB, release build. lotsaints: 2,000,000 rows of 3 ints; ints10m: 10,000,000"
  echo "rows of one int (logged); pk3: lotsaints into (a int PRIMARY KEY, b int, c int). steal: the"
  echo "share of CPU time the hypervisor took during the workload's rounds (/proc/stat; above a few"
  echo "percent, two-thread loads suffer more than one-thread COPY)."
  echo
  echo "| PostgreSQL | workload | COPY ms | off ms | on ms | COPY/off | COPY/on | on/off | same rows | steal % |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} >"$out"
echo "wrote $out"
