"""The PUCT search with evaluators (stubs): its value convention, its proofs against the UCT kernel's routine
and the exact solver, lockstep batching, noise and temperature. The network side is in tests/agents/alphazero."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.extras import heavy_without_numba
from helpers.reference import random_board
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_agents.evaluation.test_sets import load_test_set
from connect4_agents.mcts import kernels as uct_kernels
from connect4_agents.mcts.evaluators import RolloutEvaluator, UniformEvaluator
from connect4_agents.mcts.puct import DRAW, LOSS, WIN, Node, PUCTSearch, propagate_bounds
from connect4_agents.solver.agent import SolverAgent
from connect4_env import Board, Rules

SOLVER = SolverAgent()


class SolverEvaluator:
    """A perfect stub: uniform priors and the exact outcome (-1, 0, 1) for the player to move."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def evaluate(self, boards):
        self.calls.append(len(boards))
        values = [float(np.sign(solver_for(board).score(board))) for board in boards]
        return np.ones((len(boards), boards[0].rules.columns)), np.array(values)


def solver_for(board: Board) -> SolverAgent:
    SOLVER.bind(board.rules)
    return SOLVER


def outcome(score: int) -> int:
    return int(np.sign(score))


def value_for_mover_in(board: Board) -> int:
    """The exact game value of ``board`` for the player who moved into it (-1, 0, 1)."""
    if board.is_terminal:
        return DRAW if board.winner is None else WIN
    return -outcome(solver_for(board).score(board))


WIN_IN_ONE = """
.......
.......
.......
.......
...OOO.
...XXX.
"""  # X to move wins at 2 or 6
LOST = """
.......
.......
.......
.......
...OO..
...XXX.
"""  # O to move cannot stop both ends


# --- the value convention: every node value is for the player who moved into the node ---


def test_node_values_are_for_the_player_who_moved_into_the_node() -> None:
    won = Board.from_ascii(".......\n.......\n.......\nO......\nOO.....\nXXXX...")  # X just won
    finished = Node.terminal(won)
    assert (finished.lower, finished.upper, finished.proof, finished.estimate) == (WIN, WIN, WIN, 1.0)
    node = Node.expand(Board.from_ascii(WIN_IN_ONE), np.ones(7), 0.75)  # 0.75 for X, who is to move
    assert node.estimate == -0.75 and node.proof is None and (node.lower, node.upper) == (LOSS, WIN)
    search = PUCTSearch(UniformEvaluator())
    (root,) = search.roots([Board.from_ascii(WIN_IN_ONE)])
    search.run([root], 50)
    winning = root.children[2] or root.children[6]
    assert winning is not None and winning.proof == WIN  # X moved into it and won
    assert root.proof == LOSS  # O moved into the root and has lost
    for column in (2, 6):  # the sums of the moves into the children: for X, who moves into them
        if root.visits[column]:
            assert root.value_sum[column] == root.visits[column]
    assert root.mean_value() < 0 and search.result(root).root_value > 0


def test_public_results_keep_the_view_of_the_player_to_move() -> None:
    result = PUCTSearch(UniformEvaluator()).search(Board.from_ascii(WIN_IN_ONE), 200)
    assert result.root_proven == 1 and set(np.flatnonzero(result.policy(0))) <= {2, 6}
    assert result.proven[2] in (1, None) and 1 in (result.proven[2], result.proven[6])
    assert result.root_value > 0 and np.nanmax(result.values) == 1.0
    assert PUCTSearch(UniformEvaluator()).search(Board.from_ascii(LOST), 2000).root_proven == -1


# --- proofs: the same routine as the UCT kernel's, and never wrong ---


def build_tree(
    board: Board, plies: int, rng: np.random.Generator
) -> tuple[list[Board], dict[str, np.ndarray]]:
    """A random tree below ``board`` in the kernel's array form: every expanded node has all its children,
    contiguous; nodes are expanded up to ``plies`` deep (not all of them), in breadth-first order."""
    boards, parent, first_child, n_children, level = [board], [-1], [-1], [0], [0]
    index = 0
    while index < len(boards):
        node = boards[index]
        if not node.is_terminal and level[index] < plies and (index == 0 or rng.random() < 0.75):
            first_child[index] = len(boards)
            for column in node.legal_moves():
                child = node.copy()
                child.play(column)
                boards.append(child)
                parent.append(index)
                first_child.append(-1)
                n_children.append(0)
                level.append(level[index] + 1)
            n_children[index] = len(boards) - first_child[index]
        index += 1
    arrays = {
        name: np.array(values, np.int64)
        for name, values in (("parent", parent), ("first_child", first_child), ("n_children", n_children))
    }
    exact = [b.is_terminal for b in boards]
    value = [DRAW if b.winner is None else WIN for b in boards]
    arrays["lower"] = np.array(
        [v + 1 if e else 0 for v, e in zip(value, exact)], np.int64
    )  # 0 loss 1 draw 2 win
    arrays["upper"] = np.array([v + 1 if e else 2 for v, e in zip(value, exact)], np.int64)
    arrays["depth"] = np.zeros(len(boards), np.int64)
    return boards, arrays


def puct_twin(
    boards: list[Board], arrays: dict[str, np.ndarray], rng: np.random.Generator
) -> list[Node | None]:
    """The same tree as PUCT nodes; some unexpanded, unknown leaves are left as untried moves (None)."""
    first_child, n_children = arrays["first_child"], arrays["n_children"]
    nodes: list[Node | None] = [None] * len(boards)
    for index, board in enumerate(boards):
        if board.is_terminal:
            nodes[index] = Node.terminal(board)
        elif first_child[index] >= 0 or index == 0 or rng.random() < 0.5:
            nodes[index] = Node.expand(board, np.ones(board.rules.columns), 0.0)
    for index, node in enumerate(nodes):
        for child in range(first_child[index], first_child[index] + n_children[index]):
            assert node is not None
            node.children[boards[child].last_move] = nodes[child]
    return nodes


def kernel_context(arrays: dict[str, np.ndarray]) -> tuple:
    """The UCT kernels' context of a `build_tree` tree: its arrays, and zeros for what bounds do not read."""
    unread = np.zeros(len(arrays["parent"]), np.int64)  # positions, moves, values and visits
    return uct_kernels.Context(
        unread,
        unread,
        arrays["parent"],
        unread,
        arrays["first_child"],
        arrays["n_children"],
        unread,
        unread,
        arrays["lower"],
        arrays["upper"],
        arrays["depth"],
        np.zeros(3, np.int64),
        (),
        0,
        0.0,
        0.0,
        True,
        False,
    )


def assert_same_bounds(nodes: list[Node | None], arrays: dict[str, np.ndarray], boards: list[Board]) -> None:
    for index, node in enumerate(nodes):
        bounds = (LOSS, WIN) if node is None else (node.lower, node.upper)
        kernel = (int(arrays["lower"][index]) - 1, int(arrays["upper"][index]) - 1)
        assert bounds == kernel, (index, boards[index].to_ascii())


def ancestors(index: int, parent: np.ndarray) -> list[int]:
    path = [index]
    while parent[path[0]] >= 0:
        path.insert(0, int(parent[path[0]]))
    return path


@pytest.mark.parametrize("rows, columns, seed", [(4, 5, 0), (4, 5, 1), (5, 6, 2), (5, 6, 3)])
def test_puct_bounds_equal_the_uct_kernels_on_the_same_trees(rows: int, columns: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(6):
        board = random_board(
            rng, int(rng.integers(rows * columns // 3, rows * columns // 2 + 2)), rows, columns, 4
        )
        if board.is_terminal:
            continue
        boards, arrays = build_tree(board, 3, rng)
        nodes = puct_twin(boards, arrays, rng)
        parent, lower, upper = arrays["parent"], arrays["lower"], arrays["upper"]
        leaves = [i for i in range(1, len(boards)) if arrays["first_child"][i] < 0]
        for leaf in rng.permutation(leaves):
            # a leaf is visited: an unknown one may get its exact value or one bound (true for the solver)
            if not boards[leaf].is_terminal and rng.random() < 0.7:
                truth = value_for_mover_in(boards[leaf])
                low, high = [(truth, truth), (LOSS, truth), (truth, WIN)][int(rng.integers(3))]
                if nodes[leaf] is None:
                    nodes[leaf] = Node.expand(boards[leaf], np.ones(columns), 0.0)
                    nodes[int(parent[leaf])].children[boards[leaf].last_move] = nodes[leaf]
                nodes[leaf].lower, nodes[leaf].upper = low, high
                lower[leaf], upper[leaf] = low + 1, high + 1
            path = ancestors(int(parent[leaf]), parent)
            uct_kernels.propagate_bounds(path[-1], 0, kernel_context(arrays))
            propagate_bounds([nodes[i] for i in path])
            assert_same_bounds(nodes, arrays, boards)
        for index, node in enumerate(nodes):  # every leaf value was true, so every bound holds the truth
            if node is not None:
                assert node.lower <= value_for_mover_in(boards[index]) <= node.upper, boards[index].to_ascii()


def test_bounds_prove_a_draw_that_exact_proofs_alone_cannot() -> None:
    board = Board.from_ascii(
        """
        ..O..
        XXOOX
        OOXXO
        XXOOX
        """
    )  # X to move, four empty cells, nobody can win
    root = Node.expand(board, np.ones(5), 0.0)
    for column in board.legal_moves():
        after = board.copy()
        after.play(column)
        child = Node.expand(after, np.ones(5), 0.0)
        replies = after.legal_moves() if column == 0 else after.legal_moves()[:1]
        for reply in replies:  # after column 0 every reply is a proven draw, elsewhere only the first
            final = after.copy()
            final.play(reply)
            child.children[reply] = Node.expand(final, np.ones(5), 0.0)
            child.children[reply].lower = child.children[reply].upper = DRAW
        root.children[column] = child
        propagate_bounds([root, child])
        if column != 0:  # a draw for O and an untried reply: at most a draw for X, not proven
            assert (child.lower, child.upper, child.proof) == (LOSS, DRAW, None)
    # X's moves: one proven draw and three that are at most a draw, so the position is a draw: exact
    # proofs alone (every child proven) could not say it yet
    assert (root.lower, root.upper, root.proof) == (DRAW, DRAW, DRAW)


def test_every_bound_of_a_searched_tree_holds_the_solvers_value() -> None:
    rng = np.random.default_rng(0)
    proved = checked = 0
    for _ in range(30):
        board = random_board(rng, int(rng.integers(6, 14)), 4, 5, 4)
        if board.is_terminal:
            continue
        search = PUCTSearch(UniformEvaluator())
        (root,) = search.roots([board])
        search.run([root], 600)
        stack = [root]
        while stack:
            node = stack.pop()
            if node.lower > LOSS or node.upper < WIN:
                checked += 1
                assert node.lower <= value_for_mover_in(node.board) <= node.upper, node.board.to_ascii()
            stack.extend(child for child in node.children if child is not None)
        proved += root.proof is not None
    assert proved >= 8 and checked >= 200


@pytest.mark.slow  # about 5 s on 2 cores (over 3 s): make test-slow, CI runs it
@heavy_without_numba
def test_proofs_agree_with_the_solver() -> None:
    rng = np.random.default_rng(0)
    proved = 0
    for _ in range(40):
        board = random_board(rng, int(rng.integers(6, 14)), 4, 5, 4)
        if board.is_terminal:
            continue
        result = PUCTSearch(UniformEvaluator()).search(board, 1500)
        scores = solver_for(board).evaluate_board(board)
        for column, proof in enumerate(result.proven):
            if proof is not None:  # a proof is never wrong
                assert proof == outcome(scores[column]), (board.to_ascii(), column)
        if result.root_proven is not None:
            proved += 1
            assert result.root_proven == outcome(max(s for s in scores if s is not None))
            best = np.flatnonzero(result.policy(0))
            assert all(outcome(scores[c]) == result.root_proven for c in best)
    assert proved >= 10


# --- the search around the proofs ---


def test_leaves_of_many_games_go_in_one_call() -> None:
    evaluator = SolverEvaluator()
    search = PUCTSearch(evaluator)
    rules = Rules(4, 5, 4)
    boards = [random_board(np.random.default_rng(seed), 4, 4, 5, 4) for seed in range(6)]
    boards = [b for b in boards if not b.is_terminal]
    roots = search.roots(boards)
    assert evaluator.calls == [len(boards)]
    search.run(roots, 30)
    assert len(evaluator.calls) <= 31 and max(evaluator.calls) <= len(boards)
    # lockstep gives each tree what a search of its own gives (the evaluator is deterministic)
    for board, root in zip(boards, roots):
        alone = PUCTSearch(SolverEvaluator()).search(board, 30)
        assert np.array_equal(alone.visits, root.visits), rules


@heavy_without_numba
def test_a_perfect_evaluator_plays_perfectly() -> None:
    positions = load_test_set("4x5")[:40]
    search = PUCTSearch(SolverEvaluator())
    for position in positions:
        result = search.search(position.board(), 60)
        column = int(np.argmax(result.policy(0)))
        assert outcome(position.move_scores[column]) == outcome(position.score)


def test_rollout_evaluator() -> None:
    evaluator = RolloutEvaluator(rollouts=50, seed=0)
    lost = Board.from_ascii(LOST)  # O to move cannot stop both ends: rollouts mostly lose
    priors, values = evaluator.evaluate([lost, Board()])
    assert priors.shape == (2, 7) and np.all(np.abs(values) <= 1) and values[0] < values[1]
    result = PUCTSearch(RolloutEvaluator(seed=1)).search(Board.from_ascii(WIN_IN_ONE), 100)
    assert int(np.argmax(result.policy(0))) in (2, 6)


def test_noise_and_temperature() -> None:
    board = Board()
    plain = PUCTSearch(UniformEvaluator()).roots([board])[0]
    noisy = PUCTSearch(UniformEvaluator(), noise=0.25, seed=1).roots([board])[0]
    assert np.allclose(plain.priors, 1 / 7) and noisy.priors.sum() == pytest.approx(1.0)
    assert not np.allclose(noisy.priors, plain.priors)
    full = Board.from_ascii("O......\nX......\nO......\nX......\nO......\nX......")  # column 0 full
    result = PUCTSearch(UniformEvaluator()).search(full, 300)
    assert result.policy(1.0)[0] == 0 and result.policy(0)[0] == 0
    sharp, flat = result.policy(0.1), result.policy(10.0)
    assert sharp.max() >= result.policy(1.0).max() >= flat.max()
    won = Board.from_ascii(".......\n.......\nX......\nXO.....\nXO.....\nXO.....")
    with pytest.raises(ValueError, match="finished"):
        PUCTSearch(UniformEvaluator()).search(won, 10)


def _reference_select(node: Node, c_puct: float, fpu: float) -> int:
    """PUCT's choice written with numpy over whole arrays, as the search did before its per-column loop."""
    q = node.q(fpu)
    u = c_puct * node.priors * np.sqrt(max(1, node.total_visits)) / (1 + node.visits)
    return int(np.argmax(np.where(node.legal, q + u, -np.inf)))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 9),
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.0, 0.25, 1.0]),
    st.sampled_from([0.5, 1.5, 4.0]),
)
def test_selection_is_the_argmax_of_q_plus_u(columns: int, seed: int, fpu: float, c_puct: float) -> None:
    # the search's column-by-column selection against the whole-array formula, on nodes with any visits,
    # value sums, priors (ties included), illegal columns and children with bounds
    rng = np.random.default_rng(seed)
    legal = rng.random(columns) < 0.8
    legal[rng.integers(columns)] = True
    board = Board(Rules(4, columns, 3))
    priors = rng.choice([0.0, 0.1, 0.25, rng.random()], size=columns) * legal
    node = Node(board, priors=priors, legal=legal, children=[None] * columns, estimate=rng.uniform(-1, 1))
    node.visits[:] = rng.choice([0, 0, 1, 3, 50], size=columns) * legal
    node.value_sum[:] = node.visits * rng.uniform(-1, 1, size=columns)
    for column in np.flatnonzero(legal):
        if rng.random() < 0.4:
            child = Node(board, priors=np.zeros(columns), legal=np.zeros(columns, bool), children=[])
            child.lower, child.upper = sorted(rng.choice([LOSS, DRAW, WIN], size=2))
            node.children[column] = child
    search = PUCTSearch(UniformEvaluator(), c_puct=c_puct, fpu=fpu)
    assert search._select(node) == _reference_select(node, c_puct, fpu)
