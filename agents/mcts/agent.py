"""Monte Carlo Tree Search (UCT) with MCTS-Solver, tree reuse, and a look inside every search.

The four phases run in a compiled kernel (`connect4_agents.mcts.kernels`, numba) on an array-based tree:

1. **Selection** from the root: unvisited children first, in random order; then the child with the highest
   UCB1 score ``wins/visits + c * sqrt(ln(parent visits) / visits)`` (with the solver on, each child's
   mean is first clamped into its proven bounds; no child is skipped).
2. **Expansion** of the leaf: one child per legal move (only one of each mirror-equal pair when the position
   is left-right symmetric, if ``symmetry``). A move that wins at once makes a terminal child: terminal
   positions are detected inside the tree, not only in rollouts.
3. **Simulation**: a uniformly random game from one new child.
4. **Backpropagation**: every node on the path gains a visit and the result *for the player who moved into
   it* (win 1, draw 1/2, loss 0); the result flips at each level on the way up.

With the solver on (score-bounded MCTS, after Cazenave & Saffidine 2010), every node carries a lower and an
upper bound on its game value (loss, draw, win) for the player who moved into it. Terminal positions are
exact; a node's bounds follow from its children's (the player to move picks the child best for them), so
proven wins, losses *and draws* propagate up. A proven node is not searched below (its exact value is
backed up instead of a rollout) and a child's mean is clamped into its bounds, but selection still weighs
every child by UCB1: skipping proven moves made forced lines exact while quiet lines kept optimistic averages,
which cost accuracy. Proven wins and losses carry their distance to the end of the game.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from connect4_agents.base import (
    RulesBound,
    check_search_settings,
    check_spec_value,
)
from connect4_agents.mcts import kernels as uct_kernels
from connect4_agents.mcts.kernels import DRAW, WIN
from connect4_agents.mcts.result import PROOF_NAMES, SearchResult, ucb1
from connect4_agents.mcts.tree import Tree
from connect4_env.compiled import KernelBuild, kernels_for
from connect4_env.core import Board, check_board
from connect4_env.rules import Rules
from connect4_env.validation import check_bool, check_choice, check_int, check_number, seeded_rng

__all__ = [
    "MCTSAgent",
    "DEFAULT_PLAYOUTS",
    "DEFAULT_TREE_CAPACITY",
]

DEFAULT_PLAYOUTS = 1000  # the budget when neither playouts nor time_limit is given
DEFAULT_TREE_CAPACITY = 1 << 22  # 54 bytes a node: about 230 MB at the cap
MAX_TREE_CAPACITY = (1 << 31) - 1  # node indices are int32
MAX_PLAYOUTS = 1 << 62  # playout counters are int64
_LOADED_GEOMETRIES: set[int] = set()  # geometry-tuple lengths the compiled UCT kernel has been called with
MAX_TIME_LIMIT = 7 * 24 * 3600.0  # a week a move: a typed 1e30 s is a mistake, not a search


def _checked_budget(playouts: object, time_limit: object) -> tuple[int | None, float | None]:
    """A search budget's ``playouts`` and ``time_limit`` (each None or in range, not both None), checked.

    Raises:
        TypeError: a value of the wrong type.
        ValueError: one out of range, or both None.
    """
    if playouts is None and time_limit is None:
        raise ValueError("playouts and time_limit are both None: set a playout count or a time limit")
    return (
        None if playouts is None else check_int("playouts", playouts, 1, MAX_PLAYOUTS),
        None
        if time_limit is None
        else check_number("time_limit", time_limit, 0.0, MAX_TIME_LIMIT, above_minimum=True),
    )


class MCTSAgent(RulesBound):
    """UCT Monte Carlo Tree Search as a policy.

    Args:
        playouts: playouts per move. None (the default): `DEFAULT_PLAYOUTS` (1000) if no
            ``time_limit`` is given, else no playout limit.
        time_limit: seconds per move (a finite number > 0, at most a week), or None. Alone, the search runs for that long
            (anytime: it plays the best move found when time runs out); with ``playouts``, whichever comes
            first. A time-limited search depends on the machine's speed, so it is not reproducible from a seed.
        c: UCB1 exploration constant (default sqrt(2); the original Connect 4 project used 2).
        seed: seed of the search's random generator: same seed, same moves (with a playout budget).
        rules: the game (observations do not carry ``win_length``). None (default): the rules the agent is
            bound to (``bind(rules)``, which every env, the arena and the scripts call), else 6x7 with 4 in a
            row. Binding other rules later raises ValueError.
        solver: score-bounded MCTS-Solver: proven wins, draws and losses propagate (a proven node is no
            longer searched; its exact value is backed up); a proven win is played, moves proven worse than
            another are never played, the search stops once the root is proven; at a proven-lost root the
            slowest loss. Default True.
        final: ``"visits"`` (most-visited move, the default) or ``"value"`` (highest mean value).
        prior: give each new node ``prior`` wins out of ``2 * prior`` virtual visits (0 = off). With a
            prior, children are ordered by UCB1 from the start (there are no unvisited children).
        symmetry: in left-right symmetric positions expand only one of each pair of mirror moves.
        reuse_tree: keep the subtree of the position reached since the last move, when the tree has it.
        tree_capacity: the most nodes the tree may hold (default 2**22 nodes, 54 bytes each: about 230 MB),
            memory, not a search budget. At the cap the search goes on without growing the tree (playouts
            from its leaves) until its budget ends.
        compiled: None = numba kernels when available and the board fits in 63 bits (else plain Python, far
            slower); False forces plain Python; True requires the compiled kernels.

    Raises:
        TypeError: a setting of the wrong type.
        ValueError: a setting out of range.
    """

    name = "mcts"

    def __init__(
        self,
        playouts: int | None = None,
        *,
        time_limit: float | None = None,
        c: float = math.sqrt(2),
        seed: int | None = None,
        rules: Rules | None = None,
        solver: bool = True,
        final: str = "visits",
        prior: float = 0.0,
        symmetry: bool = True,
        reuse_tree: bool = True,
        tree_capacity: int = DEFAULT_TREE_CAPACITY,
        compiled: bool | None = None,
    ) -> None:
        if playouts is None and time_limit is None:
            playouts = DEFAULT_PLAYOUTS
        playouts, time_limit = _checked_budget(playouts, time_limit)
        c = check_number("c", c, 0.0)
        check_choice("final", final, ("visits", "value"))
        prior = check_number("prior", prior, 0.0)
        tree_capacity = check_int("tree_capacity", tree_capacity, 64, MAX_TREE_CAPACITY)
        for flag, value in (("solver", solver), ("symmetry", symmetry), ("reuse_tree", reuse_tree)):
            check_bool(flag, value)
        check_search_settings(rules, compiled)
        self.playouts = playouts
        self.time_limit = time_limit
        self.c = c
        self._fixed_rules = rules
        self.rules: Rules | None = rules
        self.solver = bool(solver)
        self.final = final
        self.prior = float(prior)
        self.symmetry = bool(symmetry)
        self.reuse_tree = bool(reuse_tree)
        self.tree_capacity = int(tree_capacity)
        self.compiled = compiled
        self.last_search: SearchResult | None = None
        self._tree: Tree | None = None
        self._tree_rules: Rules | None = None
        self._meta = np.zeros(3, dtype=np.int64)
        self._seed(seed)

    def _seed(self, seed: int | None) -> None:
        self._meta[1] = int(seeded_rng(seed).integers(1, 2**32))

    def reset(self, seed: int | None = None) -> None:
        """Forget the tree (a new game); a seed, if given, reseeds the search."""
        if seed is not None:  # first: a bad seed changes nothing
            self._seed(seed)
        self._tree = None
        self.last_search = None

    @classmethod
    def from_spec(cls, value: str, **kwargs: Any) -> MCTSAgent:
        """``"mcts:<playouts>"`` or ``"mcts:<seconds>s"`` (a time budget per move, e.g. ``mcts:0.1s``), as the
        scripts and ``Connect4-v0(opponent=...)`` write it.

        Raises:
            ValueError: ``value`` is neither a positive integer nor a positive number of seconds ending in s.
        """
        value = check_spec_value(value)
        wrong = (
            f"agent spec 'mcts:{value}': {value!r} is neither a number of playouts (mcts:200) nor a positive "
            "number of seconds per move (mcts:0.1s)"
        )
        if value.endswith("s"):
            try:
                seconds = float(value[:-1])
            except ValueError:
                seconds = math.nan
            if not (math.isfinite(seconds) and seconds > 0):
                raise ValueError(wrong)
            return cls(time_limit=seconds, **kwargs)
        try:
            playouts = int(value)
        except ValueError:
            raise ValueError(wrong) from None
        if playouts < 1:
            raise ValueError(f"agent spec 'mcts:{value}': playouts must be >= 1")
        return cls(playouts=playouts, **kwargs)

    def __repr__(self) -> str:
        budget = [f"playouts={self.playouts}"] if self.playouts is not None else []
        if self.time_limit is not None:
            budget.append(f"time_limit={self.time_limit}")
        return f"MCTSAgent({', '.join(budget)}, c={self.c:.3g})"

    # -- policy ------------------------------------------------------------------------------------------
    def act(self, observation: Any, action_mask: Any = None) -> int:
        """The column to play for the player to move in ``observation`` (see `connect4_env.policy.Policy`).

        Raises:
            ValueError: the mask disagrees with the position or its length is not the board's width, or the
                board is not the bound rules' size.
        """
        board, _ = self.read_board(observation, action_mask)
        return self.search(board).column

    def move_info(self) -> dict[str, Any] | None:
        """The last move's search numbers as plain JSON
        ([`SearchResult.to_dict`][connect4_agents.mcts.result.SearchResult.to_dict]), or None before a move.

        Game records and the play window read this from any policy that has it.
        """
        return None if self.last_search is None else self.last_search.to_dict()

    def explain(self) -> str:
        """Print and return the last search as a table.

        Raises:
            RuntimeError: no search yet.
        """
        if self.last_search is None:
            raise RuntimeError("explain() needs a search first: call act()")
        text = self.last_search.table()
        print(text)
        return text

    # -- search ------------------------------------------------------------------------------------------
    def search(self, board: Board) -> SearchResult:
        """Search from ``board`` within the budget; returns (and keeps in ``last_search``) the result.

        Raises:
            TypeError: ``board`` is not a [`Board`][connect4_env.core.Board], or a budget set on the agent after
                construction is of the wrong type.
            ValueError: the game is over, or a budget set on the agent after construction is out of range
                (``playouts``, ``time_limit``; both None).
        """
        if check_board(board).is_terminal:
            raise ValueError("cannot search a finished game: there is no legal move")
        # the budget attributes can be changed after construction (the Kaggle wrapper sizes them): check them
        self.playouts, self.time_limit = _checked_budget(self.playouts, self.time_limit)
        rules = board.rules
        current = board.stones[board.to_move]
        mask = board.mask
        build = kernels_for(uct_kernels, rules, self.compiled)
        geo = build.geometry(rules)
        settings = (self._meta, geo, rules.board_mask, self.c, self.prior, self.solver, self.symmetry)
        tree, reused = self._root_tree(rules, build, current, mask, settings)
        self._meta[0] = tree.n_nodes
        self._meta[2] = int(tree.capacity < self.tree_capacity)
        context = tree.context(settings)
        # The first call of a compiled build in a process loads the kernels from numba's disk cache (or
        # compiles them, once per geometry length): a call with no playouts does that before the clock starts,
        # so ``elapsed``, ``playouts_per_second`` and a ``time_limit`` count the search alone (the first search
        # once showed 2,328 playouts/s). Later searches skip it.
        if build.compiled and len(geo) not in _LOADED_GEOMETRIES:
            build.mcts_playouts(0, 0, context)
            _LOADED_GEOMETRIES.add(len(geo))
        start = time.perf_counter()
        done = 0
        chunk = 64
        while True:
            want = chunk if self.playouts is None else min(chunk, self.playouts - done)
            chunk_start = time.perf_counter()
            ran = build.mcts_playouts(want, 0, context)
            tree.n_nodes = int(self._meta[0])
            done += ran
            if self.solver and tree.proven(0) is not None:
                break  # the root is proven: more playouts cannot change the answer
            if ran < want and self._meta[2]:
                tree.grow(min(2 * tree.capacity, self.tree_capacity))
                self._meta[2] = int(tree.capacity < self.tree_capacity)
                context = tree.context(settings)  # the grown tree's new arrays
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
        self._tree_rules = rules
        result = self._summarise(tree, rules, done, elapsed, reused)
        self.last_search = result
        return result

    def _root_tree(
        self, rules: Rules, build: KernelBuild, current: int, mask: int, settings: tuple[Any, ...]
    ) -> tuple[Tree, bool]:
        """The tree to search ``(current, mask)`` with and whether it is the last search's subtree.

        The last tree, or a compacted copy of its subtree, when ``reuse_tree`` is on and it holds the position
        among its root's children and grandchildren, else a new tree holding the root alone. ``settings``: the
        kernels' context after the tree's arrays (see `Tree.context`).
        """
        old = self._tree
        if self.reuse_tree and old is not None and self._tree_rules == rules and old.build is build:
            found = self._find(old, current, mask)
            if found is not None:
                if found == 0:
                    return old, True
                new = Tree(build, old.capacity)
                new.n_nodes = int(build.compact_subtree(found, old.context(settings), new.context(settings)))
                return new, True
        budget = self.playouts if self.playouts is not None else 20_000
        capacity = max(1024, min(budget * rules.columns + 1, self.tree_capacity), rules.columns + 1)
        tree = Tree(build, capacity)
        tree.set_root(current, mask, self.prior)
        return tree, False

    @staticmethod
    def _find(tree: Tree, current: int, mask: int) -> int | None:
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
        self, tree: Tree, rules: Rules, playouts: int, elapsed: float, reused: bool
    ) -> SearchResult:
        columns = rules.columns
        visits = [0] * columns
        mean = [math.nan] * columns
        proven: list[str | None] = [None] * columns
        depth = [0] * columns
        ucb = [math.nan] * columns
        children = list(tree.children(0))
        root_visits = max(float(tree.visits[0]) + 2 * self.prior, 1.0)
        for child in children:
            column = int(tree.move[child])
            real = int(tree.visits[child])
            visits[column] = real
            if real > 0:
                mean[column] = (float(tree.value[child]) - self.prior) / real
                ucb[column] = ucb1(float(tree.value[child]), real + 2 * self.prior, root_visits, self.c)
            value = tree.proven(child)
            proven[column] = None if value is None else PROOF_NAMES[value]
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
        root_value = tree.proven(0) if self.solver else None
        # the root's bounds are for the player who moved into it; report its value for the player to move
        root_proven = None if root_value is None else PROOF_NAMES[WIN - root_value]
        return SearchResult(
            column=column,
            reason=reason,
            visits=visits,
            mean_value=mean,
            proven=proven,
            proof_depth=depth,
            ucb=ucb,
            playouts=playouts,
            root_visits=int(tree.visits[0]),
            elapsed=elapsed,
            nodes=tree.n_nodes,
            reused_tree=reused,
            root_proven=root_proven,
            mirrored=mirrored,
        )

    @staticmethod
    def _column_open(tree: Tree, rules: Rules, column: int) -> bool:
        return ((int(tree.msk[0]) >> (column * rules.height + rules.rows - 1)) & 1) == 0

    def _choose(self, tree: Tree, children: list[int]) -> tuple[int, str]:
        def visits(i: int) -> int:
            return int(tree.visits[i])

        def mean(i: int) -> float:
            if not visits(i):
                return -math.inf
            value = (float(tree.value[i]) - self.prior) / visits(i)
            if self.solver:  # clamped into the proven bounds, as the search sees it
                value = min(max(value, 0.5 * int(tree.lower[i])), 0.5 * int(tree.upper[i]))
            return value

        if self.solver:
            wins = [i for i in children if tree.proven(i) == WIN]
            if wins:
                best = min(wins, key=lambda i: (int(tree.depth[i]), -visits(i)))
                return int(tree.move[best]), "proven win"
            root = tree.proven(0)
            if root == WIN:  # every move loses
                best = max(children, key=lambda i: (int(tree.depth[i]), visits(i)))
                return int(tree.move[best]), "every move loses: the slowest loss"
            if root == DRAW:
                draws = [i for i in children if tree.proven(i) == DRAW]
                best = max(draws, key=lambda i: (visits(i), mean(i)))
                return int(tree.move[best]), "proven draw"
            # never a move proven worse than what another move guarantees, nor a proven loss
            guaranteed = max(DRAW, max(int(tree.lower[i]) for i in children))
            children = [i for i in children if int(tree.upper[i]) >= guaranteed]
        if self.final == "value":
            best = max(children, key=lambda i: (mean(i), visits(i)))
            return int(tree.move[best]), "highest mean value"
        best = max(children, key=lambda i: (visits(i), mean(i)))
        return int(tree.move[best]), "most visits"
