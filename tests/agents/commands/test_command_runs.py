"""The bundled commands, run as a user would (tiny budgets); ``make run``'s script as it runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.commands import ROOT, run
from helpers.extras import installed

from connect4_agents.evaluation.records import read_games


@pytest.mark.parametrize("mode", ["mcts-vs-mcts", "train", "match", "demo"])
def test_help(mode: str) -> None:
    result = run("match", mode, "--help")
    assert result.returncode == 0 and "usage" in result.stdout and "--seed" in result.stdout


def test_train_then_match(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run(
        "match",
        "train",
        "--learner",
        "qlearning",
        "--episodes",
        "300",
        "--opponent",
        "random",
        "--out",
        str(out),
        "--quiet",
        "--window",
        "100",
    )
    assert result.returncode == 0, result.stderr
    assert (out / "qtable.npz").exists()
    assert (out / "curve.png").exists() == installed("matplotlib")  # the plot needs the train extra
    assert len(json.loads((out / "curve.json").read_text())["episodes"]) == 3
    result = run(
        "match",
        "match",
        "--table",
        str(out / "qtable.npz"),
        "--games",
        "6",
        "--mcts-playouts",
        "5",
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "match.json").read_text())
    assert summary["overall"]["games"] == 6 and summary["rows"] == 4 and summary["columns"] == 5
    assert summary["table"] == summary["model"] == "qtable.npz"  # beside the results: no machine path in it
    assert summary["learner"] == "qlearning"
    assert "95% CI" in result.stdout


def test_mcts_vs_mcts_one_game_and_summary() -> None:
    result = run("match", "mcts-vs-mcts", "--playouts0", "50", "--playouts1", "50")
    assert result.returncode == 0, result.stderr
    assert "chosen" in result.stdout and ("wins in" in result.stdout or "draw" in result.stdout)
    result = run(
        "match",
        "mcts-vs-mcts",
        "--games",
        "4",
        "--playouts0",
        "30",
        "--playouts1",
        "30",
        "--rows",
        "4",
        "--columns",
        "4",
    )
    assert result.returncode == 0, result.stderr
    assert "overall" in result.stdout


def test_match_refuses_a_corrupt_table(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"junk")
    result = run("match", "match", "--table", str(bad), "--games", "2")
    assert result.returncode == 2 and "error:" in result.stderr and "corrupt or truncated" in result.stderr
    assert "Traceback" not in result.stderr


def test_play_script_with_a_human() -> None:
    result = run(
        "play",
        "--player0",
        "human",
        "--player1",
        "random",
        "--rows",
        "3",
        "--columns",
        "3",
        "--win-length",
        "3",
        "--ui",
        "terminal",
        stdin="9\nx\n0\n1\n1\n1\n2\n2\n2\n3\n3\n3\n",  # columns from 1: 9, x and 0 are refused
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("is not a legal column") == 3 and " moves: " in result.stdout


@pytest.mark.slow  # about 5 s on 2 cores (over 3 s): make test-slow, CI runs it
def test_tournament(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    result = run(
        "tournament",
        "random",
        "mcts:20",
        "solver",
        "--games",
        "2",
        "--rows",
        "4",
        "--columns",
        "4",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert len(data["pairings"]) == 3 and sum(data["points"].values()) == 6
    result = run("tournament", "random", "muzero")
    assert result.returncode == 2 and "unknown agent" in result.stderr


@pytest.mark.slow  # about 4 s on 2 cores (over 3 s): make test-slow, CI runs it
def test_qlearning_demo_prints_only_relative_paths(tmp_path: Path) -> None:
    # the Q-learning demo, from the folder it writes into: no /home/..., /work/... or /tmp/... in the output
    result = _run_in(
        tmp_path,
        "demo",
        "--learner",
        "qlearning",
        "--episodes",
        "200",
        "--window",
        "100",
        "--games",
        "2",
        "--quiet",
        "--games-out",
        "g.jsonl",
    )
    assert result.returncode == 0, result.stderr
    assert "saved runs/demo/qtable.npz, runs/demo/curve.png" in result.stdout
    assert (
        "results written to runs/demo/match.json" in result.stdout
        and "game records: g.jsonl" in result.stdout
    )
    output = result.stdout + result.stderr + (tmp_path / "runs/demo/match.json").read_text()
    assert str(tmp_path.resolve()) not in output and str(tmp_path) not in output


def _run_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The bundled match script (``connect4 match``) run from ``folder``, as `make run` runs it."""
    script = str(ROOT / "scripts" / "mcts_vs_qlearning.py")
    return subprocess.run(
        [sys.executable, script, *args], cwd=folder, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow  # over 10 s on 2 cores with a cold numba cache: make test-slow, CI runs it
def test_the_demo_plays_the_shipped_network_on_6x7_and_says_what_to_try_next(tmp_path: Path) -> None:
    # what `make run` runs, with a tiny budget: 2 games against MCTS(20)
    result = _run_in(tmp_path, "demo", "--games", "2", "--mcts-playouts", "20", "--games-out", "g.jsonl")
    assert result.returncode == 0, result.stderr
    assert (
        "board 6x7, win_length 4" in result.stdout
        and "n-tuple (shipped) vs MCTS(20): 2 games" in result.stdout
    )
    assert "results written to runs/demo/match.json" in result.stdout and "try next:" in result.stdout
    assert "connect4 match demo --learner qlearning" in result.stdout
    summary = json.loads((tmp_path / "runs/demo/match.json").read_text())
    assert summary["learner"] == "ntuple" and summary["model"] == "ntuple" and "table" not in summary
    assert (summary["rows"], summary["columns"], summary["opponent"]) == (6, 7, "mcts:20")
    assert summary["overall"]["games"] == 2 and summary["as_first"]["games"] == 1  # seats alternate
    assert [game.players for game in read_games(tmp_path / "g.jsonl")] == [
        ("ntuple", "mcts:20"),
        ("mcts:20", "ntuple"),
    ]
    output = result.stdout + result.stderr
    assert str(tmp_path.resolve()) not in output and str(tmp_path) not in output
    assert not (tmp_path / "runs/demo/model.npz").exists()  # no budget given: nothing trained


@pytest.mark.slow  # a few hundred self-play games and their curve: well over 10 s on 2 cores
def test_train_a_network_then_match_it(tmp_path: Path) -> None:
    result = _run_in(tmp_path, "train", "--episodes", "40", "--quiet", "--out", "net")
    assert result.returncode == 0, result.stderr
    assert "saved net/model.npz, net/checkpoint.npz, net/curve.csv" in result.stdout
    curve = (tmp_path / "net/curve.csv").read_text().splitlines()
    assert curve[0].startswith("games,") and curve[-1].startswith("40,")  # the last point: the whole run
    result = _run_in(tmp_path, "match", "--model", "net/model.npz", "--games", "2", "--mcts-playouts", "10")
    assert result.returncode == 0, result.stderr
    assert (
        "n-tuple vs MCTS(10): 2 games" in result.stdout
        and "results written to net/match.json" in result.stdout
    )
    summary = json.loads((tmp_path / "net/match.json").read_text())
    assert summary["model"] == "model.npz" and summary["learner"] == "ntuple" and summary["rows"] == 6
    # the demo trains one first when given a budget, into its own folder
    result = _run_in(tmp_path, "demo", "--episodes", "20", "--quiet", "--games", "2", "--mcts-playouts", "10")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "runs/demo/model.npz").exists()
    assert json.loads((tmp_path / "runs/demo/match.json").read_text())["model"] == "model.npz"
