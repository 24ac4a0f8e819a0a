"""The UCT search's hot loops (MCTS with the MCTS-Solver bounds), in the numba subset.

`connect4_env.compiled` builds this module twice (see there): plain Python for any board, and numba-compiled
for boards up to 63 bits, where the rule functions imported from `connect4_env.kernels` are the compiled
ones. [`connect4_agents.MCTSAgent`][connect4_agents.mcts.agent.MCTSAgent] owns the tree arrays and calls
`mcts_playouts` and `compact_subtree`.

The kernels share one context, a `Context` named tuple (numba takes named tuples as arguments and reads their
fields by name): the tree, one array entry per node (children are contiguous; values are summed and bounded
for the player who moved into the node: ``LOSS``, ``DRAW``, ``WIN``), then ``meta = [n_nodes, rng_state,
may_grow]`` (the nodes in use, the search's ``xorshift32`` state, whether the caller grows full arrays) and the
search's fixed inputs (the board, ``c``, ``prior``, ``solver``, ``symmetry``: see `mcts_playouts`).
A tree's arrays are replaced when it grows: its context is then built again.
"""

# ruff: noqa: SIM108  (numba compiles plain if/else blocks; keep the kernels in the simplest Python)
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from connect4_env.kernels import COLUMNS, has_won, mirror, move_bit, xorshift32

__all__ = [
    "LOSS",
    "DRAW",
    "WIN",
    "Context",
    "rollout",
    "mcts_playouts",
    "propagate_bounds",
    "compact_subtree",
]

# MCTS bounds on a node's game value for the player who moved into it.
LOSS, DRAW, WIN = 0, 1, 2


class Context(NamedTuple):
    """The tree and the search's fixed inputs, as the kernels read them (see the module docstring). The tree's
    arrays come first, in `Tree.arrays` order; each has one entry per node.

    Attributes:
        cur: the stones of the player to move (bitboards).
        msk: all stones.
        parent: the parent's index (-1 at the root).
        move: the column played into the node.
        first_child: the first child's index (-1: not expanded).
        n_children: the number of children.
        value: the results summed for the player who moved into the node, plus ``prior``.
        visits: the playouts through the node.
        lower: the lower bound on the node's game value for the player who moved into it.
        upper: the upper bound.
        depth: the plies of the node's proven line to the end.
        meta: ``[n_nodes, rng_state, may_grow]``, updated in place.
        geo: the geometry tuple (see `connect4_env.kernels`).
        board_mask: the bitboard of every cell.
        c: the UCB1 exploration constant.
        prior: the virtual wins of a new node (out of ``2 * prior`` virtual visits).
        solver: whether proven values propagate (MCTS-Solver).
        symmetry: whether a left-right symmetric position expands one of each pair of mirror moves.
    """

    cur: np.ndarray
    msk: np.ndarray
    parent: np.ndarray
    move: np.ndarray
    first_child: np.ndarray
    n_children: np.ndarray
    value: np.ndarray
    visits: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    depth: np.ndarray
    meta: np.ndarray
    geo: tuple[int, ...]
    board_mask: int
    c: float
    prior: float
    solver: bool
    symmetry: bool


def rollout(current, mask, ctx):
    """Play uniformly random moves from a position to the end of the game.

    Args:
        current (int): the stones of the player to move.
        mask (int): all stones.
        ctx (Context): the context (see the module docstring); its generator state (``meta[1]``) is advanced in place.

    Returns:
        result (float): The result for the player who is *not* to move at the start: 1 win, 0.5 draw, 0 loss.
    """
    geo = ctx.geo
    board_mask = ctx.board_mask
    meta = ctx.meta
    columns = geo[COLUMNS]
    state = meta[1]
    side = 0  # 0: the player to move at the start
    while True:
        if mask == board_mask:
            meta[1] = state
            return 0.5
        while True:
            state = xorshift32(state)
            move = move_bit(mask, int(state % columns), geo)
            if move != 0:
                break
        if has_won(current | move, geo):
            meta[1] = state
            return 0.0 if side == 0 else 1.0
        current = current ^ mask
        mask = mask | move
        side = 1 - side


def mcts_playouts(n_playouts, root, ctx):
    """Run up to ``n_playouts`` playouts from node ``root`` of the context's tree.

    ``value[i]`` sums results for the player who moved into node ``i`` (win 1, draw 1/2) plus ``prior``;
    ``visits[i]`` counts playouts through it (``2 * prior`` more virtual ones enter UCB1). ``lower[i]``/
    ``upper[i]`` bound the game value of node ``i`` for the player who moved into it (0 loss, 1 draw, 2 win;
    score-bounded MCTS). Terminal children are exact from their creation; with ``solver``, visiting one updates
    the bounds of its ancestors (`propagate_bounds`), a node whose bounds meet is proven and is not searched
    below, its exact value is backed up instead of a rollout, and means are clamped into the bounds. Proven
    moves are still selected by UCB1 like the others: skipping them makes forced lines exact while quiet lines
    keep optimistic averages, which misleads the comparison between moves (see the README).

    A leaf is expanded (all its children at once) on its second visit; its first visit is a rollout from
    it. Stops early when the root is proven (solver), or when the node arrays are full and ``may_grow`` is set
    (the caller grows them). Full arrays and ``may_grow`` 0: leaves are no longer expanded, playouts go on.

    Args:
        n_playouts (int): the most playouts to run (0: none, which loads a compiled build).
        root (int): the index of the node to search from.
        ctx (Context): the context (see the module docstring); the tree and ``meta`` are updated in place.

    Returns:
        playouts (int): How many playouts ran.
    """
    # The arrays are bound to locals once: this loop returns in one place, and plain Python reads a local
    # faster than a tuple item.
    cur = ctx.cur
    msk = ctx.msk
    parent = ctx.parent
    move = ctx.move
    first_child = ctx.first_child
    n_children = ctx.n_children
    value = ctx.value
    visits = ctx.visits
    lower = ctx.lower
    upper = ctx.upper
    depth = ctx.depth
    meta = ctx.meta
    geo = ctx.geo
    board_mask = ctx.board_mask
    c = ctx.c
    prior = ctx.prior
    solver = ctx.solver
    symmetry = ctx.symmetry
    columns = geo[COLUMNS]
    capacity = cur.shape[0]
    done = 0
    while done < n_playouts:
        if solver and lower[root] == upper[root]:
            break
        # 1. selection (a proven node is not entered: its value is known)
        node = root
        while first_child[node] >= 0 and not (solver and lower[node] == upper[node]):
            fc = first_child[node]
            nc = n_children[node]
            # at least a draw proven for the player to move here: children that cannot beat it are skipped
            guaranteed = 0
            if solver:
                for i in range(fc, fc + nc):
                    if visits[i] > 0 and lower[i] > guaranteed:
                        guaranteed = lower[i]
            chosen = -1
            if prior == 0:  # unvisited children first, in random order (reservoir sampling)
                seen = 0
                for i in range(fc, fc + nc):
                    if visits[i] == 0 and not (guaranteed > 0 and upper[i] <= guaranteed):
                        seen += 1
                        meta[1] = xorshift32(meta[1])
                        if meta[1] % seen == 0:
                            chosen = i
            if chosen < 0:
                log_n = math.log(visits[node] + 2.0 * prior)
                best = -1.0
                for i in range(fc, fc + nc):
                    if guaranteed > 0 and upper[i] <= guaranteed:
                        continue
                    n_i = visits[i] + 2.0 * prior
                    mean = value[i] / n_i
                    if solver:  # the mean clamped into the child's proven bounds
                        if mean < 0.5 * lower[i]:
                            mean = 0.5 * lower[i]
                        elif mean > 0.5 * upper[i]:
                            mean = 0.5 * upper[i]
                    score = mean + c * math.sqrt(log_n / n_i)
                    if score > best:
                        best = score
                        chosen = i
            if chosen < 0:  # cannot happen: an unproven node has a child that can beat its guarantee
                break
            node = chosen
        # 2. expansion and 3. simulation
        leaf = node
        if first_child[leaf] < 0 and lower[leaf] != upper[leaf] and (visits[leaf] > 0 or leaf == root):
            if meta[0] + columns > capacity and meta[2] != 0:
                break  # the caller grows the arrays
            if meta[0] + columns <= capacity:
                fc = meta[0]
                count = 0
                current = cur[leaf]
                mask = msk[leaf]
                opponent = current ^ mask
                symmetric = symmetry and mirror(current, geo) == current and mirror(mask, geo) == mask
                for col in range(columns):
                    if symmetric and col > columns - 1 - col:
                        continue
                    bit = move_bit(mask, col, geo)
                    if bit == 0:
                        continue
                    child = fc + count
                    cur[child] = opponent
                    msk[child] = mask | bit
                    parent[child] = leaf
                    move[child] = col
                    first_child[child] = -1
                    n_children[child] = 0
                    visits[child] = 0
                    value[child] = prior
                    depth[child] = 0
                    if has_won(current | bit, geo):
                        lower[child] = 2
                        upper[child] = 2
                    elif (mask | bit) == board_mask:
                        lower[child] = 1
                        upper[child] = 1
                    else:
                        lower[child] = 0
                        upper[child] = 2
                    count += 1
                first_child[leaf] = fc
                n_children[leaf] = count
                meta[0] = fc + count
                # simulate from one random new child
                meta[1] = xorshift32(meta[1])
                node = fc + meta[1] % count
        if lower[node] == upper[node] and (solver or first_child[node] < 0):
            result = 0.5 * lower[node]  # proven (or a terminal position)
            if solver and first_child[node] < 0 and node != root:
                propagate_bounds(parent[node], root, ctx)
        else:
            result = rollout(cur[node], msk[node], ctx)
        # 4. backpropagation: the result flips at each level
        while True:
            visits[node] += 1
            value[node] += result
            if node == root:
                break
            node = parent[node]
            result = 1.0 - result
        done += 1
    return done


def propagate_bounds(node, root, ctx):
    """Recompute the bounds of ``node`` from its children, then of its ancestors while they change.

    The player to move at a node picks the child best for them, so for the player who moved *into* it the
    node is worth ``2 - max(child)``: its upper bound is ``2 - max(lower[child])`` and its lower bound
    ``2 - max(upper[child])``. ``depth`` of a proven win or loss: plies of the proven line to the end.

    Args:
        node (int): the index of an expanded node whose children's bounds changed.
        root (int): the index of the search's root, the last node updated.
        ctx (Context): the context (see the module docstring); ``lower``, ``upper`` and ``depth`` are updated in place.
    """
    parent = ctx.parent
    first_child = ctx.first_child
    n_children = ctx.n_children
    lower = ctx.lower
    upper = ctx.upper
    depth = ctx.depth
    while True:
        fc = first_child[node]
        best_lower = 0
        best_upper = 0
        for i in range(fc, fc + n_children[node]):
            if lower[i] > best_lower:
                best_lower = lower[i]
            if upper[i] > best_upper:
                best_upper = upper[i]
        new_lower = 2 - best_upper
        new_upper = 2 - best_lower
        if new_lower == lower[node] and new_upper == upper[node]:
            return
        lower[node] = new_lower
        upper[node] = new_upper
        if new_lower == new_upper and new_lower != 1:
            # lost for its mover: the quickest win of the player to move; won: the slowest loss
            span = -1
            for i in range(fc, fc + n_children[node]):
                if (
                    lower[i] == upper[i]
                    and lower[i] == 2 - new_lower
                    and (
                        span < 0
                        or (new_lower == 0 and depth[i] < span)
                        or (new_lower == 2 and depth[i] > span)
                    )
                ):
                    span = depth[i]
            depth[node] = span + 1
        if node == root:
            return
        node = parent[node]


def compact_subtree(new_root, source, target):
    """Copy the subtree under node ``new_root`` of one tree into another, root at 0, breadth first.

    Only the trees' arrays are read and written (not ``meta``); the target needs room for the subtree (its
    capacity at least the source's serves any subtree).

    Args:
        new_root (int): the index in ``source`` of the subtree's root.
        source (Context): the context of the tree to copy from, unchanged.
        target (Context): the context of the tree to copy into; its first nodes are overwritten.

    Returns:
        nodes (int): The subtree's node count, the target's nodes in use.
    """
    cur = source.cur
    msk = source.msk
    move = source.move
    first_child = source.first_child
    n_children = source.n_children
    value = source.value
    visits = source.visits
    lower = source.lower
    upper = source.upper
    depth = source.depth
    o_cur = target.cur
    o_msk = target.msk
    o_parent = target.parent
    o_move = target.move
    o_first_child = target.first_child
    o_n_children = target.n_children
    o_value = target.value
    o_visits = target.visits
    o_lower = target.lower
    o_upper = target.upper
    o_depth = target.depth
    # A copied node's ``o_first_child`` holds its index in the source until the node's turn in the queue comes:
    # the breadth-first queue lives in the target, with no array of its own.
    o_cur[0] = cur[new_root]
    o_msk[0] = msk[new_root]
    o_parent[0] = -1
    o_move[0] = move[new_root]
    o_value[0] = value[new_root]
    o_visits[0] = visits[new_root]
    o_lower[0] = lower[new_root]
    o_upper[0] = upper[new_root]
    o_depth[0] = depth[new_root]
    o_first_child[0] = new_root
    o_n_children[0] = 0
    head = 0
    n = 1
    while head < n:
        old = o_first_child[head]
        fc = first_child[old]
        if fc >= 0:
            o_first_child[head] = n
            o_n_children[head] = n_children[old]
            for i in range(fc, fc + n_children[old]):
                o_cur[n] = cur[i]
                o_msk[n] = msk[i]
                o_parent[n] = head
                o_move[n] = move[i]
                o_value[n] = value[i]
                o_visits[n] = visits[i]
                o_lower[n] = lower[i]
                o_upper[n] = upper[i]
                o_depth[n] = depth[i]
                o_first_child[n] = i
                o_n_children[n] = 0
                n += 1
        else:
            o_first_child[head] = -1
        head += 1
    return n
