"""MCTS: the UCB1 walkthrough numbers, set positions, the solver, tree reuse, budgets, both kernel builds."""

from __future__ import annotations

import copy
import math
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from helpers.extras import heavy_without_numba, installed, needs
from helpers.reference import random_board

import connect4_env  # noqa: F401  (registers Connect4-v0)
from connect4_agents import RandomAgent, make_policy
from connect4_agents.evaluation.arena import play_match
from connect4_agents.mcts import agent as mcts_agent
from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.mcts.result import ucb1
from connect4_agents.solver.agent import SolverAgent
from connect4_env import Board, Rules
from connect4_env.encoding import action_mask, observation_planes


class PlayoutClock:
    """A machine of fixed speed for time-limited searches: the search's ``time.perf_counter`` reads a clock that
    moves on ``seconds_per_playout`` with each playout the kernels run (and ``load_seconds`` at a compiled
    build's first call, as loading the kernels does), never by itself. A time limit then buys the same playouts
    on any machine under any load, so the tests below count playouts instead of reading the wall clock."""

    def __init__(self, seconds_per_playout: float = 1e-5, load_seconds: float = 0.0) -> None:
        self.seconds_per_playout = seconds_per_playout
        self.load_seconds = load_seconds
        self.now = 0.0
        self.calls: list[int] = []  # the playouts asked of each kernel call, in order

    def perf_counter(self) -> float:
        return self.now

    def install(self, monkeypatch: pytest.MonkeyPatch) -> PlayoutClock:
        real_kernels_for = mcts_agent.kernels_for

        def timed_kernels_for(*args: Any, **kwargs: Any) -> _TimedBuild:
            return _TimedBuild(real_kernels_for(*args, **kwargs), self)

        monkeypatch.setattr(mcts_agent, "kernels_for", timed_kernels_for)
        monkeypatch.setattr(mcts_agent, "time", self)
        return self


class _TimedBuild:
    """A kernel build whose playouts move a `PlayoutClock` on."""

    def __init__(self, build: Any, clock: PlayoutClock) -> None:
        self._build, self._clock = build, clock

    def __getattr__(self, name: str) -> Any:
        return getattr(self._build, name)

    def mcts_playouts(self, playouts: int, *args: Any) -> int:
        if self._build.compiled and not self._clock.calls:
            self._clock.now += self._clock.load_seconds
        self._clock.calls.append(playouts)
        ran = int(self._build.mcts_playouts(playouts, *args))
        self._clock.now += ran * self._clock.seconds_per_playout
        return ran


# the most playouts a time-limited search runs past its limit: its last chunk is sized to the time left, but
# never under 16 playouts
OVERRUN = 16


def act(agent: MCTSAgent, board: Board) -> int:
    return agent.act(observation_planes(board), action_mask(board))


def test_ucb1_reproduces_the_pair_game_walkthrough() -> None:
    # c = sqrt(2), parent visits N = 4, one visit each: 2.664, 2.164, 1.664 in the walkthrough (to 3 digits)
    assert ucb1(1, 1, 4) == pytest.approx(2.664, abs=2e-3)
    assert ucb1(0.5, 1, 4) == pytest.approx(2.164, abs=2e-3)
    assert ucb1(0, 1, 4) == pytest.approx(1.664, abs=2e-3)
    assert ucb1(0, 0, 4) == math.inf
    assert ucb1(3, 4, 10, c=2) == pytest.approx(0.75 + 2 * math.sqrt(math.log(10) / 4))


WIN_IN_ONE = """
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. O O . . . .
. X X X . O .
"""

BLOCK_IN_ONE = """
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
O X X X . . O
"""

WIN_IN_THREE = """
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
O . . . . . .
O . . X X . .
"""


@pytest.mark.parametrize("solver", [True, False])
def test_takes_a_win_in_one(solver: bool) -> None:
    board = Board.from_ascii(WIN_IN_ONE)
    agent = MCTSAgent(playouts=2000, seed=0, solver=solver)
    assert board.to_move == 0 and act(agent, board) in (0, 4)
    if solver:
        assert agent.last_search.reason == "proven win"


@pytest.mark.parametrize("solver", [True, False])
def test_blocks_a_loss_in_one(solver: bool) -> None:
    board = Board.from_ascii(BLOCK_IN_ONE)
    assert board.to_move == 1
    assert act(MCTSAgent(playouts=3000, seed=1, solver=solver), board) == 4


def test_finds_a_forced_win_in_three_with_the_solver() -> None:
    board = Board.from_ascii(WIN_IN_THREE)  # X to move: column 2 or 5 makes a three with both ends open
    agent = MCTSAgent(playouts=20000, seed=2)
    column = act(agent, board)
    search = agent.last_search
    assert search.root_proven == "win" and search.proven[column] == "win"
    assert search.proof_depth[column] + 1 == 3  # X, O, X
    assert column in (2, 5) and search.reason == "proven win"


@heavy_without_numba
def test_proven_lost_root_picks_the_slowest_loss() -> None:
    # positions where the solver says every move loses; MCTS must pick a move that loses as late as possible
    rng = np.random.default_rng(11)
    solver = SolverAgent()
    checked = 0
    while checked < 6:
        board = random_board(rng, int(rng.integers(6, 14)), 4, 5, 4)
        if board.is_terminal:
            continue
        scores = solver.evaluate_board(board)
        legal_scores = [s for s in scores if s is not None]
        if max(legal_scores) >= 0 or len(set(legal_scores)) == 1:
            continue
        agent = MCTSAgent(playouts=200_000, seed=checked)
        column = act(agent, board)
        assert agent.last_search.root_proven == "loss"
        assert scores[column] == max(legal_scores), board
        checked += 1


@needs("fast")
def test_compiled_and_python_kernels_search_identically() -> None:
    board = Board.from_moves([2, 2, 1], Rules(4, 5, 4))
    results = []
    for compiled in (True, False):
        agent = MCTSAgent(playouts=1500, seed=42, compiled=compiled)
        agent.search(board)
        results.append((agent.last_search.visits, agent.last_search.mean_value, agent.last_search.column))
    assert results[0][0] == results[1][0] and results[0][2] == results[1][2]
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_big_boards_run_in_python() -> None:
    board = Board(Rules(8, 9, 5))  # 81 bits: beyond the compiled kernels
    agent = MCTSAgent(playouts=200, seed=0)
    assert agent.act(observation_planes(board), action_mask(board)) in range(9)
    with pytest.raises(ValueError, match="63 bits"):
        MCTSAgent(playouts=10, compiled=True).search(board)


def test_same_seed_same_moves_and_never_illegal() -> None:
    rules = Rules(6, 7, 4)
    for seed in range(3):
        a, b = MCTSAgent(playouts=300, seed=seed), MCTSAgent(playouts=300, seed=seed)
        board = Board(rules)
        rng = np.random.default_rng(seed)
        while not board.is_terminal:
            column = act(a, board)
            assert column == act(b, board)
            assert board.is_legal(column)
            board.play(column)
            if not board.is_terminal:
                legal = board.legal_moves()
                board.play(legal[rng.integers(len(legal))])


def test_tree_reuse_keeps_the_subtree() -> None:
    agent = MCTSAgent(playouts=3000, seed=0)
    board = Board()
    board.play(act(agent, board))
    board.play(3)
    act(agent, board)
    search = agent.last_search
    assert search.reused_tree and search.root_visits > 3000
    fresh = MCTSAgent(playouts=3000, seed=0, reuse_tree=False)
    act(fresh, board)
    assert not fresh.last_search.reused_tree and fresh.last_search.root_visits == 3000


def test_time_limit_is_anytime(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = PlayoutClock(seconds_per_playout=1e-5).install(monkeypatch)  # 100,000 playouts a second
    agent = MCTSAgent(playouts=None, time_limit=0.05, seed=0)
    column = act(agent, Board())
    assert column in range(7)
    search = agent.last_search
    assert 5_000 <= search.playouts <= 5_000 + OVERRUN  # as many as the limit allows, and no more
    assert search.elapsed == pytest.approx(search.playouts * 1e-5) and search.elapsed >= 0.05
    assert len(clock.calls) > 2  # in chunks, the clock read between them


def test_final_choice_by_value_and_prior_and_symmetry_options() -> None:
    board = Board(Rules(5, 5, 4))
    by_value = MCTSAgent(playouts=2000, seed=0, final="value")
    by_value.search(board)
    means = [m for m in by_value.last_search.mean_value if not math.isnan(m)]
    assert by_value.last_search.mean_value[by_value.last_search.column] == max(means)
    with_prior = MCTSAgent(playouts=2000, seed=0, prior=2)
    with_prior.search(board)
    assert sum(with_prior.last_search.visits[:3]) <= 2000
    symmetric = MCTSAgent(playouts=2000, seed=0)
    symmetric.search(board)
    assert symmetric.last_search.mirrored == {3: 1, 4: 0}
    assert symmetric.last_search.visits[4] == symmetric.last_search.visits[0]
    plain = MCTSAgent(playouts=2000, seed=0, symmetry=False)
    plain.search(board)
    assert plain.last_search.mirrored == {}


def test_explain_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    agent = MCTSAgent(playouts=500, seed=0)
    with pytest.raises(RuntimeError, match="act"):
        agent.explain()
    act(agent, Board())
    text = agent.explain()
    assert "visits" in text and "chosen" in capsys.readouterr().out
    assert len(text.splitlines()) == 9  # header, 7 columns, summary


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"playouts": 0}, "playouts"),
        ({"time_limit": -1}, "time_limit"),
        ({"time_limit": float("nan")}, "finite"),
        ({"time_limit": float("inf")}, "finite"),
        ({"c": float("inf")}, "c must"),
        ({"tree_capacity": 10}, "tree_capacity"),
        ({"c": -1}, "c must"),
        ({"final": "best"}, "final"),
        ({"prior": -1}, "prior"),
    ],
)
def test_bad_settings_raise(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        MCTSAgent(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"compiled": "yes"}, "compiled"),
        ({"playouts": 2.5}, "playouts"),
        ({"time_limit": "1"}, "time_limit"),
        ({"solver": None}, "solver"),
        ({"tree_capacity": 1e6}, "tree_capacity"),
        ({"rules": 4}, "rules"),
    ],
)
def test_settings_of_the_wrong_type_raise_type_error(kwargs: dict, fragment: str) -> None:
    with pytest.raises(TypeError, match=fragment):
        MCTSAgent(**kwargs)


def test_mask_must_match_the_position() -> None:
    board = Board()
    with pytest.raises(ValueError, match="does not match"):
        MCTSAgent(playouts=10).act(observation_planes(board), np.array([1, 1, 1, 0, 1, 1, 1]))


def test_beats_random_nearly_always() -> None:
    result = play_match(make_policy("mcts", playouts=300, seed=0), RandomAgent(seed=1), 20, Rules())
    assert result.wins >= 19


def scored_positions(n: int, seed: int, min_ply: int, max_ply: int) -> list[tuple[Board, list, int]]:
    """Random 6x7 positions whose moves do not all have one outcome: (board, outcome per column, best)."""
    rng = np.random.default_rng(seed)
    solver = SolverAgent()
    found = []
    while len(found) < n:
        board = random_board(rng, int(rng.integers(min_ply, max_ply + 1)))
        if board.is_terminal:
            continue
        outcomes = [None if s is None else (s > 0) - (s < 0) for s in solver.evaluate_board(board)]
        if len({o for o in outcomes if o is not None}) > 1:
            found.append((board, outcomes, max(o for o in outcomes if o is not None)))
    return found


@pytest.mark.slow
def test_best_move_rate_on_solver_scored_positions() -> None:
    positions = scored_positions(40, seed=5, min_ply=10, max_ply=24)
    hits = sum(
        outcomes[act(MCTSAgent(playouts=50_000, seed=index), board)] == best
        for index, (board, outcomes, best) in enumerate(positions)
    )
    assert hits / len(positions) >= 0.85


@pytest.mark.slow
def test_beats_random_in_a_hundred_games() -> None:
    result = play_match(MCTSAgent(playouts=1000, seed=0), RandomAgent(seed=1), 100, Rules())
    assert result.wins >= 99


def pons(moves: str) -> Board:
    """A 6x7 position in Pascal Pons' notation (1-based columns)."""
    return Board.from_moves([int(c) - 1 for c in moves])


def test_a_time_alone_searches_for_that_long(monkeypatch: pytest.MonkeyPatch) -> None:
    assert MCTSAgent().playouts == 1000 and MCTSAgent(playouts=None).playouts == 1000
    PlayoutClock(seconds_per_playout=2e-5).install(monkeypatch)  # 50,000 playouts a second
    agent = MCTSAgent(time_limit=0.1, seed=0)
    assert agent.playouts is None
    agent.search(Board())
    assert agent.last_search.elapsed >= 0.1 and 5_000 <= agent.last_search.playouts <= 5_000 + OVERRUN
    # with both, whichever comes first: the count, or the time
    both = MCTSAgent(playouts=500, time_limit=5, seed=0)
    both.search(Board())
    assert both.last_search.playouts == 500
    short = MCTSAgent(playouts=5_000, time_limit=0.002, seed=0)
    short.search(Board())
    assert 100 <= short.last_search.playouts <= 100 + OVERRUN


def test_the_tree_stops_growing_at_the_node_cap_and_the_search_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = MCTSAgent(playouts=20_000, tree_capacity=2_000, seed=0)
    search = agent.search(Board())
    assert search.nodes <= 2_000 and search.playouts == 20_000
    assert agent._tree is not None and agent._tree.capacity <= 2_000
    PlayoutClock(seconds_per_playout=2.5e-5).install(monkeypatch)  # 40,000 playouts a second
    capped_by_time = MCTSAgent(time_limit=0.2, tree_capacity=2_000, seed=0)
    capped_by_time.search(Board())
    assert capped_by_time.last_search.nodes <= 2_000  # the tree is full long before the time is up
    assert 8_000 <= capped_by_time.last_search.playouts <= 8_000 + OVERRUN


@heavy_without_numba
def test_issue_positions_are_played_well() -> None:
    # scores per column (Pons' scale): [-11, -11, 3, -13, 4, -11, -10] and [-1, -3, -4, 0, 0, -3, -1]
    assert [MCTSAgent(playouts=1000, seed=s).search(pons("751233225251")).column for s in range(6)] == [4] * 6
    picks = [MCTSAgent(playouts=10_000, seed=s).search(pons("457155115")).column for s in range(6)]
    assert all(column in (3, 4) for column in picks)  # the drawing moves


@heavy_without_numba
def test_proofs_are_never_wrong() -> None:
    rng = np.random.default_rng(3)
    solver = SolverAgent()
    proofs = 0
    for index in range(24):
        board = random_board(rng, int(rng.integers(14, 34)))
        if board.is_terminal:
            continue
        scores = solver.evaluate_board(board)
        search = MCTSAgent(playouts=30_000, seed=index).search(board)
        names = {1: "win", 0: "draw", -1: "loss"}
        for column, proof in enumerate(search.proven):
            if proof is not None:
                assert proof == names[(scores[column] > 0) - (scores[column] < 0)], (board, column)
                proofs += 1
        if search.root_proven is not None:
            best = max(s for s in scores if s is not None)
            assert search.root_proven == names[(best > 0) - (best < 0)], board
            assert scores[search.column] == best or (best == 0 and scores[search.column] == 0), board
    assert proofs > 20


LATE_DRAW = """
. . X . . O .
. . X . . O .
. . O . X X O
. X X O O X X
O O O X O O X
O X X X O X O
"""


def test_late_draws_are_proven_draws() -> None:
    board = Board.from_ascii(LATE_DRAW)
    assert SolverAgent().score(board) == 0
    agent = MCTSAgent(playouts=300_000, seed=0)
    column = act(agent, board)
    search = agent.last_search
    assert search.root_proven == "draw" and search.proven[column] == "draw"
    assert search.reason == "proven draw" and search.playouts < 300_000  # stops once proven


@pytest.mark.slow
def test_most_late_drawn_positions_are_proven_within_300k_playouts() -> None:
    rng = np.random.default_rng(5)
    solver = SolverAgent()
    proven = total = 0
    while total < 12:
        board = random_board(rng, int(rng.integers(24, 31)))
        if board.is_terminal or solver.score(board) != 0:
            continue
        proven += MCTSAgent(playouts=300_000, seed=total).search(board).root_proven == "draw"
        total += 1
    assert proven >= 10


def test_pickles_and_deep_copies_after_a_search() -> None:
    agent = MCTSAgent(playouts=300, seed=0)
    act(agent, Board())
    for clone in (pickle.loads(pickle.dumps(agent)), copy.deepcopy(agent)):
        assert clone.playouts == 300 and clone._tree is not None  # the tree travels with the copy
        assert act(clone, Board.from_moves([3])) in range(7)


@pytest.mark.slow
def test_the_solver_does_not_weaken_mcts_at_equal_playouts() -> None:
    positions = scored_positions(120, seed=21, min_ply=10, max_ply=32)
    hits = {True: 0, False: 0}
    for index, (board, outcomes, best) in enumerate(positions):
        for solver_on in (True, False):
            for seed in range(2):
                agent = MCTSAgent(playouts=1000, seed=100 * seed + index, solver=solver_on)
                hits[solver_on] += outcomes[agent.search(board).column] == best
    # measured on 220 positions x 5 seeds: 0.932 on, 0.931 off (OpenSpiel's MCTSBot: 0.926)
    assert hits[True] >= hits[False] - 0.03 * 2 * len(positions)


def _play(env: Any, picks: list[int]) -> list[tuple[bytes, float, bool]]:
    """Step ``env`` with the ``pick``-th legal column each move; the observations, rewards and ends seen."""
    seen = []
    for pick in picks:
        legal = np.flatnonzero(env.unwrapped.action_masks())
        observation, reward, terminated, truncated, _ = env.step(int(legal[pick % len(legal)]))
        seen.append((observation.tobytes(), float(reward), terminated))
        if terminated or truncated:
            break
    return seen


def test_a_copied_env_with_an_mcts_opponent_continues_exactly_as_the_original() -> None:
    """pickle and deepcopy carry the opponent's reused tree and generator: the copy plays the same replies."""
    env = gym.make("Connect4-v0", opponent="mcts:200")
    env.reset(seed=3)
    _play(env, [3, 2])
    copies = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    rest = [4, 1, 5, 0, 6, 2, 3, 3, 1]
    original = _play(env, rest)
    assert len(original) >= 3
    for twin in copies:
        assert _play(twin, rest) == original


def test_a_pickled_agent_reuses_its_tree_and_searches_identically() -> None:
    agent = MCTSAgent(300, seed=1)
    board = Board.from_moves([3, 3, 2])
    agent.search(board)
    twin = pickle.loads(pickle.dumps(agent))
    board.play(4)
    ours, theirs = agent.search(board), twin.search(board)
    assert theirs.reused_tree and ours.reused_tree
    assert (theirs.visits, theirs.mean_value, theirs.column) == (ours.visits, ours.mean_value, ours.column)


def test_the_first_search_does_not_count_the_kernel_load(monkeypatch: pytest.MonkeyPatch) -> None:
    # a process's first search loads the compiled kernels (0.4 s from numba's cache, 1.5 s compiling), which
    # once made the README's first example print 2,328 playouts/s against about 900,000 later. Here the load
    # costs a clock second at the build's first call, as in a fresh process (no kernel loaded yet).
    monkeypatch.setattr(mcts_agent, "_LOADED_GEOMETRIES", set())
    clock = PlayoutClock(seconds_per_playout=1e-5, load_seconds=1.0).install(monkeypatch)
    board = Board.from_moves([0, 0, 1, 1, 2])
    first = MCTSAgent(playouts=5000, seed=0).search(board)
    second = MCTSAgent(playouts=5000, seed=0).search(board)
    assert first.elapsed == pytest.approx(5000 * 1e-5) == second.elapsed  # the playouts' time alone
    # the compiled build loads in a call with no playouts before the clock starts, once a process
    assert clock.calls.count(0) == (1 if installed("numba") else 0)


def test_a_budget_changed_after_construction_is_checked_at_the_search() -> None:
    """playouts = 0 set on the agent (as a wrapper sizing it might) failed inside the search with "max() arg
    is an empty sequence"; the search names the setting, and a good value plays on."""
    agent = MCTSAgent(50, seed=0)
    for bad, error in ((0, ValueError), (-5, ValueError), (1.5, TypeError)):
        agent.playouts = bad
        with pytest.raises(error, match="playouts must be an integer"):
            agent.search(Board())
    agent.playouts, agent.time_limit = None, float("inf")
    with pytest.raises(ValueError, match="time_limit"):
        agent.search(Board())
    agent.time_limit = None
    with pytest.raises(ValueError, match="both None"):
        agent.search(Board())
    agent.playouts = 30
    assert 0 <= agent.act(observation_planes(Board()), action_mask(Board())) < 7
