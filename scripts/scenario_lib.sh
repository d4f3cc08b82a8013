# Shared by the multi-session test scripts (pgrx-tests/scenarios/*.sh), sourced from the
# repository root once the script has set `m` (the major): the environment, `check`, and
# `psql` on that major's throwaway cluster.
. scripts/env.sh
fail=0
# check LABEL CONDITION [DETAIL]: "ok   LABEL" when CONDITION (eval'd) holds, else "FAIL LABEL",
# DETAIL on the next line if given, and the script fails.
check() {
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; [ -z "${3:-}" ] || echo "       $3"; fail=1; fi
}
psql() { scripts/cluster.sh psql "$m" -qAt "$@"; }
