"""Pure Connect Four rules on bitboards, for any board size and win length: the position,
[`Board`][connect4_env.core.Board], on the configuration of `connect4_env.rules`.

One way to make an empty board, matching the agents' ``rules=``: ``Board()`` is 6x7 with four in a row and
``Board(rules)`` the board of a [`Rules`][connect4_env.rules.Rules] (``Board(Rules(5, 6, 3))``).

No Gymnasium, PettingZoo or pygame here: every other module calls this one, and nobody repeats the rules.

The bit layout of the bitboards is described in `connect4_env.rules`.
"""

from __future__ import annotations

from collections.abc import Iterable

from connect4_env.rules import (
    IllegalMoveError,
    Rules,
    as_column,
    check_rules,
    short_repr,
)
from connect4_env.svg import check_svg_size, draw_svg
from connect4_env.validation import check_int

__all__ = [
    "Board",
    "check_board",
]


class Board:
    """A mutable Connect Four position. ``copy()`` is cheap (a handful of ints).

    ``stones[p]`` is player ``p``'s bitboard (player 0 moves first), ``heights[c]`` the number of stones in
    column ``c``, ``ply`` the number of moves played, ``winner`` 0 or 1 once someone has a line (else None).

    Args:
        rules: the game, a [`Rules`][connect4_env.rules.Rules] (as the agents' ``rules=``); None (the
            default): 6x7 with four in a row.

    Raises:
        TypeError: ``rules`` is not None or a [`Rules`][connect4_env.rules.Rules].

    Examples:
        >>> board = Board.from_moves([3, 3, 4, 4, 5, 5])  # 0-based columns, first player first
        >>> board.to_move, board.legal_moves()
        (0, [0, 1, 2, 3, 4, 5, 6])
        >>> board.winning_moves()  # the first player completes four on the bottom row
        [2, 6]
        >>> board.play(6), board.winner, board.winning_cells()
        (True, 0, [(5, 3), (5, 4), (5, 5), (5, 6)])
        >>> print(board)
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . O O O .
        . . . X X X X
        0 1 2 3 4 5 6
    """

    __slots__ = ("rules", "stones", "heights", "ply", "winner", "last_move")

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = check_rules(rules, None) or Rules()
        self.stones = [0, 0]
        self.heights = [0] * self.rules.columns
        self.ply = 0
        self.winner: int | None = None
        self.last_move: int | None = None

    # -- state -------------------------------------------------------------------------------------------
    @property
    def to_move(self) -> int:
        """The player to move: 0 (first player) or 1."""
        return self.ply & 1

    @property
    def mask(self) -> int:
        """Bitboard of all stones."""
        return self.stones[0] | self.stones[1]

    @property
    def is_draw(self) -> bool:
        """True when the board is full and nobody has a line."""
        return self.winner is None and self.ply == self.rules.cells

    @property
    def is_terminal(self) -> bool:
        """True when the game is over: a player has a line or the board is full."""
        return self.winner is not None or self.ply == self.rules.cells

    def is_legal(self, column: int) -> bool:
        """True if ``column`` is in range, not full, and the game is not over.

        Any integer counts as [`play`][connect4_env.core.Board.play] takes it (a numpy integer too, as
        ``action_space.sample()`` gives).

        Raises:
            TypeError: ``column`` is not an integer (a float, a string, a bool, None).
        """
        if type(column) is not int:
            column = as_column(column)
        return (
            self.winner is None
            and 0 <= column < self.rules.columns
            and self.heights[column] < self.rules.rows
        )

    def legal_moves(self) -> list[int]:
        """Columns that can be played (empty once the game is over)."""
        if self.winner is not None:
            return []
        rows = self.rules.rows
        return [c for c, h in enumerate(self.heights) if h < rows]

    def winning_moves(self) -> list[int]:
        """The legal columns where the player to move completes a line at once (empty when the game is over)."""
        rules, stones = self.rules, self.stones[self.to_move]
        return [c for c in self.legal_moves() if rules.has_won(stones | rules.stone_bit(c, self.heights[c]))]

    def legal_mask(self) -> list[int]:
        """One 0/1 entry per column: 1 where a move is legal."""
        if self.winner is not None:
            return [0] * self.rules.columns
        rows = self.rules.rows
        return [1 if h < rows else 0 for h in self.heights]

    # -- moves -------------------------------------------------------------------------------------------
    def play(self, column: int) -> bool:
        """Drop a stone for the player to move. Returns True if that move wins.

        Raises:
            IllegalMoveError: the game is over, or ``column`` is out of range or full.
        """
        if type(column) is not int:
            column = as_column(column)
        rules = self.rules
        heights = self.heights
        if self.winner is not None or self.ply == rules.cells:
            raise IllegalMoveError(f"column {column!r} cannot be played: the game is over")
        if not 0 <= column < rules.columns or heights[column] >= rules.rows:
            raise IllegalMoveError(
                f"column {short_repr(column)} is not a legal move; legal columns are {self.legal_moves()}"
            )
        player = self.ply & 1
        stones = self.stones[player] | (1 << (column * rules.height + heights[column]))
        self.stones[player] = stones
        heights[column] += 1
        self.ply += 1
        self.last_move = column
        if rules.has_won(stones):
            self.winner = player
            return True
        return False

    def undo(self, column: int, last_move: int | None = None) -> None:
        """Take back the last move, which was played in ``column``; ``last_move`` becomes the move before it.

        Raises:
            TypeError: ``column`` is not an integer, or ``last_move`` is neither an integer nor None
                (nothing is changed).
            ValueError: ``column`` does not hold the last player's top stone (no move to take back, a column
                off the board, or the other player's stone), or ``last_move`` is an integer that is not a
                column (nothing is changed).
        """
        rules = self.rules
        column = check_int("column", column)
        if last_move is not None:
            last_move = check_int("last_move", last_move, 0, rules.columns - 1)
        player = (self.ply - 1) & 1
        if self.ply == 0 or not 0 <= column < rules.columns or self.heights[column] == 0:
            raise ValueError(f"column {column!r} holds no stone to take back")
        bit = 1 << (column * rules.height + self.heights[column] - 1)
        if not self.stones[player] & bit:
            raise ValueError(f"the top stone of column {column} is not the last mover's")
        self.stones[player] ^= bit
        self.heights[column] -= 1
        self.ply -= 1
        self.winner = None
        self.last_move = last_move

    def play_moves(self, moves: Iterable[int] | str) -> Board:
        """Play a sequence of columns (a string of digits also works for <= 10 columns); returns self.

        All or nothing: when a move is illegal or not an integer, the error is raised and the board is left as
        it was.

        Raises:
            IllegalMoveError: a move is illegal where it comes (out of range, a full column, or after the
                game is over).
            TypeError: ``moves`` is not iterable, or a move is not an integer.
            ValueError: a string holds something other than digits.
        """
        if isinstance(moves, str):
            if not moves.isdigit() and moves:
                raise ValueError(f"move string {moves!r} must hold only digits 0-9 (0-based columns)")
            moves = [int(ch) for ch in moves]
        trial = self.copy()
        for column in moves:
            trial.play(column)
        self.stones, self.heights, self.ply = trial.stones, trial.heights, trial.ply
        self.winner, self.last_move = trial.winner, trial.last_move
        return self

    def copy(self) -> Board:
        """An independent copy of the position (same rules; its own stone and height lists)."""
        new = Board.__new__(Board)
        new.rules = self.rules
        new.stones = self.stones[:]
        new.heights = self.heights[:]
        new.ply = self.ply
        new.winner = self.winner
        new.last_move = self.last_move
        return new

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> Board:
        return self.copy()

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Board)
            and self.rules == other.rules
            and self.stones == other.stones
            and self.winner == other.winner
        )

    def __hash__(self) -> int:
        return hash((self.rules, self.stones[0], self.stones[1]))

    def __getstate__(self) -> dict:
        return {
            "rules": self.rules.shape_key,
            "stones": list(self.stones),
            "winner": self.winner,
            "last_move": self.last_move,
        }

    def __setstate__(self, state: dict) -> None:
        board = Board.from_stones(Rules(*state["rules"]), *state["stones"])
        self.rules, self.stones, self.heights = board.rules, board.stones, board.heights
        self.ply, self.winner, self.last_move = board.ply, board.winner, state["last_move"]

    # -- cells, constructors, ASCII ------------------------------------------------------------------------
    def cell(self, row: int, column: int) -> int | None:
        """Owner of a cell (``row`` 0 = top): 0, 1 or None for empty.

        Raises:
            TypeError: ``row`` or ``column`` is not an integer.
            ValueError: ``row`` or ``column`` is an integer off the board.
        """
        rules = self.rules
        # renderers call this for every cell: plain in-range ints skip the checks' conversions
        if not (
            type(row) is int and type(column) is int and 0 <= row < rules.rows and 0 <= column < rules.columns
        ):
            row = check_int("row", row, 0, rules.rows - 1)
            column = check_int("column", column, 0, rules.columns - 1)
        bit = rules.cell_bit(row, column)
        if self.stones[0] & bit:
            return 0
        if self.stones[1] & bit:
            return 1
        return None

    def winning_cells(self) -> list[tuple[int, int]]:
        """The winner's stones that make up a line of ``win_length`` or more, as ``(row, column)`` with row 0
        at the top, sorted; empty while nobody has won.
        """
        if self.winner is None:
            return []
        rules = self.rules
        bits = rules.winning_cells(self.stones[self.winner])
        cells = []
        while bits:  # a handful of set bits: walk them, not every cell
            index = (bits & -bits).bit_length() - 1
            bits &= bits - 1
            column, height = divmod(index, rules.height)
            cells.append((rules.rows - 1 - height, column))
        return sorted(cells)

    def last_cell(self) -> tuple[int, int] | None:
        """``(row, column)`` of the stone played last (row 0 at the top), or None before the first move or
        when the position was built from stones.
        """
        if self.last_move is None:
            return None
        return self.rules.rows - self.heights[self.last_move], self.last_move

    def _repr_svg_(self) -> str:
        """The board as SVG for notebooks (Jupyter calls this), as `connect4_env.render.to_svg` draws it."""
        rules = self.rules
        check_svg_size(rules.rows, rules.columns)
        owners = [
            [0 if owner is None else owner + 1 for owner in (self.cell(row, c) for c in range(rules.columns))]
            for row in range(rules.rows)
        ]
        return draw_svg(owners, ply=self.ply, last_cell=self.last_cell(), winning_cells=self.winning_cells())

    @classmethod
    def from_moves(cls, moves: Iterable[int] | str, rules: Rules | None = None) -> Board:
        """Play ``moves`` (0-based columns; a string of digits also works for <= 10 columns) from
        ``Board(rules)`` (None: 6x7 with four in a row).

        Raises:
            IllegalMoveError: a move is illegal where it comes, as in
                [`play_moves`][connect4_env.core.Board.play_moves].
            TypeError: ``rules`` is neither a [`Rules`][connect4_env.rules.Rules] nor None, ``moves`` is not
                iterable, or a move is not an integer.
            ValueError: ``moves`` is a string that holds something other than digits.
        """
        return cls(rules).play_moves(moves)

    @classmethod
    def from_stones(cls, rules: Rules, first: int, second: int) -> Board:
        """Build a position from each player's bitboard, checking that it can arise in a game.

        Raises:
            TypeError: ``rules`` is not a [`Rules`][connect4_env.rules.Rules], or a bitboard is not an
                integer.
            ValueError: the stones cannot arise in a game: they overlap, float above empty cells, lie outside
                the board, the first player's count is not the second's or one more, or both players have a
                line.
        """
        rules = check_rules(rules)
        first, second = check_int("first", first), check_int("second", second)
        board_mask = rules.board_mask
        if first < 0 or second < 0 or (first | second) & ~board_mask:
            raise ValueError("stones lie outside the board")
        if first & second:
            raise ValueError("a cell holds stones of both players")
        n_first, n_second = first.bit_count(), second.bit_count()
        if n_first - n_second not in (0, 1):
            raise ValueError(
                f"impossible stone counts: first player {n_first}, second player {n_second} "
                "(the first player has as many stones as the second, or one more)"
            )
        mask = first | second
        heights = []
        for c in range(rules.columns):
            col = (mask >> (c * rules.height)) & ((1 << rules.rows) - 1)
            h = col.bit_count()
            if col != (1 << h) - 1:
                raise ValueError(f"column {c} has a stone above an empty cell")
            heights.append(h)
        board = cls(rules)
        board.stones = [first, second]
        board.heights = heights
        board.ply = n_first + n_second
        first_won, second_won = rules.has_won(first), rules.has_won(second)
        if first_won and second_won:
            raise ValueError("both players have a line: not a reachable position")
        board.winner = 0 if first_won else 1 if second_won else None
        return board

    @classmethod
    def from_ascii(cls, text: str, win_length: int = 4) -> Board:
        """Parse a board drawn as text, top row first.

        ``X`` (or ``x``) is the first player, ``O`` (``o``) the second, ``.`` (or ``_``) empty; spaces are
        ignored, as are blank lines and a trailing line of column numbers. Which player is to move follows
        from the stone counts.

        Raises:
            TypeError: ``text`` is not a str, or ``win_length`` is not an integer.
            ValueError: ``text`` is not a board (no rows, rows of unequal length, a character other than
                ``XxOo._``, a size out of the rules' range, or stones that cannot arise in a game), or
                ``win_length`` does not fit the board.
        """
        if not isinstance(text, str):
            raise TypeError(f"from_ascii reads a str, got {type(text).__name__}")
        lines = [line.replace(" ", "") for line in text.strip("\n").splitlines()]
        lines = [line for line in lines if line and not line.isdigit()]
        if not lines:
            raise ValueError("empty board text")
        width = len(lines[0])
        for line in lines:
            if len(line) != width:
                raise ValueError(f"board rows have different lengths: {[len(x) for x in lines]}")
            bad = set(line) - set("XxOo._")
            if bad:
                raise ValueError(f"unknown board characters {sorted(bad)}; allowed are X, O and .")
        rules = Rules(len(lines), width, win_length)
        first = second = 0
        for row, line in enumerate(lines):
            for column, ch in enumerate(line):
                if ch in "Xx":
                    first |= rules.cell_bit(row, column)
                elif ch in "Oo":
                    second |= rules.cell_bit(row, column)
        return cls.from_stones(rules, first, second)

    def to_ascii(self, column_numbers: bool = True) -> str:
        """The board as text, top row first: ``X`` first player, ``O`` second, ``.`` empty."""
        symbols = {0: "X", 1: "O", None: "."}
        lines = [
            " ".join(symbols[self.cell(row, column)] for column in range(self.rules.columns))
            for row in range(self.rules.rows)
        ]
        if column_numbers:
            lines.append(" ".join(str(c % 10) for c in range(self.rules.columns)))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_ascii()

    def __repr__(self) -> str:
        return f"Board.from_ascii('''\n{self.to_ascii(column_numbers=False)}\n''', win_length={self.rules.win_length})"


def check_board(board: object) -> Board:
    """``board`` if it is a [`Board`][connect4_env.core.Board] (functions that take positions rather than
    observations check theirs with this).

    Raises:
        TypeError: it is not.
    """
    if not isinstance(board, Board):
        raise TypeError(f"board must be a connect4_env.Board, got {board!r:.80} ({type(board).__name__})")
    return board
