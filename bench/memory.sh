#!/usr/bin/env bash
# Memory (SPEC §4): peak RSS of the loading backend during a ~1 GB fastcopy.load at default
# settings, against the same backend before the load. Writes bench/results/memory.md.
#   bench/memory.sh [major]          default 17; SIZE_ROWS=24000000 by default (~1 GB)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
rows=${SIZE_ROWS:-24000000}
use_major "${1:-17}"
data="$FASTCOPY_RUN/memory.copy"
psql -c "DROP TABLE IF EXISTS mem_t" -c "CREATE UNLOGGED TABLE mem_t (a bigint, b int, c text)"
[ -f "$data" ] || psql -c "COPY (SELECT g, g % 100000, md5(g::text) FROM generate_series(1, $rows) g) TO '$data'"
size=$(stat -c %s "$data")
# one session: note the baseline, load, read the high-water marks from /proc
status="SELECT (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+)'))[1] || ' ' || (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'RssAnon:\s+(\d+)'))[1]"
out=$(psql -c "SELECT fastcopy.load_data('mem_t', E'1\t2\tx\n')" -c "$status" \
          -c "SELECT rows_loaded FROM fastcopy.load('mem_t', '$data')" -c "$status")
echo "$out"
before=$(sed -n 2p <<<"$out" | awk '{print $1}'); after=$(sed -n 4p <<<"$out" | awk '{print $1}')
anon_after=$(sed -n 4p <<<"$out" | awk '{print $2}')
growth=$(( (after - before) / 1024 ))
{
  echo "# Memory of one fastcopy.load"
  echo
  echo "$(awk -v s="$size" 'BEGIN{printf "%.2f GB", s/1e9}') file ($rows rows of bigint, int, text(32)), default settings"
  echo "(max_buffered_tuples 1000, max_buffered_bytes 64kB), PostgreSQL $(psql -c 'SHOW server_version'), shared_buffers 1GB."
  echo "Backend peak RSS (VmHWM) before the load: $((before / 1024)) MB, after: $((after / 1024)) MB: **+$growth MB** (target < 64 MB)."
  echo "Private memory after the load (RssAnon): $((anon_after / 1024)) MB. Run: \`bench/memory.sh $m\` ($(date -u +%Y-%m-%d))."
} > bench/results/memory.md
cat bench/results/memory.md
psql -c "DROP TABLE mem_t"
rm -f "$data"
