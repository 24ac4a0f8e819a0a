"""Specs that import the user's code (``text:<module>:<function>``, a registered ``"module:attr"``) find it in the
folder the command runs from, as ``python -m`` would, and say where they looked when it is not there."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect4_agents.interop.text import TextPolicy
from connect4_env.core import Board
from connect4_env.encoding import action_mask, observation_planes
from connect4_env.policy import _registry, import_spec_module, make_policy, policy_from_spec, register_policy

ANSWER_FOUR = 'def answer(prompt):\n    return "<answer>4</answer>"\n'


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty folder of the user's, made the current one, with an import path that does not search it (as the
    ``connect4`` console script starts: its own folder first, not the current one); ``sys.path`` and the
    modules imported from the folder are restored afterwards.
    """
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if entry and Path(entry) != tmp_path])
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        module_file = getattr(sys.modules[name], "__file__", None) or ""
        if module_file.startswith(str(tmp_path)):
            del sys.modules[name]


def empty_board() -> tuple:
    board = Board()
    return observation_planes(board), action_mask(board)


def test_a_text_spec_finds_its_module_in_the_current_folder(user_folder: Path) -> None:
    (user_folder / "cwd_model.py").write_text(ANSWER_FOUR)
    package = user_folder / "cwd_models"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "llm.py").write_text(ANSWER_FOUR.replace("4", "2"))
    policy = policy_from_spec("text:cwd_model:answer")
    assert isinstance(policy, TextPolicy) and policy.act(*empty_board()) == 3  # column 4 is action 3
    dotted = TextPolicy.from_spec("cwd_models.llm:answer:connect4")
    assert dotted.act(*empty_board()) == 1
    # the folder is searched after the installed packages, so a file there never hides one of theirs
    assert sys.path[-1] == os.getcwd() and sys.path.count(os.getcwd()) == 1


def test_a_missing_module_says_where_it_looked(user_folder: Path) -> None:
    with pytest.raises(ValueError) as missing:
        policy_from_spec("text:no_such_model_here:answer")
    message = str(missing.value)
    assert "no module named 'no_such_model_here' on the import path nor in the current folder" in message
    assert str(user_folder) in message and "PYTHONPATH" in message
    # a module that is there but imports a missing one: Python's own message names the missing one
    (user_folder / "needs_a_dependency.py").write_text("import not_installed_dependency_xyz\n")
    with pytest.raises(ValueError, match="No module named 'not_installed_dependency_xyz'") as dependency:
        TextPolicy.from_spec("needs_a_dependency:answer")
    assert "current folder" not in str(dependency.value)
    (user_folder / "cwd_quiet_model.py").write_text("")
    with pytest.raises(ValueError, match="has no attribute 'answer'"):
        TextPolicy.from_spec("cwd_quiet_model:answer")
    for bad in (".relative:answer", "a..b:answer", "9lives:answer"):
        with pytest.raises(ValueError, match="is not a module name"):
            TextPolicy.from_spec(bad)
    with pytest.raises(TypeError, match="must be a str"):
        import_spec_module(None)  # type: ignore[arg-type]


def test_a_registered_module_attr_is_found_in_the_current_folder_too(
    user_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (user_folder / "cwd_agents.py").write_text(
        "class Leftmost:\n    def act(self, observation, action_mask=None):\n        return 0\n"
    )
    monkeypatch.setitem(_registry(), "cwd-leftmost", "placeholder:Name")  # removed again after the test
    register_policy("cwd-leftmost", "cwd_agents:Leftmost")
    assert make_policy("cwd-leftmost").act(*empty_board()) == 0
    monkeypatch.setitem(_registry(), "cwd-missing", "no_such_agents_here:Agent")
    with pytest.raises(
        ValueError, match="'no_such_agents_here' on the import path nor in the current folder"
    ):
        make_policy("cwd-missing")


def test_the_connect4_command_plays_a_text_spec_from_the_users_folder(tmp_path: Path) -> None:
    """The console script as a user runs it: in the folder that holds the model, without PYTHONPATH."""
    (tmp_path / "mybot.py").write_text(ANSWER_FOUR)
    command = Path(sys.executable).with_name("connect4")
    assert command.exists(), "the project's console script is installed with the package"
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    args = ["play", "--player0", "text:mybot:answer", "--player1", "random", "--ui", "terminal"]
    result = subprocess.run(
        [str(command), *args, "--rows", "4", "--columns", "5", "--win-length", "3"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "X plays column 4" in result.stdout  # the model's answer to the empty board
    (tmp_path / "mybot.py").unlink()
    missing = subprocess.run(
        [str(command), *args], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300
    )
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert (
        f"no module named 'mybot' on the import path nor in the current folder ({tmp_path})" in missing.stderr
    )
