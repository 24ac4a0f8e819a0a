# Every target creates .venv and installs the project on first use.
# torch is pinned to the local CPU build through constraints.txt (see README).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
export PYTHONHASHSEED := 0

.PHONY: run test test-fast test-slow lint type format bench clean install

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --constraint constraints.txt -e ".[dev,train,render,fast,book,distributed]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) scripts/mcts_vs_qlearning.py demo

test: $(STAMP)
	$(PY) -m pytest -m "not slow" -q

test-slow: $(STAMP)
	$(PY) -m pytest -m slow -q

lint: $(STAMP)
	$(PY) -m ruff check connect4_env agents scripts tests benchmarks
	$(PY) -m ruff format --check connect4_env agents scripts tests benchmarks

format: $(STAMP)
	$(PY) -m ruff format connect4_env agents scripts tests benchmarks
	$(PY) -m ruff check --fix connect4_env agents scripts tests benchmarks

type: $(STAMP)
	$(PY) -m mypy

bench: $(STAMP)
	$(PY) benchmarks/env_throughput.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
