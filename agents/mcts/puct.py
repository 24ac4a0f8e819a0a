"""MCTS with an evaluator: PUCT selection over priors, values from a model, many games searched in lockstep.

After OpenSpiel's Evaluator / SearchNode / Bot split and AlphaZero's search. An *evaluator* scores positions:
``evaluate(boards) -> (priors, values)``, priors over the columns (any non-negative weights; the search
masks and normalises them) and values in [-1, 1] for the player to move (a network's view).

Inside the tree every value is for the player who moved *into* the node, the convention of the UCT kernel
(`connect4_agents.mcts.kernels`) and of OpenSpiel's MCTS: a node's estimate, the value sums of the moves
into its children, and its proof bounds. No sign flips in selection, one flip per level in the backup. The
search:

- **selection** by PUCT: ``Q + c_puct * P * sqrt(N_parent) / (1 + N)``, ``Q`` the mean value of the child for
  the player who moves into it, i.e. the player choosing (unvisited moves get the parent's value for that
  player minus ``fpu``);
- **expansion and evaluation** of one leaf per game per simulation; the leaves of all the games searched
  together go to the evaluator in one call (one network batch);
- **backup** with the sign flipped at each level;
- **proofs** (MCTS-Solver with score bounds, as the UCT kernel): finished games are exact; each node keeps
  bounds ``lower <= value <= upper`` for the player who moved into it, recomputed from its children by
  `propagate_bounds` (tested against the kernel's routine on the same trees); a node whose bounds meet
  is proven, its value replaces estimates (means are clamped into the bounds), and a proven root stops the
  search;
- **self-play** extras: Dirichlet noise on the root's priors, and a temperature on the visit counts.

For random rollouts at full speed use [`MCTSAgent`][connect4_agents.mcts.agent.MCTSAgent] (the compiled UCT
kernel): this search is in Python and pays off when the evaluator is expensive (a network), where batching
matters more.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from connect4_agents.mcts.evaluators import Evaluator
from connect4_env.core import Board
from connect4_env.validation import seeded_rng

__all__ = [
    "Node",
    "PUCTSearch",
    "PUCTResult",
    "propagate_bounds",
    "LOSS",
    "DRAW",
    "WIN",
]

# Game values for one player; bounds and proofs use these (the kernel's 0 / 1 / 2 minus one).
LOSS, DRAW, WIN = -1, 0, 1


def _mean(estimate: float, backed_up: float, visits: int) -> float:
    """A node's mean value for the player who moved into it: its ``estimate`` and the ``visits`` values backed
    up below it (summing to ``backed_up``, for the player to move there, hence the minus), averaged.
    """
    return (estimate - backed_up) / (1 + visits)


def _bounded(q: float, child: Node | None) -> float:
    """A move's mean value ``q`` clamped into its child's proof bounds (a proven child counts exactly)."""
    if child is not None and (child.lower > LOSS or child.upper < WIN):
        return min(max(q, child.lower), child.upper)
    return q


class Node:
    """One position of the tree, a record (after OpenSpiel's ``SearchNode``). Build it with `expand` or `terminal`.

    Every value is for the player who moved *into* this node (the UCT kernel's convention):

    - ``estimate``: the evaluator's value of this position for that player (the negated network value);
    - ``lower``, ``upper``: bounds on the exact game value for that player (``LOSS`` -1, ``DRAW`` 0,
      ``WIN`` 1); ``proof`` is the value once they meet (None before).

    Per column (one move from here, i.e. one child): ``priors``, ``legal``, ``visits``, ``value_sum`` (the
    sum of the values backed up through the child, for the player who moved into the child: the player to
    move here) and ``children`` (None until the move is first tried).
    """

    __slots__ = ("board", "priors", "legal", "visits", "value_sum", "children", "estimate", "lower", "upper")

    def __init__(
        self,
        board: Board,
        *,
        priors: np.ndarray,
        legal: np.ndarray,
        children: list[Node | None],
        estimate: float = 0.0,
        lower: int = LOSS,
        upper: int = WIN,
    ) -> None:
        columns = board.rules.columns
        self.board = board
        self.priors = priors
        self.legal = legal
        self.visits = np.zeros(columns, np.int64)
        self.value_sum = np.zeros(columns)
        self.children = children
        self.estimate = estimate
        self.lower = lower
        self.upper = upper

    @classmethod
    def terminal(cls, board: Board) -> Node:
        """A finished game: exact (a win for the player who moved into it, or a draw)."""
        columns = board.rules.columns
        value = DRAW if board.winner is None else WIN  # only the last mover can have won
        return cls(
            board,
            priors=np.zeros(columns),
            legal=np.zeros(columns, bool),
            children=[],
            estimate=float(value),
            lower=value,
            upper=value,
        )

    @classmethod
    def expand(cls, board: Board, priors: np.ndarray, value: float) -> Node:
        """An unfinished position with the evaluator's ``priors`` (masked to the legal moves and normalised;
        uniform if they sum to 0 or overflow) and ``value`` (clipped into [-1, 1]) for the player to move.
        """
        columns = board.rules.columns
        legal = np.array(board.legal_mask(), bool)
        p = np.asarray(priors, dtype=float).clip(0.0)  # a NaN stays NaN: the total is then not finite
        p[~legal] = 0.0
        total = float(p.sum())
        p = p / total if total > 0 and math.isfinite(total) else legal / legal.sum()
        estimate = -min(max(float(value), -1.0), 1.0)  # the evaluator speaks for the player to move
        return cls(board, priors=p, legal=legal, children=[None] * columns, estimate=estimate)

    @property
    def proof(self) -> int | None:
        """The proven game value for the player who moved into this node (-1, 0, 1), or None."""
        return self.lower if self.lower == self.upper else None

    @property
    def total_visits(self) -> int:
        """The simulations through this node's moves, all columns together."""
        return int(self.visits.sum())

    def mean_value(self) -> float:
        """This node's value for the player who moved into it: its estimate and every value backed up below
        it (those are for the player to move here, hence the minus), averaged.
        """
        return _mean(self.estimate, float(self.value_sum.sum()), self.total_visits)

    def q(self, fpu: float) -> np.ndarray:
        """Mean value of each move for the player to move here (who moves into the child), clamped into the
        child's bounds (a proven child counts exactly); an unvisited move: this node's value for that player
        minus ``fpu``.
        """
        seen = self.visits > 0
        q = np.where(seen, self.value_sum / np.maximum(self.visits, 1), -self.mean_value() - fpu)
        for column, child in enumerate(self.children):
            q[column] = _bounded(float(q[column]), child)
        return q

    def update_bounds(self) -> bool:
        """Recompute this node's bounds from its children's; returns whether they changed.

        The player to move here picks the child best for them, so for the player who moved into this node
        it is worth minus the best child: ``upper = -max(child lower)``, ``lower = -max(child upper)``; an
        untried move is unknown (-1..1). The same rule as the kernel's ``propagate_bounds``.
        """
        if not self.legal.any():  # a finished game: exact since its creation
            return False
        best_lower = best_upper = LOSS
        for column in np.flatnonzero(self.legal):
            child = self.children[column]
            lower, upper = (LOSS, WIN) if child is None else (child.lower, child.upper)
            best_lower = max(best_lower, lower)
            best_upper = max(best_upper, upper)
        if (self.lower, self.upper) == (-best_upper, -best_lower):
            return False
        self.lower, self.upper = -best_upper, -best_lower
        return True


def propagate_bounds(path: Sequence[Node]) -> None:
    """Recompute the bounds of ``path[-1]`` from its children, then of each node above it in ``path`` (root
    first) while they change: the PUCT twin of the UCT kernel's ``propagate_bounds``.
    """
    for node in reversed(path):
        if not node.update_bounds():
            return


@dataclass
class PUCTResult:
    """One search, every value from the view of the player to move at the root (who is also the player
    moving into each child, so the per-column numbers are the children's values in the tree's convention).

    Attributes:
        visits: per column, the simulations through the move.
        values: per column, the mean value of the move in [-1, 1] for the player to move (NaN if unvisited).
        priors: per column, the root's priors (after noise; 0 for illegal moves).
        legal: per column, whether the move is legal.
        proven: per column, the proven value of the move for the player to move (1 win, 0 draw, -1 loss), or
            None.
        root_value: the position's value estimate for the player to move (the root's estimate and every
            backed-up value, averaged).
        root_proven: the position's proven value for the player to move (1, 0, -1), or None.
        simulations: the simulations in the tree (the root's visits).
        extra: free-form additions by callers.
    """

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
        root plays only its proven-best moves.
        """
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
        evaluator: see [`Evaluator`][connect4_agents.mcts.evaluators.Evaluator].
        c_puct: exploration weight (1.5).
        fpu: first-play urgency: an unvisited move counts as the parent's value for the player choosing
            minus ``fpu`` (0.25).
        dirichlet_alpha: the ``alpha`` of the root noise ``(1 - noise) * P + noise * Dir(alpha)`` (self-play only).
        noise: the weight of that root noise; 0, the default, turns it off.
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
        self.rng = seeded_rng(seed)
        self.evaluations = 0

    def _evaluate(self, boards: list[Board]) -> tuple[np.ndarray, np.ndarray]:
        priors, values = self.evaluator.evaluate(boards)
        self.evaluations += len(boards)
        return np.asarray(priors, dtype=float), np.asarray(values, dtype=float).reshape(-1)

    def roots(self, boards: Sequence[Board], noise: bool | Sequence[bool] = True) -> list[Node]:
        """Expanded root nodes for ``boards`` (unfinished games), noise added when it is on (``noise``: for
        all of them, or one flag per board; False leaves a root without it, as playout-cap randomisation's
        fast searches are).
        """
        for board in boards:
            if board.is_terminal:
                raise ValueError("cannot search a finished game: there is no legal move")
        # one flag for all (a bool or numpy's), or one a board
        flags: list[bool] = [noise] * len(boards) if np.ndim(noise) == 0 else list(noise)  # type: ignore[list-item, arg-type]
        if len(flags) != len(boards):
            raise ValueError(f"noise has {len(flags)} flags for {len(boards)} boards")
        priors, values = self._evaluate([b.copy() for b in boards])
        return [
            self._add_noise(Node.expand(board.copy(), p, float(v)), flag)
            for board, p, v, flag in zip(boards, priors, values, flags)
        ]

    def reroot(self, node: Node, noise: bool = True) -> Node:
        """A node kept from an earlier search (the child of the move just played) as a new root, its visits
        kept (subtree reuse): root noise is added to its priors when it is on (and ``noise``). Returns
        ``node``.
        """
        if node.board.is_terminal:
            raise ValueError("cannot search a finished game: there is no legal move")
        return self._add_noise(node, noise)

    def _add_noise(self, root: Node, wanted: bool = True) -> Node:
        if wanted and self.noise > 0:
            legal = np.flatnonzero(root.legal)
            dirichlet = self.rng.dirichlet([self.dirichlet_alpha] * len(legal))
            root.priors[legal] = (1 - self.noise) * root.priors[legal] + self.noise * dirichlet
        return root

    def _select(self, node: Node) -> int:
        """The legal column with the highest ``Q + U`` (the first of equals):
        [`Node.q`][connect4_agents.mcts.puct.Node.q] plus the exploration term, computed column by column on
        Python floats (a node has a handful of columns, where numpy's per-call cost is most of the work; the
        same rules, ``_mean`` and ``_bounded``).
        """
        visits = node.visits.tolist()
        sums = node.value_sum.tolist()
        priors = node.priors.tolist()
        total = sum(visits)
        unseen = -_mean(node.estimate, sum(sums), total) - self.fpu  # Node.q's value of an unvisited move
        root = math.sqrt(max(1, total))
        c_puct = self.c_puct
        children = node.children
        best, chosen = -math.inf, -1
        for column, legal in enumerate(node.legal.tolist()):
            if not legal:
                continue
            count = visits[column]
            q = _bounded(sums[column] / count if count else unseen, children[column])
            score = q + c_puct * priors[column] * root / (1 + count)
            if score > best or chosen < 0:
                best, chosen = score, column
        return chosen

    def _descend(self, root: Node) -> tuple[list[tuple[Node, int]], Board | None, float]:
        """Walk down to a leaf: ``(path, board to evaluate or None, value if already known)``, the value for
        the player who moved into the leaf.
        """
        path: list[tuple[Node, int]] = []
        node = root
        while True:
            if node.proof is not None and node is not root:
                return path, None, float(node.proof)
            column = self._select(node)
            path.append((node, column))
            child = node.children[column]
            if child is None:
                board = node.board.copy()
                board.play(column)
                if board.is_terminal:
                    child = Node.terminal(board)
                    node.children[column] = child
                    return path, None, float(child.estimate)
                return path, board, 0.0
            node = child

    @staticmethod
    def _backup(path: list[tuple[Node, int]], value: float) -> None:
        """``value`` is for the player who moved into the leaf below ``path[-1]`` (the player to move at
        ``path[-1]``); each level up flips it. A leaf with bounds (finished or proven) updates the proofs.
        """
        for node, column in reversed(path):
            node.visits[column] += 1
            node.value_sum[column] += value
            value = -value
        parent, column = path[-1]
        leaf = parent.children[column]
        if leaf is not None and (leaf.lower > LOSS or leaf.upper < WIN):
            # only the leaf's bounds can have changed in this simulation
            propagate_bounds([node for node, _ in path])

    def run(self, roots: Sequence[Node], simulations: int) -> None:
        """``simulations`` more simulations in each tree (proven roots are left alone); the leaves of all the
        trees at each step are evaluated in one call.
        """
        for _ in range(simulations):
            active = [root for root in roots if root.proof is None]
            if not active:
                break
            self._simulate(active)

    def run_to(self, roots: Sequence[Node], simulations: int | Sequence[int]) -> None:
        """Simulations in each tree until its root has ``simulations`` visits (one number for all, or one per
        root; a reused subtree already has some; proven roots are left alone), the leaves of all the trees at
        each step evaluated in one call.
        """
        # one number for all (an int or numpy's), or one a root
        targets: list[int] = [simulations] * len(roots) if np.ndim(simulations) == 0 else list(simulations)  # type: ignore[list-item, arg-type]
        if len(targets) != len(roots):
            raise ValueError(f"simulations has {len(targets)} numbers for {len(roots)} roots")
        pairs = list(zip(roots, targets))
        while True:
            active = [root for root, target in pairs if root.proof is None and root.total_visits < target]
            if not active:
                break
            self._simulate(active)

    def _simulate(self, roots: Sequence[Node]) -> None:
        """One simulation in each of ``roots`` (unproven)."""
        pending: list[tuple[list[tuple[Node, int]], Board]] = []
        for root in roots:
            if root.proof is not None:  # proven by an earlier tree's simulation in this step: none shared
                continue
            path, board, value = self._descend(root)
            if board is None:
                self._backup(path, value)
            else:
                pending.append((path, board))
        if pending:
            priors, values = self._evaluate([board for _, board in pending])
            for (path, board), p, v in zip(pending, priors, values):
                leaf = Node.expand(board, p, float(v))
                parent, column = path[-1]
                parent.children[column] = leaf
                self._backup(path, leaf.estimate)

    def search(self, board: Board, simulations: int) -> PUCTResult:
        """Search one position."""
        (root,) = self.roots([board])
        self.run([root], simulations)
        return self.result(root)

    @staticmethod
    def result(root: Node) -> PUCTResult:
        """The search so far as the player to move at ``root`` sees it (see `PUCTResult` below)."""
        values = np.where(root.visits > 0, root.value_sum / np.maximum(root.visits, 1), np.nan)
        # the children's values are for the player who moved into them: the player to move at the root
        proven = [None if child is None else child.proof for child in root.children]
        proof = root.proof  # for the player who moved into the root: flip both for the player to move
        return PUCTResult(
            root.visits.copy(),
            values,
            root.priors.copy(),
            root.legal.copy(),
            proven,
            -root.mean_value(),
            None if proof is None else -proof,
            root.total_visits,
        )
