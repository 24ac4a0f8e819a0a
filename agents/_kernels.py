"""Hot loops of the search agents, written once in the subset of Python that numba compiles.

``connect4_agents._compiled`` loads this file twice: as plain Python (any board size: bitboards are Python ints in
object arrays) and, when numba is installed, compiled with every function ``njit``-ed (boards whose bitboard
fits in 63 bits: int64 arrays). Both run the same code on the same inputs and give the same results, which
the tests check. No Python objects, no recursion into other modules, no global RNG: randomness comes from
the xorshift32 state passed in.

Bit layout as in :mod:`connect4_env.core`: column ``c`` owns bits ``c*height .. c*height+rows``, the top
one a sentinel. A position is ``(current, mask)``: the stones of the player to move, and all stones.

Geometry is passed as ``geo``, a tuple of ints built from :class:`~connect4_env.core.Rules` by
``connect4_agents._compiled.kernel_geometry``: ``(rows, columns, height, win_length, cells)`` followed by the rules' win
shifts along the vertical (``Rules.win_shifts[0]``: the run lengths ``has_won`` doubles through; the other
directions scale them by their step), padded with zeros to ``STEPS`` entries. ``board_mask`` and
``bottom_mask`` come as scalars (they may exceed 64 bits in Python mode). Every value that
enters a bit operation is a plain int (``int(...)`` around array reads) so that Python mode never mixes
numpy's fixed-width integers into big bitboards.
"""

# ruff: noqa: SIM108  (numba compiles plain if/else blocks; keep the kernels in the simplest Python)
from __future__ import annotations

import math

ROWS, COLUMNS, HEIGHT, WIN_LENGTH, CELLS, SHIFTS = 0, 1, 2, 3, 4, 5
STEPS = 8  # run-doubling shifts in geo (zero-padded; more only for win_length > 256, in Python mode)

# MCTS bounds on a node's game value for the player who moved into it.
LOSS, DRAW, WIN = 0, 1, 2


# -- rules on bitboards -----------------------------------------------------------------------------------
def has_won(stones, geo):
    """True if ``stones`` holds win_length in a line, by the rules' own run doubling (``Rules.win_shifts``):
    ``geo`` carries the vertical direction's shifts, which are the run lengths; each direction scales them."""
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
        direction = 1
        if k == 1:
            direction = height
        elif k == 2:
            direction = height - 1
        elif k == 3:
            direction = height + 1
        run = stones
        for j in range(len(geo) - SHIFTS):
            step = geo[SHIFTS + j]
            if step == 0:  # padding: this direction's shifts are done
                break
            run = run & (run >> (step * direction))
        if run != 0:
            return True
    return False


def winning_cells4(stones, mask, geo, board_mask):
    """``winning_cells`` for lines of four, in closed form: for each direction, an empty cell completes a
    line when three stones sit on one side of it, or two on one side and one on the other."""
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


def winning_cells(stones, mask, geo, board_mask):
    """Empty cells where one more stone would give ``stones`` a line of win_length."""
    height = geo[HEIGHT]
    length = geo[WIN_LENGTH]
    if length == 4:
        return winning_cells4(stones, mask, geo, board_mask)
    result = stones & 0
    for k in range(4):
        direction = 1
        if k == 1:
            direction = height
        elif k == 2:
            direction = height - 1
        elif k == 3:
            direction = height + 1
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


def mirror(bits, geo):
    """The bitboard reflected left-right."""
    result = bits & 0
    columns = geo[COLUMNS]
    height = geo[HEIGHT]
    for c in range(columns):
        part = (bits >> (c * height)) & column_bits(0, geo)
        result = result | (part << ((columns - 1 - c) * height))
    return result


def xorshift32(state):
    """Next state of a 32-bit xorshift generator (values kept below 2**32 in either mode)."""
    state = state ^ ((state << 13) & 0xFFFFFFFF)
    state = state ^ (state >> 17)
    state = state ^ ((state << 5) & 0xFFFFFFFF)
    return state


# -- MCTS -------------------------------------------------------------------------------------------------
def rollout(current, mask, geo, board_mask, rng):
    """Random moves to the end. Returns the result for the player who is *not* to move at the start
    (1 win, 0.5 draw, 0 loss). ``rng`` is a one-element state array, advanced in place."""
    columns = geo[COLUMNS]
    state = rng[0]
    side = 0  # 0: the player to move at the start
    while True:
        if mask == board_mask:
            rng[0] = state
            return 0.5
        while True:
            state = xorshift32(state)
            move = move_bit(mask, int(state % columns), geo)
            if move != 0:
                break
        if has_won(current | move, geo):
            rng[0] = state
            return 0.0 if side == 0 else 1.0
        current = current ^ mask
        mask = mask | move
        side = 1 - side


def mcts_playouts(
    n_playouts,
    root,
    cur,
    msk,
    parent,
    move,
    first_child,
    n_children,
    value,
    visits,
    lower,
    upper,
    depth,
    meta,
    geo,
    board_mask,
    c,
    prior,
    solver,
    symmetry,
):
    """Run up to ``n_playouts`` playouts from ``root``; returns how many ran.

    ``meta = [n_nodes, rng_state, may_grow]``. ``value[i]`` sums results for the player who moved into node
    ``i`` (win 1, draw 1/2) plus ``prior``; ``visits[i]`` counts playouts through it (``2 * prior`` more
    virtual ones enter UCB1). ``lower[i]``/``upper[i]`` bound the game value of node ``i`` for the player
    who moved into it (0 loss, 1 draw, 2 win; score-bounded MCTS). Terminal children are exact from their
    creation; with ``solver``, visiting one updates the bounds of its ancestors (``propagate_bounds``), a
    node whose bounds meet is proven and is not searched below, its exact value is backed up instead of a
    rollout, and means are clamped into the bounds. Proven moves are still selected by UCB1 like the others:
    skipping them makes forced lines exact while quiet lines keep optimistic averages, which misleads the
    comparison between moves (see the README).

    A leaf is expanded (all its children at once) on its second visit; its first visit is a rollout from
    it. Stops early when the root is proven (solver), or when the node arrays are full and ``may_grow`` is set
    (the caller grows them). Full arrays and ``may_grow`` 0: leaves are no longer expanded, playouts go on.
    """
    columns = geo[COLUMNS]
    capacity = cur.shape[0]
    rng = meta[1:2]
    done = 0
    while done < n_playouts:
        if solver and lower[root] == upper[root]:
            break
        # 1. selection (a proven node is not entered: its value is known)
        node = root
        while first_child[node] >= 0 and not (solver and lower[node] == upper[node]):
            fc = first_child[node]
            nc = n_children[node]
            # at least a draw proven for the player to move here: children that cannot beat it are skipped
            guaranteed = 0
            if solver:
                for i in range(fc, fc + nc):
                    if visits[i] > 0 and lower[i] > guaranteed:
                        guaranteed = lower[i]
            chosen = -1
            if prior == 0:  # unvisited children first, in random order (reservoir sampling)
                seen = 0
                for i in range(fc, fc + nc):
                    if visits[i] == 0 and not (guaranteed > 0 and upper[i] <= guaranteed):
                        seen += 1
                        rng[0] = xorshift32(rng[0])
                        if rng[0] % seen == 0:
                            chosen = i
            if chosen < 0:
                log_n = math.log(visits[node] + 2.0 * prior)
                best = -1.0
                for i in range(fc, fc + nc):
                    if guaranteed > 0 and upper[i] <= guaranteed:
                        continue
                    n_i = visits[i] + 2.0 * prior
                    mean = value[i] / n_i
                    if solver:  # the mean clamped into the child's proven bounds
                        if mean < 0.5 * lower[i]:
                            mean = 0.5 * lower[i]
                        elif mean > 0.5 * upper[i]:
                            mean = 0.5 * upper[i]
                    score = mean + c * math.sqrt(log_n / n_i)
                    if score > best:
                        best = score
                        chosen = i
            if chosen < 0:  # cannot happen: an unproven node has a child that can beat its guarantee
                break
            node = chosen
        # 2. expansion and 3. simulation
        leaf = node
        if first_child[leaf] < 0 and lower[leaf] != upper[leaf] and (visits[leaf] > 0 or leaf == root):
            if meta[0] + columns > capacity and meta[2] != 0:
                break  # the caller grows the arrays
            if meta[0] + columns <= capacity:
                fc = meta[0]
                count = 0
                current = cur[leaf]
                mask = msk[leaf]
                opponent = current ^ mask
                symmetric = symmetry and mirror(current, geo) == current and mirror(mask, geo) == mask
                for col in range(columns):
                    if symmetric and col > columns - 1 - col:
                        continue
                    bit = move_bit(mask, col, geo)
                    if bit == 0:
                        continue
                    child = fc + count
                    cur[child] = opponent
                    msk[child] = mask | bit
                    parent[child] = leaf
                    move[child] = col
                    first_child[child] = -1
                    n_children[child] = 0
                    visits[child] = 0
                    value[child] = prior
                    depth[child] = 0
                    if has_won(current | bit, geo):
                        lower[child] = 2
                        upper[child] = 2
                    elif (mask | bit) == board_mask:
                        lower[child] = 1
                        upper[child] = 1
                    else:
                        lower[child] = 0
                        upper[child] = 2
                    count += 1
                first_child[leaf] = fc
                n_children[leaf] = count
                meta[0] = fc + count
                # simulate from one random new child
                rng[0] = xorshift32(rng[0])
                node = fc + rng[0] % count
        if lower[node] == upper[node] and (solver or first_child[node] < 0):
            result = 0.5 * lower[node]  # proven (or a terminal position)
            if solver and first_child[node] < 0 and node != root:
                propagate_bounds(parent[node], root, parent, first_child, n_children, lower, upper, depth)
        else:
            result = rollout(cur[node], msk[node], geo, board_mask, rng)
        # 4. backpropagation: the result flips at each level
        while True:
            visits[node] += 1
            value[node] += result
            if node == root:
                break
            node = parent[node]
            result = 1.0 - result
        done += 1
    return done


def propagate_bounds(node, root, parent, first_child, n_children, lower, upper, depth):
    """Recompute the bounds of ``node`` from its children, then of its ancestors while they change.

    The player to move at a node picks the child best for them, so for the player who moved *into* it the
    node is worth ``2 - max(child)``: its upper bound is ``2 - max(lower[child])`` and its lower bound
    ``2 - max(upper[child])``. ``depth`` of a proven win or loss: plies of the proven line to the end.
    """
    while True:
        fc = first_child[node]
        best_lower = 0
        best_upper = 0
        for i in range(fc, fc + n_children[node]):
            if lower[i] > best_lower:
                best_lower = lower[i]
            if upper[i] > best_upper:
                best_upper = upper[i]
        new_lower = 2 - best_upper
        new_upper = 2 - best_lower
        if new_lower == lower[node] and new_upper == upper[node]:
            return
        lower[node] = new_lower
        upper[node] = new_upper
        if new_lower == new_upper and new_lower != 1:
            # lost for its mover: the quickest win of the player to move; won: the slowest loss
            span = -1
            for i in range(fc, fc + n_children[node]):
                if (
                    lower[i] == upper[i]
                    and lower[i] == 2 - new_lower
                    and (
                        span < 0
                        or (new_lower == 0 and depth[i] < span)
                        or (new_lower == 2 and depth[i] > span)
                    )
                ):
                    span = depth[i]
            depth[node] = span + 1
        if node == root:
            return
        node = parent[node]


def compact_subtree(
    new_root,
    cur,
    msk,
    parent,
    move,
    first_child,
    n_children,
    value,
    visits,
    lower,
    upper,
    depth,
    o_cur,
    o_msk,
    o_parent,
    o_move,
    o_first_child,
    o_n_children,
    o_value,
    o_visits,
    o_lower,
    o_upper,
    o_depth,
    queue,
):
    """Copy the subtree under ``new_root`` into the ``o_*`` arrays (root at 0); returns its node count."""
    o_cur[0] = cur[new_root]
    o_msk[0] = msk[new_root]
    o_parent[0] = -1
    o_move[0] = move[new_root]
    o_value[0] = value[new_root]
    o_visits[0] = visits[new_root]
    o_lower[0] = lower[new_root]
    o_upper[0] = upper[new_root]
    o_depth[0] = depth[new_root]
    o_first_child[0] = -1
    o_n_children[0] = 0
    queue[0] = new_root
    head = 0
    n = 1
    while head < n:
        old = queue[head]
        fc = first_child[old]
        if fc >= 0:
            o_first_child[head] = n
            o_n_children[head] = n_children[old]
            for i in range(fc, fc + n_children[old]):
                o_cur[n] = cur[i]
                o_msk[n] = msk[i]
                o_parent[n] = head
                o_move[n] = move[i]
                o_value[n] = value[i]
                o_visits[n] = visits[i]
                o_lower[n] = lower[i]
                o_upper[n] = upper[i]
                o_depth[n] = depth[i]
                o_first_child[n] = -1
                o_n_children[n] = 0
                queue[n] = i
                n += 1
        head += 1
    return n


# -- exact solver -----------------------------------------------------------------------------------------
def possible_moves(mask, geo, board_mask, bottom_mask):
    """The landing cell of every column that is not full."""
    return (mask + bottom_mask) & board_mask


def non_losing_moves(current, mask, geo, board_mask, bottom_mask):
    """Moves that do not hand the opponent an immediate win (0 if every move loses next turn)."""
    possible = possible_moves(mask, geo, board_mask, bottom_mask)
    opponent_wins = winning_cells(current ^ mask, mask, geo, board_mask)
    forced = possible & opponent_wins
    if forced != 0:
        if (forced & (forced - 1)) != 0:  # two threats: cannot block both
            return forced & 0
        possible = forced
    return possible & ~(opponent_wins >> 1)  # never play right under an opponent's winning cell


def can_win_now(current, mask, geo, board_mask, bottom_mask):
    return (
        winning_cells(current, mask, geo, board_mask) & possible_moves(mask, geo, board_mask, bottom_mask)
    ) != 0


UNKNOWN_SCORE = -1000  # "no score without a search": a position the book does not hold, and the like
TT_UPPER, TT_LOWER = 1, 2  # what a transposition-table entry holds: an upper or a lower bound


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


def negamax(
    current,
    mask,
    n_stones,
    alpha,
    beta,
    geo,
    board_mask,
    bottom_mask,
    order,
    tt_keys,
    tt_values,
    tt_used,
    stats,
    move_buffer,
    score_buffer,
    book_codes,
    book_scores,
    book_ply,
):
    """Alpha-beta negamax with a transposition table of upper and lower bounds (after Pascal Pons' solver).

    Scores are from the mover's view: a win whose last stone is the board's w-th scores ``cells + 1 - w``,
    a loss the negative, a draw 0. Precondition: the mover cannot win with this move.
    ``stats = [nodes, node_budget, aborted]``; ``move_buffer``/``score_buffer`` are ``(cells + 1, columns)``
    scratch arrays (one row per depth, so nothing is allocated per node). Positions with ``book_ply`` stones
    are looked up in the opening book (``book_codes``/``book_scores``; ``book_ply`` -1: no book).

    After an abort (``stats[2]`` set) the value returned is meaningless and nothing more is written to the
    transposition table, so the kept table stays true.
    """
    stats[0] += 1
    if stats[2] != 0:
        return 0
    if stats[1] > 0 and stats[0] > stats[1]:
        stats[2] = 1
        return 0
    if n_stones == book_ply:
        known = book_score(current, mask, n_stones, geo, book_codes, book_scores)
        if known != UNKNOWN_SCORE:
            return known
    cells = geo[CELLS]
    columns = geo[COLUMNS]
    possible = non_losing_moves(current, mask, geo, board_mask, bottom_mask)
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
    key = current + mask
    slot = key % tt_keys.shape[0]
    if tt_used[slot] != 0 and tt_keys[slot] == key:
        stored = tt_values[slot]
        if tt_used[slot] == TT_UPPER:
            if stored < high:
                high = stored
        elif alpha < stored:
            alpha = stored
            if alpha >= beta:
                return alpha
    if beta > high:
        beta = high
        if alpha >= beta:
            return beta
    # order the moves: most new threats first, centre first among equals
    moves = move_buffer[n_stones]
    move_scores = score_buffer[n_stones]
    n_moves = 0
    for k in range(columns):
        col = int(order[k])
        bit = possible & column_bits(col, geo)
        if bit == 0:
            continue
        score = popcount(winning_cells(current | bit, mask | bit, geo, board_mask))
        j = n_moves
        while j > 0 and move_scores[j - 1] < score:
            moves[j] = moves[j - 1]
            move_scores[j] = move_scores[j - 1]
            j -= 1
        moves[j] = col
        move_scores[j] = score
        n_moves += 1
    for k in range(n_moves):
        bit = possible & column_bits(int(moves[k]), geo)
        score = -negamax(
            current ^ mask,
            mask | bit,
            n_stones + 1,
            -beta,
            -alpha,
            geo,
            board_mask,
            bottom_mask,
            order,
            tt_keys,
            tt_values,
            tt_used,
            stats,
            move_buffer,
            score_buffer,
            book_codes,
            book_scores,
            book_ply,
        )
        if stats[2] != 0:
            return 0  # aborted below: store nothing
        if score >= beta:
            tt_keys[slot] = key
            tt_values[slot] = score
            tt_used[slot] = TT_LOWER
            return score
        if score > alpha:
            alpha = score
    tt_keys[slot] = key
    tt_values[slot] = alpha
    tt_used[slot] = TT_UPPER
    return alpha


def score_without_search(
    current, mask, n_stones, geo, board_mask, bottom_mask, book_codes, book_scores, book_ply
):
    """The position's score when it is known at once (a win in one, a full board next, a book position),
    else ``UNKNOWN_SCORE``. The start of ``solve`` and ``value_at_most``."""
    cells = geo[CELLS]
    if can_win_now(current, mask, geo, board_mask, bottom_mask):
        return cells - n_stones
    if n_stones >= cells - 1:
        return 0
    if n_stones == book_ply:
        return book_score(current, mask, n_stones, geo, book_codes, book_scores)
    return UNKNOWN_SCORE


def solve(
    current,
    mask,
    n_stones,
    geo,
    board_mask,
    bottom_mask,
    order,
    tt_keys,
    tt_values,
    tt_used,
    stats,
    move_buffer,
    score_buffer,
    book_codes,
    book_scores,
    book_ply,
):
    """The exact score of a position for the player to move (see ``negamax``), by null-window searches."""
    cells = geo[CELLS]
    known = score_without_search(
        current, mask, n_stones, geo, board_mask, bottom_mask, book_codes, book_scores, book_ply
    )
    if known != UNKNOWN_SCORE:
        return known
    low = -(cells - n_stones - 1)
    high = cells - n_stones - 2
    while low < high:
        middle = low + (high - low) // 2
        if middle <= 0 and low // 2 < middle:
            middle = low // 2
        elif middle >= 0 and high // 2 > middle:
            middle = high // 2
        result = negamax(
            current,
            mask,
            n_stones,
            middle,
            middle + 1,
            geo,
            board_mask,
            bottom_mask,
            order,
            tt_keys,
            tt_values,
            tt_used,
            stats,
            move_buffer,
            score_buffer,
            book_codes,
            book_scores,
            book_ply,
        )
        if stats[2] != 0:
            return 0
        if result <= middle:
            high = result
        else:
            low = result
    return low


def value_at_most(
    current,
    mask,
    n_stones,
    bound,
    geo,
    board_mask,
    bottom_mask,
    order,
    tt_keys,
    tt_values,
    tt_used,
    stats,
    move_buffer,
    score_buffer,
    book_codes,
    book_scores,
    book_ply,
):
    """True if the position's score for the player to move is at most ``bound``: one null-window search,
    far cheaper than ``solve``'s exact score (after an abort, ``stats[2]`` is set and the answer is void)."""
    known = score_without_search(
        current, mask, n_stones, geo, board_mask, bottom_mask, book_codes, book_scores, book_ply
    )
    if known != UNKNOWN_SCORE:
        return known <= bound
    result = negamax(
        current,
        mask,
        n_stones,
        bound,
        bound + 1,
        geo,
        board_mask,
        bottom_mask,
        order,
        tt_keys,
        tt_values,
        tt_used,
        stats,
        move_buffer,
        score_buffer,
        book_codes,
        book_scores,
        book_ply,
    )
    return result <= bound
