"""What the tests of connect4_v0's two PettingZoo envs (AEC and Parallel) share: the board sizes they run
PettingZoo's own checkers on, and random legal games played on the rules core."""

from __future__ import annotations

import numpy as np

from connect4_env import Board, Rules

# The default board, smaller and larger ones, a single row and a single column.
SIZES = [
    {},
    {"rows": 4, "columns": 5, "win_length": 3},
    {"rows": 1, "columns": 3, "win_length": 2},
    {"rows": 9, "columns": 10, "win_length": 5},
    {"rows": 3, "columns": 1, "win_length": 3},
]


def size_id(size: dict) -> str:
    """A size's test id: its numbers joined by ``x`` (``4x5x3``), or ``default``."""
    return "x".join(map(str, size.values())) or "default"


def random_moves(seed: int, rows: int = 6, columns: int = 7, win_length: int = 4) -> list[int]:
    """The columns of a random legal game played to its end on the rules core."""
    rng = np.random.default_rng(seed)
    board = Board(Rules(rows, columns, win_length))
    moves = []
    while not board.is_terminal:
        legal = board.legal_moves()
        moves.append(legal[rng.integers(len(legal))])
        board.play(moves[-1])
    return moves
