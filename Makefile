# Every target creates .venv and installs the project on first use.
# torch is pinned to the local CPU build through constraints.txt (see README).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
export PYTHONHASHSEED := 0

RLLIB_VENV := .venv-rllib
RLLIB_STAMP := $(RLLIB_VENV)/.installed-stamp

.PHONY: run test test-fast test-slow test-rllib lint type format bench clean install

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --constraint constraints.txt -e ".[dev,train,render,fast,book,distributed]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) scripts/mcts_vs_qlearning.py demo

test: $(STAMP)
	$(PY) -m pytest -m "not slow and not rllib" -q

test-slow: $(STAMP)
	$(PY) -m pytest -m "slow and not rllib" -q

# ray[rllib] pins its own gymnasium, so RLlib gets a venv of its own.
$(RLLIB_STAMP): pyproject.toml constraints.txt
	test -x $(RLLIB_VENV)/bin/python || $(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_VENV)/bin/python -m pip install --quiet --constraint constraints.txt -e ".[fast,train]" "ray[rllib]>=2.40" pytest
	touch $(RLLIB_STAMP)

test-rllib: $(RLLIB_STAMP)
	$(RLLIB_VENV)/bin/python -m pytest -m rllib -q -p no:cacheprovider tests/env/test_rllib.py

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
	rm -rf $(VENV) $(RLLIB_VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
