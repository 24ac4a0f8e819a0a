"""BatchedBoards (plain-Python and numba builds of the rules kernels) against the single-board core, move by move."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.extras import importorskip
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_env.batched import BatchedBoards
from connect4_env.core import Board
from connect4_env.rules import Rules

SIZES = [(6, 7, 4), (4, 5, 3), (5, 4, 4), (3, 9, 5), (6, 9, 4), (7, 8, 4), (2, 40, 6), (1, 3, 2), (8, 9, 5)]
BUILDS = [False, None]  # plain Python; numba when installed and the board fits in 63 bits


@pytest.mark.parametrize("compiled", BUILDS)
@settings(max_examples=40, deadline=None)
@given(size=st.sampled_from(SIZES), seed=st.integers(0, 2**32 - 1))
def test_batched_play_and_undo_follow_the_core(compiled: bool | None, size: tuple, seed: int) -> None:
    rules = Rules(*size)
    rng = np.random.default_rng(seed)
    n = 6
    boards = BatchedBoards(rules, n, compiled=compiled)
    singles = [Board(rules) for _ in range(n)]
    history: list[tuple[np.ndarray, np.ndarray]] = []
    while True:
        live = [i for i, b in enumerate(singles) if not b.is_terminal]
        if not live:
            break
        index = np.array(sorted(rng.choice(live, size=rng.integers(1, len(live) + 1), replace=False)))
        columns = np.array([rng.choice(singles[i].legal_moves()) for i in index])
        won, full = boards.play(index, columns)
        history.append((index, columns))
        for k, i in enumerate(index):
            singles[i].play(int(columns[k]))
            assert won[k] == (singles[i].winner is not None)
            assert full[k] == (singles[i].ply == rules.cells)
        for i in range(n):
            assert boards.board(i) == singles[i]
            np.testing.assert_array_equal(
                boards.legal(slice(i, i + 1))[0], [h < rules.rows for h in singles[i].heights]
            )
    for index, columns in reversed(history):
        boards.undo(index, columns)
    assert not boards.stones.any() and not boards.heights.any() and not boards.ply.any()


def test_the_compiled_build_is_used_when_numba_is_installed() -> None:
    importorskip("numba")
    assert BatchedBoards(Rules(), 4).compiled
    assert BatchedBoards(Rules(6, 9, 4), 4).compiled  # 63 bits: the most int64 holds
    assert not BatchedBoards(Rules(), 4, compiled=False).compiled
    big = BatchedBoards(Rules(7, 8, 4), 4)  # 64 bits: over int64, Python ints in object arrays
    assert not big.compiled and big.stones.dtype == object
    with pytest.raises(ValueError, match="63 bits"):
        BatchedBoards(Rules(9, 9, 4), 4, compiled=True)


def test_a_pickled_batch_plays_on_identically() -> None:
    import pickle

    boards = BatchedBoards(Rules(), 3)
    boards.play(np.array([0, 2]), np.array([3, 4]))
    copy = pickle.loads(pickle.dumps(boards))
    moves = (np.array([0, 1, 2]), np.array([3, 3, 4]))
    assert [a.tolist() for a in boards.play(*moves)] == [a.tolist() for a in copy.play(*moves)]
    assert [boards.board(i) for i in range(3)] == [copy.board(i) for i in range(3)]
