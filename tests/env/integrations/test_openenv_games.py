"""`connect4 serve-openenv` as OpenEnv's users play it, through OpenEnv's own client over real sockets (localhost,
a free port; the same tests run with `openenv` and `openenv-core`): one client playing both seats in each
dialect, compared move by move with the dialect's own text for the player to move; the trajectory reward
compared with OpenEnv's `ExponentialDiscountingTrajectoryRubric` on the same episodes; the dialect chosen per
server (the command's options) and per session (`reset(dialect=...)`), and bad reset arguments answered with
an error while the session plays on."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.extras import needs
from helpers.openenv_servers import command_server, http, running_server
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_env.core import Board
from connect4_env.envs.dialects import get_dialect
from connect4_env.rules import Rules

pytestmark = needs("openenv")

SCORES = {"win": 1.0, "draw": 0.5, "loss": 0.0}  # RFC 004's win / draw / loss, as the server documents
# one way each dialect's users write a move (0-based `column`), as that harness's own examples write them
ANSWERS = {
    "connect4": lambda column: f"I play column {column + 1}",
    "game_arena": lambda column: f"The centre is strong.\nFinal Answer: {column}",
    "deepmind_game_arena": lambda column: f"The centre is strong.\n**Final Answer:** {column}",
    "textarena": lambda column: f"I will drop my disc in [col {column}]",
    "json": lambda column: json.dumps({"column": column}),
}


def client(url: str) -> Any:
    from connect4_env.integrations.openenv.client import Connect4TextClient

    return Connect4TextClient(base_url=url).sync()


def action(message: str) -> Any:
    from connect4_env.integrations.openenv.models import Connect4TextAction

    return Connect4TextAction(message=message)


@pytest.fixture(scope="module")
def two_seats() -> Iterator[str]:
    """A server where the client plays both seats (in this package's dialect unless a session picks another)."""
    with running_server(opponent="none") as url:
        yield url


def play_both_seats(
    env: Any, dialect: str, rng: random.Random, rules: Rules | None = None, bad_answers: int = 0
) -> tuple[list[tuple[int, Any, Any]], Board, list[int]]:
    """A random legal game through `env` (reset already), each move written in `dialect`, with `bad_answers`
    unreadable answers at random moves; every observation is checked against the dialect's own text for the
    player to move on a board kept here. Returns `(player, action, result)` per step, the board and its moves."""
    reference = get_dialect(dialect)
    rules = rules or Rules()
    board, moves = Board(rules), []
    steps: list[tuple[int, Any, Any]] = []
    unreadable = set(rng.sample(range(rules.cells), bad_answers))
    result = None
    while result is None or not result.done:
        player = board.to_move
        if len(moves) in unreadable:
            unreadable.discard(len(moves))
            sent = action("let me think about it")
            result = env.step(sent)
            assert result.observation.parse_error is not None and not result.done
            assert result.observation.player == player  # the same player answers again
            assert result.observation.text.startswith(reference.observation(board, player, moves)[:40])
        else:
            column = rng.choice(board.legal_moves())
            sent = action(ANSWERS[dialect](column))
            result = env.step(sent)
            assert result.observation.parsed_column == column and result.observation.parse_error is None
            won = board.play(column)
            moves.append(column)
            if not (won or board.is_draw):
                assert result.observation.player == board.to_move == 1 - player
                assert result.observation.text == reference.observation(board, board.to_move, moves)
                shown = [column + reference.base for column in board.legal_moves()]
                assert result.observation.legal_columns == shown
                assert result.observation.system_prompt == reference.system_prompt(rules, board.to_move)
        steps.append((player, sent, result))
    return steps, board, moves


@pytest.mark.parametrize("dialect", ["game_arena", "deepmind_game_arena", "json", "textarena", "connect4"])
def test_one_client_plays_both_seats_to_the_end_in_each_dialect(two_seats: str, dialect: str) -> None:
    with client(two_seats) as env:
        first = env.reset(dialect=dialect)
        reference = get_dialect(dialect)
        assert first.observation.player == 0 and first.observation.text == reference.observation(Board(), 0)
        for game in range(3):
            bad_answers = min(1, reference.max_retries)  # json's rule forgives none: see the next test
            steps, board, moves = play_both_seats(env, dialect, random.Random(game), bad_answers=bad_answers)
            mover, _, last = steps[-1]
            state = env.state()
            expected = "draw" if board.winner is None else ("win" if board.winner == mover else "loss")
            assert last.done and last.observation.player == mover and last.observation.outcome == expected
            assert last.reward == {"win": 1.0, "draw": 0.0}[expected]  # the mover's: Connect4-v0's reward
            outcomes = [expected, {"win": "loss", "draw": "draw"}[expected]][:: 1 if mover == 0 else -1]
            assert state.outcomes == outcomes and state.learner is None and state.to_move is None
            assert last.observation.seat_rewards == [
                {"win": 1.0, "draw": 0.0, "loss": -1.0}[o] for o in outcomes
            ]
            assert state.moves == moves and state.dialect == dialect
            assert state.template == reference.template_hash and state.step_count == len(steps)
            assert state.board == board.to_ascii(column_numbers=False)
            env.reset(dialect=dialect)


@pytest.mark.parametrize(
    ("dialect", "forgiven"), [("json", 0), ("game_arena", 1), ("connect4", 2), ("deepmind_game_arena", 3)]
)
def test_a_rejected_answer_past_the_dialects_retries_loses_for_the_player_to_move(
    two_seats: str, dialect: str, forgiven: int
) -> None:
    with client(two_seats) as env:
        env.reset(dialect=dialect)
        env.step(action(ANSWERS[dialect](3)))  # the first mover plays; the second then fails to answer
        for tries_left in reversed(range(forgiven)):
            result = env.step(action("I resign"))
            assert not result.done and result.observation.retries_left == tries_left
            assert result.observation.player == 1 and result.reward == 0.0
        result = env.step(action("I resign"))
        assert result.done and result.observation.player == 1 and result.observation.outcome == "loss"
        assert result.reward == -1.0 and result.observation.seat_rewards == [1.0, -1.0]
        assert "Game over: you lost, your answer was rejected" in result.observation.text
        state = env.state()
        assert state.outcomes == ["win", "loss"] and state.moves == [3] and state.step_count == forgiven + 2
        with pytest.raises(RuntimeError, match="no game in progress"):  # the game is over: reset first
            env.step(action(ANSWERS[dialect](3)))


def rubric(gamma: float) -> Any:
    """OpenEnv's `ExponentialDiscountingTrajectoryRubric` with RFC 004's example score (1 win, 0.5 draw, 0 loss)
    for one seat: the outcome of its last observation, or `outcome` once set (for the seat that did not make
    the game's last step, whose last observation is not the end)."""
    from openenv.core.rubrics.trajectory import ExponentialDiscountingTrajectoryRubric

    class WinDrawLoss(ExponentialDiscountingTrajectoryRubric):
        outcome: str | None = None

        def score_trajectory(self, trajectory: list[tuple[Any, Any]]) -> float:
            return SCORES[self.outcome or trajectory[-1][1].outcome]

    return WinDrawLoss(gamma=gamma)


@pytest.mark.parametrize(("rows", "columns", "win_length"), [(6, 7, 4), (1, 4, 3)])  # 1x4: always a draw
def test_the_trajectory_reward_of_each_seat_is_openenvs_rubric_on_its_steps(
    rows: int, columns: int, win_length: int
) -> None:
    gamma = 0.9
    options = {"rows": rows, "columns": columns, "win_length": win_length, "reward": "trajectory"}
    with (
        running_server(opponent="none", dialect="game_arena", gamma=gamma, **options) as url,
        client(url) as env,
    ):
        for game in range(4):
            assert env.reset().observation.player == 0
            rubrics = [rubric(gamma), rubric(gamma)]
            steps, _, _ = play_both_seats(
                env, "game_arena", random.Random(game), Rules(rows, columns, win_length), 1
            )
            for player, sent, result in steps:  # the reward of every step is the rubric's, 0 until the end
                assert result.reward == rubrics[player](sent, result.observation)
            last = steps[-1][2].observation
            outcomes = env.state().outcomes
            assert last.seat_rewards == [SCORES[outcome] for outcome in outcomes]
            assert len(last.step_rewards) == len(steps) == env.state().step_count
            for seat in (0, 1):
                rubrics[seat].outcome = outcomes[seat]
                ours = [credit for (player, _, _), credit in zip(steps, last.step_rewards) if player == seat]
                assert ours == rubrics[seat].compute_step_rewards()  # exactly: the same arithmetic
            if rows == 1:
                assert outcomes == ["draw", "draw"] and last.seat_rewards == [0.5, 0.5]


def test_the_trajectory_reward_against_an_opponent_is_openenvs_rubric_on_the_models_steps() -> None:
    with running_server(opponent="random", reward="trajectory", max_retries=1) as url, client(url) as env:
        for seed in range(4):
            result = env.reset(seed=seed)
            judge, steps, rng = rubric(0.99), [], random.Random(seed)
            while not result.done:
                legal = result.observation.legal_columns
                sent = action("pass" if rng.random() < 0.1 else f"column {rng.choice(legal)}")
                result = env.step(sent)
                assert result.reward == judge(sent, result.observation)  # 0 until the end, then the score
                steps.append(result)
            assert result.reward == SCORES[result.observation.outcome]
            assert result.observation.step_rewards == judge.compute_step_rewards()
            learner = env.state().learner
            assert (
                result.observation.player == learner == 0
                and result.observation.seat_rewards[0] == result.reward
            )
            assert result.observation.seat_rewards[1] == SCORES[env.state().outcomes[1]]
            assert len(steps) == env.state().step_count


def test_the_trajectory_reward_refuses_retries_that_would_make_its_step_list_unbounded() -> None:
    from connect4_env.integrations.openenv.environment import MAX_TRAJECTORY_STEPS
    from connect4_env.integrations.openenv.server import create_app

    create_app(reward="trajectory", max_retries=MAX_TRAJECTORY_STEPS // 42 - 1)  # 42 cells: within the bound
    with pytest.raises(ValueError, match="may take 100002 steps, more than 100000; lower max_retries"):
        create_app(reward="trajectory", max_retries=MAX_TRAJECTORY_STEPS // 42)
    create_app(reward="outcome", max_retries=1_000_000)  # no list kept
    create_app(reward="trajectory", max_retries=1_000_000, invalid_answer="lose")  # no retries at all


@settings(max_examples=200, deadline=None)
@given(
    players=st.lists(st.integers(0, 1), max_size=60),
    outcome=st.sampled_from(["win", "draw", "loss"]),
    gamma=st.one_of(st.sampled_from([0.0, 1.0, 0.99]), st.floats(0.0, 1.0)),
)
def test_discounted_credits_are_the_rubric_applied_to_each_seats_steps(
    players: list[int], outcome: str, gamma: float
) -> None:
    from connect4_env.integrations.openenv.environment import discounted_credits

    outcomes = [outcome, {"win": "loss", "loss": "win", "draw": "draw"}[outcome]]
    finals = [SCORES[o] for o in outcomes]
    credits = discounted_credits(players, finals, gamma)
    for seat in (0, 1):
        judge = rubric(gamma)
        judge.outcome = outcomes[seat]
        for player in players:
            if player == seat:
                judge(None, None)  # a step of this seat (not the end: no `done`)
        assert [c for p, c in zip(players, credits) if p == seat] == judge.compute_step_rewards()


def test_a_session_chooses_its_dialect_at_reset_and_a_plain_reset_plays_the_servers() -> None:
    with running_server(opponent="random") as url, client(url) as env:
        result = env.reset(seed=0, dialect="json")
        assert result.observation.text == get_dialect("json").observation(Board(), 0)
        assert result.observation.legal_columns == list(range(7))  # 0-based, as the json dialect numbers them
        assert result.observation.system_prompt == get_dialect("json").system_prompt(Rules(), 0)
        result = env.step(action('{"column": 3}'))
        assert result.observation.parsed_column == 3 and env.state().moves[0] == 3
        assert env.state().dialect == "json" and env.state().template == get_dialect("json").template_hash
        result = env.reset(seed=0, dialect="game_arena", history=True, legal_moves=True)
        assert "The moves played so far are:" in result.observation.text
        assert "The legal moves are:" in result.observation.text
        assert env.step(action("Final Answer: 6")).observation.parsed_column == 6
        result = env.reset(seed=0)  # no dialect named: the server's own again
        assert result.observation.text == get_dialect("connect4").observation(Board(), 0)
        assert result.observation.legal_columns == [1, 2, 3, 4, 5, 6, 7] and env.state().dialect == "connect4"


BAD_RESETS = [
    ({"dialect": "klingon"}, "unknown dialect 'klingon'; this server offers connect4, game_arena"),
    ({"dialect": "textarena"}, "not offered by this server; choose one of connect4, game_arena"),
    ({"dialect": 3}, "dialect must be a str"),
    ({"legal_moves": "yes"}, "legal_moves must be True or False"),
    ({"blind": True, "history": False}, "blind=True needs history"),
    ({"seed": -1}, "seed must be an integer >= 0"),
    ({"colour": "red"}, "reset takes seed, episode_id, dialect, legal_moves, history, blind"),
]


@pytest.mark.parametrize(("arguments", "error"), BAD_RESETS, ids=[str(a) for a, _ in BAD_RESETS])
def test_a_bad_reset_is_an_error_and_the_game_in_progress_goes_on(
    offering_two_dialects: str, arguments: dict[str, Any], error: str
) -> None:
    with client(offering_two_dialects) as env:
        env.reset(seed=5, dialect="game_arena")
        env.step(action("Final Answer: 2"))
        before = env.state()
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR") as refused:
            env.reset(**arguments)
        assert error in str(refused.value)
        assert env.state() == before  # the same game, the same dialect
        result = env.step(action("Final Answer: 4"))
        assert result.observation.parsed_column == 4 and env.state().ply == before.ply + 2
        assert env.reset(dialect="connect4").observation.text.startswith("Connect Four on 6 rows")
    code, session, _ = http(f"{offering_two_dialects}/sessions", "POST")
    base = f"{offering_two_dialects}/sessions/{session['session_id']}"
    assert http(f"{base}/reset", "POST", b'{"seed": 5, "dialect": "game_arena"}')[0] == 200
    code, answer, _ = http(f"{base}/reset", "POST", json.dumps(arguments).encode())
    assert code == 422 and error in answer["detail"]
    assert http(f"{base}/state")[1]["dialect"] == "game_arena"
    # OpenEnv's stateless /reset: 422 too (its own model checks the seed first, in pydantic's words)
    code, answer, _ = http(f"{offering_two_dialects}/reset", "POST", json.dumps(arguments).encode())
    assert code == 422 and ("seed" in arguments or error in answer["detail"])
    code, played, _ = http(f"{base}/step", "POST", b'{"action": {"message": "Final Answer: 4"}}')
    assert code == 200 and played["observation"]["parsed_column"] == 4


@pytest.fixture(scope="module")
def offering_two_dialects() -> Iterator[str]:
    """A server against an opponent whose sessions may choose connect4 (its own) or game_arena."""
    with running_server(opponent="random", session_dialects=["game_arena"]) as url:
        yield url


def test_the_command_sets_the_dialect_the_sessions_may_choose_and_the_reward() -> None:
    options = [
        "--opponent",
        "none",
        "--dialect",
        "game_arena",
        "--history",
        "yes",
        "--session-dialects",
        "json",
    ]
    with command_server(*options, "--reward", "trajectory", "--gamma", "0.5") as (url, _), client(url) as env:
        result = env.reset()
        expected = get_dialect("game_arena", history=True)
        assert (
            result.observation.text == expected.observation(Board(), 0) and env.state().reward == "trajectory"
        )
        for column in (0, 1, 0, 1, 0, 1):
            result = env.step(action(f"Final Answer: {column}"))
            assert result.reward == 0.0 and not result.done
        result = env.step(action("Final Answer: 0"))  # four in column 0: the first mover wins
        assert result.done and result.reward == 1.0 and result.observation.outcome == "win"
        assert result.observation.step_rewards == [0.125, 0.0, 0.25, 0.0, 0.5, 0.0, 1.0]
        assert "The moves played so far are:\nx0 o1 x0 o1 x0 o1 x0" in result.observation.text
        assert env.reset(dialect="json").observation.text.startswith('{"board": ')
        with pytest.raises(
            RuntimeError, match="'textarena' is not offered by this server; choose one of game_arena, json"
        ):
            env.reset(dialect="textarena")


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (
            ["--opponent", "none", "--agent-first", "no"],
            "agent_first has no meaning when one client plays both",
        ),
        (["--reward", "trajectory", "--gamma", "1.5"], "gamma must be a finite number >= 0.0 and <= 1.0"),
        (
            ["--max-answer-length", "100000", "--max-body-bytes", "65536"],
            "max_body_bytes 65536 is too small for answers of up to 100000 characters: at least 104096",
        ),
        (["--max-answer-length", "1000001"], "max_answer_length must be an integer in 1..1000000"),
    ],
)
def test_the_command_refuses_options_that_do_not_go_together(
    options: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from connect4_agents.commands.serve_openenv import main

    assert main(["--port", "0", *options]) == 2
    assert error in capsys.readouterr().err
