#!/usr/bin/env bash
# A/B of two builds of fastcopy: the two release libraries take turns as the server's
# fastcopy.so (swapped by an atomic rename before each load, a fresh backend per load, so each
# load runs the build it names), in one server, on lotsaints (UNLOGGED, 2,000,000 rows of three
# ints) and ints10m (logged, 10,000,000 rows of one int; CHECKPOINT before each load). The
# order is random per round; the result is the median of each round's B/A time ratio
# (> 1: B is slower). Builds the two commits itself (git worktrees under $FASTCOPY_RUN).
#   bench/ab.sh COMMIT_A COMMIT_B [major]       e.g. bench/ab.sh 78f5f41 HEAD 17
#   ROUNDS=15 WORKLOADS="lotsaints ints10m" (also ints10m_unlogged: the same rows, no WAL;
#   lotsaints_logged: lotsaints into a logged table; lotsaints_client: lotsaints from psql
#   \copy through the COPY hook, wall time around psql; events: 3,000,000 rows of
#   (bigint, int, 32-byte text), UNLOGGED; events_client: the same from psql \copy; orders:
#   3,000,000 rows of (bigint, int, numeric(12,2), timestamptz, text mostly NULL), UNLOGGED,
#   as pg_dump writes them; orders_client: the same from psql \copy; dirty: lotsaints' shape,
#   1,000,000 rows, 1% with a value int refuses (bench/dirty.sh's), on_error => 'ignore';
#   dirty_rejects: the same with a rejects table, dropped before each load; uuid: 2,000,000
#   rows of one uuid column, UNLOGGED; mixed: 1,000,000 rows of (int8, float8, text,
#   timestamptz, numeric, uuid), UNLOGGED, bench/types.sh's mixed table's shape)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
a=${1:?commit A}; b=${2:?commit B}; m=${3:-17}
rounds=${ROUNDS:-15}
workloads=${WORKLOADS:-lotsaints ints10m}

# build_so COMMIT: prints the path of that commit's release fastcopy.so for major $m
build_so() {
  local rev; rev=$(git rev-parse --short "$1")
  local dir="$FASTCOPY_RUN/ab-$rev" out="$FASTCOPY_RUN/ab-$rev-pg$m.so"
  if [ ! -f "$out" ]; then
    rm -rf "$dir"; git worktree prune
    git worktree add -f --detach "$dir" "$rev" >/dev/null 2>&1
    (cd "$dir" && CARGO_TARGET_DIR="$here/../target/ab" cargo build --release --lib -p fastcopy \
       --no-default-features --features "pg$m" >/dev/null 2>&1)
    cp target/ab/release/libfastcopy.so "$out"
    git worktree remove --force "$dir"
  fi
  echo "$out"
}
use_major "$m"            # the current tree's release build and its SQL
libdir=$("$(pg_config_for "$m")" --pkglibdir)
# a commit that is the current tree (HEAD, nothing changed) is the build just installed
current() { [ "$(git rev-parse "$1")" = "$(git rev-parse HEAD)" ] && git diff --quiet HEAD -- src core Cargo.toml; }
installed="$FASTCOPY_RUN/ab-installed-pg$m.so"; cp "$libdir/fastcopy.so" "$installed"
so_a=$(current "$a" && echo "$installed" || build_so "$a")
so_b=$(current "$b" && echo "$installed" || build_so "$b")
use_so() { cp "$1" "$libdir/fastcopy.so.ab"; mv "$libdir/fastcopy.so.ab" "$libdir/fastcopy.so"; }
psql -c "$BENCH_MS_SQL" -c "DROP TABLE IF EXISTS ab_t" >/dev/null
lots=$(lotsaints_data)
ints="$FASTCOPY_RUN/ints10m.copy"
[ -f "$ints" ] || psql -c "COPY (SELECT g FROM generate_series(1, 10000000) g) TO '$ints'"
orders="$FASTCOPY_RUN/orders3m.copy"
[ -f "$orders" ] ||
  psql -c "COPY (SELECT g, 1 + g % 50000, ((g % 100000) / 100.0)::numeric(12,2),
                        timestamptz '2024-01-01 00:00:00+00' + g * interval '1 s',
                        CASE WHEN g % 7 = 0 THEN 'gift' END
                 FROM generate_series(1, 3000000) g) TO '$orders'"
events="$FASTCOPY_RUN/events3m.copy"
[ -f "$events" ] ||
  psql -c "COPY (SELECT g, g % 17, md5(g::text) FROM generate_series(1, 3000000) g) TO '$events'"
# ms COMMAND...: wall time of a command, in ms
ms() { local t0; t0=$(date +%s%N); "$@" >/dev/null; echo $(( ($(date +%s%N) - t0) / 1000000 )); }
dirty="$FASTCOPY_RUN/dirty-1m.txt"
[ -f "$dirty" ] || dirty_data "$dirty"
uuids="$FASTCOPY_RUN/uuid2m.copy"
[ -f "$uuids" ] || psql -c "COPY (SELECT md5(g::text)::uuid FROM generate_series(1, 2000000) g) TO '$uuids'"
mixed="$FASTCOPY_RUN/mixed1m.copy"
[ -f "$mixed" ] ||
  psql -c "SELECT setseed(0.42)" \
       -c "COPY (SELECT g::int8 * 7919, random() * 1e6, md5(g::text) || ' row ' || g,
                        timestamptz '2024-01-01 00:00:00+00' + g * interval '17 s',
                        round((random() * 1e6)::numeric, 2), md5(g::text)::uuid
                 FROM generate_series(1, 1000000) g) TO '$mixed'"
for w in $workloads; do
  client=0 opts=""
  case $w in
    dirty) def="CREATE UNLOGGED TABLE ab_t (a int, b int, c int)"; data=$dirty
           opts=", on_error => ''ignore''" ;;
    dirty_rejects) def="CREATE UNLOGGED TABLE ab_t (a int, b int, c int)"; data=$dirty
                   opts=", rejects => ''ab_rej''" ;;
    lotsaints_client) def="CREATE UNLOGGED TABLE ab_t (a int, b int, c int)"; data=$lots; client=1 ;;
    lotsaints) def="CREATE UNLOGGED TABLE ab_t (a int, b int, c int)"; data=$lots ;;
    lotsaints_logged) def="CREATE TABLE ab_t (a int, b int, c int)"; data=$lots ;;
    ints10m) def="CREATE TABLE ab_t (a int)"; data=$ints ;;
    ints10m_unlogged) def="CREATE UNLOGGED TABLE ab_t (a int)"; data=$ints ;;
    events) def="CREATE UNLOGGED TABLE ab_t (id bigint, kind int, payload text)"; data=$events ;;
    orders|orders_client)
      def="CREATE UNLOGGED TABLE ab_t (id bigint, customer int, amount numeric(12,2), placed timestamptz, note text)"
      data=$orders; [ "$w" = orders_client ] && client=1 ;;
    uuid) def="CREATE UNLOGGED TABLE ab_t (v uuid)"; data=$uuids ;;
    mixed) def="CREATE UNLOGGED TABLE ab_t (a int8, b float8, c text, d timestamptz, e numeric, f uuid)"
           data=$mixed ;;
    events_client) def="CREATE UNLOGGED TABLE ab_t (id bigint, kind int, payload text)"
                   data=$events; client=1 ;;
    *) echo "ab.sh: unknown workload $w"; exit 2 ;;
  esac
  psql -c "DROP TABLE IF EXISTS ab_t" -c "$def" >/dev/null
  ta=(); tb=(); ratios=(); ticks=$(cpu_ticks)
  for r in $(seq 0 "$rounds"); do
    declare -A t=()
    for i in $(random_order 2 "$w$r"); do
      side=$([ "$i" = 0 ] && echo a || echo b)
      use_so "$([ "$side" = a ] && echo "$so_a" || echo "$so_b")"
      psql -c "TRUNCATE ab_t" -c "DROP TABLE IF EXISTS ab_rej" -c "CHECKPOINT" >/dev/null 2>&1
      if [ "$client" = 1 ]; then
        t[$side]=$(PGOPTIONS="-c session_preload_libraries=fastcopy -c fastcopy.copy_from=require" \
                   ms psql -c "\\copy ab_t FROM '$data'")
      else
        t[$side]=$(psql -c "SET client_min_messages = warning" \
                        -c "SELECT bench_ms('SELECT fastcopy.load(''ab_t'', ''$data''$opts)')")
      fi
    done
    if [ "$r" -gt 0 ]; then   # round 0 warms up
      ta+=("${t[a]}"); tb+=("${t[b]}"); ratios+=("$(ratio "${t[b]}" "${t[a]}")")
    fi
  done
  printf '%s on %s: A %s ms, B %s ms (medians of %s), B/A median per-round ratio %s; steal %s%%\n' \
    "$w" "$(psql -c 'SHOW server_version')" "$(median "${ta[@]}")" "$(median "${tb[@]}")" \
    "$rounds" "$(median "${ratios[@]}")" "$(steal_pct "$ticks")"
done
use_so "$so_b"
