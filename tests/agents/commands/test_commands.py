"""The bundled commands (connect4_agents.commands): each builds its parser alone or as a subcommand, answers
--help, runs its built config from main(argv), and is spelled one way, ``connect4 <command>``."""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.metadata
import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import connect4_env
from connect4_agents import commands
from connect4_agents._support.config_cli import from_args
from connect4_agents.commands import COMMANDS, SUBCOMMANDS

ROOT = Path(__file__).resolve().parents[3]
# a quick game of two random agents on 4x5, in the terminal
TERMINAL_GAME = [
    "play",
    "--player0",
    "random",
    "--player1",
    "random",
    "--ui",
    "terminal",
    "--rows",
    "4",
    "--columns",
    "5",
]
# what a command module needs beyond the core install to import (the extra that brings it): nothing, since
# building a parser must work on a core install (test_subcommand_help_runs_on_a_core_install)
NEEDS: dict[str, str] = {}


def _command(name: str) -> ModuleType:
    needed = NEEDS.get(name)
    if needed is not None and importlib.util.find_spec(needed) is None:
        pytest.skip(f"needs {needed} (the train extra)")
    return importlib.import_module(f"connect4_agents.commands.{name}")


def _options(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    return [tuple(action.option_strings) or (action.dest,) for action in parser._actions]


@pytest.mark.parametrize("name", COMMANDS)
def test_build_parser_fills_a_fresh_parser_and_a_subparser_alike(name: str) -> None:
    command = _command(name)
    fresh = command.build_parser()
    assert isinstance(fresh, argparse.ArgumentParser)
    assert f"connect4 {SUBCOMMANDS[name]}" in (fresh.description or "")  # the usage examples are the help's
    sub = argparse.ArgumentParser(prog="connect4").add_subparsers(dest="command").add_parser(name)
    assert command.build_parser(sub) is sub
    assert _options(sub) == _options(fresh) and len(_options(fresh)) > 1


@pytest.mark.parametrize("name", COMMANDS)
def test_main_help_exits_0_with_the_usage(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    command = _command(name)
    with pytest.raises(SystemExit) as exit_info:
        command.main(["--help"])
    assert exit_info.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_a_subcommand_parser_runs_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    """What the ``connect4`` dispatcher does: parse with the subparser, build the config, then run(config)."""
    play = _command("play")
    top = argparse.ArgumentParser(prog="connect4")
    play.build_parser(top.add_subparsers(dest="command").add_parser("play"))
    args = top.parse_args(TERMINAL_GAME)
    assert play.run(from_args(play.PlayConfig, args)) == 0
    out = capsys.readouterr().out
    assert "X plays column" in out and ("wins after" in out or "draw after" in out)


def test_main_turns_a_bad_value_into_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    play = _command("play")
    code = play.main(["--player0", "random", "--player1", "random", "--ui", "terminal", "--rows", "0"])
    assert code == 2
    assert capsys.readouterr().err.startswith("error:")


def test_mcts_vs_qlearning_modes_run_under_a_subparser(capsys: pytest.CaptureFixture[str]) -> None:
    command = _command("mcts_vs_qlearning")
    top = argparse.ArgumentParser(prog="connect4")
    command.build_parser(top.add_subparsers(dest="command").add_parser("mcts-vs-qlearning"))
    args = top.parse_args(
        [
            "mcts-vs-qlearning",
            "mcts-vs-mcts",
            "--rows",
            "4",
            "--columns",
            "4",
            "--playouts0",
            "5",
            "--playouts1",
            "5",
        ]
    )
    assert args.command == "mcts-vs-qlearning" and args.mode == "mcts-vs-mcts"
    assert command.run(from_args(command.MODE_CONFIGS[args.mode], args)) == 0
    assert "move 1: X (MCTS 5 playouts)" in capsys.readouterr().out


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_runs_on_its_built_config(name: str) -> None:
    """CleanRL's shape: the config dataclass is the arguments; ``run`` takes it, never argparse's namespace."""
    command = _command(name)
    (parameter,) = inspect.signature(command.run).parameters.values()
    modes = getattr(command, "MODE_CONFIGS", {})
    expected = " | ".join(c.__name__ for c in modes.values()) if modes else command.CONFIG.__name__
    assert parameter.annotation == expected and "Namespace" not in inspect.getsource(command.run)


def test_scripts_holds_only_the_bundled_match_script_a_shim_over_connect4_match() -> None:
    assert sorted(path.name for path in (ROOT / "scripts").iterdir() if path.name != "__pycache__") == [
        "mcts_vs_qlearning.py"
    ]
    text = (ROOT / "scripts" / "mcts_vs_qlearning.py").read_text()
    tree = ast.parse(text)
    imports = [
        (node.module, tuple(a.name for a in node.names))
        if isinstance(node, ast.ImportFrom)
        else (None, tuple(a.name for a in node.names))
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    assert sorted(imports, key=str) == sorted(
        [("__future__", ("annotations",)), (None, ("sys",)), ("connect4_agents.commands", ("main",))], key=str
    )
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert ast.get_docstring(tree) and 'main(["match", *sys.argv[1:]])' in text


def test_the_bundled_match_script_is_connect4_match(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "mcts_vs_qlearning.py"), "train", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.startswith("usage: connect4 match train"), done.stderr


# every place a user reads a command: the docs, the README, docstrings and help texts
SPELLED_IN = ("README.md", "docs", "agents", "connect4_env", "recipes", "benchmarks", "tools", "Makefile")
# the card's bundled match script (make run), a shim over connect4 match
BUNDLED = "scripts/mcts_vs_qlearning.py"


def test_every_command_has_one_spelling_connect4_command() -> None:
    """``connect4 play``, never ``python scripts/play.py`` (the scripts are gone but the bundled match one, which
    is named as itself only where it is what runs: ``make run``)."""
    found = []
    for place in SPELLED_IN:
        path = ROOT / place
        files = [path] if path.is_file() else [*path.rglob("*.py"), *path.rglob("*.md")]
        for file in files:
            for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
                if re.search(r"python scripts/|scripts/\w+\.py", line.replace(BUNDLED, "")):
                    found.append(f"{file.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


# optional dependencies a subcommand's --help must not import (tests/test_layout.py's HEAVY, less the small ones)
EXTRAS_MODULES = (
    "torch",
    "stable_baselines3",
    "sb3_contrib",
    "numba",
    "pygame",
    "matplotlib",
    "scipy",
    "ray",
)
HELP_IN_A_FRESH_PROCESS = """
import sys
from connect4_agents.commands import main
try:
    main(sys.argv[1:])
except SystemExit as done:
    code = done.code
else:
    code = -1  # --help must end through SystemExit
loaded = [name for name in {extras!r} if name in sys.modules]
print("loaded:", ",".join(loaded), file=sys.stderr)
sys.exit(code)
"""


def _subcommand_names(parser: argparse.ArgumentParser) -> list[str]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(action.choices)


def test_the_dispatcher_mounts_every_command_once_with_a_one_line_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = commands.build_parser()
    assert _subcommand_names(parser) == [SUBCOMMANDS[name] for name in COMMANDS]
    assert SUBCOMMANDS["mcts_vs_qlearning"] == "match" and SUBCOMMANDS["train_sb3"] == "train-sb3"
    assert set(_subcommand_names(parser)) == {
        "play",
        "tournament",
        "evaluate",
        "grade",
        "audit",
        "perfect",
        "exploit",
        "train-sb3",
        "train-alphazero",
        "train-rllib",
        "train-ntuple",
        "replay",
        "kaggle-submission",
        "make-test-sets",
        "match",
        "serve-openenv",
        "serve-grader",
    }
    with pytest.raises(SystemExit) as exit_info:
        commands.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: connect4 ")
    for module in COMMANDS:
        summary = commands._summary(
            importlib.import_module(f"connect4_agents.commands.{module}").__doc__ or ""
        )
        assert summary and "\n" not in summary and ": " not in summary
        assert " ".join(summary.split()) in " ".join(out.split()), (module, summary)


def test_a_subcommand_help_shows_its_examples_as_connect4_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        commands.main(["match", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: connect4 match ")
    assert "connect4 match train" in out and "python scripts/" not in out


@pytest.mark.parametrize("name", list(SUBCOMMANDS.values()))
def test_subcommand_help_runs_on_a_core_install(name: str) -> None:
    """``connect4 <name> --help`` in a fresh interpreter exits 0 and imports no optional dependency, so it works
    where the extras are missing (train-alphazero's parser no longer imports torch)."""
    done = subprocess.run(
        [sys.executable, "-c", HELP_IN_A_FRESH_PROCESS.format(extras=EXTRAS_MODULES), name, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(f"usage: connect4 {name}"), done.stdout[:300]
    assert done.stderr.strip().splitlines()[-1] == "loaded:", done.stderr[-2000:]


def test_python_m_runs_the_dispatcher() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "connect4_agents.commands", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["connect4-env", connect4_env.__version__]


def test_version_is_one_number() -> None:
    """pyproject reads the version from connect4_env.__version__; the installed metadata agrees."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "connect4_env.__version__"}
    assert importlib.metadata.version("connect4-env") == connect4_env.__version__
    assert project["project"]["scripts"] == {"connect4": "connect4_agents.commands:main"}
    assert (ROOT / project["project"]["license-files"][0]).read_text().startswith("MIT License")


def test_main_exit_codes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        commands.main([])  # no command: argparse's usage error
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        commands.main(["no-such-command"])
    assert exit_info.value.code == 2
    capsys.readouterr()
    bad = ["play", "--player0", "random", "--player1", "random", "--ui", "terminal", "--rows", "0"]
    assert commands.main(bad) == 2
    assert capsys.readouterr().err.startswith("error:")
    assert commands.main(TERMINAL_GAME) == 0
    assert "X plays column" in capsys.readouterr().out

    def interrupted(config: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module("connect4_agents.commands.play"), "run", interrupted)
    assert commands.main(TERMINAL_GAME) == 130


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["mtch"], "match"),
        (["plya"], "play"),
        (["match", "mtch", "--table", "t.npz"], "match"),
        (["match", "trian"], "train"),
        (["play", "--ui", "termnal"], "terminal"),
    ],
)
def test_a_mistyped_command_mode_or_choice_suggests_the_closest(
    argv: list[str], meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        commands.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    typed = next(word for word in reversed(argv) if word in ("mtch", "plya", "trian", "termnal"))
    assert f"invalid choice: {typed!r}" in err and err.rstrip().endswith(f"(did you mean {meant!r}?)"), err


def test_an_unknown_agent_in_a_command_suggests_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    assert commands.main(["play", "--player0", "mtcs", "--player1", "random", "--ui", "terminal"]) == 2
    assert capsys.readouterr().err.startswith(
        "error: unknown agent 'mtcs' (did you mean 'mcts'?); known agents:"
    )


def test_match_match_is_the_match_commands_match_mode(capsys: pytest.CaptureFixture[str]) -> None:
    """``connect4 match match`` is no word said twice: ``match`` (the bundled learner vs MCTS program) and
    its ``match`` mode (a saved model against MCTS); a third word is refused."""
    with pytest.raises(SystemExit):
        commands.main(["match", "match", "match", "--table", "t.npz"])
    assert "unrecognized arguments: match" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        commands.main(["match", "match", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "A saved n-tuple network" in out and "95% intervals" in out and "%%" not in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["train", "--episodes", "5", "--opponent", "random"],
            "--opponent: Q-learning option(s); add --learner",
        ),
        (["demo", "--alpha", "0.1", "--window", "10"], "--alpha, --window: Q-learning option(s)"),
        (
            ["train", "--learner", "qlearning", "--cpu-minutes", "1"],
            "--cpu-minutes trains the n-tuple learner",
        ),
        (["match", "--model", "a.npz", "--table", "b.npz"], "give --model (an n-tuple network) or --table"),
    ],
)
def test_the_match_refuses_another_learners_options_before_any_work(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert commands.main(["match", *argv, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and message in captured.err, captured.err
    assert captured.out == "" and not out.exists()  # refused before a folder, a file or a line of training


def test_a_missing_input_file_is_named_without_errno(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nothere.jsonl"
    assert commands.main(["replay", str(missing), "-o", str(tmp_path / "page" / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: no game records file at {missing} (connect4 tournament"), err
    assert not (tmp_path / "page").exists()  # refused before the page's folder was made
    assert commands.main(["replay", str(tmp_path), "-o", str(tmp_path / "r.html")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path}: Is a directory"
    assert commands.main(["tournament", "--gauntlet", "mcts:3", "--ladder", str(tmp_path / "l.json")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"error: {tmp_path / 'l.json'}: No such file or directory" and "Errno" not in err
