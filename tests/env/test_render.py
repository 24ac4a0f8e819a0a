"""SVG boards, the winning line, and digit keys for gymnasium's ``play``."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import gymnasium as gym
import numpy as np
import pytest
from helpers.extras import importorskip
from helpers.reference import ReferenceGame
from hypothesis import given, settings
from hypothesis import strategies as st

from connect4_env import Board, Rules
from connect4_env.render import to_svg
from connect4_env.svg import MAX_SVG_CELLS, draw_svg

SVG = "{http://www.w3.org/2000/svg}"


def circles(svg: str, kind: str) -> list[tuple[float, float]]:
    root = ET.fromstring(svg)
    return [
        (float(c.get("cx")), float(c.get("cy"))) for c in root.iter(f"{SVG}circle") if c.get("class") == kind
    ]


def reference_winning_cells(game: ReferenceGame) -> list[tuple[int, int]]:
    """Every cell of every line of win_length equal stones, by scanning all cells and directions."""
    cells = set()
    for row in range(game.rows):
        for column in range(game.columns):
            for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                if game.line_owner(row, column, d_row, d_col) is not None:
                    cells.update((row + k * d_row, column + k * d_col) for k in range(game.win_length))
    return sorted(cells)


def test_diagonal_win_is_outlined():
    board = Board.from_moves([0, 1, 1, 2, 2, 3, 2, 3, 3, 5, 3])
    assert board.winner == 0
    assert board.winning_cells() == [(2, 3), (3, 2), (4, 1), (5, 0)]
    svg = to_svg(board, tile=10)
    assert sorted(circles(svg, "winning")) == sorted(
        (c * 10 + 5, r * 10 + 5) for r, c in board.winning_cells()
    )
    assert circles(svg, "last-move") == [(35.0, 25.0)]  # column 3, row 2 from the top
    assert len(circles(svg, "player0")) == 6 and len(circles(svg, "player1")) == 5
    assert len(circles(svg, "empty")) == 42 - 11
    plain = to_svg(board, last_move=False, winning_line=False)
    assert not circles(plain, "winning") and not circles(plain, "last-move")


@settings(max_examples=60, deadline=None)
@given(
    size=st.sampled_from([(6, 7, 4), (4, 5, 3), (3, 9, 3), (7, 4, 4), (5, 5, 2)]),
    moves=st.lists(st.integers(0, 8), max_size=40),
)
def test_winning_cells_and_circles_match_the_reference(size, moves):
    rows, columns, win_length = size
    board = Board(Rules(rows, columns, win_length))
    game = ReferenceGame(rows, columns, win_length)
    for move in moves:
        column = move % columns
        if board.is_terminal or not board.is_legal(column):
            continue
        board.play(column)
        game.play(column)
    expected = reference_winning_cells(game) if game.winner() is not None else []
    assert board.winning_cells() == expected
    svg = to_svg(board, tile=8)
    for owner, kind in ((0, "player0"), (1, "player1"), (None, "empty")):
        drawn = sorted(circles(svg, kind))
        assert drawn == sorted(
            (c * 8 + 4.0, r * 8 + 4.0)
            for r in range(rows)
            for c in range(columns)
            if game.grid[r][c] == owner
        )


def test_repr_svg_and_any_size():
    assert Board()._repr_svg_().startswith("<svg")
    svg = to_svg(Board(Rules(1, 30, 2)))
    assert len(circles(svg, "empty")) == 30


def test_bad_arguments():
    with pytest.raises(TypeError, match="Board"):
        to_svg("board")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="last_move"):
        to_svg(Board(), last_move="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tile"):
        to_svg(Board(), tile=0)
    with pytest.raises(ValueError, match="cells"):
        to_svg(Board(Rules(1000, 1000, 4)))
    assert MAX_SVG_CELLS >= 100_000


def test_draw_svg_checks_its_plain_data():
    """draw_svg is public and takes plain data: every part is checked (type, then value) before drawing."""
    grid = [[0, 1, 2], [2, 1, 0]]
    svg = draw_svg(grid, ply=4, last_cell=(1, 2), winning_cells=[(0, 1), (1, 1)], tile=10)
    assert len(circles(svg, "player0")) == 2 and len(circles(svg, "player1")) == 2
    assert circles(svg, "last-move") == [(25.0, 15.0)]
    assert draw_svg(np.array(grid), ply=4) == draw_svg(grid, ply=4)  # a numpy grid draws the same
    bad = [
        (TypeError, "owners", {"owners": "012"}),
        (TypeError, "owners\\[1\\]", {"owners": [[0, 1], 5]}),
        (ValueError, "rectangular", {"owners": [[0, 1], [0]]}),
        (ValueError, "owners\\[0\\]\\[1\\]", {"owners": [[0, 3]]}),
        (ValueError, "owners\\[0\\]\\[0\\]", {"owners": [[-1]]}),
        (TypeError, "owners\\[0\\]\\[0\\]", {"owners": [[True]]}),
        (TypeError, "ply", {"ply": 1.5}),
        (ValueError, "ply", {"ply": 7}),
        (TypeError, "last_cell", {"last_cell": 3}),
        (ValueError, "last_cell's row", {"last_cell": (2, 0)}),
        (ValueError, "last_cell", {"last_cell": (0, 1, 2)}),
        (ValueError, "winning_cells\\[0\\]'s column", {"winning_cells": [(0, -1)]}),
        (TypeError, "winning_cells", {"winning_cells": 7}),
        (ValueError, "winning_cells holds", {"winning_cells": [(0, 0)] * 7}),
        (ValueError, "cells", {"owners": [[0] * 1000] * 1000}),
    ]
    for error, message, change in bad:
        arguments = {"owners": grid, "ply": 0, **change}
        with pytest.raises(error, match=message):
            draw_svg(**arguments)


def test_keys_to_action():
    env = gym.make("Connect4-v0")
    assert env.unwrapped.get_keys_to_action() == {(ord(str(c + 1)),): c for c in range(7)}
    wide = gym.make("Connect4-v0", columns=12)
    keys = wide.unwrapped.get_keys_to_action()
    assert keys[(ord("0"),)] == 9 and len(keys) == 10


# gymnasium.utils.play warns about its own plotting helper (which needs TkAgg), not used here
@pytest.mark.filterwarnings("ignore:.*matplotlib is not installed:UserWarning")
def test_gymnasium_play_drops_stones_on_digit_keys(monkeypatch):
    pygame = importorskip("pygame")
    from gymnasium.utils.play import play

    script = [
        [pygame.event.Event(pygame.KEYDOWN, key=ord("4"))],
        [pygame.event.Event(pygame.KEYUP, key=ord("4"))],
        [],  # no key held: with wait_on_player=True nothing is played
        [pygame.event.Event(pygame.KEYDOWN, key=ord("2"))],
        [pygame.event.Event(pygame.KEYUP, key=ord("2"))],
        [pygame.event.Event(pygame.QUIT)],
    ]
    monkeypatch.setattr(
        pygame.event, "get", lambda: script.pop(0) if script else [pygame.event.Event(pygame.QUIT)]
    )
    played: list[int] = []
    env = gym.make("Connect4-v0", render_mode="rgb_array", opponent="random", agent_first=True)
    play(env, wait_on_player=True, fps=1000, seed=0, callback=lambda *step: played.append(int(step[2])))
    assert played == [3, 1]
    board = env.unwrapped.board
    assert board.ply == 4 and np.count_nonzero(board.heights) >= 2


def test_notebook_svg_is_to_svg_drawn_without_the_renderers() -> None:
    board = Board.from_ascii(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . O . . .
        . . X O . . .
        . X X O X . .
        """
    )
    board.play(3)  # O completes column 3: a vertical line, ringed, with the last move
    assert board._repr_svg_() == to_svg(board)
    board = Board.from_moves("3344556")  # X wins on the bottom row: ringed line and last move
    assert board.last_cell() == (5, 6)
    assert board._repr_svg_() == to_svg(board)
    assert Board().last_cell() is None
    with pytest.raises(ValueError, match="cells"):
        Board(Rules(1000, 1000, 4))._repr_svg_()
