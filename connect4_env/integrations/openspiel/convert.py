"""OpenSpiel both ways, on the env layer: a pyspiel `connect_four` state to a [`Board`][connect4_env.core.Board]
and back, and our game of any size registered as an OpenSpiel game.

OpenSpiel (`pip install -e ".[openspiel]"`) is imported only when one of these functions runs.

- [`board_from_openspiel`][connect4_env.integrations.openspiel.convert.board_from_openspiel]: the position of a pyspiel state of
  `connect_four` (OpenSpiel's C++ game, any `rows` / `columns` / `x_in_row`), of Kaggle's
  `connect_four_proxy` (the same game as Kaggle's Game Arena hands it to agents) or of our registered game,
  replayed from the state's history.
- [`board_to_openspiel`][connect4_env.integrations.openspiel.convert.board_to_openspiel]: a [`Board`][connect4_env.core.Board] as a
  pyspiel state of any of them, played from the empty board in one order of moves that reaches the position
  (a `Board` keeps no history; the last move is `board.last_move` when known).
- [`load_openspiel_game`][connect4_env.integrations.openspiel.convert.load_openspiel_game]: our rules as a pyspiel game
  (`connect4_env.integrations.openspiel.game`, registered as `"python_connect4_env"` with parameters `rows`, `columns`,
  `win_length`), which OpenSpiel's MCTS, AlphaZero and evaluation tools play like any of its own games.

OpenSpiel draws row 0 at the bottom and keeps absolute planes (`x`, `o`, empty); a `Board` draws row 0 at the
top. The conversion goes through the moves, so no layout is guessed.
"""

from __future__ import annotations

from typing import Any

from connect4_env.core import Board
from connect4_env.extras import require
from connect4_env.integrations.openspiel.move_order import move_order
from connect4_env.rules import Rules, check_rules

__all__ = [
    "GAME_NAME",
    "PROXY_NAME",
    "GAMES",
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
        TypeError: `rules` is not a [`Rules`][connect4_env.rules.Rules], or `game` not a str.
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
        from connect4_env.integrations.openspiel import (
            game as openspiel_game,  # registers the game with pyspiel on import
        )

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


def board_to_openspiel(board: Board, *, game: str | Any = GAME_NAME) -> Any:
    """`board` as a new pyspiel state, played from the empty board.

    The moves are one order that reaches `board` with the players alternating and no line before the last
    move, found by `connect4_env.integrations.openspiel.move_order.move_order`: a greedy pass over the stones
    and, only where that pass gets stuck, a search of at most `SEARCH_LIMIT` column visits; most positions no
    game reaches are refused before either. A search that runs out is refused too, and says so. Nothing recurses, so boards of
    any size convert.

    Args:
        board: any [`Board`][connect4_env.core.Board] (any size, terminal too).
        game: `"python_connect4_env"` (ours, the default), `"connect_four"` (OpenSpiel's C++ game, loaded with
            the board's size), `"connect_four_proxy"` (Kaggle's, when registered), or a loaded `pyspiel.Game`
            of any of them with the board's rules.

    Returns:
        A `pyspiel.State` whose position equals `board`
        ([`board_from_openspiel`][connect4_env.integrations.openspiel.convert.board_from_openspiel] gives it back).

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
    for column in move_order(board):
        state.apply_action(column)
    return state
