# warpgraph developer commands. `make help` lists them.
PY ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
WHEEL_DIR := dist
# `make build` on Linux (glibc or musl, x86_64 or aarch64): the manylinux2014 / musllinux_1_2
# wheel that `make wheels` ships, linked by zig against glibc 2.17 (or musl), so the suite
# tests that very wheel. Elsewhere a plain native build; `make build BUILD_FLAGS=` forces one.
ARCH := $(shell uname -m)
ifeq ($(shell uname -s),Linux)
ifneq ($(shell ldd --version 2>&1 | grep -ci musl),0)
BUILD_FLAGS ?= --zig --compatibility musllinux_1_2
HOST_WHEEL ?= $(WHEEL_DIR)/*-musllinux_1_2_$(ARCH).whl
else
BUILD_FLAGS ?= --zig --compatibility manylinux2014
HOST_WHEEL ?= $(WHEEL_DIR)/*-manylinux2014_$(ARCH).*.whl
endif
endif
HOST_WHEEL ?= $(WHEEL_DIR)/*.whl
# the release tools (requirements-wheels.txt), apart from the test venv
WHEEL_VENV ?= .venv-wheels
# the suite on the oldest supported Python too (PY310=: skip)
PY310 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.10.*/bin/python3) $(shell command -v python3.10))
VENV310 ?= .venv310
# `make test` builds the wheel; .ci/run builds all of them with `make wheels` first and
# passes TEST_WHEEL=install (install the host's wheel from dist/, no second build)
TEST_WHEEL ?= build

.PHONY: help venv build install dev example test test-rust test-python postgres lint format bench clean
.PHONY: wheels wheel-check test-install test-py310

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

venv: $(VENV)/.deps ## create .venv with the test/bench dependencies (incl. the pinned reference)

$(VENV)/.deps: requirements-dev.txt
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -r requirements-dev.txt
	touch $@

build: venv ## build the release wheel once (Linux: manylinux2014 via zig) and install it into .venv
	rm -rf $(WHEEL_DIR)
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/maturin build --release -q $(BUILD_FLAGS) -o $(WHEEL_DIR)
	$(MAKE) --no-print-directory install

install: venv ## install this machine's wheel from dist/ (after build or wheels) into .venv
	$(VPY) -m pip install -q --force-reinstall --no-deps $(HOST_WHEEL)

$(WHEEL_VENV)/.deps: requirements-wheels.txt
	$(PY) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install -q --upgrade pip
	$(WHEEL_VENV)/bin/python -m pip install -q -r requirements-wheels.txt
	touch $@

wheels: $(WHEEL_VENV)/.deps ## dist/: abi3 wheels (manylinux2014 + musllinux_1_2, x86_64 + aarch64), sdist, SHA256SUMS; checked (SDIST_BUILD=1: pip-install the sdist too)
	WHEEL_VENV=$(WHEEL_VENV) SDIST_BUILD=$(SDIST_BUILD) scripts/build-wheels.sh $(WHEEL_DIR)

wheel-check: $(WHEEL_VENV)/.deps ## check the artefacts in dist/ again (SDIST_BUILD=1: also pip-install the sdist)
	$(WHEEL_VENV)/bin/python scripts/check-wheels.py $(if $(SDIST_BUILD),--build-sdist) $(WHEEL_DIR)

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

test-install: ## the built wheel in clean venvs for Python 3.10-3.13 (also part of test-python)
	$(VPY) -m pytest -q tests/install

$(VENV310)/.deps: requirements-dev.txt
	@test -n "$(PY310)" || { echo "no Python 3.10 found (python3.10 or pyenv's); PY310=/path/to/python3.10"; exit 1; }
	$(PY310) -m venv $(VENV310)
	$(VENV310)/bin/python -m pip install -q --upgrade pip
	$(VENV310)/bin/python -m pip install -q -r requirements-dev.txt
	touch $@

test-py310: $(VENV310)/.deps ## the suite once more on Python 3.10 (the oldest supported) with the same wheel
	$(VENV310)/bin/python -m pip install -q --force-reinstall --no-deps $(HOST_WHEEL)
	$(VENV310)/bin/python -m pytest -q --ignore=tests/install

test: $(TEST_WHEEL) test-rust postgres test-python $(if $(or $(PY310),$(filter true 1 yes,$(CI))),test-py310) ## install everything and run the whole suite (and again on Python 3.10)

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
	rm -rf target $(WHEEL_DIR) $(VENV) $(WHEEL_VENV) $(VENV310)
