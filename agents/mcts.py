"""Monte Carlo Tree Search (UCT) with MCTS-Solver, tree reuse, and a look inside every search.

The four phases run in a compiled kernel (:mod:`agents._kernels`, numba) on an array-based tree:

1. **Selection** from the root: unvisited children first, in random order; then the child with the highest
   UCB1 score ``wins/visits + c * sqrt(ln(parent visits) / visits)``. Children proven lost are skipped.
2. **Expansion** of the leaf: one child per legal move (only one of each mirror-equal pair when the position
   is left-right symmetric, if ``symmetry``). A move that wins at once makes a terminal child: terminal
   positions are detected inside the tree, not only in rollouts.
3. **Simulation**: a uniformly random game from one new child.
4. **Backpropagation**: every node on the path gains a visit and the result *for the player who moved into
   it* (win 1, draw 1/2, loss 0); the result flips at each level on the way up.

With the solver on, a child that wins proves its parent lost (for the player who moved into the parent), and
a node whose every child is lost is proven won; proofs carry their distance to the end of the game.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents._compiled import KernelBuild, kernels_for
from agents._kernels import DRAWN, LOST, UNKNOWN, WON
from agents.base import legal_columns, unpack
from connect4_env.core import Board, Rules
from connect4_env.encoding import board_from_observation

__all__ = ["MCTSAgent", "SearchResult", "ucb1"]

_PROOF_NAMES = {UNKNOWN: None, WON: "win", LOST: "loss", DRAWN: "draw"}


def ucb1(wins: float, visits: float, parent_visits: float, c: float = math.sqrt(2)) -> float:
    """UCB1 score of a child: mean result plus ``c * sqrt(ln(parent_visits) / visits)``.

    >>> round(ucb1(1, 1, 4), 3), round(ucb1(0.5, 1, 4), 3), round(ucb1(0, 1, 4), 3)
    (2.665, 2.165, 1.665)
    """
    if visits <= 0:
        return math.inf
    return wins / visits + c * math.sqrt(math.log(parent_visits) / visits)


@dataclass
class SearchResult:
    """What one search saw, per column, from the view of the player to move.

    ``visits[c]`` playouts through the move (mirror twins share their representative's numbers),
    ``mean_value[c]`` its average result (win 1, draw 1/2; NaN if never tried), ``proven[c]`` "win",
    "loss", "draw" (a full board) or None, ``proof_depth[c]`` the further plies to the end of a proven line.
    """

    column: int
    reason: str
    visits: list[int]
    mean_value: list[float]
    proven: list[str | None]
    proof_depth: list[int]
    ucb: list[float]
    playouts: int
    root_visits: int
    elapsed: float
    nodes: int
    reused_tree: bool
    root_proven: str | None
    mirrored: dict[int, int] = field(default_factory=dict)

    @property
    def playouts_per_second(self) -> float:
        return self.playouts / self.elapsed if self.elapsed > 0 else math.inf

    def table(self) -> str:
        """The search as a text table, one row per column."""
        lines = [f"{'column':>6} {'visits':>8} {'mean':>6} {'UCB1':>6}  proven"]
        for column, visits in enumerate(self.visits):
            mean = self.mean_value[column]
            if visits == 0 and math.isnan(mean) and self.proven[column] is None:
                continue
            proof = self.proven[column] or ""
            if proof in ("win", "loss"):
                proof += f" in {self.proof_depth[column] + 1} plies"
            if column in self.mirrored:
                proof += f" (mirror of {self.mirrored[column]})"
            marker = " <" if column == self.column else ""
            ucb = self.ucb[column]
            lines.append(
                f"{column:>6} {visits:>8} {mean:>6.3f} {ucb:>6.3f}  {proof}{marker}"
                if not math.isnan(mean)
                else f"{column:>6} {visits:>8} {'-':>6} {'-':>6}  {proof}{marker}"
            )
        lines.append(
            f"chosen {self.column} ({self.reason}); {self.playouts:,} playouts in {self.elapsed:.3f} s "
            f"({self.playouts_per_second:,.0f}/s), {self.nodes:,} nodes, tree reused: {'yes' if self.reused_tree else 'no'}"
            + (f", root proven: {self.root_proven}" if self.root_proven else "")
        )
        return "\n".join(lines)


class _Tree:
    """Node arrays for the kernel; grown by doubling."""

    FIELDS = (
        "parent",
        "move",
        "first_child",
        "n_children",
        "visits",
        "value",
        "real_visits",
        "status",
        "depth",
    )

    def __init__(self, build: KernelBuild, capacity: int) -> None:
        self.build = build
        self.cur = build.bit_array(capacity)
        self.msk = build.bit_array(capacity)
        self.parent = np.full(capacity, -1, dtype=np.int64)
        self.move = np.full(capacity, -1, dtype=np.int64)
        self.first_child = np.full(capacity, -1, dtype=np.int64)
        self.n_children = np.zeros(capacity, dtype=np.int64)
        self.visits = np.zeros(capacity, dtype=np.float64)
        self.value = np.zeros(capacity, dtype=np.float64)
        self.real_visits = np.zeros(capacity, dtype=np.int64)
        self.status = np.zeros(capacity, dtype=np.int8)
        self.depth = np.zeros(capacity, dtype=np.int64)
        self.n_nodes = 0

    @property
    def capacity(self) -> int:
        return int(self.cur.shape[0])

    def arrays(self) -> tuple[np.ndarray, ...]:
        return (self.cur, self.msk) + tuple(getattr(self, name) for name in self.FIELDS)

    def grow(self) -> None:
        old = self.arrays()
        new_capacity = 2 * self.capacity
        bigger = _Tree(self.build, new_capacity)
        for target, source in zip(bigger.arrays(), old):
            target[: len(source)] = source
        self.cur, self.msk = bigger.cur, bigger.msk
        for name in self.FIELDS:
            setattr(self, name, getattr(bigger, name))

    def set_root(self, current: int, mask: int) -> None:
        self.cur[0] = current
        self.msk[0] = mask
        self.parent[0] = -1
        self.move[0] = -1
        self.first_child[0] = -1
        self.n_children[0] = 0
        self.visits[0] = 0.0
        self.value[0] = 0.0
        self.real_visits[0] = 0
        self.status[0] = UNKNOWN
        self.depth[0] = 0
        self.n_nodes = 1

    def children(self, node: int) -> range:
        first = int(self.first_child[node])
        return range(first, first + int(self.n_children[node])) if first >= 0 else range(0)


class MCTSAgent:
    """UCT Monte Carlo Tree Search as a policy.

    Args:
        playouts: playouts per move (None: limited by ``time_limit`` only). Default 1000.
        time_limit: seconds per move (None: limited by ``playouts`` only). With both, whichever comes first.
            The search is anytime: when time runs out it plays the best move found so far.
        c: UCB1 exploration constant (default sqrt(2); the original Connect 4 project used 2).
        seed: seed of the search's random generator: same seed, same moves (with a playout budget).
        win_length: the line length of the game (observations do not carry it). Default 4.
        solver: MCTS-Solver: propagate proven wins and losses, play a proven win, and at a proven-lost root
            pick the move that loses slowest. Default True.
        final: ``"visits"`` (most-visited move, the default) or ``"value"`` (highest mean value).
        prior: give each new node ``prior`` wins out of ``2 * prior`` virtual visits (0 = off). With a
            prior, children are ordered by UCB1 from the start (there are no unvisited children).
        symmetry: in left-right symmetric positions expand only one of each pair of mirror moves.
        reuse_tree: keep the subtree of the position reached since the last move, when the tree has it.
        compiled: None = numba kernels when available and the board fits in 63 bits (else plain Python, far
            slower); False forces plain Python; True requires the compiled kernels.
    """

    name = "mcts"

    def __init__(
        self,
        playouts: int | None = 1000,
        time_limit: float | None = None,
        c: float = math.sqrt(2),
        seed: int | None = None,
        win_length: int = 4,
        solver: bool = True,
        final: str = "visits",
        prior: float = 0.0,
        symmetry: bool = True,
        reuse_tree: bool = True,
        compiled: bool | None = None,
    ) -> None:
        if playouts is not None and (
            isinstance(playouts, bool) or not isinstance(playouts, int) or playouts < 1
        ):
            raise ValueError(f"playouts must be a positive int or None, got {playouts!r}")
        if time_limit is not None and (
            isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or time_limit <= 0
        ):
            raise ValueError(f"time_limit must be a positive number of seconds or None, got {time_limit!r}")
        if playouts is None and time_limit is None:
            raise ValueError("give a budget: playouts, time_limit, or both")
        if not isinstance(c, (int, float)) or isinstance(c, bool) or not c >= 0:
            raise ValueError(f"c must be a number >= 0, got {c!r}")
        if final not in ("visits", "value"):
            raise ValueError(f"final must be 'visits' or 'value', got {final!r}")
        if not isinstance(prior, (int, float)) or isinstance(prior, bool) or not prior >= 0:
            raise ValueError(f"prior must be a number >= 0, got {prior!r}")
        self.playouts = playouts
        self.time_limit = time_limit
        self.c = float(c)
        self.win_length = win_length
        self.solver = bool(solver)
        self.final = final
        self.prior = float(prior)
        self.symmetry = bool(symmetry)
        self.reuse_tree = bool(reuse_tree)
        self.compiled = compiled
        self.last_search: SearchResult | None = None
        self._tree: _Tree | None = None
        self._rules: Rules | None = None
        self._meta = np.zeros(2, dtype=np.int64)
        self._seed(seed)

    def _seed(self, seed: int | None) -> None:
        self._meta[1] = int(np.random.default_rng(seed).integers(1, 2**32))

    def reset(self, seed: int | None = None) -> None:
        """Forget the tree (a new game); a seed, if given, reseeds the search."""
        self._tree = None
        self.last_search = None
        if seed is not None:
            self._seed(seed)

    def __repr__(self) -> str:
        budget = f"playouts={self.playouts}" + (f", time_limit={self.time_limit}" if self.time_limit else "")
        return f"MCTSAgent({budget}, c={self.c:.3g})"

    # -- policy ------------------------------------------------------------------------------------------
    def act(self, observation: Any, action_mask: Any = None) -> int:
        """The column to play for the player to move in ``observation`` (see :class:`agents.Policy`)."""
        planes, mask = unpack(observation, action_mask)
        legal = legal_columns(mask)
        board = board_from_observation(planes, self.win_length)
        if board.legal_moves() != [int(c) for c in legal]:
            raise ValueError(
                f"action_mask {np.asarray(mask).tolist()} does not match the position's legal columns "
                f"{board.legal_moves()}"
            )
        return self.search(board).column

    def explain(self) -> str:
        """Print and return the last search as a table."""
        if self.last_search is None:
            raise RuntimeError("explain() needs a search first: call act()")
        text = self.last_search.table()
        print(text)
        return text

    # -- search ------------------------------------------------------------------------------------------
    def search(self, board: Board) -> SearchResult:
        """Search from ``board`` within the budget; returns (and keeps in ``last_search``) the result."""
        if board.is_terminal:
            raise ValueError("cannot search a finished game: there is no legal move")
        rules = board.rules
        current = board.stones[board.to_move]
        mask = board.mask
        build = kernels_for(rules, self.compiled)
        tree, reused = self._root_tree(rules, build, current, mask)
        geo = build.geometry(rules)
        self._meta[0] = tree.n_nodes
        start = time.perf_counter()
        done = 0
        chunk = 64
        while True:
            want = chunk if self.playouts is None else min(chunk, self.playouts - done)
            chunk_start = time.perf_counter()
            ran = build.mcts_playouts(
                want,
                0,
                tree.cur,
                tree.msk,
                tree.parent,
                tree.move,
                tree.first_child,
                tree.n_children,
                tree.visits,
                tree.value,
                tree.real_visits,
                tree.status,
                tree.depth,
                self._meta,
                geo,
                rules.board_mask,
                self.c,
                self.prior,
                self.solver,
                self.symmetry,
            )
            tree.n_nodes = int(self._meta[0])
            done += ran
            if self.solver and tree.status[0] != UNKNOWN:
                break  # the root is proven: more playouts cannot change the answer
            if ran < want:
                tree.grow()
                continue
            if self.playouts is not None and done >= self.playouts:
                break
            elapsed = time.perf_counter() - start
            if self.time_limit is not None:
                if elapsed >= self.time_limit:
                    break
                # aim for chunks of about 5 ms so the deadline is kept
                rate = ran / max(time.perf_counter() - chunk_start, 1e-6)
                chunk = int(min(max(16, rate * 0.005), max(16, rate * (self.time_limit - elapsed))))
            else:
                chunk = min(chunk * 2, 1 << 16)
        elapsed = time.perf_counter() - start
        self._tree = tree
        self._rules = rules
        result = self._summarise(tree, rules, done, elapsed, reused)
        self.last_search = result
        return result

    def _root_tree(self, rules: Rules, build: KernelBuild, current: int, mask: int) -> tuple[_Tree, bool]:
        old = self._tree
        if self.reuse_tree and old is not None and self._rules == rules and old.build is build:
            found = self._find(old, current, mask)
            if found is not None:
                if found == 0:
                    return old, True
                new = _Tree(build, old.capacity)
                queue = np.zeros(old.capacity, dtype=np.int64)
                new.n_nodes = int(build.compact_subtree(found, *old.arrays(), *new.arrays(), queue))
                return new, True
        budget = self.playouts if self.playouts is not None else 20_000
        tree = _Tree(build, max(1024, min(budget * rules.columns + 1, 1 << 22)))
        tree.set_root(current, mask)
        return tree, False

    @staticmethod
    def _find(tree: _Tree, current: int, mask: int) -> int | None:
        """The node for position (current, mask) among the root, its children and grandchildren."""
        frontier = [0]
        for _ in range(3):
            next_frontier: list[int] = []
            for node in frontier:
                if tree.cur[node] == current and tree.msk[node] == mask:
                    return node
                next_frontier.extend(tree.children(node))
            frontier = next_frontier
        return None

    def _summarise(
        self, tree: _Tree, rules: Rules, playouts: int, elapsed: float, reused: bool
    ) -> SearchResult:
        columns = rules.columns
        visits = [0] * columns
        mean = [math.nan] * columns
        proven: list[str | None] = [None] * columns
        depth = [0] * columns
        ucb = [math.nan] * columns
        children = list(tree.children(0))
        root_visits = max(float(tree.visits[0]), 1.0)
        for child in children:
            column = int(tree.move[child])
            real = int(tree.real_visits[child])
            visits[column] = real
            if real > 0:
                mean[column] = (float(tree.value[child]) - self.prior) / real
                ucb[column] = ucb1(float(tree.value[child]), float(tree.visits[child]), root_visits, self.c)
            proven[column] = _PROOF_NAMES[int(tree.status[child])]
            depth[column] = int(tree.depth[child])
        column, reason = self._choose(tree, children)
        # mirror twins of a symmetric root share their representative's numbers
        present = {int(tree.move[child]) for child in children}
        mirrored = {}
        for c in range(columns):
            twin = columns - 1 - c
            if c not in present and twin in present and self._column_open(tree, rules, c):
                visits[c], mean[c], proven[c], depth[c], ucb[c] = (
                    visits[twin],
                    mean[twin],
                    proven[twin],
                    depth[twin],
                    ucb[twin],
                )
                mirrored[c] = twin
        root_status = int(tree.status[0])
        # the root's status is for the player who moved into it; report it for the player to move
        root_proven = {WON: "loss", LOST: "win"}.get(root_status) if self.solver else None
        return SearchResult(
            column=column,
            reason=reason,
            visits=visits,
            mean_value=mean,
            proven=proven,
            proof_depth=depth,
            ucb=ucb,
            playouts=playouts,
            root_visits=int(tree.real_visits[0]),
            elapsed=elapsed,
            nodes=tree.n_nodes,
            reused_tree=reused,
            root_proven=root_proven,
            mirrored=mirrored,
        )

    @staticmethod
    def _column_open(tree: _Tree, rules: Rules, column: int) -> bool:
        return ((int(tree.msk[0]) >> (column * rules.height + rules.rows - 1)) & 1) == 0

    def _choose(self, tree: _Tree, children: list[int]) -> tuple[int, str]:
        def visits(i: int) -> int:
            return int(tree.real_visits[i])

        def mean(i: int) -> float:
            return (float(tree.value[i]) - self.prior) / visits(i) if visits(i) else -math.inf

        if self.solver:
            wins = [i for i in children if tree.status[i] == WON]
            if wins:
                best = min(wins, key=lambda i: (tree.depth[i], -visits(i)))
                return int(tree.move[best]), "proven win"
            alive = [i for i in children if tree.status[i] != LOST]
            if not alive:
                best = max(children, key=lambda i: (tree.depth[i], visits(i)))
                return int(tree.move[best]), "every move loses: the slowest loss"
            children = alive
        if self.final == "value":
            best = max(children, key=lambda i: (mean(i), visits(i)))
            return int(tree.move[best]), "highest mean value"
        best = max(children, key=lambda i: (visits(i), mean(i)))
        return int(tree.move[best]), "most visits"
