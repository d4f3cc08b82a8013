# Shared by the benchmark scripts; sourced after scripts/env.sh, with `psql` defined for the
# cluster at hand.

# median N...: the median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# lotsaints_data [PART OF]: prints the path of the lotsaints input (2,000,000 rows of
# (g, random in ±50000, 3243423), seed 0.42), written by the server when missing; with PART OF
# only the rows with g % OF = PART (one session's share in bench/concurrent.sh).
lotsaints_data() {
  local f="$FASTCOPY_RUN/lotsaints.copy" where=""
  if [ $# -eq 2 ]; then f="$FASTCOPY_RUN/conc-$2-$1.copy"; where="WHERE g % $2 = $1"; fi
  [ -f "$f" ] || psql -c "SELECT setseed(0.42)" -c "COPY (SELECT g, (random() * 100000 - 50000)::int, 3243423
                          FROM generate_series(1, 2000000) g $where) TO '$f'" >/dev/null
  echo "$f"
}

# SQL creating bench_ms(statement): the statement's run time in ms, measured in the server.
BENCH_MS_SQL='CREATE OR REPLACE FUNCTION public.bench_ms(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN EXECUTE q; RETURN extract(epoch FROM clock_timestamp() - t0) * 1000; END $$'

# bench_majors [MAJORS...]: the majors a script was asked for, 15 16 17 18 by default.
bench_majors() { echo "${@:-15 16 17 18}"; }

# use_major M: the release build installed into PostgreSQL M, its cluster started and the
# extension created afresh; `psql` below then runs there.
use_major() {
  m=$1
  scripts/install.sh "$m"
  scripts/cluster.sh start "$m" >/dev/null
  psql -c "DROP EXTENSION IF EXISTS fastcopy CASCADE" -c "CREATE EXTENSION fastcopy"
}

# cpu_ticks: the host's cumulative CPU ticks, "total steal" (/proc/stat's first line).
cpu_ticks() { awk '/^cpu / {t = 0; for (i = 2; i <= NF; i++) t += $i; print t, $9; exit}' /proc/stat; }
# steal_pct "TOTAL0 STEAL0": the share of CPU time the hypervisor took since that cpu_ticks,
# in percent (a VM with steal time runs two-thread loads slower than one-thread COPY: record it).
steal_pct() {
  local t0 s0 t1 s1; read -r t0 s0 <<<"$1"; read -r t1 s1 <<<"$(cpu_ticks)"
  awk -v t="$((t1 - t0))" -v s="$((s1 - s0))" 'BEGIN {printf "%.1f", t ? 100 * s / t : 0}'
}
# ratio A B: A / B to 4 decimals (a round's speed-up of B over A, for `median`).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", a / b}'; }

# random_order N SEED: 0 .. N-1 in a random order that SEED fixes (a round's order of loads).
random_order() { seq 0 $(($1 - 1)) | shuf --random-source=<(yes "$2"); }

# psql ARGS...: psql on the cluster of major $m, unaligned, tuples only, stopping at an error.
psql() { scripts/cluster.sh psql "$m" -v ON_ERROR_STOP=1 -qAt "$@"; }

# dirty_data FILE [clean]: 1,000,000 rows of three ints, 1% of them (every 100th, from the
# 38th) with a value int refuses (bench/dirty.sh, bench/ab.sh's dirty workloads); with
# `clean`, the same rows with those values valid
dirty_data() {
  awk -v clean="${2:-}" 'BEGIN { srand(7); for (i = 0; i < 1000000; i++) {
         b = int(rand() * 2000000000) - 1000000000; c = int(rand() * 1000);
         if (i % 100 == 37 && clean == "") printf "%d\tx%d\t%d\n", i, b, c; else printf "%d\t%d\t%d\n", i, b, c } }' >"$1"
}
