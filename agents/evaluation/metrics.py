"""How good a policy's moves are against perfect play."""

from __future__ import annotations

import math
from typing import Any

from connect4_agents.evaluation.test_sets import score_outcome
from connect4_env.core import Board

__all__ = ["optimal_move_rate"]


def optimal_move_rate(agent: Any, solver: Any, boards: list[Board]) -> float:
    """Fraction of ``boards`` where every greedy move of ``agent`` (a Q-table) is game-theoretically best.

    A move is best when it keeps the best outcome the position allows (a win if there is one, else a draw),
    by the exact solver's scores; how fast the win comes does not matter. NaN for no boards.
    """
    if not boards:
        return math.nan
    hits = 0
    for board in boards:
        outcome = [None if s is None else score_outcome(s) for s in solver.evaluate_board(board)]
        best = max(o for o in outcome if o is not None)
        legal = board.legal_moves()
        values = agent.q_values(board)
        top = max(values[c] for c in legal)
        hits += all(outcome[c] == best for c in legal if values[c] == top)
    return hits / len(boards)
