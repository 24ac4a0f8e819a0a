"""An exact Connect Four solver: negamax with alpha-beta, a transposition table and move ordering.

After Pascal Pons' solver, generalised to any board size and ``win_length``: bitboards, null-window searches
narrowing on the score, centre-first ordering refined by the number of threats a move creates, and pruning of
moves that hand the opponent an immediate win. Compiled by numba when the board fits in 63 bits.

Scores are from the view of the player to move: a win whose winning stone is the board's ``w``-th scores
``cells + 1 - w`` (so quicker wins score higher), a loss the negative of the opponent's win, a draw 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents._compiled import KernelBuild, kernels_for
from agents.base import legal_columns, unpack
from connect4_env.core import Board, Rules
from connect4_env.encoding import board_from_observation

__all__ = ["SolverAgent", "SolverBudgetExceeded", "describe_score"]


class SolverBudgetExceeded(RuntimeError):
    """The position needs more nodes than ``max_nodes`` allows."""


def _prime_at_least(n: int) -> int:
    def is_prime(k: int) -> bool:
        if k < 2:
            return False
        i = 2
        while i * i <= k:
            if k % i == 0:
                return False
            i += 1
        return True

    while not is_prime(n):
        n += 1
    return n


def describe_score(score: int | None, rules: Rules, n_stones: int) -> str:
    """A score in words: ``"win in 5 plies"``, ``"draw"``, ``"loss in 4 plies"``, ``"full"``."""
    if score is None:
        return "full"
    if score == 0:
        return "draw"
    plies = rules.cells + 1 - abs(score) - n_stones
    return f"{'win' if score > 0 else 'loss'} in {plies} plies"


class SolverAgent:
    """Plays perfectly: the quickest win, else a draw, else the slowest loss.

    Args:
        win_length: the line length (observations do not carry it). Default 4.
        seed: breaks ties between equally good columns (None: the most central one).
        max_nodes: node budget per ``evaluate`` (None: unlimited). Past it, :class:`SolverBudgetExceeded`.
        table_size: transposition-table entries (rounded up to a prime). Default about 4 million (70 MB);
            the table is kept between calls, so later positions of a game are faster.
        compiled: as for :class:`agents.MCTSAgent`.

    On 6x7, positions from ply 12 on solved in under a second in our measurements; earlier ones take longer
    (seconds at ply 8-10, more before; the empty 6x7 board was not attempted). Use ``max_nodes`` to bound
    the time: the call then raises instead of answering.
    """

    name = "solver"

    def __init__(
        self,
        win_length: int = 4,
        seed: int | None = None,
        max_nodes: int | None = None,
        table_size: int = 1 << 22,
        compiled: bool | None = None,
    ) -> None:
        if max_nodes is not None and (
            isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1
        ):
            raise ValueError(f"max_nodes must be a positive int or None, got {max_nodes!r}")
        if isinstance(table_size, bool) or not isinstance(table_size, int) or table_size < 1:
            raise ValueError(f"table_size must be a positive int, got {table_size!r}")
        self.win_length = win_length
        self.max_nodes = max_nodes
        self.table_size = table_size
        self.compiled = compiled
        self.rng = np.random.default_rng(seed) if seed is not None else None
        self.last_nodes = 0
        self._tables: dict[tuple[Rules, bool], tuple[KernelBuild, tuple[np.ndarray, ...]]] = {}

    def reset(self, seed: int | None = None) -> None:
        """Reseed the tie-breaking (the transposition table is kept: its entries stay true)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return "SolverAgent()"

    def _kernel(self, rules: Rules) -> tuple[KernelBuild, tuple[np.ndarray, ...]]:
        build = kernels_for(rules, self.compiled)
        key = (rules, build.compiled)
        if key not in self._tables:
            size = _prime_at_least(self.table_size if build.compiled else min(self.table_size, 1 << 16))
            keys = build.bit_array(size)
            values = np.zeros(size, dtype=np.int64)
            used = np.zeros(size, dtype=np.int8)
            centre = rules.columns // 2
            order = np.array(
                sorted(
                    range(rules.columns), key=lambda c: (abs(c - centre), -c if rules.columns % 2 == 0 else c)
                ),
                dtype=np.int64,
            )
            buffers = (
                np.zeros((rules.cells + 1, rules.columns), dtype=np.int64),
                np.zeros((rules.cells + 1, rules.columns), dtype=np.int64),
            )
            self._tables[key] = (build, (order, keys, values, used, *buffers))
        return self._tables[key]

    # -- solving -------------------------------------------------------------------------------------------
    def score(self, board: Board) -> int:
        """The exact score of ``board`` for the player to move (see the module docstring).

        Raises:
            ValueError: the game is over. SolverBudgetExceeded: more than ``max_nodes`` nodes were needed.
        """
        if board.is_terminal:
            raise ValueError("the game is over: there is nothing to solve")
        return self._solve(board.rules, board.stones[board.to_move], board.mask, board.ply)

    def _solve(
        self, rules: Rules, current: int, mask: int, n_stones: int, stats: np.ndarray | None = None
    ) -> int:
        build, (order, keys, values, used, moves, scores) = self._kernel(rules)
        if stats is None:
            stats = np.array([0, self.max_nodes or 0, 0], dtype=np.int64)
        result = build.solve(
            current,
            mask,
            n_stones,
            build.geometry(rules),
            rules.board_mask,
            rules.bottom_mask,
            order,
            keys,
            values,
            used,
            stats,
            moves,
            scores,
        )
        self.last_nodes = int(stats[0])
        if stats[2]:
            raise SolverBudgetExceeded(
                f"the position needs more than max_nodes={self.max_nodes} nodes "
                f"({n_stones} stones on a {rules.rows}x{rules.columns} board)"
            )
        return int(result)

    def evaluate_board(self, board: Board) -> list[int | None]:
        """One score per column for the player to move (None for a full column)."""
        if board.is_terminal:
            raise ValueError("the game is over: there is nothing to evaluate")
        rules = board.rules
        current = board.stones[board.to_move]
        mask = board.mask
        stats = np.array([0, self.max_nodes or 0, 0], dtype=np.int64)
        result: list[int | None] = []
        for column in range(rules.columns):
            if not board.is_legal(column):
                result.append(None)
                continue
            bit = rules.bottom_bits[column] << board.heights[column]
            if rules.has_won(current | bit):
                result.append(rules.cells - board.ply)  # the winning stone is the (ply + 1)-th
            elif board.ply + 1 == rules.cells:
                result.append(0)
            else:
                result.append(-self._solve(rules, current ^ mask, mask | bit, board.ply + 1, stats))
        return result

    def evaluate(self, observation: Any, action_mask: Any = None) -> list[int | None]:
        """One score per column from the mover's view: positive win, 0 draw, negative loss, None full.

        Larger is better: ``cells + 1 - w`` for a win completed by the board's ``w``-th stone.
        """
        return self.evaluate_board(board_from_observation(observation, self.win_length))

    def act(self, observation: Any, action_mask: Any = None) -> int:
        planes, mask = unpack(observation, action_mask)
        legal = [int(c) for c in legal_columns(mask)]
        scores = self.evaluate_board(board_from_observation(planes, self.win_length))
        best = max(scores[c] for c in legal)  # type: ignore[type-var]
        ties = [c for c in legal if scores[c] == best]
        if self.rng is not None:
            return int(ties[int(self.rng.integers(len(ties)))])
        centre = (len(scores) - 1) / 2
        return min(ties, key=lambda c: (abs(c - centre), c))
