"""Train a Q-table and keep what it learned: the table, its learning curve as JSON and as a picture.

What the ``train`` and ``demo`` modes of ``connect4 match`` run. Ctrl-C still saves the table
trained so far and its curve.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connect4_agents._support.files import atomic_write_json
from connect4_agents.evaluation.curves import LearningCurve
from connect4_agents.qlearning.agent import QLearningAgent

__all__ = ["TrainingRun", "train_and_save", "TABLE_FILE", "CURVE_JSON", "CURVE_PNG"]

TABLE_FILE, CURVE_JSON, CURVE_PNG = "qtable.npz", "curve.json", "curve.png"  # the file names under out


@dataclass(frozen=True)
class TrainingRun:
    """A finished `train_and_save`: the files written, the curve and the wall time."""

    table: Path
    curve_json: Path
    curve_png: Path | None  # None when matplotlib (the ``train`` extra) is not installed
    curve: LearningCurve
    seconds: float


def train_and_save(
    agent: QLearningAgent,
    opponent: Any,
    episodes: int,
    out: str | os.PathLike[str],
    *,
    opponent_name: str,
    window: int = 1000,
    progress: bool = True,
) -> TrainingRun:
    """Train ``agent`` for ``episodes`` games against ``opponent`` (``agent`` itself for self-play), then
    write ``out/qtable.npz``, ``out/curve.json`` and, with matplotlib, ``out/curve.png``.

    Args:
        agent: the learner.
        opponent: any policy, or ``agent`` for self-play.
        episodes: training games.
        out: an existing, writable folder.
        opponent_name: how the files name the opponent (its spec).
        window: episodes per learning-curve point.
        progress: a progress bar (tqdm, when installed).

    Returns:
        The files written, the curve and the seconds spent training.

    Raises:
        TypeError: ``episodes`` or ``window`` is not an integer, or ``opponent`` is neither a policy nor a
            name or spec string.
        ValueError: ``episodes`` or ``window`` is below 1, or ``opponent`` is an unknown name or spec or
            cannot play the agent's board.
        OSError: a file cannot be written under ``out``.
        KeyboardInterrupt: Ctrl-C, after the table trained so far and its curve (``"interrupted": true``)
            were saved.
    """
    out = Path(out)
    start = time.perf_counter()
    curve = LearningCurve(window=window)
    try:
        agent.train(opponent, episodes, window=window, progress=progress, curve=curve)
    except KeyboardInterrupt:
        agent.save(out / TABLE_FILE)
        atomic_write_json(
            out / CURVE_JSON,
            {
                **curve.to_dict(),
                "seconds": time.perf_counter() - start,
                "opponent": opponent_name,
                "interrupted": True,
            },
        )
        raise
    seconds = time.perf_counter() - start
    table = agent.save(out / TABLE_FILE)
    curve_json = atomic_write_json(
        out / CURVE_JSON, {**curve.to_dict(), "seconds": seconds, "opponent": opponent_name}
    )
    rules = agent.rules
    try:
        curve_png: Path | None = curve.plot(
            out / CURVE_PNG, title=f"Q-learning {rules.rows}x{rules.columns} vs {opponent_name}"
        )
    except ImportError:
        curve_png = None
    return TrainingRun(table, curve_json, curve_png, curve, seconds)
