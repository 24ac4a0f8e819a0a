"""OpenSpiel both ways, on the env layer: a pyspiel ``connect_four`` state to a :class:`~connect4_env.Board`
and back, and our game of any size registered as an OpenSpiel game.

OpenSpiel (``pip install "connect4-env[openspiel]"``) is imported only when one of these functions runs.

- :func:`board_from_openspiel`: the position of a pyspiel state of ``connect_four`` (OpenSpiel's C++ game, any
  ``rows`` / ``columns`` / ``x_in_row``) or of our registered game, replayed from the state's history.
- :func:`board_to_openspiel`: a :class:`Board` as a pyspiel state of either game, played from the empty board
  in one order of moves that reaches the position (a ``Board`` keeps no history; the last move is
  ``board.last_move`` when known).
- :func:`load_openspiel_game`: our rules as a pyspiel game (:mod:`connect4_env.openspiel_game`, registered
  as ``"python_connect4_env"`` with parameters ``rows``, ``columns``, ``win_length``), which OpenSpiel's MCTS,
  AlphaZero and evaluation tools play like any of its own games.

OpenSpiel draws row 0 at the bottom and keeps absolute planes (``x``, ``o``, empty); a :class:`Board` draws
row 0 at the top. The conversion goes through the moves, so no layout is guessed.
"""

from __future__ import annotations

from typing import Any

from connect4_env.core import Board, Rules, check_rules
from connect4_env.extras import require

__all__ = ["GAME_NAME", "GAMES", "board_from_openspiel", "board_to_openspiel", "load_openspiel_game"]

# The short name of our game in OpenSpiel's registry.
GAME_NAME = "python_connect4_env"
# The pyspiel games whose states convert, each with the parameter that holds the win length.
GAMES = {"connect_four": "x_in_row", GAME_NAME: "win_length"}


def _pyspiel() -> Any:
    return require("pyspiel", "openspiel", "OpenSpiel interop")  # loaded only when asked for


def load_openspiel_game(rules: Rules | None = None, *, game: str = GAME_NAME) -> Any:
    """The pyspiel game for ``rules``: ours (registered on first use) or OpenSpiel's ``connect_four``.

    Args:
        rules: the board size and win length; 6×7 with 4 in a row when None.
        game: ``"python_connect4_env"`` (ours, any size; a Python game) or ``"connect_four"`` (OpenSpiel's
            C++ game with ``rows`` / ``columns`` / ``x_in_row``, faster for its searches).

    Returns:
        A ``pyspiel.Game``.

    Raises:
        TypeError: ``rules`` is not a :class:`Rules`.
        ValueError: ``game`` is neither name.
        MissingExtraError: OpenSpiel is not installed (the ``openspiel`` extra).
    """
    rules = check_rules(rules, None) or Rules()
    if game not in GAMES:
        raise ValueError(f"game={game!r} is not supported; allowed: {', '.join(repr(g) for g in GAMES)}")
    pyspiel = _pyspiel()
    if game == GAME_NAME:
        from connect4_env import openspiel_game  # registers the game with pyspiel on import

        del openspiel_game
    params = {"rows": rules.rows, "columns": rules.columns, GAMES[game]: rules.win_length}
    return pyspiel.load_game(game, params)


def _rules_of(game: Any) -> Rules:
    """The rules of a pyspiel game of ``GAMES``, or ValueError naming the game and what is allowed."""
    name = game.get_type().short_name
    if name not in GAMES:
        raise ValueError(
            f"a pyspiel state of the game {name!r} is not Connect Four; allowed: "
            f"{', '.join(repr(g) for g in GAMES)}"
        )
    params = game.get_parameters()
    return Rules(int(params["rows"]), int(params["columns"]), int(params[GAMES[name]]))


def board_from_openspiel(state: Any) -> Board:
    """The position of a pyspiel state of ``connect_four`` or of ``python_connect4_env``.

    Args:
        state: a ``pyspiel.State`` of one of those games, at any point (terminal too). It is left unchanged.

    Returns:
        A new :class:`Board` with the state's rules, stones, winner and last move.

    Raises:
        TypeError: ``state`` is not a ``pyspiel.State``.
        ValueError: it is the state of another game (``tic_tac_toe``, ...); the message names the game.
        MissingExtraError: OpenSpiel is not installed (the ``openspiel`` extra).
    """
    pyspiel = _pyspiel()
    if not isinstance(state, pyspiel.State):
        raise TypeError(
            f"state must be a pyspiel.State of {' or '.join(repr(g) for g in GAMES)}, "
            f"got {type(state).__name__}"
        )
    rules = _rules_of(state.get_game())
    return Board(rules).play_moves(int(action) for action in state.history())


def _move_order(board: Board) -> list[int]:
    """One order of moves, first player first, that reaches ``board`` from empty with no earlier win.

    Found backwards: take off the top stone of the player who moved last (``board.last_move`` first when
    known) while the rest stays reachable. Removing stones never makes a line, so only the last move of a
    won position must be the one that completed it.
    """
    rules = board.rules
    height = rules.height
    failed: set[tuple[int, int]] = set()

    def unplay(
        first: int, second: int, heights: list[int], ply: int, won: bool, prefer: int | None
    ) -> list[int] | None:
        if ply == 0:
            return []
        if (first, second) in failed:
            return None
        mover = (ply - 1) & 1
        own = first if mover == 0 else second
        columns = [c for c in range(rules.columns) if heights[c]]
        if prefer in columns:
            columns.remove(prefer)
            columns.insert(0, prefer)
        for column in columns:
            bit = 1 << (column * height + heights[column] - 1)
            if not own & bit:
                continue
            rest = own & ~bit
            if won and rules.has_won(rest):
                continue  # the winner's line must be completed by the last move
            heights[column] -= 1
            earlier = unplay(
                rest if mover == 0 else first, second if mover == 0 else rest, heights, ply - 1, False, None
            )
            heights[column] += 1
            if earlier is not None:
                return [*earlier, column]
        failed.add((first, second))
        return None

    if board.winner is not None and board.winner != (board.ply - 1) & 1:
        raise ValueError(
            f"no game reaches this position: player {board.winner} has a line but did not move last"
        )
    first, second = board.stones
    moves = unplay(first, second, list(board.heights), board.ply, board.winner is not None, board.last_move)
    if moves is None:
        raise ValueError(f"no order of moves reaches this position from the empty board:\n{board}")
    return moves


def board_to_openspiel(board: Board, *, game: str | Any = GAME_NAME) -> Any:
    """``board`` as a new pyspiel state, played from the empty board.

    Args:
        board: any :class:`Board` (any size, terminal too).
        game: ``"python_connect4_env"`` (ours, the default), ``"connect_four"`` (OpenSpiel's C++ game, loaded
            with the board's size), or a loaded ``pyspiel.Game`` of either with the board's rules.

    Returns:
        A ``pyspiel.State`` whose position equals ``board`` (:func:`board_from_openspiel` gives it back).

    Raises:
        TypeError: ``board`` is not a :class:`Board`, or ``game`` is neither a name nor a ``pyspiel.Game``.
        ValueError: ``game`` names another game or has other rules, or no order of moves reaches ``board``.
        MissingExtraError: OpenSpiel is not installed (the ``openspiel`` extra).
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
