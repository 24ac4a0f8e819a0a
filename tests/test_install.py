"""The import name cannot collide: our wheel and the OpenAI Agents SDK (which installs a top-level package
``agents``) in one venv, installed in either order, both import and work, and removing either leaves the other
whole. Slow (two venvs from the package index); CI runs it with the slow tests."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

CHECK_OURS = """
import gymnasium as gym
import connect4_env
from connect4_agents import MCTSAgent, RandomAgent, make_agent
from connect4_agents.evaluation.arena import play_game
from connect4_env import Rules
record = play_game([MCTSAgent(50, seed=0), RandomAgent(seed=1)], Rules())
assert record.moves, record
env = gym.make("Connect4-v0", opponent="mcts:20")
env.reset(seed=0)
env.step(3)
print("ours ok", type(make_agent("solver")).__name__)
"""
CHECK_SDK = """
import agents
assert hasattr(agents, "Agent") and hasattr(agents, "Runner"), agents.__file__
print("sdk ok")
"""


def _run(python: Path, *args: str, cwd: Path | None = None) -> str:
    # run outside the repository, whose agents/ folder would shadow any installed ``agents``
    done = subprocess.run(
        [str(python), *args], capture_output=True, text=True, timeout=600, cwd=cwd or Path(python).parents[2]
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run(Path(sys.executable), "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(ROOT))
    (found,) = out.glob("connect4_env-*.whl")
    return found


@pytest.mark.parametrize("order", ["ours first", "sdk first"])
def test_our_agents_and_the_openai_agents_sdk_share_a_venv(order: str, wheel: Path, tmp_path: Path) -> None:
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--constraint", str(ROOT / "constraints.txt")]
    steps = [str(wheel), "openai-agents"] if order == "ours first" else ["openai-agents", str(wheel)]
    for step in steps:
        _run(python, *pip[1:], step)
    assert "ours ok" in _run(python, "-c", CHECK_OURS)
    assert "sdk ok" in _run(python, "-c", CHECK_SDK)
    # removing one leaves the other whole
    removed, kept = ("openai-agents", CHECK_OURS) if order == "ours first" else ("connect4-env", CHECK_SDK)
    _run(python, "-m", "pip", "uninstall", "--quiet", "--yes", removed)
    assert " ok" in _run(python, "-c", kept)
