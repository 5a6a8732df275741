# AgentDash set-up and checks. Every target installs what it needs first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.stamp-install
PG     := scripts/postgres.sh
HOST   ?= 127.0.0.1
PORT   ?= 8000
# The address links printed outside a request use (manage.py eval): a wildcard HOST is served
# on this machine's loopback too; an IPv6 address goes in brackets.
LINK_HOST = $(if $(filter 0.0.0.0 ::,$(HOST)),127.0.0.1,$(if $(findstring :,$(HOST)),[$(HOST)],$(HOST)))

# Python writes its bytecode caches (__pycache__/, ignored by git) whatever the environment
# says: the tests start a hundred Pythons (servers, workers, manage.py, the CLI), and with
# PYTHONDONTWRITEBYTECODE set each compiled agentdash/, runtime/ and the tests again — and
# pytest rewrote every test module's asserts again — for seconds of CPU each.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: bench-ingest bench-live bench-scale-out bench-sandbox bench-ui install test test-fast test-sqlite test-postgres lint format bench clean chat run postgres-start postgres-stop \
	worker redis-start redis-stop lint-js test-js

# uv installs the project and its tools into the venv (pip's resolver and unpacking took
# three times as long: ~47 s against ~16 s for a fresh venv here, most of CI's set-up).
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet 'uv>=0.5'
	$(VENV)/bin/uv pip install --quiet --python $(PY) -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The browser modules' dev tooling (package.json: TypeScript at a pinned version; nothing of it
# is served): installed as package-lock.json says, again whenever the lock file changes.
NODE_STAMP := node_modules/.stamp-npm-ci
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

# The embedded default: SQLite in var/, in-memory channel layer, inline executor, one daphne.
run: $(STAMP)
	@scripts/sandbox.sh install >/dev/null || echo "WARNING: no sandbox: agents' code execution will be refused (scripts/sandbox.sh)" >&2
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo
	@dir="$${AGENTDASH_VAR_DIR:-var}" && mkdir -p "$$dir" && \
		echo "http://$(LINK_HOST):$(PORT)" > "$$dir/served_url"  # agentdash/core/site_url.py
	$(VENV)/bin/daphne -b $(HOST) -p $(PORT) agentdash.asgi:application

# The scale mode's run worker: Celery on the project's Redis (scripts/redis.sh), the threads
# pool (each slot waits for its run; the runs share the process's one event loop), database
# connections from the process's pool. Serve the site with the same settings:
#   REDIS_URL="$(scripts/redis.sh start)" AGENTDASH_EXECUTOR=celery .venv/bin/daphne ...
# WORKER_CONCURRENCY runs at once per worker process.
WORKER_CONCURRENCY ?= 8
worker: $(STAMP)
	url="$$(scripts/redis.sh start)" && \
	REDIS_URL="$${REDIS_URL:-$$url}" AGENTDASH_EXECUTOR=celery \
	$(VENV)/bin/celery -A agentdash.celery_app worker --pool threads \
		--concurrency $(WORKER_CONCURRENCY) --loglevel INFO

redis-start:
	@scripts/redis.sh start

redis-stop:
	@scripts/redis.sh stop

# pytest exits 5 when it collected no test: that is a failure here, never a pass (make stops
# on any non-zero exit).
#
# `make test`: the whole suite on SQLite and, at the same time, the tests about the database
# itself (marker database: locks, seqs, JSON search, migrations, outages, hostile strings
# stored; the list is in tests/agentdash/conftest.py) again on PostgreSQL (a server of the
# project's own, scripts/postgres.sh). The tests that start their own database and servers
# whatever DATABASE_URL says (marker own_servers: the scale mode, the PostgreSQL outage) run
# in the SQLite pass only. Side by side because the SQLite pass leaves a third of the two
# cores idle (its tests wait on servers, outages, killed processes, the browser: 634 s of CPU
# in 472 s of two cores): the PostgreSQL pass, one worker (PG_TEST_WORKERS), fills it instead
# of adding its ~100 s after. Each pass's output is shown whole when it ends (make -O). Where
# PostgreSQL cannot be had, a developer's run warns and skips that pass; in CI (CI set, not
# 0/false) it fails the run.
PG_TEST_WORKERS ?= 1
test: test-js $(STAMP)
	scripts/sandbox.sh install >/dev/null  # before both passes: each may run agents' code
	@if $(PG) start >/dev/null; then \
		$(MAKE) --no-print-directory -j2 --output-sync=target test-sqlite test-postgres \
			TEST_WORKERS_PG=$(PG_TEST_WORKERS); \
	else \
		case "$${CI:-}" in \
		""|0|false) echo "WARNING: PostgreSQL could not be started: the PostgreSQL pass is SKIPPED (CI fails here)" >&2 ;; \
		*) echo "PostgreSQL could not be started: CI needs the PostgreSQL pass" >&2; exit 1 ;; \
		esac; \
		$(MAKE) --no-print-directory test-sqlite; \
	fi

# The SQLite pass spreads the tests over TEST_WORKERS processes (pytest-xdist; 0: all in one):
# a module's tests in one process, so a module's own servers start once, and the browser
# tests all in one, first (tests/conftest.py). Three on two cores: with two, the tests that
# wait (on servers they started, an outage, a killed process, the browser's own processes)
# left a core idle; measured here, the SQLite pass 550 s → 456 s, the PostgreSQL one 96 → 84 s.
TEST_WORKERS ?= 3
xdist = $(if $(filter 0,$(1)),,-n $(1) --dist loadfile --no-loadscope-reorder)
XDIST = $(call xdist,$(TEST_WORKERS))
# `make test-postgres` alone: TEST_WORKERS too; `make test` runs it beside the SQLite pass.
TEST_WORKERS_PG ?= $(TEST_WORKERS)

# The sandbox's tests run it for real: scripts/sandbox.sh installs bubblewrap first.
test-sqlite: $(STAMP)
	scripts/sandbox.sh install >/dev/null
	DATABASE_URL= $(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

# The fast loop while working: the tests not marked slow, browser or own_servers, on SQLite.
# Every run names the tests that took over 2 s without the slow marker (tests/conftest.py).
test-fast: test-js $(STAMP)
	scripts/sandbox.sh install >/dev/null
	DATABASE_URL= $(PY) -m pytest $(XDIST) -m "not slow and not browser and not own_servers" $(PYTEST_ARGS)

# The browser modules that need no page (formatting, summaries, the span tree, the filter):
# Node's own test runner on tests/js/, importing the served files themselves. Node only.
test-js:
	node --test tests/js/test_*.mjs

test-postgres: $(STAMP)
	url="$$($(PG) start)" && DATABASE_URL="$$url" $(PY) -m pytest $(call xdist,$(TEST_WORKERS_PG)) tests/agentdash -m "database and not browser and not own_servers" $(PYTEST_ARGS)

postgres-start:
	@$(PG) start

postgres-stop:
	@$(PG) stop

# mypy checks runtime/ and agentdash/ (pyproject.toml [tool.mypy]; django-stubs' plugin loads
# agentdash.settings, so the project must import).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(MAKE) --no-print-directory lint-js

# tsc checks the JSDoc types of every script in static/ and the apps' static/ (jsconfig.json,
# strict); it emits nothing.
lint-js: $(NODE_STAMP)
	node_modules/.bin/tsc -p jsconfig.json

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: $(STAMP)
	$(PY) bench/run.py

# Live pipeline: span start → websocket client, and spans/s to one client (docs/BENCHMARKS.md).
bench-live: $(STAMP)
	$(PY) bench/live.py

# Scale-out: the scale mode behind HAProxy with 1, then 2 daphne + worker pairs (latency of 20
# runs at once, spans/s of bursts at once); the ratio into docs/BENCHMARKS.md ("Scale-out").
bench-scale-out: $(STAMP)
	$(PY) bench/scale_out.py $(BENCH_SCALE_OUT_ARGS)

# OTLP ingest: 512-span protobuf batches into the embedded default, spans/s and POST → live client
# latency, Arize Phoenix as the peer (bench/.venv-phoenix, made on first use); medians into
# docs/BENCHMARKS.md ("OTLP ingest").
bench-ingest: $(STAMP)
	$(PY) bench/ingest.py $(BENCH_INGEST_ARGS)

# The code sandbox: a trivial run against the bare interpreter and gVisor's runsc (the peer,
# Debian's, installed by scripts/sandbox.sh peer), and 20 runs at once; medians into
# docs/BENCHMARKS.md ("Sandbox").
bench-sandbox: $(STAMP)
	scripts/sandbox.sh install >/dev/null
	scripts/sandbox.sh peer >/dev/null
	$(PY) bench/sandbox.py $(BENCH_SANDBOX_ARGS)

# The session page at scale in Chromium: 1k/10k/50k spans and 10k events, generated through the
# app's services; medians into docs/BENCHMARKS.md ("Session page in the browser").
bench-ui: $(STAMP)
	scripts/chromium.sh >/dev/null
	$(PY) bench/ui.py $(BENCH_UI_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

chat: $(STAMP)
	$(PY) -m runtime chat runtime.examples.capital --trace
