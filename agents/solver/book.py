"""The 6x7 opening book: the exact score of every 12-stone position, for the solver's first moves.

The book is data from the ``book`` extra (``pip install -e ".[book]"``: the MIT-licensed
``bitbully-databases`` package, by Markus Thill). We read its file ourselves into two numpy arrays, once per
process, so the compiled solver looks positions up with a binary search; nothing is unpickled or executed.

File format (``book_12ply_distances.dat``): 5-byte records sorted by key, no header. Each record is a
big-endian signed 32-bit position key followed by a signed byte of score.

- Key: the columns left to right, each read bottom up, ``10`` for a first-player stone, ``11`` for a
  second-player stone, ``0`` closing the column (a full column too), then one more ``0``: 32 bits for 12
  stones. A position and its mirror image are stored once, under either key.
- Score, for the first player (who is to move after 12 stones): ``100 - d`` when they win with the stone
  played ``d`` plies later, ``-(100 - d)`` when they lose so, ``0`` for a draw. Positions where the player to
  move can win at once are not stored; the solver never asks for them.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from connect4_agents.solver.kernels import UNKNOWN_SCORE, book_score
from connect4_env.compiled import kernel_geometry
from connect4_env.core import Board
from connect4_env.extras import MissingExtraError
from connect4_env.rules import Rules

__all__ = [
    "OpeningBook",
    "load_book",
    "BOOK_PLY",
    "BOOK_RULES",
    "BOOKLESS_FROM_PLY",
    "book_available",
    "require_book",
]

BOOK_PLY = 12
BOOK_RULES = Rules(6, 7, 4)
_RECORD = np.dtype([("key", ">i4"), ("score", "i1")])
_EXPECTED_RECORDS = 4_200_899  # bitbully-databases 0.0.2's 12-ply book with distances
# The fewest stones from which a 6x7 search without the book fits the solver's default node budget, per build
# (True: compiled, 50 million nodes; False: plain Python, 1 million with its smaller table). Node counts on the
# shipped 6x7 test sets (machine-independent): compiled, choosing a move took up to 42 million nodes with 5-7
# stones and over 60 million for most positions of 2-4; from 8 stones on, at most 9 million (29 million for
# every column's exact score). Plain Python: over a million for half the positions of 12-14 stones, from 15 on
# mostly under 100,000.
BOOKLESS_FROM_PLY = {True: 8, False: 15}


class OpeningBook:
    """Exact scores of the 6x7 positions with 12 stones (a position or its mirror image).

    Attributes:
        keys: sorted int32 position keys (see the module docstring). scores: int8, the file's scores.
    """

    rules = BOOK_RULES
    ply = BOOK_PLY

    def __init__(self, keys: np.ndarray, scores: np.ndarray, source: str = "") -> None:
        self.keys = keys
        self.scores = scores
        self.source = source

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> OpeningBook:
        """Read and check a book file.

        Raises:
            FileNotFoundError: no file at ``path``.
            ValueError: the file is not a sorted book of 5-byte records with scores in -100..100.
        """
        path = Path(path)
        size = path.stat().st_size
        if size == 0 or size % _RECORD.itemsize:
            raise ValueError(
                f"{path} is not an opening book: {size} bytes is not a whole number of 5-byte records"
            )
        records = np.fromfile(path, dtype=_RECORD)
        keys = records["key"].astype(np.int32)
        scores = records["score"].astype(np.int8)
        if keys.size > 1 and not bool((keys[1:] > keys[:-1]).all()):
            raise ValueError(f"{path} is not an opening book: its keys are not sorted")
        if int(np.abs(scores.astype(np.int16)).max()) > 100:
            raise ValueError(f"{path} is not an opening book: scores outside -100..100")
        return cls(keys, scores, str(path))

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def __repr__(self) -> str:
        return f"OpeningBook({len(self):,} positions of {self.ply} stones on 6x7)"

    def score(self, board: Board) -> int | None:
        """The exact score (as
        [`connect4_agents.SolverAgent.score`][connect4_agents.solver.agent.SolverAgent.score]) of a 12-stone
        6x7 board, or None if absent.

        Raises:
            ValueError: the board is not a 6x7 (win_length 4) position with 12 stones.
        """
        if board.rules != self.rules or board.ply != self.ply:
            raise ValueError(
                f"the book holds {self.ply}-stone positions of 6x7 Connect Four; got {board.ply} stones on "
                f"{board.rules.rows}x{board.rules.columns} (win_length {board.rules.win_length})"
            )
        # the lookup is the one the compiled solver runs
        geometry = kernel_geometry(board.rules)
        found = book_score(board.stones[0], board.mask, board.ply, geometry, self.keys, self.scores)
        return None if found == UNKNOWN_SCORE else int(found)


def _installed_book_path() -> Path | None:
    try:
        from bitbully_databases import BitBullyDatabases
    except ImportError:
        return None
    return Path(BitBullyDatabases.get_database_path("12-ply-dist"))


def book_available() -> bool:
    """True when the ``book`` extra (bitbully-databases) is installed."""
    return _installed_book_path() is not None


@lru_cache(maxsize=1)
def load_book() -> OpeningBook | None:
    """The installed opening book, read once per process (about 0.1 s, 25 MB); None without the extra.

    Raises:
        ValueError: the installed file is damaged (see
            [`OpeningBook.from_file`][connect4_agents.solver.book.OpeningBook.from_file]).
    """
    path = _installed_book_path()
    if path is None:
        return None
    book = OpeningBook.from_file(path)
    if len(book) != _EXPECTED_RECORDS:
        raise ValueError(f"{path} holds {len(book):,} positions; the 12-ply book has {_EXPECTED_RECORDS:,}")
    return book


def require_book(board: Board, compiled: bool) -> None:
    """Refuse a 6x7 opening that a solver without the book could not answer within its default node budget.

    Args:
        board: the position asked about.
        compiled: whether the search would run the compiled kernels (``BOOKLESS_FROM_PLY`` is per build).

    Raises:
        MissingExtraError: ``board`` is 6x7 with four in a row and fewer than ``BOOKLESS_FROM_PLY[compiled]``
            stones (8 compiled, 15 in plain Python), and the ``book`` extra is not installed; the message names
            the extra, its pip command, and ``book=False`` to search anyway.
    """
    first = BOOKLESS_FROM_PLY[bool(compiled)]
    if board.rules != BOOK_RULES or board.ply >= first or load_book() is not None:
        return
    stones = f"{board.ply} stone{'' if board.ply == 1 else 's'}"
    raise MissingExtraError(
        f"the solver on a 6x7 position with {stones} (fewer than {first}: the opening) needs the opening book, "
        f"the 'book' extra (bitbully_databases is not installed): pip install -e \".[book]\". Without "
        "it the search would run past its node budget; SolverAgent(book=False) searches anyway"
    )
