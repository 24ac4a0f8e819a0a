# Every target creates .venv and installs the project on first use.
# torch is pinned to the local CPU build through constraints.txt (see README). pip installs without compiling
# every file up front (--no-compile); Python compiles what a process imports and caches it, as it does by
# default. So the recipes run without PYTHONDONTWRITEBYTECODE, which CI sets: with it, nothing would be cached
# and every process would compile its imports from source. Timings: docs/design/notes.md.
PYTHON ?= python3
PIP_INSTALL := -m pip install --quiet --no-compile --constraint constraints.txt
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
export PYTHONHASHSEED := 0

RLLIB_VENV := .venv-rllib
RLLIB_STAMP := $(RLLIB_VENV)/.installed-stamp

# Kaggle's ConnectX (kaggle-environments, which pins its own gymnasium) in a venv without our package, as on
# Kaggle: the submissions carry our code.
KAGGLE_VENV := .venv-kaggle
KAGGLE_STAMP := $(KAGGLE_VENV)/.installed-stamp

# The core install: only the dev extra, to check that every test needing an extra skips and names it.
CORE_VENV := .venv-core
CORE_STAMP := $(CORE_VENV)/.installed-stamp

# The oldest releases pyproject.toml allows of the core's libraries, pinned, with only the dev extra: a declared
# floor is a tested floor (tests/test_floors.py checks these pins against pyproject.toml).
LOWEST_VENV := .venv-lowest
LOWEST_STAMP := $(LOWEST_VENV)/.installed-stamp
LOWEST_PINS := gymnasium==1.1.0 pettingzoo==1.25.0 numpy==1.23.5
# each later Gymnasium minor, installed in turn into .venv-lowest for the env tests (the current one is the main venv's)
GYMNASIUM_VERSIONS := 1.1.1 1.2.0 1.3.0
GYMNASIUM_TESTS := tests/env/envs/test_gymnasium_clients.py tests/env/envs/test_gym_env.py

# TorchRL's PettingZooWrapper, the client that reads our AEC and Parallel envs into tensordicts (torch stays the
# pinned CPU build through constraints.txt).
TORCHRL_VENV := .venv-torchrl
TORCHRL_STAMP := $(TORCHRL_VENV)/.installed-stamp

# openenv-core, OpenEnv's other distribution (the same import name, openenv), in place of the openenv extra's
# openenv: the OpenEnv server and client are tested with both.
OPENENV_CORE_VENV := .venv-openenv-core
OPENENV_CORE_STAMP := $(OPENENV_CORE_VENV)/.installed-stamp
OPENENV_TESTS := tests/env/integrations/test_openenv_server.py tests/env/integrations/test_openenv_limits.py \
    tests/env/integrations/test_openenv_games.py tests/env/integrations/test_openenv_rewards.py

.PHONY: run test test-slow test-rllib test-kaggle test-core test-lowest test-gymnasium-versions test-torchrl test-openenv-core test-llm lint type check format bench bench-report pictures clean install docs venvs

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) $(PIP_INSTALL) -e ".[dev,train,render,fast,book,distributed,docs,openspiel,openenv]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) scripts/mcts_vs_qlearning.py demo

# The README's test command: the default suite (doctests included) on every core, slow tests left to test-slow.
test: $(STAMP)
	$(PY) -m pytest -m "not slow and not rllib" -q -n auto

test-slow: $(STAMP)
	$(PY) -m pytest -m "slow and not rllib" -q -n auto --durations=15

# ray[rllib] pins its own gymnasium, so RLlib gets a venv of its own.
$(RLLIB_STAMP): pyproject.toml constraints.txt
	test -x $(RLLIB_VENV)/bin/python || $(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_VENV)/bin/python $(PIP_INSTALL) -e ".[fast,train]" "ray[rllib]>=2.40" pytest
	touch $(RLLIB_STAMP)

test-rllib: $(RLLIB_STAMP)
	$(RLLIB_VENV)/bin/python -m pytest -m rllib -q -p no:cacheprovider tests/env/integrations/test_rllib.py tests/test_docs.py

# kaggle-environments declares the dependencies of all its games (jax, transformers, open_spiel...: 2.4 GB,
# minutes to install); ConnectX imports only requests, jsonschema and numpy, so those come without the rest.
$(KAGGLE_STAMP): constraints.txt
	test -x $(KAGGLE_VENV)/bin/python || $(PYTHON) -m venv $(KAGGLE_VENV)
	$(KAGGLE_VENV)/bin/python $(PIP_INSTALL) --no-deps "kaggle-environments>=1.14"
	$(KAGGLE_VENV)/bin/python $(PIP_INSTALL) requests jsonschema numpy numba torch
	touch $(KAGGLE_STAMP)

# Our submissions (built here) play Kaggle's negamax in .venv-kaggle (with numpy, numba and torch, as Kaggle's
# image has them), each process from a cold start (a fresh TMPDIR, no numba cache; the tests set that up): a
# first game, then KAGGLE_GAMES games each (50; the docs' table used 100), half on each side (the halves in two
# processes at once), a 5x6 game with 3 in a row, and mcts against alphazero in one process (5.3 minutes on 2
# cores, 12.6 on 2 cores busy with other work; half of it alphazero's games at Kaggle's 1.6 s a move).
KAGGLE_GAMES ?= 50
test-kaggle: $(STAMP) $(KAGGLE_STAMP)
	KAGGLE_GAMES=$(KAGGLE_GAMES) KAGGLE_PYTHON=$(KAGGLE_VENV)/bin/python $(PY) -m pytest -m kaggle -q -p no:cacheprovider tests/interop/test_kaggle.py

$(CORE_STAMP): pyproject.toml constraints.txt
	test -x $(CORE_VENV)/bin/python || $(PYTHON) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/python $(PIP_INSTALL) -e ".[dev]"
	touch $(CORE_STAMP)

test-core: $(CORE_STAMP)
	$(CORE_VENV)/bin/python -m pytest -m "not slow and not rllib" -q -n auto -p no:cacheprovider

$(LOWEST_STAMP): pyproject.toml constraints.txt Makefile
	test -x $(LOWEST_VENV)/bin/python || $(PYTHON) -m venv $(LOWEST_VENV)
	$(LOWEST_VENV)/bin/python $(PIP_INSTALL) -e ".[dev]" $(LOWEST_PINS)
	touch $(LOWEST_STAMP)

# The core suite on the lowest versions (tests needing an extra skip themselves, as in test-core).
test-lowest: $(LOWEST_STAMP)
	$(LOWEST_VENV)/bin/python -m pytest -m "not slow and not rllib" -q -n auto -p no:cacheprovider

# The Gymnasium env tests on each Gymnasium of GYMNASIUM_VERSIONS in turn (in .venv-lowest, which gets its lowest
# gymnasium back afterwards, pass or fail).
test-gymnasium-versions: $(LOWEST_STAMP)
	status=0; for version in $(GYMNASIUM_VERSIONS); do \
	  $(LOWEST_VENV)/bin/python $(PIP_INSTALL) "gymnasium==$$version" && \
	  echo "gymnasium $$version:" && \
	  $(LOWEST_VENV)/bin/python -m pytest -q -p no:cacheprovider $(GYMNASIUM_TESTS) || status=1; \
	done; \
	$(LOWEST_VENV)/bin/python $(PIP_INSTALL) $(LOWEST_PINS); exit $$status

$(TORCHRL_STAMP): pyproject.toml constraints.txt
	test -x $(TORCHRL_VENV)/bin/python || $(PYTHON) -m venv $(TORCHRL_VENV)
	$(TORCHRL_VENV)/bin/python $(PIP_INSTALL) -e ".[dev]" "torchrl>=0.14"
	touch $(TORCHRL_STAMP)

test-torchrl: $(TORCHRL_STAMP)
	$(TORCHRL_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/env/integrations/test_torchrl.py

$(OPENENV_CORE_STAMP): pyproject.toml constraints.txt
	test -x $(OPENENV_CORE_VENV)/bin/python || $(PYTHON) -m venv $(OPENENV_CORE_VENV)
	$(OPENENV_CORE_VENV)/bin/python $(PIP_INSTALL) -e ".[dev]" "openenv-core>=0.3"
	touch $(OPENENV_CORE_STAMP)

# The OpenEnv tests (slow ones included) against openenv-core; the main venv runs them against openenv.
test-openenv-core: $(OPENENV_CORE_STAMP)
	$(OPENENV_CORE_VENV)/bin/python -m pytest -q -p no:cacheprovider $(OPENENV_TESTS)

# TextPolicy driven by a tiny transformers model built in the tests (the llm extra, into the main venv; torch stays
# the train extra's pinned CPU build), and the two Game Arena dialects against their harnesses' own parsers on the
# same answers: DeepMind's game_arena 0.1.0 without its dependencies (google-genai, anthropic, openai, aiohttp...;
# its parsers import only chess, absl and open_spiel, the last two the openspiel extra's), and kaggle-environments'
# connect_four harness file from .venv-kaggle (kaggle-environments itself pulls litellm; the file needs pyspiel).
test-llm: $(STAMP) $(KAGGLE_STAMP)
	$(PY) $(PIP_INSTALL) -e ".[llm,trl]"
	if $(PY) -c "import sys; sys.exit(sys.version_info < (3, 11))"; then \
	  $(PY) $(PIP_INSTALL) --no-deps "game_arena==0.1.0" "chess>=1.10" && $(PY) -c "import game_arena.harness.parsers"; \
	else echo "game_arena 0.1.0 needs Python 3.11+: DeepMind's parser agreement tests skip"; fi
	$(PY) -m pytest -m llm -q -p no:cacheprovider tests/interop/test_hf_text.py tests/interop/test_trl_rewards.py
	KAGGLE_PYTHON=$(KAGGLE_VENV)/bin/python $(PY) -m pytest -q -p no:cacheprovider tests/env/envs/test_game_arena_parsers.py
	$(PY) -m pytest -q -p no:cacheprovider tests/test_docs.py -k llm.md

# The side venvs; `make -j4 install venvs` installs them and the main one at once (as CI does: one pip keeps
# about one core busy).
venvs: $(LOWEST_STAMP) $(TORCHRL_STAMP) $(RLLIB_STAMP) $(KAGGLE_STAMP) $(OPENENV_CORE_STAMP)

lint: $(STAMP)
	$(PY) -m ruff check connect4_env agents scripts tests benchmarks tools recipes
	$(PY) -m ruff format --check connect4_env agents scripts tests benchmarks tools recipes

# What CI checks besides the tests: lint (ruff, docstring and complexity rules included), types and the strict docs build.
check: lint type docs

format: $(STAMP)
	$(PY) -m ruff format connect4_env agents scripts tests benchmarks tools
	$(PY) -m ruff check --fix connect4_env agents scripts tests benchmarks tools

type: $(STAMP)
	mkdir -p build/typecheck
	ln -sfn ../../agents build/typecheck/connect4_agents
	ln -sfn ../../connect4_env build/typecheck/connect4_env
	MYPYPATH=build/typecheck $(PY) -m mypy -p connect4_env -p connect4_agents

# The documentation site, strictly: every MkDocs or mkdocstrings warning fails the build. mkdocstrings reads
# the packages under their import names through the same links as mypy (connect4_agents is the agents/ folder).
docs: $(STAMP)
	mkdir -p build/typecheck
	ln -sfn ../../agents build/typecheck/connect4_agents
	ln -sfn ../../connect4_env build/typecheck/connect4_env
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir build/site

bench: $(STAMP)
	$(PY) benchmarks/env_throughput.py

# Every benchmark of the docs' benchmarks page, its outputs rewritten under benchmarks/results/ (about half an
# hour). OpenSpiel comes with the openspiel extra; the other peers are in no extra:
# pip install --target build/peers pgx bitbully
bench-report: $(STAMP)
	PYTHONPATH=build/peers $(PY) benchmarks/report.py

# The tutorials' pictures (docs/tutorials/img/), each page's from its own script.
pictures: $(STAMP)
	for script in tools/pictures/*.py; do $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) $(RLLIB_VENV) $(KAGGLE_VENV) $(CORE_VENV) $(LOWEST_VENV) $(TORCHRL_VENV) $(OPENENV_CORE_VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
