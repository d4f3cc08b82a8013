#!/usr/bin/env bash
# Memory: peak RSS of the loading backend during a ~1 GB fastcopy.load at default
# settings, against the same backend before the load; COPY FROM of the same file in a session
# of its own beside it. Writes bench/results/memory.md, one row per major.
#   bench/memory.sh [major...]       default 17; SIZE_ROWS=24000000 by default (~1 GB)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
rows=${SIZE_ROWS:-24000000}
majors=(${@:-17})
tmp=$(mktemp)
# VmHWM (peak RSS, shared buffers it touched included) and RssAnon of the session's backend, kB
status="SELECT 'status ' || (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+)'))[1] || ' ' || (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'RssAnon:\s+(\d+)'))[1]"
# one session: a small load first (the extension and its caches in), the baseline, the load,
# the high-water marks again; prints "growth_MB anon_after_MB"
measure() {
  local out before after anon
  out=$(psql -c "SELECT fastcopy.load_data('mem_t', E'1\t2\tx\n')" -c "$status" -c "$1" -c "$status")
  before=$(grep '^status ' <<<"$out" | sed -n 1p | awk '{print $2}')
  after=$(grep '^status ' <<<"$out" | sed -n 2p | awk '{print $2}')
  anon=$(grep '^status ' <<<"$out" | sed -n 2p | awk '{print $3}')
  echo "$(( (after - before) / 1024 )) $(( anon / 1024 )) $(( before / 1024 )) $(( after / 1024 ))"
}
for m in "${majors[@]}"; do
  use_major "$m"
  data="$FASTCOPY_RUN/memory.copy"
  psql -c "DROP TABLE IF EXISTS mem_t" -c "CREATE UNLOGGED TABLE mem_t (a bigint, b int, c text)"
  [ -f "$data" ] || psql -c "COPY (SELECT g, g % 100000, md5(g::text) FROM generate_series(1, $rows) g) TO '$data'"
  size=$(stat -c %s "$data")
  read -r fc_growth fc_anon fc_before fc_after < <(measure "SELECT rows_loaded FROM fastcopy.load('mem_t', '$data')")
  loaded=$(psql -c "SELECT count(*) FROM mem_t")
  psql -c "TRUNCATE mem_t"
  read -r copy_growth copy_anon _ _ < <(measure "COPY mem_t FROM '$data'")
  [ "$loaded" = "$(psql -c "SELECT count(*) FROM mem_t")" ] || { echo "memory: row counts differ"; exit 1; }
  echo "| $(psql -c 'SHOW server_version') | $(awk -v s="$size" 'BEGIN{printf "%.2f", s/1e9}') | $loaded | $fc_before → $fc_after | **+$fc_growth** | $fc_anon | +$copy_growth | $copy_anon |" | tee -a "$tmp"
  psql -c "DROP TABLE mem_t"
done
rm -f "$FASTCOPY_RUN/memory.copy"
{
  echo "# Memory of one fastcopy.load"
  echo
  echo "A ~1 GB file ($rows rows of bigint, int, text(32)) into an UNLOGGED table at default settings"
  echo "(max_buffered_tuples 1000, max_buffered_bytes 64kB), shared_buffers 1GB, release build. Peak RSS"
  echo "(VmHWM, which counts the shared buffers the backend touched) of the loading backend before and after"
  echo "the load, in a session of its own; COPY FROM of the same file in another session for comparison."
  echo "Target: fastcopy raises the backend's peak RSS by < 64 MB. Run: \`bench/memory.sh ${majors[*]}\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | GB | rows in the table (1 + the file) | fastcopy VmHWM MB before → after | fastcopy growth MB | fastcopy RssAnon MB after | COPY growth MB | COPY RssAnon MB after |"
  echo "|---|---|---|---|---|---|---|---|"
  cat "$tmp"
} > bench/results/memory.md
rm -f "$tmp"
cat bench/results/memory.md
