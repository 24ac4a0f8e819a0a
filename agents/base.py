"""The Policy protocol every agent follows, and helpers shared by the agents."""

from __future__ import annotations

from typing import Any

import numpy as np

from connect4_env.core import Board
from connect4_env.encoding import board_from_observation, observation_entry, split_observation
from connect4_env.rules import Rules, check_rules, short_repr
from connect4_env.validation import check_bool

__all__ = [
    "legal_columns",
    "NoLegalMoveError",
    "unpack",
    "RulesAware",
    "RulesBound",
    "check_mask_width",
    "mask_booleans",
    "check_search_settings",
]


def check_spec_value(value: object) -> str:
    """``value``, the part of an agent spec after ``name:`` that a ``from_spec`` reads, if it is a str.

    Raises:
        TypeError: it is not.
    """
    if not isinstance(value, str):
        raise TypeError(
            f"a spec value must be a str (the part after 'name:' in 'mcts:200'), got {value!r:.80} "
            f"({type(value).__name__})"
        )
    return value


class NoLegalMoveError(ValueError):
    """``act`` was called with an action mask that allows no column."""


def unpack(observation: Any, action_mask: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Planes and mask from either calling convention (see `Policy`)."""
    if action_mask is not None and not isinstance(observation, dict):
        return observation, np.asarray(action_mask)
    return split_observation(observation, action_mask)


def mask_booleans(masks: Any, name: str = "action_mask") -> np.ndarray:
    """``masks`` (one mask or a batch) as booleans, after checking that it holds booleans or the numbers 0 and 1
    only: a -1 or NaN would otherwise read as a legal column.

    Raises:
        TypeError: ``masks`` holds neither numbers nor booleans (strings, objects).
        ValueError: ``masks`` holds a number other than 0 and 1 (such as -1 or NaN).
    """
    masks = np.asarray(masks)
    if masks.dtype == np.bool_:
        return masks
    if masks.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must hold 0/1 or booleans, got dtype {masks.dtype}: {short_repr(masks.tolist())}"
        )
    if masks.dtype.kind == "f":
        bad = not (masks[masks != 0] == 1).all()  # NaN fails this too
    else:  # integers: two reductions, no temporary per entry (the batched env's int8 masks, every step)
        bad = masks.size > 0 and (int(masks.max()) > 1 or int(masks.min()) < 0)
    if bad:
        raise ValueError(f"{name} must hold only 0 and 1, got {short_repr(masks.tolist())}")
    return masks != 0


def legal_columns(action_mask: np.ndarray) -> np.ndarray:
    """Indices of the legal columns: the mask's 1 (or True) entries.

    Raises:
        TypeError: the mask holds neither numbers nor booleans (strings, objects).
        ValueError: the mask holds a number other than 0 and 1 (such as -1 or NaN, which would otherwise read
            as legal).
        NoLegalMoveError: the mask allows no column (the game is over or the mask is wrong; a ValueError).
    """
    legal = np.flatnonzero(mask_booleans(action_mask))
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


def check_search_settings(rules: object, compiled: object) -> None:
    """Validate the ``rules`` and ``compiled`` arguments the search agents share.

    Raises:
        TypeError: ``rules`` is not None or a [`Rules`][connect4_env.rules.Rules] (an int names the old
            ``win_length``), or ``compiled`` is not None/True/False.
    """
    check_rules(rules, None)
    if compiled is not None:
        check_bool("compiled", compiled)


class RulesAware:
    """``bind(rules)`` for agents that only need to remember the game's rules (``self.rules``)."""

    rules: Rules | None = None

    def bind(self, rules: Rules) -> Any:
        """Play by ``rules`` from now on (the envs, arena and scripts call this); returns the agent.

        Raises:
            TypeError: ``rules`` is not a [`Rules`][connect4_env.rules.Rules].
            ValueError: the agent cannot play these rules (nothing changes).
        """
        check_rules(rules)
        self._check_rules(rules)
        self.rules = rules
        return self

    def _check_rules(self, rules: Rules) -> None:
        """Raise ValueError if the agent cannot play ``rules`` (subclasses refine this)."""


class RulesBound(RulesAware):
    """For agents that read the position: the game's rules, given by ``bind(rules)`` or by ``rules=``.

    Subclasses set ``self._fixed_rules`` (the constructor's ``rules``: None means "whatever the agent is bound
    to, else 6x7 with 4 in a row") and ``self.rules`` (None until bound).
    """

    _fixed_rules: Rules | None = None

    def _check_rules(self, rules: Rules) -> None:
        fixed = self._fixed_rules
        if fixed is not None and fixed != rules:
            raise ValueError(
                f"{type(self).__name__} was built for {fixed.rows}x{fixed.columns} with win_length="
                f"{fixed.win_length}, but the game is {rules.rows}x{rules.columns} with win_length="
                f"{rules.win_length}"
            )

    @property
    def win_length(self) -> int:
        """The line length the agent plays for: the bound rules', else the constructor's, else 4."""
        if self.rules is not None:
            return self.rules.win_length
        return 4 if self._fixed_rules is None else self._fixed_rules.win_length

    def read_board(
        self, observation: Any, action_mask: Any = None, *, mask_required: bool = True
    ) -> tuple[Board, list[int]]:
        """The position in ``observation`` and its legal columns, checked against the mask and the rules.

        With ``mask_required=False`` a missing mask is allowed (the position's own legal columns are used).

        Raises:
            TypeError: the mask holds neither numbers nor booleans.
            ValueError: the planes are not ``(rows, columns, 2)`` or not a reachable position, the board is
                not the bound rules' size, the mask's length is not the board's width or it holds a value
                other than 0 and 1, or the mask disagrees with the position's legal columns (names both).
            NoLegalMoveError: the mask allows no column (a ValueError).
        """
        if action_mask is None and not mask_required:
            planes = np.asarray(
                observation_entry(observation) if isinstance(observation, dict) else observation
            )
            mask = None if not isinstance(observation, dict) else observation.get("action_mask")
            mask = None if mask is None else np.asarray(mask)
        else:
            planes, mask = unpack(observation, action_mask)
            planes = np.asarray(planes)
        board = board_from_observation(planes, self.win_length)  # checks the planes' shape and values
        rules = self.rules
        if rules is not None and planes.shape[:2] != (rules.rows, rules.columns):
            raise ValueError(
                f"{type(self).__name__} is bound to a {rules.rows}x{rules.columns} game, "
                f"got a {planes.shape[0]}x{planes.shape[1]} observation"
            )
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
