"""The import name cannot collide: our wheel and the OpenAI Agents SDK (which installs a top-level package
``agents``) in one venv, installed in either order, both import and work, and removing either leaves the other
whole. Slow (two venvs from the package index); CI runs it with the slow tests."""

from __future__ import annotations

import venv
from pathlib import Path

import pytest
from helpers.wheels import PIP_INSTALL, built_wheel, run

pytestmark = pytest.mark.slow

CHECK_OURS = """
import gymnasium as gym
import connect4_env
from connect4_agents import MCTSAgent, RandomAgent, make_policy
from connect4_agents.evaluation.arena import play_game
from connect4_env import Rules
record = play_game([MCTSAgent(50, seed=0), RandomAgent(seed=1)], Rules())
assert record.moves, record
env = gym.make("Connect4-v0", opponent="mcts:20")
env.reset(seed=0)
env.step(3)
print("ours ok", type(make_policy("solver")).__name__)
"""
CHECK_SDK = """
import agents
assert hasattr(agents, "Agent") and hasattr(agents, "Runner"), agents.__file__
print("sdk ok")
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_wheel(tmp_path_factory)


@pytest.mark.parametrize("order", ["ours first", "sdk first"])
def test_our_agents_and_the_openai_agents_sdk_share_a_venv(order: str, wheel: Path, tmp_path: Path) -> None:
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    steps = [str(wheel), "openai-agents"] if order == "ours first" else ["openai-agents", str(wheel)]
    for step in steps:
        run(python, *PIP_INSTALL, step)
    assert "ours ok" in run(python, "-c", CHECK_OURS)
    assert "sdk ok" in run(python, "-c", CHECK_SDK)
    # removing one leaves the other whole
    removed, kept = ("openai-agents", CHECK_OURS) if order == "ours first" else ("connect4-env", CHECK_SDK)
    run(python, "-m", "pip", "uninstall", "--quiet", "--yes", removed)
    assert " ok" in run(python, "-c", kept)
