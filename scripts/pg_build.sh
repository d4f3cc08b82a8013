# What building fastcopy against one PostgreSQL needs (sourced by install.sh and package.sh).
#
# check_build PG_CONFIG: sets PG_CONFIG (an absolute path) and PG_MAJOR from `pg_config
# --version`, and checks what the build needs: a supported major, the server headers, libclang
# (bindgen reads the headers through it), cargo and cargo-pgrx 0.18.1. Each missing piece is
# named with the command or package that provides it; returns 1 if any is missing.

PGRX_VERSION=0.18.1

check_build() {
  local pgc=$1 missing=0 v
  PG_CONFIG=$(command -v "$pgc" 2>/dev/null) || {
    echo "no pg_config at '$pgc': give the one of your server, e.g. PG_CONFIG=/usr/lib/postgresql/17/bin/pg_config" >&2
    return 1
  }
  v=$("$PG_CONFIG" --version)                       # "PostgreSQL 17.11 (Debian 17.11-1)"
  PG_MAJOR=$(sed -E 's/^PostgreSQL ([0-9]+).*/\1/' <<<"$v")
  case "$PG_MAJOR" in
    15|16|17|18) ;;
    *) echo "fastcopy builds for PostgreSQL 15, 16, 17 and 18; $PG_CONFIG is $v" >&2; return 1 ;;
  esac
  if [ ! -f "$("$PG_CONFIG" --includedir-server)/postgres.h" ]; then
    echo "missing: the server headers of PostgreSQL $PG_MAJOR (Debian/Ubuntu: postgresql-server-dev-$PG_MAJOR; RHEL/PGDG: postgresql$PG_MAJOR-devel)" >&2
    missing=1
  fi
  # (grep reads the whole list: `grep -q` would stop early, and ldconfig's SIGPIPE fail the
  # pipeline under pipefail)
  if [ -z "${LIBCLANG_PATH:-}" ] && ! ldconfig -p 2>/dev/null | grep 'libclang[-.0-9]*\.so' >/dev/null; then
    echo "missing: libclang (Debian/Ubuntu: clang libclang-dev; RHEL: clang-devel), or set LIBCLANG_PATH" >&2
    missing=1
  fi
  if ! command -v cargo >/dev/null; then
    echo "missing: cargo (Rust, from https://rustup.rs; the version Cargo.toml's rust-version names, or newer)" >&2
    return 1
  fi
  if ! cargo pgrx --version 2>/dev/null | grep " $PGRX_VERSION\$" >/dev/null; then
    echo "missing: cargo-pgrx $PGRX_VERSION: cargo install cargo-pgrx --version $PGRX_VERSION --locked" >&2
    missing=1
  fi
  return $missing
}
