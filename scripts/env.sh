# Shared settings for fastcopy's scripts (sourced, not run). Override any of them from the
# environment.
: "${FASTCOPY_PG_ROOT:=/opt/fastcopy}"        # PostgreSQL trees: $FASTCOPY_PG_ROOT/pg15 ... pg18
: "${FASTCOPY_USER:=fastcopytest}"            # non-root user that owns test/demo/bench clusters
: "${FASTCOPY_RUN:=/tmp/fastcopy}"            # cluster data directories and sockets
: "${FASTCOPY_PY:=$FASTCOPY_PG_ROOT/python}"   # Python packages the tests install (psycopg)
export FASTCOPY_PG_ROOT FASTCOPY_USER FASTCOPY_RUN FASTCOPY_PY
export PATH="$HOME/.cargo/bin:$PATH"

# pg_config of a major: FASTCOPY_PGnn_CONFIG if set, else the tree setup.sh installed.
pg_config_for() {
  local var="FASTCOPY_PG${1}_CONFIG"
  if [ -n "${!var:-}" ]; then echo "${!var}"; else echo "$FASTCOPY_PG_ROOT/pg$1/bin/pg_config"; fi
}
