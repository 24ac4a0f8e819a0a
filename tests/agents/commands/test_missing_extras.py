"""Each command with a missing optional dependency exits 2 with ``error: ... needs the '<extra>' extra``, no
traceback, before any work: nothing is played, trained or written (the tournament checks scipy first rather
than playing and losing the games to the rating fit)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.extras import absent

from connect4_agents.commands import evaluate, play, tournament, train_alphazero, train_sb3

ROOT = Path(__file__).resolve().parents[3]


CASES: list[tuple[str, Callable[[list[str]], int], list[str], str, str]] = [
    ("scipy", tournament.main, ["random", "random", "--games", "2", "--workers", "1"], "train", "rating fit"),
    (
        "matplotlib",
        tournament.main,
        ["random", "random", "--games", "2", "--plot", "p.png"],
        "train",
        "--plot",
    ),
    ("ray", tournament.main, ["random", "random", "--games", "2", "--backend", "ray"], "distributed", "ray"),
    (
        "matplotlib",
        evaluate.main,
        ["random", "--test-sets", "6x7-end-easy", "--plot", "p.png"],
        "train",
        "--plot",
    ),
    ("torch", train_sb3.main, ["--timesteps", "64", "--out", "run"], "train", "train-sb3"),
    ("stable_baselines3", train_sb3.main, ["--timesteps", "64", "--out", "run"], "train", "train-sb3"),
    ("torch", train_alphazero.main, ["--out", "run"], "train", "train-alphazero"),
    (
        "pygame",
        play.main,
        ["--ui", "window", "--player0", "random", "--player1", "random"],
        "render",
        "window",
    ),
]


@pytest.mark.parametrize(("module", "main", "argv", "extra", "what"), CASES, ids=lambda v: str(v)[:20])
def test_a_missing_extra_exits_2_before_any_work(
    module: str,
    main: Callable[[list[str]], int],
    argv: list[str],
    extra: str,
    what: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    absent(monkeypatch, module)
    assert main([*argv, "--json", "t.json"] if main is tournament.main else argv) == 2
    out, err = capsys.readouterr()
    assert err.startswith("error: ") and what in err, err
    assert (
        f"needs the {extra!r} extra (" in err and "is not installed)" in err
    )  # on core: the first one missing
    assert f'pip install -e ".[{extra}]"' in err
    assert "Traceback" not in err
    assert out == ""  # nothing played or trained: no pairing line, no generation line
    assert not (tmp_path / "t.json").exists() and not (tmp_path / "p.png").exists()
    assert not (tmp_path / "run").exists() or not any((tmp_path / "run").iterdir())


def test_the_tournament_command_on_a_core_install_prints_one_line(tmp_path: Path) -> None:
    # as a user runs it (connect4 tournament, a fresh interpreter), with scipy hidden as on a core install
    code = (
        "import runpy, sys; sys.modules['scipy'] = None; "
        "sys.argv = ['connect4', 'tournament', 'random', 'mcts:10', '--games', '4', '--json', sys.argv[1]]; "
        "runpy.run_module('connect4_agents.commands', run_name='__main__')"
    )
    out = tmp_path / "t.json"
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: the tournament's rating fit needs the 'train' extra (scipy is not installed): "
        'pip install -e ".[train]"'
    ]
    assert done.stdout == "" and not out.exists()
