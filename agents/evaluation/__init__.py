"""Measuring agents: test sets with exact scores, accuracy against perfect play, Elo ratings, tournaments.

- [`test_set_names`][connect4_agents.evaluation.test_sets.test_set_names],
  [`load_test_set`][connect4_agents.evaluation.test_sets.load_test_set]: the shipped positions, every move
  scored by the solver.
- [`evaluate_accuracy`][connect4_agents.evaluation.accuracy.evaluate_accuracy] ->
  [`AccuracyReport`][connect4_agents.evaluation.accuracy_report.AccuracyReport]: how often an agent's move keeps the
  best outcome.
- [`run_tournament`][connect4_agents.evaluation.tournament.run_tournament],
  [`fit_ratings`][connect4_agents.evaluation.ratings.fit_ratings]: games between agent specs on a process pool
  or Ray, and Bradley-Terry Elo ratings with bootstrap intervals.
"""

from __future__ import annotations

from connect4_agents.evaluation.accuracy import evaluate_accuracy
from connect4_agents.evaluation.accuracy_report import AccuracyReport, SetAccuracy
from connect4_agents.evaluation.backends import BACKENDS, WorkerPool, run_batches
from connect4_agents.evaluation.ratings import PairingCounts, Ratings, fit_ratings
from connect4_agents.evaluation.test_sets import Position, load_test_set, read_positions, test_set_names
from connect4_agents.evaluation.tournament import (
    GameOutcome,
    TournamentResult,
    pairing_counts,
    run_tournament,
)

__all__ = [
    "Position",
    "test_set_names",
    "load_test_set",
    "read_positions",
    "evaluate_accuracy",
    "AccuracyReport",
    "SetAccuracy",
    "run_tournament",
    "TournamentResult",
    "GameOutcome",
    "pairing_counts",
    "fit_ratings",
    "Ratings",
    "PairingCounts",
    "run_batches",
    "WorkerPool",
    "BACKENDS",
]
