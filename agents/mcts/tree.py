"""The search tree as arrays, the form the UCT kernel reads and writes: one entry per node, grown by doubling.

A copy (pickle, deepcopy) carries the nodes in use, so a copied agent continues exactly as the original.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from connect4_agents.mcts import kernels as uct_kernels
from connect4_agents.mcts.kernels import LOSS, WIN
from connect4_env.compiled import KernelBuild

__all__ = ["Tree"]


class Tree:
    """Node arrays for the kernels (see `connect4_agents.mcts.kernels`); grown by doubling up to the node cap.

    Args:
        build: the kernel build whose bitboard dtype ``cur`` and ``msk`` take.
        capacity: the number of nodes the arrays hold.

    Attributes:
        build: the kernel build.
        cur: per node, the stones of the player to move.
        msk: per node, all stones.
        n_nodes: the nodes in use, the first ones.
    """

    FIELDS = ("parent", "move", "first_child", "n_children", "value", "visits", "lower", "upper", "depth")
    DTYPES = (np.int32, np.int32, np.int32, np.int32, np.float64, np.int64, np.int8, np.int8, np.int32)
    parent: np.ndarray
    move: np.ndarray
    first_child: np.ndarray
    n_children: np.ndarray
    value: np.ndarray
    visits: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    depth: np.ndarray

    def __init__(self, build: KernelBuild, capacity: int) -> None:
        self.build = build
        self.cur = build.bit_array(capacity)
        self.msk = build.bit_array(capacity)
        for name, dtype in zip(self.FIELDS, self.DTYPES):
            setattr(self, name, np.zeros(capacity, dtype=dtype))
        self.n_nodes = 0

    @property
    def capacity(self) -> int:
        """The number of nodes the arrays hold."""
        return int(self.cur.shape[0])

    def __getstate__(self) -> dict[str, Any]:
        # a copy (pickle, deepcopy) carries the nodes in use and the capacity, so that a copied agent reuses
        # the same tree and continues exactly as the original would
        used = {
            name: array[: self.n_nodes].copy()
            for name, array in zip(("cur", "msk", *self.FIELDS), self.arrays())
        }
        return {"build": self.build, "capacity": self.capacity, "n_nodes": self.n_nodes, "used": used}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["build"], state["capacity"])  # type: ignore[misc]
        for name, values in state["used"].items():
            getattr(self, name)[: len(values)] = values
        self.n_nodes = state["n_nodes"]

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The node arrays in the kernels' order: ``cur``, ``msk``, then `FIELDS`' arrays."""
        return (self.cur, self.msk) + tuple(getattr(self, name) for name in self.FIELDS)

    def grow(self, capacity: int) -> None:
        """Replace the arrays by ones of ``capacity`` nodes holding the same first nodes.

        A context built before (`context`) still holds the old arrays: build it again.

        Args:
            capacity: the new number of nodes, at least the current one.
        """
        old = self.arrays()
        bigger = Tree(self.build, capacity)
        for target, source in zip(bigger.arrays(), old):
            target[: len(source)] = source
        self.cur, self.msk = bigger.cur, bigger.msk
        for name in self.FIELDS:
            setattr(self, name, getattr(bigger, name))

    def set_root(self, current: int, mask: int, prior: float) -> None:
        """Make the tree the root alone: the position ``(current, mask)``, unexpanded and unproven.

        Args:
            current: the stones of the player to move.
            mask: all stones.
            prior: the root's virtual wins (see [`MCTSAgent`][connect4_agents.mcts.agent.MCTSAgent]).
        """
        self.cur[0] = current
        self.msk[0] = mask
        self.parent[0] = -1
        self.move[0] = -1
        self.first_child[0] = -1
        self.n_children[0] = 0
        self.value[0] = prior
        self.visits[0] = 0
        self.lower[0] = LOSS
        self.upper[0] = WIN
        self.depth[0] = 0
        self.n_nodes = 1

    def children(self, node: int) -> range:
        """The indices of ``node``'s children (contiguous; empty when it is not expanded)."""
        first = int(self.first_child[node])
        return range(first, first + int(self.n_children[node])) if first >= 0 else range(0)

    def proven(self, node: int) -> int | None:
        """The node's proven value for the player who moved into it (LOSS/DRAW/WIN), or None."""
        low = int(self.lower[node])
        return low if low == int(self.upper[node]) else None

    def context(self, settings: tuple[Any, ...]) -> uct_kernels.Context:
        """The kernels' context of the arrays as they are now (see `connect4_agents.mcts.kernels`).

        Args:
            settings: the search's fixed inputs, the context after the tree's arrays:
                ``(meta, geo, board_mask, c, prior, solver, symmetry)``.

        Returns:
            The `Context` of `arrays` and ``settings``.
        """
        return uct_kernels.Context(*self.arrays(), *settings)  # type: ignore[arg-type]  # fields in order
