# warpgraph developer commands. `make help` lists them.
PY ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
WHEEL_DIR := dist

.PHONY: help venv build dev example test test-rust test-python postgres lint format bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

venv: $(VENV)/.deps ## create .venv with the test/bench dependencies (incl. the pinned reference)

$(VENV)/.deps: requirements-dev.txt
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -r requirements-dev.txt
	touch $@

build: venv ## build the release wheel once and install it into .venv
	rm -rf $(WHEEL_DIR)
	$(VENV)/bin/maturin build --release -q -o $(WHEEL_DIR)
	$(VPY) -m pip install -q --force-reinstall --no-deps $(WHEEL_DIR)/*.whl

dev: venv ## fast editable debug build for iterating
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop -q

example: build ## install and run `warpgraph bench` (quick suite, SQLite), writing bench.png (the main job)
	$(VENV)/bin/warpgraph bench --plot bench.png

postgres: ## make Debian's PostgreSQL binaries available (tests start their own server)
	scripts/ensure-postgres.sh

test-rust: ## Rust core unit tests (no interpreter needed)
	cargo test -q -p warpgraph-core

FAST_PATHS_OFF_DIRS := tests/unit tests/differential tests/checkpoint tests/integration

test-python: ## pytest over tests/ and benches/, then the saver/engine tests with WARPGRAPH_FAST_PATHS=0
	$(VPY) -m pytest -q
	@echo "--- again with WARPGRAPH_FAST_PATHS=0 (every run on the general path)"
	WARPGRAPH_FAST_PATHS=0 $(VPY) -m pytest -q -m "not fast_paths" $(FAST_PATHS_OFF_DIRS)

test: build test-rust postgres test-python ## install everything and run the whole suite

lint: venv ## cargo fmt/clippy + ruff
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -q -- -D warnings
	$(VENV)/bin/ruff check python tests benches

format: venv
	cargo fmt --all
	$(VENV)/bin/ruff format python tests benches

bench: build ## benchmarks against the reference, reporting ratios
	$(VPY) -m pytest benches --benchmark-enable -q

clean:
	rm -rf target $(WHEEL_DIR) $(VENV)
