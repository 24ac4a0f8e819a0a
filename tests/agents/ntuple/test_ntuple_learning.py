"""The n-tuple network against slow, obviously-correct references: tuple indexing and mirror symmetry by brute
force on the Board, and the TD(lambda) self-play update replayed in plain Python, move by move."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.extras import heavy_without_numba
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_agents.evaluation.test_sets import load_test_set
from connect4_agents.ntuple import LearnerSettings, NTupleNetwork, NTupleTrainer
from connect4_agents.ntuple.train import trace_horizon
from connect4_agents.ntuple.tuples import mirror_tuples, random_walk_tuples
from connect4_env.core import Board
from connect4_env.kernels import xorshift32
from connect4_env.rules import Rules

BOARDS = [Rules(6, 7, 4), Rules(4, 5, 4), Rules(5, 4, 3), Rules(4, 4, 3)]


def cell_state(board: Board, column: int, row: int) -> int:
    """0 empty and unplayable, 1 first player's stone, 2 second player's, 3 empty and playable."""
    owner = board.cell(board.rules.rows - 1 - row, column)
    if owner is not None:
        return owner + 1
    return 3 if board.heights[column] == row else 0


def slow_value(network: NTupleNetwork, board: Board, side: int) -> float:
    """tanh of the sum over tuples and mirror images, indices read from Board.cell one cell at a time."""
    height = network.rules.height
    total = 0.0
    for k, cells in enumerate(network.rows.tolist()):
        index = 0
        for cell in cells:
            column, row = divmod(cell, height)
            index = index * 4 + cell_state(board, column, row)
        total += float(network.weights[side, k % network.n_tuples, index])
    return math.tanh(total)


def slow_move_values(network: NTupleNetwork, board: Board) -> list[float]:
    """Each column's afterstate value for the mover, by playing it on a copy of the board."""
    values = []
    for column in range(board.rules.columns):
        if not board.is_legal(column):
            values.append(math.nan)
            continue
        after = board.copy()
        after.play(column)
        if after.winner is not None:
            values.append(1.0)
        elif after.is_draw:
            values.append(0.0)
        else:
            value = slow_value(network, after, board.to_move)
            values.append(value if board.to_move == 0 else -value)
    return values


def random_network(rules: Rules, seed: int, compiled: bool | None = None) -> NTupleNetwork:
    network = NTupleNetwork.create(rules, n_tuples=6, length=4, seed=seed, compiled=compiled)
    network.weights[:] = np.random.default_rng(seed).normal(0.0, 0.4, network.weights.shape)
    return network


@settings(max_examples=25, deadline=None)
@given(
    rules=st.sampled_from(BOARDS),
    seed=st.integers(0, 2**16),
    moves=st.lists(st.integers(0, 6), max_size=30),
    compiled=st.sampled_from([None, False]),
)
def test_move_values_match_brute_force(
    rules: Rules, seed: int, moves: list[int], compiled: bool | None
) -> None:
    network = random_network(rules, seed, compiled)
    board = Board(rules)
    for move in moves:
        column = move % rules.columns
        if board.is_terminal or not board.is_legal(column):
            continue
        board.play(column)
    if board.is_terminal:
        return
    fast = network.move_values(board)
    slow = slow_move_values(network, board)
    np.testing.assert_allclose(fast, slow, rtol=1e-5, atol=1e-6, err_msg=board.to_ascii())


def test_a_board_larger_than_63_bits_plays_in_plain_python() -> None:
    rules = Rules(9, 7, 4)  # 70 bits: no compiled build
    network = random_network(rules, 3)
    assert not network.kernels.compiled
    board = Board(rules).play_moves([3, 3, 4, 0, 6])
    np.testing.assert_allclose(network.move_values(board), slow_move_values(network, board), rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), moves=st.lists(st.integers(0, 6), max_size=25))
def test_a_position_and_its_mirror_image_have_mirrored_values(seed: int, moves: list[int]) -> None:
    network = random_network(Rules(), seed)
    board = Board()
    played = []
    for column in moves:
        if not board.is_terminal and board.is_legal(column):
            board.play(column)
            played.append(column)
    if board.is_terminal:
        return
    mirrored = Board.from_moves([6 - c for c in played])
    np.testing.assert_allclose(network.move_values(mirrored), network.move_values(board)[::-1], rtol=1e-5)


def test_random_walk_tuples_are_connected_distinct_and_on_the_board() -> None:
    for rules in BOARDS:
        tuples = random_walk_tuples(rules, 12, 4, seed=5)
        seen = set()
        for cells in tuples.tolist():
            places = [divmod(cell, rules.height) for cell in cells]
            assert len(set(cells)) == len(cells)
            assert all(0 <= c < rules.columns and 0 <= r < rules.rows for c, r in places)
            for (c0, r0), (c1, r1) in zip(places, places[1:]):  # each cell a neighbour of the one before
                assert max(abs(c0 - c1), abs(r0 - r1)) == 1
            mirrored = frozenset(mirror_tuples(rules, np.array(cells)).tolist())
            assert frozenset(cells) not in seen and mirrored not in seen
            seen.add(frozenset(cells))
    with pytest.raises(ValueError, match="could not find 2 distinct tuples"):
        random_walk_tuples(Rules(4, 4, 3), 2, 16, seed=0)  # only one set of 16 cells exists
    with pytest.raises(ValueError, match="does not fit"):
        random_walk_tuples(Rules(4, 4, 3), 1, 17, seed=0)


def test_trace_horizon_keeps_the_decays_above_one_percent() -> None:
    assert trace_horizon(0.0) == 1
    assert trace_horizon(0.5) == 7  # 0.5**7 < 0.01 <= 0.5**6
    assert 0.8 ** trace_horizon(0.8) < 0.01 <= 0.8 ** (trace_horizon(0.8) - 1)


class Reference:
    """TD(lambda) self-play written out plainly: Board moves, Python floats, the trace a list."""

    def __init__(self, network: NTupleNetwork, settings: LearnerSettings, rng_state: int) -> None:
        self.network = network
        self.settings = settings
        self.rng = rng_state
        self.horizon = trace_horizon(settings.trace_decay)

    def uniform(self) -> float:
        self.rng = xorshift32(self.rng)
        return self.rng / 4294967296.0

    def indices(self, board: Board) -> list[int]:
        height = self.network.rules.height
        found = []
        for cells in self.network.rows.tolist():
            index = 0
            for cell in cells:
                column, row = divmod(cell, height)
                index = index * 4 + cell_state(board, column, row)
            found.append(index)
        return found

    def game(self, alpha: float, epsilon: float) -> None:
        network, weights, n = self.network, self.network.weights, self.network.n_tuples
        board = Board(network.rules)
        trace: list[tuple[int, list[int], float]] = []  # (side, indices, gradient), newest first
        while True:
            mover = board.to_move
            values = [
                v if mover == 0 else -v for v in slow_move_values(network, board)
            ]  # first player's view
            legal = board.legal_moves()
            explore = self.uniform() < epsilon
            if explore:
                column = legal[int(self.uniform() * len(legal))]
            else:
                scores = [values[c] if mover == 0 else -values[c] for c in legal]
                column = legal[scores.index(max(scores))]
            target = values[column]
            board.play(column)
            if board.winner is not None:
                target = 1.0 if board.winner == 0 else -1.0
            elif board.is_draw:
                target = 0.0
            if explore:
                trace = []
            elif trace:
                side, indices, _ = trace[0]
                previous = math.tanh(sum(float(weights[side, k % n, i]) for k, i in enumerate(indices)))
                trace[0] = (side, indices, 1.0 - previous * previous)
                delta = target - previous
                for age, (side, indices, gradient) in enumerate(trace):
                    step = alpha * self.settings.trace_decay**age * delta * gradient
                    for k, i in enumerate(indices):
                        weights[side, k % n, i] += np.float32(step)
            if board.is_terminal:
                return
            trace = [(mover, self.indices(board), 0.0), *trace][: self.horizon]


@pytest.mark.parametrize("trace_decay", [0.0, 0.5, 0.9])
@pytest.mark.parametrize("compiled", [None, False])
def test_self_play_learns_exactly_as_the_plain_reference(trace_decay: float, compiled: bool | None) -> None:
    rules = Rules(4, 4, 3)
    settings = LearnerSettings(
        alpha=0.6, alpha_final=0.6, trace_decay=trace_decay, epsilon=0.3, epsilon_final=0.3
    )
    fast = NTupleNetwork.create(rules, n_tuples=5, length=4, seed=1, compiled=compiled)
    slow = NTupleNetwork.create(rules, n_tuples=5, length=4, seed=1, compiled=False)
    trainer = NTupleTrainer(fast, settings, games=40, seed=7)
    reference = Reference(slow, settings, int(trainer.rng[0]))
    trainer.train(40)
    alpha = settings.alpha / fast.rows.shape[0]
    for _ in range(40):
        reference.game(alpha, settings.epsilon)
    assert np.abs(fast.weights).sum() > 0
    np.testing.assert_allclose(fast.weights, slow.weights, rtol=1e-4, atol=1e-6)
    assert int(trainer.rng[0]) == reference.rng


def test_a_run_resumed_from_its_checkpoint_ends_as_one_run_would(tmp_path) -> None:
    rules = Rules(4, 5, 4)

    def trainer() -> NTupleTrainer:
        return NTupleTrainer(NTupleNetwork.create(rules, 8, 5, seed=2), games=600, seed=4)

    whole = trainer()
    for _ in range(3):
        whole.train(200)
    parted = trainer()
    parted.train(200)
    parted.save(tmp_path / "checkpoint.npz")
    resumed = NTupleTrainer.resume(tmp_path / "checkpoint.npz")
    resumed.train(200)
    resumed.train(200)
    assert resumed.done and resumed.games == whole.games == 600
    np.testing.assert_array_equal(resumed.network.weights, whole.network.weights)
    assert resumed.state() | {"train_seconds": 0} == whole.state() | {"train_seconds": 0}


def nontrivial_errors(network: NTupleNetwork, name: str) -> float:
    positions = [p for p in load_test_set(name) if p.nontrivial]
    wrong = 0
    for position in positions:
        values = network.move_values(position.board())
        column = int(np.nanargmax(values))
        score = position.move_scores[column]
        wrong += (score > 0) - (score < 0) != position.outcome
    return wrong / len(positions)


@heavy_without_numba  # 20,000 games: three minutes in plain Python
def test_self_play_learns_a_small_board() -> None:
    """4x4 with 3 in a row: 20,000 games of self-play (well under a second compiled) take the greedy network
    from about 60 % wrong moves on the shipped set's non-trivial positions to under a quarter."""
    rules = Rules(4, 4, 3)
    network = NTupleNetwork.create(rules, n_tuples=24, length=5, seed=0)
    untrained = nontrivial_errors(network, "4x4-w3")
    trainer = NTupleTrainer(network, games=20_000, seed=1)
    while not trainer.done:
        trainer.train(5000)
    trained = nontrivial_errors(network, "4x4-w3")
    assert untrained > 0.5
    assert trained < 0.25, f"{trained:.1%} of non-trivial moves wrong after training"
