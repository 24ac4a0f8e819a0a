"""The search tree as arrays, the form the UCT kernel reads and writes: one entry per node, grown by doubling.

A copy (pickle, deepcopy) carries the nodes in use, so a copied agent continues exactly as the original.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from connect4_agents.mcts.kernels import LOSS, WIN
from connect4_env.compiled import KernelBuild

__all__ = ["Tree"]


class Tree:
    """Node arrays for the kernel; grown by doubling up to the node cap."""

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
        return (self.cur, self.msk) + tuple(getattr(self, name) for name in self.FIELDS)

    def grow(self, capacity: int) -> None:
        old = self.arrays()
        bigger = Tree(self.build, capacity)
        for target, source in zip(bigger.arrays(), old):
            target[: len(source)] = source
        self.cur, self.msk = bigger.cur, bigger.msk
        for name in self.FIELDS:
            setattr(self, name, getattr(bigger, name))

    def set_root(self, current: int, mask: int, prior: float) -> None:
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
        first = int(self.first_child[node])
        return range(first, first + int(self.n_children[node])) if first >= 0 else range(0)

    def proven(self, node: int) -> int | None:
        """The node's proven value for the player who moved into it (LOSS/DRAW/WIN), or None."""
        low = int(self.lower[node])
        return low if low == int(self.upper[node]) else None
