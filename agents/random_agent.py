"""Uniformly random legal moves."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from connect4_agents.base import (
    NoLegalMoveError,
    RulesAware,
    check_mask_width,
    legal_columns,
    mask_booleans,
    unpack,
)
from connect4_env.validation import seeded_rng

__all__ = ["RandomAgent"]


class RandomAgent(RulesAware):
    """Plays a uniformly random legal column.

    Args:
        seed: seed for its own ``np.random.Generator`` (same seed, same moves). None: fresh entropy.
    """

    name = "random"
    uses_observations = False  # the batched env may pass None instead of building observations
    restricted_masks = True  # draws from whatever columns the mask allows (a shield narrows it)

    def __init__(self, seed: int | None = None) -> None:
        self.rng = seeded_rng(seed)

    def _width(self, planes: np.ndarray | None) -> int | None:
        """The board's width: the bound rules', else the planes', else unknown."""
        if self.rules is not None:
            return self.rules.columns
        return int(planes.shape[1]) if planes is not None and planes.ndim >= 2 else None

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; a seed, if given, reseeds the generator."""
        if seed is not None:
            self.rng = seeded_rng(seed)

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """A uniformly random legal column of ``action_mask`` (the policy's ``act``); the planes may be None,
        as the batched env passes them to an agent that does not use observations.

        Raises:
            TypeError: the mask holds neither numbers nor booleans.
            ValueError: the planes have an empty side, the mask does not have one 0/1 entry per column (of the
                bound rules, else of the planes), or it allows a column that the planes show full.
            NoLegalMoveError: the mask allows no column (a ValueError).
        """
        planes, mask = unpack(observation, action_mask)
        planes = None if planes is None else np.asarray(planes)
        if planes is not None and planes.ndim == 3 and 0 in planes.shape:
            raise ValueError(f"observation has shape {planes.shape}: a board has at least one row and column")
        width = self._width(planes)
        check_mask_width(mask, mask.shape[0] if width is None else width)
        column = self.choose(legal_columns(mask))
        # one lookup, not a scan: the agent never returns a column whose top cell is taken
        if planes is not None and planes.ndim == 3 and planes[0, column].any():
            raise ValueError(f"action_mask {mask.tolist()} allows column {column}, which is full")
        return column

    def choose(self, legal: Sequence[int] | np.ndarray) -> int:
        """One of the ``legal`` columns, uniformly (the draw
        [`act`][connect4_agents.random_agent.RandomAgent.act] makes from the mask's columns).

        Raises:
            NoLegalMoveError: ``legal`` is empty.
        """
        if len(legal) == 0:
            raise NoLegalMoveError("no legal move: the list of legal columns is empty")
        return int(legal[int(self.rng.random() * len(legal))])

    def act_batch(self, observations: Any, action_masks: Any) -> np.ndarray:
        """One uniformly random legal column per row of ``action_masks`` (for the batched env)."""
        # k-th legal column with k uniform in [0, legal count): the smallest integer type that holds the
        # board's column count (int8 up to 127 columns), which keeps this fast for thousands of games at once
        action_masks = np.asarray(action_masks)
        boards = None if observations is None else np.asarray(observations)
        width = self._width(boards[0] if boards is not None and boards.ndim == 4 and len(boards) else None)
        if action_masks.ndim != 2 or (width is not None and action_masks.shape[1] != width):
            raise ValueError(f"action_masks have shape {action_masks.shape}; the board has {width} columns")
        legal = mask_booleans(action_masks, "action_masks")
        dtype = np.int8 if action_masks.shape[1] <= np.iinfo(np.int8).max else np.int32
        counts = np.cumsum(legal, axis=1, dtype=dtype)
        totals = counts[:, -1]
        if not totals.all():
            raise NoLegalMoveError("no legal move: an action mask allows no column")
        k = (self.rng.random(totals.shape[0]) * totals).astype(dtype)
        return (counts > k[:, None]).argmax(axis=1)

    def __repr__(self) -> str:
        return "RandomAgent()"
