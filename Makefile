# One entry point for people and CI: `make check` installs, lints, type-checks, checks the import
# contracts and runs the whole test suite. `.ci/run` calls exactly this, then `make bench-smoke`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HYPOTHESIS_PROFILE ?= ci

.PHONY: install lint test check serve bench bench-smoke

$(BIN)/python:
	$(PY) -m venv $(VENV)

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'

lint:
	$(BIN)/ruff format --check siteaudit tests benchmarks
	$(BIN)/ruff check siteaudit tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

# The suite in parallel (pytest-xdist): TEST_WORKERS processes (`auto`: one per CPU; 0: in this process);
# tests/conftest.py keeps the tests that must share a worker in one xdist group (`--dist loadgroup`).
TEST_WORKERS ?= auto

test:
	$(BIN)/python -m pytest -p no:cacheprovider -n $(TEST_WORKERS) --dist loadgroup

check: install lint test

serve: install
	$(BIN)/siteaudit serve

bench:
	$(BIN)/python benchmarks/run_all.py

# Every benchmark at a tiny size: each must complete and print its figures (timings never asserted).
bench-smoke:
	$(BIN)/python benchmarks/smoke.py
