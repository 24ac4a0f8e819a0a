"""``connect4 evaluate`` and ``connect4 tournament`` as a user runs them: outputs, backends, Ctrl-C, no leftovers."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest
from helpers.commands import CONNECT4, HANG_GUARD, ROOT, read_until, run, start, wait_gone
from helpers.extras import importorskip, needs, needs_book

from connect4_agents.qlearning.agent import QLearningAgent
from connect4_agents.random_agent import RandomAgent
from connect4_env import Rules


@needs("train", "matplotlib")  # --plot
@pytest.mark.slow  # over 6 s on 2 cores: make test-slow (CI runs it)
def test_tournament_json_and_plot(tmp_path):
    out, plot = tmp_path / "t.json", tmp_path / "t.png"
    args = [
        "random",
        "mcts:30",
        "solver",
        "--rows",
        "4",
        "--columns",
        "5",
        "--games",
        "4",
        "--bootstrap",
        "50",
    ]
    result = run("tournament", *args, "--json", str(out), "--plot", str(plot), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "Elo" in result.stdout and "random vs solver" in result.stdout
    data = json.loads(out.read_text())
    assert data["finished"] is True and data["anchor"] == "random"
    assert set(data["ratings"]) == {"random", "mcts:30", "solver"}
    for entry in data["ratings"].values():
        low, high = entry["ci95"]
        assert low <= entry["elo"] <= high
    assert data["ratings"]["random"]["elo"] == 0
    assert len(data["pairings"]) == 3 and len(data["games"]) == 12
    assert plot.read_bytes()[:4] == b"\x89PNG"

    ladder = tmp_path / "ladder.json"
    ladder.write_text(out.read_text())
    gauntlet = run(
        "tournament", "--gauntlet", "mcts:5", "random", "solver", "--rows", "4", "--columns", "5",
        "--games", "4", "--ladder", str(ladder), "--json", str(tmp_path / "g.json"), "--no-progress",
    )  # fmt: skip
    assert gauntlet.returncode == 0, gauntlet.stderr
    rated = json.loads((tmp_path / "g.json").read_text())
    assert [p["a"] for p in rated["pairings"]] == ["mcts:5", "mcts:5"]
    assert rated["ratings"]["solver"]["elo"] == pytest.approx(data["ratings"]["solver"]["elo"])


@needs("train", "tqdm")
@pytest.mark.slow  # a tournament command's start-up, over 3 s on 2 cores: make test-slow (CI runs it)
def test_pairing_lines_start_their_own_line_under_the_progress_bar() -> None:
    # stdout and stderr in one stream, as in a log file: a pairing line must not land on the bar's line
    done = subprocess.run(
        [*CONNECT4, "tournament", "random", "mcts:5", "mcts:10", "--rows", "4", "--columns", "5",
         "--games", "2", "--bootstrap", "10"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    pairings = [line for line in done.stdout.split("\n") if " vs mcts:" in line]
    assert len(pairings) == 3
    assert all(line.split("\r")[-1].startswith(("random vs", "mcts:5 vs")) for line in pairings), pairings


@pytest.mark.slow  # about 4 s on 2 cores (over 3 s): make test-slow, CI runs it
@needs_book  # the ladder holds the solver, which answers early 6x7 positions fast with the book only
def test_gauntlet_against_the_reference_ladder(tmp_path):
    result = run("tournament", "--gauntlet", "mcts:3", "--games", "2", "--no-progress", "--bootstrap", "20")
    assert result.returncode == 0, result.stderr
    assert "mcts:3 vs mcts:10000" in result.stdout and "mcts:3 vs solver" in result.stdout
    assert "fixed" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["random"], "at least two"),
        (["random", "random"], "more than once"),
        (["random", "mcts:0"], "playouts"),
        (["--gauntlet", "random", "--rows", "4", "--columns", "5"], "--ladder"),
        (["--gauntlet", "random", "mcts:77"], "without a rating"),
        (["random", "mcts:5", "--backend", "ray", "--workers", "0"], "workers"),
    ],
)
def test_tournament_errors(args, message):
    result = run("tournament", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow  # about 4 s on 2 cores (over 3 s): make test-slow, CI runs it
@needs("train", "matplotlib")  # --plot
def test_evaluate_script(tmp_path):
    table = tmp_path / "q.npz"
    agent = QLearningAgent(Rules(4, 5, 4), seed=0)
    agent.train(RandomAgent(seed=1), episodes=300, progress=False)
    agent.save(table)
    out, plot = tmp_path / "acc.json", tmp_path / "acc.png"
    result = run(
        "evaluate", "random", f"qlearning:{table}", "--test-sets", "all", "--workers", "1",
        "--json", str(out), "--plot", str(plot), "--no-progress",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    reports = json.loads(out.read_text())["reports"]
    assert set(reports[1]["per_set"]) == {"4x5"}  # the table plays its own board only
    assert len(reports[0]["per_set"]) == 13
    assert 0 <= reports[1]["optimal_class_rate"] <= 1 and plot.exists()
    bad = run("evaluate", "random", "--test-sets", "7x8")
    assert bad.returncode == 2 and "unknown test sets" in bad.stderr


# Three agents, 400 games a pairing: the games of the first pairing (random vs mcts:1, milliseconds each) come
# first and end with its result line; the other two pairings (mcts:3000) are then under way for minutes, so a
# Ctrl-C sent on that line finds finished games and a running pool, however fast the machine is.
INTERRUPTED_TOURNAMENT = ("random", "mcts:1", "mcts:3000", "--games", "400", "--workers", "2", "--no-progress")  # fmt: skip
FIRST_PAIRING_LINE = "random vs mcts:1"


@pytest.mark.slow
def test_ctrl_c_stops_the_pool_and_keeps_finished_games(tmp_path):
    out = tmp_path / "t.json"
    process = start("tournament", *INTERRUPTED_TOURNAMENT, "--json", str(out), new_session=True)
    try:
        read_until(process, FIRST_PAIRING_LINE)
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole foreground group
        _, stderr = process.communicate(timeout=HANG_GUARD)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    data = json.loads(out.read_text())
    assert data["finished"] is False and 400 <= len(data["games"]) < 1200  # the first pairing's, at least
    assert wait_gone(process.pid) == []


@pytest.mark.slow
def test_ray_backend_plays_the_same_games_and_leaves_nothing(tmp_path):
    importorskip("ray")
    common = ["random", "mcts:20", "solver", "--rows", "4", "--columns", "5", "--games", "4", "--no-progress"]
    process_json, ray_json = tmp_path / "p.json", tmp_path / "r.json"
    result = run("tournament", *common, "--workers", "2", "--json", str(process_json))
    assert result.returncode == 0, result.stderr
    ray = start(
        "tournament",
        *common,
        "--backend",
        "ray",
        "--workers",
        "2",
        "--json",
        str(ray_json),
        new_session=True,
    )
    stdout, stderr = ray.communicate(timeout=HANG_GUARD)
    assert ray.returncode == 0, stderr
    assert json.loads(ray_json.read_text())["games"] == json.loads(process_json.read_text())["games"]
    assert wait_gone(ray.pid) == []


@pytest.mark.slow
def test_ctrl_c_on_ray_leaves_no_ray_process(tmp_path):
    importorskip("ray")
    out = tmp_path / "t.json"
    process = start(
        "tournament", *INTERRUPTED_TOURNAMENT, "--backend", "ray", "--json", str(out),
        new_session=True,
    )  # fmt: skip
    try:
        read_until(process, FIRST_PAIRING_LINE)  # Ray is up and games are under way
        os.killpg(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=HANG_GUARD)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 130, stderr
    data = json.loads(out.read_text())
    assert data["finished"] is False and 400 <= len(data["games"]) < 1200
    assert wait_gone(process.pid, 60) == []


def test_evaluate_a_ply_range_and_a_sample() -> None:
    from helpers.commands import run as run_script

    from connect4_agents.evaluation.test_sets import select_positions, select_test_sets

    result = run_script("evaluate", "random", "--plies", "40-41", "--workers", "1", "--no-progress")
    assert result.returncode == 0, result.stderr
    sets = select_test_sets(["6x7"])
    expected = len(select_positions(sets, (40, 41)))

    def rows(stdout: str) -> dict[str, int]:  # set name (or "all") -> positions, from the report's table
        return {line.split()[0]: int(line.split()[1]) for line in stdout.splitlines()[2:] if line.strip()}

    found = rows(result.stdout)
    assert set(found) - {"all"} <= set(sets)  # each set on its own, a sample or range notwithstanding
    assert found.get("all", sum(found.values())) == expected
    sampled = run_script("evaluate", "random", "--plies", "10-32", "--sample", "7", "--no-progress")
    assert sampled.returncode == 0, sampled.stderr
    found = rows(sampled.stdout)
    assert set(found) - {"all"} <= set(sets) and sum(n for name, n in found.items() if name != "all") == 7
    bad = run_script("evaluate", "random", "--plies", "4")
    assert bad.returncode == 2 and "range of plies" in bad.stderr
