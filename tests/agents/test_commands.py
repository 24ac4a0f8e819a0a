"""The bundled commands (connect4_agents.commands): each builds its parser alone or as a subcommand, answers
--help, runs from main(argv), and scripts/*.py only call them."""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from connect4_agents.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
# what a command module needs beyond the core install (the extra that brings it)
NEEDS = {"train_alphazero": "torch"}


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
    assert "python scripts/" in (fresh.description or "")  # the usage examples are the help's text
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
    """What a ``connect4`` dispatcher will do: parse with the subparser, then run(args)."""
    play = _command("play")
    top = argparse.ArgumentParser(prog="connect4")
    play.build_parser(top.add_subparsers(dest="command").add_parser("play"))
    args = top.parse_args(
        [
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
    )
    assert play.run(args) == 0
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
    assert command.run(args) == 0
    assert "move 1: X (MCTS 5 playouts)" in capsys.readouterr().out


@pytest.mark.parametrize("name", COMMANDS)
def test_each_command_has_a_thin_script(name: str) -> None:
    path = ROOT / "scripts" / f"{name}.py"
    text = path.read_text()
    assert len(text.splitlines()) <= 30, f"{path} has logic of its own"
    tree = ast.parse(text)
    imports = [
        (node.module, tuple(a.name for a in node.names))
        if isinstance(node, ast.ImportFrom)
        else (None, tuple(a.name for a in node.names))
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    assert sorted(imports, key=str) == sorted(
        [("__future__", ("annotations",)), (None, ("sys",)), (f"connect4_agents.commands.{name}", ("main",))],
        key=str,
    )
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert not functions and ast.get_docstring(tree)


def test_every_script_is_a_command() -> None:
    scripts = {path.stem for path in (ROOT / "scripts").glob("*.py")}
    assert scripts == set(COMMANDS)
