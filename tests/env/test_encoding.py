"""Observation planes <-> boards, against the reference."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.reference import ReferenceGame
from helpers.strategies import board_sizes
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_env import Rules, board_from_observation, observation_planes
from connect4_env.encoding import TrackedBoard, action_mask, split_observation


@settings(max_examples=100, deadline=None)
@given(size=board_sizes(), data=st.data())
def test_planes_tracked_and_decoded_agree_with_reference(
    size: tuple[int, int, int], data: st.DataObject
) -> None:
    rows, columns, win_length = size
    tracked = TrackedBoard(Rules(rows, columns, win_length))
    reference = ReferenceGame(rows, columns, win_length)
    while True:
        board = tracked.board
        for player in (0, 1):
            expected = np.array(reference.planes(player), dtype=np.int8)
            np.testing.assert_array_equal(observation_planes(board, player), expected)
            np.testing.assert_array_equal(tracked.observation(player), expected)
        mover_view = observation_planes(board)
        if board.winner is None:  # a decided position decodes too, but check the live ones move by move
            decoded = board_from_observation(mover_view, win_length)
            assert decoded == board and decoded.to_move == board.to_move
        legal = reference.legal_moves()
        expected_mask = np.zeros(columns, dtype=np.int8)
        expected_mask[legal] = 1
        np.testing.assert_array_equal(action_mask(board), expected_mask)
        if not legal:
            break
        column = data.draw(st.sampled_from(legal))
        tracked.play(column)
        reference.play(column)


def test_decoding_refuses_impossible_planes() -> None:
    planes = np.zeros((6, 7, 2), dtype=np.int8)
    planes[5, 0, 0] = planes[5, 1, 0] = 1  # the mover has two stones more than the opponent
    with pytest.raises(ValueError, match="impossible stone counts"):
        board_from_observation(planes)
    planes = np.zeros((6, 7, 2), dtype=np.int8)
    planes[0, 0, 1] = 1  # floating stone
    with pytest.raises(ValueError, match="above an empty cell"):
        board_from_observation(planes)
    with pytest.raises(ValueError, match="only 0 and 1"):
        board_from_observation(np.full((6, 7, 2), 2, dtype=np.int8))
    with pytest.raises(ValueError, match="shape"):
        board_from_observation(np.zeros((6, 7), dtype=np.int8))


def test_split_observation_accepts_dicts_and_checks_shapes() -> None:
    obs = {"observation": np.zeros((4, 5, 2), np.int8), "action_mask": np.ones(5, np.int8)}
    planes, mask = split_observation(obs)
    assert planes.shape == (4, 5, 2) and mask.shape == (5,)
    with pytest.raises(ValueError, match="action_mask must have shape"):
        split_observation(obs["observation"], np.ones(4))
    with pytest.raises(ValueError, match="action_mask is required"):
        split_observation(obs["observation"])
