"""The bitboard rules in the subset of Python that numba compiles, written once for every fast path.

`connect4_env.compiled` loads this file (and every kernel module that imports from it, such as the MCTS
and solver kernels) in two builds: as plain Python (any board size: bitboards are Python ints) and, when
numba is installed, with every function ``njit``-ed (boards whose bitboard fits in 63 bits: int64). Both run
the same code on the same inputs and give the same results, which ``tests/env/test_kernels.py`` checks
against [`connect4_env.core`][connect4_env.core]. No Python objects, no global state: randomness comes from a
xorshift32 state passed in.

Bit layout as in [`connect4_env.core`][connect4_env.core]: column ``c`` owns bits
``c*height .. c*height+rows``, the top one a sentinel. A position is ``(current, mask)``: the stones of the
player to move, and all stones.

Geometry comes as ``geo``, a tuple of ints built from [`Rules`][connect4_env.rules.Rules] by
`connect4_env.compiled.kernel_geometry`: ``(rows, columns, height, win_length, cells)`` followed by the
rules' win shifts along the vertical (``Rules.win_shifts[0]``: the run lengths ``has_won`` doubles through;
the other directions scale them by their step), padded with zeros to ``STEPS`` entries. ``board_mask`` and
``bottom_mask`` come as scalars (they may exceed 64 bits in Python mode). Every value that enters a bit
operation is a plain int (``int(...)`` around array reads) so that Python mode never mixes numpy's
fixed-width integers into big bitboards.
"""

# ruff: noqa: SIM108  (numba compiles plain if/else blocks; keep the kernels in the simplest Python)
from __future__ import annotations

__all__ = [
    "ROWS",
    "COLUMNS",
    "HEIGHT",
    "WIN_LENGTH",
    "CELLS",
    "SHIFTS",
    "STEPS",
    "line_step",
    "has_won",
    "threat_cells",
    "popcount",
    "column_bits",
    "move_bit",
    "legal_bits",
    "mirror",
    "position_key",
    "xorshift32",
    "play_moves",
    "undo_moves",
]

# Places in the ``geo`` tuple.
ROWS, COLUMNS, HEIGHT, WIN_LENGTH, CELLS, SHIFTS = 0, 1, 2, 3, 4, 5
STEPS = 8  # run-doubling shifts in geo (zero-padded; more only for win_length > 256, in Python mode)


def line_step(k, height):
    """The bit shift of one step along line direction ``k``: 0 vertical, 1 horizontal, 2 and 3 the diagonals."""
    if k == 0:
        return 1
    if k == 1:
        return height
    if k == 2:
        return height - 1
    return height + 1


def has_won(stones, geo):
    """True if ``stones`` holds win_length in a line, by the rules' own run doubling (``Rules.win_shifts``):
    ``geo`` carries the vertical direction's shifts, which are the run lengths; each direction scales them.
    """
    height = geo[HEIGHT]
    if geo[SHIFTS + 2] == 0:
        # two shifts per direction (win_length 3 and 4), read at fixed places: the rollouts' hot path
        first = geo[SHIFTS]
        second = geo[SHIFTS + 1]
        run = stones & (stones >> first)
        if run & (run >> second):
            return True
        for direction in (height, height - 1, height + 1):
            run = stones & (stones >> (first * direction))
            if run & (run >> (second * direction)):
                return True
        return False
    for k in range(4):
        direction = line_step(k, height)
        run = stones
        for j in range(len(geo) - SHIFTS):
            step = geo[SHIFTS + j]
            if step == 0:  # padding: this direction's shifts are done
                break
            run = run & (run >> (step * direction))
        if run != 0:
            return True
    return False


def threat_cells4(stones, mask, geo, board_mask):
    """``threat_cells`` for lines of four, in closed form: for each direction, an empty cell completes a
    line when three stones sit on one side of it, or two on one side and one on the other.
    """
    height = geo[HEIGHT]
    # vertical: only the three stones below
    result = (stones << 1) & (stones << 2) & (stones << 3)
    for k in range(3):
        step = height
        if k == 1:
            step = height - 1
        elif k == 2:
            step = height + 1
        pair = (stones << step) & (stones << (2 * step))
        result = result | (pair & (stones << (3 * step)))
        result = result | (pair & (stones >> step))
        pair = (stones >> step) & (stones >> (2 * step))
        result = result | (pair & (stones << step))
        result = result | (pair & (stones >> (3 * step)))
    return result & (board_mask ^ mask)


def threat_cells(stones, mask, geo, board_mask):
    """The empty cells (not in ``mask``) where one more stone would give ``stones`` a line of win_length.

    Not [`connect4_env.rules.Rules.winning_cells`][connect4_env.rules.Rules.winning_cells], which marks the
    stones already in a line.
    """
    height = geo[HEIGHT]
    length = geo[WIN_LENGTH]
    if length == 4:
        return threat_cells4(stones, mask, geo, board_mask)
    result = stones & 0
    for k in range(4):
        direction = line_step(k, height)
        for gap in range(length):  # the empty cell's place in the window
            window = board_mask
            for j in range(length):
                if j != gap:
                    offset = (j - gap) * direction
                    if offset > 0:
                        window = window & (stones >> offset)
                    else:
                        window = window & (stones << (-offset))
            result = result | window
    return result & (board_mask ^ mask)


def popcount(bits):
    """The number of set bits."""
    count = 0
    while bits != 0:
        bits = bits & (bits - 1)
        count += 1
    return count


def column_bits(column, geo):
    """The board bits of one column (the sentinel excluded)."""
    return ((1 << geo[ROWS]) - 1) << (column * geo[HEIGHT])


def move_bit(mask, column, geo):
    """The bit a stone dropped in ``column`` lands on, or 0 if the column is full."""
    return (mask + (1 << (column * geo[HEIGHT]))) & column_bits(column, geo)


def legal_bits(mask, board_mask, bottom_mask):
    """The landing cell of every column that is not full."""
    return (mask + bottom_mask) & board_mask


def mirror(bits, geo):
    """The bitboard reflected left-right."""
    result = bits & 0
    columns = geo[COLUMNS]
    height = geo[HEIGHT]
    for c in range(columns):
        part = (bits >> (c * height)) & column_bits(0, geo)
        result = result | (part << ((columns - 1 - c) * height))
    return result


def position_key(current, mask):
    """One number per position: ``current + mask`` sets the bit above each column's top stone (the column's
    height) and marks the mover's stones below it, so different positions never share a key.
    """
    return current + mask


def xorshift32(state):
    """Next state of a 32-bit xorshift generator (values kept below 2**32 in either mode)."""
    state = state ^ ((state << 13) & 0xFFFFFFFF)
    state = state ^ (state >> 17)
    state = state ^ ((state << 5) & 0xFFFFFFFF)
    return state


# -- many boards at once (the batched env) -----------------------------------------------------------------
def play_moves(stones, heights, ply, index, columns, geo, won, full):
    """Drop a stone for the player to move in game ``index[k]``, column ``columns[k]``, for every ``k``.

    ``stones`` (2, n) holds each absolute player's bitboard, ``heights`` (n, columns) the stones per column,
    ``ply`` (n,) the stones per game; all are updated in place. Moves must be legal and games distinct.
    Writes into ``won[k]``/``full[k]`` whether the move won / filled the board.
    """
    height = geo[HEIGHT]
    cells = geo[CELLS]
    for k in range(index.shape[0]):
        game = index[k]
        column = int(columns[k])
        player = ply[game] & 1
        stack = int(heights[game, column])
        bits = int(stones[player, game]) | (1 << (column * height + stack))
        stones[player, game] = bits
        heights[game, column] = stack + 1
        ply[game] += 1
        full[k] = ply[game] == cells
        won[k] = has_won(bits, geo)


def undo_moves(stones, heights, ply, index, columns, geo):
    """Take back the last stone of game ``index[k]``, played in column ``columns[k]`` (inverse of
    ``play_moves``).
    """
    height = geo[HEIGHT]
    for k in range(index.shape[0]):
        game = index[k]
        column = int(columns[k])
        ply[game] -= 1
        player = ply[game] & 1
        stack = int(heights[game, column]) - 1
        heights[game, column] = stack
        stones[player, game] = int(stones[player, game]) ^ (1 << (column * height + stack))
