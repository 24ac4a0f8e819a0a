"""Accuracy reports, Bradley-Terry ratings and seeded tournaments on every backend."""

from __future__ import annotations

import json
import math
import os
import signal

import numpy as np
import pytest
from helpers.extras import heavy_without_numba, needs

from connect4_agents.evaluation import (
    PairingCounts,
    WorkerPool,
    evaluate_accuracy,
    fit_ratings,
    load_test_set,
    pairing_counts,
    run_batches,
    run_tournament,
)
from connect4_agents.evaluation.ratings import ELO_PER_NATURAL_UNIT, reference_ladder
from connect4_agents.evaluation.tournament import plan_pairings
from connect4_agents.random_agent import RandomAgent
from connect4_env import Rules
from connect4_env.rules import IllegalMoveError


class LeftMost:
    """Always the leftmost legal column: its accuracy is computed by hand below."""

    def act(self, observation, action_mask=None):
        mask = observation["action_mask"] if action_mask is None else action_mask
        return int(np.flatnonzero(mask)[0])


class Broken:
    def act(self, observation, action_mask=None):
        mask = observation["action_mask"] if action_mask is None else action_mask
        full = np.flatnonzero(np.asarray(mask) == 0)
        return int(full[0]) if full.size else 99


class Answers:
    """Answers the leftmost legal column as the given type (a string, a float): not a move."""

    def __init__(self, kind):
        self.kind = kind

    def act(self, observation, action_mask=None):
        return self.kind(LeftMost().act(observation, action_mask))


# -- accuracy ---------------------------------------------------------------------------------------------------
def test_a_move_that_is_not_an_integer_is_refused_as_in_a_game():
    """evaluate_accuracy read a str column as an illegal one and a float as a column; play_game refuses both
    with a TypeError, and so does it now. numpy integers are moves."""
    positions = load_test_set("5x4")[:4]
    for kind in (str, float):
        with pytest.raises(TypeError):
            evaluate_accuracy(Answers(kind), positions, workers=1, progress=False)
    report = evaluate_accuracy(Answers(np.int64), positions, workers=1, progress=False)
    assert report.n == 4


def test_accuracy_counts_by_hand():
    positions = load_test_set("5x4")[:120]
    report = evaluate_accuracy(LeftMost(), positions, workers=1, progress=False)
    chosen = [next(c for c, s in enumerate(p.move_scores) if s is not None) for p in positions]
    expected_class = np.mean(
        [np.sign(p.move_scores[c]) == np.sign(p.score) for p, c in zip(positions, chosen)]
    )
    expected_exact = np.mean([p.move_scores[c] == p.score for p, c in zip(positions, chosen)])
    expected_regret = np.mean([p.score - p.move_scores[c] for p, c in zip(positions, chosen)])
    assert report.n == 120 and report.moves == chosen
    assert report.optimal_class_rate == pytest.approx(expected_class)
    assert report.exact_rate == pytest.approx(expected_exact)
    assert report.mean_regret == pytest.approx(expected_regret)
    low, high = report.optimal_class_ci95
    assert low < report.optimal_class_rate < high
    assert 0 < report.exact_rate < 1  # the leftmost column is sometimes, not always, best: a real measurement
    data = report.to_dict()
    assert data["n"] == 120 and set(data["per_set"]) == {"5x4-w4"}
    json.dumps(data)


def test_nontrivial_positions_are_where_the_choice_matters():
    # against a slow reading of the definition: some legal move's outcome class is below the position's
    positions = load_test_set("4x5") + load_test_set("6x7-end-easy")[:200]
    for p in positions:
        classes = {int(np.sign(s)) for s in p.move_scores if s is not None}
        assert p.nontrivial == (len(classes) > 1), p
        assert p.nontrivial or classes == {p.outcome}  # trivial: every move keeps the outcome
    assert 0 < sum(p.nontrivial for p in positions) < len(positions)  # both kinds occur


def test_nontrivial_accuracy_counts_by_hand_per_set():
    names = ["5x4", "4x4-w3"]
    report = evaluate_accuracy(LeftMost(), names, workers=1, progress=False)
    for name in names:
        positions = load_test_set(name)
        chosen = [next(c for c, s in enumerate(p.move_scores) if s is not None) for p in positions]
        kept = [np.sign(p.move_scores[c]) == np.sign(p.score) for p, c in zip(positions, chosen)]
        hard = [k for k, p in zip(kept, positions) if p.nontrivial]
        part = report.per_set[name]
        assert part.nontrivial == len(hard) and part.nontrivial_rate == pytest.approx(np.mean(hard))
        low, high = part.nontrivial_ci95
        assert low <= part.nontrivial_rate <= high
        # a trivial position is always kept, so the non-trivial rate is the lower one
        assert part.nontrivial_rate < part.optimal_class_rate
    data = report.to_dict()
    assert data["per_set"]["5x4"]["nontrivial_n"] == report.per_set["5x4"].nontrivial
    assert data["nontrivial_n"] == sum(report.per_set[n].nontrivial for n in names)
    table = report.table()
    assert "non-trivial" in table and all(name in table for name in names)


def test_a_sample_across_sets_is_still_reported_per_set():
    from connect4_agents.evaluation.accuracy import evaluate_agents

    sets = ["6x7-begin-easy", "6x7-end-easy"]
    (report,) = evaluate_agents(["random"], sets, plies=(0, 41), sample=60, workers=1, progress=False)
    assert set(report.per_set) <= set(sets) and len(report.per_set) == 2
    assert sum(part.n for part in report.per_set.values()) == report.n == 60
    with pytest.raises(TypeError, match="pairs"):
        evaluate_accuracy("random", [("4x5", "not a position")], workers=1, progress=False)


@heavy_without_numba
def test_solver_is_perfect_and_random_is_not():
    names = ["4x5", "4x4-w3"]
    solver = evaluate_accuracy("solver", names, workers=1, progress=False)
    assert solver.optimal_class_rate == 1.0 and solver.exact_rate == 1.0 and solver.mean_regret == 0
    assert set(solver.per_set) == set(names) and solver.per_set["4x5"].n == len(load_test_set("4x5"))
    random = evaluate_accuracy("random", names, workers=1, progress=False, seed=3)
    assert random.optimal_class_rate < 0.9 and random.mean_regret > 0


def test_same_moves_on_any_number_of_workers_and_batches():
    positions = load_test_set("5x5")[:60]
    one = evaluate_accuracy("mcts:50", positions, workers=1, progress=False, seed=7)
    many = evaluate_accuracy("mcts:50", positions, workers=2, batch_size=7, progress=False, seed=7)
    assert one.moves == many.moves
    other_seed = evaluate_accuracy("mcts:50", positions, workers=1, progress=False, seed=8)
    assert other_seed.moves != one.moves


def test_accuracy_bad_input(tmp_path):
    positions = load_test_set("4x5")[:5]
    with pytest.raises(IllegalMoveError, match="column"):
        evaluate_accuracy(Broken(), positions, workers=1, progress=False)
    with pytest.raises(ValueError, match="unknown test set"):
        evaluate_accuracy("random", "4x6", workers=1, progress=False)
    with pytest.raises(TypeError, match="test_set"):
        evaluate_accuracy("random", 5, workers=1, progress=False)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="backend"):
        evaluate_accuracy("random", positions, backend="threads", progress=False)
    with pytest.raises(ValueError, match="workers"):
        evaluate_accuracy("random", positions, workers=0, progress=False)
    with pytest.raises(ValueError, match="mcts:lots"):
        evaluate_accuracy("mcts:lots", positions, workers=1, progress=False)


@needs("train", "matplotlib")
def test_accuracy_plot(tmp_path):
    report = evaluate_accuracy("random", ["4x5", "5x4"], workers=1, progress=False)
    report.plot(str(tmp_path / "acc.png"))
    assert (tmp_path / "acc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "4x5" in report.table() and "all" in report.table()


# -- ratings ----------------------------------------------------------------------------------------------------
def test_two_players_closed_form():
    """With one pairing the maximum-likelihood difference is the logit of the (prior-smoothed) score."""
    ratings = fit_ratings([PairingCounts("random", "x", 30, 10, 60)], bootstrap=0, prior_draws=1.0)
    share = (30 + 5 + 0.5) / (100 + 1)
    assert ratings.elo["random"] == 0
    assert ratings.elo["x"] == pytest.approx(-400 * math.log10(share / (1 - share)), abs=0.05)


def test_ratings_recover_known_strengths():
    rng = np.random.default_rng(0)
    truth = {"random": 0.0, "a": 150.0, "b": 400.0, "c": 700.0}
    pairings = []
    names = list(truth)
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            p = 1 / (1 + 10 ** ((truth[y] - truth[x]) / 400))
            wins = int(rng.binomial(4000, p))
            pairings.append(PairingCounts(x, y, wins, 0, 4000 - wins))
    ratings = fit_ratings(pairings, bootstrap=100, seed=1)
    for name, elo in truth.items():
        assert ratings.elo[name] == pytest.approx(elo, abs=25)
        low, high = ratings.ci95[name]
        assert low <= ratings.elo[name] <= high
    assert ratings.ci95["random"] == (0.0, 0.0)
    assert ratings.ci95["c"][1] - ratings.ci95["c"][0] > 5


def test_draws_are_half_points():
    drawn = fit_ratings([PairingCounts("random", "x", 0, 50, 0)], bootstrap=0)
    split = fit_ratings([PairingCounts("random", "x", 25, 0, 25)], bootstrap=0)
    assert drawn.elo["x"] == pytest.approx(0, abs=1e-6) and split.elo["x"] == pytest.approx(0, abs=1e-6)


def test_perfect_records_stay_finite_and_ordered():
    ratings = fit_ratings(
        [PairingCounts("random", "a", 0, 0, 50), PairingCounts("a", "b", 0, 0, 50)], bootstrap=50
    )
    assert 0 < ratings.elo["a"] < ratings.elo["b"] < 3000
    assert all(math.isfinite(x) for interval in ratings.ci95.values() for x in interval)


def test_fixed_ladder():
    ladder = {"random": 0.0, "strong": 800.0}
    result = fit_ratings(
        [PairingCounts("new", "random", 45, 0, 5), PairingCounts("new", "strong", 5, 0, 45)],
        fixed=ladder,
        bootstrap=0,
    )
    assert result.elo["random"] == 0 and result.elo["strong"] == 800
    assert 200 < result.elo["new"] < 600


def test_rating_errors():
    with pytest.raises(ValueError, match="no games link"):
        fit_ratings([PairingCounts("random", "a", 1, 0, 1), PairingCounts("b", "c", 1, 0, 1)], bootstrap=0)
    with pytest.raises(ValueError, match="did not play"):
        fit_ratings([PairingCounts("random", "a", 1, 0, 1)], fixed={"z": 0.0}, bootstrap=0)
    with pytest.raises(ValueError, match="no games"):
        fit_ratings([], bootstrap=0)
    with pytest.raises(ValueError, match="bootstrap"):
        fit_ratings([PairingCounts("random", "a", 1, 0, 1)], bootstrap=-1)
    with pytest.raises(TypeError, match="PairingCounts"):
        fit_ratings([("random", "a", 1, 0, 1)], bootstrap=0)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="wins of random vs a"):
        fit_ratings([PairingCounts("random", "a", -1, 0, 1)], bootstrap=0)
    with pytest.raises(TypeError, match="draws of random vs a"):
        fit_ratings([PairingCounts("random", "a", 1, 0.5, 1)], bootstrap=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="itself"):
        fit_ratings([PairingCounts("a", "a", 1, 0, 1)], bootstrap=0)


def test_reference_ladder_is_ordered():
    ladder = reference_ladder()
    order = ["random", "mcts:10", "mcts:100", "mcts:1000", "mcts:10000", "solver"]
    assert list(ladder) == order or set(ladder) == set(order)
    assert [ladder[n] for n in order] == sorted(ladder[n] for n in order)
    assert ladder["random"] == 0
    assert pytest.approx(173.7178, abs=1e-3) == ELO_PER_NATURAL_UNIT


# -- tournaments and backends -----------------------------------------------------------------------------------
@heavy_without_numba
def test_tournament_same_games_on_any_split():
    rules = Rules(4, 5, 4)
    specs = ["random", "mcts:20", "solver"]
    one, games_one = run_tournament(specs, 6, rules, seed=5, workers=1, progress=False)
    two, games_two = run_tournament(specs, 6, rules, seed=5, workers=2, batch_size=4, progress=False)
    assert games_one == games_two
    assert [g.moves for g in games_one] != [
        g.moves for g in run_tournament(specs, 6, rules, seed=6, workers=1, progress=False)[1]
    ]
    assert len(games_one) == 18 and [(a, b) for a, b, _ in one.pairings] == plan_pairings(specs)
    for _, _, match in one.pairings:
        assert match.n_games == 6 and sum(match.by_side["first"]) == 3
    counts = pairing_counts(one)
    assert counts == pairing_counts(two)
    # the solver never loses on 4x5 from either side? it must at least never lose to random
    solver_vs_random = next(m for a, b, m in one.pairings if (a, b) == ("random", "solver"))
    assert solver_vs_random.wins == 0


def test_gauntlet_plays_only_the_new_agent():
    assert plan_pairings(["random", "mcts:10"], gauntlet="solver") == [
        ("solver", "random"),
        ("solver", "mcts:10"),
    ]
    with pytest.raises(ValueError, match="also on the ladder"):
        plan_pairings(["random", "solver"], gauntlet="solver")
    with pytest.raises(ValueError, match="more than once"):
        plan_pairings(["random", "random"])
    with pytest.raises(ValueError, match="at least two"):
        plan_pairings(["random"])
    with pytest.raises(TypeError, match="string"):
        plan_pairings("random")


def test_tournament_checks_specs_before_playing():
    with pytest.raises(ValueError, match="mcts:-3"):
        run_tournament(["random", "mcts:-3"], 2, Rules(4, 5, 4), workers=1, progress=False)
    with pytest.raises(ValueError, match="n_games"):
        run_tournament(["random", "mcts:3"], 0, progress=False)


def _square(x: int) -> int:
    return x * x


def test_run_batches_keeps_order():
    assert run_batches(_square, list(range(9)), workers=2) == [x * x for x in range(9)]
    assert run_batches(_square, [], workers=2) == []
    with pytest.raises(ValueError, match="backend='ray'"):
        run_batches(_square, [1], address="localhost:6379")


def _pid_and_count(x: int) -> tuple[int, int]:
    """The worker's pid and how many tasks that worker ran so far (module state: what a kept pool keeps)."""
    _pid_and_count.calls = getattr(_pid_and_count, "calls", 0) + 1  # type: ignore[attr-defined]
    if x < 0:
        raise ValueError(f"bad batch {x}")
    return os.getpid(), _pid_and_count.calls  # type: ignore[attr-defined]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_worker_pool_keeps_its_processes_across_calls_and_ends_them():
    with WorkerPool(2) as pool:
        assert pool.pids == []  # started by the first call
        first = run_batches(_pid_and_count, [1, 2, 3, 4], workers=2, pool=pool)
        pids = pool.pids
        second = run_batches(_pid_and_count, [5, 6, 7, 8], workers=2, pool=pool)
        assert pool.pids == pids and {pid for pid, _ in first + second} <= set(pids)
        # each worker's module state survived: its task count went on rising instead of starting again
        assert sum(count for _, count in second) > sum(count for _, count in first)
    assert pool.pids == [] and not any(_alive(pid) for pid in pids)  # the with block ended them
    # a failing task terminates the workers and propagates; a later call starts new ones
    with WorkerPool(2) as pool:
        run_batches(_pid_and_count, [1, 2], workers=2, pool=pool)
        old = pool.pids
        with pytest.raises(ValueError, match="bad batch -1"):
            run_batches(_pid_and_count, [1, -1, 2], workers=2, pool=pool)
        assert pool.pids == [] and not any(_alive(pid) for pid in old)
        assert 1 in [count for _, count in run_batches(_pid_and_count, [1, 2], workers=2, pool=pool)]  # fresh
        assert pool.pids and set(pool.pids).isdisjoint(old)
    with pytest.raises(TypeError, match="pool must be None or a WorkerPool"):
        run_batches(_square, [1, 2], workers=2, pool="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="workers must be an integer in 1..4096"):
        WorkerPool(0)


def _die_on_negative(x: int) -> int:
    """A task whose worker dies outright (as one killed by the OOM killer or a group SIGTERM) on a negative batch."""
    if x < 0:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def test_a_worker_that_dies_ends_the_call_with_an_error_not_a_hang():
    """multiprocessing.Pool lost a dead worker's task and waited for it for ever (and a SIGTERM to the whole
    process group could hang its terminate); the executor-backed pool reports it and stops the others."""
    from concurrent.futures.process import BrokenProcessPool

    with WorkerPool(2) as pool:
        assert run_batches(_die_on_negative, [1, 2, 3], workers=2, pool=pool) == [1, 2, 3]
        old = pool.pids
        with pytest.raises(BrokenProcessPool, match="a worker process ended abruptly: killed by a signal"):
            run_batches(_die_on_negative, [1, -1, 2, 3], workers=2, pool=pool)
        assert pool.pids == [] and not any(_alive(pid) for pid in old)
        assert run_batches(_die_on_negative, [4, 5], workers=2, pool=pool) == [4, 5]  # a fresh pool


@pytest.mark.slow  # two spawned workers that fail to start: make test-slow (CI runs it)
def test_a_pool_started_from_a_script_on_stdin_ends_with_a_clear_error():
    """A spawned worker re-imports the main script, which ``python - <<EOF`` has not got: multiprocessing.Pool
    respawned the failing workers for ever; the pool now ends the call and says why it may have happened."""
    import subprocess
    import sys

    script = "from connect4_agents.evaluation.backends import run_batches\nrun_batches(abs, [1, 2, 3], workers=2)\n"
    done = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120, cwd=os.getcwd()
    )
    assert done.returncode == 1
    assert "BrokenProcessPool" in done.stderr and "read from standard input" in done.stderr, done.stderr[
        -2000:
    ]


def test_random_agent_reset_is_seeded():
    agent = RandomAgent()
    agent.reset(seed=4)
    first = [
        agent.act({"observation": np.zeros((6, 7, 2), np.int8), "action_mask": np.ones(7, np.int8)})
        for _ in range(5)
    ]
    agent.reset(seed=4)
    again = [
        agent.act({"observation": np.zeros((6, 7, 2), np.int8), "action_mask": np.ones(7, np.int8)})
        for _ in range(5)
    ]
    assert first == again


@pytest.mark.parametrize("spec", ["mcts:0.05s", "mcts:1e-2s"])
def test_mcts_time_specs(spec):
    from connect4_agents.mcts.agent import MCTSAgent
    from connect4_env.policy import policy_from_spec

    agent = policy_from_spec(spec)
    assert isinstance(agent, MCTSAgent) and agent.time_limit == float(spec[5:-1]) and agent.playouts is None


@pytest.mark.parametrize("spec", ["mcts:0s", "mcts:-1s", "mcts:nans", "mcts:infs", "mcts:lots", "mcts:s"])
def test_bad_mcts_time_specs(spec):
    from connect4_env.policy import policy_from_spec

    with pytest.raises(ValueError, match="playouts.*seconds"):
        policy_from_spec(spec)


def test_the_command_writes_each_agents_report_as_it_ends_and_counts_fallbacks_apart(
    tmp_path, monkeypatch
) -> None:
    """`connect4 evaluate text:... --json`: a model that raises on every call is rated on nothing (its fallback
    played every position), and the JSON holds each agent's report as soon as it is done."""
    from connect4_agents.commands import evaluate

    out = tmp_path / "acc.json"
    (tmp_path / "models_under_test.py").write_text(
        "import json, pathlib\n"
        "SEEN = []\n"
        "def down(prompt):\n"
        "    raise ConnectionError('the API is down')\n"
        "def peek(prompt):\n"
        f"    path = pathlib.Path({str(out)!r})\n"
        "    SEEN.append(len(json.loads(path.read_text())['reports']) if path.exists() else 0)\n"
        "    return '1'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["text:models_under_test:down", "text:models_under_test:peek", "--test-sets", "4x4-w3"]
    assert evaluate.main([*argv, "--sample", "8", "--workers", "1", "--no-progress", "--json", str(out)]) == 0
    import models_under_test

    assert models_under_test.SEEN and set(models_under_test.SEEN) == {1}  # the first report was on disk
    down, peek = json.loads(out.read_text())["reports"]
    assert (down["n"], down["fallbacks"], math.isnan(down["optimal_class_rate"])) == (0, 8, True)
    assert peek["n"] + peek["fallbacks"] == 8
