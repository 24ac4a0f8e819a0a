"""The n-tuple network as a Kaggle ConnectX agent in numpy alone (env side: Kaggle's connectx).

``connect4 kaggle-submission ntuple`` (or ``ntuple:PATH``) writes a ``main.py`` made of this module's source,
the network's tables as `encode_network` writes them, and ``agent()``
([`kaggle_submission`][connect4_agents.interop.kaggle_submission]). Nothing is unpacked, compiled or imported
but numpy, so a cold first move costs the tables' decoding and one evaluation. This module therefore imports
only numpy and the standard library, and runs without ``__file__`` or a module name, as Kaggle runs a file.

[`NumpyNTuple`][connect4_agents.interop.kaggle_ntuple.NumpyNTuple] computes
[`NTupleNetwork.move_values`][connect4_agents.ntuple.network.NTupleNetwork.move_values] with index arrays and
the same floating-point operations in the same order as the network's kernel, so the values are equal to the
last bit, and so are the moves: every tuple's (and mirror image's) table index for the position at once, their
weights summed in order, then for each column the correction of the tuples through the two cells its move
changes (the landing cell, and the cell above, which becomes playable), added in the kernel's order.
"""

from __future__ import annotations

import base64
import io
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["NumpyNTuple", "NTupleKaggleAgent", "encode_network", "decode_network", "read_kaggle_call"]

STATES = 4  # a cell's states, as connect4_agents.ntuple.kernels reads them: empty, mark 1, mark 2, playable
PLAYABLE = 3
MAX_LENGTH = 12  # cells per tuple, as the network files allow
# table entries a decoded network may hold (2 GiB of float32), as the network files allow
MAX_ENTRIES = 1 << 29
_MEMBERS = ("board", "tuples", "gaps", "values")


def _wins(stones: int, height: int, win_length: int) -> bool:
    """Whether the bitboard ``stones`` (column-major, ``height`` bits a column) holds ``win_length`` in a line."""
    for step in (1, height, height - 1, height + 1):
        line = stones
        for k in range(1, win_length):
            line &= stones >> (k * step)
        if line:
            return True
    return False


def _bits(stones: int, count: int) -> np.ndarray:
    """The first ``count`` bits of ``stones`` as an int64 array of 0s and 1s."""
    raw = np.frombuffer(stones.to_bytes((count + 7) // 8, "little"), np.uint8)
    return np.unpackbits(raw, bitorder="little")[:count].astype(np.int64)


def _stored(weights: Any) -> tuple[np.ndarray, np.ndarray]:
    """The flat positions (ascending) and float32 values of the table entries that are not zero (-0.0 kept)."""
    flat = np.ascontiguousarray(weights, dtype=np.float32).ravel()
    keys = np.flatnonzero(flat.view(np.uint32))
    return keys, flat[keys]


class NumpyNTuple:
    """An n-tuple network's afterstate values in numpy (see the module).

    The tables are held sparse, as the flat positions and values of their entries that are not zero: most
    entries are never reached in play, and a table entry is looked up by binary search among the positions.

    Args:
        rows: the rows of the board the network plays.
        columns: its columns.
        win_length: the stones in a line that win on it.
        tuples: (n_tuples, length) cells, each ``column * (rows + 1) + row`` (row 0 at the bottom).
        keys: the ascending flat positions, in the (2, n_tuples, 4**length) tables, of the entries that are
            not zero; ``tables[side]`` are those for the boards ``side`` (0 the first player, 1 the second)
            has just moved into, from the first player's view.
        values: those entries' float32 values.
    """

    def __init__(self, rows: int, columns: int, win_length: int, tuples: Any, keys: Any, values: Any) -> None:
        self.size = (rows, columns, win_length)
        self.rows, self.columns, self.win_length = rows, columns, win_length
        self.height = rows + 1
        tuples = np.asarray(tuples, dtype=np.int64)
        self.n_tuples, self.length = tuples.shape
        self.entries = STATES**self.length
        # a last key past every table: each search lands on a key, found or not
        self.keys = np.append(np.asarray(keys, dtype=np.int64), 2 * self.n_tuples * self.entries)
        self.values = np.append(np.asarray(values, dtype=np.float32), np.float32(0.0))
        tuple_columns, tuple_rows = np.divmod(tuples, self.height)
        mirrors = (columns - 1 - tuple_columns) * self.height + tuple_rows
        self.cells = np.concatenate([tuples, mirrors])  # row k reads table k % n_tuples
        self.tables = np.arange(self.cells.shape[0]) % self.n_tuples
        self.places = STATES ** np.arange(self.length - 1, -1, -1, dtype=np.int64)
        self._touched, self._landing, self._above, self._valid = self._changes()

    @classmethod
    def from_tables(cls, rows: int, columns: int, win_length: int, tuples: Any, weights: Any) -> NumpyNTuple:
        """The network of dense (2, n_tuples, 4**length) float32 tables, as a network file holds them."""
        return cls(rows, columns, win_length, tuples, *_stored(weights))

    def weight(self, side: int, tables: np.ndarray, index: np.ndarray) -> np.ndarray:
        """The float32 entries ``index`` of tables ``tables`` of ``side`` (arrays of one shape)."""
        flat = (side * self.n_tuples + tables) * self.entries + index
        found = np.searchsorted(self.keys, flat)
        return np.where(self.keys[found] == flat, self.values[found], np.float32(0.0))

    def _changes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per landing cell: the rows through it or the cell above, in the kernel's order (those through the
        landing cell, then the others through the cell above), the ``4**place`` of each of the two cells in
        each row (0 where the row misses it), and which entries are rows rather than padding.
        """
        through: list[dict[int, int]] = [{} for _ in range(self.columns * self.height)]
        for row, cells in enumerate(self.cells.tolist()):
            for place, cell in enumerate(cells):
                through[cell][row] = int(self.places[place])
        changes: list[list[tuple[int, int, int]]] = []
        for bit in range(self.columns * self.height):
            landing = through[bit]
            above = through[bit + 1] if bit % self.height + 1 < self.rows else {}
            order = list(landing) + [row for row in above if row not in landing]
            changes.append([(row, landing.get(row, 0), above.get(row, 0)) for row in order])
        width = max(1, max(len(change) for change in changes))
        table = np.zeros((len(changes), width, 3), np.int64)
        valid = np.zeros((len(changes), width), bool)
        for bit, change in enumerate(changes):
            if change:
                table[bit, : len(change)] = change
                valid[bit, : len(change)] = True
        return table[:, :, 0], table[:, :, 1], table[:, :, 2], valid

    def move_values(self, first: int, second: int) -> np.ndarray:
        """Every column's afterstate value for the player to move, from that player's view, on the board whose
        bitboards are ``first`` and ``second`` (the first and second player's stones, bits as the tuples'
        cells): 1 for a move that wins, 0 for one that fills the board, else the network's estimate; NaN for
        a full column. Equal, value for value, to ``NTupleNetwork.move_values``.
        """
        bits = self.columns * self.height
        ones, twos = _bits(first, bits), _bits(second, bits)
        states = ones + 2 * twos
        heights = (ones + twos).reshape(self.columns, self.height).sum(axis=1)
        open_columns = np.flatnonzero(heights < self.rows)
        states[open_columns * self.height + heights[open_columns]] = PLAYABLE
        ply = int(ones.sum() + twos.sum())
        mover = ply & 1
        own = first if mover == 0 else second
        index = states[self.cells] @ self.places
        base = self.weight(mover, self.tables, index).astype(np.float64)
        position_sum = np.cumsum(base)[-1]  # in order, as the kernel adds them
        values = np.full(self.columns, np.nan)
        estimated = []
        for column in open_columns.tolist():
            bit = column * self.height + int(heights[column])
            if _wins(own | 1 << bit, self.height, self.win_length):
                values[column] = 1.0
            elif ply + 1 == self.rows * self.columns:
                values[column] = 0.0
            else:
                estimated.append((column, bit))
        if estimated:
            landing = np.array([bit for _, bit in estimated])
            rows = self._touched[landing]
            changed = (
                index[rows]
                + (1 + mover - PLAYABLE) * self._landing[landing]
                + PLAYABLE * self._above[landing]
            )
            corrections = np.where(
                self._valid[landing], self.weight(mover, self.tables[rows], changed) - base[rows], 0.0
            )
            start = np.full((len(estimated), 1), position_sum)
            totals = np.cumsum(np.concatenate([start, corrections], axis=1), axis=1)[:, -1]
            sign = 1.0 if mover == 0 else -1.0
            for (column, _), total in zip(estimated, totals.tolist()):
                values[column] = sign * math.tanh(total)
        return values


def encode_network(rows: int, columns: int, win_length: int, tuples: Any, weights: Any) -> str:
    """A network's dense (2, n_tuples, 4**length) float32 tables, with its board and tuples, as base64 text:
    an ``.npz`` of the board, the tuples, the gaps between the flat positions of the entries that are not zero
    and those entries' values (most entries are never reached in play, and stay zero). `decode_network` reads
    it back, every bit of every weight the same.
    """
    keys, values = _stored(weights)
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        board=np.array([rows, columns, win_length], np.int64),
        tuples=np.asarray(tuples, dtype=np.int64),
        gaps=np.diff(keys, prepend=0).astype(np.uint32),  # positions stay below MAX_ENTRIES, 2**29
        values=values,
    )
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def decode_network(text: str | bytes) -> NumpyNTuple:
    """The network in ``text`` (written by `encode_network`), read without pickle and checked.

    Raises:
        ValueError: the text is not base64 of such an archive, or its arrays disagree (shapes, cells off the
            board or repeated in a tuple, more than ``MAX_ENTRIES`` table entries, positions out of order or
            past the tables, a count of values other than of positions, values that are not finite).
    """
    try:
        with np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False) as archive:
            if sorted(archive.files) != sorted(_MEMBERS):
                raise ValueError(f"it holds {sorted(archive.files)[:8]}")
            board, tuples, gaps, values = (archive[name] for name in _MEMBERS)
    except (OSError, EOFError, KeyError, TypeError, ValueError) as error:
        raise ValueError(f"not an n-tuple network of a Kaggle submission: {error}") from None
    if board.shape != (3,) or board.dtype.kind != "i" or (board < 1).any():
        raise ValueError(f"an n-tuple network's board is 3 sizes of at least 1, got {board!r:.80}")
    rows, columns, win_length = (int(value) for value in board)
    if tuples.ndim != 2 or tuples.dtype.kind != "i" or not 1 <= tuples.shape[1] <= MAX_LENGTH:
        raise ValueError(f"tuples are (count, 1..{MAX_LENGTH}) integers, got {tuples.dtype} {tuples.shape}")
    n_tuples, length = tuples.shape
    entries = 2 * n_tuples * STATES**length
    if n_tuples < 1 or entries > MAX_ENTRIES:
        raise ValueError(
            f"{n_tuples} tuples of {length} cells need {entries:,} table entries (1..{MAX_ENTRIES:,})"
        )
    tuple_columns, tuple_rows = np.divmod(tuples, rows + 1)
    if (tuples < 0).any() or (tuple_columns >= columns).any() or (tuple_rows >= rows).any():
        raise ValueError(f"a tuple names a cell off the {rows}x{columns} board")
    ordered = np.sort(tuples, axis=1)
    if (ordered[:, 1:] == ordered[:, :-1]).any():
        raise ValueError("a tuple names the same cell twice")
    if gaps.ndim != 1 or gaps.dtype != np.uint32 or values.shape != gaps.shape or values.dtype != np.float32:
        raise ValueError(
            f"the tables' positions and values are {gaps.dtype} {gaps.shape} and {values.dtype} {values.shape}"
        )
    keys = np.cumsum(gaps.astype(np.int64))
    if (gaps[1:] == 0).any() or (keys.size and keys[-1] >= entries):
        raise ValueError("the tables' positions are out of order or past the tables")
    if not np.isfinite(values).all():
        raise ValueError("the weights contain NaN or infinity")
    return NumpyNTuple(rows, columns, win_length, tuples, keys, values)


def _field(source: Any, name: str, what: str) -> Any:
    """``source[name]`` or ``source.name`` (Kaggle passes dicts or its ``Struct``s); a missing one raises."""
    if isinstance(source, Mapping):
        if name in source:
            return source[name]
    elif hasattr(source, name):
        return getattr(source, name)
    raise ValueError(f"the Kaggle {what} has no {name!r} field (connectx gives {what}.{name})")


def _integer(value: Any, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r:.40} ({type(value).__name__})")
    if value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"{name} is {value}; it must be {allowed}")
    return int(value)


def read_kaggle_call(observation: Any, configuration: Any) -> tuple[tuple[int, int, int], int, int]:
    """A Kaggle ConnectX call read and checked: ``((rows, columns, inarow), first, second)``, the bitboards
    of mark 1's and mark 2's stones (``column * (rows + 1) + row``, row 0 at the bottom). Kaggle's
    ``observation.board`` is the cells top row first, 0 empty, 1 and 2 the marks; ``observation.mark`` the
    mark to move.

    Raises:
        TypeError: a size, mark or cell that is not an integer, or a board that is not a list.
        ValueError: a missing field, a size below 1, a board of the wrong length, a cell other than 0/1/2, a
            mark other than 1/2 or one the stone counts do not give the move, a stone above an empty cell, a
            full board.
    """
    rows = _integer(_field(configuration, "rows", "configuration"), "configuration.rows", 1)
    columns = _integer(_field(configuration, "columns", "configuration"), "configuration.columns", 1)
    inarow = _integer(_field(configuration, "inarow", "configuration"), "configuration.inarow", 1)
    mark = _integer(_field(observation, "mark", "observation"), "observation.mark", 1, 2)
    cells = _field(observation, "board", "observation")
    if isinstance(cells, (str, bytes)) or not isinstance(cells, (Sequence, np.ndarray)):
        raise TypeError(f"observation.board must be a list of integers, got {type(cells).__name__}")
    if len(cells) != rows * columns:
        raise ValueError(f"observation.board has {len(cells)} cells; rows * columns = {rows * columns}")
    for index, cell in enumerate(cells):
        _integer(cell, f"observation.board[{index}]", 0, 2)
    grid = np.array([int(cell) for cell in cells], np.int64).reshape(rows, columns)[::-1]  # bottom row first
    filled = grid > 0
    floating = np.flatnonzero((filled[1:] & ~filled[:-1]).any(axis=0))
    if floating.size:
        raise ValueError(f"observation.board: column {floating[0]} has a stone above an empty cell")
    if filled.all():
        raise ValueError("observation.board is full: there is no move to make")
    n_first, n_second = int((grid == 1).sum()), int((grid == 2).sum())
    if mark != (1 if n_first == n_second else 2 if n_first == n_second + 1 else 0):
        raise ValueError(
            f"observation.mark is {mark} but the board holds {n_first} stones of mark 1 and {n_second} of mark 2"
        )
    height = rows + 1
    stones = [0, 0]
    for row, column in zip(*np.nonzero(filled)):
        stones[int(grid[row, column]) - 1] |= 1 << (int(column) * height + int(row))
    return (rows, columns, inarow), stones[0], stones[1]


class NTupleKaggleAgent:
    """``agent(observation, configuration) -> column``: the legal column whose afterstate the network values
    most (random among equal ones), as [`NTupleAgent`][connect4_agents.ntuple.agent.NTupleAgent] plays.

    On a board other than the network's, which it cannot value, it plays the one-move rule instead (an
    immediate win, else a block of the opponent's, else the open column nearest the centre), says so once in
    the agent's log (Kaggle keeps each move's stderr) and counts the move in ``fallbacks``.

    Args:
        network: the network.
        seed: seeds the choice among equally valued columns (None: fresh entropy).
    """

    def __init__(self, network: NumpyNTuple, seed: int | None = None) -> None:
        self.network = network
        self.rng = np.random.default_rng(seed)
        self.moves = 0
        self.fallbacks = 0
        self._said = False

    def __call__(self, observation: Any, configuration: Any) -> int:
        """The column to play (0-based, legal).

        Raises:
            TypeError: a value of a malformed call of the wrong type (see `read_kaggle_call`).
            ValueError: a value of a malformed call out of range (see `read_kaggle_call`).
        """
        size, first, second = read_kaggle_call(observation, configuration)
        self.moves += 1
        if size != self.network.size:
            return self._fallback(size, first, second)
        values = self.network.move_values(first, second)
        legal = np.flatnonzero(~np.isnan(values))
        chosen = values[legal]
        best = np.flatnonzero(chosen == chosen.max())
        pick = best[0] if best.size == 1 else best[int(self.rng.integers(best.size))]
        return int(legal[pick])

    def _fallback(self, size: tuple[int, int, int], first: int, second: int) -> int:
        rows, columns, inarow = size
        if not self._said:
            self._said = True
            network = "x".join(map(str, self.network.size[:2]))
            print(
                f"connect4 kaggle agent: the n-tuple network plays {network} with {self.network.win_length} in a "
                f"row, not {rows}x{columns} with {inarow}; a one-move rule plays this board instead",
                file=sys.stderr,
            )
        self.fallbacks += 1
        height = rows + 1
        taken = first | second
        landing = {}
        for column in sorted(range(columns), key=lambda c: abs(2 * c - (columns - 1))):
            stack = next(row for row in range(height) if not taken >> (column * height + row) & 1)
            if stack < rows:
                landing[column] = 1 << (column * height + stack)
        own, other = (first, second) if bin(first).count("1") == bin(second).count("1") else (second, first)
        for stones in (own, other):
            for column, bit in landing.items():
                if _wins(stones | bit, height, inarow):
                    return column
        return next(iter(landing))
