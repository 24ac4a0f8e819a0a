"""Connect4Text-v0: the answer grammar (each form, the rejects, any text), and the env as a wrapper whose rewards
and endings are Connect4-v0's, with the retry / lose policy for rejected answers."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import connect4_env  # noqa: F401  (registers the ids)
from connect4_env.core import Board
from connect4_env.envs.dialects import ParseResult, echo
from connect4_env.envs.dialects.base import ECHO_LENGTH
from connect4_env.envs.dialects.connect4 import (
    _last_tagged,
    describe_position,
    max_error_length,
    parse_column,
    prompt_messages,
)
from connect4_env.envs.text_env import Connect4TextEnv

ACCEPTED = [
    ("4", 3),
    ("  4  ", 3),
    ("04", 3),
    ("d", 3),
    ("D", 3),
    ("column 4", 3),
    ("Column4", 3),
    ("col 4", 3),
    ("col. d", 3),
    ("I play d", 3),
    ("i play column 4.", 3),
    ("play 7", 6),
    ("I drop in column 1!", 0),
    ("move: 4", 3),
    ("Answer:g", 6),
    ("action: column 2", 1),
    ("pick a", 0),
    ("<think>4 or 5? 5.</think> <answer>4</answer>", 3),
    ("<answer>1</answer> then <ANSWER> column 2 </ANSWER>", 1),
    ("1", 0),
    ("7", 6),
]
REJECTED = [
    "",
    "   ",
    "4 5",
    "d or e",
    "four",
    "-1",
    "+4",
    "4.5",
    "d4",
    "I think 4",
    "play",
    "column",
    "<answer></answer>",
    "col.",
    "4..",
    "٤",
]
OFF_BOARD = ["0", "8", "h", "z", "99999999999999999999", "column 0"]


@pytest.mark.parametrize(("text", "column"), ACCEPTED)
def test_each_documented_form_parses_to_the_0_based_column(text: str, column: int) -> None:
    assert parse_column(text, 7) == ParseResult(column, None)


@pytest.mark.parametrize("text", REJECTED)
def test_other_texts_are_rejected_with_a_message_saying_what_to_answer(text: str) -> None:
    result = parse_column(text, 7)
    assert result.column is None and "answer a column number 1..7 or a letter a..g" in (result.error or "")


@pytest.mark.parametrize("text", OFF_BOARD)
def test_numbers_and_letters_off_the_board_are_rejected_as_such(text: str) -> None:
    result = parse_column(text, 7)
    assert result.column is None and "is not on the board" in (result.error or "")


def test_too_long_answers_are_rejected_unread_and_wide_boards_have_numbers_only() -> None:
    assert "more than 10 characters" in (parse_column("4" + " " * 20, 7, max_length=10).error or "")
    assert parse_column("27", 30).column == 26 and parse_column("a", 30).column is None


@given(st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_any_text_parses_or_is_rejected_never_raises(text: str) -> None:
    result = parse_column(text, 7)
    assert (result.column is None) != (result.error is None)
    assert result.column is None or 0 <= result.column < 7


@given(st.lists(st.text(max_size=300), min_size=1, max_size=4), st.sampled_from([(6, 7), (4, 12)]))
@settings(max_examples=100, deadline=None)
def test_every_observation_lies_in_the_observation_space(answers: list[str], size: tuple[int, int]) -> None:
    """Whatever the model answers (non-ASCII, control characters, long), the observation that echoes a
    rejected answer stays within the declared Text space (its charset and length)."""
    env = Connect4TextEnv(rows=size[0], columns=size[1], max_retries=3)
    text, _ = env.reset(seed=0)
    assert env.observation_space.contains(text)
    for answer in answers:
        text, _, terminated, _, _ = env.step(answer)
        assert env.observation_space.contains(text), text
        if terminated:
            break


@pytest.mark.parametrize("action", [4, 3.0, b"4", None, ["4"]])
def test_a_non_str_action_raises_type_error_and_changes_nothing(action: object) -> None:
    env = gym.make("Connect4Text-v0")
    text, _ = env.reset(seed=0)
    with pytest.raises(TypeError, match="str"):
        env.step(action)
    assert env.unwrapped.board.ply == 0
    assert env.step("4")[0] != text  # the env still plays


def test_the_observation_shows_coordinates_turn_and_legal_columns_1_based() -> None:
    board = Board.from_ascii(
        """
        . . . . . . .
        . . . X . . .
        . . . O . . .
        . . . X . . .
        . . . O . . .
        . . X X O O .
        """
    )
    text = describe_position(board, 0, last_opponent_column=4)
    assert "   1 2 3 4 5 6 7\n6  . . . . . . .\n5  . . . X . . ." in text and "   a b c d e f g" in text
    assert "1  . . X X O O ." in text and "opponent played column 5 (e)" in text
    assert "Legal columns: 1 2 3 4 5 6 7." in text
    messages = prompt_messages(text)
    assert [m["role"] for m in messages] == ["system", "user"] and "<answer>" in messages[0]["content"]


def test_rewards_and_endings_are_connect4_v0s_for_the_same_moves() -> None:
    for seed in range(6):
        text_env = gym.make("Connect4Text-v0", opponent="random", agent_first=None)
        plain = gym.make("Connect4-v0", opponent="random", agent_first=None)
        text, text_info = text_env.reset(seed=seed)
        _, info = plain.reset(seed=seed)
        rng = np.random.default_rng(seed)
        done = False
        while not done:
            assert text_env.observation_space.contains(text)
            column = int(rng.choice(np.flatnonzero(info["action_mask"])))
            text, text_reward, text_done, _, text_info = text_env.step(f"column {column + 1}")
            _, reward, done, _, info = plain.step(column)
            assert (text_reward, text_done) == (reward, done)
            assert np.array_equal(text_info["action_mask"], info["action_mask"])
            assert text_info["parsed_column"] == column and text_info["parse_error"] is None
        assert text_info["outcome"] == info["outcome"] and "Game over" in text


def test_retry_keeps_the_position_then_loses_once_the_retries_are_spent() -> None:
    env = gym.make("Connect4Text-v0", max_retries=2)
    first, _ = env.reset(seed=0)
    for retries_left in (1, 0):
        text, reward, terminated, _, info = env.step("my favourite column")
        assert (reward, terminated, info["retries_left"], info["parsed_column"]) == (
            0.0,
            False,
            retries_left,
            None,
        )
        assert "could not read a column" in info["parse_error"] and info["parse_error"] in text
        assert env.unwrapped.board.ply == 0 and text.startswith(first.rstrip("\n"))
    text, reward, terminated, _, info = env.step("nine")
    assert (reward, terminated, info["outcome"], info["illegal_action"]) == (-1.0, True, "loss", True)
    assert "Game over: you lost" in text and not info["action_mask"].any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step("4")


def test_retries_count_per_move_and_a_full_column_is_rejected_like_an_unreadable_answer() -> None:
    env = Connect4TextEnv(rows=4, columns=4, win_length=3, opponent="random", max_retries=1)
    env.reset(seed=3)
    env.step("nonsense")
    assert env.step("1")[4]["retries_left"] == 1  # a legal move gives the next move its retries back
    while env.board.heights[0] < env.rules.rows and not env._done:
        env.step("1")
    if not env._done:
        _, reward, terminated, _, info = env.step("1")
        assert (reward, terminated) == (0.0, False) and info["parse_error"] == (
            "column 1 is full: answer one of the legal columns"
        )


def test_lose_ends_the_episode_at_the_first_rejected_answer() -> None:
    env = gym.make("Connect4Text-v0", invalid_answer="lose", agent_first=False)
    text, _ = env.reset(seed=0)
    assert "you moved second" in text and "The opponent played column" in text
    _, reward, terminated, _, info = env.step("8")
    assert (reward, terminated, info["outcome"]) == (-1.0, True, "loss")
    assert info["parse_error"].startswith("column 8 is not on the board")


def test_bad_arguments_name_the_value() -> None:
    with pytest.raises(ValueError, match="invalid_answer"):
        Connect4TextEnv(invalid_answer="ignore")
    with pytest.raises(ValueError, match="max_retries"):
        Connect4TextEnv(max_retries=-1)


def test_gymnasium_env_checker_and_ansi_render() -> None:
    env = Connect4TextEnv(render_mode="ansi")
    check_env(env, skip_render_check=True)
    text, _ = env.reset(seed=1)
    assert env.render() == text


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["<answer>", "</answer>", "<ANSWER>", "</Answer>", "4", "b", " ", "x\n"]), max_size=12
    )
)
def test_the_last_tagged_answer_is_read_as_the_lazy_pattern_reads_it(tokens: list[str]) -> None:
    import re

    text = "".join(tokens)
    pairs = re.findall(r"<answer>(.*?)</answer>", text, re.IGNORECASE | re.DOTALL)  # the slow reference
    assert _last_tagged(text) == (pairs[-1] if pairs else None)


def test_unclosed_tags_are_read_in_linear_time_and_the_length_is_bounded() -> None:
    text = (
        "<answer>4</answer>" + " <answer>" * 100_000
    )  # 900 KB of unclosed tags: the lazy pattern took minutes
    assert parse_column(text, 7, max_length=len(text)).column == 3
    with pytest.raises(ValueError, match="max_answer_length must be an integer in 1..1000000"):
        gym.make("Connect4Text-v0", max_answer_length=10**12)


def test_the_protocol_helpers_check_their_own_arguments() -> None:
    """describe_position and parse_column are public: a column off the board, a non-board or a width below 1 is
    named (they were an IndexError, an AttributeError and hints such as '1..-1')."""
    cases = [
        (lambda: describe_position(Board(), 0, last_opponent_column=99), ValueError, "last_opponent_column"),
        (lambda: describe_position("board", 0), TypeError, "board must be"),  # type: ignore[arg-type]
        (lambda: describe_position(Board(), 2), ValueError, "player"),
        (lambda: describe_position(Board(), 0, note=5), TypeError, "note"),  # type: ignore[arg-type]
        (lambda: parse_column("4", 0), ValueError, "columns"),
        (lambda: parse_column("4", True), TypeError, "columns"),  # type: ignore[arg-type]
        (lambda: parse_column("4", 7, max_length=0), ValueError, "max_length"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()
    assert "The opponent played column 7 (g)." in describe_position(Board(), 1, last_opponent_column=6)


# answers that echo: every digit of a number, every character of a sentence, any size (issue 41)
ANSWERS = st.one_of(
    st.text(max_size=300),
    st.builds(lambda piece, count: piece * count, st.text(min_size=1, max_size=3), st.integers(0, 300_000)),
    st.builds(lambda digits: "column " + "9" * digits, st.integers(0, 300_000)),
)


@given(st.lists(ANSWERS, min_size=1, max_size=4), st.data())
@settings(max_examples=60, deadline=None)
def test_every_observation_lies_in_the_space_whatever_the_answers_and_options(
    answers: list[str], data: st.DataObject
) -> None:
    """Rejection messages quote at most ECHO_LENGTH characters of an answer, so an answer of any size, under
    any max_answer_length, max_retries and board a user may pass, gives an observation within the declared
    space (the answer "9" * 4000 made a 4,458-character observation against a space of 776)."""
    rows = data.draw(st.integers(1, 12), "rows")
    columns = data.draw(st.integers(1, 30), "columns")
    win_length = data.draw(st.integers(2, max(2, rows, columns)), "win_length")
    if win_length > max(rows, columns):
        rows = win_length
    env = Connect4TextEnv(
        rows=rows,
        columns=columns,
        win_length=win_length,
        max_retries=data.draw(st.sampled_from([0, 9, 1_000_000]) | st.integers(0, 1_000_000), "max_retries"),
        max_answer_length=data.draw(
            st.sampled_from([1, 9, 4096, 1_000_000]) | st.integers(1, 1_000_000), "max_answer_length"
        ),
        invalid_answer=data.draw(st.sampled_from(["retry", "lose"]), "invalid_answer"),
        agent_first=data.draw(st.sampled_from([True, False]), "agent_first"),
    )
    text, _ = env.reset(seed=0)
    assert env.observation_space.contains(text)
    for answer in answers:
        text, _, terminated, _, info = env.step(answer)
        assert env.observation_space.contains(text), (len(text), env.observation_space.max_length)
        if info["parse_error"] is not None:
            assert len(info["parse_error"]) <= max_error_length(columns, env.max_answer_length)
        if terminated:
            break


@given(ANSWERS, st.integers(1, 40), st.integers(1, 1_000_000))
@settings(max_examples=200, deadline=None)
def test_a_rejection_message_is_short_printable_ascii_whatever_the_answer(
    text: str, columns: int, max_length: int
) -> None:
    error = parse_column(text, columns, max_length).error
    if error is not None:
        assert len(error) <= max_error_length(columns, max_length)
        assert error.isascii() and error.isprintable()


def test_echo_quotes_at_most_its_limit_of_printable_ascii() -> None:
    assert echo("8", quote=False) == "8" and echo("8") == "'8'"
    assert echo("9" * 4000, quote=False) == "9" * (ECHO_LENGTH - 3) + "..."
    assert echo("my favourite column") == "'my favourite column'"
    assert echo("\x00é") == "'\\x00\\xe9'" and echo("é", quote=False) == "'\\xe9'"  # never bare if not ASCII
    long = echo("é" * 10**6)
    assert len(long) == ECHO_LENGTH and long.endswith("...'") and long.isascii()
    assert len(echo("x" * 100, limit=5)) == 5
    for bad, error in (("x", ValueError), (b"x", TypeError)):
        with pytest.raises(error):
            echo(bad, limit=4) if error is ValueError else echo(bad)  # type: ignore[arg-type]


def test_the_off_board_number_is_cut_not_repeated_digit_by_digit() -> None:
    error = parse_column("9" * 4000, 7, max_length=10**6).error or ""
    assert error.startswith("column 999") and "..." in error and len(error) < 140
    assert (
        parse_column("08", 7).error
        == "column 8 is not on the board: answer a column number 1..7 or a letter a..g"
    )
    with pytest.raises(ValueError, match="max_retries must be an integer in 0..1000000"):
        Connect4TextEnv(max_retries=10**7)
