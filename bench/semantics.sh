#!/usr/bin/env bash
# COPY vs fastcopy.load on targets that need the executor per row or per batch:
# lotsaints (2,000,000 rows of three ints) into a table partitioned by range into 4 partitions,
# a table with a foreign key, one with a stored generated column, one with a BEFORE ROW trigger
# (both loaders insert one row at a time there). Alternating, one warm-up, ROUNDS counted
# rounds (default 3), TRUNCATE before each load; medians. Writes bench/results/semantics.md.
#   [TARGETS="part brt"] bench/semantics.sh [majors...]        default: all targets, 15 16 17 18
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=($(bench_majors "$@"))
rounds=${ROUNDS:-3}
out=bench/results/semantics.md
tmp=$(mktemp)
for m in "${majors[@]}"; do
  use_major "$m"
  psql <<'SQL'
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS bsem CASCADE; CREATE SCHEMA bsem; SET search_path = bsem;
CREATE FUNCTION bump() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN NEW.b := NEW.b + 1; RETURN NEW; END';
CREATE TABLE fkp (c int PRIMARY KEY); INSERT INTO fkp VALUES (3243423);
DO $$ DECLARE s text; BEGIN FOREACH s IN ARRAY ARRAY['c', 'f'] LOOP
  EXECUTE format('CREATE TABLE part_%s (a int, b int, c int) PARTITION BY RANGE (a)', s);
  FOR i IN 0..3 LOOP
    EXECUTE format('CREATE UNLOGGED TABLE part_%s_%s PARTITION OF part_%s FOR VALUES FROM (%s) TO (%s)',
                   s, i, s, i * 500000 + 1, (i + 1) * 500000 + 1);
  END LOOP;
  EXECUTE format('CREATE TABLE fk_%s (a int, b int, c int REFERENCES fkp)', s);
  EXECUTE format('CREATE UNLOGGED TABLE gen_%s (a int, b int, c int, d bigint GENERATED ALWAYS AS (a::bigint + b) STORED)', s);
  EXECUTE format('CREATE UNLOGGED TABLE brt_%s (a int, b int, c int)', s);
  EXECUTE format('CREATE TRIGGER t BEFORE INSERT ON brt_%s FOR EACH ROW EXECUTE FUNCTION bump()', s);
END LOOP; END $$;
SQL
  psql -c "$BENCH_MS_SQL"
  data=$(lotsaints_data)
  version=$(psql -c "SHOW server_version")
  for t in ${TARGETS:-part fk gen brt}; do
    c_ms=(); f_ms=(); ratios=()
    for r in $(seq 0 "$rounds"); do
      # the order swaps every round: each side goes first equally often
      order="c f"; [ $((r % 2)) -eq 1 ] && order="f c"
      for side in $order; do
        if [ "$side" = c ]; then
          c=$(psql -c "SET search_path = bsem, public" -c "TRUNCATE ${t}_c" \
                   -c "SELECT bench_ms('COPY ${t}_c (a, b, c) FROM ''$data''')" | tail -1)
        else
          f=$(psql -c "SET search_path = bsem, public" -c "TRUNCATE ${t}_f" \
                   -c "SELECT bench_ms('SELECT fastcopy.load(''${t}_f'', ''$data'', columns => ''{a,b,c}'')')" | tail -1)
        fi
      done
      if [ "$r" -gt 0 ]; then
        c_ms+=("$c"); f_ms+=("$f")
        ratios+=("$(ratio "$c" "$f")")
      fi
      echo "pg$m $t round $r: COPY $c ms, fastcopy $f ms"
    done
    same=$(psql -c "SET search_path = bsem, public" -c "SELECT NOT EXISTS (SELECT * FROM ${t}_c EXCEPT ALL SELECT * FROM ${t}_f)
                    AND NOT EXISTS (SELECT * FROM ${t}_f EXCEPT ALL SELECT * FROM ${t}_c)" | tail -1)
    cm=$(median "${c_ms[@]}"); fm=$(median "${f_ms[@]}")
    printf '| %s | %s | %.0f | %.0f | **%.2f×** | %s |\n' "$version" "$t" "$cm" "$fm" \
      "$(median "${ratios[@]}")" "$same" | tee -a "$tmp"
    [ "$same" = t ] || { echo "semantics bench: $t differs on pg$m"; exit 1; }
  done
  psql -c "DROP SCHEMA bsem CASCADE" >/dev/null
done
{
  echo "# COPY vs fastcopy.load on tables that need the executor"
  echo
  echo "lotsaints (2,000,000 rows of three ints) into: \`part\` partitioned by range into 4 partitions"
  echo "(UNLOGGED partitions; 18 refuses an UNLOGGED partitioned table), \`fk\` with a foreign key on c (logged; the RI checks dominate), \`gen\` with a"
  echo "stored generated column (UNLOGGED), \`brt\` with a BEFORE ROW trigger (UNLOGGED; both insert"
  echo "one row at a time). Alternating, the order swapped every round, $rounds rounds after a warm-up, TRUNCATE"
  echo "before each; median ms; speed-up is the median of each round's COPY time over fastcopy's."
  echo "Machine: $(nproc) cores, $(uname -r), release build. Run: \`make bench-semantics\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | target | COPY ms | fastcopy ms | speed-up | same rows |"
  echo "|---|---|---|---|---|---|"
  cat "$tmp"
} > "$out"
rm -f "$tmp"
cat "$out"
