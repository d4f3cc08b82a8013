#!/usr/bin/env bash
# Build fastcopy (release) and install it into the PostgreSQL tree of one major version.
#   scripts/install.sh 17
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
major=${1:-17}
log=$(mktemp)
if ! cargo pgrx install --release -p fastcopy --pg-config "$(pg_config_for "$major")" \
     --features "pg$major" --no-default-features >"$log" 2>&1; then
  cat "$log"; rm -f "$log"; exit 1
fi
rm -f "$log"
echo "installed fastcopy (release) into PostgreSQL $major"
