"""Pure Connect Four rules on bitboards, for any board size and win length.

No Gymnasium, PettingZoo or pygame here: every other module calls this one, and nobody repeats the rules.

Bit layout (the classic one): column ``c`` owns bits ``c * (rows + 1)`` .. ``c * (rows + 1) + rows``; bit
``c * (rows + 1) + r`` is the cell ``r`` rows above the bottom. The top bit of every column is a sentinel that
is never set, so a run of stones can never wrap from one column into the next. Python ints serve any size.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable

from connect4_env.svg import check_svg_size, draw_svg
from connect4_env.validation import check_int

__all__ = [
    "Rules",
    "Board",
    "IllegalMoveError",
    "as_column",
    "check_size",
    "MAX_CELLS",
]

MAX_CELLS = 1_000_000
"""The largest board (rows x columns) the rules accept: every structure grows with the cells alone, and this
bound keeps one observation (2 bytes a cell) and one bitboard small enough for any machine."""


class IllegalMoveError(ValueError):
    """A move that the rules do not allow (full or missing column, game already over)."""


def as_column(action: object) -> int:
    """Return ``action`` as a plain int if it is an integer (Python or numpy, or a 0-d integer array).

    Raises:
        TypeError: floats, strings, None, booleans, arrays with one or more dimensions.
    """
    if isinstance(action, bool) or action is None:
        raise TypeError(f"action {action!r} is not an integer column")
    if getattr(action, "ndim", 0) > 0:
        shape = getattr(action, "shape", None)
        raise TypeError(f"action {action!r} must be a single integer column, not an array of shape {shape}")
    try:
        return operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"action {action!r} ({type(action).__name__}) is not an integer column") from None


def check_size(rows: object, columns: object, win_length: object) -> tuple[int, int, int]:
    """Validate a board configuration and return it as plain ints.

    Raises:
        TypeError: a value is not an integer (``rows=2.5``, ``columns="7"``, ``win_length=True``).
        ValueError: a value is out of range (``rows=0``), the board has more than :data:`MAX_CELLS` cells, or
            ``win_length`` fits neither a row nor a column.
    """
    rows_i = check_int("rows", rows, 1)
    columns_i = check_int("columns", columns, 1)
    win_i = check_int("win_length", win_length, 2)
    if rows_i * columns_i > MAX_CELLS:
        raise ValueError(
            f"a {rows_i}x{columns_i} board has {rows_i * columns_i} cells; allowed: at most {MAX_CELLS} cells"
        )
    if win_i > max(rows_i, columns_i):
        raise ValueError(
            f"win_length={win_i} does not fit a {rows_i}x{columns_i} board: "
            f"allowed 2..{max(rows_i, columns_i)} (at most max(rows, columns))"
        )
    return rows_i, columns_i, win_i


def _two_shift_win_check(
    first: tuple[int, ...], second: tuple[int, ...], third: tuple[int, ...], fourth: tuple[int, ...]
) -> Callable[[int], bool]:
    """An unrolled ``has_won`` for win lengths whose check needs two shifts per direction (3 and 4)."""
    (a1, b1), (a2, b2), (a3, b3), (a4, b4) = first, second, third, fourth

    def has_won(stones: int) -> bool:
        run = stones & (stones >> a1)
        if run & (run >> b1):
            return True
        run = stones & (stones >> a2)
        if run & (run >> b2):
            return True
        run = stones & (stones >> a3)
        if run & (run >> b3):
            return True
        run = stones & (stones >> a4)
        return bool(run & (run >> b4))

    return has_won


class Rules:
    """An immutable board configuration with the bit masks the rules need.

    Args:
        rows: number of rows (>= 1).
        columns: number of columns (>= 1).
        win_length: stones in a line needed to win (2 .. max(rows, columns)).

    >>> rules = Rules(5, 6, win_length=3)
    >>> rules.cells, rules.height  # height: rows plus the sentinel bit of every column
    (30, 6)
    >>> rules.has_won(rules.stone_bit(0, 0) | rules.stone_bit(1, 0) | rules.stone_bit(2, 0))
    True
    >>> Rules(6, 7, win_length=9)
    Traceback (most recent call last):
    ...
    ValueError: win_length=9 does not fit a 6x7 board: allowed 2..7 (at most max(rows, columns))
    """

    __slots__ = (
        "rows",
        "columns",
        "win_length",
        "height",
        "cells",
        "bottom_mask",
        "board_mask",
        "_win_steps",
        "has_won",
    )
    rows: int
    columns: int
    win_length: int
    height: int
    cells: int
    bottom_mask: int
    board_mask: int
    _win_steps: tuple[tuple[int, ...], ...]
    has_won: Callable[[int], bool]

    def __init__(self, rows: int = 6, columns: int = 7, win_length: int = 4) -> None:
        rows, columns, win_length = check_size(rows, columns, win_length)
        height = rows + 1
        set_ = object.__setattr__
        set_(self, "rows", rows)
        set_(self, "columns", columns)
        set_(self, "win_length", win_length)
        set_(self, "height", height)
        set_(self, "cells", rows * columns)
        # Memory stays O(cells): the bottom bit of every column as one geometric series, 1 + 2**h + 2**2h + ...
        bottom_mask = ((1 << (height * columns)) - 1) // ((1 << height) - 1)
        set_(self, "bottom_mask", bottom_mask)
        set_(self, "board_mask", bottom_mask * ((1 << rows) - 1))
        # Shifts that AND a bitboard with itself until only the starts of win_length-long runs remain:
        # double the run length while we can, then one last overlapping step.
        steps = []
        for direction in (1, height, height - 1, height + 1):  # vertical, horizontal, two diagonals
            run, shifts = 1, []
            while 2 * run <= win_length:
                shifts.append(run * direction)
                run *= 2
            if run < win_length:
                shifts.append((win_length - run) * direction)
            steps.append(tuple(shifts))
        set_(self, "_win_steps", tuple(steps))
        # has_won(stones): True if the bitboard holds win_length in a line in any direction.
        if all(len(shifts) == 2 for shifts in steps):
            set_(self, "has_won", _two_shift_win_check(*steps))
        else:
            set_(self, "has_won", self._has_won_generic)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Rules is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rules) and self.shape_key == other.shape_key

    def __hash__(self) -> int:
        return hash(self.shape_key)

    def __repr__(self) -> str:
        return f"Rules(rows={self.rows}, columns={self.columns}, win_length={self.win_length})"

    def __reduce__(self) -> tuple[type[Rules], tuple[int, int, int]]:
        return (Rules, self.shape_key)

    @property
    def shape_key(self) -> tuple[int, int, int]:
        """``(rows, columns, win_length)``."""
        return (self.rows, self.columns, self.win_length)

    @staticmethod
    def _line_starts(stones: int, shifts: tuple[int, ...]) -> int:
        """The bits from which ``win_length`` stones of ``stones`` run in the direction of ``shifts``."""
        for shift in shifts:
            stones &= stones >> shift
            if not stones:
                break
        return stones

    def _has_won_generic(self, stones: int) -> bool:
        return any(self._line_starts(stones, shifts) for shifts in self._win_steps)

    @property
    def win_shifts(self) -> tuple[tuple[int, ...], ...]:
        """Per direction (vertical, horizontal, two diagonals), the right shifts that ``has_won`` ANDs a
        bitboard with: runs double while they can, then one overlapping step up to ``win_length``."""
        return self._win_steps

    def winning_cells(self, stones: int) -> int:
        """The bits of every stone of ``stones`` that lies in a line of ``win_length`` or more (0 if none)."""
        cells = 0
        for shifts in self._win_steps:
            starts = self._line_starts(stones, shifts)
            if not starts:
                continue
            direction, covered, line = shifts[0], 1, starts  # shifts[0] is one step in this direction
            while 2 * covered <= self.win_length:
                line |= line << (covered * direction)
                covered *= 2
            if covered < self.win_length:
                line |= line << ((self.win_length - covered) * direction)
            cells |= line
        return cells & stones

    def stone_bit(self, column: int, height: int) -> int:
        """The bit of the ``height``-th stone (0 = bottom) of ``column``."""
        return 1 << (column * self.height + height)

    def mirror(self, stones: int) -> int:
        """The bitboard reflected left-right (column ``c`` becomes ``columns - 1 - c``)."""
        column_mask = (1 << self.height) - 1
        result = 0
        for c in range(self.columns):
            result |= ((stones >> (c * self.height)) & column_mask) << ((self.columns - 1 - c) * self.height)
        return result

    def cell_bit(self, row: int, column: int) -> int:
        """The bit of the cell ``row`` (0 = top, as in observations) and ``column``."""
        return 1 << (column * self.height + self.rows - 1 - row)


class Board:
    """A mutable Connect Four position. ``copy()`` is cheap (a handful of ints).

    ``stones[p]`` is player ``p``'s bitboard (player 0 moves first), ``heights[c]`` the number of stones in
    column ``c``, ``ply`` the number of moves played, ``winner`` 0 or 1 once someone has a line (else None).

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
        self.rules = rules if rules is not None else Rules()
        self.stones = [0, 0]
        self.heights = [0] * self.rules.columns
        self.ply = 0
        self.winner: int | None = None
        self.last_move: int | None = None

    @classmethod
    def empty(cls, rows: int = 6, columns: int = 7, win_length: int = 4) -> Board:
        """An empty board of the given size."""
        return cls(Rules(rows, columns, win_length))

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
        return self.winner is None and self.ply == self.rules.cells

    @property
    def is_terminal(self) -> bool:
        return self.winner is not None or self.ply == self.rules.cells

    def is_legal(self, column: int) -> bool:
        """True if ``column`` is an int in range, not full, and the game is not over."""
        return (
            self.winner is None
            and isinstance(column, int)
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
                f"column {column!r} is not a legal move; legal columns are {self.legal_moves()}"
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
            ValueError: ``column`` does not hold the last player's top stone (nothing is changed).
        """
        rules = self.rules
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

    def play_moves(self, moves: Iterable[int]) -> Board:
        """Play a sequence of columns; returns self."""
        for column in moves:
            self.play(int(column))
        return self

    def copy(self) -> Board:
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
        """Owner of a cell (``row`` 0 = top): 0, 1 or None for empty."""
        bit = self.rules.cell_bit(row, column)
        if self.stones[0] & bit:
            return 0
        if self.stones[1] & bit:
            return 1
        return None

    def winning_cells(self) -> list[tuple[int, int]]:
        """The winner's stones that make up a line of ``win_length`` or more, as ``(row, column)`` with row 0
        at the top, sorted; empty while nobody has won."""
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
        when the position was built from stones."""
        if self.last_move is None:
            return None
        return self.rules.rows - self.heights[self.last_move], self.last_move

    def _repr_svg_(self) -> str:
        """The board as SVG for notebooks (Jupyter calls this), as :func:`connect4_env.render.to_svg` draws it."""
        rules = self.rules
        check_svg_size(rules.rows, rules.columns)
        owners = [
            [0 if owner is None else owner + 1 for owner in (self.cell(row, c) for c in range(rules.columns))]
            for row in range(rules.rows)
        ]
        return draw_svg(owners, ply=self.ply, last_cell=self.last_cell(), winning_cells=self.winning_cells())

    @classmethod
    def from_moves(
        cls, moves: Iterable[int] | str, rows: int = 6, columns: int = 7, win_length: int = 4
    ) -> Board:
        """Play ``moves`` (0-based columns; a string of digits also works for <= 10 columns) from empty."""
        if isinstance(moves, str):
            if not moves.isdigit() and moves:
                raise ValueError(f"move string {moves!r} must hold only digits 0-9 (0-based columns)")
            moves = [int(ch) for ch in moves]
        return cls(Rules(rows, columns, win_length)).play_moves(moves)

    @classmethod
    def from_stones(cls, rules: Rules, first: int, second: int) -> Board:
        """Build a position from each player's bitboard, checking that it can arise in a game.

        Raises:
            ValueError: stones overlap, float above empty cells, lie outside the board, the counts are not
                equal or one more for the first player, or both players have a line.
        """
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
        """
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
