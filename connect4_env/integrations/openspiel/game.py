"""Our Connect Four of any ``rows`` × ``columns`` × ``win_length`` as an OpenSpiel Python game.

Importing this module registers the game with pyspiel as ``"python_connect4_env"``; use
[`connect4_env.integrations.openspiel.convert.load_openspiel_game`][connect4_env.integrations.openspiel.convert.load_openspiel_game] rather than
importing it. The state wraps a [`Board`][connect4_env.core.Board], so every rule is the rules core's.
Strings, actions and the observation tensor follow OpenSpiel's own ``connect_four``: ``x`` moves first, row 0
of the tensor is the bottom row, and the tensor's planes are ``x``'s stones, ``o``'s stones and the empty
cells, so that a network or bot written for ``connect_four`` reads ours the same way. Needs the ``openspiel``
extra (this module imports pyspiel).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from connect4_env.core import Board
from connect4_env.rules import Rules

__all__ = ["GAME_TYPE", "Connect4Game", "Connect4State"]

_DEFAULTS = {"rows": 6, "columns": 7, "win_length": 4}
_SYMBOLS = ("x", "o")
GAME_TYPE = pyspiel.GameType(
    short_name="python_connect4_env",
    long_name="Python connect4_env Connect Four",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=dict(_DEFAULTS),
)


class Connect4Game(pyspiel.Game):
    """The game for one board size: parameters ``rows``, ``columns``, ``win_length`` (6, 7, 4 by default).

    Raises:
        TypeError: ``params`` is not a mapping (or None), or ``rows``, ``columns`` or ``win_length`` is not an
            integer.
        ValueError: the size is out of the rules' range (a value below 1, more than `MAX_CELLS` cells, or a
            ``win_length`` that fits neither a row nor a column).
    """

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        values = {**_DEFAULTS, **(params or {})}
        self.rules = Rules(values["rows"], values["columns"], values["win_length"])
        info = pyspiel.GameInfo(
            num_distinct_actions=self.rules.columns,
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.rules.cells,
        )
        super().__init__(GAME_TYPE, info, params or {})

    def new_initial_state(self) -> Connect4State:
        """The empty board, ``x`` (player 0) to move."""
        return Connect4State(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        """The observer of the board (public, so the same for both players), as OpenSpiel asks for it."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return BoardObserver(self.rules, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class Connect4State(pyspiel.State):
    """A position of `Connect4Game`: ``self.board`` is the [`Board`][connect4_env.core.Board]."""

    def __init__(self, game: Connect4Game) -> None:
        super().__init__(game)
        self.board = Board(game.rules)

    def current_player(self) -> int:
        """0 or 1, or ``pyspiel.PlayerId.TERMINAL`` once the game is over."""
        return int(pyspiel.PlayerId.TERMINAL) if self.board.is_terminal else self.board.to_move

    def _legal_actions(self, player: int) -> list[int]:
        return self.board.legal_moves()

    def _apply_action(self, action: int) -> None:
        self.board.play(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        return f"{_SYMBOLS[player]}{action}"

    def is_terminal(self) -> bool:
        """Whether someone has a line or the board is full."""
        return self.board.is_terminal

    def returns(self) -> list[float]:
        """+1 for the winner and -1 for the loser, 0 each for a draw or an unfinished game."""
        if self.board.winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.board.winner == 0 else [-1.0, 1.0]

    def __str__(self) -> str:
        return _board_string(self.board)


class BoardObserver:
    """OpenSpiel's ``PyObserver`` for the board: a ``(3, rows, columns)`` tensor as ``connect_four`` has."""

    def __init__(self, rules: Rules, params: Any) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported; got {params!r}")
        shape = (3, rules.rows, rules.columns)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": np.reshape(self.tensor, shape)}

    def set_from(self, state: Connect4State, player: int) -> None:
        """Fill the tensor from ``state`` (the same for both players: the planes are absolute)."""
        board = state.board
        rows = board.rules.rows
        planes = self.dict["observation"]
        planes.fill(0)
        for column in range(board.rules.columns):
            for row in range(rows):
                owner = board.cell(rows - 1 - row, column)  # OpenSpiel's row 0 is the bottom
                planes[2 if owner is None else owner, row, column] = 1

    def string_from(self, state: Connect4State, player: int) -> str:
        """The board as ``connect_four`` prints it."""
        return _board_string(state.board)


def _board_string(board: Board) -> str:
    """Top row first, ``x`` / ``o`` / ``.``, one line per row each ending in a newline, as ``connect_four``."""
    symbols = {0: "x", 1: "o", None: "."}
    return "".join(
        "".join(symbols[board.cell(row, column)] for column in range(board.rules.columns)) + "\n"
        for row in range(board.rules.rows)
    )


pyspiel.register_game(GAME_TYPE, Connect4Game)
