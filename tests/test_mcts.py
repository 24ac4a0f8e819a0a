"""MCTS: the UCB1 walkthrough numbers, set positions, the solver, tree reuse, budgets, both kernel builds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference import random_board

from agents import RandomAgent, make_agent
from agents.arena import play_match
from agents.mcts import MCTSAgent, ucb1
from agents.solver import SolverAgent
from connect4_env import Board, Rules
from connect4_env.encoding import action_mask, observation_planes


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


def test_compiled_and_python_kernels_search_identically() -> None:
    board = Board.from_moves([2, 2, 1], rows=4, columns=5, win_length=4)
    results = []
    for compiled in (True, False):
        agent = MCTSAgent(playouts=1500, seed=42, compiled=compiled)
        agent.search(board)
        results.append((agent.last_search.visits, agent.last_search.mean_value, agent.last_search.column))
    assert results[0][0] == results[1][0] and results[0][2] == results[1][2]
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_big_boards_run_in_python() -> None:
    board = Board.empty(8, 9, 5)  # 81 bits: beyond the compiled kernels
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
    board = Board.empty()
    board.play(act(agent, board))
    board.play(3)
    act(agent, board)
    search = agent.last_search
    assert search.reused_tree and search.root_visits > 3000
    fresh = MCTSAgent(playouts=3000, seed=0, reuse_tree=False)
    act(fresh, board)
    assert not fresh.last_search.reused_tree and fresh.last_search.root_visits == 3000


def test_time_limit_is_anytime() -> None:
    agent = MCTSAgent(playouts=None, time_limit=0.05, seed=0)
    column = act(agent, Board.empty())
    assert column in range(7)
    assert 0.04 <= agent.last_search.elapsed < 0.5 and agent.last_search.playouts > 100


def test_final_choice_by_value_and_prior_and_symmetry_options() -> None:
    board = Board.empty(5, 5, 4)
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
    act(agent, Board.empty())
    text = agent.explain()
    assert "visits" in text and "chosen" in capsys.readouterr().out
    assert len(text.splitlines()) == 9  # header, 7 columns, summary


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"playouts": 0}, "playouts"),
        ({"playouts": None, "time_limit": None}, "budget"),
        ({"time_limit": -1}, "time_limit"),
        ({"c": -1}, "c must"),
        ({"final": "best"}, "final"),
        ({"prior": -1}, "prior"),
    ],
)
def test_bad_settings_raise(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        MCTSAgent(**kwargs)


def test_mask_must_match_the_position() -> None:
    board = Board.empty()
    with pytest.raises(ValueError, match="does not match"):
        MCTSAgent(playouts=10).act(observation_planes(board), np.array([1, 1, 1, 0, 1, 1, 1]))


def test_beats_random_nearly_always() -> None:
    result = play_match(make_agent("mcts", playouts=300, seed=0), RandomAgent(seed=1), 20, Rules())
    assert result.wins >= 19


@pytest.mark.slow
def test_best_move_rate_on_solver_scored_positions() -> None:
    rng = np.random.default_rng(5)
    solver = SolverAgent(max_nodes=30_000_000)
    hits = total = 0
    while total < 40:
        board = random_board(rng, int(rng.integers(10, 25)))
        if board.is_terminal:
            continue
        outcomes = [None if s is None else (s > 0) - (s < 0) for s in solver.evaluate_board(board)]
        if len({o for o in outcomes if o is not None}) < 2:
            continue
        best = max(o for o in outcomes if o is not None)
        hits += outcomes[act(MCTSAgent(playouts=50_000, seed=total), board)] == best
        total += 1
    assert hits / total >= 0.85


@pytest.mark.slow
def test_beats_random_in_a_hundred_games() -> None:
    result = play_match(MCTSAgent(playouts=1000, seed=0), RandomAgent(seed=1), 100, Rules())
    assert result.wins >= 99
