"""The rules' configuration: [`Rules`][connect4_env.rules.Rules] (board size, win length and the bit masks the
rules need), the checks of a size and of a column, and the error of an illegal move.
[`connect4_env.core`][connect4_env.core] builds the position ([`Board`][connect4_env.core.Board]) on it and
re-exports every name here.

Bit layout (the classic one): column ``c`` owns bits ``c * (rows + 1)`` .. ``c * (rows + 1) + rows``; bit
``c * (rows + 1) + r`` is the cell ``r`` rows above the bottom. The top bit of every column is a sentinel that
is never set, so a run of stones can never wrap from one column into the next. Python ints serve any size.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, overload

from connect4_env.validation import check_int, shown_value

__all__ = [
    "Rules",
    "IllegalMoveError",
    "as_column",
    "short_repr",
    "check_size",
    "check_rules",
    "MAX_CELLS",
]

MAX_CELLS = 1_000_000
"""The largest board (rows x columns) the rules accept: every structure grows with the cells alone, and this
bound keeps one observation (2 bytes a cell) and one bitboard small enough for any machine."""


class IllegalMoveError(ValueError):
    """A move that the rules do not allow (full or missing column, game already over)."""


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to about ``limit`` characters for error messages.

    An integer too long keeps its first and last digits and says how many there are
    (``10**400`` gives ``'100000000000...000000000000 (401 digits)'``; past the 4,300 digits Python prints,
    its size in bits); anything else keeps its start.

    Examples:
        >>> short_repr(10**30, limit=20)
        '1000...0000 (31 digits)'
    """
    try:
        text = repr(value)
    except ValueError:  # an integer past Python's 4,300 digits: repr() itself refuses
        return shown_value(value)
    if len(text) <= limit:
        return text
    if isinstance(value, int) and not isinstance(value, bool):
        digits = str(abs(value))
        keep = max(4, (limit - 20) // 2)
        sign = "-" if value < 0 else ""
        return f"{sign}{digits[:keep]}...{digits[-keep:]} ({len(digits)} digits)"
    return text[: limit - 3] + "..."


def as_column(action: object) -> int:
    """Return ``action`` as a plain int if it is an integer (Python or numpy, or a 0-d integer array).

    0-d integer arrays are accepted as numpy scalars are (``env.step(np.array(3))`` works in Gymnasium's own
    envs); range checks are the caller's.

    Raises:
        TypeError: floats, strings, None, booleans, arrays with one or more dimensions.
    """
    if isinstance(action, bool) or action is None:
        raise TypeError(f"action {action!r} is not an integer column")
    if getattr(action, "ndim", 0) > 0:
        shape = getattr(action, "shape", None)
        raise TypeError(
            f"action {short_repr(action)} must be a single integer column, not an array of shape {shape}"
        )
    try:
        return operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"action {short_repr(action)} ({type(action).__name__}) is not an integer column"
        ) from None


def check_size(rows: object, columns: object, win_length: object) -> tuple[int, int, int]:
    """Validate a board configuration and return it as plain ints.

    Raises:
        TypeError: a value is not an integer (``rows=2.5``, ``columns="7"``, ``win_length=True``).
        ValueError: a value is out of range (``rows=0``), the board has more than
            [`MAX_CELLS`][connect4_env.rules.MAX_CELLS] cells, or ``win_length`` fits neither a row nor a
            column.
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

    Examples:
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
        bitboard with: runs double while they can, then one overlapping step up to ``win_length``.
        """
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
        height = self.height
        column_mask = (1 << height) - 1
        result = 0
        to = (self.columns - 1) * height  # column c's bits go there, column c + 1's one column lower
        for _ in range(self.columns):
            if not stones:
                break
            result |= (stones & column_mask) << to
            stones >>= height
            to -= height
        return result

    def cell_bit(self, row: int, column: int) -> int:
        """The bit of the cell ``row`` (0 = top, as in observations) and ``column``."""
        return 1 << (column * self.height + self.rows - 1 - row)


_REQUIRED: Any = object()


@overload
def check_rules(rules: object) -> Rules: ...
@overload
def check_rules(rules: object, default: Rules) -> Rules: ...
@overload
def check_rules(rules: object, default: None) -> Rules | None: ...
def check_rules(rules: object, default: Rules | None = _REQUIRED) -> Rules | None:
    """``rules`` if it is a [`Rules`][connect4_env.rules.Rules]; None gives ``default`` where one is given
    (None included).

    The one check of a ``rules`` argument, for every class and function that takes one.

    Raises:
        TypeError: anything else (for an int, the message shows how to build a
            [`Rules`][connect4_env.rules.Rules]).

    Examples:
        >>> rules = check_rules(None, Rules(4, 5))
        >>> rules.rows, rules.columns
        (4, 5)
    """
    optional = default is not _REQUIRED
    if rules is None and optional:
        return default
    if not isinstance(rules, Rules):
        hint = ""
        if isinstance(rules, int) and not isinstance(rules, bool):  # an old win_length=, or a size
            example = f", e.g. rules=Rules(win_length={rules})" if 2 <= rules <= 1000 else ""
            hint = f"; a number alone names no board: pass rules=Rules(rows, columns, win_length){example}"
        raise TypeError(
            f"rules must be a connect4_env.Rules{' or None' if optional else ''}, got {short_repr(rules)} "
            f"({type(rules).__name__}){hint}"
        )
    return rules
