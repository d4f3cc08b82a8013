#!/usr/bin/env bash
# Speed on real tables: COPY FROM vs fastcopy.load on tables of the common column types, text
# format unless said (UNLOGGED tables, server files the server's COPY TO wrote):
#   mixed       int8, float8, text, timestamptz, numeric, uuid (1,000,000 rows), text and binary
#   mixed10     int8, float8, text, timestamptz, numeric, uuid, date, bool, float4, timestamp
#   lineitem    TPC-H lineitem's shape and dbgen's distributions (int8 keys, int4, numeric(15,2)
#               x4, char(1) x2, date x3, char(25), char(10), varchar(44)); 6,000,000 x SF rows
#   orders      TPC-H orders' shape (1,500,000 x SF rows)
#   one table per type: 1,000,000 rows of one column (int4, int8, float4, float8, numeric,
#               numeric(12,2), date, timestamp, timestamptz, bool, uuid, text, varchar(32),
#               char(8), bytea, jsonb)
#   restore     pg_restore of a custom-format dump of mixed, mixed10, lineitem and orders (logged
#               tables, no indexes) into a fresh database, fastcopy.copy_from off vs on (the COPY
#               hook: every session preloads the library); wall time of pg_restore; the dump as
#               pg_dump -Fc makes it (compressed, gzip), uncompressed (-Z0) and, on 16+, with lz4
# The loads of a table alternate in a random order every round, after one warm-up; medians and
# the median of each round's COPY/fastcopy ratio; after the last round the table fastcopy loaded
# is compared with COPY's ("same"). Writes bench/results/types.md and types.svg.
#   bench/types.sh [majors...]       default: 15 16 17 18
#   ROUNDS=5 (default) SF=0.25 (default; 1 is TPC-H's SF1: 6 M lineitem rows) ONLY="mixed lineitem"
#   OUT=bench/results/types.md (the chart beside it, named after it)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-5}
sf=${SF:-0.25}
out=${OUT:-bench/results/types.md}
tmp=$(mktemp)
data="$FASTCOPY_RUN/types"

# The workloads: name|columns|SELECT producing the rows (g = 1..n)|rows
per_type=(
  "int4|v int4|(random() * 4e9 - 2e9)::int4"
  "int8|v int8|(random() * 9e18 - 4.5e18)::int8"
  "float4|v float4|((random() - 0.5) * 10 ^ (random() * 60 - 30))::float4"
  "float8|v float8|(random() - 0.5) * 10 ^ (random() * 600 - 300)"
  "numeric|v numeric|round(((random() - 0.5) * 1e12)::numeric, (random() * 8)::int)"
  "numeric(12,2)|v numeric(12,2)|round((random() * 1e8)::numeric, 2)"
  "date|v date|date '1992-01-01' + (random() * 2500)::int"
  "timestamp|v timestamp|timestamp '2000-01-01' + random() * interval '9000 days'"
  "timestamptz|v timestamptz|timestamptz '2000-01-01 UTC' + random() * interval '9000 days'"
  "bool|v bool|random() < 0.5"
  "uuid|v uuid|md5(g::text)::uuid"
  "text|v text|md5(g::text)"
  "varchar(32)|v varchar(32)|left(md5(g::text), (random() * 32)::int)"
  "char(8)|v char(8)|left(md5(g::text), 8)"
  "bytea|v bytea|decode(md5(g::text), 'hex')"
  "jsonb|v jsonb|jsonb_build_object('id', g, 'name', md5(g::text), 'ok', g % 2 = 0)"
)
lineitem_rows=$(awk -v s="$sf" 'BEGIN {printf "%d", 6000000 * s}')
orders_rows=$(awk -v s="$sf" 'BEGIN {printf "%d", 1500000 * s}')
lineitem_cols=$LINEITEM_COLS
lineitem_sql=$(lineitem_select "$sf")
orders_cols="o_orderkey int8, o_custkey int8, o_orderstatus char(1), o_totalprice numeric(15,2),
  o_orderdate date, o_orderpriority char(15), o_clerk char(15), o_shippriority int4, o_comment varchar(79)"
orders_sql="SELECT ((g - 1) / 8) * 32 + (g - 1) % 8 + 1 AS o_orderkey, 1 + (hashint4(g) & 2147483647) % ($sf * 150000)::int8 AS o_custkey,
  (ARRAY['F','O','P'])[1 + g % 3] AS o_orderstatus,
  round(((hashint4(g + 1) & 2147483647) % 50000000 / 100.0 + 850)::numeric, 2) AS o_totalprice,
  date '1992-01-01' + (hashint4(g + 2) & 2147483647) % 2405 AS o_orderdate,
  (ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW'])[1 + g % 5] AS o_orderpriority,
  'Clerk#' || lpad((1 + g % ($sf * 1000)::int)::text, 9, '0') AS o_clerk, 0 AS o_shippriority,
  left(md5(g::text) || ' furiously regular ' || md5((g * 7)::text), 19 + g % 60) AS o_comment
  FROM generate_series(1, $orders_rows) g"
mixed_cols="a int8, b float8, c text, d timestamptz, e numeric, f uuid"
mixed_sql="SELECT g::int8 * 7919 AS a, random() * 1e6 AS b, md5(g::text) || ' row ' || g AS c,
  timestamptz '2020-01-01 UTC' + g * interval '17 seconds' AS d, round((random() * 1e8)::numeric, 2) AS e,
  md5('u' || g)::uuid AS f FROM generate_series(1, 1000000) g"
mixed10_cols="a int8, b float8, c text, d timestamptz, e numeric, f uuid, g date, h bool, i float4, j timestamp"
mixed10_sql="SELECT g::int8 * 7919 AS a, random() * 1e6 AS b, md5(g::text) AS c,
  timestamptz '2020-01-01 UTC' + g * interval '17 seconds' AS d, round((random() * 1e8)::numeric, 2) AS e,
  md5('u' || g)::uuid AS f, date '2000-01-01' + g % 9000 AS g, g % 3 = 0 AS h, (random() * 1000)::float4 AS i,
  timestamp '2010-06-01' + g * interval '1.5 seconds' AS j FROM generate_series(1, 1000000) g"

# workload NAME COLUMNS SELECT FORMATS: the data files (made once per major: a major's COPY TO
# output is its own), then the rounds; appends a result row per format
workload() {
  local name=$1 cols=$2 sql=$3 formats=$4 table file fmt
  table="bt_$(echo "$name" | tr -c 'a-z0-9\n' '_')"
  psql -c "DROP TABLE IF EXISTS $table, ${table}_src, ${table}_copy" -c "CREATE UNLOGGED TABLE $table ($cols)" >/dev/null
  for fmt in $formats; do
    file="$data/pg$m-$table.$fmt"
    if [ ! -f "$file" ]; then
      psql -c "SELECT setseed(0.42)" -c "CREATE UNLOGGED TABLE ${table}_src AS $sql" \
           -c "COPY ${table}_src TO '$file' (FORMAT $fmt)" -c "DROP TABLE ${table}_src" >/dev/null
    fi
    local c=() f=() ratios=() r order l t
    for r in $(seq 0 "$rounds"); do
      for l in $(random_order 2 "$m$table$fmt$r"); do
        psql -c "TRUNCATE $table" >/dev/null
        if [ "$l" = 0 ]; then
          t=$(psql -c "SELECT bench_ms('COPY $table FROM ''$file'' (FORMAT $fmt)')")
          [ "$r" -gt 0 ] && c+=("$t")
        else
          t=$(psql -c "SELECT bench_ms('SELECT fastcopy.load(''$table'', ''$file'', format => ''$fmt'')')")
          [ "$r" -gt 0 ] && f+=("$t")
        fi
      done
    done
    # the last load of the round may be either: compare fastcopy's table with COPY's
    psql -c "TRUNCATE $table" -c "SELECT fastcopy.load('$table', '$file', format => '$fmt')" \
         -c "CREATE UNLOGGED TABLE ${table}_copy (LIKE $table)" -c "COPY ${table}_copy FROM '$file' (FORMAT $fmt)" >/dev/null
    same=$(psql -c "SELECT count(*) = 0 FROM ((TABLE $table EXCEPT ALL TABLE ${table}_copy) UNION ALL (TABLE ${table}_copy EXCEPT ALL TABLE $table)) d" 2>/dev/null || echo "?")
    psql -c "DROP TABLE ${table}_copy" >/dev/null
    for i in "${!c[@]}"; do ratios+=("$(ratio "${c[$i]}" "${f[$i]}")"); done
    local rows; rows=$(psql -c "SELECT count(*) FROM $table")
    local label=$name; [ "$fmt" = text ] || label="$name ($fmt)"
    printf '| %s | %s | %s | %.0f | %.0f | **%.2f×** | %s |\n' "$version" "$label" "$rows" \
      "$(median "${c[@]}")" "$(median "${f[@]}")" "$(median "${ratios[@]}")" "$same" | tee -a "$tmp"
    echo "$m|$label|$(median "${ratios[@]}")" >> "$tmp.svgdata"
  done
  psql -c "DROP TABLE $table" >/dev/null
}

# restore: the dump made once per major; each round restores it into a fresh database with the
# hook off and on (random order), CHECKPOINT before each; the two restored databases compared
restore() {
  local bindir conn dump r mode t t_off t_on sums=() offs=() ons=() ratios=()
  bindir=$(dirname "$(pg_config_for "$m")")
  conn=(-h "$FASTCOPY_RUN" -p "54$m" -U postgres)
  dump="$data/pg$m-restore.dump"
  psql -c "ALTER SYSTEM SET session_preload_libraries = 'fastcopy'" -c "SELECT pg_reload_conf()" >/dev/null
  psql -c "DROP DATABASE IF EXISTS bt_src" -c "CREATE DATABASE bt_src" >/dev/null
  "$bindir/psql" "${conn[@]}" -X -q -v ON_ERROR_STOP=1 -d bt_src <<SQL
SELECT setseed(0.42);
CREATE TABLE mixed AS $mixed_sql;
CREATE TABLE mixed10 AS $mixed10_sql;
CREATE TABLE lineitem AS $lineitem_sql;
CREATE TABLE orders AS $orders_sql;
SQL
  "$bindir/pg_dump" "${conn[@]}" -Fc -f "$dump" bt_src
  "$bindir/pg_dump" "${conn[@]}" -Fc -Z0 -f "$dump.z0" bt_src
  # lz4 (pg_dump 16+, built --with-lz4): a dump that is quick to decompress
  local kinds="compressed uncompressed"
  if [ "$m" -ge 16 ] && "$bindir/pg_dump" "${conn[@]}" -Fc -Z lz4 -f "$dump.lz4" bt_src 2>/dev/null; then
    kinds="$kinds lz4"
  fi
  local rows; rows=$("$bindir/psql" "${conn[@]}" -X -qAt -d bt_src -c "SELECT (SELECT count(*) FROM mixed) + (SELECT count(*) FROM mixed10) + (SELECT count(*) FROM lineitem) + (SELECT count(*) FROM orders)")
  local sum_sql="SELECT md5(string_agg(x, ',' ORDER BY x)) FROM (SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) x FROM mixed t UNION ALL SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM mixed10 t UNION ALL SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM lineitem t UNION ALL SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM orders t) s"
  local kind
  for kind in $kinds; do
  local file=$dump; [ "$kind" = uncompressed ] && file="$dump.z0"; [ "$kind" = lz4 ] && file="$dump.lz4"
  sums=(); offs=(); ons=(); ratios=(); alone=()
  for r in $(seq 0 "$rounds"); do
    # the client alone: pg_restore reading and decompressing the dump, writing SQL to
    # /dev/null. No server can make the restore shorter than this.
    local a0; a0=$(date +%s%N)
    "$bindir/pg_restore" -f /dev/null "$file"
    [ "$r" -gt 0 ] && alone+=($(( ($(date +%s%N) - a0) / 1000000 )))
    for mode in $(random_order 2 "restore$m$r"); do
      opts=""; [ "$mode" = 1 ] && opts="-c fastcopy.copy_from=require"
      psql -c "DROP DATABASE IF EXISTS bt_dst" -c "CREATE DATABASE bt_dst" -c "CHECKPOINT" >/dev/null
      "$bindir/psql" "${conn[@]}" -X -q -d bt_dst -c "CREATE EXTENSION fastcopy" >/dev/null
      local t0; t0=$(date +%s%N)
      PGOPTIONS="$opts" "$bindir/pg_restore" "${conn[@]}" -d bt_dst "$file" >/dev/null 2>&1
      t=$(( ($(date +%s%N) - t0) / 1000000 ))
      if [ "$mode" = 1 ]; then t_on=$t; else t_off=$t; fi
      [ "$r" -gt 0 ] || sums[$mode]=$("$bindir/psql" "${conn[@]}" -X -qAt -d bt_dst -c "$sum_sql")
    done
    if [ "$r" -gt 0 ]; then offs+=("$t_off"); ons+=("$t_on"); ratios+=("$(ratio "$t_off" "$t_on")"); fi
  done
  local same=f; [ -n "${sums[0]}" ] && [ "${sums[0]}" = "${sums[1]}" ] && same=t
  # the most any server could gain: COPY's restore over the client's time alone
  local floor; floor=$(median "${alone[@]}")
  local label; label=$(printf 'pg_restore, %s dump (hook off / on; pg_restore alone %.0f ms: at most %.2f×)' \
    "$kind" "$floor" "$(ratio "$(median "${offs[@]}")" "$floor")")
  printf '| %s | %s | %s | %.0f | %.0f | **%.2f×** | %s |\n' "$version" "$label" "$rows" \
    "$(median "${offs[@]}")" "$(median "${ons[@]}")" "$(median "${ratios[@]}")" "$same" | tee -a "$tmp"
  echo "$m|pg_restore ($kind)|$(median "${ratios[@]}")" >> "$tmp.svgdata"
  done
  psql -c "ALTER SYSTEM RESET session_preload_libraries" -c "SELECT pg_reload_conf()" >/dev/null
  psql -c "DROP DATABASE IF EXISTS bt_dst" -c "DROP DATABASE IF EXISTS bt_src" >/dev/null
}

only=${ONLY:-"mixed mixed10 lineitem orders types restore"}
for m in "${majors[@]}"; do
  use_major "$m" >/dev/null
  psql -c "$BENCH_MS_SQL" >/dev/null
  mkdir -p "$data"; chown "$FASTCOPY_USER" "$data" 2>/dev/null || true
  version=$(psql -c "SHOW server_version")
  for w in $only; do
    case $w in
      mixed) workload mixed "$mixed_cols" "$mixed_sql" "text binary" ;;
      mixed10) workload mixed10 "$mixed10_cols" "$mixed10_sql" "text" ;;
      lineitem) workload lineitem "$lineitem_cols" "$lineitem_sql" "text" ;;
      orders) workload orders "$orders_cols" "$orders_sql" "text" ;;
      restore) restore ;;
      types)
        for t in "${per_type[@]}"; do
          IFS='|' read -r name cols expr <<<"$t"
          workload "$name" "$cols" "SELECT $expr AS v FROM generate_series(1, 1000000) g" "text"
        done ;;
    esac
  done
  rm -f "$data"/pg"$m"-*
  echo "pg$m done"
done
{
  echo "# Speed on real tables: the common column types"
  echo
  echo "COPY FROM vs fastcopy.load, text format unless said, UNLOGGED tables, server files the server's COPY TO wrote"
  echo "(timestamptz in the cluster's TimeZone, UTC). Each round loads the table both ways in a random order after"
  echo "TRUNCATE, $rounds rounds after a warm-up; median ms; speed-up = median of the rounds' COPY/fastcopy ratios;"
  echo "\"same\": fastcopy's table equals COPY's (EXCEPT ALL both ways). lineitem and orders: TPC-H's shapes at"
  echo "SF $sf ($lineitem_rows and $orders_rows rows), dbgen's distributions approximated in SQL. One table per type: 1,000,000"
  echo "rows of one column. pg_restore: a custom-format dump of mixed, mixed10, lineitem and orders (logged, no"
  echo "indexes) restored into a fresh database with \`fastcopy.copy_from\` off and \`require\` (the hook takes every"
  echo "COPY or fails), wall time of pg_restore; the dump gzip-compressed (pg_dump -Fc's default), uncompressed (-Z0) and, on 16+, lz4-compressed; \"same\": the two restores' tables hold the same rows (md5 of each)."
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM, release build."
  echo "Run: \`make bench-types\` (\`bench/types.sh ${majors[*]}\`, $(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | table | rows | COPY ms | fastcopy ms | speed-up | same |"
  echo "|---|---|---|---|---|---|---|"
  cat "$tmp"
  echo
  echo "![types]($(basename "$out" .md).svg)"
} > "$out"
# chart: one row per table, a bar per major (speed-up; the dashed line is 1×)
speedup_chart "fastcopy.load speed-up over COPY by table (median of rounds)" "$tmp.svgdata" "${out%.md}.svg"
rm -f "$tmp" "$tmp.svgdata"
