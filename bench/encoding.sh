#!/usr/bin/env bash
# lotsaints (ASCII) without and with an encoding conversion: COPY FROM vs fastcopy.load, each
# with ENCODING 'UTF8' (the database's: the reader checks UTF-8) and ENCODING 'LATIN1' (the
# server's LATIN1 → UTF8 conversion, on the backend thread for fastcopy), the four loads in
# a random order every round, one warm-up, ROUNDS rounds (7); medians and the median of each
# round's ratio. Writes bench/results/encoding.md.
#   bench/encoding.sh [majors...]        default: 15 16 17 18
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-7}
out=bench/results/encoding.md
tmp=$(mktemp)
for m in "${majors[@]}"; do
  use_major "$m"
  psql -c "DROP TABLE IF EXISTS enc_t" -c "CREATE UNLOGGED TABLE enc_t (a int, b int, c int)" -c "$BENCH_MS_SQL"
  data=$(lotsaints_data)
  declare -A ms=()
  loads=("copy UTF8" "copy LATIN1" "fast UTF8" "fast LATIN1")
  for r in $(seq 0 "$rounds"); do
    for l in $(printf '%s\n' 0 1 2 3 | shuf); do
      set -- ${loads[$l]}
      psql -c "TRUNCATE enc_t"
      if [ "$1" = copy ]; then sql="COPY enc_t FROM ''$data'' WITH (ENCODING ''$2'')"
      else sql="SELECT fastcopy.load(''enc_t'', ''$data'', encoding => ''$2'')"; fi
      t=$(psql -c "SELECT bench_ms('$sql')")
      [ "$r" -gt 0 ] && ms["$1 $2"]+="$t "
    done
    echo "pg$m round $r done"
  done
  version=$(psql -c "SHOW server_version")
  row="| $version"
  for enc in UTF8 LATIN1; do
    c=(${ms["copy $enc"]}); f=(${ms["fast $enc"]})
    ratios=(); for i in "${!c[@]}"; do ratios+=("$(awk -v a="${c[$i]}" -v b="${f[$i]}" 'BEGIN{printf "%.3f", a/b}')"); done
    row+=" | $(printf '%.0f' "$(median "${c[@]}")") | $(printf '%.0f' "$(median "${f[@]}")") | **$(printf '%.2f' "$(median "${ratios[@]}")")×**"
  done
  echo "$row |" | tee -a "$tmp"
  unset ms
done
{
  echo "# Encodings: lotsaints without and with a conversion"
  echo
  echo "2,000,000 rows of (a int, b int, c int) (ASCII) into an UNLOGGED table of a UTF8 database, server file, read"
  echo "with ENCODING 'UTF8' (no conversion) and ENCODING 'LATIN1' (the server's LATIN1 → UTF8 conversion); COPY"
  echo "and fastcopy.load, the four loads in a random order every round, $rounds rounds after a warm-up, TRUNCATE"
  echo "before each; median ms, speed-up the median of each round's COPY/fastcopy ratio. Release build."
  echo "Run: \`bench/encoding.sh\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | COPY UTF8 ms | fastcopy UTF8 ms | speed-up | COPY LATIN1 ms | fastcopy LATIN1 ms | speed-up |"
  echo "|---|---|---|---|---|---|---|"
  cat "$tmp"
} > "$out"
rm -f "$tmp"
