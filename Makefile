# The commands a user types: `make install` and `make package` build for a PostgreSQL of your
# own (PG_CONFIG); the others are the developers' and set themselves up (scripts/setup.sh:
# PostgreSQL 15-18 trees, cargo-pgrx, a cluster user) on first use.
SHELL := /bin/bash
MAJOR ?= 17
PG_CONFIG ?= pg_config

.PHONY: setup install package install-dev test test-reliability test-core lint demo bench bench-lotsaints bench-ints10m bench-parse bench-memory bench-syscalls bench-concurrent bench-strategies bench-semantics bench-client bench-encoding bench-binary bench-pages bench-types bench-dirty bench-indexes fmt start stop psql fuzz fuzz-sql

setup:
	scripts/setup.sh

## make install [PG_CONFIG=/path/to/pg_config]: build (release) and install into that PostgreSQL
## (the pg_config on PATH by default): checks the build tools, copies with sudo when not root
install:
	scripts/install.sh "$(PG_CONFIG)"

## make package [PG_CONFIG=/usr/lib/postgresql/NN/bin/pg_config]: a Debian package for that
## PostgreSQL, target/debian/postgresql-NN-fastcopy_<version>-1_<arch>.deb
package:
	scripts/package.sh "$(PG_CONFIG)"

## make test: setup, rustfmt, core tests, in-database suites and scenarios on PostgreSQL 15-18,
## the Debian package on Debian's postgresql-15 (what CI runs)
test:
	scripts/test.sh

## make test-reliability [MAJOR=17]: crashes mid-load, a streaming standby, a point-in-time
## restore, concurrency, disk full, 2 minutes of fuzz-sql (pgrx-tests/reliability/), all majors
## or MAJOR; figures in bench/results/reliability.md
test-reliability:
	scripts/reliability.sh $(if $(filter command line environment,$(origin MAJOR)),$(MAJOR))

## clippy on every major and on the core (every unsafe block documented:
## clippy::undocumented_unsafe_blocks is denied for the workspace in Cargo.toml) and rustfmt;
## make test builds the last major it tests through clippy-driver (the same lints, that major)
lint: setup
	for m in 15 16 17 18; do cargo clippy -p fastcopy --no-default-features --features "pg$$m bench" || exit 1; done
	cargo clippy -p fastcopy-core --all-targets
	cargo fmt --all -- --check

## cargo test of the PostgreSQL-free core only (seconds)
test-core:
	cargo test -p fastcopy-core

## make demo: release build into PostgreSQL $(MAJOR), throwaway cluster, what fastcopy does
demo:
	scripts/demo.sh $(MAJOR)

## the release build into the PostgreSQL $(MAJOR) tree that setup downloaded
install-dev: setup
	scripts/install.sh $(MAJOR)

bench: bench-dirty bench-indexes bench-parse bench-lotsaints bench-ints10m bench-memory bench-syscalls bench-concurrent bench-strategies bench-semantics bench-client bench-encoding bench-binary bench-pages bench-types

## the parser's in-process driver (fastcopy.bench_int_parser) is built with the feature `bench`
bench-parse: setup
	bench/parse.sh

bench-semantics: setup
	bench/semantics.sh

bench-strategies: setup
	bench/strategies.sh

## COPY statements from psql \copy, pgbench -i and pg_restore, fastcopy.copy_from off vs on
bench-client: setup
	bench/client.sh

bench-encoding: setup
	bench/encoding.sh

bench-binary: setup
	bench/binary.sh

## the common column types: mixed tables, TPC-H lineitem/orders shapes, one table per type
bench-types: setup
	bench/types.sh

bench-lotsaints: setup
	bench/lotsaints.sh

bench-pages: setup
	bench/pages.sh

bench-ints10m: setup
	bench/ints10m.sh

bench-syscalls: setup
	bench/syscalls.sh

bench-concurrent: setup
	bench/concurrent.sh

bench-memory: setup
	bench/memory.sh $(MAJOR)

start:
	scripts/cluster.sh start $(MAJOR)
stop:
	scripts/cluster.sh stop $(MAJOR)
psql:
	scripts/cluster.sh psql $(MAJOR)

fmt:
	cargo fmt --all

## cargo-fuzz targets (see fuzz/README.md); FUZZ_SECONDS per target
FUZZ_SECONDS ?= 60
fuzz:
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
	cd fuzz && for t in $$(cargo +nightly fuzz list); do cargo +nightly fuzz run $$t -- -max_total_time=$(FUZZ_SECONDS) || exit 1; done

## make fuzz-sql [MAJOR=17] [FUZZ_SQL_SECONDS=600]: mutated corpus inputs through load_data and
## COPY FROM STDIN into twin tables; counts in bench/results/fuzz.md
fuzz-sql:
	scripts/fuzz_sql.sh $(if $(filter command line environment,$(origin MAJOR)),$(MAJOR))

## tables with a primary key and secondary indexes, private to the load's transaction (TRUNCATE or
## CREATE TABLE in it): COPY vs fastcopy, the index share of each load and its WAL bytes a row
bench-indexes: setup
	bench/indexes.sh

## 1 M rows with 1% bad values: COPY ON_ERROR ignore vs fastcopy ignore and a rejects table (17, 18)
bench-dirty: setup
	bench/dirty.sh
