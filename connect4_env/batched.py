"""The rules on a batch of boards at once: bitboards in numpy arrays, beside the single-board core.

[`BatchedBoards`][connect4_env.batched.BatchedBoards] is the array representation of
[`connect4_env.core`][connect4_env.core]'s rules (the batched env steps it). Its moves run the batch loop of
`connect4_env.kernels`, the same compiled rules the search agents call: numba-compiled with the ``fast`` extra
when the board fits in 63 bits, else the plain-Python build of the same code. The tests check it against the
core, move by move, in both builds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from connect4_env import kernels
from connect4_env.compiled import fits_compiled, kernel_geometry, kernels_for
from connect4_env.core import Board
from connect4_env.rules import Rules

__all__ = ["BatchedBoards"]


class BatchedBoards:
    """``n`` positions as arrays: ``stones`` (2, n) per absolute player, ``heights`` (n, columns), ``ply`` (n,).

    Bitboards are int64 when the board fits in 63 bits (``columns * (rows + 1) <= 63``), else Python ints in
    object arrays (correct for any size, just slower).

    Args:
        rules: the board size and win length.
        n: the number of boards.
        compiled: None = the numba build of the kernels when installed and the board fits in 63 bits, else
            the plain-Python build; False = the plain-Python build; True = the numba build, required.

    Raises:
        ValueError: ``compiled=True`` without numba or for a board over 63 bits.
    """

    def __init__(self, rules: Rules, n: int, compiled: bool | None = None) -> None:
        self._kernels = kernels_for(kernels, rules, compiled)  # raises before anything is allocated
        self.rules = rules
        self.n = n
        self.fits = fits_compiled(rules)
        self.dtype: Any = np.int64 if self.fits else object
        self.stones = np.zeros((2, n), dtype=self.dtype)  # object dtype: Python int zeros
        self.heights = np.zeros((n, rules.columns), dtype=np.int8 if self.fits else np.int64)
        self.ply = np.zeros(n, dtype=np.int64)
        self._geometry = kernel_geometry(rules)

    @property
    def compiled(self) -> bool:
        """Whether the moves run numba-compiled."""
        return bool(self._kernels.compiled)

    def clear(self, index: np.ndarray) -> None:
        """Empty the listed boards."""
        self.stones[:, index] = 0
        self.heights[index] = 0
        self.ply[index] = 0

    def snapshot(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Copies of the listed boards' arrays, for
        [`restore`][connect4_env.batched.BatchedBoards.restore].
        """
        return self.stones[:, index].copy(), self.heights[index].copy(), self.ply[index].copy()

    def restore(self, index: np.ndarray, saved: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Put back the listed boards as [`snapshot`][connect4_env.batched.BatchedBoards.snapshot] saw
        them.
        """
        self.stones[:, index], self.heights[index], self.ply[index] = saved

    def play(self, index: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Drop a stone for the player to move in each listed game (moves must be legal; games distinct).

        Returns:
            ``(won, full)`` bool arrays for those games: the move won / filled the board.
        """
        won = np.empty(index.size, dtype=bool)
        full = np.empty(index.size, dtype=bool)
        self._kernels.play_moves(
            self.stones, self.heights, self.ply, index, columns, self._geometry, won, full
        )
        return won, full

    def undo(self, index: np.ndarray, columns: np.ndarray) -> None:
        """Take back the last move of each listed game, played in ``columns`` (the inverse of
        [`play`][connect4_env.batched.BatchedBoards.play]).
        """
        self._kernels.undo_moves(self.stones, self.heights, self.ply, index, columns, self._geometry)

    def legal(self, index: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Bool (k, columns): the columns that are not full."""
        return self.heights[index] < self.rules.rows

    def board(self, i: int) -> Board:
        """Game ``i`` as a [`Board`][connect4_env.core.Board] (for rendering and tests)."""
        return Board.from_stones(self.rules, int(self.stones[0, i]), int(self.stones[1, i]))
