"""Each move of a recorded game judged by perfect play: ``best`` (the best score), ``keeps`` (not the best
score, the same outcome) or ``mistake`` (a worse outcome), on the boards the solver can judge; beside it,
SPIN-Bench's looser measure, the move's dense rank by score and whether it is in the top 3 (see
`connect4_agents.evaluation.rewards`).
"""

from __future__ import annotations

from typing import Any

from connect4_agents.evaluation.records import GameLog
from connect4_agents.evaluation.rewards import grade_move
from connect4_agents.solver.agent import SolverAgent, SolverBudgetExceeded, describe_score
from connect4_agents.solver.book import BOOK_RULES, book_available
from connect4_env.core import Board
from connect4_env.rules import Rules

__all__ = ["move_verdicts", "can_judge", "SOLVABLE_CELLS", "VERDICT_NODES"]

SOLVABLE_CELLS = 35  # boards up to this many cells are judged without a book (5x7, 6x5 ...)
VERDICT_NODES = 5_000_000  # solver nodes per position; a position needing more gets no verdict


def can_judge(rules: Rules) -> bool:
    """True when the solver judges moves on this board: 6x7 with four in a row and the opening book installed
    (the ``book`` extra), or at most `SOLVABLE_CELLS` cells.
    """
    return (rules == BOOK_RULES and book_available()) or rules.cells <= SOLVABLE_CELLS


def move_verdicts(game: GameLog, solver: SolverAgent | None = None) -> list[dict[str, Any] | None]:
    """Per move of ``game``: the exact score of every column before it and the verdict on the move played
    (``{"verdict": "best" | "keeps" | "mistake", "text", "scores", "rank", "top3"}``: ``rank`` the move's dense
    rank among the legal columns by score, 1 the best, ties sharing a rank; ``top3`` whether that rank is at
    most 3, SPIN-Bench's "good move"), or None where the position needs more than `VERDICT_NODES` solver nodes.

    Raises:
        ValueError: a move plays a full column.
    """
    rules = game.rules
    solver = solver if solver is not None else SolverAgent(node_budget=VERDICT_NODES)
    solver.bind(rules)
    board = Board(rules)
    verdicts: list[dict[str, Any] | None] = []
    for column in game.moves:
        try:
            scores = solver.evaluate_board(board)
        except SolverBudgetExceeded:
            verdicts.append(None)
            board.play(column)
            continue
        if not 0 <= column < len(scores) or scores[column] is None:
            raise ValueError(f"move {board.ply} plays the full column {column}")
        grade = grade_move(scores, column)
        played = scores[column]
        assert played is not None
        best = max(s for s in scores if s is not None)
        kind = grade.verdict
        if kind == "best":
            text = f"best: {describe_score(played, rules, board.ply)}"
        elif kind == "keeps":
            text = (
                f"keeps the result: {describe_score(played, rules, board.ply)} "
                f"(best: {describe_score(best, rules, board.ply)})"
            )
        else:
            text = (
                f"mistake: {describe_score(played, rules, board.ply)}, "
                f"where {describe_score(best, rules, board.ply)} was possible"
            )
        verdicts.append(
            {"verdict": kind, "text": text, "scores": scores, "rank": grade.rank, "top3": grade.top3}
        )
        board.play(column)
    return verdicts
