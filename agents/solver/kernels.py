"""The exact solver's search in the numba subset; one job: all that a search node calls, compiled together.

The search (alpha-beta negamax, exact scores), its transposition table and the opening-book lookup stay in
one module: numba compiles them together without reference counting (``NUMBA_OPTIONS``), which is safe only
when every function handed the search's arrays is compiled so.

`connect4_env.compiled` builds this module twice (see there): plain Python for any board, and numba-compiled
for boards up to 63 bits, where the rule functions imported from `connect4_env.kernels` are the compiled
ones. [`connect4_agents.SolverAgent`][connect4_agents.solver.agent.SolverAgent] owns the tables and calls
`solve` and `value_at_most`.

The searches share one context tuple, built by `make_context` and read by the ``CTX_*`` places:
``(geo, board_mask, bottom_mask, order, table, stats, move_buffer, score_buffer, book_codes, book_scores,
book_ply)``:

- ``geo``, ``board_mask``, ``bottom_mask``: the board (see `connect4_env.kernels`);
- ``order``: the columns in the order to try them (centre first);
- ``table``: the transposition table, one ``(slots, 2)`` array whose row is a slot: the position's key, then
  its lower and upper bounds on the score and its best move packed by ``tt_pack`` (never 0; 0 marks an empty
  slot). Key and entry share a cache line, so a probe costs one memory access;
- ``stats = [nodes, node_budget, aborted]``; ``move_buffer``/``score_buffer``: ``(cells + 1, columns)`` scratch
  arrays, one row per depth, so nothing is allocated per node;
- ``book_codes``/``book_scores``: the opening book, looked up at positions of ``book_ply`` stones (-1: none).

Scores are from the mover's view: a win whose last stone is the board's w-th scores ``cells + 1 - w``, a loss
the negative, a draw 0.
"""

# ruff: noqa: SIM108  (numba compiles plain if/else blocks; keep the kernels in the simplest Python)
from __future__ import annotations

from connect4_env.kernels import (
    CELLS,
    COLUMNS,
    HEIGHT,
    ROWS,
    column_bits,
    legal_bits,
    popcount,
    position_key,
    threat_cells,
)

__all__ = [
    "UNKNOWN_SCORE",
    "TT_NO_LOWER",
    "TT_NO_UPPER",
    "tt_pack",
    "tt_entry",
    "tt_upper",
    "make_context",
    "book_code",
    "book_score",
    "negamax",
    "solve",
    "solve_above",
    "score_moves",
    "value_at_most",
]

# How `connect4_env.compiled` compiles this module. ``nogil``: a search runs without Python's lock, so a search of
# seconds leaves other threads running (a server's event loop); one search per context at a time (SolverAgent's
# tables are its own, SolverRubric holds a lock around its agent). ``_nrt`` False: no reference counting of the
# arrays, which nothing here allocates; numba counted each read of an array from the context tuple, atomically,
# and the searches ran about 1.4x as many nodes a second without it (the same answers).
NUMBA_OPTIONS = {"nogil": True, "_nrt": False}
UNKNOWN_SCORE = -1000  # "no score without a search": a position the book does not hold, and the like
TT_NO_LOWER, TT_NO_UPPER = -32768, 32767  # the bounds of a transposition-table entry that knows nothing yet

# Places in the context tuple.
CTX_GEO, CTX_BOARD_MASK, CTX_BOTTOM_MASK, CTX_ORDER, CTX_TABLE = 0, 1, 2, 3, 4
CTX_STATS, CTX_MOVE_BUFFER, CTX_SCORE_BUFFER = 5, 6, 7
CTX_BOOK_CODES, CTX_BOOK_SCORES, CTX_BOOK_PLY = 8, 9, 10


def make_context(
    geo,
    board_mask,
    bottom_mask,
    order,
    table,
    stats,
    move_buffer,
    score_buffer,
    book_codes,
    book_scores,
    book_ply,
):
    """The context tuple the searches read (see the module docstring), in its fixed order."""
    return (
        geo,
        board_mask,
        bottom_mask,
        order,
        table,
        stats,
        move_buffer,
        score_buffer,
        book_codes,
        book_scores,
        book_ply,
    )


def non_losing_moves(current, mask, geo, board_mask, bottom_mask):
    """Moves that do not hand the opponent an immediate win (0 if every move loses next turn)."""
    possible = legal_bits(mask, board_mask, bottom_mask)
    opponent_wins = threat_cells(current ^ mask, mask, geo, board_mask)
    forced = possible & opponent_wins
    if forced != 0:
        if (forced & (forced - 1)) != 0:  # two threats: cannot block both
            return forced & 0
        possible = forced
    return possible & ~(opponent_wins >> 1)  # never play right under an opponent's winning cell


def can_win_now(current, mask, geo, board_mask, bottom_mask):
    """True if the player to move completes a line with one stone."""
    return (threat_cells(current, mask, geo, board_mask) & legal_bits(mask, board_mask, bottom_mask)) != 0


def book_code(current, mask, geo, mirrored):
    """The opening book's 32-bit key of a position with ``current`` = the first player's stones.

    Columns left to right (right to left if ``mirrored``), each bottom up: ``10`` a first-player stone,
    ``11`` a second-player one, ``0`` closes the column (also after a full one); one more ``0`` at the end.
    Read as a signed 32-bit integer, as the book file stores it.
    """
    rows = geo[ROWS]
    columns = geo[COLUMNS]
    height = geo[HEIGHT]
    code = 0
    for k in range(columns):
        c = k
        if mirrored:
            c = columns - 1 - k
        for r in range(rows):
            bit = 1 << (c * height + r)
            if (mask & bit) == 0:
                break
            code = code * 2 + 1
            if (current & bit) != 0:
                code = code * 2
            else:
                code = code * 2 + 1
        code = code * 2  # the column's closing 0
    code = code * 2
    if code >= 2147483648:
        code -= 4294967296
    return code


def book_find(codes, code):
    """Index of ``code`` in the sorted ``codes``, or -1."""
    low = 0
    high = codes.shape[0] - 1
    while low <= high:
        middle = (low + high) // 2
        value = int(codes[middle])
        if value == code:
            return middle
        if value < code:
            low = middle + 1
        else:
            high = middle - 1
    return -1


def book_score(current, mask, n_stones, geo, book_codes, book_scores):
    """Our score (see ``negamax``) of a book position for the player to move, or ``UNKNOWN_SCORE``.

    The book stores, for the first player (to move at its even ply), ``100 - d`` for a win whose last stone
    comes ``d`` plies later, its negative for a loss, 0 for a draw; a position or its mirror image.
    """
    index = book_find(book_codes, book_code(current, mask, geo, False))
    if index < 0:
        index = book_find(book_codes, book_code(current, mask, geo, True))
        if index < 0:
            return UNKNOWN_SCORE
    stored = int(book_scores[index])
    if stored == 0:
        return 0
    # a win by the stone n_stones + d scores cells + 1 - n_stones - d
    if stored > 0:
        return geo[CELLS] + 1 - n_stones - (100 - stored)
    return -(geo[CELLS] + 1 - n_stones - (100 + stored))


def book_lower_bound(current, mask, n_stones, geo, book_codes, book_scores):
    """A lower bound on the score of a position one stone past the book, for the player to move.

    Each book position it comes from (the same board less one of the opponent's top stones) was the
    opponent's to play: their score there is at least what they get by playing here, so this position scores
    at least the negative of theirs. The best of these bounds (``UNKNOWN_SCORE`` when no parent is in the book).
    """
    rows = geo[ROWS]
    height = geo[HEIGHT]
    opponent = current ^ mask
    best = UNKNOWN_SCORE
    for c in range(geo[COLUMNS]):
        column = mask & column_bits(c, geo)
        if column == 0:
            continue
        top = (column + (1 << (c * height))) >> 1  # the column's highest stone
        top &= column
        if (opponent & top) == 0 or rows == 0:
            continue
        known = book_score(opponent ^ top, mask ^ top, n_stones - 1, geo, book_codes, book_scores)
        if known != UNKNOWN_SCORE and -known > best:
            best = -known
    return best


def negamax(current, mask, n_stones, alpha, beta, ctx):
    """Alpha-beta negamax with a transposition table of upper and lower bounds (after Pascal Pons' solver).

    Returns the score for the player to move (see the module docstring) when it lies in ``(alpha, beta)``,
    else a bound on the same side. Precondition: the mover cannot win with this move. Positions with
    ``book_ply`` stones are looked up in the opening book.

    After an abort (``ctx[CTX_STATS][2]`` set) the value returned is meaningless and nothing more is written to the
    transposition table, so the kept table stays true.
    """
    # The arrays are read through ``ctx[...]`` at each use, not bound to locals: with reference counting on, numba
    # counts references to an array held in a local across branches and returns, which slows this hot loop
    # (docs/design/notes.md); NUMBA_OPTIONS turns the counting off, where numba allows it.
    ctx[CTX_STATS][0] += 1
    if ctx[CTX_STATS][2] != 0:
        return 0
    if ctx[CTX_STATS][1] > 0 and ctx[CTX_STATS][0] > ctx[CTX_STATS][1]:
        ctx[CTX_STATS][2] = 1
        return 0
    geo = ctx[CTX_GEO]
    board_mask = ctx[CTX_BOARD_MASK]
    if n_stones == ctx[CTX_BOOK_PLY]:
        known = book_score(current, mask, n_stones, geo, ctx[CTX_BOOK_CODES], ctx[CTX_BOOK_SCORES])
        if known != UNKNOWN_SCORE:
            return known
    elif n_stones == ctx[CTX_BOOK_PLY] + 1:
        # one stone past the book: each position it came from bounds this one's score from below
        floor = book_lower_bound(current, mask, n_stones, geo, ctx[CTX_BOOK_CODES], ctx[CTX_BOOK_SCORES])
        if alpha < floor:
            alpha = floor
            if alpha >= beta:
                return alpha
    cells = geo[CELLS]
    columns = geo[COLUMNS]
    possible = non_losing_moves(current, mask, geo, board_mask, ctx[CTX_BOTTOM_MASK])
    if possible == 0:  # the opponent wins with the next stone, the (n_stones + 2)-th
        return -(cells - n_stones - 1)
    if n_stones >= cells - 2:  # neither side can win any more
        return 0
    low = -(cells - n_stones - 3)  # the opponent cannot win before the (n_stones + 4)-th stone
    if alpha < low:
        alpha = low
        if alpha >= beta:
            return alpha
    high = cells - n_stones - 2  # nor we before the (n_stones + 3)-th
    key = position_key(current, mask)
    slot, packed = tt_entry(ctx[CTX_TABLE], key)
    # the kept entry: both bounds and the move that last proved a lower bound (see ``tt_pack``)
    known_low = TT_NO_LOWER
    known_high = TT_NO_UPPER
    known_move = -1
    if packed != 0:
        known_low = (packed & 65535) - 32768
        known_high = tt_upper(packed)
        known_move = (packed >> 32) - 1
        if known_high < high:
            high = known_high
        if alpha < known_low:
            alpha = known_low
            if alpha >= beta:
                return alpha
    if beta > high:
        beta = high
        if alpha >= beta:
            return beta
    # order the moves: the kept entry's move first, then most new threats, centre first among equals; on the
    # way, a child whose kept upper bound already proves score >= beta ends the search (enhanced
    # transposition cutoff)
    opponent = current ^ mask
    n_moves = 0
    for k in range(columns):
        col = int(ctx[CTX_ORDER][k])
        bit = possible & column_bits(col, geo)
        if bit == 0:
            continue
        _, child = tt_entry(ctx[CTX_TABLE], position_key(opponent, mask | bit))
        if child != 0 and -tt_upper(child) >= beta:
            return -tt_upper(child)
        if col == known_move:
            score = cells  # more than any count of threats
        else:
            score = popcount(threat_cells(current | bit, mask | bit, geo, board_mask))
        j = n_moves
        while j > 0 and ctx[CTX_SCORE_BUFFER][n_stones, j - 1] < score:
            ctx[CTX_MOVE_BUFFER][n_stones, j] = ctx[CTX_MOVE_BUFFER][n_stones, j - 1]
            ctx[CTX_SCORE_BUFFER][n_stones, j] = ctx[CTX_SCORE_BUFFER][n_stones, j - 1]
            j -= 1
        ctx[CTX_MOVE_BUFFER][n_stones, j] = col
        ctx[CTX_SCORE_BUFFER][n_stones, j] = score
        n_moves += 1
    for k in range(n_moves):
        col = int(ctx[CTX_MOVE_BUFFER][n_stones, k])
        bit = possible & column_bits(col, geo)
        score = -negamax(current ^ mask, mask | bit, n_stones + 1, -beta, -alpha, ctx)
        if ctx[CTX_STATS][2] != 0:
            return 0  # aborted below: store nothing
        if score >= beta:
            if score > known_low:
                known_low = score
            ctx[CTX_TABLE][slot, 0] = key
            ctx[CTX_TABLE][slot, 1] = tt_pack(known_low, known_high, col)
            return score
        if score > alpha:
            alpha = score
    if alpha < known_high:
        known_high = alpha
    ctx[CTX_TABLE][slot, 0] = key
    ctx[CTX_TABLE][slot, 1] = tt_pack(known_low, known_high, known_move)
    return alpha


def tt_pack(low, high, move):
    """A transposition-table value: a lower and an upper bound on the score (each + 32768 in 16 bits) and,
    above them, the move that proved the lower bound (+ 1; 0 for none). Never 0: the upper bound's field is
    at least 1 (no score is -32768), so 0 can mark an empty slot.
    """
    return (low + 32768) | ((high + 32768) << 16) | ((move + 1) << 32)


def tt_entry(table, key):
    """The slot of ``key`` in ``table`` and the entry kept for it there (0: none, or another position's)."""
    slot = key % table.shape[0]
    packed = table[slot, 1]
    if packed != 0 and table[slot, 0] != key:
        return slot, 0
    return slot, packed


def tt_upper(packed):
    """The upper bound on the score in a ``tt_pack`` entry."""
    return ((packed >> 16) & 65535) - 32768


def score_without_search(current, mask, n_stones, ctx):
    """The position's score when it is known at once (a win in one, a full board next, a book position),
    else ``UNKNOWN_SCORE``. The start of ``solve`` and ``value_at_most``.
    """
    geo = ctx[CTX_GEO]
    cells = geo[CELLS]
    if can_win_now(current, mask, geo, ctx[CTX_BOARD_MASK], ctx[CTX_BOTTOM_MASK]):
        return cells - n_stones
    if n_stones >= cells - 1:
        return 0
    if n_stones == ctx[CTX_BOOK_PLY]:
        return book_score(current, mask, n_stones, geo, ctx[CTX_BOOK_CODES], ctx[CTX_BOOK_SCORES])
    return UNKNOWN_SCORE


def solve(current, mask, n_stones, ctx):
    """The exact score of a position for the player to move (see ``negamax``), by null-window searches
    (after an abort, ``stats[2]`` is set and the answer is void): ``solve_above`` knowing nothing more.
    """
    return solve_above(current, mask, n_stones, UNKNOWN_SCORE, ctx)


def solve_above(current, mask, n_stones, floor, ctx):
    """The exact score of a position known to score at least ``floor`` (``UNKNOWN_SCORE``: nothing known), by
    null-window searches (after an abort, ``stats[2]`` is set and the answer is void).

    The first search asks "is the score exactly ``floor``?": it often is, and one search then settles what the
    binary search needs several for. ``floor`` is the best of the caller's and, one stone past the book, the
    bound the book's parents give (``book_lower_bound``: a fifth fewer nodes on positions just past the book).
    A caller scoring every move knows the position's own score, which bounds each move's from below.
    """
    known = score_without_search(current, mask, n_stones, ctx)
    if known != UNKNOWN_SCORE:
        return known
    geo = ctx[CTX_GEO]
    cells = geo[CELLS]
    stats = ctx[CTX_STATS]
    low = -(cells - n_stones - 1)
    high = cells - n_stones - 2
    if n_stones == ctx[CTX_BOOK_PLY] + 1:
        parents = book_lower_bound(current, mask, n_stones, geo, ctx[CTX_BOOK_CODES], ctx[CTX_BOOK_SCORES])
        if parents > floor:
            floor = parents
    parity = (cells - n_stones) % 2
    high = score_at_most(high, parity)
    floor = score_at_least(floor, parity)
    if floor >= high:
        return high  # the score is at most ``high`` (no win before the (n_stones + 3)-th stone)
    if floor > low:
        result = negamax(current, mask, n_stones, floor, floor + 1, ctx)
        if stats[2] != 0:
            return 0
        if result <= floor:
            return floor
        low = result
    low = score_at_least(low, parity)
    while low < high:
        middle = low + (high - low) // 2
        if middle <= 0 and low // 2 < middle:
            middle = low // 2
        elif middle >= 0 and high // 2 > middle:
            middle = high // 2
        # "at most ``middle``?" asks the same as "at most the highest possible score up to it"
        middle = score_at_most(middle, parity)
        result = negamax(current, mask, n_stones, middle, middle + 1, ctx)
        if stats[2] != 0:
            return 0
        if result <= middle:
            high = score_at_most(result, parity)
        else:
            low = score_at_least(result, parity)
    return low


def score_at_most(value, parity):
    """The highest score a position can have that is at most ``value``; ``parity`` is ``(cells - n_stones) % 2``.

    The mover wins with one of its own stones, the board's (n_stones + 1)-th, (n_stones + 3)-th, ..., so its
    winning scores have the parity of ``cells - n_stones``; the opponent's wins score the other parity, as
    negatives; a draw is 0. So half the values in a range cannot be a score, and the binary search skips them.
    """
    if value > 0:
        if value % 2 != parity:
            return value - 1
    elif value < 0 and (value % 2) == parity:
        return value - 1
    return value


def score_at_least(value, parity):
    """The lowest score a position can have that is at least ``value`` (see ``score_at_most``)."""
    if value > 0:
        if value % 2 != parity:
            return value + 1
    elif value < 0 and (value % 2) == parity:
        return value + 1
    return value


def score_moves(current, mask, n_stones, scores, ctx):
    """Each move's exact score for the player to move, into ``scores`` (one per column; ``UNKNOWN_SCORE`` for a
    full column), in one call (after an abort, ``stats[2]`` is set and the answer is void).

    A move that wins at once scores ``cells - n_stones``, one that fills the board 0. The others: the
    position's own score first (no move scores more), then each move's opponent score by ``solve_above``,
    knowing it is at least that score's negative (where the best moves score, so one search settles each of
    them).
    """
    geo = ctx[CTX_GEO]
    cells = geo[CELLS]
    possible = legal_bits(mask, ctx[CTX_BOARD_MASK], ctx[CTX_BOTTOM_MASK])
    wins = threat_cells(current, mask, geo, ctx[CTX_BOARD_MASK]) & possible
    best = UNKNOWN_SCORE
    for column in range(geo[COLUMNS]):
        bit = possible & column_bits(column, geo)
        if bit == 0:
            scores[column] = UNKNOWN_SCORE
        elif (wins & bit) != 0:
            scores[column] = cells - n_stones
        elif n_stones + 1 == cells:
            scores[column] = 0
        else:
            if best == UNKNOWN_SCORE:
                best = solve(current, mask, n_stones, ctx)
                if ctx[CTX_STATS][2] != 0:
                    return
            scores[column] = -solve_above(current ^ mask, mask | bit, n_stones + 1, -best, ctx)
            if ctx[CTX_STATS][2] != 0:
                return


def value_at_most(current, mask, n_stones, bound, ctx):
    """True if the position's score for the player to move is at most ``bound``: one null-window search,
    far cheaper than ``solve``'s exact score (after an abort, ``stats[2]`` is set and the answer is void).
    """
    known = score_without_search(current, mask, n_stones, ctx)
    if known != UNKNOWN_SCORE:
        return known <= bound
    result = negamax(current, mask, n_stones, bound, bound + 1, ctx)
    return result <= bound
