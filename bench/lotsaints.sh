#!/usr/bin/env bash
# lotsaints: 2,000,000 rows of (a int, b int, c int) — a = 1..2000000, b random in
# ±50000, c = 3243423 — into an UNLOGGED table, COPY FROM vs fastcopy.load, alternating, one
# warm-up each, ROUNDS counted rounds each, TRUNCATE (own transaction) before every load.
# Release build, throwaway cluster per major. Prints medians and the ratio, checks that both
# tables hold the same rows, and writes bench/results/lotsaints.md. A third load per round,
# with on_error => 'ignore', shows what that option costs on clean input.
#
#   bench/lotsaints.sh [majors...]        default: 15 16 17 18; ROUNDS=5 by default
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-5}
out=bench/results/lotsaints.md
mkdir -p bench/results
tmp=$(mktemp)
for m in "${majors[@]}"; do
  use_major "$m"
  psql -c "DROP TABLE IF EXISTS lotsaints_copy, lotsaints_fast, lotsaints_ign" \
       -c "CREATE UNLOGGED TABLE lotsaints_copy (a int, b int, c int)" \
       -c "CREATE UNLOGGED TABLE lotsaints_fast (a int, b int, c int)" \
       -c "CREATE UNLOGGED TABLE lotsaints_ign (a int, b int, c int)" -c "$BENCH_MS_SQL"
  data=$(lotsaints_data)
  copy_ms=(); fast_ms=(); ign_ms=()
  for r in $(seq 0 "$rounds"); do
    psql -c "TRUNCATE lotsaints_copy"
    c=$(psql -c "SELECT bench_ms('COPY lotsaints_copy FROM ''$data''')")
    psql -c "TRUNCATE lotsaints_fast"
    f=$(psql -c "SELECT bench_ms('SELECT fastcopy.load(''lotsaints_fast'', ''$data'')')")
    psql -c "TRUNCATE lotsaints_ign"
    i=$(psql -c "SELECT bench_ms('SELECT fastcopy.load(''lotsaints_ign'', ''$data'', on_error => ''ignore'')')")
    if [ "$r" -gt 0 ]; then copy_ms+=("$c"); fast_ms+=("$f"); ign_ms+=("$i"); fi
    echo "pg$m round $r: COPY ${c} ms, fastcopy.load ${f} ms, with on_error ignore ${i} ms"
  done
  same=$(psql -c "SELECT NOT EXISTS (SELECT * FROM lotsaints_copy EXCEPT ALL SELECT * FROM lotsaints_fast)
                  AND NOT EXISTS (SELECT * FROM lotsaints_fast EXCEPT ALL SELECT * FROM lotsaints_copy)
                  AND (SELECT count(*) FROM lotsaints_fast) = 2000000
                  AND NOT EXISTS (SELECT * FROM lotsaints_ign EXCEPT ALL SELECT * FROM lotsaints_fast)
                  AND (SELECT count(*) FROM lotsaints_ign) = 2000000")
  version=$(psql -c "SHOW server_version")
  cm=$(median "${copy_ms[@]}"); fm=$(median "${fast_ms[@]}"); im=$(median "${ign_ms[@]}")
  ratio=$(awk -v c="$cm" -v f="$fm" 'BEGIN {printf "%.2f", c / f}')
  echo "pg$m: COPY median ${cm} ms, fastcopy.load median ${fm} ms, ratio ${ratio}x, identical rows: $same"
  echo "$version $cm $fm" >> "$tmp.svgdata"
  printf '| %s | %.0f | %.0f | %.2f M | %.2f M | **%s×** | %.0f (%+.1f%%) | %s |\n' "$version" "$cm" "$fm" \
    "$(awk -v c="$cm" 'BEGIN{print 2/(c/1000)}')" "$(awk -v f="$fm" 'BEGIN{print 2/(f/1000)}')" "$ratio" \
    "$im" "$(awk -v i="$im" -v f="$fm" 'BEGIN{print (i / f - 1) * 100}')" "$same" >> "$tmp"
  [ "$same" = "t" ] || { echo "lotsaints: tables differ on pg$m"; exit 1; }
done
{
  echo "# lotsaints: COPY FROM vs fastcopy.load"
  echo
  echo "2,000,000 rows of (a int, b int, c int) into an UNLOGGED table, server file, $rounds rounds each after one warm-up,"
  echo "alternating, TRUNCATE before every load; medians. Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM,"
  echo "$(uname -r), shared_buffers 1GB, release build. Run: \`make bench-lotsaints\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | COPY ms | fastcopy ms | COPY rows/s | fastcopy rows/s | speed-up | fastcopy on_error ignore ms (vs stop) | same rows |"
  echo "|---|---|---|---|---|---|---|---|"
  cat "$tmp"
} > "$out"
# bar chart: million rows/s per version, COPY vs fastcopy.load
awk 'BEGIN { w = 560; h = 300; print "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" w "\" height=\"" h "\" font-family=\"sans-serif\" font-size=\"12\">";
             print "<text x=\"10\" y=\"18\" font-size=\"14\">lotsaints: million rows/s (median), COPY vs fastcopy.load</text>";
             print "<rect x=\"380\" y=\"30\" width=\"12\" height=\"12\" fill=\"#999\"/><text x=\"396\" y=\"41\">COPY</text>";
             print "<rect x=\"450\" y=\"30\" width=\"12\" height=\"12\" fill=\"#2a7\"/><text x=\"466\" y=\"41\">fastcopy</text>"; n = 0 }
     { v[n] = $1; c[n] = 2 / ($2 / 1000); f[n] = 2 / ($3 / 1000); if (f[n] > max) max = f[n]; if (c[n] > max) max = c[n]; n++ }
     END { base = 260; scale = 190 / max;
           for (i = 0; i < n; i++) { x = 40 + i * 170;
             printf "<rect x=\"%d\" y=\"%.1f\" width=\"60\" height=\"%.1f\" fill=\"#999\"/>\n", x, base - c[i] * scale, c[i] * scale;
             printf "<text x=\"%d\" y=\"%.1f\">%.2f</text>\n", x + 12, base - c[i] * scale - 4, c[i];
             printf "<rect x=\"%d\" y=\"%.1f\" width=\"60\" height=\"%.1f\" fill=\"#2a7\"/>\n", x + 64, base - f[i] * scale, f[i] * scale;
             printf "<text x=\"%d\" y=\"%.1f\">%.2f</text>\n", x + 76, base - f[i] * scale - 4, f[i];
             printf "<text x=\"%d\" y=\"%d\">PostgreSQL %s (%.2fx)</text>\n", x, base + 18, v[i], f[i] / c[i] }
           print "</svg>" }' "$tmp.svgdata" > bench/results/lotsaints.svg
echo >> "$out"
echo "![lotsaints](lotsaints.svg)" >> "$out"
rm -f "$tmp" "$tmp.svgdata"
cat "$out"
