"""Connect4Text-v0's per-move rewards (`reward="solver"`, a registered name or a rubric object): each model move
paid its grade by perfect play on the position before it, in either seat, with nothing added at the end; each
rejected answer paid the dialect's `rejected_answer_reward`; a board the solver cannot grade refused when the env
is built; `reward="outcome"` as before; and a scripted player's mean reward ordered as its strength."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest

import connect4_env  # noqa: F401  (registers the ids)
from connect4_env.core import Board
from connect4_env.encoding import action_mask, observation_planes
from connect4_env.envs.dialects import DIALECTS
from connect4_env.envs.dialects.connect4 import Connect4Dialect
from connect4_env.envs.text_env import Connect4TextEnv
from connect4_env.policy import policy_from_spec
from connect4_env.rules import Rules

SMALL: dict[str, Any] = {
    "rows": 4,
    "columns": 5,
    "win_length": 4,
}  # the solver answers any 4x5 position at once
SMALL_RULES = Rules(4, 5, 4)

# X (the model, first) to move: column 2 wins; column 4 blocks O's three and keeps X's win for later; any
# other column lets O win at column 4.
X_TO_MOVE = """
. . . . .
. . X . O
. . X . O
. . X . O
"""
X_MOVES, X_REPLIES = [2, 2, 2], [4, 4, 4]  # the model's columns and the opponent's replies that reach it

# O (the model, second) to move: column 4 wins; column 3 keeps nothing of the win; the others lose.
O_TO_MOVE = """
. . . . .
. . X . O
. . X . O
X X O X O
"""
O_OPENING, O_MOVES, O_REPLIES = [0], [4, 4, 2, 4], [3, 1, 2, 2]


class Scripted:
    """An opponent that plays the columns given, in order (then the first legal one)."""

    def __init__(self, columns: Sequence[int]) -> None:
        self.columns = list(columns)
        self._next: Iterator[int] = iter(())

    def reset(self, seed: int | None = None) -> None:
        self._next = iter(self.columns)

    def act(self, observation: Any, action_mask: Any = None) -> int:
        legal = [int(c) for c in np.flatnonzero(action_mask)]
        column = next(self._next, legal[0])
        assert column in legal, f"the script's column {column} is not legal here: {legal}"
        return column


def answer(column: int) -> str:
    """The connect4 dialect's answer for a 0-based column."""
    return str(column + 1)


@pytest.fixture(scope="module")
def rubric() -> Any:
    from connect4_agents.evaluation.rewards import SolverRubric

    return SolverRubric(SMALL_RULES)


def reach(env: Connect4TextEnv, moves: Sequence[int], rubric: Any) -> list[float]:
    """Play the model's ``moves`` from a reset, checking each reward against the rubric; returns the rewards."""
    rewards = []
    for column in moves:
        before = env.board.copy()
        _, reward, terminated, truncated, info = env.step(answer(column))
        assert not terminated and not truncated
        assert reward == rubric(before, column) and info["move_grade"]["reward"] == reward
        rewards.append(reward)
    return rewards


def test_a_winning_move_gets_plus_one_a_weaker_one_less_and_the_worst_minus_one(rubric: Any) -> None:
    results = {}
    for column, reply in ((2, None), (4, 0), (0, 4)):  # the win ends the game; else the opponent replies
        env = Connect4TextEnv(**SMALL, opponent=Scripted([*X_REPLIES, reply or 0]), reward="solver")
        env.reset(seed=0)
        reach(env, X_MOVES, rubric)
        assert env.board.to_ascii(column_numbers=False) == X_TO_MOVE.strip("\n")
        results[column] = env.step(answer(column))
    _, reward, terminated, _, info = results[2]
    assert (reward, terminated, info["outcome"]) == (1.0, True, "win")  # the grade alone: no outcome added
    assert info["move_grade"] == {"reward": 1.0, "verdict": "best", "rank": 1, "classes_lost": 0}
    _, reward, terminated, _, info = results[4]
    assert reward == 0.5 and not terminated and info["move_grade"]["verdict"] == "keeps"
    _, reward, terminated, _, info = results[0]  # the opponent wins at column 4 at once
    assert (reward, terminated, info["outcome"]) == (-1.0, True, "loss")
    assert info["move_grade"]["classes_lost"] == 2


def test_the_second_seat_is_graded_for_its_own_stones(rubric: Any) -> None:
    results = {}
    for column in (4, 3, 0):
        env = Connect4TextEnv(
            **SMALL, opponent=Scripted(O_OPENING + O_REPLIES), agent_first=False, reward="solver"
        )
        env.reset(seed=0)
        rewards = reach(env, O_MOVES, rubric)
        assert env.board.to_ascii(column_numbers=False) == O_TO_MOVE.strip("\n") and env.board.to_move == 1
        assert len(rewards) == 4  # the opponent's moves are not graded: one reward per model move
        results[column] = env.step(answer(column))
    assert results[4][1:3] == (1.0, True) and results[4][4]["outcome"] == "win"
    assert results[3][1] == -0.5 and results[3][4]["move_grade"]["classes_lost"] == 1
    assert results[0][1] == -1.0


def test_a_rejected_answer_gets_minus_one_and_the_game_goes_on_under_retry(rubric: Any) -> None:
    env = Connect4TextEnv(**SMALL, opponent=Scripted(X_REPLIES), reward="solver", max_retries=2)
    env.reset(seed=0)
    board = env.board.copy()
    for bad in ("let me think", "9"):
        _, reward, terminated, _, info = env.step(bad)
        assert (reward, terminated) == (-1.0, False) and info["parse_error"] and "move_grade" not in info
    assert env.board == board  # nothing played
    _, reward, terminated, _, info = env.step(answer(2))
    assert reward == rubric(board, 2) and not terminated and info["retries_left"] == 2
    env.step("xx")
    env.step("xx")
    _, reward, terminated, _, info = env.step("xx")  # the retries are spent: the answer loses
    assert (reward, terminated, info["outcome"], info["illegal_action"]) == (-1.0, True, "loss", True)


def test_a_rejected_answer_under_lose_ends_the_game_with_minus_one() -> None:
    env = Connect4TextEnv(**SMALL, reward="solver", invalid_answer="lose")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("no idea")
    assert (reward, terminated, info["outcome"]) == (-1.0, True, "loss")


@dataclass(frozen=True)
class LenientDialect(Connect4Dialect):
    """This package's dialect with a milder format reward."""

    name: ClassVar[str] = "lenient_connect4"
    rejected_answer_reward: ClassVar[float] = -0.25


def test_a_dialect_sets_the_reward_of_a_rejected_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert all(cls.rejected_answer_reward == -1.0 for cls in DIALECTS.values())  # every built-in dialect
    monkeypatch.setitem(DIALECTS, LenientDialect.name, LenientDialect)
    env = Connect4TextEnv(**SMALL, reward="solver", dialect=LenientDialect.name)
    env.reset(seed=0)
    assert env.step("hmm")[1] == -0.25
    outcome = Connect4TextEnv(**SMALL, dialect=LenientDialect.name)  # under "outcome" it stays 0
    outcome.reset(seed=0)
    assert outcome.step("hmm")[1] == 0.0


@pytest.mark.parametrize(("rows", "columns"), [(5, 7), (6, 6)])
def test_a_board_the_solver_cannot_grade_is_refused_when_the_env_is_built(rows: int, columns: int) -> None:
    with pytest.raises(ValueError, match=f"this {rows}x{columns} board has {rows * columns} cells"):
        Connect4TextEnv(rows=rows, columns=columns, reward="solver")
    with pytest.raises(ValueError, match="at most 30 cells"):
        gym.make("Connect4Text-v0", rows=rows, columns=columns, reward="solver")


def test_the_standard_board_is_graded_with_the_opening_book() -> None:
    from connect4_agents.solver.book import book_available

    if not book_available():
        pytest.skip("the opening book (the book extra) is not installed")
    env = gym.make("Connect4Text-v0", reward="solver", opponent="random")
    rewards = {}
    for text in ("4", "3", "1"):
        env.reset(seed=0)
        _, rewards[text], _, _, info = env.step(text)
    # the first move: the centre wins, the next column draws, the edge loses
    assert rewards == {"4": 1.0, "3": -0.5, "1": -1.0}


def test_a_rubric_object_grades_the_moves(rubric: Any) -> None:
    seen: list[tuple[str, int, int]] = []

    def centre(board: Board, column: int) -> float:
        seen.append((board.to_ascii(column_numbers=False), board.to_move, column))
        return 1.0 - abs(column - board.rules.columns // 2) / 2

    env = Connect4TextEnv(**SMALL, opponent=Scripted([0]), reward=centre)
    env.reset(seed=0)
    assert env.step("1")[1] == 0.0 and env.step("3")[1] == 1.0
    assert seen[0] == (Board(SMALL_RULES).to_ascii(column_numbers=False), 0, 0)
    assert seen[1][1:] == (0, 2) and seen[1][0].endswith("O . . . .\nX . . . .")  # the position before it
    assert env.step("xx")[1] == -1.0  # the dialect's format reward, under any rubric


def test_a_rubric_that_pays_no_number_is_an_error_and_nothing_is_played() -> None:
    env = Connect4TextEnv(**SMALL, reward=lambda board, column: "good")
    env.reset(seed=0)
    with pytest.raises(TypeError, match="not a number"):
        env.step("3")
    assert env.board.ply == 0
    env = Connect4TextEnv(**SMALL, reward=lambda board, column: float("nan"))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not a finite reward"):
        env.step("3")


def test_an_unknown_reward_names_the_known_ones() -> None:
    with pytest.raises(
        ValueError, match=r"unknown reward 'solvr' \(did you mean 'solver'\?\); known rewards: "
    ):
        Connect4TextEnv(**SMALL, reward="solvr")
    with pytest.raises(ValueError, match="known rewards: outcome, solver"):
        Connect4TextEnv(**SMALL, reward="perfect")
    with pytest.raises(TypeError, match=r"reward must be a name, one of \['outcome', 'solver'\]"):
        Connect4TextEnv(**SMALL, reward=3)


def test_the_outcome_reward_is_as_before() -> None:
    """The same scripted game under the default and under ``reward="outcome"``: 0 until the end, then -1."""
    runs = []
    choices: list[dict[str, Any]] = [{}, {"reward": "outcome"}]
    for kwargs in choices:
        env = Connect4TextEnv(**SMALL, opponent=Scripted([*X_REPLIES, 4]), **kwargs)
        env.reset(seed=0)
        steps = [env.step(text) for text in ("3", "zz", "3", "3", "1")]
        runs.append([(reward, terminated, "move_grade" in info) for _, reward, terminated, _, info in steps])
    assert runs[0] == runs[1] == [(0.0, False, False)] * 4 + [(-1.0, True, False)]


def mean_reward(spec: str, games: int) -> float:
    """The mean reward per model move of the policy ``spec`` against random on 4x5, seats alternating."""
    policy = policy_from_spec(spec, seed=0, rules=SMALL_RULES)
    rewards = []
    for game in range(games):
        env = Connect4TextEnv(**SMALL, opponent="random", agent_first=game % 2 == 0, reward="solver")
        env.reset(seed=game)
        done = False
        while not done:
            column = policy.act(observation_planes(env.board), action_mask(env.board))
            _, reward, done, _, info = env.step(answer(column))
            assert info["parse_error"] is None
            rewards.append(reward)
    return float(np.mean(rewards))


def test_the_mean_reward_orders_players_as_their_strength() -> None:
    random_player, searcher, perfect = (mean_reward(spec, 20) for spec in ("random", "mcts:100", "solver"))
    assert random_player < searcher < perfect == 1.0
