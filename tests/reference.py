"""A slow, obviously-correct Connect Four to test the fast code against.

A list-of-lists grid (row 0 = top), gravity by scanning a column from the bottom, and a winner found by
checking every cell and direction for ``win_length`` equal stones. No bit tricks, nothing clever.
"""

from __future__ import annotations


class ReferenceGame:
    def __init__(self, rows: int, columns: int, win_length: int) -> None:
        self.rows, self.columns, self.win_length = rows, columns, win_length
        self.grid = [[None] * columns for _ in range(rows)]  # None, 0 (first player) or 1
        self.to_move = 0
        self.moves = 0

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
