"""Dialects: each harness's answers read as that harness reads them (examples written the way its own tests and
prompts write them), boards as its reference code prints them, observations within the text env's space, and
each rule for rejected answers in the text env."""

from __future__ import annotations

import json
import random
import tracemalloc
from collections.abc import Sequence

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_env.core import Board
from connect4_env.envs.dialects import DIALECTS, Dialect, ParseResult, echo, get_dialect
from connect4_env.envs.text_env import TEXT_CHARSET
from connect4_env.rules import Rules

AFTER = Board().play_moves([3, 3, 2])  # every column legal; x (first mover) to answer... o to move
FULL_FIRST = Board().play_moves([0, 0, 0, 0, 0, 0])  # column 0 full


# Kaggle's connect_four harness tests and prompt, and the cases its two-stage parser decides
GAME_ARENA = [
    ("I'll drop in column 3.\n\nFinal Answer: 3", 3),
    ("final answer: 2", 2),
    ("Column 4 is the best move here.", 4),
    ("I considered column 2 but column 5 is better.", 5),
    ("**Final Answer: 3**", 3),
    ("**Final Answer:** 3", 3),
    ("Final Answer: 7", None),
    ("I considered column 2. Final Answer: 7", 2),
    ("Final Answer: 10", None),
    ("Final Answer: 03", None),
    ("Let me think.\nFinal Answer: 1\nOn reflection:\nFinal Answer: 6", 6),
    ("no idea", None),
    ("Final Answer: 3\u0663", None),  # one run of digits (Kaggle's \d is Unicode), no column
    ("I pick \u06633", None),
]
# DeepMind's game_arena package: the text after the last ':' or 'is', cleaned, must be a legal column
DEEPMIND_GAME_ARENA = [
    ("I'll drop in column 3.\n\nFinal Answer: 3", 3),
    ("**Final Answer:** 3", 3),
    ("Final Answer: $\\boxed{4}$", 4),
    ("Final Answer: <answer>5</answer>.", 5),
    ("this is 4", 4),
    ("final answer: 2", 2),
    ("Final Answer: 3 is best", None),
    ("Final Answer: column 3", None),
    ("I considered column 2. Final Answer: 7", None),
    ("Column 4 is the best move here.", None),
    ("Final Answer: 03", None),
    ("3", None),
]
# TextArena's ConnectFour prompt examples and its ActionFormattingWrapper + regex
TEXTARENA = [
    ("[col 4]", 4),
    ("[col 1]", 1),
    ("[3]", 3),
    ("3", 3),
    ("col 3", 3),
    ("[Col 3]", 3),
    ("[col3]", 3),
    ("**[col 3]**", 3),
    ("[col 03]", 3),
    ("I choose [col 2] not [col 5]", 5),
    ("[col 2]\nActually [col 5]", 2),
    ("[column 3]", None),
    ("[ col 3 ]", None),
    ("Final Answer: 3", None),
    ("[col 9]", None),
    ("[col\n3]", 3),  # TextArena's \s takes a line break after col
    ("[col\xa03]", 3),  # and a no-break space
    ("[\u0663]", 3),  # and its \d any decimal digit (Arabic-Indic three)
    ("[col \uff13]", 3),  # a full-width three
    ("x [col\n2] y [5]\n[6]", 2),  # the last bracket starting on the first line with one
    ("[\n3]", None),
]
# OpenEnv's Connect4Action(column=N) as JSON, and tool calls
JSON = [
    ('{"column": 3}', 3),
    ('{"column": 0}', 0),
    ('I will play {"column": 2}. No: {"column": 4}', 4),
    ('{"name": "drop_disc", "arguments": "{\\"column\\": 5}"}', 5),
    ('{"type": "function", "function": {"name": "drop_disc", "arguments": {"column": 1}}}', 1),
    ("drop_disc(column=6)", 6),
    ("drop_disc(2)", 2),
    ('{"column": "3"}', 3),
    ('{"column": 3.0}', 3),
    ('{"column": 3.5}', None),
    ('{"column": true}', None),
    ('{"column": 7}', None),
    ('{"column": -1}', None),
    ("3", None),
    ('{"name": "other_tool", "arguments": {"column": 1}}', None),
    ("drop_disc(2) then drop_disc(5)", 5),
    (
        '{"role": "assistant", "tool_calls": [{"type": "function", "function": '
        '{"name": "drop_disc", "arguments": "{\\"column\\": 4}"}}]}',
        4,
    ),
]
OWN = [
    ("4", 3),
    ("d", 3),
    ("column 4", 3),
    ("I play d", 3),
    ("<think>5?</think><answer>4</answer>", 3),
    ("8", None),
]


@pytest.mark.parametrize(
    ("dialect", "cases"),
    [
        ("game_arena", GAME_ARENA),
        ("deepmind_game_arena", DEEPMIND_GAME_ARENA),
        ("textarena", TEXTARENA),
        ("json", JSON),
        ("connect4", OWN),
    ],
)
def test_each_dialect_reads_its_harness_examples_as_the_harness_does(dialect: str, cases: list) -> None:
    reader = get_dialect(dialect)
    for answer, column in cases:
        parsed = reader.parse(answer, AFTER)
        assert parsed.column == column, (dialect, answer, parsed)
        assert (parsed.error is None) == (column is not None), (dialect, answer, parsed)


def test_a_full_column_is_rejected_in_every_dialect_and_the_fallbacks_skip_it() -> None:
    for dialect, answer in (
        ("game_arena", "Final Answer: 0"),
        ("deepmind_game_arena", "Final Answer: 0"),
        ("textarena", "[0]"),
        ("json", '{"column": 0}'),
    ):
        parsed = get_dialect(dialect).parse(answer, FULL_FIRST)
        assert parsed.column is None and "full" in parsed.error or "legal" in parsed.error
    parsed = get_dialect("connect4").parse("1", FULL_FIRST)
    assert parsed.column is None and "column 1 is full" in parsed.error
    # Game Arena's fallback takes the last legal number: 0 is full, so 5
    assert get_dialect("game_arena").parse("column 5 or 0. Final Answer: 0", FULL_FIRST).column == 5


def test_the_game_arena_board_is_openspiels_state_string() -> None:
    pyspiel = pytest.importorskip("pyspiel")
    rng = random.Random(7)
    for rows, columns in ((6, 7), (5, 4), (7, 9)):
        game = pyspiel.load_game("connect_four", {"rows": rows, "columns": columns})
        for _ in range(20):
            state, board = game.new_initial_state(), Board(Rules(rows, columns, 4))
            while not state.is_terminal():
                assert (
                    get_dialect("game_arena").observation(board, board.to_move).count(state.to_string()) == 1
                )
                spaced = "".join(" ".join(line) + "\n" for line in state.to_string().splitlines())
                assert get_dialect("deepmind_game_arena").observation(board, board.to_move).count(spaced) == 1
                column = rng.choice(state.legal_actions())
                state.apply_action(column)
                board.play(column)


def test_dialects_number_columns_as_their_harness_and_the_hash_tells_prompts_apart() -> None:
    assert [get_dialect(name).base for name in DIALECTS] == [1, 0, 0, 0, 0]
    hashes = {get_dialect(name, history=h).template_hash for name in DIALECTS for h in (False, True)}
    assert len(hashes) == 10 and all(len(h) == 8 for h in hashes)
    assert get_dialect("json").template_hash == get_dialect("json").template_hash
    assert get_dialect("json", legal_moves=False).template_hash != get_dialect("json").template_hash


def test_options_show_or_hide_the_legal_columns_the_moves_and_the_board() -> None:
    board, moves = Board().play_moves([3, 4]), [3, 4]
    arena = get_dialect("game_arena", legal_moves=True, history=True).observation(board, 0, moves)
    assert "x3 o4" in arena and "0 1 2 3 4 5 6" in arena and "...xo.." in arena
    assert "x3 o4" not in get_dialect("game_arena").observation(board, 0, moves)
    blind = get_dialect("textarena", blind=True).observation(board, 0, moves)
    assert "not visible" in blind and "into column 4" in blind and "-------------" not in blind
    state = json.loads(get_dialect("json", history=True).observation(board, 0, moves))
    assert state["board"][-1] == [0, 0, 0, 1, -1, 0, 0] and state["moves"] == [3, 4] and state["player"] == 1
    assert "board" not in json.loads(get_dialect("json", blind=True).observation(board, 0, moves))
    own = get_dialect("connect4", legal_moves=False, history=True).observation(board, 0, moves)
    assert "Legal columns" not in own and "Moves so far, first move first: X4 O5." in own
    with pytest.raises(ValueError, match="blind=True needs history"):
        get_dialect("textarena", blind=True, history=False)
    with pytest.raises(ValueError, match="dialect"):
        get_dialect("chess")
    with pytest.raises(TypeError, match="legal_moves"):
        get_dialect("json", legal_moves="yes")  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300), st.sampled_from(tuple(DIALECTS)))
def test_any_text_parses_to_a_legal_column_or_an_error_without_raising(text: str, dialect: str) -> None:
    parsed = get_dialect(dialect).parse(text, FULL_FIRST)
    assert (parsed.column is None) != (parsed.error is None)
    if parsed.column is not None:
        assert FULL_FIRST.is_legal(parsed.column)


def test_hostile_answers_are_read_in_bounded_work() -> None:
    hostile = [
        '{"a":' * 50_000,  # nesting past Python's recursion limit
        "[" * 100_000,
        "Final Answer: " * 20_000,
        "9" * 100_000,
        "{" * 100_000,
        "drop_disc(column=" + "9" * 50_000 + ")",
        "Final Answer: " + "<" * 100_000,  # a lazy <.*?> would rescan to the end from each <
    ]
    for dialect in DIALECTS:
        for text in hostile:
            parsed = get_dialect(dialect).parse(text, AFTER, max_length=1_000_000)
            assert parsed.column is None or AFTER.is_legal(parsed.column)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 6), max_size=42), st.sampled_from(tuple(DIALECTS)), st.booleans(), st.booleans()
)
def test_observations_fit_the_text_envs_space_in_every_dialect(moves, dialect, history, legal) -> None:
    env = gym.make("Connect4Text-v0", dialect=dialect, history=history, legal_moves=legal).unwrapped
    board, played = Board(), []
    for column in moves:
        if board.is_terminal or not board.is_legal(column):
            break
        board.play(column)
        played.append(column)
    reader = env.dialect
    note = reader.rejection_note("é" * 5000 + "x" * 5000, "e" * 200, 3)
    text = reader.observation(board, board.to_move, played, note=note, status="s" * 100)
    assert len(text) <= env.observation_space.max_length
    assert set(text) <= TEXT_CHARSET


def test_the_text_env_applies_each_dialects_rule_for_rejected_answers() -> None:
    # TextArena: one free invalid answer a move, the second in a row loses
    env = gym.make("Connect4Text-v0", dialect="textarena", agent_first=True)
    text, info = env.reset(seed=0)
    assert info["dialect"] == "textarena" and len(info["template"]) == 8
    assert "0 1 2 3 4 5 6" in text and env.unwrapped.system_prompt.startswith("You are Player 0")
    text, reward, done, _, info = env.step("maybe the middle")
    assert (reward, done) == (0.0, False) and "Invalid action format" in text and info["retries_left"] == 0
    text, reward, done, _, info = env.step("[col 3]")
    assert not done and info["parsed_column"] == 3 and info["retries_left"] == 1
    assert env.unwrapped.moves[0] == 3 and len(env.unwrapped.moves) == 2
    env.step("[col 9]")
    _, reward, done, _, info = env.step("[col 9]")
    assert (reward, done, info["outcome"]) == (-1.0, True, "loss")
    # OpenEnv's JSON: a rejected answer loses at once
    env = gym.make("Connect4Text-v0", dialect="json", agent_first=True)
    env.reset(seed=0)
    _, reward, done, _, _ = env.step("3")
    assert (reward, done) == (-1.0, True)
    # Game Arena: one rethink that quotes the answer's end, then a loss
    env = gym.make("Connect4Text-v0", dialect="game_arena", agent_first=True)
    env.reset(seed=0)
    text, reward, done, _, _ = env.step("I would play column 9.\nFinal Answer: 9")
    assert (
        not done and "Your previous response concluded with:\nI would play column 9.\nFinal Answer: 9" in text
    )
    _, reward, done, _, _ = env.step("Final Answer: 9")
    assert (reward, done) == (-1.0, True)


def test_the_text_env_shows_the_game_so_far_in_the_dialect() -> None:
    env = gym.make(
        "Connect4Text-v0", dialect="game_arena", history=True, agent_first=False, opponent="random"
    )
    text, _ = env.reset(seed=3)
    first = env.unwrapped.moves
    assert len(first) == 1 and f"x{first[0]}" in text and "player o" in text
    column = env.unwrapped.board.legal_moves()[0]
    text, *_ = env.step(f"Final Answer: {column}")
    moves = env.unwrapped.moves
    assert moves[:2] == [first[0], column] and Board().play_moves(moves) == env.unwrapped.board
    assert " ".join(f"{'xo'[i % 2]}{m}" for i, m in enumerate(moves)) in text


def _textarena_reading(answer: str) -> int | None:
    """The column TextArena's own ConnectFour env reads from ``answer`` after its ActionFormattingWrapper."""
    from textarena.envs.ConnectFour.env import ConnectFourEnv
    from textarena.wrappers import ActionFormattingWrapper

    env = ConnectFourEnv()
    env.reset(num_players=2, seed=0)
    valid, column, _ = env._validate_action(ActionFormattingWrapper(env).action(answer))
    return column if valid else None


def test_the_textarena_dialect_reads_answers_as_textarenas_own_parser() -> None:
    pytest.importorskip("textarena")
    rng = random.Random(1)
    pieces = [*"[]col 0123479\n\xa0\u0663\uff13Cx\r\t", "[col ", "]\n", "[col\n"]
    answers = [answer for answer, _ in TEXTARENA]
    answers += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(3000)]
    reader = get_dialect("textarena")
    for answer in answers:
        assert reader.parse(answer, Board()).column == _textarena_reading(answer), answer


def test_a_tool_call_nested_past_the_recursion_limit_is_a_rejected_answer() -> None:
    nested = "[" * 1000 + "]" * 1000
    for arguments in (nested, '{"column": ' + nested + "}", '{"column": 3, "x": ' + nested + "}"):
        answer = json.dumps({"name": "drop_disc", "arguments": arguments})
        parsed = get_dialect("json").parse(answer, AFTER)
        assert parsed.column is None and parsed.error == 'no column could be read: answer {"column": N}'
    env = gym.make("Connect4Text-v0", dialect="json", agent_first=True)
    env.reset(seed=0)
    _, reward, done, _, info = env.step(json.dumps({"name": "drop_disc", "arguments": nested}))
    assert (reward, done, info["parsed_column"]) == (-1.0, True, None)


def test_an_off_board_column_is_quoted_short_and_the_observation_stays_in_its_space() -> None:
    for answer in (
        '{"column": ' + "9" * 4000 + "}",
        '{"column": -' + "9" * 4000 + "}",
        "drop_disc(" + "9" * 4000 + ")",
    ):
        env = gym.make("Connect4Text-v0", dialect="json", rows=2, columns=2, win_length=2)
        env.reset(seed=0)
        text, reward, done, _, info = env.step(answer)
        assert done and len(info["parse_error"]) < 80, info["parse_error"]
        assert env.observation_space.contains(text)
    parsed = get_dialect("json").parse('{"column": "' + "\u00e9" * 5000 + '"}', AFTER)
    assert len(parsed.error) < 80


@pytest.mark.parametrize("dialect", DIALECTS)
def test_reading_an_answer_takes_memory_bounded_by_a_few_bytes_a_character(dialect: str) -> None:
    size = 120_000
    hostile = [
        "1 " * (size // 2),  # a number everywhere (each one a match object in a list before)
        "[9]" * (size // 3),
        "\n" * size,
        "[9]\n" * (size // 4),
        '{"a":[' + "[]," * (size // 3) + "0]}",  # one object of 40,000 empty lists
        '{"":0}' * (size // 6),
        "drop_disc(9) " * (size // 13),
        "Final Answer: 9 " * (size // 16),
        '{"column": 3}' + "{}" * (size // 2),
    ]
    reader = get_dialect(dialect)
    for text in hostile:
        tracemalloc.start()
        try:
            reader.parse(text, AFTER, max_length=1_000_000)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak <= 4 * len(text) + 100_000, (text[:20], peak / len(text))


class LettersDialect(Dialect):
    """A toy harness, whole in one class: the legal columns as letters, an answer of one letter."""

    name = "letters"
    max_retries = 1

    def render(
        self, board: Board, player: int, moves: Sequence[int], note: str | None, status: str | None
    ) -> str:
        legal = " ".join("ABCDEFG"[column] for column in board.legal_moves())
        return f"{status or 'Your move, one of: ' + legal}\n{note or ''}"

    def read(self, text: str, board: Board) -> ParseResult:
        column = "ABCDEFG".find(text.strip().upper()) if len(text.strip()) == 1 else -1
        if column < 0 or not board.is_legal(column):
            return ParseResult(None, f"{echo(text)} is not a legal letter")
        return ParseResult(column, None)

    def rejection_note(self, answer: str, error: str, tries_left: int, cut_off: bool = False) -> str:
        return f"Rejected: {error}."


def test_a_new_dialect_is_one_class_and_one_registry_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(DIALECTS, LettersDialect.name, LettersDialect)  # the registry line
    env = gym.make("Connect4Text-v0", dialect="letters", opponent="random", agent_first=True)
    text, info = env.reset(seed=0)
    assert info["dialect"] == "letters" and text.startswith("Your move, one of: A B C D E F G")
    text, reward, done, _, info = env.step("Z")  # the dialect's rule: one retry, with its note
    assert (reward, done, info["retries_left"]) == (
        0.0,
        False,
        0,
    ) and "Rejected: 'Z' is not a legal letter" in text
    while not done:
        assert env.observation_space.contains(text)
        text, reward, done, _, info = env.step("ABCDEFG"[env.unwrapped.board.legal_moves()[0]])
    assert info["outcome"] in ("win", "loss", "draw") and text.startswith("Game over")
    assert get_dialect("letters", history=True).history and len(env.unwrapped.template_hash) == 8
    monkeypatch.undo()
    assert "letters" not in DIALECTS
    with pytest.raises(ValueError, match="dialect"):
        gym.make("Connect4Text-v0", dialect="letters")
