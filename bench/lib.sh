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

# TPC-H lineitem's shape (LINEITEM_COLS) and `lineitem_select SF`: its rows at scale factor SF
# (6,000,000 * SF rows), by dbgen's rules, approximately (bench/types.sh, bench/indexes.sh)
LINEITEM_COLS="l_orderkey int8, l_partkey int8, l_suppkey int8, l_linenumber int4,
  l_quantity numeric(15,2), l_extendedprice numeric(15,2), l_discount numeric(15,2), l_tax numeric(15,2),
  l_returnflag char(1), l_linestatus char(1), l_shipdate date, l_commitdate date, l_receiptdate date,
  l_shipinstruct char(25), l_shipmode char(10), l_comment varchar(44)"
# dbgen's rules, approximately: orders' keys sparse (8 of each 32), 1-7 lines an order, quantity
# 1-50, the price from the part's retail price, discount 0-0.10, tax 0-0.08, ship 1-121 days after
# the order date (1992-01-01 .. 1998-08-02), commit 30-90 days after it, receipt 1-30 after ship,
# return flag R/A before 1995-06-17 else N, status F/O by ship date; comments of 10-43 chars
lineitem_select() {
  local sf=$1 lineitem_rows
  lineitem_rows=$(awk -v s="$sf" 'BEGIN {printf "%d", 6000000 * s}')
  echo "SELECT (o / 8) * 32 + o % 8 + 1 AS l_orderkey,
  1 + (hashint4(g) & 2147483647) % ($sf * 200000)::int8 AS l_partkey,
  1 + (hashint4(g + 7) & 2147483647) % ($sf * 10000)::int8 AS l_suppkey,
  1 + g % 7 AS l_linenumber, q AS l_quantity,
  round(q * (900 + (g % 20000) / 10.0 + (g % 1000) / 100.0), 2) AS l_extendedprice,
  round((hashint4(g + 3) & 255) % 11 / 100.0, 2) AS l_discount,
  round((hashint4(g + 5) & 255) % 9 / 100.0, 2) AS l_tax,
  CASE WHEN s > date '1995-06-17' THEN 'N' WHEN g % 2 = 0 THEN 'R' ELSE 'A' END AS l_returnflag,
  CASE WHEN s > date '1995-06-17' THEN 'O' ELSE 'F' END AS l_linestatus,
  s AS l_shipdate, od + 30 + (g % 61) AS l_commitdate, s + 1 + (g % 30) AS l_receiptdate,
  (ARRAY['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN'])[1 + g % 4] AS l_shipinstruct,
  (ARRAY['REG AIR','AIR','RAIL','SHIP','TRUCK','MAIL','FOB'])[1 + g % 7] AS l_shipmode,
  left(md5(g::text) || ' carefully final ' || md5((g * 3)::text), 10 + g % 34) AS l_comment
  FROM (SELECT g, g / 4 AS o, (1 + (hashint4(g + 1) & 2147483647) % 50)::numeric(15,2) AS q,
               date '1992-01-01' + (hashint4(g / 4) & 2147483647) % 2405 AS od,
               date '1992-01-01' + (hashint4(g / 4) & 2147483647) % 2405 + 1 + g % 121 AS s
        FROM generate_series(1, $lineitem_rows) g) x"
}

# speedup_chart TITLE DATA OUT: an SVG bar chart into OUT of DATA's "major|row|speed-up" lines:
# one row per label, a bar per major, the dashed line at 1×
speedup_chart() {
  awk -F'|' -v title="$1" 'BEGIN { split("#2a7|#37c|#c73|#777", col, "|") }
       { if (!($2 in row)) { row[$2] = n++; name[row[$2]] = $2 }
         if (!($1 in maj)) { maj[$1] = k++; mname[maj[$1]] = $1 }
         v[row[$2], maj[$1]] = $3 + 0; if ($3 + 0 > max) max = $3 + 0 }
       END { bar = 9; gap = 8; left = 150; w = 640; top = 50
             h = top + n * (k * bar + gap) + 30; scale = (w - left - 60) / (max < 1 ? 1 : max)
             print "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" w "\" height=\"" h "\" font-family=\"sans-serif\" font-size=\"11\">"
             print "<text x=\"10\" y=\"18\" font-size=\"14\">" title "</text>"
             for (j = 0; j < k; j++) printf "<rect x=\"%d\" y=\"28\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"37\">PostgreSQL %s</text>\n", 10 + j * 120, col[j + 1], 24 + j * 120, mname[j]
             for (i = 0; i < n; i++) { y = top + i * (k * bar + gap)
               printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left - 6, y + k * bar / 2 + 4, name[i]
               for (j = 0; j < k; j++) if ((i, j) in v) {
                 printf "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", left, y + j * bar, v[i, j] * scale, bar - 1, col[j + 1]
                 printf "<text x=\"%.1f\" y=\"%d\" font-size=\"9\">%.2f</text>\n", left + v[i, j] * scale + 3, y + j * bar + bar - 1, v[i, j] } }
             printf "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#000\" stroke-dasharray=\"4 3\"/>\n", left + scale, left + scale, top - 4, h - 20
             printf "<text x=\"%.1f\" y=\"%d\">1×</text>\n", left + scale - 6, h - 6
             print "</svg>" }' "$2" > "$3"
}
