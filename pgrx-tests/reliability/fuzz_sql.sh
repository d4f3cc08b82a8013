#!/usr/bin/env bash
# Bad input at scale: the SQL-level differential fuzzer (fuzz_sql.py) on one
# major's cluster for SECONDS (default 600): mutations of the load corpus through
# fastcopy.load_data and through COPY FROM STDIN into twin tables. Differences are saved as
# corpus cases in $FASTCOPY_RUN/fuzz-sql-found-MAJOR. One line.
#   pgrx-tests/reliability/fuzz_sql.sh 17 [SECONDS] [SEED]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
seconds=${2:-600}
. scripts/scenario_lib.sh
scripts/cluster.sh start "$m" >/dev/null
psql -c "SET client_min_messages = warning" -c "DROP EXTENSION IF EXISTS fastcopy CASCADE" \
  -c "CREATE EXTENSION fastcopy" >/dev/null || { echo "FAIL fuzz-sql setup"; exit 1; }
PYTHONPATH="$FASTCOPY_PY" python3 pgrx-tests/reliability/fuzz_sql.py "$m" "$seconds" \
  "$FASTCOPY_RUN" "54$m" "$FASTCOPY_RUN/fuzz-sql-found-$m" ${3:-}
