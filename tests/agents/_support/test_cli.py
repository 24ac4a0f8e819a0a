"""The shared command-line helpers: how a command prints a path, and the output folders of a failed run."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect4_agents._support.cli import EXIT_USAGE, check_output_dir, os_error_text, run_cli, shown_path


def test_shown_path_is_relative_inside_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert shown_path(tmp_path.resolve() / "runs" / "demo" / "qtable.npz") == str(
        Path("runs/demo/qtable.npz")
    )
    assert shown_path("runs/x.json") == str(Path("runs/x.json"))  # a relative path stays as the user wrote it
    outside = tmp_path.parent.resolve() / "elsewhere.json"
    assert shown_path(outside) == str(outside)  # outside it, only the absolute path names the file


def test_a_failed_run_leaves_no_empty_output_folder_behind(tmp_path: Path) -> None:
    """check_output_dir makes --out before any work; a run that then fails removes what it made and left
    empty (every level), and nothing else: not a folder holding a file, not one that was there before."""
    made = tmp_path / "new" / "deeper"

    def refused() -> int:
        check_output_dir(made)
        assert made.is_dir()
        raise ValueError("a setting the library refused")

    assert run_cli(refused) == EXIT_USAGE
    assert not (tmp_path / "new").exists()

    def saved_then_interrupted() -> int:
        check_output_dir(made)
        (made / "model.zip").write_bytes(b"kept")
        raise KeyboardInterrupt

    assert run_cli(saved_then_interrupted) == 130
    assert (made / "model.zip").read_bytes() == b"kept"

    existing = tmp_path / "existing"
    existing.mkdir()
    assert run_cli(lambda: check_output_dir(existing / "sub") and 1) == 1  # a failing exit code, as an error
    assert existing.is_dir() and not (existing / "sub").exists()

    assert run_cli(lambda: check_output_dir(tmp_path / "ok") and 0) == 0
    assert (tmp_path / "ok").is_dir()  # a run that succeeds keeps its folder, empty or not


def test_a_search_past_its_budget_is_one_line_and_a_bug_keeps_its_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from connect4_agents.solver.agent import SolverBudgetExceeded

    def too_big() -> int:
        raise SolverBudgetExceeded("the position needs more than node_budget=10 nodes")

    assert run_cli(too_big) == EXIT_USAGE
    assert capsys.readouterr().err.strip() == "error: the position needs more than node_budget=10 nodes"

    def broken() -> int:
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError, match="a bug"):
        run_cli(broken)


def test_counts_and_seeds_typed_by_a_user_are_bounded() -> None:
    """A count no run could finish (--games 10**20), a seed torch or SB3 cannot take (10**27) and a time
    limit of 1e30 s are refused up front, each naming its bound."""
    import argparse

    from connect4_agents import MCTSAgent
    from connect4_agents._support.cli import MAX_COUNT, positive_int
    from connect4_agents.alphazero.config import AlphaZeroTrainConfig
    from connect4_agents.sb3.train import SB3TrainConfig

    assert positive_int(str(MAX_COUNT)) == MAX_COUNT
    with pytest.raises(argparse.ArgumentTypeError, match="must be at most 1,000,000,000,000"):
        positive_int("99999999999999999999")
    with pytest.raises(ValueError, match="seed must be an integer in 0..4294967295"):
        AlphaZeroTrainConfig(seed=10**27).check()
    with pytest.raises(ValueError, match="seed must be an integer in 0..4294967295"):
        SB3TrainConfig(seed=10**27)
    with pytest.raises(ValueError, match="n_envs must be an integer in 1..4096"):
        SB3TrainConfig(n_envs=100_000)
    with pytest.raises(ValueError, match="time_limit must be a finite number > 0.0 and <= 604800.0"):
        MCTSAgent(time_limit=1e30)


def test_a_file_error_is_one_line_naming_the_file_without_errno(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)

    def read(path: Path) -> int:
        path.read_text()
        return 0

    assert run_cli(read, tmp_path / "games.jsonl") == EXIT_USAGE
    assert (
        capsys.readouterr().err == "error: games.jsonl: No such file or directory\n"
    )  # relative: shown_path
    assert run_cli(read, tmp_path) == EXIT_USAGE
    assert capsys.readouterr().err == "error: .: Is a directory\n"

    def ours() -> int:
        raise FileNotFoundError("no Q-table file at t.npz")  # a message of our own is kept as written

    assert run_cli(ours) == EXIT_USAGE
    assert capsys.readouterr().err == "error: no Q-table file at t.npz\n"
    error = OSError(18, "Invalid cross-device link", "/tmp/a", None, "/data/b")
    assert os_error_text(error) == "/tmp/a -> /data/b: Invalid cross-device link"
