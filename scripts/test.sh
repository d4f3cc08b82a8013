#!/usr/bin/env bash
# Everything CI runs (`make test`): setup if needed, rustfmt, the pure-Rust core's tests, the
# in-database suites and scenarios on PostgreSQL 15, 16, 17 and 18, and the Debian package on
# Debian's own postgresql-15. Ends with one summary line; exit 1 on failure.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
start=$(date +%s)
# 18 first: its session scripts take longest (the reliability subset runs there), and each
# major's run in the background while the next majors' pg_tests build
majors=${FASTCOPY_TEST_MAJORS:-"18 15 16 17"}
lint_major=${majors##* }
results=()
fail=0

step() {  # name command...
  local name=$1; shift
  local t0=$(date +%s)
  echo "=== $name: $*"
  if "$@"; then results+=("$name ok ($(( $(date +%s) - t0 ))s)")
  else results+=("$name FAILED"); fail=1; fi
}

scripts/setup.sh || { echo "make test: FAILED (setup)"; exit 1; }

step rustfmt cargo fmt --all -- --check
step core cargo test -p fastcopy-core
# the load corpus' manifest parses and lists exactly its data files
step corpus python3 pgrx-tests/corpus/load/check_cases.py

runas=()
if [ "$(id -u)" -eq 0 ]; then
  mkdir -p "$FASTCOPY_RUN"; chown "$FASTCOPY_USER" "$FASTCOPY_RUN"
fi
# sessions MAJOR: every multi-session script on MAJOR, its output in sessions-MAJOR.log and one
# result line per script in sessions-MAJOR.res. They run against the build the major's
# `cargo pgrx test` installed, each major on its own cluster and port, and mostly keep one
# core busy (one backend at a time).
sessions() {
  local m=$1 t name t0
  : >"$FASTCOPY_RUN/sessions-$m.res"
  for t in pgrx-tests/scenarios/*.sh; do
    [ -f "$t" ] || continue
    name="pg$m $(basename "$t" .sh)"; t0=$(date +%s)
    echo "=== $name: bash $t $m"
    if bash "$t" "$m"; then r="$name ok ($(( $(date +%s) - t0 ))s)"; else r="$name FAILED"; fi
    echo "$r" >>"$FASTCOPY_RUN/sessions-$m.res"
  done >"$FASTCOPY_RUN/sessions-$m.log" 2>&1
}
# lane MAJOR...: each major's sessions in turn, each once that major's pg_tests step has ended
# (its marker file). Two lanes run in the background, the 1st/3rd and the 2nd/4th majors, while
# the next majors' pg_tests build: the builds never wait for sessions, and at most two majors'
# sessions run at once.
lane() {
  local m
  for m in "$@"; do
    while [ ! -f "$FASTCOPY_RUN/built-$m" ]; do sleep 1; done
    sessions "$m"
  done
}
laneA=() laneB=() i=0
for m in $majors; do
  if [ $((i % 2)) -eq 0 ]; then laneA+=("$m"); else laneB+=("$m"); fi
  i=$((i + 1))
  rm -f "$FASTCOPY_RUN/built-$m"
done
lane "${laneA[@]}" & lanes=($!)
trap 'kill "${lanes[@]}" 2>/dev/null' INT TERM
[ ${#laneB[@]} -gt 0 ] && { lane "${laneB[@]}" & lanes+=($!); }
for m in $majors; do
  if [ "$(id -u)" -eq 0 ]; then
    rm -rf "$FASTCOPY_RUN/pgrx-$m"
    runas=(--runas "$FASTCOPY_USER" --pgdata "$FASTCOPY_RUN/pgrx-$m")
  fi
  # one major's build goes through clippy-driver (the workspace's crates only, the
  # dependencies as every build compiles them): every unsafe block says why it holds
  # (clippy::undocumented_unsafe_blocks, denied in src/lib.rs), without a second compile of
  # pgrx and its bindings for `cargo clippy` (make lint runs clippy on every major)
  lint=()
  [ "$m" = "$lint_major" ] && lint=(env RUSTC_WORKSPACE_WRAPPER="$(command -v clippy-driver)")
  step "pg$m" "${lint[@]}" cargo pgrx test "pg$m" -p fastcopy "${runas[@]}"
  touch "$FASTCOPY_RUN/built-$m"
done
# while the last majors' sessions run: the fuzz targets build against the core's current API
# (running them: make fuzz; the check leaves out libFuzzer's C++, which only linking needs)
step fuzz-build bash -c 'cd fuzz && cargo check -q --no-default-features'
# what a user of Debian's PostgreSQL does: make package, apt install, CREATE EXTENSION, a load
# and a \copy through the hook, apt remove
step package-debian pgrx-tests/package/debian.sh
wait "${lanes[@]}"
for m in $majors; do
  cat "$FASTCOPY_RUN/sessions-$m.log"
  while IFS= read -r r; do
    results+=("$r")
    [[ "$r" == *FAILED ]] && fail=1
  done <"$FASTCOPY_RUN/sessions-$m.res"
  rm -f "$FASTCOPY_RUN/built-$m"
done

elapsed=$(( $(date +%s) - start ))
summary=$(IFS=', '; echo "${results[*]}")
if [ $fail -eq 0 ]; then
  echo "make test: PASSED in $((elapsed / 60))m$((elapsed % 60))s: ${results[*]}"
else
  echo "make test: FAILED in $((elapsed / 60))m$((elapsed % 60))s: ${results[*]}"
fi
exit $fail
