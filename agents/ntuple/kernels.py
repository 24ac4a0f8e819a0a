"""The n-tuple network's hot loops in the numba subset: afterstate values, and TD(lambda) self-play.

`connect4_env.compiled.kernels_for` loads this file in two builds, as it does the rules kernels: numba-compiled
for boards whose bitboard fits in 63 bits, plain Python for any other board (the same code, slower). The rules
(a win, a column's landing cell) come from `connect4_env.kernels`, the one implementation of them.

A board is seen by the network as one *state* per bit of the bitboard layout (column ``c`` owns bits
``c*height .. c*height+rows-1``): 0 an empty cell that cannot be played yet, 1 a stone of the first player,
2 a stone of the second, 3 an empty cell a stone would land on now. The four states follow Thill, Koch and
Konen (2012): an empty cell that can be played is worth telling apart from one that cannot.

The network's value of a board is ``tanh`` of a sum of lookup-table weights, from the *first* player's view
(+1 it wins, -1 it loses). Each tuple is a list of cells (bit indices); its weight for a board is read at the
index ``sum(state[cell_j] * 4**(n-1-j))``. ``tuples`` holds every tuple and, below them, each tuple's mirror
image (the same cells reflected left-right), which reads the *same* table: row ``k`` reads table
``k % n_tuples``. ``weights[side]`` is the set of tables for the boards that ``side`` (0 first player, 1
second) has just moved into (the afterstates of that side).
"""

# ruff: noqa: SIM108  (numba compiles plain if/else blocks; keep the kernels in the simplest Python)
from __future__ import annotations

import math

from connect4_env.kernels import HEIGHT, ROWS, has_won, xorshift32

__all__ = [
    "STATES",
    "EMPTY",
    "PLAYABLE",
    "reset_states",
    "tuple_indices",
    "move_values",
    "self_play",
]

STATES = 4  # cell states: EMPTY, first player's stone, second player's stone, PLAYABLE
EMPTY = 0
PLAYABLE = 3


def reset_states(states, heights, geo):
    """The empty board: every cell EMPTY but the bottom row, PLAYABLE; every column's height 0."""
    height = geo[HEIGHT]
    for i in range(states.shape[0]):
        states[i] = EMPTY
    for c in range(heights.shape[0]):
        heights[c] = 0
        states[c * height] = PLAYABLE


def tuple_indices(tuples, states, out):
    """Each tuple's (and mirror image's) table index for the board ``states``, into ``out``."""
    length = tuples.shape[1]
    for k in range(tuples.shape[0]):
        index = 0
        for j in range(length):
            index = index * 4 + int(states[tuples[k, j]])
        out[k] = index


def _drop(states, heights, column, mover, geo):
    """Put ``mover``'s stone (0 or 1) in ``column``: the landing cell gets the stone, the cell above (if on the
    board) becomes PLAYABLE. Returns the landing bit.
    """
    height = geo[HEIGHT]
    bit = column * height + int(heights[column])
    states[bit] = 1 + mover
    if heights[column] + 1 < geo[ROWS]:
        states[bit + 1] = PLAYABLE
    heights[column] += 1
    return bit


def move_values(weights, tuples, n_tuples, geo, states, heights, stones, ply, out, cell_rows, scratch, base):
    """The value of every column's afterstate for the player to move, from the *first* player's view, into
    ``out`` (NaN for a full column): exactly +1 / -1 for a move that wins, 0 for one that fills the board,
    else ``tanh`` of the network's sum. ``stones`` holds the two players' bitboards; ``ply`` the stones played.
    Returns the number of legal columns.

    A move changes two cells (the landing cell gets a stone, the one above becomes PLAYABLE), so only the
    tuples through them change index: the sum of the position's own indices is read once, and each move
    corrects it for those tuples alone. ``cell_rows`` (cells, 1 + most rows through a cell, 2) lists, per
    cell, the count then the ``(row, 4**place)`` of every tuple row through it. ``scratch`` (4, rows) int64
    and ``base`` (rows,) float64 are work space.
    """
    mover = ply & 1
    rows = geo[ROWS]
    height = geo[HEIGHT]
    cells = rows * heights.shape[0]
    sign = 1.0 - 2.0 * mover
    n_rows = tuples.shape[0]
    length = tuples.shape[1]
    index = scratch[0]
    changed = scratch[1]
    stamp = scratch[2]
    touched = scratch[3]
    position_sum = 0.0
    for k in range(n_rows):
        value = 0
        for j in range(length):
            value = value * 4 + int(states[tuples[k, j]])
        index[k] = value
        base[k] = weights[mover, k % n_tuples, value]
        position_sum += base[k]
        stamp[k] = -1
    legal = 0
    for c in range(heights.shape[0]):
        if heights[c] >= rows:
            out[c] = math.nan
            continue
        legal += 1
        bit = c * height + int(heights[c])
        if has_won(stones[mover] | (1 << bit), geo):
            out[c] = sign
            continue
        if ply + 1 == cells:
            out[c] = 0.0
            continue
        n_touched = 0
        # the landing cell: PLAYABLE -> the mover's stone
        for e in range(1, cell_rows[bit, 0, 0] + 1):
            r = cell_rows[bit, e, 0]
            changed[r] = index[r] + (1 + mover - PLAYABLE) * cell_rows[bit, e, 1]
            stamp[r] = c
            touched[n_touched] = r
            n_touched += 1
        if heights[c] + 1 < rows:  # the cell above: EMPTY -> PLAYABLE
            above = bit + 1
            for e in range(1, cell_rows[above, 0, 0] + 1):
                r = cell_rows[above, e, 0]
                if stamp[r] == c:
                    changed[r] += PLAYABLE * cell_rows[above, e, 1]
                else:
                    changed[r] = index[r] + PLAYABLE * cell_rows[above, e, 1]
                    stamp[r] = c
                    touched[n_touched] = r
                    n_touched += 1
        total = position_sum
        for t in range(n_touched):
            r = touched[t]
            total += weights[mover, r % n_tuples, changed[r]] - base[r]
        out[c] = math.tanh(total)
    return legal


def _uniform(rng):
    """A float in [0, 1) from the xorshift32 state ``rng[0]`` (advanced)."""
    rng[0] = xorshift32(rng[0])
    return rng[0] / 4294967296.0


def self_play(
    weights,
    tuples,
    n_tuples,
    geo,
    n_games,
    alpha,
    trace_decay,
    epsilon,
    rng,
    states,
    heights,
    stones,
    values,
    history,
    history_side,
    history_grad,
    cell_rows,
    scratch,
    base,
    stats,
):
    """Play ``n_games`` games of self-play and learn from them by TD(lambda) on the afterstates.

    Each move is epsilon-greedy: with probability ``epsilon`` a uniformly random legal column (an
    *exploratory* move), else the column whose afterstate value is best for the mover (highest for the first
    player, lowest for the second; the first of equal ones). The afterstates of a game, both players' in
    turn, form one sequence ``x_0, x_1, ...``; after each greedy move the TD error
    ``delta = V(x_{t+1}) - V(x_t)`` (with ``V`` of a finished game its result: +1, 0, -1 for the first player)
    updates the recent afterstates ``x_{t-k}``, ``k < history.shape[0]``, each weight they read by
    ``alpha * trace_decay**k * delta * (1 - V(x_{t-k})**2)``: eligibility traces truncated where
    ``trace_decay**k`` no longer matters, the gradient of each afterstate taken when it entered the trace.
    An exploratory move teaches nothing about the moves before it: no update, and the traces restart.

    Args:
        weights (np.ndarray): (2, n_tuples, 4**n) float32 tables, updated in place.
        tuples (np.ndarray): (2 * n_tuples, n) cells of the tuples and, below, of their mirror images.
        n_tuples (int): the number of tables per side.
        geo (tuple): the rules' geometry (`connect4_env.compiled.kernel_geometry`).
        n_games (int): games to play.
        alpha (float): the step size per weight.
        trace_decay (float): lambda.
        epsilon (float): the probability of an exploratory move.
        rng (np.ndarray): (1,) xorshift32 state, advanced in place.
        states (np.ndarray): (cells,) int8 work space: the board's cell states.
        heights (np.ndarray): (columns,) work space: the stones per column.
        stones (np.ndarray): (2,) work space: the players' bitboards.
        values (np.ndarray): (columns,) work space: the moves' values.
        history (np.ndarray): (horizon, 2 * n_tuples) int64 work space: the table indices of the recent afterstates (a ring).
        history_side (np.ndarray): (horizon,) work space: the side each of them was reached by.
        history_grad (np.ndarray): (horizon,) work space: their gradient factor ``1 - V**2``.
        cell_rows (np.ndarray): the rows through each cell, as for `move_values`.
        scratch (np.ndarray): (4, rows) int64 work space, as for `move_values`.
        base (np.ndarray): (rows,) float64 work space, as for `move_values`.
        stats (np.ndarray): (4,) int64 counts, added to: first-player wins, draws, second-player wins, moves played.
    """
    horizon = history.shape[0]
    rows_total = tuples.shape[0]
    columns = heights.shape[0]
    for _ in range(n_games):
        reset_states(states, heights, geo)
        stones[0] = stones[0] & 0
        stones[1] = stones[1] & 0
        ply = 0
        kept = 0  # afterstates in the trace, a ring: history[head] the most recent
        head = 0
        while True:
            mover = ply & 1
            legal = move_values(
                weights, tuples, n_tuples, geo, states, heights, stones, ply, values, cell_rows, scratch, base
            )
            explore = _uniform(rng) < epsilon
            column = -1
            if explore:
                pick = int(_uniform(rng) * legal)
                for c in range(columns):
                    if heights[c] < geo[ROWS]:
                        if pick == 0:
                            column = c
                            break
                        pick -= 1
            else:
                best = 0.0
                for c in range(columns):
                    if heights[c] < geo[ROWS]:
                        value = values[c] if mover == 0 else -values[c]
                        if column < 0 or value > best:
                            best = value
                            column = c
            target = values[column]
            bit = column * geo[HEIGHT] + int(heights[column])
            stones[mover] = stones[mover] | (1 << bit)
            _drop(states, heights, column, mover, geo)
            ply += 1
            won = has_won(stones[mover], geo)
            finished = won or ply == geo[ROWS] * columns
            if won:
                target = 1.0 - 2.0 * mover
            elif finished:
                target = 0.0
            if explore:
                kept = 0
            elif kept > 0:
                # the newest afterstate before this move, valued now: its gradient enters the trace
                slot = head
                side = history_side[slot]
                total = 0.0
                for k in range(rows_total):
                    total += weights[side, k % n_tuples, history[slot, k]]
                previous = math.tanh(total)
                history_grad[slot] = 1.0 - previous * previous
                delta = target - previous
                decay = 1.0
                for t in range(kept):
                    slot = (head - t + horizon) % horizon
                    step = alpha * decay * delta * history_grad[slot]
                    side = history_side[slot]
                    for k in range(rows_total):
                        weights[side, k % n_tuples, history[slot, k]] += step
                    decay *= trace_decay
            if finished:
                if target > 0.0:
                    stats[0] += 1
                elif target < 0.0:
                    stats[2] += 1
                else:
                    stats[1] += 1
                stats[3] += ply
                break
            # the new afterstate enters the trace (over the oldest one when it is full)
            if kept < horizon:
                kept += 1
            head = (head + 1) % horizon
            tuple_indices(tuples, states, history[head])
            history_side[head] = mover
    return stats
