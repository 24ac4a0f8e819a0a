"""Evaluators for the PUCT search (`connect4_agents.mcts.puct`): what scores a position.

An evaluator speaks for the player to move in each board (a network's view); the search turns its values into
the tree's convention (for the player who moved into the node).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from connect4_env.core import Board
from connect4_env.validation import seeded_rng

__all__ = ["Evaluator", "UniformEvaluator", "RolloutEvaluator"]


class Evaluator(Protocol):
    """Scores positions for the search."""

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        """``(priors, values)``: ``(len(boards), columns)`` non-negative weights and ``(len(boards),)`` values
        in [-1, 1] for the player to move in each board (none of them finished).
        """
        ...


class UniformEvaluator:
    """Equal priors and a value of 0 everywhere: PUCT then searches like plain MCTS without rollouts (a stub
    for tests, and the baseline a network must beat).
    """

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        """Score ``boards`` (see `Evaluator.evaluate`).

        Args:
            boards: unfinished positions on one board size.

        Returns:
            ``(priors, values)``: ones of shape ``(len(boards), columns)`` and zeros of shape ``(len(boards),)``.
        """
        columns = boards[0].rules.columns if boards else 0
        return np.ones((len(boards), columns)), np.zeros(len(boards))


class RolloutEvaluator:
    """Equal priors and the mean result of ``rollouts`` uniformly random games (plain Python)."""

    def __init__(self, rollouts: int = 1, seed: int | None = None) -> None:
        self.rollouts = int(rollouts)
        self.rng = seeded_rng(seed)

    def evaluate(self, boards: Sequence[Board]) -> tuple[np.ndarray, np.ndarray]:
        """Score ``boards`` (see `Evaluator.evaluate`) by random games, which advance the evaluator's generator.

        Args:
            boards: unfinished positions on one board size.

        Returns:
            ``(priors, values)``: ones of shape ``(len(boards), columns)``, and per board the mean over
            ``rollouts`` random games of 1 (the player to move there wins), 0 (a draw) or -1 (a loss).
        """
        values = np.zeros(len(boards))
        for index, board in enumerate(boards):
            total = 0.0
            for _ in range(self.rollouts):
                game = board.copy()
                while not game.is_terminal:
                    legal = game.legal_moves()
                    game.play(legal[int(self.rng.integers(len(legal)))])
                if game.winner is not None:
                    total += 1.0 if game.winner == board.to_move else -1.0
            values[index] = total / self.rollouts
        columns = boards[0].rules.columns if boards else 0
        return np.ones((len(boards), columns)), values
