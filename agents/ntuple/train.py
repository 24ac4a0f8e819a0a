"""TD(lambda) self-play for an n-tuple network, under a budget of games or CPU time, with checkpoints.

[`NTupleTrainer`][connect4_agents.ntuple.train.NTupleTrainer] plays games against itself in chunks, each
chunk one call of the compiled kernel (`connect4_agents.ntuple.kernels.self_play`), and moves its schedules
between chunks: the step size falls exponentially from ``alpha`` to ``alpha_final`` and the exploration rate
linearly from ``epsilon`` to ``epsilon_final`` over the planned budget. Its whole state (weights, counts, the
random generator's state, the plan) goes into a checkpoint file, so a run resumes where it stopped and goes
on as it would have.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from connect4_agents.evaluation.accuracy_report import AccuracyReport, SetAccuracy
from connect4_agents.evaluation.test_sets import select_labelled_positions, select_test_sets
from connect4_agents.ntuple.agent import NTupleAgent
from connect4_agents.ntuple.network import NTupleNetwork
from connect4_env.validation import check_int, check_number

__all__ = ["LearnerSettings", "NTupleTrainer", "trace_horizon", "test_set_errors"]

MAX_HORIZON = 64  # afterstates kept in a trace (lambda 0.93 reaches 1 % there)


def trace_horizon(trace_decay: float, cutoff: float = 0.01) -> int:
    """How many recent afterstates a truncated trace keeps: the fewest ``k`` with ``trace_decay**k`` below
    ``cutoff`` (1 for TD(0)), at most `MAX_HORIZON`.
    """
    if trace_decay <= 0.0:
        return 1
    if trace_decay >= 1.0:
        return MAX_HORIZON
    return max(1, min(MAX_HORIZON, math.ceil(math.log(cutoff) / math.log(trace_decay))))


@dataclass(frozen=True)
class LearnerSettings:
    """The learner's hyper-parameters (saved in every checkpoint and model).

    Attributes:
        alpha: the step size at the start, for the value's sum: each of the ``2 * n_tuples`` weights an
            afterstate reads moves by ``alpha / (2 * n_tuples)`` times the TD error times ``1 - V**2``.
        alpha_final: the step size at the end of the plan (exponential decay between).
        trace_decay: lambda of TD(lambda) (0: TD(0)).
        epsilon: the share of exploratory (random) moves at the start.
        epsilon_final: that share at the end of the plan (linear decay between).
    """

    alpha: float = 0.5
    alpha_final: float = 0.05
    trace_decay: float = 0.5
    epsilon: float = 0.1
    epsilon_final: float = 0.0

    def __post_init__(self) -> None:
        check_number("alpha", self.alpha, 0.0, 10.0, above_minimum=True)
        check_number("alpha_final", self.alpha_final, 0.0, 10.0, above_minimum=True)
        check_number("trace_decay", self.trace_decay, 0.0, 1.0)
        check_number("epsilon", self.epsilon, 0.0, 1.0)
        check_number("epsilon_final", self.epsilon_final, 0.0, 1.0)

    def at(self, progress: float) -> tuple[float, float]:
        """``(alpha, epsilon)`` at ``progress`` (0 at the start of the plan, 1 at its end)."""
        progress = min(max(progress, 0.0), 1.0)
        alpha = self.alpha * (self.alpha_final / self.alpha) ** progress
        epsilon = self.epsilon + (self.epsilon_final - self.epsilon) * progress
        return alpha, epsilon


class NTupleTrainer:
    """Self-play TD(lambda) for ``network`` under a plan of ``games`` games or ``cpu_seconds`` of training.

    Args:
        network: the network to train (its weights change in place).
        settings: the hyper-parameters.
        games: the planned games (the schedules run over them), or None.
        cpu_seconds: the planned CPU seconds of training (process time spent in the kernel), or None.
        seed: seeds the self-play's random moves.

    Exactly one of ``games`` and ``cpu_seconds`` is given. The CPU plan counts the training kernel's time
    only (evaluations are extra), so a run on a busy machine trains as much as on an idle one.

    Raises:
        TypeError: ``games`` or ``seed`` is not an integer, ``cpu_seconds`` not a number.
        ValueError: both or neither plan given, or one below 1.
    """

    def __init__(
        self,
        network: NTupleNetwork,
        settings: LearnerSettings | None = None,
        *,
        games: int | None = None,
        cpu_seconds: float | None = None,
        seed: int = 0,
    ) -> None:
        if (games is None) == (cpu_seconds is None):
            raise ValueError("give exactly one plan: games= or cpu_seconds=")
        self.network = network
        self.settings = settings or LearnerSettings()
        self.planned_games = None if games is None else check_int("games", games, 1)
        self.planned_seconds = (
            None if cpu_seconds is None else check_number("cpu_seconds", cpu_seconds, 1.0, 1e9)
        )
        seed = check_int("seed", seed, 0)
        # xorshift32 needs a non-zero state below 2**32
        self.rng = np.array([(seed * 2654435761 + 1) % 4294967295 + 1], dtype=np.int64)
        self.games = 0
        self.moves = 0
        self.results = np.zeros(3, dtype=np.int64)  # first-player wins, draws, second-player wins
        self.seconds = 0.0
        horizon = trace_horizon(self.settings.trace_decay)
        rows = network.rows.shape[0]
        self._history = np.zeros((horizon, rows), np.int64)
        self._history_side = np.zeros(horizon, np.int64)
        self._history_grad = np.zeros(horizon, np.float64)
        self._values = np.zeros(network.rules.columns, np.float64)
        self._scratch, self._base = network.workspace()

    @property
    def progress(self) -> float:
        """The share of the plan done, 0 to 1."""
        if self.planned_games is not None:
            return min(1.0, self.games / self.planned_games)
        assert self.planned_seconds is not None
        return min(1.0, self.seconds / self.planned_seconds)

    @property
    def done(self) -> bool:
        """Whether the plan is spent."""
        return self.progress >= 1.0

    def train(self, games: int) -> None:
        """Play and learn from ``games`` self-play games at the schedules' current values (fewer if a game
        plan ends first).
        """
        if self.planned_games is not None:
            games = min(games, self.planned_games - self.games)
        if games <= 0:
            return
        alpha, epsilon = self.settings.at(self.progress)
        network = self.network
        states, heights, stones = network.scratch()
        stats = np.zeros(4, dtype=np.int64)
        began = time.process_time()
        network.kernels.self_play(
            network.weights,
            network.rows,
            network.n_tuples,
            network.geometry,
            games,
            alpha / network.rows.shape[0],
            self.settings.trace_decay,
            epsilon,
            self.rng,
            states,
            heights,
            stones,
            self._values,
            self._history,
            self._history_side,
            self._history_grad,
            network.cell_rows,
            self._scratch,
            self._base,
            stats,
        )
        self.seconds += time.process_time() - began
        self.games += games
        self.results += stats[:3]
        self.moves += int(stats[3])

    def state(self) -> dict[str, Any]:
        """The run's counts, plan and settings, as a checkpoint's metadata stores them."""
        return {
            "settings": asdict(self.settings),
            "games": self.games,
            "moves": self.moves,
            "results": [int(x) for x in self.results],
            "train_seconds": self.seconds,
            "planned_games": self.planned_games,
            "planned_seconds": self.planned_seconds,
            "rng": int(self.rng[0]),
        }

    def save(self, path: str | os.PathLike[str], extra: dict[str, Any] | None = None) -> Path:
        """Write the network with the run's state (a checkpoint, also a playable model); returns the path."""
        return self.network.save(path, {**self.state(), **(extra or {})})

    @classmethod
    def resume(cls, path: str | os.PathLike[str], compiled: bool | None = None) -> NTupleTrainer:
        """The trainer saved in ``path`` by `save`, as it was.

        Raises:
            FileNotFoundError: no file at ``path``.
            ValueError: it is not a network file, is damaged, or holds no trainer's state (a model written by
                another program): the message names the file.
        """
        network, meta = NTupleNetwork.load(path, compiled=compiled)
        try:
            settings = LearnerSettings(**meta["settings"])
            trainer = cls(
                network,
                settings,
                games=meta["planned_games"],
                cpu_seconds=meta["planned_seconds"],
                seed=0,
            )
            trainer.games = check_int("games", meta["games"], 0)
            trainer.moves = check_int("moves", meta["moves"], 0)
            trainer.results = np.array([check_int("results", x, 0) for x in meta["results"]], np.int64)
            trainer.seconds = check_number("train_seconds", meta["train_seconds"], 0.0, 1e12)
            trainer.rng[0] = check_int("rng", meta["rng"], 1, 4294967295)
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path} holds no resumable training state: {error}") from None
        if trainer.results.shape != (3,):
            raise ValueError(f"{path} holds no resumable training state: results must hold 3 counts")
        return trainer


def test_set_errors(network: NTupleNetwork, sets: str = "6x7") -> AccuracyReport:
    """The network's greedy moves on the shipped test sets of its board, scored by their exact values.

    Returns:
        An [`AccuracyReport`][connect4_agents.evaluation.accuracy_report.AccuracyReport] per set (its
        ``nontrivial_rate`` is the share of non-trivial positions kept; one minus it, the errors).
    """
    agent = NTupleAgent(network, seed=0)
    report = AccuracyReport(agent="ntuple")
    for name, position in select_labelled_positions(select_test_sets([sets])):
        values = agent.move_values(position.board())
        values = np.where(np.isnan(values), -np.inf, values)
        column = int(np.argmax(values))
        report.add(position, column)
        report.per_set.setdefault(name, SetAccuracy()).add(position, column)
        report.moves.append(column)
    return report
