#!/usr/bin/env bash
# `make fuzz-sql`: the SQL-level differential fuzzer (pgrx-tests/reliability/fuzz_sql.py) for
# FUZZ_SQL_SECONDS (default 600) on each major (MAJOR=17 for one), the release build
# installed first. Writes its line per major into bench/results/fuzz.md (the rows of the
# majors not run are kept); exit 1 on any difference (saved as corpus cases, see the output).
#   scripts/fuzz_sql.sh [majors...]          default: 15 16 17 18
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
scripts/setup.sh >/dev/null || { echo "setup failed"; exit 1; }
majors=(${@:-15 16 17 18})
seconds=${FUZZ_SQL_SECONDS:-600}
out=bench/results/fuzz.md
fail=0
for m in "${majors[@]}"; do
  scripts/install.sh "$m" || { fail=1; continue; }
  scripts/cluster.sh stop "$m"
  log=$(bash pgrx-tests/reliability/fuzz_sql.sh "$m" "$seconds" 2>&1)
  echo "$log"
  line=$(tail -1 <<<"$log")
  [[ "$line" == ok* ]] || fail=1
  v=$("$(pg_config_for "$m")" --version | awk '{print $2}')
  row="| $v | $(grep -o '[0-9]* mutated cases' <<<"$line" | awk '{print $1}') | $(grep -o '[0-9]* loaded alike' <<<"$line" | awk '{print $1}') | $(grep -o '[0-9]* failed alike' <<<"$line" | awk '{print $1}') | $(grep -o '[0-9]* differences' <<<"$line" | awk '{print $1}') | $seconds s | $(date -u +%Y-%m-%d) |"
  # keep the other majors' rows
  if [ -f "$out" ]; then
    awk -v v="$v" -v row="$row" 'BEGIN{done=0} /^\| [0-9]+\.[0-9]+ \|/ && $2 == v {print row; done=1; next} {print} END{if(!done) print row}' "$out" >"$out.tmp" && mv "$out.tmp" "$out"
  else
    { echo "# SQL-level differential fuzzing (\`make fuzz-sql\`)"
      echo
      echo "pgrx-tests/reliability/fuzz_sql.py: mutations of the load corpus (bytes flipped, inserted,"
      echo "deleted, input cut, lines duplicated or dropped, quotes, escapes, delimiters, markers, CR/LF/NUL"
      echo "and invalid UTF-8 injected) loaded with fastcopy.load_data and with COPY FROM STDIN (psycopg)"
      echo "into twin tables: the same rows, or the same SQLSTATE, message and CONTEXT line. Release build."
      echo
      echo "| PostgreSQL | mutated cases | loaded alike | failed alike | differences | time | date |"
      echo "|---|---|---|---|---|---|---|"
      echo "$row"; } >"$out"
  fi
done
echo "wrote $out"
[ $fail -eq 0 ] && echo "fuzz-sql: PASSED" || echo "fuzz-sql: FAILED"
exit $fail
