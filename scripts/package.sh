#!/usr/bin/env bash
# A Debian package of fastcopy for one PostgreSQL, in the layout of Debian's own extension
# packages (postgresql-NN-<name>: the library in /usr/lib/postgresql/NN/lib, the control and
# SQL files in /usr/share/postgresql/NN/extension; Depends: postgresql-NN).
#
#   scripts/package.sh /usr/lib/postgresql/17/bin/pg_config     (make package PG_CONFIG=...)
#   -> target/debian/postgresql-17-fastcopy_<version>-1_<arch>.deb
#
# Builds in target/debian/cargo, apart from the development builds (the bindings come from
# this server's headers). FASTCOPY_PACKAGE_PROFILE: the cargo profile, release by default;
# DEBFULLNAME, DEBEMAIL: the Maintainer field (Debian's variables).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
. scripts/env.sh
. scripts/pg_build.sh
check_build "${1:-pg_config}" || exit 1
command -v dpkg-deb >/dev/null || { echo "missing: dpkg-deb (Debian/Ubuntu: dpkg)" >&2; exit 1; }

name=postgresql-$PG_MAJOR-fastcopy
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)-1
arch=$(dpkg --print-architecture)
out=target/debian
root=$out/${name}_${version}_$arch
rm -rf "$root" && mkdir -p "$root/DEBIAN"

log=$(mktemp)
if ! CARGO_TARGET_DIR=$PWD/$out/cargo PGRX_PG_CONFIG_PATH="$PG_CONFIG" \
     cargo pgrx package -p fastcopy --pg-config "$PG_CONFIG" --out-dir "$root" \
     --profile "${FASTCOPY_PACKAGE_PROFILE:-release}" \
     --no-default-features --features "pg$PG_MAJOR" >"$log" 2>&1; then
  cat "$log"; rm -f "$log"; exit 1
fi
rm -f "$log"
# what `cargo pgrx package` wrote must be where this server looks for it
test -f "$root$("$PG_CONFIG" --pkglibdir)/fastcopy.so"
test -f "$root$("$PG_CONFIG" --sharedir)/extension/fastcopy.control"

doc=$root/usr/share/doc/$name
mkdir -p "$doc"
{ echo "fastcopy is distributed under the PostgreSQL License:"; echo; cat LICENSE; } >"$doc/copyright"
find "$root" -type d -exec chmod 755 {} +
find "$root" -type f -exec chmod 644 {} +
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: $name
Version: $version
Architecture: $arch
Maintainer: ${DEBFULLNAME:-fastcopy contributors} <${DEBEMAIL:-fastcopy@localhost}>
Depends: postgresql-$PG_MAJOR, libc6, libgcc-s1
Section: database
Priority: optional
Installed-Size: $size
Description: load data into PostgreSQL tables faster than COPY FROM
 fastcopy is a PostgreSQL $PG_MAJOR extension that loads text, CSV and binary
 COPY data into heap tables several times faster than COPY FROM, leaving the
 same table and raising the same errors. It has SQL functions of its own
 (fastcopy.load, fastcopy.load_data) and, when turned on with
 fastcopy.copy_from, takes over ordinary COPY ... FROM statements from any
 client.
CONTROL
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
deb=$out/${name}_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
