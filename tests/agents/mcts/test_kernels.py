"""The UCT kernels' context (a named tuple that opens with the tree's arrays) and the subtree copy, in both builds."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from connect4_agents.mcts import kernels as uct_kernels
from connect4_agents.mcts.agent import MCTSAgent
from connect4_agents.mcts.tree import Tree
from connect4_env import Board, Rules
from connect4_env.compiled import kernels_for

BUILDS = [False, None]  # plain Python; numba when installed


def test_a_trees_arrays_open_the_context_in_their_order() -> None:
    fields = uct_kernels.Context._fields
    assert fields[: len(Tree.FIELDS) + 2] == ("cur", "msk", *Tree.FIELDS)
    context = uct_kernels.Context(*range(len(fields)))
    assert [getattr(context, name) for name in fields] == list(range(len(fields)))


def node_row(tree: Tree, node: int) -> tuple[Any, ...]:
    return (
        int(tree.cur[node]),
        int(tree.msk[node]),
        int(tree.move[node]),
        float(tree.value[node]),
        int(tree.visits[node]),
        int(tree.lower[node]),
        int(tree.upper[node]),
        int(tree.depth[node]),
        int(tree.n_children[node]),
    )


def subtree_reference(tree: Tree, root: int) -> list[tuple[Any, ...]]:
    """The subtree under ``root`` in breadth-first order, by Python lists: per node its parent's and first
    child's places in that order (-1: none), then its fields."""
    order = [root]
    parents = [-1]
    head = 0
    while head < len(order):
        for child in tree.children(order[head]):
            order.append(child)
            parents.append(head)
        head += 1
    firsts = [parents.index(place) if place in parents else -1 for place in range(len(order))]
    return [(parents[k], firsts[k], *node_row(tree, node)) for k, node in enumerate(order)]


@pytest.mark.parametrize("compiled", BUILDS)
def test_compact_subtree_copies_a_subtree_breadth_first_and_leaves_the_source(compiled: bool | None) -> None:
    rules = Rules()
    agent = MCTSAgent(playouts=3000, seed=5, rules=rules, compiled=compiled)
    agent.search(Board.from_moves([3, 3], rules))
    tree = agent._tree
    assert tree is not None
    build = tree.build
    settings = (np.zeros(3, np.int64), build.geometry(rules), rules.board_mask, 1.0, 0.0, True, True)
    expanded = [node for node in range(1, tree.n_nodes) if tree.first_child[node] >= 0]
    leaf = next(node for node in range(1, tree.n_nodes) if tree.first_child[node] < 0)
    picks = [0, expanded[0], expanded[-1], leaf]  # the root, a child, a deep node, an unexpanded node
    before = [array[: tree.n_nodes].copy() for array in tree.arrays()]
    for node in picks:
        copy = Tree(build, tree.capacity)
        copy.n_nodes = int(build.compact_subtree(node, tree.context(settings), copy.context(settings)))
        expected = subtree_reference(tree, node)
        actual = [
            (int(copy.parent[k]), int(copy.first_child[k]), *node_row(copy, k)) for k in range(copy.n_nodes)
        ]
        assert actual == expected, node
        assert len(expected) > 1 or node == leaf
        for old, new in zip(before, tree.arrays()):  # the source is read only
            np.testing.assert_array_equal(old, new[: tree.n_nodes])
    assert build.compiled == (compiled is None and kernels_for(uct_kernels, rules).compiled)
