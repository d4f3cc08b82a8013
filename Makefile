# The commands a user types. Everything sets itself up (scripts/setup.sh) on first use.
SHELL := /bin/bash
MAJOR ?= 17

.PHONY: setup test test-core demo install bench bench-lotsaints bench-parse bench-memory fmt start stop psql

setup:
	scripts/setup.sh

## make test: setup, core tests, in-database tests on PostgreSQL 15, 16, 17 (what CI runs)
test:
	scripts/test.sh

## cargo test of the PostgreSQL-free core only (seconds)
test-core:
	cargo test -p fastcopy-core

## make demo: release build into PostgreSQL $(MAJOR), throwaway cluster, what fastcopy does
demo:
	scripts/demo.sh $(MAJOR)

## install the release build into PostgreSQL $(MAJOR)'s tree
install: setup
	scripts/install.sh $(MAJOR)

bench: bench-parse bench-lotsaints

bench-parse: setup
	bench/parse.sh

bench-lotsaints: setup
	bench/lotsaints.sh

start:
	scripts/cluster.sh start $(MAJOR)
stop:
	scripts/cluster.sh stop $(MAJOR)
psql:
	scripts/cluster.sh psql $(MAJOR)

fmt:
	cargo fmt --all
