# The commands a user types. Everything sets itself up (scripts/setup.sh) on first use.
SHELL := /bin/bash
MAJOR ?= 17

.PHONY: setup test test-reliability test-core lint demo install bench bench-lotsaints bench-ints10m bench-parse bench-memory bench-syscalls bench-concurrent bench-strategies bench-semantics bench-client bench-encoding bench-binary bench-pages bench-types bench-dirty fmt start stop psql fuzz fuzz-sql

setup:
	scripts/setup.sh

## make test: setup, core tests, in-database tests on PostgreSQL 15, 16, 17 (what CI runs)
test:
	scripts/test.sh

## make test-reliability [MAJOR=17]: crashes mid-load, a streaming standby, a point-in-time
## restore, concurrency, disk full, 2 minutes of fuzz-sql (pgrx-tests/reliability/), all majors
## or MAJOR; figures in bench/results/reliability.md
test-reliability:
	scripts/reliability.sh $(if $(filter command line environment,$(origin MAJOR)),$(MAJOR))

## clippy on every major (every unsafe block documented: clippy::undocumented_unsafe_blocks
## is denied in src/lib.rs) and rustfmt; make test builds the last major it tests through
## clippy-driver (the same lints, that major only)
lint: setup
	for m in 15 16 17 18; do cargo clippy -p fastcopy --no-default-features --features pg$$m -- -D clippy::undocumented_unsafe_blocks || exit 1; done
	cargo fmt --all -- --check

## cargo test of the PostgreSQL-free core only (seconds)
test-core:
	cargo test -p fastcopy-core

## make demo: release build into PostgreSQL $(MAJOR), throwaway cluster, what fastcopy does
demo:
	scripts/demo.sh $(MAJOR)

## install the release build into PostgreSQL $(MAJOR)'s tree
install: setup
	scripts/install.sh $(MAJOR)

bench: bench-dirty bench-parse bench-lotsaints bench-ints10m bench-memory bench-syscalls bench-concurrent bench-strategies bench-semantics bench-client bench-encoding bench-binary bench-pages bench-types

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

## 1 M rows with 1% bad values: COPY ON_ERROR ignore vs fastcopy ignore and a rejects table (17, 18)
bench-dirty: setup
	bench/dirty.sh
