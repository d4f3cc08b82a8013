#!/usr/bin/env bash
# Refusals and privileges, against COPY: for each non-superuser case (table
# INSERT, column INSERT only, no INSERT, pg_read_server_files with and without INSERT,
# SELECT only, row-level security enabled and forced, a SECURITY DEFINER wrapper, no USAGE on
# the table's schema, a table owned by another role, a temporary table) and for a read-only
# transaction (BEGIN READ ONLY, default_transaction_read_only): fastcopy.load against COPY FROM
# a file, load_data against COPY FROM STDIN, and COPY FROM STDIN through the hook (require)
# against the server's (off). The same outcome: both load the same rows, or both fail with
# the same SQLSTATE (the hook: the same message too). One line per case.
#   pgrx-tests/scenarios/privilege.sh 17
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
. scripts/scenario_lib.sh
scripts/cluster.sh start "$m" >/dev/null
file="$FASTCOPY_RUN/priv-$m.txt"
file_a="$FASTCOPY_RUN/priv-$m-a.txt"
printf '1\tx\n2\ty\n' >"$file"; printf '3\n4\n' >"$file_a"
chmod 644 "$file" "$file_a"
psql -v ON_ERROR_STOP=1 >/dev/null <<'SQL' || { echo "FAIL privilege setup"; exit 1; }
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fastcopy CASCADE;
CREATE EXTENSION fastcopy;
DROP SCHEMA IF EXISTS pm CASCADE;
DROP SCHEMA IF EXISTS pm_hidden CASCADE;
DO $$ DECLARE r text; BEGIN
  FOR r IN SELECT rolname FROM pg_roles WHERE rolname LIKE 'pm\_%' LOOP
    EXECUTE format('DROP OWNED BY %I', r); EXECUTE format('DROP ROLE %I', r);
  END LOOP; END $$;
CREATE SCHEMA pm; CREATE SCHEMA pm_hidden;
CREATE ROLE pm_owner; CREATE ROLE pm_ins; CREATE ROLE pm_col; CREATE ROLE pm_none;
CREATE ROLE pm_files IN ROLE pg_read_server_files; CREATE ROLE pm_files_ins IN ROLE pg_read_server_files;
CREATE ROLE pm_sel; CREATE ROLE pm_rls; CREATE ROLE pm_nousage;
GRANT USAGE ON SCHEMA fastcopy, pm TO PUBLIC;
GRANT CREATE ON SCHEMA pm TO pm_owner;
SET ROLE pm_owner;
CREATE TABLE pm.t (a int, b text);
CREATE TABLE pm.rls (a int, b text);
ALTER TABLE pm.rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY p ON pm.rls USING (true) WITH CHECK (true);
CREATE TABLE pm.forced (a int, b text);
ALTER TABLE pm.forced ENABLE ROW LEVEL SECURITY;
ALTER TABLE pm.forced FORCE ROW LEVEL SECURITY;
CREATE POLICY p ON pm.forced USING (true) WITH CHECK (true);
GRANT INSERT ON pm.t TO pm_ins, pm_files_ins;
GRANT INSERT (a) ON pm.t TO pm_col;
GRANT SELECT ON pm.t TO pm_sel;
GRANT INSERT, SELECT ON pm.rls TO pm_rls;
RESET ROLE;
CREATE TABLE pm_hidden.t (a int, b text);
GRANT INSERT ON pm_hidden.t TO pm_nousage;
SQL
# SECURITY DEFINER wrappers owned by a role with the file privilege and INSERT
psql -v ON_ERROR_STOP=1 >/dev/null <<SQL || { echo "FAIL privilege setup (wrappers)"; exit 1; }
GRANT CREATE ON SCHEMA pm TO pm_files_ins;
SET ROLE pm_files_ins;
CREATE FUNCTION pm.copy_definer() RETURNS void SECURITY DEFINER LANGUAGE plpgsql
  AS \$\$ BEGIN COPY pm.t FROM '$file'; END \$\$;
CREATE FUNCTION pm.load_definer() RETURNS void SECURITY DEFINER LANGUAGE plpgsql
  AS \$\$ BEGIN PERFORM fastcopy.load('pm.t', '$file'); END \$\$;
SQL

# outcome SETUP-SQL SQL [STDIN]: "ok N" (rows in the table after) or "SQLSTATE message"
outcome() {
  local out
  out=$(printf '%s' "${3:-}" | psql -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "SET client_min_messages = warning" \
          -c "TRUNCATE pm.t, pm.rls, pm.forced, pm_hidden.t" -c "${1:-SELECT}" -c "$2" 2>&1 >/dev/null)
  if [ -z "$out" ]; then echo "ok $(psql -c "SELECT (SELECT count(*) FROM pm.t) + (SELECT count(*) FROM pm.rls) + (SELECT count(*) FROM pm.forced) + (SELECT count(*) FROM pm_hidden.t)")"
  else sed -n 's/^.*ERROR:  //p' <<<"$out" | head -1; fi
}
state() { [ "${1%% *}" = ok ] && echo "$1" || echo "${1%%:*}"; }
hook_on="-c session_preload_libraries=fastcopy -c fastcopy.copy_from=require"
# case_ LABEL SETUP-SQL TABLE [COLUMNS]: the three comparisons for one role/setting
case_() {
  local label=$1 setup=$2 t=$3 cols=${4:-} data=$'1\tx\n2\ty\n' f=$file c="" fc=""
  if [ -n "$cols" ]; then data=$'3\n4\n'; f=$file_a; c="($cols)"; fc=", columns => '{$cols}'"; fi
  local cf lf cs ls ho hr
  cf=$(outcome "$setup" "COPY $t $c FROM '$f'")
  lf=$(outcome "$setup" "SELECT fastcopy.load('$t', '$f'$fc)")
  cs=$(outcome "$setup" "COPY $t $c FROM STDIN" "$data")
  ls=$(outcome "$setup" "SELECT fastcopy.load_data('$t', \$d\$$data\$d\$$fc)")
  ho=$(PGOPTIONS="" outcome "$setup" "COPY $t $c FROM STDIN" "$data")
  hr=$(PGOPTIONS="$hook_on" outcome "$setup" "COPY $t $c FROM STDIN" "$data")
  check "$label: file $(state "$cf")/$(state "$lf"), stdin $(state "$cs")/$(state "$ls"), hook $(state "$hr")" \
    '[ "$(state "$cf")" = "$(state "$lf")" ] && [ "$(state "$cs")" = "$(state "$ls")" ] && [ "$ho" = "$hr" ]' \
    "COPY file: $cf | load: $lf | COPY STDIN: $cs | load_data: $ls | hook off: $ho | hook require: $hr"
}
case_ "INSERT on the table" "SET ROLE pm_ins" pm.t
case_ "INSERT on one column, loading it" "SET ROLE pm_col" pm.t a
case_ "INSERT on one column, loading all" "SET ROLE pm_col" pm.t
case_ "no INSERT" "SET ROLE pm_none" pm.t
case_ "pg_read_server_files without INSERT" "SET ROLE pm_files" pm.t
case_ "pg_read_server_files with INSERT" "SET ROLE pm_files_ins" pm.t
case_ "SELECT only" "SET ROLE pm_sel" pm.t
case_ "row-level security enabled" "SET ROLE pm_rls" pm.rls
case_ "row-level security forced, as the owner" "SET ROLE pm_owner" pm.forced
case_ "row-level security enabled, as the owner (not forced)" "SET ROLE pm_owner" pm.rls
case_ "no USAGE on the table's schema" "SET ROLE pm_nousage" pm_hidden.t
case_ "the table owned by another role, as its owner" "SET ROLE pm_owner" pm.t
case_ "a read-only transaction (default_transaction_read_only)" "SET default_transaction_read_only = on" pm.t
a=$(outcome "SET ROLE pm_none" "SELECT pm.copy_definer()"); b=$(outcome "SET ROLE pm_none" "SELECT pm.load_definer()")
check "a SECURITY DEFINER wrapper (its owner has the file privilege and INSERT): COPY $a, fastcopy $b" '[ "$a" = "$b" ] && [ "$a" = "ok 2" ]'
# BEGIN READ ONLY and a temporary table (COPY may fill one in a read-only transaction)
for q in "COPY pm.t FROM '$file'|SELECT fastcopy.load('pm.t', '$file')" \
         "COPY pm_tmp FROM '$file'|SELECT fastcopy.load('pm_tmp', '$file')"; do
  a=$(psql -v VERBOSITY=verbose -c "CREATE TEMP TABLE pm_tmp (a int, b text)" -c "BEGIN READ ONLY" -c "${q%%|*}" -c "SELECT count(*) FROM pm_tmp" -c "COMMIT" 2>&1)
  b=$(psql -v VERBOSITY=verbose -c "CREATE TEMP TABLE pm_tmp (a int, b text)" -c "BEGIN READ ONLY" -c "${q##*|}" -c "SELECT count(*) FROM pm_tmp" -c "COMMIT" 2>&1 | sed '/^(.*)$/d')
  a=$(sed -n 's/^.*ERROR:  //p; /^[0-9]*$/p' <<<"$a" | head -1); b=$(sed -n 's/^.*ERROR:  //p; /^[0-9]*$/p' <<<"$b" | head -1)
  check "BEGIN READ ONLY, ${q%%|*}: $a / $b" '[ "$a" = "$b" ]'
done
psql -c "SET client_min_messages = warning" -c "DROP SCHEMA pm CASCADE" -c "DROP SCHEMA pm_hidden CASCADE" >/dev/null
psql -c "DO \$\$ DECLARE r text; BEGIN FOR r IN SELECT rolname FROM pg_roles WHERE rolname LIKE 'pm\\_%' LOOP
  EXECUTE format('DROP OWNED BY %I', r); EXECUTE format('DROP ROLE %I', r); END LOOP; END \$\$" >/dev/null
rm -f "$file" "$file_a"
exit $fail
