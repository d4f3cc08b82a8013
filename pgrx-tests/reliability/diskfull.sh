#!/usr/bin/env bash
# Disk full: a table (and its primary key) in a tablespace on a small tmpfs that
# fills up in the middle of a load, once per extension strategy and method. COPY into a twin
# in the same tablespace fails first; fastcopy must fail with COPY's ERROR (SQLSTATE and
# message, the file's name aside), leave nothing visible, not crash the server; after space
# is given back (ballast dropped), a load that fits succeeds and equals COPY's, and amcheck is clean.
# Needs root (to mount the tmpfs); skipped otherwise. One line per scenario.
#   pgrx-tests/reliability/diskfull.sh 17 [quick]
# quick: the server strategy and fixed only.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
quick=${2:-}
. scripts/scenario_lib.sh
. pgrx-tests/reliability/lib.sh
if [ "$(id -u)" -ne 0 ]; then
  echo "skip diskfull on $m: mounting a tmpfs needs root"
  exit 0
fi
scripts/cluster.sh start "$m" >/dev/null
mnt="$FASTCOPY_RUN/diskfull-$m"
data="$FASTCOPY_RUN/diskfull-$m.txt"
small="$FASTCOPY_RUN/diskfull-small-$m.txt"
cleanup() {
  psql -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS df, df_copy, df_fits, df_ballast" -c "DROP TABLESPACE IF EXISTS fc_small" >/dev/null 2>&1
  umount "$mnt" 2>/dev/null; rmdir "$mnt" 2>/dev/null; rm -f "$data" "$small"
}
cleanup
mkdir -p "$mnt" && mount -t tmpfs -o size=24m tmpfs "$mnt" && chown "$FASTCOPY_USER" "$mnt" \
  || { echo "FAIL diskfull: could not mount a tmpfs on $mnt"; exit 1; }
trap cleanup EXIT
fresh_extensions || { echo "FAIL diskfull setup"; exit 1; }
psql -v ON_ERROR_STOP=1 >/dev/null <<SQL || { echo "FAIL diskfull setup"; exit 1; }
SET client_min_messages = warning;
CREATE TABLESPACE fc_small LOCATION '$mnt';
COPY (SELECT g, 'row ' || g || repeat('z', 40) FROM generate_series(1001, 600000) g) TO '$data';
COPY (SELECT g, 'row ' || g || repeat('z', 40) FROM generate_series(1001, 40000) g) TO '$small';
CREATE TABLE df_fits (a int PRIMARY KEY, b text);
INSERT INTO df_fits SELECT g, 'before ' || g FROM generate_series(1, 1000) g;
COPY df_fits FROM '$small';
SQL
started=$(psql -c "SELECT pg_postmaster_start_time()")

# fresh TABLE: the table (and its primary key) in the tablespace with the rows before, and
# ballast that is dropped to give space back after the disk filled up
fresh() {
  psql -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS $1, df_ballast;
CREATE TABLE df_ballast (x text) TABLESPACE fc_small;
INSERT INTO df_ballast SELECT repeat('b', 900) FROM generate_series(1, 12000);
CREATE TABLE $1 (a int PRIMARY KEY USING INDEX TABLESPACE fc_small, b text) TABLESPACE fc_small;
INSERT INTO $1 SELECT g, 'before ' || g FROM generate_series(1, 1000) g;
SQL
}

# the error of a statement: SQLSTATE and message, with the file's name and how it was
# extended taken out. Which file runs out of space first (the heap or its index) and how many
# pages the failing extension asked for (16+: more than 8 pages is "with FileFallocate()")
# depends on the extension sizes: they differ between strategies and from run to run of COPY.
error_of() {
  PGOPTIONS="-c fastcopy.extend_strategy=${2:-server} -c fastcopy.extend_method=${3:-zero}" \
    scripts/cluster.sh psql "$m" -qAt -v VERBOSITY=verbose -c "$1" 2>&1 >/dev/null \
    | grep -E -m2 '^(ERROR|HINT)' | tr '\n' ' ' | sed -E 's/ file "[^"]*"( with File[A-Za-z]+\(\))?/ file "<file>"/'
}
fresh df_copy
copy_error=$(error_of "COPY df_copy FROM '$data'")
psql -c "DROP TABLE df_copy" >/dev/null

# scenario STRATEGY METHOD
scenario() {
  local strategy=$1 method=$2 ours before after up problems fits
  fresh df
  before=$(table_sum df)
  ours=$(error_of "SELECT fastcopy.load('df', '$data')" "$strategy" "$method")
  after=$(table_sum df)
  up=$(psql -c "SELECT pg_postmaster_start_time()")
  # the space back
  psql -c "DROP TABLE df_ballast" >/dev/null
  PGOPTIONS="-c fastcopy.extend_strategy=$strategy -c fastcopy.extend_method=$method" \
    psql -c "SELECT fastcopy.load('df', '$small')" >/dev/null 2>&1
  fits=$(same_rows df df_fits)
  problems=$(amcheck_problems df)
  check "diskfull $strategy/$method: the load failed as COPY ($ours), the table as before ($after), the server up, then a load that fits as COPY's: $fits, amcheck/pg_visibility: $problems" \
    '[ -n "$copy_error" ] && [ "$ours" = "$copy_error" ] && [ "$after" = "$before" ] && [ "$up" = "$started" ] && [ "$fits" = same ] && [ "$problems" = clean ]' \
    "COPY: $copy_error"
  psql -c "DROP TABLE df" >/dev/null
}

methods="zero"; [ "$m" -ge 16 ] && methods="zero fallocate"
if [ -n "$quick" ]; then
  scenario server zero
  scenario fixed zero
else
  for strategy in server fixed sticky; do
    for method in $methods; do
      [ "$strategy" = server ] && [ "$method" != zero ] && continue
      scenario "$strategy" "$method"
    done
  done
fi
exit $fail
