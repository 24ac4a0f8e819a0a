"""The exact solver as a teacher: games whose every position is labelled with the solver's outcomes.

``--teacher solver`` trains the network on these labels instead of self-play's search statistics. Each game is
played from the empty board; at each position the solver gives every legal move's outcome (win, draw or loss
under perfect play, [`outcomes_board`][connect4_agents.solver.agent.SolverAgent.outcomes_board]), and the
position is stored with

- the policy target: equal shares over the moves with the best outcome,
- the value target: that best outcome (1, 0 or -1 for the player to move).

The move played is a uniformly random legal one with probability ``explore`` (drawn per game, uniformly
between 0 and ``config.teacher_explore``), else one of the best moves at random: ``explore`` 1 gives random-play
positions (those the test sets are drawn from), 0 perfect play. Positions of the shipped test sets of the
board (and their mirror images and transpositions) are never stored, so accuracy is measured on positions the
network was not trained on; a position met twice within a task is stored once.

Where the solver is fast: 6x7 with the opening book, and boards of up to about 30 cells. On 6x7 without the
book the first early position stops the run with one `MissingExtraError` naming the `book` extra. Elsewhere a
position past the solver's default node budget (about 20 s of search) stops the run with
[`SolverBudgetExceeded`][connect4_agents.solver.agent.SolverBudgetExceeded] instead of searching for hours.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import cache
from typing import Any

import numpy as np

from connect4_agents.alphazero.config import AlphaZeroTrainConfig
from connect4_agents.alphazero.selfplay import join_parts
from connect4_agents.evaluation.backends import WorkerPool, run_batches
from connect4_agents.evaluation.test_set_generation import position_key
from connect4_agents.evaluation.test_sets import load_test_set, test_set_names
from connect4_agents.solver import SolverAgent
from connect4_env.core import Board
from connect4_env.encoding import observation_planes
from connect4_env.rules import Rules

__all__ = ["teacher_games", "teacher_generation", "held_out_keys"]


@cache
def held_out_keys(rules: Rules) -> frozenset[tuple[int, int]]:
    """The positions of every shipped test set of ``rules`` (up to mirror image and transposition)."""
    keys: set[tuple[int, int]] = set()
    for name in test_set_names():
        positions = load_test_set(name)
        if positions and positions[0].rules == rules:
            keys.update(position_key(position.board()) for position in positions)
    return frozenset(keys)


def teacher_games(
    config: AlphaZeroTrainConfig, n_games: int, rng: np.random.Generator, solver: SolverAgent | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Play ``n_games`` teacher games (see the module docstring).

    Returns:
        ``(planes, policies, values, plies)`` as `connect4_agents.alphazero.selfplay.self_play` does:
        the stored positions from the mover's view, their policy and value targets, and the plies played.
    """
    rules = config.rules
    solver = solver if solver is not None else SolverAgent(rules)
    held_out = held_out_keys(rules)
    seen: set[tuple[int, int]] = set()
    planes: list[np.ndarray] = []
    policies: list[np.ndarray] = []
    values: list[float] = []
    plies = 0
    for _ in range(n_games):
        explore = float(rng.uniform(0.0, config.teacher_explore))
        board = Board(rules)
        while not board.is_terminal:
            outcomes = solver.outcomes_board(board)
            best = max(o for o in outcomes if o is not None)
            best_moves = [c for c, o in enumerate(outcomes) if o == best]
            key = position_key(board)
            if key not in held_out and key not in seen:
                seen.add(key)
                target = np.zeros(rules.columns, np.float32)
                target[best_moves] = 1.0 / len(best_moves)
                planes.append(observation_planes(board))
                policies.append(target)
                values.append(float(best))
            choices = board.legal_moves() if rng.random() < explore else best_moves
            board.play(int(choices[int(rng.integers(len(choices)))]))
            plies += 1
    if not planes:
        return (
            np.zeros((0, rules.rows, rules.columns, 2), np.int8),
            np.zeros((0, rules.columns), np.float32),
            np.zeros(0, np.float32),
            plies,
        )
    return (
        np.stack(planes).astype(np.int8),
        np.stack(policies),
        np.asarray(values, dtype=np.float32),
        plies,
    )


def _teacher_task(task: tuple[dict[str, Any], int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    settings, n_games, seed = task
    config = AlphaZeroTrainConfig(**settings)
    return teacher_games(config, n_games, np.random.default_rng(seed), _solver(config.rules))


@cache
def _solver(rules: Rules) -> SolverAgent:
    """One solver per worker process and board (the default node budget), so its transposition table serves
    every task it runs.
    """
    return SolverAgent(rules)


def teacher_generation(
    config: AlphaZeroTrainConfig,
    rng: np.random.Generator,
    backend: str = "process",
    address: str | None = None,
    pool: WorkerPool | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``config.games`` teacher games, split over ``config.workers`` processes (in this one for 1; on ``pool``'s
    kept processes when given) or Ray tasks, as `connect4_agents.alphazero.selfplay.play_generation`
    splits self-play.
    """
    if config.workers == 1 and backend == "process":
        return teacher_games(config, config.games, rng, _solver(config.rules))
    shares = [len(part) for part in np.array_split(np.arange(config.games), config.workers) if len(part)]
    tasks = [(asdict(config), n, int(rng.integers(2**63))) for n in shares]
    parts = run_batches(
        _teacher_task, tasks, backend=backend, workers=config.workers, address=address, pool=pool
    )
    return join_parts(parts)
