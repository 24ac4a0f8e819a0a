"""Scripts fail fast with ``error: ...`` and exit 2, and Ctrl-C keeps the work done (exit 130)."""

from __future__ import annotations

import re
import signal
import subprocess
import zipfile
from pathlib import Path

import pytest
from helpers.commands import HANG_GUARD, read_until, run, start
from helpers.extras import importorskip, needs

from connect4_agents import QLearningAgent, RandomAgent
from connect4_env import Rules


def expect_usage_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    assert fragment in result.stderr, result.stderr


@pytest.fixture(scope="module")
def small_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    agent = QLearningAgent(Rules(4, 5, 4), seed=0)
    agent.train(RandomAgent(seed=1), 20, window=20)
    return agent.save(tmp_path_factory.mktemp("tables") / "q45.npz")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--player0", "bogus"], "unknown agent"),
        (["--player0", "mcts:lots"], "playouts"),
        (["--rows", "-1"], "rows must be an integer >= 1"),
        (["--win-length", "1"], "win_length"),
        (["--rows", "3000", "--columns", "3000"], "cells"),
    ],
)
def test_play_reports_bad_settings(args: list[str], fragment: str) -> None:
    expect_usage_error(run("play", *args, "--player1", "random", "--ui", "terminal"), fragment)


def test_a_table_of_another_size_is_refused(small_table: Path) -> None:
    expect_usage_error(run("play", "--player0", f"qlearning:{small_table}", "--player1", "random"), "4x5")
    expect_usage_error(run("tournament", f"qlearning:{small_table}", "random", "--games", "2"), "4x5")


def test_an_output_that_is_an_input_is_refused_before_any_work(tmp_path: Path, small_table: Path) -> None:
    """Writing a run's output over its own input destroyed the input (records replaced by HTML, a Q-table by
    JSON); it is a usage error, and the input is untouched."""
    table = tmp_path / "q.npz"
    table.write_bytes(small_table.read_bytes())
    records = tmp_path / "games.jsonl"
    records.write_text("kept\n")
    size = ["--rows", "4", "--columns", "5"]
    cases = [
        (["replay", str(records), "-o", str(records)], records),
        (
            [
                "tournament",
                f"qlearning:{table}",
                "random",
                *size,
                "--games",
                "2",
                "--json",
                str(table),
            ],
            table,
        ),
        (["evaluate", f"qlearning:{table}", "--json", str(table)], table),
        (["match", "match", "--table", str(table), "--games-out", str(table)], table),
    ]
    for args, source in cases:
        before = source.read_bytes()
        expect_usage_error(run(*args), "is also an input of this run")
        assert source.read_bytes() == before


@pytest.mark.slow  # over 6 s on 2 cores: make test-slow (CI runs it)
def test_tournament_errors(tmp_path: Path) -> None:
    truncated = tmp_path / "model.zip"
    with zipfile.ZipFile(truncated, "w") as archive:
        archive.writestr("data", "{}")
        archive.writestr("policy.pth", b"\x80\x02trunc")
    expect_usage_error(run("tournament", f"sb3:{truncated}", "random", "--games", "2"), "error:")
    expect_usage_error(run("tournament", "human", "random", "--games", "2", stdin=""), "input was closed")
    expect_usage_error(
        run("tournament", "random", "random", "--games", "2", "--out", str(tmp_path)),
        "is a folder",
    )
    for games in ("0", "-3"):
        result = run("tournament", "random", "random", "--games", games)
        assert result.returncode == 2 and "must be at least 1" in result.stderr
    assert not list(tmp_path.glob("*.json"))
    # a picture's name must say a picture format (it was a PNG named x.txt), refused before any game or folder
    for script in ("tournament", "evaluate"):
        plot = tmp_path / "new" / "x.txt"
        agents = ("random", "random") if script == "tournament" else ("random",)
        expect_usage_error(run(script, *agents, "--plot", str(plot)), ".png, .svg, .pdf")
        assert not plot.parent.exists()


def test_train_checks_its_output_before_training(tmp_path: Path) -> None:
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    for out, fragment in ((str(a_file), "is a file"), ("/proc/nope", "cannot write")):
        result = run("match", "train", "--out", out)
        expect_usage_error(result, fragment)
        assert result.stdout == ""  # refused at once: not a line of training (50,000 episodes) before it
    expect_usage_error(run("match", "match", "--table", str(tmp_path / "none.npz")), "no Q-table")


@pytest.mark.slow  # over 6 s on 2 cores: make test-slow (CI runs it)
def test_train_sb3_refuses_bad_hyperparameters_before_training(tmp_path: Path) -> None:
    importorskip("stable_baselines3")
    expect_usage_error(
        run("train-sb3", "--hyperparameters", '{"bogus": 1}', "--out", str(tmp_path / "a")),
        "bogus",
    )
    result = run("train-sb3", "--hyperparameters", "[1, 2]", "--out", str(tmp_path / "b"))
    assert result.returncode == 2 and "not a JSON object" in result.stderr
    a_file = tmp_path / "file"
    a_file.write_text("x")
    expect_usage_error(run("train-sb3", "--out", str(a_file)), "is a file")


@pytest.mark.slow  # about 4 s on 2 cores (over 3 s): make test-slow, CI runs it
@needs("train", "tqdm")  # the progress bar says when episodes are done
def test_ctrl_c_in_training_saves_the_table(tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = start(
        "match",
        "train",
        "--learner",
        "qlearning",
        "--episodes",
        "10000000",
        "--opponent",
        "random",
        "--window",
        "100",
        "--out",
        str(out),
    )
    try:  # Ctrl-C once the progress bar has counted episodes, however long they took
        seen = read_until(process, re.compile(r" [1-9]\d*/10000000 "), stream="stderr")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=HANG_GUARD)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    err = seen + err
    assert process.returncode == 130, err
    assert "Traceback" not in err and "interrupted after" in err
    table = QLearningAgent.load(out / "qtable.npz")
    assert table.episodes_trained > 0 and table.q
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--port", "-1"], "-1 is not a port number (0..65535)"),
        (["--port", "70000"], "70000 is not a port number"),
        (["--session-timeout", "nan"], "--session-timeout must be a finite number of seconds > 0, got nan"),
        (["--session-timeout", "inf"], "must be a finite number"),
        (["--request-timeout", "3601"], "--request-timeout must be at most 3,600 seconds, got 3,601"),
        (["--host", ""], "'' is not an address"),  # an empty host would listen on every interface
        (["--host", "bad host"], "is not an address"),
    ],
)
def test_serve_openenv_refuses_a_bad_port_or_timeout_before_serving(
    args: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from connect4_agents.commands import serve_openenv

    if args[0] in ("--session-timeout", "--request-timeout"):
        importorskip("openenv")  # checked after the extra is found
    try:
        code = serve_openenv.main(args)
    except SystemExit as exit_:  # argparse's own usage errors
        code = int(exit_.code or 0)
    assert code == 2 and fragment in capsys.readouterr().err
