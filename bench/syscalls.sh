#!/usr/bin/env bash
# What reaches the kernel when a table grows: strace -f -c of the loading backend
# during a lotsaints load into a fresh UNLOGGED table, per extend_strategy/extend_method.
# fallocate = posix_fallocate extension; pwritev = md.c zero-filling extension
# (pg_pwrite_zeros); pwrite64 = data pages written out of the bulk-write ring (and, on 15, the
# one-page zero-filling writes of extension); lseek = the file size asked of the kernel.
# Checks, on 16+: under `zero` no fallocate; under `fallocate` fallocate and no zero-fill.
# Writes bench/results/syscalls.md.
#   bench/syscalls.sh [majors...]        default: 15 16 17 18
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. bench/lib.sh
majors=("${@:-15 16 17 18}"); majors=(${majors[@]})
command -v strace >/dev/null || { echo "strace is needed (scripts/setup.sh installs it)"; exit 1; }
out=bench/results/syscalls.md
tmp=$(mktemp)
fail=0
for m in "${majors[@]}"; do
  scripts/install.sh "$m" || exit 1
  scripts/cluster.sh start "$m" >/dev/null
  psql() { scripts/cluster.sh psql "$m" -qAt "$@"; }
  psql -c "DROP EXTENSION IF EXISTS fastcopy CASCADE" -c "CREATE EXTENSION fastcopy" >/dev/null
  data=$(lotsaints_data)
  configs="server:auto fixed:auto fixed:zero"
  [ "$m" -ge 16 ] && configs="$configs fixed:fallocate sticky:zero sticky:fallocate"
  version=$(psql -c "SHOW server_version")
  for c in $configs; do
    strategy=${c%:*}; method=${c#*:}
    psql -c "DROP TABLE IF EXISTS sys_t" -c "CREATE UNLOGGED TABLE sys_t (a int, b int, c int)" >/dev/null
    res="$FASTCOPY_RUN/syscalls.out"; st="$FASTCOPY_RUN/strace.out"
    psql -F ' ' -c "SELECT pg_backend_pid()" -c "SELECT pg_sleep(1)" \
         -c "SET fastcopy.extend_strategy = $strategy" -c "SET fastcopy.extend_method = $method" \
         -c "SELECT pages_extended, extend_calls FROM fastcopy.load('sys_t', '$data')" > "$res" &
    bg=$!
    for i in $(seq 50); do [ -s "$res" ] && break; sleep 0.02; done
    pid=$(head -1 "$res")
    strace -f -y -e trace=fallocate,pwrite64,pwritev,pwritev2,lseek -o "$st" -p "$pid" 2>/dev/null &
    sp=$!
    wait $bg
    kill -INT $sp; wait $sp 2>/dev/null
    # calls per syscall on the table's main fork (paths from -y; _fsm/_vm forks apart)
    calls() { grep -E "^([0-9]+ +)?$1\\([0-9]+<[^>]*/base/[0-9]+/[0-9]+(\\.[0-9]+)?>" "$st" | wc -l; }
    other() { grep -E "^([0-9]+ +)?$1\\([0-9]+<[^>]*_(fsm|vm)>" "$st" | wc -l; }
    fa=$(calls fallocate); pv=$(calls 'pwritev2?'); pw=$(calls pwrite64); ov=$(other 'pwritev2?'); ls=$(calls lseek)
    ext=$(tail -1 "$res")
    verdict="reported"
    if [ "$m" -ge 16 ]; then
      case "$method" in
        zero) if [ "$fa" = 0 ] && [ "$pv" -gt 0 ]; then verdict="ok: no fallocate"; else verdict="FAIL"; fail=1; fi ;;
        fallocate) if [ "$fa" -gt 0 ] && [ "$pv" = 0 ]; then verdict="ok: no zero-fill"; else verdict="FAIL"; fail=1; fi ;;
      esac
    fi
    echo "pg$m $strategy/$method: fallocate $fa, pwritev $pv (+$ov on fsm/vm forks), pwrite64 $pw, lseek $ls, fastcopy extended (pages calls) $ext: $verdict"
    echo "| $version | $strategy | $method | $ext | $fa | $pv | $ov | $pw | $ls | $verdict |" >> "$tmp"
  done
  psql -c "DROP TABLE IF EXISTS sys_t" >/dev/null
done
{
  echo "# System calls of a growing table"
  echo
  echo "\`strace -f -c\` of the loading backend during fastcopy.load of lotsaints (2,000,000 rows, 43 MB) into a fresh"
  echo "UNLOGGED table, extend_pages 64; counts on the table's main fork (strace -y paths), zero-fills of its"
  echo "free space map / visibility map forks apart. fallocate: posix_fallocate extension; pwritev: zero-filling"
  echo "extension (md.c pg_pwrite_zeros); pwrite64: data pages written from the bulk-write ring and, on 15,"
  echo "the one-page zero-filling writes that extend the table; lseek: the file size asked of the kernel."
  echo "Run: \`bench/syscalls.sh\` ($(date -u +%Y-%m-%d))."
  echo
  echo "| PostgreSQL | strategy | method | pages / calls by fastcopy | fallocate | pwritev | pwritev fsm/vm | pwrite64 | lseek | check |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  cat "$tmp"
} > "$out"
rm -f "$tmp"
cat "$out"
exit $fail
