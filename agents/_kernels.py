"""Hot loops of the search agents, written once in the subset of Python that numba compiles.

``agents._compiled`` loads this file twice: as plain Python (any board size: bitboards are Python ints in
object arrays) and, when numba is installed, compiled with every function ``njit``-ed (boards whose bitboard
fits in 63 bits: int64 arrays). Both run the same code on the same inputs and give the same results, which
the tests check. No Python objects, no recursion into other modules, no global RNG: randomness comes from
the xorshift32 state passed in.

Bit layout as in :mod:`connect4_env.core`: column ``c`` owns bits ``c*height .. c*height+rows``, the top
one a sentinel. A position is ``(current, mask)``: the stones of the player to move, and all stones.

Geometry is passed as ``geo``, a tuple of ints ``(rows, columns, height, win_length, cells)``, plus
``board_mask`` and ``bottom_mask`` as scalars (they may exceed 64 bits in Python mode). Every value that
enters a bit operation is a plain int (``int(...)`` around array reads) so that Python mode never mixes
numpy's fixed-width integers into big bitboards.
"""

# ruff: noqa: SIM108  (numba compiles plain if/else blocks; keep the kernels in the simplest Python)
from __future__ import annotations

import math

ROWS, COLUMNS, HEIGHT, WIN_LENGTH, CELLS = 0, 1, 2, 3, 4

# MCTS node status, from the view of the player who moved into the node.
UNKNOWN, WON, LOST, DRAWN = 0, 1, 2, 3


# -- rules on bitboards -----------------------------------------------------------------------------------
def has_won(stones, geo):  # noqa: ANN001, ANN201
    """True if ``stones`` holds win_length in a line (same doubling trick as ``Rules.has_won``)."""
    height = geo[HEIGHT]
    length = geo[WIN_LENGTH]
    for k in range(4):
        direction = 1
        if k == 1:
            direction = height
        elif k == 2:
            direction = height - 1
        elif k == 3:
            direction = height + 1
        run = stones
        covered = 1
        while 2 * covered <= length:
            run = run & (run >> (covered * direction))
            covered *= 2
        if covered < length:
            run = run & (run >> ((length - covered) * direction))
        if run != 0:
            return True
    return False


def winning_cells(stones, mask, geo, board_mask):  # noqa: ANN001, ANN201
    """Empty cells where one more stone would give ``stones`` a line of win_length."""
    height = geo[HEIGHT]
    length = geo[WIN_LENGTH]
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


def popcount(bits):  # noqa: ANN001, ANN201
    count = 0
    while bits != 0:
        bits = bits & (bits - 1)
        count += 1
    return count


def column_bits(column, geo):  # noqa: ANN001, ANN201
    """The board bits of one column (the sentinel excluded)."""
    return ((1 << geo[ROWS]) - 1) << (column * geo[HEIGHT])


def move_bit(mask, column, geo):  # noqa: ANN001, ANN201
    """The bit a stone dropped in ``column`` lands on, or 0 if the column is full."""
    return (mask + (1 << (column * geo[HEIGHT]))) & column_bits(column, geo)


def mirror(bits, geo):  # noqa: ANN001, ANN201
    """The bitboard reflected left-right."""
    result = bits & 0
    columns = geo[COLUMNS]
    height = geo[HEIGHT]
    for c in range(columns):
        part = (bits >> (c * height)) & column_bits(0, geo)
        result = result | (part << ((columns - 1 - c) * height))
    return result


def xorshift32(state):  # noqa: ANN001, ANN201
    """Next state of a 32-bit xorshift generator (values kept below 2**32 in either mode)."""
    state = state ^ ((state << 13) & 0xFFFFFFFF)
    state = state ^ (state >> 17)
    state = state ^ ((state << 5) & 0xFFFFFFFF)
    return state


# -- MCTS -------------------------------------------------------------------------------------------------
def rollout(current, mask, geo, board_mask, rng):  # noqa: ANN001, ANN201
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
    visits,
    value,
    real_visits,
    status,
    depth,
    meta,
    geo,
    board_mask,
    c,
    prior,
    solver,
    symmetry,
):  # noqa: ANN001, ANN201
    """Run up to ``n_playouts`` playouts from ``root``; returns how many ran.

    Stops early when the root is proven (solver) or the node arrays are too full for another expansion.
    ``meta = [n_nodes, rng_state]``. ``value[i]`` sums results for the player who moved into node ``i``
    (win 1, draw 1/2); ``visits[i]`` counts playouts through it plus ``2 * prior`` virtual ones.
    """
    columns = geo[COLUMNS]
    capacity = cur.shape[0]
    rng = meta[1:2]
    done = 0
    while done < n_playouts:
        if status[root] != UNKNOWN and solver:
            break
        # 1. selection
        node = root
        while status[node] == UNKNOWN and first_child[node] >= 0:
            fc = first_child[node]
            nc = n_children[node]
            chosen = -1
            if prior == 0:  # unvisited children first, in random order (reservoir sampling)
                seen = 0
                for i in range(fc, fc + nc):
                    if real_visits[i] == 0 and not (solver and status[i] == LOST):
                        seen += 1
                        rng[0] = xorshift32(rng[0])
                        if rng[0] % seen == 0:
                            chosen = i
            if chosen < 0:
                log_n = math.log(visits[node])
                best = -1.0
                for i in range(fc, fc + nc):
                    if solver and status[i] == LOST:
                        continue
                    score = value[i] / visits[i] + c * math.sqrt(log_n / visits[i])
                    if score > best:
                        best = score
                        chosen = i
            if chosen < 0:  # every child proven lost but not yet propagated (cannot happen with solver)
                break
            node = chosen
        # 2. expansion and 3. simulation
        leaf = node
        if status[leaf] == UNKNOWN:
            if meta[0] + columns > capacity:
                break
            fc = meta[0]
            count = 0
            current = cur[leaf]
            mask = msk[leaf]
            opponent = current ^ mask
            symmetric = symmetry and mirror(current, geo) == current and mirror(mask, geo) == mask
            any_win = False
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
                visits[child] = 2.0 * prior
                value[child] = prior
                real_visits[child] = 0
                depth[child] = 0
                if has_won(current | bit, geo):
                    status[child] = WON
                    any_win = True
                elif (mask | bit) == board_mask:
                    status[child] = DRAWN
                else:
                    status[child] = UNKNOWN
                count += 1
            first_child[leaf] = fc
            n_children[leaf] = count
            meta[0] = fc + count
            if solver and any_win:
                status[leaf] = LOST
                depth[leaf] = 1
                propagate_proof(leaf, root, parent, first_child, n_children, status, depth)
            if status[leaf] == UNKNOWN or not solver:
                # simulate from one random new child
                rng[0] = xorshift32(rng[0])
                node = fc + rng[0] % count
        st = status[node]
        if st == WON:
            result = 1.0
        elif st == LOST:
            result = 0.0
        elif st == DRAWN:
            result = 0.5
        else:
            result = rollout(cur[node], msk[node], geo, board_mask, rng)
        # 4. backpropagation: the result flips at each level
        while True:
            visits[node] += 1.0
            real_visits[node] += 1
            value[node] += result
            if node == root:
                break
            node = parent[node]
            result = 1.0 - result
        done += 1
    return done


def propagate_proof(node, root, parent, first_child, n_children, status, depth):  # noqa: ANN001, ANN201
    """Carry a new proof at ``node`` up the tree (MCTS-Solver)."""
    while node != root:
        up = parent[node]
        if status[up] != UNKNOWN:
            return
        if (
            status[node] == WON
        ):  # the player to move at ``up`` has a winning move: ``up`` is lost for its mover
            status[up] = LOST
            depth[up] = depth[node] + 1
        elif status[node] == LOST:  # proven won for ``up``'s mover only if every move from ``up`` loses
            longest = 0
            for i in range(first_child[up], first_child[up] + n_children[up]):
                if status[i] != LOST:
                    return
                if depth[i] > longest:
                    longest = depth[i]
            status[up] = WON
            depth[up] = longest + 1
        else:
            return
        node = up


def compact_subtree(
    new_root,
    cur,
    msk,
    parent,
    move,
    first_child,
    n_children,
    visits,
    value,
    real_visits,
    status,
    depth,
    o_cur,
    o_msk,
    o_parent,
    o_move,
    o_first_child,
    o_n_children,
    o_visits,
    o_value,
    o_real_visits,
    o_status,
    o_depth,
    queue,
):  # noqa: ANN001, ANN201
    """Copy the subtree under ``new_root`` into the ``o_*`` arrays (root at 0); returns its node count."""
    o_cur[0] = cur[new_root]
    o_msk[0] = msk[new_root]
    o_parent[0] = -1
    o_move[0] = move[new_root]
    o_visits[0] = visits[new_root]
    o_value[0] = value[new_root]
    o_real_visits[0] = real_visits[new_root]
    o_status[0] = status[new_root]
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
                o_visits[n] = visits[i]
                o_value[n] = value[i]
                o_real_visits[n] = real_visits[i]
                o_status[n] = status[i]
                o_depth[n] = depth[i]
                o_first_child[n] = -1
                o_n_children[n] = 0
                queue[n] = i
                n += 1
        head += 1
    return n


# -- exact solver -----------------------------------------------------------------------------------------
def possible_moves(mask, geo, board_mask, bottom_mask):  # noqa: ANN001, ANN201
    """The landing cell of every column that is not full."""
    return (mask + bottom_mask) & board_mask


def non_losing_moves(current, mask, geo, board_mask, bottom_mask):  # noqa: ANN001, ANN201
    """Moves that do not hand the opponent an immediate win (0 if every move loses next turn)."""
    possible = possible_moves(mask, geo, board_mask, bottom_mask)
    opponent_wins = winning_cells(current ^ mask, mask, geo, board_mask)
    forced = possible & opponent_wins
    if forced != 0:
        if (forced & (forced - 1)) != 0:  # two threats: cannot block both
            return forced & 0
        possible = forced
    return possible & ~(opponent_wins >> 1)  # never play right under an opponent's winning cell


def can_win_now(current, mask, geo, board_mask, bottom_mask):  # noqa: ANN001, ANN201
    return (
        winning_cells(current, mask, geo, board_mask) & possible_moves(mask, geo, board_mask, bottom_mask)
    ) != 0


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
):  # noqa: ANN001, ANN201
    """Alpha-beta negamax with a transposition table of upper bounds (after Pascal Pons' solver).

    Scores are from the mover's view: a win whose last stone is the board's w-th scores ``cells + 1 - w``,
    a loss the negative, a draw 0. Precondition: the mover cannot win with this move.
    ``stats = [nodes, node_budget, aborted]``; ``move_buffer``/``score_buffer`` are ``(cells + 1, columns)``
    scratch arrays (one row per depth, so nothing is allocated per node).
    """
    stats[0] += 1
    if stats[2] != 0:
        return 0
    if stats[1] > 0 and stats[0] > stats[1]:
        stats[2] = 1
        return 0
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
        high = tt_values[slot]
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
        )
        if score >= beta:
            return score
        if score > alpha:
            alpha = score
    tt_keys[slot] = key
    tt_values[slot] = alpha
    tt_used[slot] = 1
    return alpha


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
):  # noqa: ANN001, ANN201
    """The exact score of a position for the player to move (see ``negamax``), by null-window searches."""
    cells = geo[CELLS]
    if can_win_now(current, mask, geo, board_mask, bottom_mask):
        return cells - n_stones
    if n_stones >= cells - 1:
        return 0
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
        )
        if stats[2] != 0:
            return 0
        if result <= middle:
            high = result
        else:
            low = result
    return low
