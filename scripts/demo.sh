#!/usr/bin/env bash
# make demo: set up, install the release build into PostgreSQL $1 (default 17), start the
# throwaway cluster, and show what fastcopy does. The cluster stays running.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
major=${1:-17}
scripts/setup.sh
scripts/install.sh "$major"
scripts/cluster.sh start "$major" >/dev/null
psql() { scripts/cluster.sh psql "$major" -v ON_ERROR_STOP=1 "$@"; }
psql -q -c "DROP EXTENSION IF EXISTS fastcopy CASCADE" -c "CREATE EXTENSION fastcopy"
psql -v datafile="$FASTCOPY_RUN/lotsaints.copy" -f scripts/demo.sql
echo
echo "The PostgreSQL $major cluster is still running:"
echo "  connect: scripts/cluster.sh psql $major     (or: make psql MAJOR=$major)"
echo "  stop:    scripts/cluster.sh stop $major     (or: make stop MAJOR=$major)"
