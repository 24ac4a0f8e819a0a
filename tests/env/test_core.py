"""The rules core against the slow reference, plus configuration, ASCII and copying."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from helpers.reference import ReferenceGame
from helpers.strategies import board_sizes
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_env.core import Board
from connect4_env.rules import IllegalMoveError, Rules, as_column, check_size


@settings(max_examples=300, deadline=None)
@given(size=board_sizes(), data=st.data())
def test_random_games_agree_with_reference_move_by_move(
    size: tuple[int, int, int], data: st.DataObject
) -> None:
    rows, columns, win_length = size
    board = Board(Rules(rows, columns, win_length))
    reference = ReferenceGame(rows, columns, win_length)
    while True:
        assert board.legal_moves() == reference.legal_moves()
        assert board.winner == reference.winner()
        assert board.is_draw == reference.is_draw()
        assert board.is_terminal == (not reference.legal_moves())
        assert board.to_move == reference.to_move
        for row in range(rows):
            for column in range(columns):
                assert board.cell(row, column) == reference.grid[row][column]
        legal = reference.legal_moves()
        if not legal:
            break
        column = data.draw(st.sampled_from(legal))
        won = board.play(column)
        reference.play(column)
        assert won == (reference.winner() is not None)


@settings(max_examples=100, deadline=None)
@given(size=board_sizes(), data=st.data())
def test_ascii_and_stones_round_trip(size: tuple[int, int, int], data: st.DataObject) -> None:
    rows, columns, win_length = size
    board = Board(Rules(rows, columns, win_length))
    for _ in range(data.draw(st.integers(0, rows * columns))):
        if board.is_terminal:
            break
        board.play(data.draw(st.sampled_from(board.legal_moves())))
    again = Board.from_ascii(board.to_ascii(), win_length=win_length)
    assert again == board
    assert again.heights == board.heights and again.ply == board.ply and again.winner == board.winner
    assert Board.from_stones(board.rules, *board.stones) == board


def test_ascii_format_shows_the_board() -> None:
    board = Board.from_moves([3, 3, 4])
    assert board.to_ascii().splitlines()[-3:] == [
        ". . . O . . .",
        ". . . X X . .",
        "0 1 2 3 4 5 6",
    ]
    assert Board.from_moves("334") == board


@pytest.mark.parametrize(
    ("text", "winner"),
    [
        (
            """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        O O O . . . .
        X X X X . . .
        """,
            0,
        ),
        (
            """
        . . . . . . .
        . . . . . . .
        . . . . . . O
        . . . . . O X
        . . . . O X X
        O O . O X X X
        """,
            1,
        ),
        (
            """
        . . . . . . .
        . . . . . . .
        X . . . . . .
        X O . . . . .
        X O . . . . .
        X O . . . . .
        """,
            0,
        ),
        (
            """
        . . . . . . .
        . . . . . . .
        X . . . . . .
        O X . . . . .
        O X X . . . .
        O O O X . X .
        """,
            0,
        ),
    ],
)
def test_wins_in_every_direction(text: str, winner: int) -> None:
    assert Board.from_ascii(text).winner == winner


def test_no_wrap_around_between_columns() -> None:
    # Four in a "line" only if the bit layout wrapped from the top of one column to the bottom of the next.
    board = Board.from_ascii(
        """
        . . . . . . .
        X . . . . . .
        X O . . . . .
        O X . . . . .
        O X . . . . .
        O X . . . . .
        """
    )
    assert board.winner is None


def test_draw_on_full_board() -> None:
    board = Board.from_moves([0, 1, 1, 0, 2, 2], Rules(2, 3, 3))
    assert board.is_draw and board.is_terminal and board.legal_moves() == []


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"win_length": 9}, ValueError, "win_length=9"),
        ({"rows": 0}, ValueError, "rows"),
        ({"columns": -1}, ValueError, "columns"),
        ({"rows": 2.5}, TypeError, "2.5"),
        ({"columns": "7"}, TypeError, "'7'"),
        ({"win_length": True}, TypeError, "True"),
        ({"win_length": 1}, ValueError, "win_length"),
        ({"rows": 1, "columns": 1, "win_length": 2}, ValueError, "win_length=2"),
    ],
)
def test_bad_configuration_names_the_value(kwargs: dict, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        Rules(**kwargs)


def test_numpy_integers_configure_a_board() -> None:
    assert check_size(np.int64(5), np.int32(4), np.int8(3)) == (5, 4, 3)


def test_illegal_moves_raise_and_change_nothing() -> None:
    board = Board.from_moves([0] * 6 + [1, 2])
    before = board.copy()
    for bad in (0, 7, -1):
        with pytest.raises(IllegalMoveError, match=f"column {bad}"):
            board.play(bad)
    for bad in (2.0, "3", None):
        with pytest.raises(TypeError):
            board.play(bad)  # type: ignore[arg-type]
    assert board == before and board.ply == before.ply
    finished = Board.from_moves("0101010")
    with pytest.raises(IllegalMoveError, match="game is over"):
        finished.play(3)


def test_as_column_accepts_integers_only() -> None:
    assert as_column(np.int64(3)) == 3 and as_column(np.array(2)) == 2
    for bad in (1.0, True, None, np.array([1]), np.float32(2), "1"):
        with pytest.raises(TypeError):
            as_column(bad)


@pytest.mark.parametrize(
    "text",
    [
        "X X\nX X",  # four stones for the first player, none for the second
        "X .\n. .",  # a stone above an empty cell
        "X O\nX O",  # both players have a line
        "X .\nX",  # rows of different widths
        "Z .",  # unknown symbol
    ],
)
def test_unreachable_positions_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Board.from_ascii(text, win_length=2)


def test_copy_is_independent_and_pickle_keeps_the_position() -> None:
    board = Board.from_moves("3322")
    clone = board.copy()
    clone.play(1)
    assert board.ply == 4 and clone.ply == 5
    for restored in (pickle.loads(pickle.dumps(board)), copy.deepcopy(board)):
        assert restored == board and restored.heights == board.heights and restored.last_move == 2
    assert pickle.loads(pickle.dumps(Rules(5, 4, 3))) == Rules(5, 4, 3)


def test_rules_are_immutable() -> None:
    with pytest.raises(AttributeError):
        Rules().rows = 3  # type: ignore[misc]


@given(size=board_sizes(), data=st.data())
def test_mirror_moves_every_cell_to_the_other_side(size: tuple[int, int, int], data: st.DataObject) -> None:
    # against the cell-by-cell definition, on any set of cells (sentinel bits included)
    rules = Rules(*size)
    cells = data.draw(
        st.sets(st.tuples(st.integers(0, rules.height - 1), st.integers(0, rules.columns - 1)), max_size=20)
    )
    stones = sum(1 << (column * rules.height + height) for height, column in cells)
    expected = sum(1 << ((rules.columns - 1 - column) * rules.height + height) for height, column in cells)
    assert rules.mirror(stones) == expected
    assert rules.mirror(expected) == stones
