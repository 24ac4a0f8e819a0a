"""The n-tuple network: tuples, their lookup tables, and the value of every move's afterstate.

The value of a board is ``tanh`` of the sum of one weight per tuple and per mirror image, read from the table
set of the side that has just moved, from the first player's view (see `connect4_agents.ntuple.kernels`).
Mirror images share their tuple's table, so a position and its reflection get the same value.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from connect4_agents.ntuple.files import DEFAULT_MAX_BYTES, MAX_LENGTH, load_network, save_network
from connect4_agents.ntuple.kernels import STATES
from connect4_agents.ntuple.tuples import mirror_tuples, random_walk_tuples
from connect4_env.compiled import KernelBuild, kernel_geometry, kernels_for
from connect4_env.core import Board
from connect4_env.rules import Rules
from connect4_env.validation import check_int

__all__ = ["NTupleNetwork", "KERNELS", "check_network_size"]

KERNELS = "connect4_agents.ntuple.kernels"


def check_network_size(rules: Rules, n_tuples: object, length: object) -> tuple[int, int]:
    """``(n_tuples, length)`` checked: a tuple of 1 to `MAX_LENGTH` cells that fits the board, and tables that
    take at most `DEFAULT_MAX_BYTES` (what a saved network may take to load again).

    Raises:
        TypeError: either is not an integer.
        ValueError: out of range (named, with the tables' size).
    """
    n_tuples = check_int("tuples", n_tuples, 1)
    length = check_int("length", length, 1, MAX_LENGTH)
    if length > rules.cells:
        raise ValueError(f"a tuple of {length} cells does not fit on a board of {rules.cells} cells")
    size = 2 * n_tuples * STATES**length * 4
    if size > DEFAULT_MAX_BYTES:
        raise ValueError(
            f"{n_tuples} tuples of {length} cells need {size:,} bytes of tables (at most {DEFAULT_MAX_BYTES:,})"
        )
    return n_tuples, length


class NTupleNetwork:
    """Tuples of cells and one lookup table per tuple and side, for one board.

    Args:
        rules: the board.
        tuples: (n_tuples, length) int64 cells (bits of the board's layout).
        weights: (2, n_tuples, 4**length) float32 tables (zeros if None).
        compiled: None: numba-compiled kernels when installed and the board fits in 63 bits; False: plain
            Python; True: compiled, required.

    Use [`create`][connect4_agents.ntuple.network.NTupleNetwork.create] for new tuples and
    [`load`][connect4_agents.ntuple.network.NTupleNetwork.load] for a file.
    """

    def __init__(
        self,
        rules: Rules,
        tuples: np.ndarray,
        weights: np.ndarray | None = None,
        compiled: bool | None = None,
    ) -> None:
        self.rules = rules
        self.tuples = np.ascontiguousarray(tuples, dtype=np.int64)
        n_tuples, length = self.tuples.shape
        shape = (2, n_tuples, STATES**length)
        self.weights = (
            np.zeros(shape, np.float32) if weights is None else np.ascontiguousarray(weights, np.float32)
        )
        # every tuple, then every mirror image (row k reads table k % n_tuples)
        self.rows = np.concatenate([self.tuples, mirror_tuples(rules, self.tuples)])
        self.kernels: KernelBuild = kernels_for(KERNELS, rules, compiled)
        self.geometry = kernel_geometry(rules)
        self.cell_rows = self._cell_rows()

    def _cell_rows(self) -> np.ndarray:
        """Per cell, the count then the ``(row, 4**place)`` of every row through it (see
        `connect4_agents.ntuple.kernels.move_values`).
        """
        cells = self.rules.columns * self.rules.height
        length = self.tuples.shape[1]
        through: list[list[tuple[int, int]]] = [[] for _ in range(cells)]
        for row, tuple_cells in enumerate(self.rows.tolist()):
            for place, cell in enumerate(tuple_cells):
                through[cell].append((row, STATES ** (length - 1 - place)))
        widest = max(len(entries) for entries in through)
        table = np.zeros((cells, 1 + widest, 2), np.int64)
        for cell, entries in enumerate(through):
            table[cell, 0, 0] = len(entries)
            if entries:
                table[cell, 1 : 1 + len(entries)] = entries
        return table

    def workspace(self) -> tuple[np.ndarray, np.ndarray]:
        """The kernels' work arrays for `move_values`: (4, rows) int64 and (rows,) float64."""
        rows = self.rows.shape[0]
        return np.zeros((4, rows), np.int64), np.zeros(rows, np.float64)

    @classmethod
    def create(
        cls, rules: Rules, n_tuples: int = 70, length: int = 8, seed: int = 0, compiled: bool | None = None
    ) -> NTupleNetwork:
        """A network of ``n_tuples`` random-walk tuples of ``length`` cells
        ([`random_walk_tuples`][connect4_agents.ntuple.tuples.random_walk_tuples]), all weights zero.

        Raises:
            TypeError: ``n_tuples``, ``length`` or ``seed`` is not an integer.
            ValueError: a size out of range (`check_network_size`), or that many distinct tuples do not exist.
        """
        n_tuples, length = check_network_size(rules, n_tuples, length)
        return cls(rules, random_walk_tuples(rules, n_tuples, length, seed), compiled=compiled)

    @property
    def n_tuples(self) -> int:
        """The number of tuples (one table each per side)."""
        return int(self.tuples.shape[0])

    @property
    def length(self) -> int:
        """Cells per tuple."""
        return int(self.tuples.shape[1])

    def scratch(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Empty per-board arrays for the kernels: cell states, column heights, the two bitboards."""
        states = np.zeros(self.rules.columns * self.rules.height, np.int8)
        heights = np.zeros(self.rules.columns, np.int64)
        return states, heights, self.kernels.bit_array(2)

    def load_board(self, board: Board) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``board`` as the kernels' arrays (`scratch`'s three, filled)."""
        states, heights, stones = self.scratch()
        self.kernels.reset_states(states, heights, self.geometry)
        height = self.rules.height
        for column, stack in enumerate(board.heights):
            for row in range(stack):
                bit = column * height + row
                states[bit] = 1 if (board.stones[0] >> bit) & 1 else 2
            heights[column] = stack
            if stack < self.rules.rows:
                states[column * height + stack] = 3
        stones[0], stones[1] = board.stones
        return states, heights, stones

    def move_values(self, board: Board) -> np.ndarray:
        """Every column's afterstate value for the player to move, from *that player's* view (larger is
        better): 1 for a move that wins, 0 for one that fills the board, else the network's estimate in
        (-1, 1); NaN for a full column.
        """
        states, heights, stones = self.load_board(board)
        values = np.empty(self.rules.columns)
        scratch, base = self.workspace()
        self.kernels.move_values(
            self.weights,
            self.rows,
            self.n_tuples,
            self.geometry,
            states,
            heights,
            stones,
            board.ply,
            values,
            self.cell_rows,
            scratch,
            base,
        )
        return values if board.to_move == 0 else -values

    def save(self, path: str | os.PathLike[str], meta: dict[str, Any]) -> Path:
        """Write the network and ``meta`` (settings, counts) to ``path`` (see `connect4_agents.ntuple.files`)."""
        return save_network(path, self.rules, self.tuples, self.weights, meta)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES, compiled: bool | None = None
    ) -> tuple[NTupleNetwork, dict[str, Any]]:
        """A network read from ``path`` and its metadata (see
        [`load_network`][connect4_agents.ntuple.files.load_network] for what is checked and raised).
        """
        content = load_network(path, max_bytes)
        return cls(content.rules, content.tuples, content.weights, compiled), content.meta
