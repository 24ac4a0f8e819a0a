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
        # k-th legal column with k uniform in [0, legal count): small int8 temporaries only, which keeps this
        # fast for thousands of games at once
        counts = np.cumsum(np.asarray(action_masks) != 0, axis=1, dtype=np.int8)
        totals = counts[:, -1]
        if not totals.all():
            raise NoLegalMoveError("no legal move: an action mask allows no column")
        k = (self.rng.random(totals.shape[0]) * totals).astype(np.int8)
        return (counts > k[:, None]).argmax(axis=1)

    def __repr__(self) -> str:
        return "RandomAgent()"
