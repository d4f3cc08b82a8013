#!/usr/bin/env bash
# Parser benchmark: the fastcopy integer parser vs the server's own pg_strtoint*,
# in the same backend on the same strings (fastcopy.bench_int_parser), per input class.
# Release build, throwaway cluster per major. Writes bench/results/parse.md.
#
#   bench/parse.sh [majors...]       default: 15 16 17 18
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
export FASTCOPY_FEATURES=bench  # fastcopy.bench_int_parser
majors=($(bench_majors "$@"))
out=bench/results/parse.md
mkdir -p bench/results
tmp=$(mktemp)
for m in "${majors[@]}"; do
  use_major "$m"
  version=$(psql -c "SHOW server_version")
  classes=(
    "int4 canonical, mixed lengths|32|SELECT array_agg(((random() * 2 - 1) * 10 ^ (random() * 9.3))::int::text) FROM generate_series(1, 100000)"
    "int4 canonical, 1-3 digits|32|SELECT array_agg((random() * 999)::int::text) FROM generate_series(1, 100000)"
    "int4 canonical, 9-10 digits|32|SELECT array_agg((100000000 + random() * 2000000000)::int::text) FROM generate_series(1, 100000)"
    "int2 canonical|16|SELECT array_agg(((random() * 2 - 1) * 32767)::int2::text) FROM generate_series(1, 100000)"
    "int8 canonical, mixed lengths|64|SELECT array_agg(((random() * 2 - 1) * 10 ^ (random() * 18.9))::int8::text) FROM generate_series(1, 100000)"
    "int4 leading/trailing spaces|32|SELECT array_agg('  ' || ((random() * 2 - 1) * 10 ^ (random() * 9.3))::int || ' ') FROM generate_series(1, 100000)"
    "int4 with + sign|32|SELECT array_agg('+' || (random() * 10 ^ (random() * 9.3))::int) FROM generate_series(1, 100000)"
  )
  if [ "$m" -ge 16 ]; then
    classes+=(
      "int4 underscores (16+)|32|SELECT array_agg(regexp_replace((1000 + random() * 2000000000)::int::text, '(\d)(\d\d\d)\$', '\1_\2')) FROM generate_series(1, 100000)"
      "int4 hex (16+)|32|SELECT array_agg('0x' || to_hex((random() * 2000000000)::int)) FROM generate_series(1, 100000)"
    )
  fi
  for c in "${classes[@]}"; do
    IFS='|' read -r name bits gen <<<"$c"
    res=$(psql -F ' ' -c "SELECT setseed(0.5)" -c "WITH i AS ($gen) SELECT parser, round(ns_per_value::numeric, 2), round(speedup::numeric, 2) FROM i, fastcopy.bench_int_parser((SELECT * FROM i), $bits, 205)")
    server=$(awk '$1=="server" {print $2}' <<<"$res"); ours=$(awk '$1=="fastcopy" {print $2}' <<<"$res")
    slice=$(awk '$1=="fastcopy_slice" {print $2}' <<<"$res")
    ratio=$(awk '$1=="fastcopy" {print $3}' <<<"$res"); sratio=$(awk '$1=="fastcopy_slice" {print $3}' <<<"$res")
    echo "pg$m $name: server ${server} ns, fastcopy ${ours} ns (${ratio}x), lone slice ${slice} ns (${sratio}x)"
    echo "| $version | $name | $server | $ours | **${ratio}×** | $slice | ${sratio}× |" >> "$tmp"
  done
done
{
  echo "# Integer parsing: fastcopy vs the server's pg_strtoint*"
  echo
  echo "ns per value: best of 41 repetitions (the parsers in a rotated order) of 5 passes over 100,000 generated inputs; speed-up: the"
  echo "median over the repetitions of the server's time over fastcopy's in the same repetition. All parsers in"
  echo "the same backend on the same bytes: every input NUL-terminated, one after the other in one buffer"
  echo "(\`fastcopy.bench_int_parser\`). **server**: \`pg_strtoint*\` on a pointer into it, as COPY's input"
  echo "functions get a field in attribute_buf (called directly, without pgrx's per-call guard). **fastcopy**: as"
  echo "the loader calls it, the field at the start of the rest of the buffer (\`parse_iN_in\`: one 8-byte load"
  echo "for up to 8 bytes). **lone slice**: the field as a slice of its own (\`parse_iN\`, as the SQL functions"
  echo "call it). Machine: $(nproc) cores, $(uname -r), release build. Run: \`make bench-parse\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | input class | server ns | fastcopy ns | speed-up | lone slice ns | speed-up |"
  echo "|---|---|---|---|---|---|---|"
  cat "$tmp"
} > "$out"
rm -f "$tmp"
cat "$out"
