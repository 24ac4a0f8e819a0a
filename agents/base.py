"""The Policy protocol every agent follows, and helpers shared by the agents."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from connect4_env.encoding import split_observation

__all__ = ["Policy", "legal_columns", "NoLegalMoveError", "unpack"]


class NoLegalMoveError(ValueError):
    """``act`` was called with an action mask that allows no column."""


@runtime_checkable
class Policy(Protocol):
    """Anything that picks a column from an observation and an action mask.

    ``observation`` is the ``(rows, columns, 2)`` int8 planes from the mover's view (plane 0 = own stones,
    row 0 = top), as both environments produce; a PettingZoo ``{"observation", "action_mask"}`` dict is also
    accepted. ``action_mask`` has one 0/1 entry per column. ``act`` returns a legal column as a plain int.

    Optional: ``act_batch(observations, action_masks) -> columns`` for many games at once (the batched env uses
    it), ``reset(seed=None)`` before a game, and ``uses_observations = False`` for a policy that looks only at
    the masks (the batched env then passes ``observations=None`` to ``act_batch``).
    """

    def act(self, observation: Any, action_mask: Any = None) -> int: ...


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
