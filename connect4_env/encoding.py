"""Board <-> observation planes.

An observation is an int8 array of shape ``(rows, columns, 2)``: plane 0 holds the observing player's stones,
plane 1 the opponent's, row 0 is the top row (PettingZoo ``connect_four_v3``'s layout). The action mask is an
int8 vector with 1 for every playable column.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from connect4_env.core import Board, check_board
from connect4_env.rules import Rules, short_repr
from connect4_env.validation import check_int

__all__ = [
    "observation_planes",
    "action_mask",
    "board_from_observation",
    "split_observation",
    "observation_entry",
    "cell_bit_index",
    "TrackedBoard",
]


@lru_cache(maxsize=64)
def cell_bit_index(rows: int, columns: int) -> np.ndarray:
    """``index[r, c]`` = the bit number of cell (row r from the top, column c)."""
    height = rows + 1
    r = np.arange(rows)[:, None]
    c = np.arange(columns)[None, :]
    index = c * height + (rows - 1 - r)
    index.setflags(write=False)
    return index


def _bits_to_array(stones: int, n_bits: int) -> np.ndarray:
    raw = np.frombuffer(stones.to_bytes((n_bits + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")


def observation_planes(board: Board, player: int | None = None) -> np.ndarray:
    """The ``(rows, columns, 2)`` int8 planes of ``board`` seen by ``player`` (default: the player to move):
    plane 0 the viewer's stones, plane 1 the other player's, row 0 at the top (PettingZoo's layout).

    Examples:
        >>> from connect4_env.core import Board
        >>> planes = observation_planes(Board.from_moves([3]))  # the second player to move: the stone is theirs
        >>> planes.shape, planes.dtype, int(planes[5, 3, 1]), int(planes[:, :, 0].sum())
        ((6, 7, 2), dtype('int8'), 1, 0)
    """
    rules = check_board(board).rules
    if player is None:
        player = board.to_move
    elif type(player) is not int or not 0 <= player <= 1:
        player = check_int("player", player, 0, 1)
    index = cell_bit_index(rules.rows, rules.columns)
    n_bits = rules.columns * rules.height
    planes = np.empty((rules.rows, rules.columns, 2), dtype=np.int8)
    planes[:, :, 0] = _bits_to_array(board.stones[player], n_bits)[index]
    planes[:, :, 1] = _bits_to_array(board.stones[1 - player], n_bits)[index]
    return planes


def action_mask(board: Board) -> np.ndarray:
    """int8 vector: 1 for each legal column, all zeros once the game is over."""
    return np.asarray(check_board(board).legal_mask(), dtype=np.int8)


def _planes_to_bits(plane: np.ndarray, rules: Rules) -> int:
    flat = np.zeros(rules.columns * rules.height, dtype=np.uint8)
    flat[cell_bit_index(rules.rows, rules.columns)] = plane
    return int.from_bytes(np.packbits(flat, bitorder="little").tobytes(), "little")


def observation_entry(observation: dict[Any, Any]) -> Any:
    """The planes of a PettingZoo observation dict, or a ValueError that names the keys it has."""
    if "observation" not in observation:
        raise ValueError(
            "an observation dict needs an 'observation' key (PettingZoo's {'observation', 'action_mask'}); "
            f"got the keys {short_repr(sorted(map(str, observation)))}"
        )
    return observation["observation"]


def split_observation(observation: Any, action_mask: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Accept planes + mask, or a PettingZoo ``{"observation", "action_mask"}`` dict; return both arrays.

    Raises:
        ValueError: the planes are not ``(rows, columns, 2)`` or the mask does not have one entry per column.
    """
    if isinstance(observation, dict):
        if action_mask is None:
            action_mask = observation.get("action_mask")
        observation = observation_entry(observation)
    planes = np.asarray(observation)
    if planes.ndim != 3 or planes.shape[2] != 2:
        raise ValueError(f"observation must have shape (rows, columns, 2), got {planes.shape}")
    if action_mask is None:
        raise ValueError("an action_mask is required (pass it, or a dict with an 'action_mask' key)")
    mask = np.asarray(action_mask)
    if mask.shape != (planes.shape[1],):
        raise ValueError(f"action_mask must have shape ({planes.shape[1]},), got {mask.shape}")
    return planes, mask


def board_from_observation(observation: Any, win_length: int = 4) -> Board:
    """Rebuild the position from the mover's planes (plane 0 = the player to move).

    The player to move is the first player when both have the same number of stones, else the second.

    Raises:
        ValueError: the planes do not describe a reachable position (overlaps, floating stones, bad counts,
            values other than 0/1).
    """
    if isinstance(observation, dict):
        observation = observation_entry(observation)
    planes = np.asarray(observation)
    if planes.ndim != 3 or planes.shape[2] != 2:
        raise ValueError(f"observation must have shape (rows, columns, 2), got {planes.shape}")
    if not np.isin(planes, (0, 1)).all():
        raise ValueError("observation planes must hold only 0 and 1")
    rules = Rules(planes.shape[0], planes.shape[1], win_length)
    own = _planes_to_bits(planes[:, :, 0], rules)
    opponent = _planes_to_bits(planes[:, :, 1], rules)
    n_own, n_opponent = own.bit_count(), opponent.bit_count()
    if n_own == n_opponent:
        return Board.from_stones(rules, own, opponent)
    if n_own + 1 == n_opponent:
        return Board.from_stones(rules, opponent, own)
    raise ValueError(
        f"impossible stone counts for the player to move: {n_own} own, {n_opponent} opponent "
        "(the mover has as many stones as the opponent, or one fewer)"
    )


class TrackedBoard:
    """A [`Board`][connect4_env.core.Board] with both players' observation planes and the legal mask kept up
    to date move by move.

    The environments use it so that an observation is one array copy rather than a re-encoding.
    ``views[p]`` is player ``p``'s ``(rows, columns, 2)`` view; ``mask`` the int8 legal-column mask (not
    cleared when the game ends: callers decide what a finished game shows).
    """

    __slots__ = ("board", "views", "mask")

    def __init__(self, rules: Rules) -> None:
        self.board = Board(rules)
        # Two separate arrays (not one 4-d array): indexing a tuple is cheaper than slicing an array.
        self.views = (
            np.zeros((rules.rows, rules.columns, 2), dtype=np.int8),
            np.zeros((rules.rows, rules.columns, 2), dtype=np.int8),
        )
        self.mask = np.ones(rules.columns, dtype=np.int8)

    def play(self, column: int) -> bool:
        """Play ``column`` (an int) for the player to move; returns True if it wins.

        Raises:
            IllegalMoveError: as [`Board.play`][connect4_env.core.Board.play].
        """
        board = self.board
        player = board.ply & 1
        won = board.play(column)
        height = board.heights[column]
        row = board.rules.rows - height
        self.views[player][row, column, 0] = 1
        self.views[1 - player][row, column, 1] = 1
        if row == 0:
            self.mask[column] = 0
        return won

    def undo(self, column: int, last_move: int | None = None) -> None:
        """Take back the last move, played in ``column`` (see
        [`Board.undo`][connect4_env.core.Board.undo]).
        """
        board = self.board
        player = (board.ply - 1) & 1
        board.undo(column, last_move)
        row = board.rules.rows - 1 - board.heights[column]
        self.views[player][row, column, 0] = 0
        self.views[1 - player][row, column, 1] = 0
        self.mask[column] = 1

    def observation(self, player: int) -> np.ndarray:
        """A copy of ``player``'s planes."""
        return self.views[player].copy()

    def __deepcopy__(self, memo: dict) -> TrackedBoard:
        new = TrackedBoard.__new__(TrackedBoard)
        new.board = self.board.copy()
        new.views = (self.views[0].copy(), self.views[1].copy())
        new.mask = self.mask.copy()
        return new

    def __getstate__(self) -> tuple:
        return (self.board, self.views, self.mask)

    def __setstate__(self, state: tuple) -> None:
        self.board, self.views, self.mask = state
