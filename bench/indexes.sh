#!/usr/bin/env bash
# Indexed tables private to the load's transaction: COPY FROM vs fastcopy.load, each into the
# table with its indexes and into the same table without them (the difference is what the
# indexes cost), logged, in `BEGIN; TRUNCATE t; <load>; COMMIT` (and `BEGIN; CREATE TABLE t
# ...; <load>; COMMIT` for pk3_create). Per load: its time (the load statement, measured in the
# server) and the WAL it wrote (bytes a row). Alternating, one warm-up round, ROUNDS counted
# rounds; medians. Checks that both loaders leave the same rows. Writes bench/results/indexes.md.
#
#   bench/indexes.sh [majors...]       default: 15 16 17 18; ROUNDS=3 ONLY="pk3_truncate uuid_pk"
#
# Workloads (server files written once per major):
#   pk3_truncate  2,000,000 rows of (a int PRIMARY KEY, b int, c int), a ascending (lotsaints)
#   pk3_create    the same into a table created in the load's transaction
#   uuid_pk       1,000,000 rows of (id uuid PRIMARY KEY, v int), keys in random order
#   pk_2sec       1,000,000 rows of (a int PRIMARY KEY, b int, c text) with indexes on b
#                 (random) and c (text, random order)
#   lineitem      1,500,000 rows of TPC-H lineitem's shape (bench/types.sh's, SF 0.25) with its
#                 primary key (l_orderkey, l_linenumber) and indexes on l_partkey and l_shipdate
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-3}
only=${ONLY:-"pk3_truncate pk3_create uuid_pk pk_2sec lineitem"}
out=bench/results/indexes.md
mkdir -p bench/results
rows_out=$(mktemp)
chart_data=$(mktemp)

lineitem_cols=$LINEITEM_COLS
lineitem_sql=$(lineitem_select 0.25)
lineitem_cols=$(tr '\n' ' ' <<<"$lineitem_cols"); lineitem_sql=$(tr '\n' ' ' <<<"$lineitem_sql")

# NAME~COLUMNS~INDEXES (;-separated, \$t for the table)~SELECT~ROWS~CREATE (in the transaction)
workloads=(
  "pk3_truncate~a int PRIMARY KEY, b int, c int~~SELECT g, (random() * 100000 - 50000)::int, 3243423 FROM generate_series(1, 2000000) g~2000000~"
  "pk3_create~a int PRIMARY KEY, b int, c int~~SELECT g, (random() * 100000 - 50000)::int, 3243423 FROM generate_series(1, 2000000) g~2000000~create"
  "uuid_pk~id uuid PRIMARY KEY, v int~~SELECT md5(random()::text)::uuid, g FROM generate_series(1, 1000000) g~1000000~"
  "pk_2sec~a int PRIMARY KEY, b int, c text~CREATE INDEX ON \$t (b); CREATE INDEX ON \$t (c)~SELECT g, (random() * 1e9)::int, md5(random()::text) FROM generate_series(1, 1000000) g~1000000~"
  "lineitem~$lineitem_cols, PRIMARY KEY (l_orderkey, l_linenumber)~CREATE INDEX ON \$t (l_partkey); CREATE INDEX ON \$t (l_shipdate)~$lineitem_sql~1500000~"
)

# load TABLE DEFINITION INDEXES STATEMENT CREATE: one load in its own transaction after
# TRUNCATE (or CREATE TABLE); prints "ms wal_bytes"
load() {
  local t=$1 cols=$2 idx=$3 stmt=$4 create=$5 prep res
  if [ -n "$create" ]; then
    psql -c "DROP TABLE IF EXISTS $t" >/dev/null
    prep="CREATE TABLE $t ($cols); ${idx//\$t/$t}"
  else
    prep="TRUNCATE $t"
  fi
  res=$(psql -c "BEGIN" -c "$prep" -c "SELECT pg_current_wal_insert_lsn()" \
             -c "SELECT bench_ms('${stmt//\'/\'\'}')" -c "SELECT pg_current_wal_insert_lsn()" -c "COMMIT")
  local l0 ms l1
  { read -r l0; read -r ms; read -r l1; } <<<"$(grep -v '^$' <<<"$res")"
  echo "$ms $(psql -c "SELECT pg_wal_lsn_diff('$l1', '$l0')")"
}

for m in "${majors[@]}"; do
  use_major "$m"
  psql -c "$BENCH_MS_SQL" >/dev/null
  version=$(psql -c "SHOW server_version")
  for w in "${workloads[@]}"; do
    IFS='~' read -r name cols idx sql nrows create <<<"$w"
    [[ " $only " == *" $name "* ]] || continue
    file="$FASTCOPY_RUN/pg$m-idx-$name.copy"
    [ -f "$file" ] || psql -c "SELECT setseed(0.42)" -c "COPY ($sql) TO '$file'" >/dev/null
    bare=$(sed -E 's/, PRIMARY KEY \([^)]*\)//; s/ PRIMARY KEY//' <<<"$cols")
    psql -c "DROP TABLE IF EXISTS ix_copy, ix_fast, ix_copy_bare, ix_fast_bare" >/dev/null
    for t in ix_copy ix_fast; do psql -c "CREATE TABLE $t ($cols)" -c "${idx//\$t/$t}" >/dev/null; done
    for t in ix_copy_bare ix_fast_bare; do psql -c "CREATE TABLE $t ($bare)" >/dev/null; done
    declare -A ms=() wal=()
    for r in $(seq 0 "$rounds"); do
      line="pg$m $name round $r:"
      for side in copy fast copy_bare fast_bare; do
        t="ix_$side"
        case $side in
          copy*) stmt="COPY $t FROM '$file'" ;;
          fast*) stmt="SELECT fastcopy.load('$t', '$file')" ;;
        esac
        case $side in
          *bare) read -r s b <<<"$(load "$t" "$bare" "" "$stmt" "$create")" ;;
          *) read -r s b <<<"$(load "$t" "$cols" "$idx" "$stmt" "$create")" ;;
        esac
        line+=" $side ${s} ms $((b / nrows)) B/row;"
        if [ "$r" -gt 0 ]; then ms[$side]+="$s "; wal[$side]+="$b "; fi
      done
      echo "$line"
    done
    same=$(psql -c "SELECT NOT EXISTS (TABLE ix_copy EXCEPT ALL TABLE ix_fast) AND NOT EXISTS (TABLE ix_fast EXCEPT ALL TABLE ix_copy)
                    AND (SELECT count(*) FROM ix_fast) = $nrows")
    [ "$same" = "t" ] || { echo "indexes: $name differs on pg$m"; exit 1; }
    for side in copy fast copy_bare fast_bare; do
      declare "m_$side=$(median ${ms[$side]})" "w_$side=$(median ${wal[$side]})"
    done
    read -r speedup share_c share_f wrow_c wrow_f iwrow_c iwrow_f <<<"$(awk -v c="$m_copy" -v f="$m_fast" \
      -v cb="$m_copy_bare" -v fb="$m_fast_bare" -v wc="$w_copy" -v wf="$w_fast" -v wcb="$w_copy_bare" \
      -v wfb="$w_fast_bare" -v n="$nrows" 'BEGIN {printf "%.2f %.0f %.0f %.0f %.0f %.0f %.0f", c / f,
        100 * (c - cb) / c, 100 * (f - fb) / f, wc / n, wf / n, (wc - wcb) / n, (wf - wfb) / n}')"
    echo "pg$m $name: COPY $m_copy ms, fastcopy $m_fast ms, ${speedup}x; index share COPY ${share_c}%, fastcopy ${share_f}%; WAL B/row COPY $wrow_c (index $iwrow_c), fastcopy $wrow_f (index $iwrow_f)"
    printf '| %s | %s | %.0f | %.0f | **%s×** | %.0f / %.0f | %s%% / %s%% | %s / %s | %s / %s | %s |\n' "$version" "$name" \
      "$m_copy" "$m_fast" "$speedup" "$m_copy_bare" "$m_fast_bare" "$share_c" "$share_f" "$wrow_c" "$wrow_f" \
      "$iwrow_c" "$iwrow_f" "$same" >>"$rows_out"
    echo "$m|$name|$speedup" >>"$chart_data"
    psql -c "DROP TABLE IF EXISTS ix_copy, ix_fast, ix_copy_bare, ix_fast_bare" >/dev/null
  done
done
{
  echo "# Indexed tables private to the load's transaction: COPY FROM vs fastcopy.load"
  echo
  echo "Logged tables, \`BEGIN; TRUNCATE t; <load>; COMMIT\` (pk3_create: \`CREATE TABLE\` in that transaction),"
  echo "server files, $rounds rounds after one warm-up, alternating; medians. \"Without indexes\": the same"
  echo "load into the table without its primary key and indexes; the index share is (with - without) / with."
  echo "WAL: bytes a row from the load statement (index: with - without). Machine: $(nproc) cores,"
  echo "$(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM, $(uname -r), shared_buffers 1GB,"
  echo "release build. Run: \`make bench-indexes\` ($(date -u +%Y-%m-%d)); workloads in \`bench/indexes.sh\`."
  echo
  echo "fastcopy builds these tables' btree indexes at the end of the load (\`fastcopy.index_build = auto\`):"
  echo "it writes those on integer, date, timestamp and uuid keys itself from the entries it kept, and"
  echo "leaves the rest (text keys, keys that repeat in a non-unique index) to the server's build from"
  echo "the table. COPY inserts every entry row by row."
  echo
  echo "| PostgreSQL | workload | COPY ms | fastcopy ms | speed-up | without indexes ms (COPY / fastcopy) | index share (COPY / fastcopy) | WAL B/row (COPY / fastcopy) | index WAL B/row (COPY / fastcopy) | same rows |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  cat "$rows_out"
  echo
  echo "![indexes]($(basename "$out" .md).svg)"
} >"$out"
speedup_chart "fastcopy.load speed-up over COPY, indexed tables new in the transaction" "$chart_data" "${out%.md}.svg"
rm -f "$rows_out" "$chart_data"
cat "$out"
