"""The solver as a teacher: every stored target is the solver's, test-set positions are never stored, and a
run with ``teacher="solver"`` trains from them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.extras import importorskip, needs

torch = importorskip("torch")

from helpers.reference import ReferenceGame, reference_scores  # noqa: E402

from connect4_agents.alphazero.config import AlphaZeroTrainConfig  # noqa: E402
from connect4_agents.alphazero.files import load_model, save_model  # noqa: E402
from connect4_agents.alphazero.network import PolicyValueNet  # noqa: E402
from connect4_agents.alphazero.teacher import held_out_keys, teacher_games  # noqa: E402
from connect4_agents.evaluation.test_set_generation import position_key  # noqa: E402
from connect4_agents.evaluation.test_sets import load_test_set  # noqa: E402
from connect4_env import Board, Rules  # noqa: E402
from connect4_env.encoding import observation_planes  # noqa: E402

torch.set_num_threads(1)


def _reference_of(planes: np.ndarray, rules: Rules) -> tuple[ReferenceGame, Board]:
    """Rebuild a stored position (the mover's planes) from a move order that reaches it (found by depth-first
    search; a position without four in a row is reached by any order that alternates colours)."""
    mover, other = planes[..., 0].astype(bool), planes[..., 1].astype(bool)
    stacks = [  # bottom up: 0 the mover's stone, 1 the other's
        [0 if mover[r, c] else 1 for r in range(rules.rows - 1, -1, -1) if mover[r, c] or other[r, c]]
        for c in range(rules.columns)
    ]
    total = sum(len(s) for s in stacks)

    def order(heights: list[int], turn: int) -> list[int] | None:
        if sum(heights) == total:
            return []
        for c in range(rules.columns):
            if heights[c] < len(stacks[c]) and stacks[c][heights[c]] == turn:
                heights[c] += 1
                rest = order(heights, 1 - turn)
                heights[c] -= 1
                if rest is not None:
                    return [c, *rest]
        return None

    moves = order([0] * rules.columns, 0 if mover.sum() == other.sum() else 1)
    assert moves is not None
    board, game = Board(rules), ReferenceGame(rules.rows, rules.columns, rules.win_length)
    for column in moves:
        board.play(column)
        game.play(column)
    assert np.array_equal(observation_planes(board), planes)
    return game, board


@pytest.mark.parametrize(
    "size",
    # 3x5: about 5 s on 2 cores (over 3 s): make test-slow, CI runs it
    [(4, 4, 3), pytest.param((3, 5, 3), marks=pytest.mark.slow), (4, 3, 3)],
)
def test_every_target_is_the_solvers_outcome(size: tuple[int, int, int]) -> None:
    config = AlphaZeroTrainConfig(*size, teacher="solver")
    rules = config.rules
    planes, policies, values, plies = teacher_games(config, 6, np.random.default_rng(3))
    assert len(planes) == len(policies) == len(values) > 0 and plies >= len(values)
    assert planes.dtype == np.int8 and planes.shape[1:] == (rules.rows, rules.columns, 2)
    memo: dict = {}
    for board_planes, policy, value in zip(planes, policies, values):
        game, board = _reference_of(board_planes, rules)
        scores = reference_scores(game, memo)
        outcomes = [None if s is None else (s > 0) - (s < 0) for s in scores]
        best = max(o for o in outcomes if o is not None)
        assert value == best
        best_moves = [c for c, o in enumerate(outcomes) if o == best]
        np.testing.assert_allclose(policy[best_moves], 1 / len(best_moves))
        assert policy.sum() == pytest.approx(1) and set(np.flatnonzero(policy)) == set(best_moves)
        assert not board.is_terminal


def test_positions_are_stored_once_and_explore_zero_plays_perfectly() -> None:
    config = AlphaZeroTrainConfig(3, 5, 3, teacher="solver", teacher_explore=0.0)
    planes, _, values, _ = teacher_games(config, 4, np.random.default_rng(0))
    assert len({p.tobytes() for p in planes}) == len(planes)
    # 3x5 with three in a row is a first-player win: perfect play never leaves the winning side's class
    assert values[0] == 1


@needs("fast")
@pytest.mark.parametrize("name", ["4x5", "6x7-begin-easy"])
def test_test_set_positions_are_never_stored(name: str) -> None:
    positions = load_test_set(name)
    rules = positions[0].rules
    keys = held_out_keys(rules)
    assert {position_key(p.board()) for p in positions} <= keys
    if rules != Rules(4, 5, 4):
        return  # 6x7 games need the book and take seconds; the key set is what they consult
    config = AlphaZeroTrainConfig(4, 5, 4, teacher="solver")
    planes, *_ = teacher_games(config, 30, np.random.default_rng(1))
    for board_planes in planes:
        _, board = _reference_of(board_planes, rules)
        assert position_key(board) not in keys


def test_a_position_past_the_solvers_budget_stops_the_games() -> None:
    from connect4_agents.solver import SolverAgent, SolverBudgetExceeded

    config = AlphaZeroTrainConfig(teacher="solver")  # 6x7 without the book: the first positions need millions
    with pytest.raises(SolverBudgetExceeded, match="node_budget"):
        teacher_games(config, 1, np.random.default_rng(0), SolverAgent(node_budget=1000, book=False))


def test_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="teacher"):
        AlphaZeroTrainConfig(teacher="oracle").check()
    with pytest.raises(TypeError, match="teacher"):
        AlphaZeroTrainConfig(teacher=1).check()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="teacher_explore"):
        AlphaZeroTrainConfig(teacher_explore=1.5).check()
    with pytest.raises(TypeError, match="init"):
        AlphaZeroTrainConfig(init=None).check()  # type: ignore[arg-type]


@pytest.mark.slow  # about 4 s on 2 cores (over 3 s): make test-slow, CI runs it
def test_a_teacher_run_starts_from_init_and_learns(tmp_path: Path) -> None:
    from connect4_agents.alphazero.train import train

    rules = Rules(4, 5, 4)
    torch.manual_seed(5)
    start = PolicyValueNet(8, 1)
    save_model(tmp_path / "start.zip", start, rules)
    config = AlphaZeroTrainConfig(4, 5, 4, channels=8, blocks=1, teacher="solver", games=12, steps=0)
    config.init = str(tmp_path / "start.zip")
    config.eval_positions = 0
    path = train(config, tmp_path / "run")
    for name, tensor in load_model(path).net.state_dict().items():
        assert torch.equal(tensor, start.state_dict()[name]), name  # no steps: the init's weights
    logs: list = []
    config.steps, config.generations = 10, 2
    train(config, tmp_path / "run2", on_generation=logs.append)
    assert [log.positions for log in logs] and all(log.positions > 0 for log in logs)
    assert logs[-1].buffer == 2 * sum(log.positions for log in logs)  # mirror images too
    other = AlphaZeroTrainConfig(4, 5, 4, channels=16, blocks=1, init=str(tmp_path / "start.zip"))
    with pytest.raises(ValueError, match="network"):
        train(other, tmp_path / "run3")
    with pytest.raises(ValueError, match="no such model"):
        train(AlphaZeroTrainConfig(4, 5, 4, init=str(tmp_path / "missing.zip")), tmp_path / "run4")
