#!/usr/bin/env bash
# Errors the server raises inside a load reach the client as the server raised them: for a
# unique violation, NOT NULL, CHECK, a domain's CHECK, a foreign key and an input function's
# error, `fastcopy.load_data` ends with the same SQLSTATE, message, DETAIL, HINT and (psql's
# VERBOSITY verbose) schema, table, column, data type and constraint names as
# `COPY ... FROM STDIN` on the same rows, whether the server runs with RUST_BACKTRACE
# and RUST_LIB_BACKTRACE set (pgrx would append a Rust backtrace to DETAIL) or without them.
# A panic inside fastcopy (the test build's tests.fc_panic) is one ERROR line for the client,
# its backtrace in the server log. LOCATION lines are left out: fastcopy's own errors (the int
# parser's) are raised in fastcopy, not in the server's numutils.c.
#   pgrx-tests/scenarios/error.sh 17
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
. scripts/scenario_lib.sh

# table definition | rows (one per line, text format)
cases=(
  "a int PRIMARY KEY|1
1"
  "a int NOT NULL, b text|1	x
\\N	y"
  "a int CHECK (a > 0)|5
-1"
  "a e_pos|3
-7"
  "a int REFERENCES e_parent|1
2"
  "d date|2024-01-01
2024-13-45"
  "t timestamptz|2024-01-01 00:00:00+00
yesterday-ish"
  "a int|1
x2"
)

# The error a statement ends with, as psql shows it verbosely (CONTEXT aside: it names COPY
# or fastcopy.load), every line of it.
error_of() {  # sql, stdin
  printf '%s' "$2" | psql -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -v SHOW_CONTEXT=never \
    -c "$1" 2>&1 >/dev/null | sed 's/^psql:[^ ]* //' | grep -v '^LOCATION:'
}

run_cases() {  # label
  local label=$1 i=0
  for c in "${cases[@]}"; do
    i=$((i + 1))
    local def=${c%%|*} rows=${c#*|}
    psql -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
DROP TABLE IF EXISTS e_t CASCADE;
CREATE TABLE e_t ($def);
SQL
    local copy fast
    copy=$(error_of "COPY e_t FROM STDIN" "$rows
")
    local lit=${rows//\\/\\\\}
    lit=${lit//\'/\'\'}
    lit=${lit//	/\\t}
    lit=${lit//$'\n'/\\n}
    fast=$(error_of "SELECT FROM fastcopy.load_data('e_t', E'$lit\\n')" "")
    local first=${copy%%$'\n'*}
    check "$label case $i ($def): ${first}" '[ -n "$copy" ] && [ "$copy" = "$fast" ]'
    if [ "$copy" != "$fast" ]; then
      echo "  COPY:     ${copy//$'\n'/$'\n'            }"
      echo "  fastcopy: ${fast//$'\n'/$'\n'            }"
    fi
  done
}

setup_db() {
  psql -v ON_ERROR_STOP=1 <<SQL >/dev/null
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fastcopy CASCADE;
CREATE EXTENSION fastcopy;
DROP TABLE IF EXISTS e_t, e_parent CASCADE;
DROP DOMAIN IF EXISTS e_pos;
CREATE DOMAIN e_pos AS int CHECK (VALUE > 0);
CREATE TABLE e_parent (a int PRIMARY KEY);
INSERT INTO e_parent VALUES (1);
SQL
}

# 1. with Rust backtraces asked for in the server's environment
scripts/cluster.sh stop "$m"
FASTCOPY_SERVER_ENV="RUST_BACKTRACE=1 RUST_LIB_BACKTRACE=1" scripts/cluster.sh start "$m" >/dev/null
env_seen=$(psql -c "SELECT 1" >/dev/null; tr '\0' '\n' < "/proc/$(head -1 "$FASTCOPY_RUN/data-$m/postmaster.pid")/environ" | grep -c '^RUST_BACKTRACE=1$')
check "the server runs with RUST_BACKTRACE=1 in its environment" '[ "$env_seen" = 1 ]'
setup_db
run_cases "RUST_BACKTRACE=1:"
log="$FASTCOPY_RUN/data-$m/server.log"
before=$(wc -l < "$log")
panic=$(error_of "SELECT tests.fc_panic()" "")
check "a panic is one ERROR for the client: $panic" '[ "$panic" = "ERROR:  XX000: fc_panic: a bug on purpose" ]'
check "and its backtrace is in the server log" 'tail -n +$((before + 1)) "$log" | grep -q "fastcopy: panic at .*errors.rs" && tail -n +$((before + 1)) "$log" | grep -q "stack backtrace\|^ *[0-9]*: "'

# 2. and without
scripts/cluster.sh stop "$m"
scripts/cluster.sh start "$m" >/dev/null
setup_db
run_cases "no RUST_BACKTRACE:"

psql -c "DROP TABLE IF EXISTS e_t, e_parent CASCADE" -c "DROP DOMAIN IF EXISTS e_pos" >/dev/null
exit $fail
