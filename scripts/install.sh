#!/usr/bin/env bash
# Build fastcopy (release) and install it into one PostgreSQL.
#
#   scripts/install.sh /path/to/pg_config   a PostgreSQL of your own (make install PG_CONFIG=...):
#                                            the build tools are checked first, the files are
#                                            copied with sudo when not root, nothing else is done
#   scripts/install.sh 17                    the tree `make setup` downloaded (make install-dev)
#
# FASTCOPY_FEATURES: more cargo features, space-separated (bench/parse.sh: bench).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. scripts/pg_build.sh
env=() sudo=()
case "${1:-pg_config}" in
  1[5-8]) check_build "$(pg_config_for "$1")" || exit 1 ;;
  *)
    check_build "${1:-pg_config}" || exit 1
    # the bindings from this server's own headers (without it, pgrx takes the pg_config that
    # `cargo pgrx init` registered for the major, if any); no `cargo pgrx init` needed
    env=(PGRX_PG_CONFIG_PATH="$PG_CONFIG")
    [ "$(id -u)" -ne 0 ] && sudo=(--sudo)
    ;;
esac
features="pg$PG_MAJOR ${FASTCOPY_FEATURES:-}"
log=$(mktemp)
if ! env "${env[@]}" cargo pgrx install --release -p fastcopy --pg-config "$PG_CONFIG" \
     --no-default-features --features "$features" "${sudo[@]}" >"$log" 2>&1; then
  cat "$log"; rm -f "$log"; exit 1
fi
rm -f "$log"
echo "installed fastcopy (release) into PostgreSQL $PG_MAJOR ($("$PG_CONFIG" --pkglibdir))"
