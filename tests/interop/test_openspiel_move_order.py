"""move_order: one order of moves that reaches a position, against a forward search that tries every order,
on every kind of small board; won positions end on the winning stone; bad arguments and the search's limit."""

from __future__ import annotations

import numpy as np
import pytest

from connect4_env import Board, Rules
from connect4_env.integrations.openspiel.move_order import move_order


def test_move_orders_agree_with_a_forward_search_on_small_boards() -> None:
    """The order search (greedy, then a bounded search, with a no-search refutation) against the obviously
    correct one: every order of moves from the empty board, remembering positions that failed."""

    def reachable(target: Board) -> bool:
        failed: set[tuple[int, int]] = set()
        pending = [Board(target.rules)]
        while pending:
            board = pending.pop()
            if board.ply == target.ply:
                if board == target and board.winner == target.winner:
                    return True
                continue
            if board.winner is not None or tuple(board.stones) in failed:
                continue
            failed.add(tuple(board.stones))
            mover_stones = target.stones[board.ply & 1]
            for column in range(target.rules.columns):
                height = board.heights[column]
                if height < target.heights[column] and mover_stones & target.rules.stone_bit(column, height):
                    pending.append(board.copy())
                    pending[-1].play(column)
        return False

    rng = np.random.default_rng(3)
    checked = found = 0
    while checked < 400:
        rows, columns = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        if max(rows, columns) < 2:
            continue
        rules = Rules(rows, columns, int(rng.integers(2, max(rows, columns) + 1)))
        heights = np.bincount(rng.choice(columns, int(rng.integers(0, rules.cells + 1))), minlength=columns)
        if (heights > rows).any():
            continue
        owners = rng.permutation([0] * ((heights.sum() + 1) // 2) + [1] * (heights.sum() // 2))
        stones = [0, 0]
        cells = [(c, h) for c in range(columns) for h in range(heights[c])]
        for (column, height), owner in zip(cells, owners):
            stones[owner] |= rules.stone_bit(column, height)
        try:
            target = Board.from_stones(rules, *stones)
        except ValueError:
            continue
        checked += 1
        expected = reachable(target)
        try:
            order = move_order(target)
        except ValueError as error:
            assert not expected and "reaches" in str(error), target
            continue
        found += 1
        replayed = Board(rules).play_moves(order)
        assert expected and replayed == target and replayed.winner == target.winner
    assert 50 < found < checked  # both kinds were met


def test_a_won_position_ends_on_a_stone_of_every_line_and_the_last_move_is_kept_when_it_fits() -> None:
    for moves in ([3, 3, 4, 4, 5, 5, 6], [0, 1, 0, 1, 0, 1, 0], [3, 4, 4, 5, 5, 6, 5, 6, 6, 0, 6]):
        won = Board.from_moves(moves)
        assert won.winner == 0
        order = move_order(won)
        assert order[-1] == moves[-1] and Board.from_moves(order) == won
        stones_only = Board.from_stones(won.rules, *won.stones)
        replayed = Board.from_moves(move_order(stones_only))
        assert replayed == won and replayed.winner == 0
    two_lines = Board.from_ascii(
        """
        . . . . . . .
        . . . . . . .
        X . . . . . .
        X O . O . . .
        X O . O O . .
        X O O X X X X
        """
    )
    with pytest.raises(ValueError, match="no top stone of player 0 lies on every line"):
        move_order(two_lines)


def test_bad_arguments_and_the_search_limit() -> None:
    with pytest.raises(TypeError, match="board"):
        move_order("board")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="limit"):
        move_order(Board(), limit=-1)
    with pytest.raises(TypeError, match="limit"):
        move_order(Board(), limit=1.5)  # type: ignore[arg-type]
    assert move_order(Board()) == []
    # the greedy pass needs no search, so a limit of 0 still finds a played game's order
    played = Board.from_moves([3, 3, 2, 4, 4, 2, 5, 1])
    assert Board.from_moves(move_order(played, limit=0)) == played
