"""One order of moves that reaches a position: a [`Board`][connect4_env.core.Board] keeps no history, and
whoever needs one (OpenSpiel's states, which are their histories) gets it here.

The columns of a position are stacks of stones, and an order of moves is an interleaving of them, bottom to
top, in which the players alternate, with no line before the last move. No fast rule decides in general
whether such an interleaving exists, so `move_order` makes a greedy pass over the stones, refutes most
positions no game reaches by a count that needs no search, and searches, within `SEARCH_LIMIT` column visits,
only where the greedy pass gets stuck.
"""

from __future__ import annotations

import heapq

from connect4_env.core import Board, check_board
from connect4_env.validation import check_int

__all__ = ["SEARCH_LIMIT", "move_order"]

SEARCH_LIMIT = 1_000_000
"""Column visits the search for an order of moves may spend once its greedy first pass is stuck; a position
that needs more is refused (see `move_order`)."""


class _SearchLimitReached(Exception):
    """The search for an order of moves spent `SEARCH_LIMIT` column visits."""


def move_order(board: Board, limit: int | None = None) -> list[int]:
    """One order of moves (0-based columns), first player first, that reaches `board` from the empty board with
    no line before the last move.

    The position's columns are stacks of stones; an order is an interleaving of them, bottom to top, in which
    the players alternate (the first player first). A won position must end on a stone of the winner that lies
    on every line of theirs (removing stones never makes a line, so nothing earlier can have won); the last
    move is `board.last_move` when that fits. The rest is `_order_of`: a greedy pass over the stones, then
    where it gets stuck a search bounded by `limit` column visits (`SEARCH_LIMIT` when None).

    Args:
        board: the position.
        limit: the column visits the search may spend (`SEARCH_LIMIT` when None).

    Returns:
        The columns to play, in order; `Board(board.rules).play_moves(order)` equals `board`.

    Raises:
        TypeError: `board` is not a [`Board`][connect4_env.core.Board], or `limit` not an integer.
        ValueError: no order of moves reaches the position, or the search reached its limit without finding
            one (the messages say which), or `limit` is negative.
    """
    board = check_board(board)
    if limit is not None:
        limit = check_int("limit", limit, 0)
    rules = board.rules
    if board.ply == 0:
        return []
    last_player = (board.ply - 1) & 1
    if board.winner is not None and board.winner != last_player:
        raise ValueError(
            f"no game reaches this position: player {board.winner} has a line but did not move last"
        )
    height = rules.height
    first = board.stones[0]
    stacks = [
        bytearray(
            0 if first >> (column * height + level) & 1 else 1 for level in range(board.heights[column])
        )
        for column in range(rules.columns)
    ]
    candidates: list[int | None] = []
    last = board.last_move
    tops = [c for c in range(rules.columns) if stacks[c] and stacks[c][-1] == last_player]
    if last in tops:
        tops.remove(last)
        tops.insert(0, last)
    if board.winner is None:
        candidates = [tops[0]] if tops and tops[0] == last else []
        candidates.append(None)  # any last move
    else:
        winner_stones = board.stones[board.winner]
        candidates = [
            c for c in tops if not rules.has_won(winner_stones & ~rules.stone_bit(c, board.heights[c] - 1))
        ]
        if not candidates:
            raise ValueError(
                f"no game reaches this position: no top stone of player {board.winner} lies on every line of "
                f"theirs, so no last move completed them:\n{board}"
            )
    budget = [SEARCH_LIMIT if limit is None else limit]
    try:
        for column in candidates:
            if column is not None:
                stacks[column].pop()
            order = _order_of([bytes(stack) for stack in stacks], budget)
            if column is not None:
                stacks[column].append(last_player)
                if order is not None:
                    return [*order, column]
            elif order is not None:
                return order
    except _SearchLimitReached:
        raise ValueError(
            f"no order of moves reaching this position was found within the search limit of "
            f"{SEARCH_LIMIT if limit is None else limit:,} column visits (no game may reach it, or the "
            f"search could not tell):\n{board}"
        ) from None
    raise ValueError(f"no order of moves reaches this position from the empty board:\n{board}")


def _order_of(stacks: list[bytes], budget: list[int]) -> list[int] | None:
    """An interleaving of `stacks` (each a column's owners, bottom first) in which the owners go 0, 1, 0, ...,
    as a list of column indices, or None when there is none.

    `_slots_suffice` refutes most impossible ones at once; then `_interleave` searches forwards (from the
    empty board) and backwards (from the position, taking stones off), in turns, with shares of `budget[0]`
    that grow fourfold each round, as a position hard one way is often easy the other. Raises
    `_SearchLimitReached` when the budget runs out.
    """
    total = sum(map(len, stacks))
    if not _slots_suffice(stacks, total):
        return None
    flip = 1 - (total & 1)  # backwards the last mover moves first: owners swapped when that is player 1
    backwards = [bytes(owner ^ flip for owner in reversed(stack)) for stack in stacks]
    share = 4096
    while True:
        for reverse, piles in ((False, stacks), (True, backwards)):
            given = min(share, budget[0])
            allowed = [given]
            try:
                order = _interleave(piles, allowed)  # its greedy pass is free: only its search spends
            except _SearchLimitReached:
                budget[0] -= given
                if budget[0] <= 0:
                    raise
                continue
            budget[0] -= given - allowed[0]
            return order[::-1] if reverse and order is not None else order
        share *= 4


def _interleave(stacks: list[bytes], budget: list[int]) -> list[int] | None:
    """An interleaving of `stacks` as `_order_of` says, or None when there is none.

    First a greedy pass: each move takes the column that can answer its own stone with the opponent's next (a
    stone of the other owner right above), else the one that needs the longest stretch of the game to empty
    (its stones plus the opponent moves its runs of one owner force in between). Only when that pass is stuck
    does a depth-first search take over, which skips columns that hold the same stones as one already tried
    and remembers the positions (as sets of columns) that failed; it spends `budget[0]` (column visits, shared
    by the caller's tries) and raises `_SearchLimitReached` when that runs out.
    """
    interleaving = _Interleaving(stacks)
    order = interleaving.greedy()
    return order if len(order) == interleaving.total else interleaving.search(order, budget)


class _Interleaving:
    """The stacks being interleaved, how far each column has been played (`progress`), and the moves."""

    def __init__(self, stacks: list[bytes]) -> None:
        self.stacks = stacks
        self.count = len(stacks)
        self.total = sum(map(len, stacks))
        self.runs = []  # runs[c][p]: equal neighbours among stones p.. of column c, each forcing an opponent move
        for stack in stacks:
            suffix = [0] * (len(stack) + 1)
            for p in range(len(stack) - 2, -1, -1):
                suffix[p] = suffix[p + 1] + (stack[p] == stack[p + 1])
            self.runs.append(suffix)
        self.progress = [0] * self.count

    def rank(self, column: int) -> tuple[bool, int, int]:
        stack, p = self.stacks[column], self.progress[column]
        answered = p + 1 < len(stack) and stack[p + 1] != stack[p]
        return (not answered, p - len(stack) - self.runs[column][p], column)

    def moves(self, player: int) -> list[int]:
        """The columns `player` may play next, best first, one of each set of columns holding the same stones."""
        stacks, progress = self.stacks, self.progress
        found = sorted(
            self.rank(c)
            for c in range(self.count)
            if progress[c] < len(stacks[c]) and stacks[c][progress[c]] == player
        )
        seen: set[bytes] = set()
        distinct = []
        for *_, column in found:
            rest = stacks[column][progress[column] :]
            if rest not in seen:
                seen.add(rest)
                distinct.append(column)
        return distinct

    def position(self) -> tuple[bytes, ...]:
        stacks, progress = self.stacks, self.progress
        return tuple(
            sorted(stacks[c][progress[c] :] for c in range(self.count) if progress[c] < len(stacks[c]))
        )

    def greedy(self) -> list[int]:
        """The greedy pass: the moves it makes before it ends or gets stuck (`progress` follows them)."""
        stacks, progress = self.stacks, self.progress
        order: list[int] = []
        heaps: tuple[list[tuple[tuple[bool, int, int], int]], ...] = ([], [])
        for column in range(self.count):
            if stacks[column]:
                heapq.heappush(heaps[stacks[column][0]], (self.rank(column), 0))
        while len(order) < self.total:
            heap = heaps[len(order) & 1]
            while heap and progress[heap[0][0][2]] != heap[0][1]:
                heapq.heappop(heap)  # an entry of a column played since
            if not heap:
                break
            column = heapq.heappop(heap)[0][2]
            progress[column] += 1
            order.append(column)
            if progress[column] < len(stacks[column]):
                heapq.heappush(heaps[stacks[column][progress[column]]], (self.rank(column), progress[column]))
        return order

    def search(self, order: list[int], budget: list[int]) -> list[int] | None:
        """The depth-first search from where the greedy pass got stuck (`order`, its moves)."""
        # tried[d] lists the moves at depth d (None: only order[d], the greedy pass's), at[d] indexes it
        tried: list[list[int] | None] = [None] * len(order)
        at = [0] * len(order)
        failed: set[tuple[bytes, ...]] = {self.position()}
        while True:
            options_index = self._back_up(order, tried, at, failed)
            if options_index is None:
                return None
            options, index = options_index
            while True:  # go down, first move first, until the end or a position with no move
                budget[0] -= self.count
                if budget[0] < 0:
                    raise _SearchLimitReached
                column = options[index]
                tried.append(options)
                at.append(index)
                self.progress[column] += 1
                order.append(column)
                if len(order) == self.total:
                    return order
                key = self.position()
                options, index = ([] if key in failed else self.moves(len(order) & 1)), 0
                if not options:
                    failed.add(key)
                    break

    def _back_up(
        self,
        order: list[int],
        tried: list[list[int] | None],
        at: list[int],
        failed: set[tuple[bytes, ...]],
    ) -> tuple[list[int], int] | None:
        """Takes moves back to the deepest position with a move left to try: its moves and the next one's index,
        or None when no position has one.
        """
        while order:
            column = order.pop()
            self.progress[column] -= 1
            options, index = tried.pop(), at.pop()
            if options is None:
                options = self.moves(len(order) & 1)
                index = options.index(column) if column in options else -1
            index += 1
            if index < len(options):
                return options, index
            failed.add(self.position())
        return None


def _slots_suffice(stacks: list[bytes], total: int) -> bool:
    """False when the stones cannot take the moves of their owners, each column on its own (a test that proves
    most unreachable positions so without a search).

    Move `t` is owner `t % 2`'s. Within its column a stone comes after the stones below it and before those
    above, so it has an earliest and a latest move of its owner's parity; the stones of each owner must then
    match their owner's moves one to one within those windows, which the earliest-deadline-first rule decides.
    """
    windows: tuple[list[tuple[int, int]], ...] = ([], [])
    for stack in stacks:
        earliest = []
        move = -1
        for owner in stack:
            move += 1 + ((move + 1) & 1 != owner)
            earliest.append(move)
        move = total
        for level in range(len(stack) - 1, -1, -1):
            move -= 1 + ((move - 1) & 1 != stack[level])
            if move < earliest[level]:
                return False
            windows[stack[level]].append((earliest[level], move))
    for owner in (0, 1):
        jobs = sorted(windows[owner])
        if len(jobs) != (total + 1 - owner) // 2:
            return False
        deadlines: list[int] = []
        next_job = 0
        for move in range(owner, total, 2):
            while next_job < len(jobs) and jobs[next_job][0] <= move:
                heapq.heappush(deadlines, jobs[next_job][1])
                next_job += 1
            if not deadlines or heapq.heappop(deadlines) < move:
                return False
    return True
