"""Test sets of positions with the exact score of every move, shipped as package data: the sets, their files
and the positions a measure selects from them (`connect4_agents.evaluation.test_set_generation` makes them).

The 6x7 sets follow Pascal Pons' benchmark design: positions from random play, grouped by the plies already
played (begin <= 14, middle 15-28, end > 28) and the plies left under perfect play (easy < 14, medium 14-27,
hard >= 28), for the six groups where such positions exist. The smaller boards (the ones Q-learning and quick
experiments use) get one set each. In every set: no finished position, none where the side to move can win
at once, and no position twice (transpositions and mirror images count as the same).

Scores are [`SolverAgent`][connect4_agents.solver.agent.SolverAgent]'s, from the view of the player to move: a
win by the board's ``w``-th stone scores ``cells + 1 - w``, a loss minus the opponent's win, a draw 0.

Files: ``agents/data/test_sets/<name>.jsonl.gz``, one JSON object per line (``moves``, ``move_scores``,
``score``, ``rows``, ``columns``, ``win_length``), gzip written with no name and no time stamp, so
``connect4 make-test-sets --seed 0`` writes the same bytes again. ``manifest.json`` holds each set's size,
seed and the SHA-256 of its file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from connect4_agents._support.files import parse_json, read_json_lines
from connect4_agents.solver.agent import plies_to_end
from connect4_env import Board, IllegalMoveError, Rules
from connect4_env.validation import check_int, check_name_list

__all__ = [
    "score_outcome",
    "select_positions",
    "select_labelled_positions",
    "Position",
    "TestSetSpec",
    "TEST_SET_SPECS",
    "test_set_names",
    "select_test_sets",
    "load_test_set",
    "read_positions",
    "test_set_path",
    "DATA_DIR",
]

DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "test_sets"
MANIFEST = "manifest.json"
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a set's file name: no folder, no hidden file
_MAX_FILE_BYTES = 64 << 20  # a test set file larger than this (decompressed) is refused


def score_outcome(score: int) -> int:
    """The outcome an exact score means for the player it scores: 1 a win, 0 a draw, -1 a loss."""
    return (score > 0) - (score < 0)


@dataclass(frozen=True)
class Position:
    """A position and the exact score of every move in it.

    Attributes:
        moves: the 0-based columns played from the empty board.
        rows: the board's height.
        columns: the board's width.
        win_length: the stones in a line that win.
        move_scores: one per column, from the mover's view (None for a full column); larger is better.
        score: the position's score, the best of ``move_scores``.
    """

    moves: tuple[int, ...]
    rows: int
    columns: int
    win_length: int
    move_scores: tuple[int | None, ...]
    score: int

    @property
    def rules(self) -> Rules:
        """The position's board: ``Rules(rows, columns, win_length)``."""
        return Rules(self.rows, self.columns, self.win_length)

    @property
    def ply(self) -> int:
        """Stones already played."""
        return len(self.moves)

    @property
    def remaining(self) -> int:
        """Plies left until the game ends when both sides play perfectly."""
        return plies_to_end(self.score, self.ply, self.rows * self.columns)

    @property
    def outcome(self) -> int:
        """1 if the mover wins with perfect play, 0 draw, -1 loss."""
        return score_outcome(self.score)

    @property
    def nontrivial(self) -> bool:
        """Whether the choice matters: some legal move has a worse outcome (win, draw, loss) than the best.

        In a trivial position every move keeps the same outcome, so no move can be wrong there; accuracy on
        the non-trivial positions is the one that tells agents apart (AlphaZero.jl's benchmark counts errors
        the same way).
        """
        return any(s is not None and score_outcome(s) != self.outcome for s in self.move_scores)

    def board(self) -> Board:
        """The position as a [`connect4_env.Board`][connect4_env.core.Board]."""
        return Board(self.rules).play_moves(self.moves)

    def to_json(self) -> str:
        """The position as one compact JSON object (a line of a set's file, what
        [`from_dict`][connect4_agents.evaluation.test_sets.Position.from_dict] reads back): ``moves``,
        ``move_scores``, ``score``, ``rows``, ``columns`` and ``win_length``.
        """
        return json.dumps(
            {
                "moves": list(self.moves),
                "move_scores": list(self.move_scores),
                "score": self.score,
                "rows": self.rows,
                "columns": self.columns,
                "win_length": self.win_length,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_dict(cls, data: Any) -> Position:
        """Build and check a position from a decoded JSON object.

        Raises:
            ValueError: a field missing or of the wrong kind, an illegal move, a game already over, or
                ``move_scores`` not one per column, None exactly at the full columns, each a score the board
                allows after these moves, and ``score`` not their best.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a position must be a JSON object, got {type(data).__name__}")
        missing = {"moves", "move_scores", "score", "rows", "columns", "win_length"} - set(data)
        if missing:
            raise ValueError(f"a position needs the fields {sorted(missing)}")
        try:
            rules = Rules(data["rows"], data["columns"], data["win_length"])
        except TypeError as error:
            raise ValueError(str(error)) from None
        moves, scores, score = data["moves"], data["move_scores"], data["score"]
        if not isinstance(moves, list) or not all(type(m) is int for m in moves):
            raise ValueError(f"moves must be a list of integer columns, got {moves!r:.80}")
        if len(moves) >= rules.cells:
            raise ValueError(f"{len(moves)} moves do not fit a board of {rules.cells} cells")
        try:
            board = Board(rules).play_moves(moves)
        except IllegalMoveError as error:
            raise ValueError(f"moves {moves!r:.80}: {error}") from None
        if board.is_terminal:
            raise ValueError(f"moves {moves!r:.80} end the game: there is no move to score")
        if not isinstance(scores, list) or len(scores) != rules.columns:
            raise ValueError(f"move_scores must be a list of {rules.columns} entries, got {scores!r:.80}")
        # a move's win scores left, left - 2, ..., its loss 1 - left, 3 - left, ... (see the module docstring)
        left = rules.cells - len(moves)
        for column, value in enumerate(scores):
            if board.is_legal(column) != (type(value) is int):
                raise ValueError(
                    f"move_scores[{column}] is {value!r}: it must be an integer for a legal column and null "
                    "for a full one"
                )
            if value and not (1 - left <= value <= left and (left - value) % 2 == (value < 0)):
                raise ValueError(
                    f"move_scores[{column}] is {value}, which no game allows after {len(moves)} of {rules.cells} "
                    f"stones; allowed: 0, wins {left}, {left - 2}, ..., losses {1 - left}, {3 - left}, ..."
                )
        if type(score) is not int or score != max(s for s in scores if s is not None):
            raise ValueError(f"score {score!r} is not the best of move_scores {scores}")
        return cls(tuple(moves), rules.rows, rules.columns, rules.win_length, tuple(scores), score)


@dataclass(frozen=True)
class TestSetSpec:
    """How one set is generated: the board, the plies played, the plies left under perfect play."""

    name: str
    rows: int
    columns: int
    win_length: int
    size: int
    plies: tuple[int, int]  # already played, inclusive
    remaining: tuple[int, int] = (0, 1 << 30)  # left under perfect play, inclusive
    description: str = ""

    @property
    def rules(self) -> Rules:
        """The set's board: ``Rules(rows, columns, win_length)``."""
        return Rules(self.rows, self.columns, self.win_length)


def _pons_sets() -> list[TestSetSpec]:
    begin, middle, end = (0, 14), (15, 28), (29, 41)
    easy, medium, hard = (0, 13), (14, 27), (28, 42)
    groups = [
        ("end-easy", end, easy),
        ("middle-easy", middle, easy),
        ("middle-medium", middle, medium),
        ("begin-easy", begin, easy),
        ("begin-medium", begin, medium),
        ("begin-hard", begin, hard),
    ]
    specs = []
    for label, plies, remaining in groups:
        left = f"{remaining[0]}-{min(remaining[1], 42 - plies[0])}"
        description = f"6x7, {plies[0]}-{plies[1]} plies played, {left} left under perfect play"
        specs.append(TestSetSpec(f"6x7-{label}", 6, 7, 4, 1000, plies, remaining, description))
    return specs


def _small_sets() -> list[TestSetSpec]:
    boards = [(4, 5, 4), (5, 4, 4), (5, 5, 4), (6, 5, 4), (5, 6, 4), (4, 4, 3), (5, 5, 3)]
    specs = []
    for rows, columns, win_length in boards:
        name = f"{rows}x{columns}" + ("" if win_length == 4 else f"-w{win_length}")
        description = f"{rows}x{columns}, {win_length} in a row, any ply"
        plies = (0, rows * columns - 1)
        specs.append(TestSetSpec(name, rows, columns, win_length, 300, plies, description=description))
    return specs


TEST_SET_SPECS: dict[str, TestSetSpec] = {spec.name: spec for spec in _pons_sets() + _small_sets()}


def test_set_names() -> list[str]:
    """The shipped sets: the six 6x7 ones (names start with ``"6x7"``), then the smaller boards'."""
    return list(TEST_SET_SPECS)


def select_test_sets(requested: Sequence[str]) -> list[str]:
    """Set names from a command line: ``["all"]``, ``["6x7"]`` (the six 6x7 sets) or names of sets.

    Raises:
        TypeError: ``requested`` is not a list of strings (a lone string included).
        ValueError: an unknown name (the message lists the sets), a set named twice (its positions would
            count twice), or ``"all"`` / ``"6x7"`` with other names.
    """
    requested = check_name_list("test sets", requested, "test set names")
    names = test_set_names()
    if requested == ["all"]:
        return names
    if requested == ["6x7"]:
        return [n for n in names if n.startswith("6x7")]
    if {"all", "6x7"} & set(requested):
        raise ValueError(f"'all' and '6x7' stand alone; got {requested}")
    unknown = [n for n in requested if n not in names]
    if unknown:
        raise ValueError(f"unknown test sets {unknown}; the sets are all, 6x7, {', '.join(names)}")
    twice = sorted({n for n in requested if requested.count(n) > 1})
    if twice:
        raise ValueError(f"test sets named more than once: {twice} (their positions would count twice)")
    return list(requested)


def select_positions(
    names: list[str],
    plies: tuple[int, int] | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> list[Position]:
    """The positions of the sets ``names`` with ``plies[0] <= ply <= plies[1]`` (all when None), and of those
    ``sample`` drawn without replacement with ``seed`` (all when None or more than there are), in set order.

    Raises:
        TypeError: a name, range, sample size or seed of the wrong type.
        ValueError: an unknown set, a bad range, sample size or seed.
    """
    return [position for _, position in select_labelled_positions(names, plies, sample, seed)]


def select_labelled_positions(
    names: list[str],
    plies: tuple[int, int] | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> list[tuple[str, Position]]:
    """`select_positions`, each position with the name of its set (for per-set reports), raising as it does."""
    names = check_name_list("names", names, "test set names")
    if plies is not None:
        if not isinstance(plies, (tuple, list)):
            raise TypeError(f"plies must be None or a pair (low, high) of stone counts, got {plies!r}")
        if len(plies) != 2:
            raise ValueError(
                f"plies must be a pair (low, high) of stone counts, got {len(plies)} values: {plies!r}"
            )
        low = check_int("plies[0]", plies[0], 0)
        high = check_int("plies[1]", plies[1], low)
    seed = check_int("seed", seed, 0)
    pool = [
        (name, position)
        for name in names
        for position in load_test_set(name)
        if plies is None or low <= position.ply <= high
    ]
    if sample is None or check_int("sample", sample, 0) >= len(pool):
        return pool
    picked = np.random.default_rng(seed).choice(len(pool), size=sample, replace=False)
    return [pool[int(i)] for i in sorted(picked)]


def test_set_path(name: str, directory: str | os.PathLike[str] | None = None) -> Path:
    """The file ``<name>.jsonl.gz`` of a set in ``directory`` (default: the shipped sets' folder).

    Raises:
        TypeError: ``name`` is not a str, or ``directory`` is neither None nor a str or os.PathLike.
        ValueError: ``name`` is not a plain file name (letters, digits and ``._-``, starting with a letter
            or a digit).
    """
    if not isinstance(name, str):
        raise TypeError(f"a test set name must be a str, got {name!r:.80} ({type(name).__name__})")
    if not _FILE_NAME.fullmatch(name):
        raise ValueError(f"test set name {name!r:.40} must be letters, digits, '._-', from a letter or digit")
    if directory is not None and not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory must be a folder path or None, got {directory!r:.60}")
    return Path(directory if directory is not None else DATA_DIR) / f"{name}.jsonl.gz"


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"a test set name must be a str, got {type(name).__name__}")
    if name not in TEST_SET_SPECS:
        raise ValueError(f"unknown test set {name!r}; the sets are {', '.join(TEST_SET_SPECS)}")
    return name


def read_positions(path: str | os.PathLike[str]) -> list[Position]:
    """Read a JSON-lines file of positions (``.gz`` is decompressed), checking every line.

    Raises:
        ValueError: a line is not JSON or not a valid position (the message gives the line number), or the
            file is over 64 MB decompressed.
        OSError: the file cannot be read.
    """
    return read_json_lines(path, _MAX_FILE_BYTES, "positions", Position.from_dict)


@cache
def _load_shipped(name: str) -> tuple[Position, ...]:
    return tuple(read_positions(test_set_path(name)))


def load_test_set(name: str) -> list[Position]:
    """The positions of a shipped set (see
    [`test_set_names`][connect4_agents.evaluation.test_sets.test_set_names]).

    Raises:
        TypeError: ``name`` is not a str.
        ValueError: no shipped set has that name.
    """
    return list(_load_shipped(_check_name(name)))


def manifest(directory: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The shipped manifest: per set its board, size, seed and the SHA-256 of its file."""
    path = Path(directory if directory is not None else DATA_DIR) / MANIFEST
    result: dict[str, Any] = parse_json(path.read_text(), "test-set manifest")
    return result
