"""A wheel that works on its own: built from the repository, installed in a fresh venv without any extra, and
used from a folder outside the repository (so nothing can come from the source tree): the ``connect4``
command and every subcommand's help, a game between two agents in the terminal, ``gym.make``, the shipped
test sets, and the package data (the AlphaZero model, the replay page, ``py.typed``) in the wheel. Slow (a
build and a venv); CI runs it with the slow tests."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from helpers.wheels import PIP_INSTALL, ROOT, built_wheel, run

import connect4_env
from connect4_agents.commands import COMMANDS, SUBCOMMANDS

pytestmark = pytest.mark.slow

# the files of the wheel that code finds at run time (package data)
PACKAGE_DATA = [
    "connect4_env/py.typed",
    "connect4_agents/py.typed",
    "connect4_agents/data/alphazero_6x7.zip",
    "connect4_agents/data/replay.html",
    "connect4_agents/data/ladder_6x7.json",
    "connect4_agents/data/test_sets/manifest.json",
]
# optional dependencies that a core install lacks; the checks below must not need them
EXTRAS_MODULES = ["torch", "stable_baselines3", "numba", "pygame", "matplotlib", "scipy", "ray"]

CHECK_HELP = f"""
import contextlib, io, sys
from connect4_agents.commands import main
for name in {sorted(SUBCOMMANDS.values())!r}:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main([name, "--help"])
        except SystemExit as done:
            assert done.code == 0, (name, done.code)
    assert out.getvalue().startswith("usage: connect4 " + name), out.getvalue()[:200]
print("help ok")
"""
CHECK_USE = """
from importlib import resources
import gymnasium as gym
import connect4_env
from connect4_agents.evaluation.test_sets import load_test_set, test_set_names
env = gym.make("Connect4-v0", opponent="mcts:20")
observation, info = env.reset(seed=0)
observation, reward, terminated, truncated, info = env.step(3)
assert observation.shape == (6, 7, 2) and observation.sum() == 2 and not terminated, observation  # and a reply
assert info["action_mask"].tolist() == [1] * 7, info
names = test_set_names()
assert "6x7-begin-hard" in names and all(len(load_test_set(name)) > 0 for name in names), names
model = resources.files("connect4_agents").joinpath("data/alphazero_6x7.zip")
assert model.is_file() and model.read_bytes()[:2] == b"PK", model
print("use ok", connect4_env.__file__)
"""


def _python(venv_dir: Path) -> Path:
    return venv_dir / ("Scripts" if sys.platform == "win32" else "bin") / "python"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_wheel(tmp_path_factory)


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and its core dependencies only; returns its folder."""
    venv_dir = tmp_path_factory.mktemp("core") / "venv"
    venv.create(venv_dir, with_pip=True)
    python = _python(venv_dir)
    run(python, *PIP_INSTALL, str(wheel))
    return venv_dir


def _outside(venv_dir: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (a program of the venv and its arguments) in an empty folder outside the repository,
    with nothing on PYTHONPATH, so only the installed wheel can answer."""
    folder = venv_dir.parent / "elsewhere"
    folder.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    program = str(venv_dir / "bin" / command[0])
    return subprocess.run(
        [program, *command[1:]],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


def test_the_wheel_holds_the_package_data_the_license_and_the_command(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [name for name in PACKAGE_DATA if name not in names]
    assert not missing, missing
    assert any(
        name.startswith("connect4_agents/data/test_sets/") and name.endswith(".jsonl.gz") for name in names
    )
    assert not any(name.startswith(("agents/", "scripts/", "tests/")) for name in names), sorted(names)[:20]
    dist_info = f"connect4_env-{connect4_env.__version__}.dist-info"
    assert f"{dist_info}/entry_points.txt" in names, "the wheel's version is not connect4_env.__version__"
    assert any(name.startswith(dist_info) and name.endswith("LICENSE") for name in names)
    with zipfile.ZipFile(wheel) as archive:
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
    assert "connect4 = connect4_agents.commands:main" in entry_points


def test_connect4_and_every_subcommand_help_on_a_core_install(installed: Path) -> None:
    missing = _outside(
        installed,
        "python",
        "-c",
        f"import importlib.util as u; print([m for m in {EXTRAS_MODULES!r} if u.find_spec(m)])",
    )
    assert missing.stdout.strip() == "[]", (
        "not a core install: " + missing.stdout
    )  # the check means something
    done = _outside(installed, "connect4", "--help")
    assert done.returncode == 0, done.stderr[-3000:]
    for name in SUBCOMMANDS.values():
        assert f"    {name} " in done.stdout or f"    {name}\n" in done.stdout, (name, done.stdout)
    assert len(SUBCOMMANDS) == len(COMMANDS)
    checked = _outside(installed, "python", "-c", CHECK_HELP)
    assert checked.returncode == 0 and "help ok" in checked.stdout, checked.stderr[-3000:]
    version = _outside(installed, "connect4", "--version")
    assert version.returncode == 0 and version.stdout.split() == ["connect4-env", connect4_env.__version__]


def test_two_agents_play_a_game_in_the_terminal(installed: Path) -> None:
    done = _outside(
        installed, "connect4", "play", "--player0", "random", "--player1", "mcts:50", "--ui", "terminal"
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "plays column" in done.stdout and ("wins after" in done.stdout or "draw after" in done.stdout)
    # the same through python -m, with a bad value: error and exit 2, no traceback
    bad = _outside(
        installed,
        "python",
        "-m",
        "connect4_agents.commands",
        "play",
        "--player1",
        "random",
        "--player0",
        "random",
        "--ui",
        "terminal",
        "--rows",
        "0",
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "Traceback" not in bad.stderr, (
        bad.stderr
    )


def test_gymnasium_the_test_sets_and_the_shipped_model_from_the_wheel(installed: Path) -> None:
    done = _outside(installed, "python", "-c", CHECK_USE)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "use ok" in done.stdout
    # the package came from the venv, not from the repository
    assert str(installed) in done.stdout and str(ROOT) not in done.stdout, done.stdout


CHECK_MODEL = """
import sys
sys.path.insert(0, sys.argv[1])  # the unpacked wheel, ahead of the repository's editable install
import torch
torch.set_num_threads(1)
import connect4_agents
from connect4_agents import AlphaZeroAgent
from connect4_env import Board
from connect4_env.encoding import observation_planes
assert connect4_agents.__file__.startswith(sys.argv[1]), connect4_agents.__file__
agent = AlphaZeroAgent(simulations=20)  # the shipped 6x7 model, package data of the wheel
board = Board.from_moves([3, 3, 3, 3])
column = agent.act(observation_planes(board), board.legal_mask())
print("model ok", column)
"""


def test_the_shipped_alphazero_model_loads_from_the_wheel(wheel: Path, tmp_path: Path) -> None:
    # torch is too big for the core venv: the wheel is unpacked and imported by this interpreter instead
    pytest.importorskip("torch")
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run(
        [sys.executable, "-c", CHECK_MODEL, str(unpacked)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[:2] == ["model", "ok"] and 0 <= int(done.stdout.split()[2]) < 7
