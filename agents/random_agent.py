"""Uniformly random legal moves."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import legal_columns, unpack

__all__ = ["RandomAgent"]


class RandomAgent:
    """Plays a uniformly random legal column.

    Args:
        seed: seed for its own ``np.random.Generator`` (same seed, same moves). None: fresh entropy.
    """

    name = "random"

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

    def __repr__(self) -> str:
        return "RandomAgent()"
