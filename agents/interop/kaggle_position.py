"""Kaggle ConnectX's call read and checked: position, rules, player to move (env side: Kaggle's connectx).

Kaggle's ``connectx`` (``kaggle-environments``) calls an agent with two objects, dicts or Kaggle ``Struct`` s
(attribute access):

- ``observation.board``: the ``rows * columns`` cells as one flat list, **top row first**, ``0`` empty,
  ``1`` the first player's stones, ``2`` the second's; ``observation.mark``: whose turn (1 or 2).
- ``configuration.rows`` / ``columns`` / ``inarow`` (our ``win_length``).

A malformed call raises, naming the bad value: on Kaggle an exception loses the game, so the agent
([`KaggleAgent`][connect4_agents.interop.kaggle.KaggleAgent]) reads the call before anything else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from connect4_env.core import Board
from connect4_env.encoding import cell_bit_index
from connect4_env.rules import Rules
from connect4_env.validation import check_int, check_number

__all__ = ["read_kaggle_position", "read_kaggle_rules", "read_act_timeout", "KAGGLE_ACT_TIMEOUT"]

KAGGLE_ACT_TIMEOUT = 2.0  # seconds a move: connectx's default actTimeout


def _field(source: Any, name: str, what: str) -> Any:
    """``source[name]`` for a mapping, else ``source.name``; a missing field is a ValueError naming it."""
    if isinstance(source, Mapping):
        if name in source:
            return source[name]
    elif hasattr(source, name):
        return getattr(source, name)
    elif not hasattr(source, "__dict__"):
        raise TypeError(
            f"a Kaggle {what} must be a dict or an object with attributes, got {type(source).__name__}"
        )
    raise ValueError(f"the Kaggle {what} has no {name!r} field (connectx gives {what}.{name})")


def read_kaggle_rules(configuration: Any) -> Rules:
    """The [`Rules`][connect4_env.rules.Rules] of a Kaggle configuration: ``rows``, ``columns`` and
    ``inarow`` (``win_length``).

    Raises:
        TypeError: the configuration is not a dict or an object, or a field is not an integer.
        ValueError: a field is missing or out of range.
    """
    rows = check_int("configuration.rows", _field(configuration, "rows", "configuration"), 1)
    columns = check_int("configuration.columns", _field(configuration, "columns", "configuration"), 1)
    inarow = check_int("configuration.inarow", _field(configuration, "inarow", "configuration"), 1)
    return Rules(rows, columns, inarow)


def _read_cells(raw: Any, rules: Rules) -> np.ndarray:
    """``observation.board`` as int64 cells, checked entry by entry before numpy sees it (a ragged or nested
    list would otherwise fail inside numpy, with numpy's words).
    """
    flat = "connectx's board is one flat list of rows * columns cells, top row first"
    if isinstance(raw, np.ndarray) and raw.ndim != 1:
        raise ValueError(f"observation.board is an array of shape {raw.shape}; {flat}")
    if isinstance(raw, (str, bytes)) or not isinstance(raw, (Sequence, np.ndarray)):
        raise TypeError(f"observation.board must be a list of integers, got {type(raw).__name__}")
    if len(raw) != rules.cells:
        nested = " (a list of rows?)" if len(raw) and isinstance(raw[0], (Sequence, np.ndarray)) else ""
        raise ValueError(
            f"observation.board has {len(raw)} cells{nested}; {flat}: rows * columns = "
            f"{rules.rows} * {rules.columns} = {rules.cells}"
        )
    for index, value in enumerate(raw):
        row, column = divmod(index, rules.columns)
        where = f"observation.board[{index}] (row {row} from the top, column {column})"
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            listed = isinstance(value, (Sequence, np.ndarray)) and not isinstance(value, (str, bytes))
            nested = f", and {flat}" if listed else ""
            raise TypeError(
                f"{where} is {value!r:.40} ({type(value).__name__}); cells are the integers 0 (empty), 1 and 2 "
                f"(a player's stone){nested}"
            )
        if value not in (0, 1, 2):
            raise ValueError(f"{where} is {value!r}; a cell is 0 (empty), 1 or 2 (a player's stone)")
    return np.array([int(value) for value in raw], dtype=np.int64)


def read_kaggle_position(observation: Any, configuration: Any) -> Board:
    """The position of a Kaggle ConnectX call, checked: the board, its rules and the player to move.

    Returns:
        A [`Board`][connect4_env.core.Board] whose player to move is ``observation.mark`` (mark 1 is our player 0, who starts).

    Raises:
        TypeError: an observation or configuration that is neither a dict nor an object, a board that is not a
            list, a cell that is not an integer (a float, a bool, a nested list: the index named), a mark or
            size that is not an integer.
        ValueError: a missing field, a board whose length is not ``rows * columns`` (or an array that is not
            flat), a cell other than 0/1/2, a mark other than 1/2, stone counts that do not give ``mark`` the
            move, a stone above an empty cell, or a game that is already over.
    """
    rules = read_kaggle_rules(configuration)
    mark = check_int("observation.mark", _field(observation, "mark", "observation"), 1, 2)
    grid = _read_cells(_field(observation, "board", "observation"), rules).reshape(rules.rows, rules.columns)
    bits = cell_bit_index(rules.rows, rules.columns)
    first = sum(1 << int(bit) for bit in bits[grid == 1])
    second = sum(1 << int(bit) for bit in bits[grid == 2])
    n_first, n_second = int((grid == 1).sum()), int((grid == 2).sum())
    mover = 1 if n_first == n_second else 2 if n_first == n_second + 1 else None
    if mover != mark:
        raise ValueError(
            f"observation.mark is {mark} but the board holds {n_first} stones of mark 1 and {n_second} of "
            "mark 2: mark 1 moves when the counts are equal, mark 2 when mark 1 has one more"
        )
    board = Board.from_stones(rules, first, second)  # ValueError for a floating stone or two lines
    if board.is_terminal:
        result = "a draw" if board.winner is None else f"won by mark {board.winner + 1}"
        raise ValueError(f"the game on observation.board is over ({result}): there is no move to make")
    return board


def read_act_timeout(configuration: Any) -> float:
    """The seconds a move may take, ``configuration.actTimeout``; Kaggle's 2 where the configuration has none.

    Raises:
        ValueError: an ``actTimeout`` that is negative, not finite or past a float's range.
    """
    timeout = configuration.get("actTimeout") if isinstance(configuration, Mapping) else None
    if timeout is None and not isinstance(configuration, Mapping):
        timeout = getattr(configuration, "actTimeout", None)
    return KAGGLE_ACT_TIMEOUT if timeout is None else check_number("configuration.actTimeout", timeout, 0.0)
