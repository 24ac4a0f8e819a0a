"""The Policy protocol every agent follows, and helpers shared by the agents."""

from __future__ import annotations

from typing import Any

import numpy as np

from connect4_env.core import Board, Rules
from connect4_env.encoding import board_from_observation, split_observation
from connect4_env.policy import Policy, bind_policy
from connect4_env.validation import check_bool, check_int

__all__ = [
    "Policy",
    "bind_policy",
    "legal_columns",
    "NoLegalMoveError",
    "unpack",
    "RulesAware",
    "RulesBound",
    "check_mask_width",
    "check_search_settings",
]


class NoLegalMoveError(ValueError):
    """``act`` was called with an action mask that allows no column."""


def unpack(observation: Any, action_mask: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Planes and mask from either calling convention (see :class:`Policy`)."""
    if action_mask is not None and not isinstance(observation, dict):
        return observation, np.asarray(action_mask)
    return split_observation(observation, action_mask)


def legal_columns(action_mask: np.ndarray) -> np.ndarray:
    """Indices of the legal columns.

    Raises:
        NoLegalMoveError: the mask allows no column (the game is over or the mask is wrong).
    """
    legal = np.flatnonzero(action_mask)
    if legal.size == 0:
        raise NoLegalMoveError(
            f"no legal move: action_mask {np.asarray(action_mask).tolist()} allows no column"
        )
    return legal


def check_mask_width(action_mask: np.ndarray, columns: int) -> None:
    """Raise ValueError unless ``action_mask`` is one entry per column of a ``columns``-wide board."""
    if action_mask.ndim != 1 or action_mask.shape[0] != columns:
        raise ValueError(
            f"action_mask has shape {action_mask.shape}; the board has {columns} columns, so it needs ({columns},)"
        )


def check_search_settings(win_length: object, compiled: object) -> None:
    """Validate the ``win_length`` and ``compiled`` arguments the search agents share.

    Raises:
        TypeError: ``win_length`` is not None or an int, or ``compiled`` is not None/True/False.
        ValueError: ``win_length`` < 2.
    """
    if win_length is not None:
        check_int("win_length", win_length, 2)
    if compiled is not None:
        check_bool("compiled", compiled)


class RulesAware:
    """``bind(rules)`` for agents that only need to remember the game's rules (``self.rules``)."""

    rules: Rules | None = None

    def bind(self, rules: Rules) -> Any:
        """Play by ``rules`` from now on (the envs, arena and scripts call this); returns the agent.

        Raises:
            TypeError: not a :class:`Rules`. ValueError: the agent cannot play these rules.
        """
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a connect4_env.Rules, got {type(rules).__name__}")
        self._check_rules(rules)
        self.rules = rules
        return self

    def _check_rules(self, rules: Rules) -> None:
        """Raise ValueError if the agent cannot play ``rules`` (subclasses refine this)."""


class RulesBound(RulesAware):
    """For agents that read the position: the game's rules, given by ``bind(rules)`` or by arguments.

    Subclasses set ``self._win_length`` (the constructor's ``win_length``: None means "from the bound
    rules, else 4") and ``self.rules`` (None until bound).
    """

    _win_length: int | None = None

    def _check_rules(self, rules: Rules) -> None:
        if self._win_length is not None and self._win_length != rules.win_length:
            raise ValueError(
                f"{type(self).__name__} was built with win_length={self._win_length}, but the game has "
                f"win_length={rules.win_length}"
            )

    @property
    def win_length(self) -> int:
        """The line length the agent plays for: the bound rules', else the constructor's, else 4."""
        if self.rules is not None:
            return self.rules.win_length
        return 4 if self._win_length is None else self._win_length

    def read_board(
        self, observation: Any, action_mask: Any = None, *, mask_required: bool = True
    ) -> tuple[Board, list[int]]:
        """The position in ``observation`` and its legal columns, checked against the mask and the rules.

        With ``mask_required=False`` a missing mask is allowed (the position's own legal columns are used).

        Raises:
            ValueError: the mask's length is not the board's width, the mask disagrees with the position's
                legal columns (names both), the board is not the bound rules' size, or the planes are not a
                reachable position. NoLegalMoveError: the mask allows no column.
        """
        if action_mask is None and not mask_required:
            planes = np.asarray(observation["observation"] if isinstance(observation, dict) else observation)
            mask = None if not isinstance(observation, dict) else observation.get("action_mask")
            mask = None if mask is None else np.asarray(mask)
        else:
            planes, mask = unpack(observation, action_mask)
            planes = np.asarray(planes)
        if planes.ndim != 3 or planes.shape[2] != 2:
            raise ValueError(f"observation must have shape (rows, columns, 2), got {planes.shape}")
        rules = self.rules
        if rules is not None and planes.shape[:2] != (rules.rows, rules.columns):
            raise ValueError(
                f"{type(self).__name__} is bound to a {rules.rows}x{rules.columns} game, "
                f"got a {planes.shape[0]}x{planes.shape[1]} observation"
            )
        board = board_from_observation(planes, self.win_length)
        if mask is None:
            return board, board.legal_moves()
        check_mask_width(mask, planes.shape[1])
        legal = [int(c) for c in legal_columns(mask)]
        if board.legal_moves() != legal:
            raise ValueError(
                f"action_mask {mask.tolist()} does not match the position's legal columns "
                f"{board.legal_moves()}"
            )
        return board, legal
