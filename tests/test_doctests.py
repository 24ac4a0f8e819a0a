"""The examples in the packages' docstrings run (doctest), module by module.

A module whose optional dependency is missing is skipped with the extra that brings it.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest
from helpers.extras import EXTRAS

import connect4_agents
import connect4_env


def _modules() -> list[str]:
    names = []
    for package in (connect4_env, connect4_agents):
        names.append(package.__name__)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            names.append(info.name)
    return sorted(set(names))


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_run(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as error:
        # a MissingExtraError carries the missing module on its cause
        cause = error if getattr(error, "name", None) else error.__cause__
        missing = (getattr(cause, "name", None) or "").split(".")[0]
        if missing in EXTRAS:
            pytest.skip(f"needs the {EXTRAS[missing]!r} extra ({missing} is not installed)")
        if name == "connect4_env.integrations.rllib":
            pytest.skip("needs ray[rllib], which runs in its own venv (make test-rllib)")
        raise
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_some_examples_exist() -> None:
    attempted = 0
    for name in ("connect4_env.core", "connect4_env.encoding", "connect4_agents.mcts.agent"):
        attempted += doctest.testmod(importlib.import_module(name), verbose=False).attempted
    assert attempted >= 5
