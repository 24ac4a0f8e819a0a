"""OpenSpiel both ways, on the env layer: a pyspiel `connect_four` state to a [`Board`][connect4_env.core.Board]
and back, and our game of any size registered as an OpenSpiel game.

OpenSpiel (`pip install "connect4-env[openspiel]"`) is imported only when one of these functions runs.

- [`board_from_openspiel`][connect4_env.openspiel.board_from_openspiel]: the position of a pyspiel state of
  `connect_four` (OpenSpiel's C++ game, any `rows` / `columns` / `x_in_row`), of Kaggle's
  `connect_four_proxy` (the same game as Kaggle's Game Arena hands it to agents) or of our registered game,
  replayed from the state's history.
- [`board_to_openspiel`][connect4_env.openspiel.board_to_openspiel]: a [`Board`][connect4_env.core.Board] as a
  pyspiel state of any of them, played from the empty board in one order of moves that reaches the position
  (a `Board` keeps no history; the last move is `board.last_move` when known).
- [`load_openspiel_game`][connect4_env.openspiel.load_openspiel_game]: our rules as a pyspiel game
  (`connect4_env.openspiel_game`, registered as `"python_connect4_env"` with parameters `rows`, `columns`,
  `win_length`), which OpenSpiel's MCTS, AlphaZero and evaluation tools play like any of its own games.

OpenSpiel draws row 0 at the bottom and keeps absolute planes (`x`, `o`, empty); a `Board` draws row 0 at the
top. The conversion goes through the moves, so no layout is guessed.
"""

from __future__ import annotations

import heapq
from typing import Any

from connect4_env.core import Board, Rules, check_rules
from connect4_env.extras import require

__all__ = [
    "GAME_NAME",
    "PROXY_NAME",
    "GAMES",
    "SEARCH_LIMIT",
    "board_from_openspiel",
    "board_to_openspiel",
    "load_openspiel_game",
]

# The short name of our game in OpenSpiel's registry.
GAME_NAME = "python_connect4_env"
# Kaggle's proxy of connect_four (kaggle_environments' open_spiel env registers it and hands agents its states).
PROXY_NAME = "connect_four_proxy"
# The pyspiel games whose states convert, each with the parameter that holds the win length.
GAMES = {"connect_four": "x_in_row", PROXY_NAME: "x_in_row", GAME_NAME: "win_length"}


def _pyspiel() -> Any:
    return require("pyspiel", "openspiel", "OpenSpiel interop")  # loaded only when asked for


def load_openspiel_game(rules: Rules | None = None, *, game: str = GAME_NAME) -> Any:
    """The pyspiel game for `rules`: ours (registered on first use), OpenSpiel's `connect_four` or Kaggle's
    `connect_four_proxy`.

    Args:
        rules: the board size and win length; 6×7 with 4 in a row when None.
        game: `"python_connect4_env"` (ours, any size; a Python game), `"connect_four"` (OpenSpiel's C++ game
            with `rows` / `columns` / `x_in_row`, faster for its searches) or `"connect_four_proxy"` (Kaggle's
            wrapper of it, once `kaggle_environments`' OpenSpiel env has registered it in this process).

    Returns:
        A `pyspiel.Game`.

    Raises:
        TypeError: `rules` is not a [`Rules`][connect4_env.core.Rules], or `game` not a str.
        ValueError: `game` is none of these names, or `"connect_four_proxy"` while nothing registered it.
        MissingExtraError: OpenSpiel is not installed (the `openspiel` extra).
    """
    rules = check_rules(rules, None) or Rules()
    if not isinstance(game, str):
        raise TypeError(f"game must be a game name (a str), got {type(game).__name__}")
    if game not in GAMES:
        raise ValueError(f"game={game!r} is not supported; allowed: {', '.join(repr(g) for g in GAMES)}")
    pyspiel = _pyspiel()
    if game == GAME_NAME:
        from connect4_env import openspiel_game  # registers the game with pyspiel on import

        del openspiel_game
    elif game not in pyspiel.registered_names():
        raise ValueError(
            f"game={game!r} is not registered with pyspiel in this process: kaggle_environments registers it "
            "when its OpenSpiel env is imported (`import kaggle_environments.envs.open_spiel_env.open_spiel_env`)"
        )
    params = {"rows": rules.rows, "columns": rules.columns, GAMES[game]: rules.win_length}
    return pyspiel.load_game(game, params)


def _rules_of(game: Any) -> Rules:
    """The rules of a pyspiel game of `GAMES`, or ValueError naming the game and what is allowed."""
    name = game.get_type().short_name
    if name not in GAMES:
        raise ValueError(
            f"a pyspiel state of the game {name!r} is not Connect Four; allowed: "
            f"{', '.join(repr(g) for g in GAMES)}"
        )
    params = game.get_parameters()
    return Rules(int(params["rows"]), int(params["columns"]), int(params[GAMES[name]]))


def board_from_openspiel(state: Any) -> Board:
    """The position of a pyspiel state of `connect_four`, `connect_four_proxy` or `python_connect4_env`.

    Args:
        state: a `pyspiel.State` of one of those games, at any point (terminal too). It is left unchanged.

    Returns:
        A new [`Board`][connect4_env.core.Board] with the state's rules, stones, winner and last move.

    Raises:
        TypeError: `state` is not a `pyspiel.State`.
        ValueError: it is the state of another game (`tic_tac_toe`, ...); the message names the game.
        MissingExtraError: OpenSpiel is not installed (the `openspiel` extra).
    """
    pyspiel = _pyspiel()
    if not isinstance(state, pyspiel.State):
        raise TypeError(
            f"state must be a pyspiel.State of {' or '.join(repr(g) for g in GAMES)}, "
            f"got {type(state).__name__}"
        )
    rules = _rules_of(state.get_game())
    return Board(rules).play_moves(int(action) for action in state.history())


SEARCH_LIMIT = 1_000_000
"""Column visits the search for an order of moves may spend once its greedy first pass is stuck; a position
that needs more is refused (see `board_to_openspiel`)."""


class _SearchLimitReached(Exception):
    """The search for an order of moves spent `SEARCH_LIMIT` column visits."""


def _move_order(board: Board, limit: int | None = None) -> list[int]:
    """One order of moves, first player first, that reaches `board` from empty with no earlier win.

    The position's columns are stacks of stones; an order is an interleaving of them, bottom to top, in which
    the players alternate (the first player first). A won position must end on a stone of the winner that lies
    on every line of theirs (removing stones never makes a line, so nothing earlier can have won); the last
    move is `board.last_move` when that fits. The rest is `_order_of`: a greedy pass over the stones, then
    where it gets stuck a search bounded by `limit` column visits (`SEARCH_LIMIT` when None).

    Raises:
        ValueError: no order of moves reaches the position, or the search reached its limit without finding one.
    """
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
            f"{SEARCH_LIMIT if limit is None else limit:,} column visits: it is most likely unreachable "
            f"(a position of a played game is found without search):\n{board}"
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
            allowed = [min(share, budget[0])]
            if allowed[0] <= 0:
                raise _SearchLimitReached
            try:
                order = _interleave(piles, allowed)
            except _SearchLimitReached:
                budget[0] -= share
                continue
            budget[0] -= share - allowed[0]
            return order[::-1] if reverse and order is not None else order
        share *= 4


def _interleave(stacks: list[bytes], budget: list[int]) -> list[int] | None:
    """An interleaving of `stacks` as `_order_of` says, or None when there is none.

    First a greedy pass: each move takes the column that
    can answer its own stone with the opponent's next (a stone of the other owner right above), else the one
    that needs the longest stretch of the game to empty (its stones plus the opponent moves its runs of one
    owner force in between). Only when that pass is stuck does a depth-first search take over, which skips
    columns that hold the same stones as one already tried and remembers the positions (as sets of columns)
    that failed; it spends `budget[0]` (column visits, shared by the caller's tries) and raises
    `_SearchLimitReached` when that runs out.
    """
    count = len(stacks)
    total = sum(map(len, stacks))
    runs = []  # runs[c][p]: equal neighbours among stones p.. of column c, each forcing an opponent move
    for stack in stacks:
        suffix = [0] * (len(stack) + 1)
        for p in range(len(stack) - 2, -1, -1):
            suffix[p] = suffix[p + 1] + (stack[p] == stack[p + 1])
        runs.append(suffix)
    progress = [0] * count

    def rank(column: int) -> tuple[bool, int, int]:
        stack, p = stacks[column], progress[column]
        answered = p + 1 < len(stack) and stack[p + 1] != stack[p]
        return (not answered, p - len(stack) - runs[column][p], column)

    def moves(player: int) -> list[int]:
        found = sorted(
            rank(c) for c in range(count) if progress[c] < len(stacks[c]) and stacks[c][progress[c]] == player
        )
        seen: set[bytes] = set()
        distinct = []
        for *_, column in found:
            rest = stacks[column][progress[column] :]
            if rest not in seen:
                seen.add(rest)
                distinct.append(column)
        return distinct

    def position() -> tuple[bytes, ...]:
        return tuple(sorted(stacks[c][progress[c] :] for c in range(count) if progress[c] < len(stacks[c])))

    order: list[int] = []
    heaps: tuple[list[tuple[tuple[bool, int, int], int]], ...] = ([], [])
    for column in range(count):
        if stacks[column]:
            heapq.heappush(heaps[stacks[column][0]], (rank(column), 0))
    while len(order) < total:  # the greedy pass
        heap = heaps[len(order) & 1]
        while heap and progress[heap[0][0][2]] != heap[0][1]:
            heapq.heappop(heap)  # an entry of a column played since
        if not heap:
            break
        column = heapq.heappop(heap)[0][2]
        progress[column] += 1
        order.append(column)
        if progress[column] < len(stacks[column]):
            heapq.heappush(heaps[stacks[column][progress[column]]], (rank(column), progress[column]))
    if len(order) == total:
        return order
    # the search: tried[d] lists the moves at depth d (None: only order[d], the greedy pass's), at[d] indexes it
    tried: list[list[int] | None] = [None] * len(order)
    at = [0] * len(order)
    failed: set[tuple[bytes, ...]] = {position()}
    while True:
        while True:  # back up to the deepest position with a move left to try
            if not order:
                return None
            column = order.pop()
            progress[column] -= 1
            options, index = tried.pop(), at.pop()
            if options is None:
                options = moves(len(order) & 1)
                index = options.index(column) if column in options else -1
            index += 1
            if index < len(options):
                break
            failed.add(position())
        while True:  # go down, first move first, until the end or a position with no move
            budget[0] -= count
            if budget[0] < 0:
                raise _SearchLimitReached
            column = options[index]
            tried.append(options)
            at.append(index)
            progress[column] += 1
            order.append(column)
            if len(order) == total:
                return order
            key = position()
            options, index = ([] if key in failed else moves(len(order) & 1)), 0
            if not options:
                failed.add(key)
                break


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


def board_to_openspiel(board: Board, *, game: str | Any = GAME_NAME) -> Any:
    """`board` as a new pyspiel state, played from the empty board.

    The moves are one order that reaches `board` with the players alternating and no line before the last
    move. Finding it takes a greedy pass over the stones and, only where that pass gets stuck, a search of at
    most [`SEARCH_LIMIT`][connect4_env.openspiel.SEARCH_LIMIT] column visits; most positions no game reaches
    are refused before either. A search that runs out is refused too, and says so. Nothing recurses, so boards
    of any size convert.

    Args:
        board: any [`Board`][connect4_env.core.Board] (any size, terminal too).
        game: `"python_connect4_env"` (ours, the default), `"connect_four"` (OpenSpiel's C++ game, loaded with
            the board's size), `"connect_four_proxy"` (Kaggle's, when registered), or a loaded `pyspiel.Game`
            of any of them with the board's rules.

    Returns:
        A `pyspiel.State` whose position equals `board`
        ([`board_from_openspiel`][connect4_env.openspiel.board_from_openspiel] gives it back).

    Raises:
        TypeError: `board` is not a [`Board`][connect4_env.core.Board], or `game` is neither a name nor a
            `pyspiel.Game`.
        ValueError: `game` names another game or has other rules, or no order of moves reaching `board` was
            found (none exists, or the search reached its limit).
        MissingExtraError: OpenSpiel is not installed (the `openspiel` extra).
    """
    if not isinstance(board, Board):
        raise TypeError(f"board must be a connect4_env.Board, got {type(board).__name__}")
    pyspiel = _pyspiel()
    if isinstance(game, str):
        game = load_openspiel_game(board.rules, game=game)
    elif isinstance(game, pyspiel.Game):
        if _rules_of(game) != board.rules:
            raise ValueError(f"the pyspiel game {game} has rules {_rules_of(game)}, the board {board.rules}")
    else:
        raise TypeError(f"game must be a game name or a pyspiel.Game, got {type(game).__name__}")
    state = game.new_initial_state()
    for column in _move_order(board):
        state.apply_action(column)
    return state
