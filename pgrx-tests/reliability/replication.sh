#!/usr/bin/env bash
# Replication: a streaming standby made with `pg_basebackup -R` here, every load
# path on the primary (each extension strategy and method, freeze, a partitioned target,
# indexes, TOAST-size values, on_error ignore, a COPY statement through the hook); once the
# standby has replayed to the primary's LSN, each table on it equals the primary's and
# amcheck / pg_visibility are clean there; the standby refuses a load as it refuses COPY FROM.
# Then a point-in-time restore (archived WAL, a restore point just after one load) ends with
# that table as it was on the primary at that point. One line per check.
#   pgrx-tests/reliability/replication.sh 17 [quick]
# quick: fewer rows, and no point-in-time restore (what `make test` runs).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
quick=${2:-}
. scripts/scenario_lib.sh
. pgrx-tests/reliability/lib.sh
libdir=$("$(pg_config_for "$m")" --libdir)
primary="$FASTCOPY_RUN/data-$m"
standby="$FASTCOPY_RUN/standby-$m"
pitr="$FASTCOPY_RUN/pitr-$m"
base="$FASTCOPY_RUN/pitr-base-$m"
archive="$FASTCOPY_RUN/archive-$m"
sport="55$m"; rport="56$m"
spsql() { "$bindir/psql" -h "$FASTCOPY_RUN" -p "$sport" -U postgres -X -qAt "$@"; }
rpsql() { "$bindir/psql" -h "$FASTCOPY_RUN" -p "$rport" -U postgres -X -qAt "$@"; }
# start_copy DIR PORT: a server on a copy of the primary (the trees' WAL receiver needs their
# own libpq: toolchain.md)
start_copy() {
  echo "port = $2" >>"$1/postgresql.conf"
  as_owner env LD_LIBRARY_PATH="$libdir" "$bindir/pg_ctl" -D "$1" -l "$1/server.log" -w start >/dev/null
}
stop_copy() { [ -f "$1/PG_VERSION" ] && as_owner "$bindir/pg_ctl" -D "$1" -m fast stop >/dev/null 2>&1; rm -rf "$1"; }
cleanup() {
  stop_copy "$standby"; stop_copy "$pitr"; rm -rf "$base" "$archive" "$FASTCOPY_RUN"/repl-"$m"-*
  psql -c "ALTER SYSTEM RESET archive_mode" -c "ALTER SYSTEM RESET archive_command" >/dev/null 2>&1
  scripts/cluster.sh stop "$m"; scripts/cluster.sh start "$m" >/dev/null
}
trap cleanup EXIT

rows=300000; [ -n "$quick" ] && rows=60000
f() { echo "$FASTCOPY_RUN/repl-$m-$1"; }
scripts/cluster.sh start "$m" >/dev/null
stop_copy "$standby"; stop_copy "$pitr"; rm -rf "$base" "$archive"
if [ -z "$quick" ]; then
  mkdir -p "$archive"; [ "$(id -u)" -eq 0 ] && chown "$FASTCOPY_USER" "$archive"
  psql -c "ALTER SYSTEM SET archive_mode = on" -c "ALTER SYSTEM SET archive_command = 'cp %p $archive/%f'" >/dev/null
  scripts/cluster.sh stop "$m"; scripts/cluster.sh start "$m" >/dev/null
fi
fresh_extensions || { echo "FAIL replication setup"; exit 1; }
psql -v ON_ERROR_STOP=1 >/dev/null <<SQL || { echo "FAIL replication setup"; exit 1; }
SET client_min_messages = warning;
DO \$\$ DECLARE t text; BEGIN
  FOR t IN SELECT relname FROM pg_class WHERE relname LIKE 'rp\_%' AND relkind IN ('r', 'p') AND NOT relispartition LOOP
    EXECUTE format('DROP TABLE %I CASCADE', t);
  END LOOP; END \$\$;
COPY (SELECT g, g % 1009, 'row ' || g || repeat('x', g % 40) FROM generate_series(1, $rows) g) TO '$(f rows)';
COPY (SELECT g, (SELECT string_agg(md5((g * 1000 + i)::text), '') FROM generate_series(1, 250) i)
      FROM generate_series(1, 2000) g) TO '$(f toast)';
COPY (SELECT CASE WHEN g % 1000 = 7 THEN 'bad' || g ELSE g::text END, g % 1009, 'r' || g
      FROM generate_series(1, $rows) g) TO '$(f bad)';
COPY (SELECT g, (g * 7919) % 100003, 'row ' || (g % 977), md5(g::text)::uuid
      FROM generate_series(1, $rows) g) TO '$(f built)';
SQL
as_owner "$bindir/pg_basebackup" -D "$standby" -R -X stream -c fast -h "$FASTCOPY_RUN" -p "54$m" -U postgres \
  || { echo "FAIL pg_basebackup of the standby"; exit 1; }
start_copy "$standby" "$sport"
wait_ready "$sport"
check "standby made with pg_basebackup -R, in recovery: $(spsql -c 'SELECT pg_is_in_recovery()')" \
  '[ "$(spsql -c "SELECT pg_is_in_recovery()")" = t ]'
if [ -z "$quick" ]; then
  as_owner "$bindir/pg_basebackup" -D "$base" -X stream -c fast -h "$FASTCOPY_RUN" -p "54$m" -U postgres \
    || { echo "FAIL pg_basebackup for the point-in-time restore"; exit 1; }
fi

# every load path on the primary, each into its own table
tables=()
load() {  # TABLE DEFINITION SETTINGS LOAD-SQL
  psql -c "CREATE TABLE $1 $2" >/dev/null
  psql -c "SET client_min_messages = warning" -c "$3" -c "$4" >/dev/null || check "load into $1 on the primary" false
  tables+=("$1")
}
def="(a int PRIMARY KEY, b int, c text)"
load rp_server "$def" "SET fastcopy.extend_strategy = server" "SELECT fastcopy.load('rp_server', '$(f rows)')"
methods="zero"; [ "$m" -ge 16 ] && methods="zero fallocate"
for s in fixed sticky; do
  for meth in $methods; do
    [ -n "$quick" ] && [ "$meth" != zero ] && continue
    load "rp_${s}_$meth" "$def" "SET fastcopy.extend_strategy = $s; SET fastcopy.extend_method = $meth" \
      "SELECT fastcopy.load('rp_${s}_$meth', '$(f rows)')"
  done
done
psql -c "CREATE INDEX ON rp_server (b)" >/dev/null
load rp_freeze "$def" "SET fastcopy.extend_strategy = fixed" \
  "BEGIN; TRUNCATE rp_freeze; SELECT fastcopy.load('rp_freeze', '$(f rows)', freeze => true); COMMIT"
# indexes built at the end of a load into a table truncated in its transaction: written by
# fastcopy (the int primary key, the uuid index) and by the server's build (the text index)
load rp_built "(a int PRIMARY KEY, b int, c text, u uuid UNIQUE)" "SELECT 1" \
  "BEGIN; TRUNCATE rp_built; CREATE INDEX ON rp_built (c); CREATE INDEX ON rp_built (b, a);
   SELECT fastcopy.load('rp_built', '$(f built)'); COMMIT"
load rp_part "(a int, b int, c text) PARTITION BY HASH (a)" "SELECT 1" \
  "CREATE TABLE rp_part_0 PARTITION OF rp_part FOR VALUES WITH (MODULUS 3, REMAINDER 0);
   CREATE TABLE rp_part_1 PARTITION OF rp_part FOR VALUES WITH (MODULUS 3, REMAINDER 1);
   CREATE TABLE rp_part_2 PARTITION OF rp_part FOR VALUES WITH (MODULUS 3, REMAINDER 2);
   CREATE INDEX ON rp_part (b); SELECT fastcopy.load('rp_part', '$(f rows)')"
tables+=(rp_part_0 rp_part_1 rp_part_2)
load rp_toast "(a int PRIMARY KEY, t text)" "SELECT 1" "SELECT fastcopy.load('rp_toast', '$(f toast)')"
load rp_ignore "(a int, b int, c text)" "SELECT 1" "SELECT fastcopy.load('rp_ignore', '$(f bad)', on_error => 'ignore')"
psql -c "CREATE TABLE rp_hook $def" >/dev/null
PGOPTIONS="-c session_preload_libraries=fastcopy -c fastcopy.copy_from=require" \
  "$bindir/psql" -h "$FASTCOPY_RUN" -p "54$m" -U postgres -X -q -c "TRUNCATE rp_hook" -c "\\copy rp_hook FROM '$(f rows)'" >/dev/null \
  || check "\\copy through the hook on the primary" false
tables+=(rp_hook)

lsn=$(psql -c "SELECT pg_current_wal_lsn()")
for _ in $(seq 1 1200); do
  [ "$(spsql -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] && break
  sleep 0.1
done
replayed=$(spsql -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'")
check "the standby replayed to the primary's LSN $lsn: $replayed" '[ "$replayed" = t ]'
for t in "${tables[@]}"; do
  p=$(table_sum "$t"); s=$(table_sum "$t" spsql)
  # a partitioned table has no storage: its partitions are checked one by one
  if [ "$(psql -c "SELECT relkind FROM pg_class WHERE oid = '$t'::regclass")" = p ]; then a=clean
  else a=$(amcheck_problems "$t" spsql); fi
  check "standby: $t as on the primary ($s), amcheck/pg_visibility on the standby: $a" \
    '[ "$p" = "$s" ] && [ "$a" = clean ]' "primary: $p"
done
c=$(spsql -v VERBOSITY=verbose -c "COPY rp_server FROM '$(f rows)'" 2>&1 | sed -n 's/^.*ERROR:  //p' | head -1)
l=$(spsql -v VERBOSITY=verbose -c "SELECT fastcopy.load('rp_server', '$(f rows)')" 2>&1 | sed -n 's/^.*ERROR:  //p' | head -1)
d=$(spsql -v VERBOSITY=verbose -c "SELECT fastcopy.load_data('rp_server', E'1\\t2\\tx\\n')" 2>&1 | sed -n 's/^.*ERROR:  //p' | head -1)
check "the standby refuses a load as COPY FROM: $l" '[ -n "$c" ] && [ "$l" = "$c" ] && [ "$d" = "$c" ]' "COPY: $c | load_data: $d"

if [ -z "$quick" ]; then
  # point-in-time restore to just after one load
  psql -c "CREATE TABLE rp_pitr $def" -c "SELECT fastcopy.load('rp_pitr', '$(f rows)')" >/dev/null
  at=$(table_sum rp_pitr)
  psql -c "SELECT pg_create_restore_point('fastcopy_after_load')" >/dev/null
  psql -c "SELECT fastcopy.load_data('rp_pitr', E'10000001\\t1\\tx\\n10000002\\t2\\ty\\n')" \
       -c "DELETE FROM rp_pitr WHERE a % 2 = 0" >/dev/null
  psql -c "SELECT pg_switch_wal()" >/dev/null
  sleep 2
  cp -a "$base" "$pitr"
  cat >>"$pitr/postgresql.conf" <<CONF
restore_command = 'cp $archive/%f %p'
recovery_target_name = 'fastcopy_after_load'
recovery_target_action = 'promote'
archive_mode = off
CONF
  as_owner touch "$pitr/recovery.signal"
  start_copy "$pitr" "$rport"
  wait_ready "$rport"
  for _ in $(seq 1 600); do [ "$(rpsql -c 'SELECT pg_is_in_recovery()' 2>/dev/null)" = f ] && break; sleep 0.1; done
  r=$(table_sum rp_pitr rpsql); a=$(amcheck_problems rp_pitr rpsql); now=$(table_sum rp_pitr)
  check "point-in-time restore to just after a load: rp_pitr as it was then ($r; now $now), amcheck: $a" \
    '[ "$r" = "$at" ] && [ "$r" != "$now" ] && [ "$a" = clean ]' "at the restore point: $at"
fi
exit $fail
