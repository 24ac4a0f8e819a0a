"""The rules on a batch of boards at once: bitboards in numpy arrays, beside the single-board core.

:class:`BatchedBoards` is the numpy representation of :mod:`connect4_env.core`'s rules (the batched env steps
it). Its geometry and win shifts come from :class:`~connect4_env.core.Rules`; the tests check it against the
core, move by move. With the ``fast`` extra (numba) the move-and-win-check loop is compiled; without it the
same rules run as numpy array operations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from connect4_env.core import Board, Rules

__all__ = ["BatchedBoards"]


class BatchedBoards:
    """``n`` positions as arrays: ``stones`` (2, n) per absolute player, ``heights`` (n, columns), ``ply`` (n,).

    Bitboards are uint64 when ``(rows + 1) * columns <= 64``, else Python ints in object arrays (the same
    numpy code, elementwise in Python: correct for any size, just slower).

    Args:
        rules: the board size and win length.
        n: the number of boards.
        compiled: None = the numba kernel when installed and the board fits in 64 bits; False = numpy only;
            True = the numba kernel, required.

    Raises:
        ValueError: ``compiled=True`` without numba or for a board over 64 bits.
    """

    def __init__(self, rules: Rules, n: int, compiled: bool | None = None) -> None:
        self.rules = rules
        self.n = n
        self.fits = rules.columns * rules.height <= 64
        self.dtype: Any = np.uint64 if self.fits else object
        self.stones = np.zeros((2, n), dtype=self.dtype)  # object dtype: Python int zeros
        self.heights = np.zeros((n, rules.columns), dtype=np.int8 if self.fits else np.int64)
        self.ply = np.zeros(n, dtype=np.int64)
        self.bottom = np.array([1 << (c * rules.height) for c in range(rules.columns)], dtype=self.dtype)
        self.win_shifts = [[self._scalar(s) for s in shifts] for shifts in rules.win_shifts]
        self._kernel = _compiled_play() if (self.fits and compiled is not False) else None
        if compiled and self._kernel is None:
            reason = (
                "numba is not installed"
                if self.fits
                else f"a {rules.rows}x{rules.columns} board needs over 64 bits"
            )
            raise ValueError(f"compiled=True: the compiled move loop cannot be used ({reason})")
        if self._kernel is not None:
            steps = max(len(shifts) for shifts in rules.win_shifts)
            self._shift_table = np.zeros((4, steps), dtype=np.uint64)  # zero shifts pad: run & run is a no-op
            for k, shifts in enumerate(rules.win_shifts):
                self._shift_table[k, : len(shifts)] = shifts

    def _scalar(self, value: int) -> Any:
        return np.uint64(value) if self.fits else value

    def _stone_bits(self, columns: np.ndarray, heights: np.ndarray) -> np.ndarray:
        """The bit of a stone at height ``heights`` (0 = bottom) in each of ``columns``."""
        if self.fits:
            return self.bottom[columns] << heights.astype(np.uint64)
        return np.array([int(b) << int(h) for b, h in zip(self.bottom[columns], heights)], dtype=object)

    def clear(self, index: np.ndarray) -> None:
        """Empty the listed boards."""
        self.stones[:, index] = 0
        self.heights[index] = 0
        self.ply[index] = 0

    def snapshot(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Copies of the listed boards' arrays, for :meth:`restore`."""
        return self.stones[:, index].copy(), self.heights[index].copy(), self.ply[index].copy()

    def restore(self, index: np.ndarray, saved: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Put back the listed boards as :meth:`snapshot` saw them."""
        self.stones[:, index], self.heights[index], self.ply[index] = saved

    def has_won(self, stones: np.ndarray) -> np.ndarray:
        """Bool per entry: does the bitboard hold win_length in a line?"""
        won = np.zeros(stones.shape, dtype=bool)
        for shifts in self.win_shifts:
            run = stones
            for shift in shifts:
                run = run & (run >> shift)
            won |= run != 0
        return won

    def play(self, index: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Drop a stone for the player to move in each listed game (moves must be legal; games distinct).

        Returns ``(won, full)`` bool arrays for those games.
        """
        if self._kernel is not None:
            won = np.empty(index.size, dtype=bool)
            full = np.empty(index.size, dtype=bool)
            self._kernel(
                self.stones,
                self.heights,
                self.ply,
                index,
                columns,
                self.rules.height,
                self.rules.cells,
                self._shift_table,
                won,
                full,
            )
            return won, full
        player = self.ply[index] & 1
        self.stones[player, index] |= self._stone_bits(columns, self.heights[index, columns])
        self.heights[index, columns] += 1
        self.ply[index] += 1
        won = self.has_won(self.stones[player, index])
        return won, self.ply[index] == self.rules.cells

    def undo(self, index: np.ndarray, columns: np.ndarray) -> None:
        """Take back the last move of each listed game, played in ``columns`` (the inverse of :meth:`play`)."""
        self.ply[index] -= 1
        player = self.ply[index] & 1
        self.heights[index, columns] -= 1
        self.stones[player, index] ^= self._stone_bits(columns, self.heights[index, columns])

    def legal(self, index: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Bool (k, columns): the columns that are not full."""
        return self.heights[index] < self.rules.rows

    def board(self, i: int) -> Board:
        """Game ``i`` as a :class:`Board` (for rendering and tests)."""
        return Board.from_stones(self.rules, int(self.stones[0, i]), int(self.stones[1, i]))


_PLAY_KERNEL: Any = None


def _compiled_play() -> Any:
    """The numba-compiled :meth:`BatchedBoards.play` loop, or None without numba (compiled once, cached)."""
    global _PLAY_KERNEL
    if _PLAY_KERNEL is None:
        try:
            import numba
        except ImportError:
            _PLAY_KERNEL = False
        else:
            _PLAY_KERNEL = numba.njit(cache=True, nogil=True)(_play_loop)
    return _PLAY_KERNEL or None


def _play_loop(stones, heights, ply, index, columns, height, cells, shift_table, won, full):  # type: ignore[no-untyped-def]
    one = np.uint64(1)
    for k in range(index.shape[0]):
        game = index[k]
        column = columns[k]
        player = ply[game] & 1
        stack = heights[game, column]
        bits = stones[player, game] | (one << np.uint64(column * height + stack))
        stones[player, game] = bits
        heights[game, column] = stack + 1
        ply[game] += 1
        full[k] = ply[game] == cells
        result = False
        for direction in range(4):
            run = bits
            for step in range(shift_table.shape[1]):
                run = run & (run >> shift_table[direction, step])
            if run != 0:
                result = True
                break
        won[k] = result
