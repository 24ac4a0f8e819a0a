"""A slow, obviously-correct Connect Four to test the fast code against.

A list-of-lists grid (row 0 = top), gravity by scanning a column from the bottom, and a winner found by
checking every cell and direction for ``win_length`` equal stones. No bit tricks, nothing clever.
"""

from __future__ import annotations

import functools


class ReferenceGame:
    def __init__(self, rows: int, columns: int, win_length: int) -> None:
        self.rows, self.columns, self.win_length = rows, columns, win_length
        self.grid = [[None] * columns for _ in range(rows)]  # None, 0 (first player) or 1
        self.to_move = 0
        self.moves = 0

    def copy(self) -> ReferenceGame:
        clone = ReferenceGame(self.rows, self.columns, self.win_length)
        clone.grid = [row[:] for row in self.grid]
        clone.to_move, clone.moves = self.to_move, self.moves
        return clone

    def legal_moves(self) -> list[int]:
        if self.winner() is not None:
            return []
        return [c for c in range(self.columns) if self.grid[0][c] is None]

    def play(self, column: int) -> None:
        assert column in self.legal_moves()
        for row in range(self.rows - 1, -1, -1):
            if self.grid[row][column] is None:
                self.grid[row][column] = self.to_move
                break
        self.to_move = 1 - self.to_move
        self.moves += 1

    def line_owner(self, row: int, column: int, d_row: int, d_col: int) -> int | None:
        """The player owning all win_length cells from (row, column) in a direction, if any."""
        owner = self.grid[row][column]
        if owner is None:
            return None
        for k in range(1, self.win_length):
            r, c = row + k * d_row, column + k * d_col
            if not (0 <= r < self.rows and 0 <= c < self.columns) or self.grid[r][c] != owner:
                return None
        return owner

    def winner(self) -> int | None:
        for row in range(self.rows):
            for column in range(self.columns):
                for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                    owner = self.line_owner(row, column, d_row, d_col)
                    if owner is not None:
                        return owner
        return None

    def is_draw(self) -> bool:
        return self.winner() is None and self.moves == self.rows * self.columns

    def planes(self, player: int) -> list[list[list[int]]]:
        """(rows, columns, 2) nested lists: plane 0 the player's stones, plane 1 the opponent's."""
        return [[[int(cell == player), int(cell == 1 - player)] for cell in row] for row in self.grid]


def reference_scores(game: ReferenceGame, memo: dict | None = None) -> list[int | None]:
    """Exact score of every column for the player to move, by plain minimax over the whole game tree.

    A win completed by the board's w-th stone scores ``cells + 1 - w`` for the winner (the negative for the
    loser), a draw 0; None for a full column. Only for small boards.
    """
    memo = {} if memo is None else memo
    cells = game.rows * game.columns
    scores: list[int | None] = [None] * game.columns
    for column in game.legal_moves():
        child = game.copy()
        child.play(column)
        if child.winner() is not None:
            scores[column] = cells + 1 - child.moves
        elif child.moves == cells:
            scores[column] = 0
        else:
            key = tuple(tuple(row) for row in child.grid)
            if key not in memo:
                memo[key] = max(s for s in reference_scores(child, memo) if s is not None)
            scores[column] = -memo[key]
    return scores


def random_board(rng, plies: int, rows: int = 6, columns: int = 7, win_length: int = 4):
    """A ``connect4_env.Board`` after up to ``plies`` uniformly random legal moves (fewer if the game ends)."""
    from connect4_env import Board, Rules

    board = Board(Rules(rows, columns, win_length))
    for _ in range(plies):
        if board.is_terminal:
            break
        legal = board.legal_moves()
        board.play(legal[int(rng.integers(len(legal)))])
    return board


def board_move_values(board) -> dict[int, int]:
    """Every legal column's exact score for the player to move on a ``connect4_env.Board``, scored as
    ``reference_scores`` scores them, by the same plain negamax over the whole game tree but on the package's own
    rules (themselves tested against ``ReferenceGame``): five times faster, for the tests of code above the rules.
    Only for small boards."""
    return {column: _board_move_value(board, column) for column in board.legal_moves()}


def _board_move_value(board, column: int) -> int:
    after = board.copy()
    after.play(column)
    if after.is_terminal:
        return 0 if after.winner is None else after.rules.cells + 1 - after.ply
    return -_board_position_value(after.rules, after.stones[0], after.stones[1])


@functools.cache
def _board_position_value(rules, first: int, second: int) -> int:
    from connect4_env import Board

    board = Board.from_stones(rules, first, second)
    return max(_board_move_value(board, column) for column in board.legal_moves())
