"""TextPolicy: a ``str -> str`` function plays through the arena, the tournament and the Elo ladder, within its time
limit, with the answer grammar of Connect4Text-v0 and a fallback for rejected answers."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from connect4_agents.evaluation.arena import play_match
from connect4_agents.evaluation.rated_tournament import run_rated_tournament
from connect4_agents.interop.text import TextPolicy, leftmost_legal_answer
from connect4_agents.random_agent import RandomAgent
from connect4_env.core import Board
from connect4_env.encoding import action_mask, observation_planes
from connect4_env.policy import policy_names, register_policy
from connect4_env.rules import Rules


def position(moves: list[int]) -> tuple[np.ndarray, np.ndarray]:
    board = Board.from_moves(moves)
    return observation_planes(board), action_mask(board)


def test_the_prompt_is_the_text_envs_position_and_the_answer_is_read_by_its_grammar() -> None:
    prompts: list[str] = []

    def model(prompt: str) -> str:
        prompts.append(prompt)
        return "I play e"

    policy = TextPolicy(model)
    assert policy.act(*position([3, 3])) == 4
    assert "<answer>N</answer>" in prompts[0] and "1  . . . X . . ." in prompts[0]
    assert "Legal columns: 1 2 3 4 5 6 7." in prompts[0] and policy.stats["answers"] == 1


def test_a_rejected_answer_is_asked_again_with_the_reason() -> None:
    answers = iter(["hmm", "column 9", "2"])
    policy = TextPolicy(lambda prompt: next(answers), max_retries=2)
    assert policy.act(*position([])) == 1
    assert [answer for _, answer in policy.transcript] == ["hmm", "column 9", "2"]
    assert "could not read a column from 'hmm'" in policy.transcript[1][0]
    assert "column 9 is not on the board" in policy.transcript[2][0]
    assert policy.stats["rejected"] == 2 and policy.stats["fallbacks"] == 0


def test_full_columns_errors_and_non_str_answers_fall_back_to_a_legal_column() -> None:
    full = [0] * 6
    for model in (lambda p: "1", lambda p: 1 / 0, lambda p: 4):
        policy = TextPolicy(model, max_retries=1, seed=0)
        planes, mask = position(full)
        assert policy.act(planes, mask) in np.flatnonzero(mask)
        assert policy.stats["fallbacks"] == 1 and policy.stats["rejected"] == 2
    with pytest.raises(ValueError, match="is full"):
        TextPolicy(lambda p: "a", max_retries=0, fallback="raise").act(*position(full))


def test_the_time_limit_holds_for_a_model_that_hangs() -> None:
    # the model answers only once the test lets it, after the moves: a move that returns before then did not
    # wait for it, whatever the machine's speed (no clock is read here); a policy that waited would get the
    # answer after the hang guard's minute and count no timeout
    release = threading.Event()
    calls: list[str] = []

    def hangs(prompt: str) -> str:
        calls.append(prompt)
        release.wait(60)
        return "4"

    try:
        policy = TextPolicy(hangs, time_limit=0.2, seed=1)
        assert policy.act(*position([])) in range(7)
        assert len(calls) == 1  # the one call still hangs, and was not asked again
        assert policy.stats["timeouts"] == 1 and policy.stats["fallbacks"] == 1
        with pytest.raises(TimeoutError, match="within 0.2 s"):
            TextPolicy(hangs, time_limit=0.2, fallback="raise").act(*position([]))
    finally:
        release.set()  # the abandoned calls end: no thread is left waiting


def test_a_text_policy_plays_matches_on_other_boards() -> None:
    result = play_match(TextPolicy(leftmost_legal_answer), RandomAgent(seed=0), 4, Rules(5, 6, 3))
    assert result.wins + result.draws + result.losses == 4


def test_as_a_spec_it_plays_in_the_rated_tournament(tmp_path) -> None:
    if "text" not in policy_names():  # the entry point of an install older than this module
        register_policy("text", "connect4_agents.interop.text:TextPolicy")
    spec = "text:connect4_agents.interop.text:leftmost_legal_answer"
    ratings = run_rated_tournament(
        [spec, "random"],
        4,
        Rules(),
        workers=1,
        progress=False,
        bootstrap=0,
        json_out=tmp_path / "ladder.json",
    )
    assert set(ratings.elo) == {spec, "random"} and ratings.elo["random"] == 0
    with pytest.raises(ValueError, match="cannot import"):
        TextPolicy.from_spec("no_such_module:answer")


def test_bad_arguments_name_the_value() -> None:
    with pytest.raises(TypeError, match="callable"):
        TextPolicy("not a function")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="time_limit"):
        TextPolicy(leftmost_legal_answer, time_limit=0)
    with pytest.raises(ValueError, match="fallback"):
        TextPolicy(leftmost_legal_answer, fallback="pass")


def test_bad_settings_and_calls_are_named_and_count_nothing() -> None:
    from connect4_agents.base import NoLegalMoveError

    answer = lambda prompt: "4"  # noqa: E731
    with pytest.raises(ValueError, match="time_limit must be a finite number > 0.0 and <= 604800"):
        TextPolicy(answer, time_limit=1e12)  # used to overflow threading's clock at the first move
    with pytest.raises(ValueError, match="time_limit"):
        TextPolicy(answer, time_limit=0)
    with pytest.raises(TypeError, match="system_prompt must be a str"):
        TextPolicy(answer, system_prompt=5)  # type: ignore[arg-type]
    policy = TextPolicy(answer)
    with pytest.raises(TypeError, match="rules must be a connect4_env.Rules"):
        policy.bind("6x7")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="note must be None or a str"):
        policy.prompt(*position([]), note=5)  # type: ignore[arg-type]
    planes, _ = position([])
    with pytest.raises(NoLegalMoveError, match="allows no column"):
        policy.act(planes, np.zeros(7))
    assert policy.stats["moves"] == 0 and policy.act(planes, np.ones(7)) == 3


def test_the_reason_sent_back_to_the_model_quotes_its_answer_or_error_shortly() -> None:
    """What the model wrote (a 4,000-digit column, an exception with a megabyte of non-ASCII message) comes back
    in the next prompt cut to a few dozen printable ASCII characters, not in full."""
    answers = iter(["9" * 4000, "é" * 1_000_000])

    def model(prompt: str) -> str:
        answer = next(answers, None)
        if answer is None or answer.startswith("é"):
            raise RuntimeError(answer or "no more")
        return answer

    policy = TextPolicy(model, max_retries=2, seed=0)
    policy.act(*position([]))
    empty_prompt = policy.prompt(*position([]))
    for prompt, _ in policy.transcript[1:]:
        note = prompt[len(empty_prompt) :]
        assert note.isascii() and len(note) < 200, note[:300]
    assert "column 999" in policy.transcript[1][0] and "RuntimeError: '\\xe9" in policy.transcript[2][0]


def test_a_model_that_hangs_holds_at_most_max_running_calls_threads() -> None:
    # every call hangs until the test lets it end: each move's call is abandoned at the limit, and once
    # MAX_RUNNING_CALLS of them still run, a move asks nothing (whatever the machine's speed: no clock is read)
    from connect4_agents.interop.text import MAX_RUNNING_CALLS

    release = threading.Event()
    calls: list[str] = []

    def hangs(prompt: str) -> str:
        calls.append(prompt)
        release.wait(60)
        return "4"

    policy = TextPolicy(hangs, time_limit=0.01, seed=1)
    try:
        for _ in range(MAX_RUNNING_CALLS + 3):
            assert policy.act(*position([])) in range(7)
        assert len(calls) == MAX_RUNNING_CALLS and policy.stats["fallbacks"] == MAX_RUNNING_CALLS + 3
        assert len(policy._running) == MAX_RUNNING_CALLS
        assert policy.move_info()["outcome"] == "fallback" and policy.move_info()["tries"] == []
        policy.fallback = "raise"
        with pytest.raises(
            TimeoutError, match="the model was not asked, as 4 earlier calls .* still running"
        ):
            policy.act(*position([]))
        policy.fallback = "random"
    finally:
        release.set()
    for thread in list(policy._running):
        thread.join(60)
    assert policy.act(*position([])) == 3 and len(calls) == MAX_RUNNING_CALLS + 1  # asked again once they end
    assert policy.move_info()["outcome"] == "answered"
