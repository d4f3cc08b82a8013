#!/usr/bin/env bash
# A throwaway PostgreSQL cluster per major version, owned by the non-root $FASTCOPY_USER:
# data in $FASTCOPY_RUN/data-<major>, socket in $FASTCOPY_RUN, port 54<major> (5415, 5416, 5417).
#
#   scripts/cluster.sh start 17     initdb if needed, start
#   scripts/cluster.sh stop 17
#   scripts/cluster.sh psql 17 [psql args...]
#   scripts/cluster.sh status 17
#   scripts/cluster.sh destroy 17   stop and delete the data directory
# FASTCOPY_SERVER_ENV="NAME=value ..." puts those variables into the server's environment
# (`start`, when the server is not running yet).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
cmd=${1:?usage: cluster.sh start|stop|psql|status|destroy MAJOR}
major=${2:?usage: cluster.sh $cmd MAJOR}
shift 2
bindir="$("$(pg_config_for "$major")" --bindir)"
data="$FASTCOPY_RUN/data-$major"
port="54$major"

as_user() {  # run a command as the cluster owner
  if [ "$(id -u)" -eq 0 ]; then sudo -u "$FASTCOPY_USER" "$@"; else "$@"; fi
}

case "$cmd" in
  start)
    mkdir -p "$FASTCOPY_RUN"
    [ "$(id -u)" -eq 0 ] && chown "$FASTCOPY_USER" "$FASTCOPY_RUN"
    if [ ! -f "$data/PG_VERSION" ]; then
      as_user "$bindir/initdb" -D "$data" --locale=C.UTF-8 -E UTF8 -U postgres -A trust >/dev/null
      cat >>"$data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$FASTCOPY_RUN'
port = $port
shared_buffers = '1GB'
max_wal_size = '8GB'
checkpoint_timeout = '30min'
max_prepared_transactions = 4
CONF
    fi
    if ! as_user "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      # shellcheck disable=SC2086 # a list of NAME=value words
      # the tree's own libpq for its modules (postgres_fdw, the WAL receiver): the system's
      # may be older than the server
      libdir="$("$(pg_config_for "$major")" --libdir)"
      as_user env LD_LIBRARY_PATH="$libdir" ${FASTCOPY_SERVER_ENV:-} "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w -t 600 start >/dev/null
    fi
    echo "cluster $major running: $bindir/psql -h $FASTCOPY_RUN -p $port -U postgres"
    ;;
  stop)
    # -t 600: a shutdown checkpoint after big loads can take minutes on a busy disk; a stop that
    # returned early would leave the server "shutting down" for the next script
    if [ -f "$data/PG_VERSION" ]; then as_user "$bindir/pg_ctl" -D "$data" -m fast -t 600 stop >/dev/null 2>&1 || true; fi
    ;;
  status)
    as_user "$bindir/pg_ctl" -D "$data" status
    ;;
  psql)
    "$bindir/psql" -h "$FASTCOPY_RUN" -p "$port" -U postgres -X "$@"
    ;;
  destroy)
    "$0" stop "$major"
    rm -rf "$data"
    ;;
  *) echo "unknown command $cmd"; exit 2 ;;
esac
