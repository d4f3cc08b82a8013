#!/usr/bin/env bash
# The binary format: lotsaints as a binary file (COPY FROM binary vs fastcopy.load binary), and a
# mixed-type table (int8, float8, text, timestamptz, numeric, uuid; 1,000,000 rows) in binary and
# in text, COPY vs fastcopy each. UNLOGGED tables, server files written by the server's COPY TO;
# the loads of a table in a random order every round, one warm-up, ROUNDS rounds (7); medians
# and the median of each round's ratio. Writes bench/results/binary.md.
#   bench/binary.sh [majors...]        default: 15 16 17 18
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-7}
out=bench/results/binary.md
tmp=$(mktemp)

# run_set TABLE "LABEL|FORMAT|FILE|CALL"...: each load's times (after the warm-up) in ms["LABEL"]
run_set() {
  local table=$1; shift
  local loads=("$@") n=$#
  for r in $(seq 0 "$rounds"); do
    for l in $(random_order "$n" "$m$table$r"); do
      IFS='|' read -r label fmt file call <<<"${loads[$l]}"
      psql -c "TRUNCATE $table"
      if [ "$call" = copy ]; then sql="COPY $table FROM ''$file'' WITH (FORMAT $fmt)"
      else sql="SELECT fastcopy.load(''$table'', ''$file'', format => ''$fmt'')"; fi
      t=$(psql -c "SELECT bench_ms('$sql')")
      [ "$r" -gt 0 ] && ms["$label"]+="$t "
    done
  done
}

# cells COPY_LABEL FAST_LABEL: "| copy ms | fastcopy ms | **ratio×**"
cells() {
  local c=(${ms["$1"]}) f=(${ms["$2"]}) ratios=()
  for i in "${!c[@]}"; do ratios+=("$(ratio "${c[$i]}" "${f[$i]}")"); done
  printf ' | %.0f | %.0f | **%.2f×**' "$(median "${c[@]}")" "$(median "${f[@]}")" "$(median "${ratios[@]}")"
}

for m in "${majors[@]}"; do
  use_major "$m"
  psql -c "DROP TABLE IF EXISTS bin_ints, bin_mixed, bin_mixed_src" -c "$BENCH_MS_SQL" \
       -c "CREATE UNLOGGED TABLE bin_ints (a int, b int, c int)" \
       -c "CREATE UNLOGGED TABLE bin_mixed (a int8, b float8, c text, d timestamptz, e numeric, f uuid)"
  ints_text=$(lotsaints_data)
  ints_bin="$FASTCOPY_RUN/lotsaints.bin"
  mixed_bin="$FASTCOPY_RUN/mixed.bin"
  mixed_text="$FASTCOPY_RUN/mixed.copy"
  [ -f "$ints_bin" ] || psql -c "COPY bin_ints FROM '$ints_text'" -c "COPY bin_ints TO '$ints_bin' (FORMAT binary)"
  if [ ! -f "$mixed_bin" ] || [ ! -f "$mixed_text" ]; then
    psql -c "SELECT setseed(0.42)" -c "CREATE UNLOGGED TABLE bin_mixed_src AS
      SELECT g::int8 * 7919 AS a, random() * 1e6 AS b, md5(g::text) || ' row ' || g AS c,
             timestamptz '2020-01-01 UTC' + g * interval '17 seconds' AS d,
             round((random() * 1e8)::numeric, 2) AS e,
             md5('u' || g)::uuid AS f
      FROM generate_series(1, 1000000) g" \
      -c "COPY bin_mixed_src TO '$mixed_bin' (FORMAT binary)" -c "COPY bin_mixed_src TO '$mixed_text'" \
      -c "DROP TABLE bin_mixed_src"
  fi
  declare -A ms=()
  run_set bin_ints "copy|binary|$ints_bin|copy" "fast|binary|$ints_bin|fast"
  run_set bin_mixed "copy bin|binary|$mixed_bin|copy" "fast bin|binary|$mixed_bin|fast" \
                    "copy text|text|$mixed_text|copy" "fast text|text|$mixed_text|fast"
  version=$(psql -c "SHOW server_version")
  echo "| $version$(cells copy fast)$(cells "copy bin" "fast bin")$(cells "copy text" "fast text") |" | tee -a "$tmp"
  echo "pg$m done"
  unset ms
done
{
  echo "# The binary format"
  echo
  echo "lotsaints as a binary file (2,000,000 rows of (a int, b int, c int), 52 MB; 43 MB as text) and a mixed-type table"
  echo "(int8, float8, text, timestamptz, numeric, uuid; 1,000,000 rows; 123 MB binary, 145 MB text), into UNLOGGED"
  echo "tables from server files the server's COPY TO wrote. COPY FROM vs fastcopy.load with the same FORMAT, the"
  echo "loads of one table in a random order every round, $rounds rounds after a warm-up, TRUNCATE before each;"
  echo "median ms, speed-up the median of each round's COPY/fastcopy ratio. Release build."
  echo "Run: \`bench/binary.sh\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | lotsaints binary: COPY ms | fastcopy ms | speed-up | mixed binary: COPY ms | fastcopy ms | speed-up | mixed text: COPY ms | fastcopy ms | speed-up |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  cat "$tmp"
} > "$out"
rm -f "$tmp"
