#!/usr/bin/env bash
# The quick subset of the reliability suite that `make test` runs (the whole suite: `make
# test-reliability`): two crashes mid-load with recovery, a streaming standby replaying the
# load paths, 15 s of concurrent loaders/readers/VACUUM, a disk that fills up (two strategies)
# and 30 s of the SQL-level differential fuzzer. On the newest major only, to keep `make test` short; `make
# test-reliability` runs it all on every major.
#   pgrx-tests/scenarios/reliability.sh 18
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
if [ "$m" != "${FASTCOPY_RELIABILITY_MAJOR:-18}" ]; then
  echo "skip reliability quick subset on $m (it runs on ${FASTCOPY_RELIABILITY_MAJOR:-18}; all majors: make test-reliability)"
  exit 0
fi
fail=0
bash pgrx-tests/reliability/crash.sh "$m" quick || fail=1
bash pgrx-tests/reliability/replication.sh "$m" quick || fail=1
bash pgrx-tests/reliability/concurrency.sh "$m" quick || fail=1
bash pgrx-tests/reliability/diskfull.sh "$m" quick || fail=1
bash pgrx-tests/reliability/fuzz_sql.sh "$m" 30 || fail=1
exit $fail
