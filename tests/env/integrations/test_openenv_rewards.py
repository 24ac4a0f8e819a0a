"""`connect4 serve-openenv --reward solver` as OpenEnv's users play it (OpenEnv's own client, real sockets): every
step's reward is the grade by perfect play of the move just made, for the seat that made it (both seats when one
client plays both, the model's against an opponent in either seat), -1 for a rejected answer while the game goes
on, nothing added at the end; a board the solver cannot grade and an unknown reward refused before serving."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.extras import needs
from helpers.openenv_servers import command_server, running_server

from connect4_env.core import Board
from connect4_env.rules import Rules

pytestmark = needs("openenv")

SMALL: dict[str, Any] = {"rows": 4, "columns": 5, "win_length": 4}
RULES = Rules(4, 5, 4)
SMALL_OPTIONS = ["--rows", "4", "--columns", "5"]

# X to move: column 2 wins (+1), column 4 blocks O and keeps the win (+0.5), column 0 lets O win (-1)
X_TO_MOVE = """
. . . . .
. . X . O
. . X . O
. . X . O
"""


def client(url: str) -> Any:
    from connect4_env.integrations.openenv.client import Connect4TextClient

    return Connect4TextClient(base_url=url).sync()


def action(message: str) -> Any:
    from connect4_env.integrations.openenv.models import Connect4TextAction

    return Connect4TextAction(message=message)


@pytest.fixture(scope="module")
def rubric() -> Any:
    from connect4_agents.evaluation.rewards import SolverRubric

    return SolverRubric(RULES)


@pytest.fixture(scope="module")
def both_seats() -> Iterator[str]:
    """A 4x5 server under the solver's rewards where the client plays both seats."""
    with running_server(opponent="none", reward="solver", **SMALL) as url:
        yield url


def test_both_seats_are_paid_the_grade_of_their_own_moves(both_seats: str, rubric: Any) -> None:
    rng = random.Random(7)
    with client(both_seats) as env:
        for _ in range(3):
            env.reset()
            assert env.state().reward == "solver"
            board = Board(RULES)
            result = None
            while result is None or not result.done:
                column = rng.choice(board.legal_moves())
                grade = rubric.grade(board, column)  # for the player to move, before the move
                player = board.to_move
                result = env.step(action(str(column + 1)))
                assert result.reward == grade.reward and result.observation.player in (player, 1 - player)
                assert result.observation.move_grade == {
                    "reward": grade.reward,
                    "verdict": grade.verdict,
                    "rank": grade.rank,
                    "classes_lost": grade.classes_lost,
                }
                board.play(column)
            # the end adds nothing: no seat rewards by outcome, the outcome still said
            assert result.observation.seat_rewards is None and result.observation.step_rewards is None
            assert result.observation.outcome in ("win", "draw")


def test_each_seat_winning_move_gets_plus_one_and_a_losing_one_minus_one(both_seats: str) -> None:
    with client(both_seats) as env:
        for column, expected in ((2, 1.0), (4, 0.5), (0, -1.0)):
            env.reset()
            for move in (2, 4, 2, 4, 2, 4):
                env.step(action(str(move + 1)))
            assert env.state().board == X_TO_MOVE.strip("\n")
            result = env.step(action(str(column + 1)))
            assert result.reward == expected
            if column == 0:  # O, the second seat, now wins at column 4: its move is graded for it
                result = env.step(action("5"))
                assert result.reward == 1.0 and result.done and result.observation.player == 1
                assert result.observation.outcome == "win" and env.state().outcomes == ["loss", "win"]


def test_a_rejected_answer_gets_minus_one_and_the_game_goes_on(both_seats: str) -> None:
    with client(both_seats) as env:
        env.reset()
        env.step(action("3"))
        result = env.step(action("I am not sure"))
        assert result.reward == -1.0 and not result.done and result.observation.move_grade is None
        assert result.observation.player == 1 and result.observation.parse_error is not None
        result = env.step(action("3"))
        assert result.observation.parsed_column == 2 and result.observation.move_grade is not None


@pytest.mark.parametrize("agent_first", [True, False])
def test_against_an_opponent_the_models_moves_are_graded_in_either_seat(
    agent_first: bool, rubric: Any
) -> None:
    with (
        running_server(opponent="random", agent_first=agent_first, reward="solver", **SMALL) as url,
        client(url) as env,
    ):
        for seed in range(2):
            env.reset(seed=seed)
            assert env.state().learner == (0 if agent_first else 1)
            done = False
            while not done:
                board = Board.from_moves(env.state().moves, RULES)
                column = board.legal_moves()[-1]
                result = env.step(action(str(column + 1)))
                assert result.reward == rubric(board, column)  # the model's move, not the opponent's reply
                done = result.done
            assert result.observation.seat_rewards is None


@pytest.mark.slow  # a new process: the solver's kernels are compiled again
def test_the_command_serves_the_solvers_rewards() -> None:
    with (
        command_server("--opponent", "none", "--reward", "solver", *SMALL_OPTIONS) as (url, _),
        client(url) as env,
    ):
        env.reset()
        assert env.state().reward == "solver"
        for move in (2, 4, 2, 4, 2, 4):
            env.step(action(str(move + 1)))
        result = env.step(action("1"))  # a win given up for a loss
        assert result.reward == -1.0 and result.observation.move_grade["classes_lost"] == 2
        assert env.step(action("sure")).reward == -1.0  # a rejected answer


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (["--reward", "solver", "--rows", "5"], ["at most 30 cells; this 5x7 board has 35 cells"]),
        (["--reward", "perfect"], ["argument --reward: invalid choice: 'perfect'", "trajectory", "solver"]),
    ],
)
def test_the_command_refuses_a_reward_it_cannot_pay(
    options: list[str], error: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from connect4_agents.commands.serve_openenv import main

    try:
        code = main(["--port", "0", *options])
    except SystemExit as exit:  # argparse's own refusal of a choice
        code = exit.code
    assert code == 2
    said = capsys.readouterr().err
    assert all(part in said for part in error), said


def test_a_python_caller_gets_the_known_rewards_named_and_may_pass_a_rubric() -> None:
    from connect4_env.integrations.openenv.environment import Connect4TextEnvironment
    from connect4_env.integrations.openenv.models import Connect4TextAction

    with pytest.raises(ValueError, match="allowed: 'outcome', 'trajectory', 'solver'"):
        Connect4TextEnvironment(reward="solvr")

    def centre(board: Board, column: int) -> float:
        return -abs(column - 2) / 2

    env = Connect4TextEnvironment(reward=centre, opponent="none", **SMALL)
    env.reset()
    assert env.step(Connect4TextAction(message="1")).reward == -1.0
    assert env.step(Connect4TextAction(message="3")).reward == 0.0
    assert env.state.reward == "function"


def test_the_sessions_share_one_rubric_built_once() -> None:
    from connect4_env.integrations.openenv.environment import Connect4TextEnvironment, session_kwargs
    from connect4_env.rewards import SharedRubric

    kwargs = session_kwargs({"reward": "solver", "opponent": "none", **SMALL})
    shared = kwargs["reward"]
    assert isinstance(shared, SharedRubric) and shared.name == "solver"
    sessions = [Connect4TextEnvironment(**kwargs) for _ in range(2)]
    assert all(session.rubric is shared and session.reward == "solver" for session in sessions)
    assert session_kwargs(kwargs) == kwargs  # shared already: kept
    assert session_kwargs({"reward": "outcome"}) == {"reward": "outcome"}
