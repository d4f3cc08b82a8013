#!/usr/bin/env bash
# COPY statements from real clients, fastcopy.copy_from off vs on, alternating in one server
# (release build): wall time measured around the client.
#   1. psql \copy of lotsaints (2,000,000 rows of three ints, UNLOGGED table, client-side file);
#   2. pgbench -i -s $SCALE: pgbench's own "generate" time (COPY pgbench_accounts FROM STDIN
#      WITH (FREEZE ON)), taken from its -q output;
#   3. pg_restore of a dump of several tables (~DUMP_ROWS rows in all, indexes and a foreign key
#      created after the data, as pg_dump orders it), total wall time, into a fresh database.
# Median of per-round ratios off/on (> 1: on is faster). Writes bench/results/client.md.
#   bench/client.sh [majors...]     ROUNDS=5 SCALE=50 DUMP_ROWS=20000000 by default; RESTORE=0
#                                   leaves out the pg_restore part
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-5}
scale=${SCALE:-50}
dump_rows=${DUMP_ROWS:-20000000}
out=${OUT:-bench/results/client.md}
mkdir -p bench/results
tmp=$(mktemp)
on_opts="-c fastcopy.copy_from=on"
# two X: a ratio with two decimals (a dash stays one)
two() { if [ "$1" = "–" ]; then echo "–"; else printf '%.2f' "$1"; fi; }
# ms COMMAND...: wall time of a command, in ms
ms() { local t0; t0=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - t0) / 1000000 )); }
for m in "${majors[@]}"; do
  use_major "$m"
  bindir=$(dirname "$(pg_config_for "$m")")
  conn=(-h "$FASTCOPY_RUN" -p "54$m" -U postgres)
  # every session loads the library, so that the only difference is the setting
  psql -c "ALTER SYSTEM SET session_preload_libraries = 'fastcopy'" -c "SELECT pg_reload_conf()" >/dev/null
  data=$(lotsaints_data)
  client_copy="$FASTCOPY_RUN/client-lotsaints.copy"; cp "$data" "$client_copy"; chmod a+r "$client_copy"
  psql -c "DROP TABLE IF EXISTS cl_lots" -c "CREATE UNLOGGED TABLE cl_lots (a int, b int, c int)"
  copy_ratios=(); copy_off=(); copy_on=()
  pgb_ratios=(); pgb_off=(); pgb_on=()
  for r in $(seq 0 "$rounds"); do
    for mode in $(random_order 2 "$m$r"); do
      opts=""; [ "$mode" = 1 ] && opts=$on_opts
      psql -c "TRUNCATE cl_lots"
      t=$(PGOPTIONS="$opts" ms "$bindir/psql" "${conn[@]}" -X -q -c "\\copy cl_lots FROM '$client_copy'")
      if [ "$mode" = 1 ]; then t_on=$t; else t_off=$t; fi
    done
    for mode in $(random_order 2 "p$m$r"); do
      opts=""; [ "$mode" = 1 ] && opts=$on_opts
      g=$(PGOPTIONS="$opts" "$bindir/pgbench" "${conn[@]}" -i -q -s "$scale" postgres 2>&1 |
          sed -nE 's/.*client-side generate ([0-9.]+) s.*/\1/p')
      g=$(awk -v s="$g" 'BEGIN {printf "%.0f", s * 1000}')
      if [ "$mode" = 1 ]; then g_on=$g; else g_off=$g; fi
    done
    echo "pg$m round $r: \\copy off ${t_off} ms, on ${t_on} ms; pgbench -i -s $scale generate off ${g_off} ms, on ${g_on} ms"
    if [ "$r" -gt 0 ]; then
      copy_off+=("$t_off"); copy_on+=("$t_on"); copy_ratios+=("$(ratio "$t_off" "$t_on")")
      pgb_off+=("$g_off"); pgb_on+=("$g_on"); pgb_ratios+=("$(ratio "$g_off" "$g_on")")
    fi
  done
  rs_ratios=(–); rs_off=(–); rs_on=(–); dump_mb=0
  if [ "${RESTORE:-1}" = 1 ]; then
  rs_ratios=(); rs_off=(); rs_on=(); restored=()
  # pg_restore: a source database, dumped once; each round restores it into a fresh database
  dump="$FASTCOPY_RUN/client-$m.dump"
  if [ ! -f "$dump" ]; then
    psql -c "DROP DATABASE IF EXISTS cl_src" -c "CREATE DATABASE cl_src"
    "$bindir/psql" "${conn[@]}" -X -q -v ON_ERROR_STOP=1 -d cl_src <<SQL
CREATE EXTENSION fastcopy;
CREATE TABLE customers (id int PRIMARY KEY, name text, created date);
CREATE TABLE orders (id bigint PRIMARY KEY, customer int REFERENCES customers, amount numeric(12,2), placed timestamptz, note text);
CREATE TABLE events (id bigint, kind int, payload text);
CREATE INDEX ON events (kind);
INSERT INTO customers SELECT g, 'customer ' || g, date '2020-01-01' + g % 1000 FROM generate_series(1, $dump_rows / 20) g;
INSERT INTO orders SELECT g, 1 + g % ($dump_rows / 20), (g % 100000) / 100.0, timestamptz '2024-01-01' + g * interval '1 s', CASE WHEN g % 7 = 0 THEN 'gift' END FROM generate_series(1, $dump_rows / 2) g;
INSERT INTO events SELECT g, g % 17, md5(g::text) FROM generate_series(1, $dump_rows * 9 / 20) g;
SQL
    "$bindir/pg_dump" "${conn[@]}" -Fc -f "$dump" cl_src
  fi
  dump_mb=$(( $(psql -c "SELECT pg_database_size('cl_src')" 2>/dev/null || echo 0) / 1048576 ))
  for r in $(seq 1 "$rounds"); do
    for mode in $(random_order 2 "r$m$r"); do
      opts=""; [ "$mode" = 1 ] && opts=$on_opts
      psql -c "DROP DATABASE IF EXISTS cl_dst" -c "CREATE DATABASE cl_dst"
      psql -c "CHECKPOINT"
      t=$(PGOPTIONS="$opts" ms "$bindir/pg_restore" "${conn[@]}" -d cl_dst "$dump")
      if [ "$mode" = 1 ]; then r_on=$t; else r_off=$t; fi
      restored[$mode]=$(psql -d cl_dst -c "SELECT (SELECT md5(string_agg(t::text, ',' ORDER BY id)) FROM orders t)")
    done
    # the server's restore (off) and fastcopy's (on) hold the same rows
    [ "${restored[0]}" = "${restored[1]}" ] || { echo "client: pg_restore with fastcopy differs from the server's on pg$m"; exit 1; }
    echo "pg$m pg_restore round $r: off ${r_off} ms, on ${r_on} ms"
    rs_off+=("$r_off"); rs_on+=("$r_on"); rs_ratios+=("$(ratio "$r_off" "$r_on")")
  done
  # and the source, when the database the dump was made of is still there (a dump kept from an
  # earlier run may outlive it)
  src=$("$bindir/psql" "${conn[@]}" -X -qAt -d cl_src -c "SELECT (SELECT md5(string_agg(t::text, ',' ORDER BY id)) FROM orders t)" 2>/dev/null || true)
  [ -z "$src" ] || [ "${restored[1]}" = "$src" ] || { echo "client: restored orders differ from the source on pg$m"; exit 1; }
  fi   # RESTORE
  psql -c "ALTER SYSTEM RESET session_preload_libraries" -c "SELECT pg_reload_conf()" >/dev/null
  version=$(psql -c "SHOW server_version")
  printf '| %s | %s | %s | **%s×** | %s | %s | **%s×** | %s | %s | **%s×** |\n' "$version" \
    "$(median "${copy_off[@]}")" "$(median "${copy_on[@]}")" "$(two "$(median "${copy_ratios[@]}")")" \
    "$(median "${pgb_off[@]}")" "$(median "${pgb_on[@]}")" "$(two "$(median "${pgb_ratios[@]}")")" \
    "$(median "${rs_off[@]}")" "$(median "${rs_on[@]}")" "$(two "$(median "${rs_ratios[@]}")")" >> "$tmp"
  echo "pg$m: $(tail -1 "$tmp")"
  echo "$version $(median "${copy_ratios[@]}") $(median "${pgb_ratios[@]}") $(median "${rs_ratios[@]}")" >> "$tmp.svgdata"
done
{
  echo "# COPY statements from clients: fastcopy.copy_from off vs on"
  echo
  echo "Wall time around the client, ms; off and on alternate in random order, $rounds rounds (after one warm-up for"
  echo "\\copy and pgbench); speed-up = median of per-round off/on ratios. psql \\copy: lotsaints (2,000,000 rows of"
  echo "three ints, UNLOGGED). pgbench -i -s $scale: its \"generate\" time (COPY pgbench_accounts FROM STDIN WITH (FREEZE ON)"
  if [ "${RESTORE:-1}" = 1 ]; then
    echo "of $((scale * 100000)) rows). pg_restore: a custom-format dump of three tables ($dump_rows rows, about ${dump_mb} MB"
    echo "as a database; primary keys, a foreign key and an index created after the data), into a fresh database."
  else
    echo "of $((scale * 100000)) rows). pg_restore: not run (RESTORE=0)."
  fi
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM, release build."
  echo "Run: \`make bench-client\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | \\copy off | \\copy on | speed-up | pgbench -i generate off | on | speed-up | pg_restore off | on | speed-up |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  cat "$tmp"
  echo
  echo "![client](client.svg)"
} > "$out"
# bar chart: speed-up (off/on, median of the rounds' ratios) per major and client; a pg_restore
# left out (RESTORE=0) has no bar
awk 'BEGIN { w = 620; h = 300; base = 250; split("\\copy lotsaints|pgbench -i generate|pg_restore", lab, "|");
             split("#2a7|#37c|#c73", col, "|");
             print "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" w "\" height=\"" h "\" font-family=\"sans-serif\" font-size=\"12\">";
             print "<text x=\"10\" y=\"18\" font-size=\"14\">COPY from clients: speed-up with fastcopy.copy_from = on (median)</text>";
             for (k = 1; k <= 3; k++) printf "<rect x=\"%d\" y=\"30\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"41\">%s</text>\n", 10 + (k - 1) * 170, col[k], 26 + (k - 1) * 170, lab[k];
             n = 0; max = 1 }
     { v[n] = $1; for (k = 1; k <= 3; k++) { r[n, k] = $(k + 1) + 0; if (r[n, k] > max) max = r[n, k] } n++ }
     END { scale = 180 / max;
           printf "<line x1=\"30\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-dasharray=\"4 3\"/><text x=\"2\" y=\"%.1f\">1×</text>\n", w - 10, base - scale, base - scale, base - scale + 4;
           for (i = 0; i < n; i++) { x = 40 + i * 145;
             for (k = 1; k <= 3; k++) { if (r[i, k] <= 0) continue; bx = x + (k - 1) * 40;
               printf "<rect x=\"%d\" y=\"%.1f\" width=\"36\" height=\"%.1f\" fill=\"%s\"/>\n", bx, base - r[i, k] * scale, r[i, k] * scale, col[k];
               printf "<text x=\"%d\" y=\"%.1f\" font-size=\"11\">%.2f</text>\n", bx + 2, base - r[i, k] * scale - 4, r[i, k] }
             printf "<text x=\"%d\" y=\"%d\">PostgreSQL %s</text>\n", x, base + 18, v[i] }
           print "</svg>" }' "$tmp.svgdata" > "$(dirname "$out")/client.svg"
rm -f "$tmp" "$tmp.svgdata"
cat "$out"
