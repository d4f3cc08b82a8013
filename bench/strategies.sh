#!/usr/bin/env bash
# Extension strategies on lotsaints, one session: fastcopy.load with
# extend_strategy server, fixed and sticky (extend_pages 16, 64 and 512), alternating in every round,
# ROUNDS counted rounds (default 41) after one warm-up, TRUNCATE and CHECKPOINT before each load
# (untimed). Medians and the median of each round's ratio to `server` (> 1 = faster); the order
# is random, new every round.
# Writes bench/results/strategies.md.
#   bench/strategies.sh [majors...]        default: 15 16 17 18
#   VARIANTS="server 64|fixed 16|sticky 32" bench/strategies.sh 15   other strategy/pages pairs
#   (the first is the baseline of the ratios)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-41}
out=bench/results/strategies.md
IFS="|" read -r -a variants <<<"${VARIANTS:-server 64|fixed 16|sticky 16|fixed 64|sticky 64|fixed 512|sticky 512}"
tmp=$(mktemp)
for m in "${majors[@]}"; do
  use_major "$m"
  psql -c "DROP TABLE IF EXISTS lotsaints_strat" \
       -c "CREATE UNLOGGED TABLE lotsaints_strat (a int, b int, c int)" -c "$BENCH_MS_SQL"
  data=$(lotsaints_data)
  declare -A ms=() ratio=()
  nv=${#variants[@]}
  for r in $(seq 0 "$rounds"); do
    line="pg$m round $r:"
    declare -A t=()
    # A new random order every round (seeded by the round, so runs repeat it): every variant
    # takes every place, and follows every other one, about equally often (a rotation keeps
    # each variant after the same other one, and a load after another is not quite the same).
    for k in $(random_order "$nv" "$r"); do
      v=${variants[$k]}
      set -- $v
      t[$v]=$(psql -c "TRUNCATE lotsaints_strat" -c "CHECKPOINT" -c "SET fastcopy.extend_strategy = $1" \
               -c "SET fastcopy.extend_pages = $2" \
               -c "SELECT bench_ms('SELECT fastcopy.load(''lotsaints_strat'', ''$data'')')" | tail -1)
      line+=" $1/$2 ${t[$v]}"
    done
    if [ "$r" -gt 0 ]; then
      for v in "${variants[@]}"; do
        ms[$v]+="${t[$v]} "
        ratio[$v]+="$(ratio "${t[${variants[0]}]}" "${t[$v]}") "
      done
    fi
    unset t
    echo "$line"
  done
  version=$(psql -c "SHOW server_version")
  base=$(median ${ms[${variants[0]}]})
  row="| $version | $(printf '%.0f' "$base")"
  for v in "${variants[@]:1}"; do
    med=$(median ${ms[$v]})
    row+=" | $(printf '%.0f' "$med") ($(printf '%.2f' "$(median ${ratio[$v]})")×)"
  done
  echo "$row |" | tee -a "$tmp"
  unset ms ratio
done
{
  echo "# Extension strategies, one session (lotsaints)"
  echo
  echo "2,000,000 rows of (a int, b int, c int) into an UNLOGGED table by fastcopy.load, one session;"
  echo "the strategies alternate in every round, in a random order drawn anew every round, $rounds rounds after"
  echo "a warm-up, TRUNCATE and CHECKPOINT (untimed) before each load;"
  echo "median ms and, in parentheses, the median over the rounds of each round's ratio to the first column"
  echo "(above 1 = faster; a ratio within one round cancels the drift of this VM's speed). extend_method auto."
  echo "Machine: $(nproc) cores, $(uname -r), release build. Run: \`make bench-strategies\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL |$(printf ' %s |' "${variants[@]}" | sed 's/server [0-9]*/server/g')"
  echo "|---|$(printf -- '---|%.0s' "${variants[@]}")"
  cat "$tmp"
} > "$out"
rm -f "$tmp"
cat "$out"
