"""Uniformly random legal moves."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import NoLegalMoveError, legal_columns, unpack

__all__ = ["RandomAgent"]


class RandomAgent:
    """Plays a uniformly random legal column.

    Args:
        seed: seed for its own ``np.random.Generator`` (same seed, same moves). None: fresh entropy.
    """

    name = "random"
    uses_observations = False  # the batched env may pass None instead of building observations

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; a seed, if given, reseeds the generator."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: Any, action_mask: Any = None) -> int:
        _, mask = unpack(observation, action_mask)
        legal = legal_columns(mask)
        return int(legal[int(self.rng.random() * legal.size)])

    def act_batch(self, observations: Any, action_masks: Any) -> np.ndarray:
        """One uniformly random legal column per row of ``action_masks`` (for the batched env)."""
        masks = np.asarray(action_masks).astype(bool)
        if not masks.any(axis=1).all():
            raise NoLegalMoveError("no legal move: an action mask allows no column")
        scores = self.rng.random(masks.shape)
        scores[~masks] = -1.0
        return scores.argmax(axis=1)

    def __repr__(self) -> str:
        return "RandomAgent()"
