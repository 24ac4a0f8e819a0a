"""MCTS with an evaluator: PUCT selection over priors, values from a model, many games searched in lockstep.

After OpenSpiel's Evaluator / SearchNode / Bot split and AlphaZero's search. An *evaluator* scores positions:
``evaluate(boards) -> (priors, values)``, priors over the columns (any non-negative weights; the search
masks and normalises them) and values in [-1, 1] for the player to move. The search:

- **selection** by PUCT: ``Q + c_puct * P * sqrt(N_parent) / (1 + N)``, ``Q`` the mean value of the move for
  the player choosing it (unvisited moves get the parent's value minus ``fpu``);
- **expansion and evaluation** of one leaf per game per simulation; the leaves of all the games searched
  together go to the evaluator in one call (one network batch);
- **backup** with the sign flipped at each level;
- **proofs** (MCTS-Solver): finished games are exact; a position with a move to a lost position for the
  opponent is a proven win, one whose moves all lead to proven positions takes the best of them; proven values
  replace estimates, and a proven root stops the search;
- **self-play** extras: Dirichlet noise on the root's priors, and a temperature on the visit counts.

For random rollouts at full speed use :class:`connect4_agents.MCTSAgent` (the compiled UCT kernel): this search is in
Python and pays off when the evaluator is expensive (a network), where batching matters more.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from connect4_env.core import Board

__all__ = [
    "Evaluator",
    "UniformEvaluator",
    "RolloutEvaluator",
    "Node",
    "PUCTSearch",
    "PUCTResult",
]


class Evaluator(Protocol):
    """Scores positions for the search."""

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        """``(priors, values)``: ``(len(boards), columns)`` non-negative weights and ``(len(boards),)`` values
        in [-1, 1] for the player to move in each board (none of them finished)."""
        ...


class UniformEvaluator:
    """Equal priors and a value of 0 everywhere: PUCT then searches like plain MCTS without rollouts (a stub
    for tests, and the baseline a network must beat)."""

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        columns = boards[0].rules.columns if boards else 0
        return np.ones((len(boards), columns)), np.zeros(len(boards))


class RolloutEvaluator:
    """Equal priors and the mean result of ``rollouts`` uniformly random games (plain Python)."""

    def __init__(self, rollouts: int = 1, seed: int | None = None) -> None:
        self.rollouts = int(rollouts)
        self.rng = np.random.default_rng(seed)

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        values = np.zeros(len(boards))
        for index, board in enumerate(boards):
            total = 0.0
            for _ in range(self.rollouts):
                game = board.copy()
                while not game.is_terminal:
                    legal = game.legal_moves()
                    game.play(legal[int(self.rng.integers(len(legal)))])
                if game.winner is not None:
                    total += 1.0 if game.winner == board.to_move else -1.0
            values[index] = total / self.rollouts
        columns = boards[0].rules.columns if boards else 0
        return np.ones((len(boards), columns)), values


@dataclass
class Node:
    """One position of the tree. Per column: ``visits``, ``value_sum`` (for the player to move here), the
    prior and the child. ``proven``: the exact value for the player to move (1, 0, -1) or None."""

    board: Board
    priors: np.ndarray
    legal: np.ndarray
    visits: np.ndarray
    value_sum: np.ndarray
    children: list[Node | None]
    value: float = 0.0  # the evaluator's value of this position (for the player to move)
    proven: int | None = None

    @classmethod
    def terminal(cls, board: Board) -> Node:
        columns = board.rules.columns
        node = cls(
            board,
            np.zeros(columns),
            np.zeros(columns, bool),
            np.zeros(columns, np.int64),
            np.zeros(columns),
            [],
        )
        node.proven = 0 if board.winner is None else -1  # the player to move lost (the last mover won)
        node.value = float(node.proven)
        return node

    @classmethod
    def expand(cls, board: Board, priors: np.ndarray, value: float) -> Node:
        columns = board.rules.columns
        legal = np.zeros(columns, bool)
        legal[board.legal_moves()] = True
        p = np.where(legal, np.maximum(np.asarray(priors, dtype=float), 0.0), 0.0)
        total = p.sum()
        p = p / total if total > 0 and math.isfinite(total) else legal / legal.sum()
        return cls(
            board,
            p,
            legal,
            np.zeros(columns, np.int64),
            np.zeros(columns),
            [None] * columns,
            float(np.clip(value, -1.0, 1.0)),
        )

    @property
    def total_visits(self) -> int:
        return int(self.visits.sum())

    def q(self, fpu: float) -> np.ndarray:
        """Mean value of each move for the player to move; proven children count exactly."""
        seen = self.visits > 0
        q = np.where(seen, self.value_sum / np.maximum(self.visits, 1), self._parent_value() - fpu)
        for column, child in enumerate(self.children):
            if child is not None and child.proven is not None:
                q[column] = -child.proven
        return q

    def _parent_value(self) -> float:
        n = self.total_visits
        return (self.value + float(self.value_sum.sum())) / (1 + n)

    def update_proof(self) -> None:
        """Prove this node from its children where they allow it (MCTS-Solver): a move to a position lost
        for the opponent proves a win; when every move is proven, the best of them is the node's value."""
        values = []
        unproven = False
        for column in np.flatnonzero(self.legal):
            child = self.children[column]
            if child is None or child.proven is None:
                unproven = True
                continue
            if child.proven == -1:
                self.proven = 1
                return
            values.append(-child.proven)
        if not unproven and values:
            self.proven = max(values)


@dataclass
class PUCTResult:
    """One search: per column ``visits``, ``values`` (mean value for the player to move, NaN if unvisited),
    ``priors`` (after noise), ``proven`` (the child's value for the player to move here: 1, 0, -1, or None), and
    the root's ``value`` estimate and proof."""

    visits: np.ndarray
    values: np.ndarray
    priors: np.ndarray
    legal: np.ndarray
    proven: list[int | None]
    root_value: float
    root_proven: int | None
    simulations: int
    extra: dict[str, Any] = field(default_factory=dict)

    def policy(self, temperature: float = 1.0) -> np.ndarray:
        """The visit distribution sharpened by ``temperature`` (0: all on the most visited moves); a proven
        root plays only its proven-best moves."""
        legal = self.legal
        if self.root_proven is not None:
            best = np.array([p == self.root_proven for p in self.proven], dtype=float)
            if best.sum() > 0:
                return best / best.sum()
        counts = np.where(legal, self.visits.astype(float), 0.0)
        if counts.sum() == 0:
            counts = np.where(legal, self.priors, 0.0)
        if temperature == 0:
            top = (counts == counts[legal].max()) & legal
            return top / top.sum()
        weights = np.where(legal, counts ** (1.0 / temperature), 0.0)
        return weights / weights.sum()


class PUCTSearch:
    """PUCT search with an evaluator, for one game or many in lockstep.

    Args:
        evaluator: see :class:`Evaluator`.
        c_puct: exploration weight (1.5).
        fpu: first-play urgency: an unvisited move counts as the parent's value minus ``fpu`` (0.25).
        dirichlet_alpha, noise: root noise ``(1 - noise) * P + noise * Dir(alpha)`` (self-play only; noise 0
            turns it off, the default).
        seed: seeds the noise.
    """

    def __init__(
        self,
        evaluator: Evaluator,
        c_puct: float = 1.5,
        fpu: float = 0.25,
        dirichlet_alpha: float = 1.0,
        noise: float = 0.0,
        seed: int | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.c_puct = float(c_puct)
        self.fpu = float(fpu)
        self.dirichlet_alpha = float(dirichlet_alpha)
        self.noise = float(noise)
        self.rng = np.random.default_rng(seed)
        self.evaluations = 0

    def _evaluate(self, boards: list[Board]) -> tuple[np.ndarray, np.ndarray]:
        priors, values = self.evaluator.evaluate(boards)
        self.evaluations += len(boards)
        return np.asarray(priors, dtype=float), np.asarray(values, dtype=float).reshape(-1)

    def roots(self, boards: Sequence[Board]) -> list[Node]:
        """Expanded root nodes for ``boards`` (unfinished games), noise added when it is on."""
        for board in boards:
            if board.is_terminal:
                raise ValueError("cannot search a finished game: there is no legal move")
        priors, values = self._evaluate([b.copy() for b in boards])
        roots = []
        for board, p, v in zip(boards, priors, values):
            root = Node.expand(board.copy(), p, float(v))
            if self.noise > 0:
                legal = np.flatnonzero(root.legal)
                dirichlet = self.rng.dirichlet([self.dirichlet_alpha] * len(legal))
                root.priors[legal] = (1 - self.noise) * root.priors[legal] + self.noise * dirichlet
            roots.append(root)
        return roots

    def _select(self, node: Node) -> int:
        q = node.q(self.fpu)
        u = self.c_puct * node.priors * math.sqrt(max(1, node.total_visits)) / (1 + node.visits)
        score = np.where(node.legal, q + u, -np.inf)
        return int(np.argmax(score))

    def _descend(self, root: Node) -> tuple[list[tuple[Node, int]], Board | None, float]:
        """Walk down to a leaf: ``(path, board to evaluate or None, value if already known)``."""
        path: list[tuple[Node, int]] = []
        node = root
        while True:
            if node.proven is not None and node is not root:
                return path, None, float(node.proven)
            column = self._select(node)
            path.append((node, column))
            child = node.children[column]
            if child is None:
                board = node.board.copy()
                board.play(column)
                if board.is_terminal:
                    child = Node.terminal(board)
                    node.children[column] = child
                    return path, None, float(child.proven or 0)
                return path, board, 0.0
            node = child

    @staticmethod
    def _backup(path: list[tuple[Node, int]], value: float) -> None:
        """``value`` is for the player to move at the end of ``path``; each level flips it."""
        for node, column in reversed(path):
            value = -value
            node.visits[column] += 1
            node.value_sum[column] += value
            child = node.children[column]
            if child is not None and child.proven is not None and node.proven is None:
                node.update_proof()

    def run(self, roots: Sequence[Node], simulations: int) -> None:
        """``simulations`` more simulations in each tree (proven roots are left alone); the leaves of all the
        trees at each step are evaluated in one call."""
        for _ in range(simulations):
            pending: list[tuple[list[tuple[Node, int]], Board]] = []
            for root in roots:
                if root.proven is not None:
                    continue
                path, board, value = self._descend(root)
                if board is None:
                    self._backup(path, value)
                else:
                    pending.append((path, board))
            if not pending and all(root.proven is not None for root in roots):
                break
            if pending:
                priors, values = self._evaluate([board for _, board in pending])
                for (path, board), p, v in zip(pending, priors, values):
                    leaf = Node.expand(board, p, float(v))
                    parent, column = path[-1]
                    parent.children[column] = leaf
                    self._backup(path, leaf.value)

    def search(self, board: Board, simulations: int) -> PUCTResult:
        """Search one position."""
        (root,) = self.roots([board])
        self.run([root], simulations)
        return self.result(root)

    @staticmethod
    def result(root: Node) -> PUCTResult:
        values = np.where(root.visits > 0, root.value_sum / np.maximum(root.visits, 1), np.nan)
        proven: list[int | None] = []
        for column in range(len(root.visits)):
            child = root.children[column] if root.children else None
            proven.append(None if child is None or child.proven is None else -child.proven)
        return PUCTResult(
            root.visits.copy(),
            values,
            root.priors.copy(),
            root.legal.copy(),
            proven,
            root._parent_value(),
            root.proven,
            root.total_visits,
        )
