# Shared by the reliability scripts (sourced after scripts/scenario_lib.sh, with `m` set):
# the cluster's tools, waiting for it, and the checks every scenario makes.
bindir=$(dirname "$(pg_config_for "$m")")

# as_owner COMMAND...: as the clusters' owner (root runs the tests; the servers are not root)
as_owner() { if [ "$(id -u)" -eq 0 ]; then sudo -u "$FASTCOPY_USER" "$@"; else "$@"; fi; }

# wait_ready [PORT]: until the server (after a crash: its recovery) accepts connections
wait_ready() {
  local port=${1:-54$m}
  for _ in $(seq 1 600); do
    "$bindir/pg_isready" -q -h "$FASTCOPY_RUN" -p "$port" && return 0
    sleep 0.1
  done
  return 1
}

# table_sum TABLE [psql-command]: "rows:checksum" of a table's contents (order-independent)
table_sum() {
  "${2:-psql}" -c "SELECT count(*) || ':' || coalesce(sum(hashtext(t::text)::bigint), 0) FROM $1 t"
}

# amcheck_problems TABLE [psql-command]: "clean", or what verify_heapam, bt_index_check
# (heapallindexed) on each index, pg_visibility (tuples marked all-visible / frozen that are
# not) and the free space map (more space than a page has) found
amcheck_problems() {
  local p=${2:-psql}
  "$p" -c "SELECT CASE WHEN heap + vis + frozen + fsm = 0 THEN 'clean' ELSE format(
             'heap %s, all-visible %s, frozen %s, fsm %s', heap, vis, frozen, fsm) END
           FROM (SELECT (SELECT count(*) FROM verify_heapam('$1')) AS heap,
                        (SELECT count(*) FROM pg_check_visible('$1')) AS vis,
                        (SELECT count(*) FROM pg_check_frozen('$1')) AS frozen,
                        (SELECT count(*) FROM pg_freespace('$1') WHERE avail > current_setting('block_size')::int) AS fsm) x" 2>&1 \
    && "$p" -c "SELECT bt_index_check(indexrelid, true) FROM pg_index WHERE indrelid = '$1'::regclass" >/dev/null 2>&1 \
    || echo "bt_index_check failed"
}

# same_rows A B: "same" when the two tables hold the same rows (as multisets)
same_rows() {
  psql -c "SELECT CASE WHEN NOT EXISTS (SELECT * FROM $1 EXCEPT ALL SELECT * FROM $2)
                        AND NOT EXISTS (SELECT * FROM $2 EXCEPT ALL SELECT * FROM $1)
                   THEN 'same' ELSE 'different' END"
}

# fresh_extensions: fastcopy created anew, and the extensions the checks use
fresh_extensions() {
  psql -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fastcopy CASCADE;
CREATE EXTENSION fastcopy;
CREATE EXTENSION IF NOT EXISTS amcheck;
CREATE EXTENSION IF NOT EXISTS pg_visibility;
CREATE EXTENSION IF NOT EXISTS pg_freespacemap;
SQL
}
