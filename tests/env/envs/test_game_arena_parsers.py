"""The two Game Arena dialects against the two harnesses' own parsers, on the same answers.

``game_arena`` must read every answer as Kaggle's harness does (kaggle-environments'
``open_spiel_env/games/connect_four/harness.py``, its ``parse_response``), and ``deepmind_game_arena`` as
DeepMind's ``game_arena`` package does (``game_arena.harness.parsers``: a ``RuleBasedMoveParser`` then a
``SoftMoveParser("connect_four")``, the chain its rethink sampler applies). Each harness reads a list of
hand-written edge cases and hypothesis-generated answers on a few positions, and the dialect must give the
same column, or reject where the harness finds no legal move.

Each test skips, naming the package, where its harness is not installed: ``make test-llm`` installs
``game_arena`` into the main venv and points ``KAGGLE_PYTHON`` at ``.venv-kaggle``, whose kaggle-environments'
harness file is loaded here (kaggle-environments' own imports pull litellm; its ``parse_response`` needs only
the ``ParseResult`` record, which is stood in for).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import subprocess
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_env.core import Board
from connect4_env.envs.dialects import get_dialect

Reading = Callable[[str, Sequence[int]], "int | None"]

# positions as move lists (OpenSpiel replays them for DeepMind's parser): o to move with every column legal;
# x to move with column 0 full; o to move with columns 0 and 6 full
POSITIONS: list[tuple[int, ...]] = [(3, 3, 2), (0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 3)]

EDGE_CASES = [
    "Final Answer: 3",
    "I'll drop in column 3.\n\nFinal Answer: 3",
    "final answer: 2",
    "FINAL ANSWER:4",
    "Final Answer : 5",
    "Final Answer:\n5",
    "Final\xa0Answer: 5",
    "**Final Answer: 3**",
    "**Final Answer:** 3",
    "Final Answer: `3`",
    "Final Answer: $\\boxed{4}$",
    "Final Answer: \\boxed{\\text{4}}",
    "Final Answer: <answer>4</answer>",
    "Final Answer: 3.",
    "Final Answer: 3.5",
    "Final Answer: 03",
    "Final Answer: 0",
    "Final Answer: 6",
    "Final Answer: 7",
    "Final Answer: 10",
    "Final Answer: -1",
    "Final Answer: column 3",
    "Final Answer: 3 is best",
    "Final Answer: 3 (the centre)",
    "Final Answer: 3\nThis is my move.",
    "I considered column 2. Final Answer: 7",
    "Column 4 is the best move here.",
    "I considered column 2 but column 5 is better.",
    "this is 4",
    "My move is 6",
    "Move: 1",
    "Let me think.\nFinal Answer: 1\nOn reflection:\nFinal Answer: 6",
    "Final Answer: 2\n\nReasoning: the centre is taken.",
    "Final Answer: \u0663",
    "Final Answer: 3\u0663",
    "Final Answer: \u06633",
    "Final Answer: \uff13",
    "Final Answer: 3\t",
    "Final Answer: 3\r\n",
    "Final Answer: 3 . ",
    "Final Answer: . 3",
    "Final Answer: <3",
    "Final Answer: 3>",
    "Final Answer: <b>3",
    "3",
    "",
    "no idea",
    ":",
    "is",
    "\\box}ed{3",
]
# pieces that the parsers treat specially, for generated answers
PIECES = [
    *"0123456789",
    *" .:$*`}{<>\n\t\r\xa0\\",
    "Final Answer: ",
    "final answer:",
    "Final Answer:",
    "is",
    "this",
    "column",
    "\\boxed{",
    "\\text{",
    "\boxed{",
    "\text{",
    "<b>",
    "</b>",
    "\u0663",
    "\uff13",
    "10",
    "03",
]
ANSWERS = st.one_of(st.lists(st.sampled_from(PIECES), max_size=14).map("".join), st.text(max_size=40))


def _dialect_reading(dialect: str) -> Reading:
    reader = get_dialect(dialect)

    def reading(answer: str, moves: Sequence[int]) -> int | None:
        return reader.parse(answer, Board().play_moves(list(moves))).column

    return reading


# --- DeepMind's game_arena package ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def deepmind_reading() -> Reading:
    """The column DeepMind's parsers read from an answer (None: sent back for a rethink)."""
    parsers = pytest.importorskip(
        "game_arena.harness.parsers",
        reason="DeepMind's game_arena package is not installed (make test-llm installs game_arena==0.1.0)",
    )
    pyspiel = pytest.importorskip(
        "pyspiel", reason="game_arena's parsers import open_spiel (the openspiel extra)"
    )
    chain = parsers.ChainedMoveParser([parsers.RuleBasedMoveParser(), parsers.SoftMoveParser("connect_four")])
    game = pyspiel.load_game("connect_four")

    def reading(answer: str, moves: Sequence[int]) -> int | None:
        state = game.new_initial_state()
        for move in moves:
            state.apply_action(move)
        action = chain.parse(
            parsers.TextParserInput(
                text=answer,
                state_str=state.to_string(),
                legal_moves=parsers.get_legal_action_strings(state),
                player_number=state.current_player(),
            )
        )
        return None if action is None else state.string_to_action(action)

    return reading


def test_deepmind_game_arena_reads_the_edge_cases_as_deepminds_parser(deepmind_reading: Reading) -> None:
    ours = _dialect_reading("deepmind_game_arena")
    for moves in POSITIONS:
        for answer in EDGE_CASES:
            assert ours(answer, moves) == deepmind_reading(answer, moves), (answer, moves)


@settings(max_examples=400, deadline=None)
@given(answer=ANSWERS, position=st.sampled_from(POSITIONS))
def test_deepmind_game_arena_reads_generated_answers_as_deepminds_parser(
    deepmind_reading: Reading, answer: str, position: tuple[int, ...]
) -> None:
    assert _dialect_reading("deepmind_game_arena")(answer, position) == deepmind_reading(answer, position)


# --- Kaggle's harness in kaggle-environments ---------------------------------------------------------------------

KAGGLE_HARNESS = Path("envs", "open_spiel_env", "games", "connect_four", "harness.py")


def _kaggle_environments_root() -> Path | None:
    """Where kaggle-environments is installed: in this interpreter, or in ``KAGGLE_PYTHON``'s."""
    spec = importlib.util.find_spec("kaggle_environments")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    python = os.environ.get("KAGGLE_PYTHON")
    if not python:
        return None
    where = subprocess.run(
        [
            os.path.abspath(python),
            "-c",
            "import importlib.util as u; s = u.find_spec('kaggle_environments'); "
            "print(next(iter(s.submodule_search_locations)) if s else '')",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.strip()
    return Path(where) if where else None


@dataclasses.dataclass
class _ParseResult:  # kaggle_environments.core_harness.ParseResult's fields
    legal_action: str | None = None
    raw_action: str | None = None
    submission: object = None
    thoughts: str | None = None


@pytest.fixture(scope="module")
def kaggle_reading() -> Reading:
    """The column Kaggle's connect_four harness reads from an answer (None: a rethink)."""
    root = _kaggle_environments_root()
    if root is None or not (root / KAGGLE_HARNESS).is_file():
        missing = f"kaggle-environments' connect_four harness ({KAGGLE_HARNESS}) is not installed"
        if os.environ.get("KAGGLE_PYTHON"):  # asked for by name (make test-llm): its absence is a failure
            pytest.fail(f"{missing} in KAGGLE_PYTHON={os.environ['KAGGLE_PYTHON']}")
        pytest.skip(f"{missing} here, and KAGGLE_PYTHON is not set (make test-llm sets it)")
    stubs = {"kaggle_environments.core_harness": types.ModuleType("kaggle_environments.core_harness")}
    stubs["kaggle_environments.core_harness"].ParseResult = _ParseResult  # type: ignore[attr-defined]
    if importlib.util.find_spec("pyspiel") is None:  # parse_response itself never calls it
        stubs["pyspiel"] = types.ModuleType("pyspiel")
    spec = importlib.util.spec_from_file_location("kaggle_connect_four_harness", root / KAGGLE_HARNESS)
    assert spec is not None and spec.loader is not None
    harness = importlib.util.module_from_spec(spec)
    with pytest.MonkeyPatch.context() as patch:
        for name, module in stubs.items():
            patch.setitem(sys.modules, name, module)
        spec.loader.exec_module(harness)

    def reading(answer: str, moves: Sequence[int]) -> int | None:
        board = Board().play_moves(list(moves))
        legal = [f"{'xo'[board.to_move]}{column}" for column in board.legal_moves()]  # OpenSpiel's strings
        action = harness.parse_response(answer, legal).legal_action
        return None if action is None else int(action[1:])

    return reading


def test_game_arena_reads_the_edge_cases_as_kaggles_harness(kaggle_reading: Reading) -> None:
    ours = _dialect_reading("game_arena")
    for moves in POSITIONS:
        for answer in EDGE_CASES:
            assert ours(answer, moves) == kaggle_reading(answer, moves), (answer, moves)


@settings(max_examples=400, deadline=None)
@given(answer=ANSWERS, position=st.sampled_from(POSITIONS))
def test_game_arena_reads_generated_answers_as_kaggles_harness(
    kaggle_reading: Reading, answer: str, position: tuple[int, ...]
) -> None:
    assert _dialect_reading("game_arena")(answer, position) == kaggle_reading(answer, position)


def test_the_two_harnesses_disagree_where_the_docs_say() -> None:
    # the same answers, read by each dialect: Kaggle falls back to the last legal number, DeepMind does not
    board = Board().play_moves([3, 3, 2])
    for answer, kaggle, deepmind in (
        ("Final Answer: 3", 3, 3),
        ("I considered column 2. Final Answer: 7", 2, None),
        ("Final Answer: 3 is best", 3, None),
        ("Column 4 is the best move here.", 4, None),
        ("Final Answer: column 5", 5, None),
        ("this is 4", 4, 4),
    ):
        assert get_dialect("game_arena").parse(answer, board).column == kaggle, answer
        assert get_dialect("deepmind_game_arena").parse(answer, board).column == deepmind, answer
