#!/usr/bin/env bash
# The path a user of Debian's own PostgreSQL takes: the distribution's postgresql-15 and its
# server headers (from Debian's repositories, another minor than the trees the other suites
# build against), `make package` for it, the .deb installed with apt, a cluster of that server
# started with its pg_ctl, CREATE EXTENSION, a fastcopy.load, and a psql \copy taken by the COPY
# hook in a database whose sessions preload the library; then the package removed again.
# Root or sudo (apt). Results as "ok"/"FAIL" lines; exit 1 on a failure.
#   pgrx-tests/package/debian.sh
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=15
. scripts/scenario_lib.sh
SUDO=(); [ "$(id -u)" -ne 0 ] && SUDO=(sudo)
as_user() { if [ "$(id -u)" -eq 0 ]; then sudo -u "$FASTCOPY_USER" "$@"; else "$@"; fi; }
pkg=postgresql-$m-fastcopy
pgc=/usr/lib/postgresql/$m/bin/pg_config
bindir=/usr/lib/postgresql/$m/bin
data=$FASTCOPY_RUN/debian-$m
port=5470

# 1. Debian's PostgreSQL and its headers, as the README's Install section names them
need=()
for p in postgresql-$m postgresql-server-dev-$m; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "${need[@]}" >/dev/null || { echo "FAIL apt-get install ${need[*]}"; exit 1; }
fi
echo "ok   Debian's $("$pgc" --version)"

# 2. the package, built and installed as a user would
deb=$(make -s package PG_CONFIG="$pgc" | tail -1)
check "make package built $deb" '[ -f "$deb" ]'
[ -f "$deb" ] || exit 1
check "the package is $pkg, depends on postgresql-$m" \
  '[ "$(dpkg-deb -f "$deb" Package)" = "$pkg" ] && dpkg-deb -f "$deb" Depends | grep "postgresql-$m" >/dev/null'
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "./$deb" >/dev/null
check "apt installed $pkg" 'dpkg -s "$pkg" >/dev/null 2>&1'
dpkg -s "$pkg" >/dev/null 2>&1 || exit 1
check "the library is where the server looks" '[ -f "$("$pgc" --pkglibdir)/fastcopy.so" ] && [ -f "$("$pgc" --sharedir)/extension/fastcopy.control" ]'

# 3. a cluster of Debian's server
cleanup() {
  as_user "$bindir/pg_ctl" -D "$data" -m fast stop >/dev/null 2>&1
  rm -rf "$data"
}
cleanup
mkdir -p "$FASTCOPY_RUN"
as_user "$bindir/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
printf "listen_addresses = ''\nunix_socket_directories = '%s'\nport = %s\n" "$FASTCOPY_RUN" "$port" >>"$data/postgresql.conf"
as_user "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w start >/dev/null || { echo "FAIL pg_ctl start"; cat "$data/server.log"; exit 1; }
dpsql() { "$bindir/psql" -h "$FASTCOPY_RUN" -p "$port" -U postgres -X -qAt -v ON_ERROR_STOP=1 "$@"; }

# 4. CREATE EXTENSION and a load through the SQL function
file=$data/rows.txt
out=$(dpsql <<SQL 2>&1
CREATE EXTENSION fastcopy;
CREATE TABLE by_copy (a int PRIMARY KEY, b int, c text);
CREATE TABLE by_load (LIKE by_copy INCLUDING ALL);
CREATE TABLE by_hook (LIKE by_copy INCLUDING ALL);
COPY (SELECT g, (g::bigint * 7919) % 100003 - 50000, CASE WHEN g % 10 = 0 THEN NULL ELSE 'row ' || g END
      FROM generate_series(1, 300000) g) TO '$file';
COPY by_copy FROM '$file';
SELECT rows_loaded FROM fastcopy.load('by_load', '$file');
SELECT count(*) FROM (TABLE by_copy EXCEPT TABLE by_load) d;
SQL
)
check "CREATE EXTENSION and fastcopy.load: 300000 rows, none different from COPY's" \
  '[ "$(echo "$out" | tr "\n" " ")" = "300000 0 " ]' "$out"

# 5. psql's \copy through the hook, the library preloaded per session as the README says;
# `require` makes a hand-over to the server an ERROR, so success means fastcopy took it
dpsql -c "ALTER DATABASE postgres SET session_preload_libraries = 'fastcopy'" \
      -c "ALTER DATABASE postgres SET fastcopy.copy_from = 'require'"
out=$("$bindir/psql" -h "$FASTCOPY_RUN" -p "$port" -U postgres -X -c "\\copy by_hook FROM '$file'" 2>&1)
check "\\copy through the hook (copy_from = require): $out" '[ "$out" = "COPY 300000" ]'
out=$(dpsql -c "SELECT count(*) FROM (TABLE by_copy EXCEPT TABLE by_hook) d" \
            -c "SELECT count(*) FROM by_hook" -c "SHOW fastcopy.copy_from" 2>&1)
check "the hooked table equals COPY's" '[ "$(echo "$out" | tr "\n" " ")" = "0 300000 require " ]' "$out"
out=$(dpsql -c "CREATE EXTENSION amcheck" -c "SELECT bt_index_check('by_hook_pkey', true)" \
            -c "SELECT bt_index_check('by_load_pkey', true)" 2>&1)
check "amcheck is clean on the loaded tables' indexes" '[ -z "$out" ]' "$out"
# what the user sees, for the log (not asserted: make test runs other suites beside this one):
# the \copy three times each way, alternating, into the emptied table; the medians
copy_ms() {  # copy_from setting
  local t0 t1
  dpsql -c "TRUNCATE by_hook" >/dev/null
  t0=$(date +%s%N)
  PGOPTIONS="-c fastcopy.copy_from=$1" dpsql -c "\\copy by_hook FROM '$file'" >/dev/null
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}
on=() off=()
for _ in 1 2 3; do on+=("$(copy_ms require)"); off+=("$(copy_ms off)"); done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
echo "info \\copy of 300000 rows into a table with a primary key (medians of 3): fastcopy $(median "${on[@]}") ms, the server's COPY $(median "${off[@]}") ms"

# 6. the package removed again
cleanup
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get remove -y -qq "$pkg" >/dev/null
check "apt removed $pkg and its library" '! dpkg -s "$pkg" >/dev/null 2>&1 && [ ! -f "$("$pgc" --pkglibdir)/fastcopy.so" ]'
exit $fail
