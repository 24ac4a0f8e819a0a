"""The benchmarks that feed the docs run and print what their pages quote (slow: they measure for real)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.extras import importorskip, needs_book

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


@needs_book  # the solver plays positions of the six 6x7 sets, the openings among them
def test_accuracy_by_set_reads_errors_per_set() -> None:
    done = run("benchmarks/accuracy_by_set.py", "solver", "random", "--sample", "60", "--workers", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    table = done.stdout.split("errors on the non-trivial positions")[1].splitlines()
    solver = next(line for line in table if line.startswith("solver")).split()[1:]
    random = next(line for line in table if line.startswith("random")).split()[1:]
    assert all(cell in ("0.0", "-") for cell in solver)  # perfect play errs nowhere
    assert float(random[-2]) > float(random[-1]) > 0  # random errs, and more where the choice matters


def test_accuracy_by_set_takes_the_sets_to_read() -> None:
    done = run("benchmarks/accuracy_by_set.py", "random", "--sets", "6x7-end-easy", "--sample", "20")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("20 positions of 6x7-end-easy,")
    header = done.stdout.split("errors on the non-trivial positions")[1].splitlines()[1].split()
    assert header == ["agent", "end-easy", "all", "all", "positions"]
    wrong = run("benchmarks/accuracy_by_set.py", "random", "--sets", "6x7-nowhere")
    assert wrong.returncode == 2 and "unknown test sets ['6x7-nowhere']" in wrong.stderr


def test_report_writes_a_benchmark_output_with_its_header(tmp_path: Path) -> None:
    done = run("benchmarks/report.py", "--only", "env_throughput", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    text = (tmp_path / "env_throughput.txt").read_text()
    lines = text.splitlines()
    assert lines[0] == "$ python benchmarks/env_throughput.py --repeats 5"
    assert lines[1].startswith("# ") and "cores" in lines[1] and "ratio raw_env" in text
    assert str(ROOT) not in text  # no machine paths in what the docs include
    assert not list(tmp_path.glob("*.part"))


def test_solver_latency_reports_percentiles_and_the_opponent_rate() -> None:
    importorskip("bitbully_databases")  # the book extra: the benchmark is about 6x7 with the book
    done = run("benchmarks/solver_latency.py", "--per-set", "3", "--games", "1", "--seconds", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    for kind in ("evaluate", "act"):
        assert any(line.split()[:2] == [kind, "all"] and "p99" in line for line in lines), done.stdout
        # the nodes each solver searched, which do not depend on the machine's speed
        assert any(line.split()[:5] == [kind, "six", "sets", "nodes,", "ours"] for line in lines), done.stdout
    assert "agent steps/s" in lines[-1]
    if "bitbully is not installed" not in done.stdout:  # with the peer: both solvers agree on every class
        assert "disagree in 0 positions" in done.stdout


def test_kaggle_endgame_reports_how_many_positions_the_endgame_solver_proves() -> None:
    done = run("benchmarks/kaggle_endgame.py", "--sample", "4")
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {
        line.split("|")[0].strip(): line.split("|")[1].strip()
        for line in done.stdout.splitlines()
        if line.count("|") == 3 and not line.startswith("empty")
    }
    assert rows["0-3"] == "4/4" and rows["8-11"] == "4/4"  # a late position is proved at once
    assert rows["40-43"].startswith("0/")  # an opening needs far more than a fifth of a move


def test_selfplay_throughput_times_each_speed_up_against_before() -> None:
    importorskip("torch")
    done = run(
        "benchmarks/selfplay_throughput.py",
        *("--games", "2", "--parallel", "2", "--simulations", "4", "--repeats", "1"),
        *("--variants", "before", "snapshot", "winograd", "defaults"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    for name in ("before", "snapshot", "winograd", "defaults"):
        assert sum(line.split()[:1] == [name] and "x before" in line for line in lines) == 1, done.stdout
    assert "1.00x before" in next(line for line in lines if line.split()[:1] == ["before"])


def test_alphazero_speed_times_the_snapshot_against_the_modules() -> None:
    importorskip("torch")
    done = run("benchmarks/alphazero_speed.py", "--positions", "3", "--simulations", "8", "--playouts", "200")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "8 sims, modules" in done.stdout and "raw policy, modules" in done.stdout
    assert "alphazero 8 simulations, modules / inference snapshot" in done.stdout
    assert "alphazero raw policy, modules / inference snapshot" in done.stdout


def test_pool_throughput_compares_four_members_with_one_and_finds_no_episode_meeting_two() -> None:
    importorskip("sb3_contrib")
    done = run("benchmarks/pool_throughput.py", "--steps", "100", "--repeats", "1", "--episodes", "300")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ratio 4 / 1" in done.stdout
    boundary = next(line for line in done.stdout.splitlines() if line.startswith("episode boundaries"))
    assert boundary.endswith(" 0 violations") and "replies checked" in boundary, done.stdout


@needs_book  # scores the models on the six 6x7 sets
def test_selfplay_league_trains_each_mode_and_scores_it_per_set(tmp_path: Path) -> None:
    importorskip("sb3_contrib")
    done = run("benchmarks/selfplay_league.py", "--timesteps", "2048", "--games", "4", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    table = done.stdout.split("non-trivial errors (%)")[1].splitlines()
    assert table[1].split()[:2] == ["run", "steps"] and table[1].split()[-2:] == ["vs", "mcts:100"]
    rows = {line.split()[0]: line.split() for line in table[2:] if line.strip()}
    assert set(rows) == {"random", "self", "league", "(random)", "(mcts:100)"}
    for mode in ("random", "self", "league"):
        errors = [float(cell) for cell in rows[mode][2:9]]
        assert all(0 <= e <= 100 for e in errors)
    assert (tmp_path / "league" / "league.json").is_file()


def test_ntuple_throughput_prints_transitions_per_second_against_pettingzoo() -> None:
    done = run("benchmarks/ntuple_throughput.py", "--games", "300", "--peer-games", "5", "--repeats", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    ours, peer, ratio = done.stdout.splitlines()
    assert ours.startswith("n-tuple self-play, learning included:") and "transitions/s" in ours
    assert peer.startswith("PettingZoo connect_four_v3") and ratio.startswith("ratio: ")
    assert float(ratio.split()[1].rstrip("x")) > 0


def test_reward_throughput_reports_the_reward_next_to_reading_alone() -> None:
    done = run("benchmarks/reward_throughput.py", "--small", "--positions", "12", "--generations", "4")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    for label in (
        "solve per position",
        "reward from the dataset's scores",
        "reading alone",
        "reward solved on the fly",
    ):
        assert any(line.startswith(label) and "p99" in line for line in lines), done.stdout
    assert "grading's cost: the reward runs at" in done.stdout
