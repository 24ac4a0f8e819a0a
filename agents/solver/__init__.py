"""The exact solver: alpha-beta negamax with a transposition table and the 6x7 opening book."""

from __future__ import annotations

from connect4_agents.solver.agent import SolverAgent, SolverBudgetExceeded, describe_score, plies_to_end
from connect4_agents.solver.book import BOOK_PLY, BOOK_RULES, OpeningBook, book_available, load_book

__all__ = [
    "SolverAgent",
    "SolverBudgetExceeded",
    "describe_score",
    "plies_to_end",
    "OpeningBook",
    "book_available",
    "load_book",
    "BOOK_PLY",
    "BOOK_RULES",
]
