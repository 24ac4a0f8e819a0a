"""What AlphaZero training measures and logs: accuracy on solver-scored positions, Elo against the reference
ladder, the CSV log (rows of `GenerationLog`), TensorBoard scalars and the learning curve.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents._support.files import atomic_write
from connect4_agents.alphazero.agent import AlphaZeroAgent
from connect4_agents.alphazero.config import AlphaZeroTrainConfig
from connect4_agents.alphazero.files import ModelFile
from connect4_agents.alphazero.network import PolicyValueNet
from connect4_agents.evaluation.accuracy import evaluate_accuracy
from connect4_agents.evaluation.ratings import REFERENCE_LADDER, fit_ratings, read_ratings
from connect4_agents.evaluation.test_sets import TEST_SET_SPECS, Position, select_positions, test_set_names
from connect4_agents.evaluation.tournament import pairing_counts, run_tournament
from connect4_env.rules import Rules

__all__ = ["GenerationLog", "evaluation_positions", "measure", "ladder_elo", "plot_curve"]


def evaluation_positions(rules: Rules, n: int, seed: int = 0) -> list[Position]:
    """``n`` solver-scored positions for ``rules`` from the shipped test sets (on 6x7 those with 10 to 32
    stones, the goal's range), drawn with ``seed``; empty when no set has this board.
    """
    names = [
        name
        for name in test_set_names()
        if (TEST_SET_SPECS[name].rows, TEST_SET_SPECS[name].columns, TEST_SET_SPECS[name].win_length)
        == (rules.rows, rules.columns, rules.win_length)
    ]
    if not names or n == 0:
        return []
    return select_positions(names, (10, 32) if rules == Rules() else None, n, seed)


def measure(
    net: PolicyValueNet, rules: Rules, positions: list[Position], simulations: int
) -> tuple[float, float]:
    """The share of ``positions`` where the agent's move keeps the best outcome (the optimal class), and the
    same share on the non-trivial ones (where some move loses the outcome; NaN if there are none).
    """
    agent = AlphaZeroAgent(ModelFile(net, rules), simulations=simulations, seed=0, threads=None)
    report = evaluate_accuracy(agent, positions, workers=1, progress=False)
    return float(report.optimal_class_rate), float(report.nontrivial_rate)


def ladder_elo(
    model_path: Path,
    config: AlphaZeroTrainConfig,
    seed: int,
    backend: str = "process",
    address: str | None = None,
) -> tuple[float, float, float]:
    """The model at ``model_path`` (``alphazero:<path>``, 200 simulations a move) against the reference 6x7
    ladder, ``config.ladder_games`` games per ladder agent: its Elo and 95 % interval, the ladder fixed.
    """
    ladder = read_ratings(REFERENCE_LADDER)
    spec = f"alphazero:{model_path}"
    result, _ = run_tournament(
        list(ladder),
        config.ladder_games,
        config.rules,
        seed=seed,
        gauntlet=spec,
        backend=backend,
        workers=config.workers,
        address=address,
        progress=False,
    )
    ratings = fit_ratings(pairing_counts(result), anchor=None, fixed=ladder, bootstrap=200, seed=seed)
    low, high = ratings.ci95[spec]
    return round(ratings.elo[spec], 1), round(low, 1), round(high, 1)


def _append_row(path: Path, row: dict[str, Any]) -> None:
    """Add ``row`` to the CSV log; a log written with other columns (an older version) is rewritten with
    these, its missing values left empty.
    """
    fields = list(row)
    old: list[dict[str, Any]] = []
    if path.exists():
        with open(path, newline="") as stream:
            reader = csv.DictReader(stream)
            same = reader.fieldnames == fields
            old = [] if same else [dict(r) for r in reader]
        if same:
            with open(path, "a", newline="") as stream:
                csv.DictWriter(stream, fieldnames=fields).writerow(row)
            return
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=fields, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(old + [row])
    _write(path, text.getvalue().encode())


def _write(path: Path, data: bytes) -> None:
    atomic_write(path, lambda stream: stream.write(data))


@dataclass
class GenerationLog:
    """One generation of AlphaZero training: a row of the run's ``log.csv`` (its columns are these fields,
    in this order) and its TensorBoard scalars.

    Attributes:
        generation: the generation's number, from 1.
        games: self-play games played.
        positions: positions those games gave, before their mirror images are added.
        self_play_seconds: wall time of the self-play.
        games_per_hour: self-play games an hour at that pace.
        train_seconds: wall time of the training steps.
        policy_loss: mean cross-entropy of the policy head over the training steps (NaN without steps).
        value_loss: mean squared error of the value head over the training steps (NaN without steps).
        buffer: positions in the replay buffer afterwards, mirror images included.
        raw_accuracy: share of the evaluation positions where the raw policy keeps the best outcome (NaN when
            not measured).
        search_accuracy: the same share with search (NaN when not measured).
        elo: Elo against the reference ladder (6x7, on the generations that play it; NaN otherwise).
        elo_low: lower end of the Elo's 95 % interval.
        elo_high: upper end of the Elo's 95 % interval.
        raw_nontrivial: ``raw_accuracy`` on the non-trivial positions only (where some move loses the
            outcome).
        search_nontrivial: ``search_accuracy`` on the non-trivial positions only.
    """

    generation: int
    games: int
    positions: int
    self_play_seconds: float
    games_per_hour: float
    train_seconds: float
    policy_loss: float
    value_loss: float
    buffer: int
    raw_accuracy: float
    search_accuracy: float
    elo: float = float("nan")
    elo_low: float = float("nan")
    elo_high: float = float("nan")
    raw_nontrivial: float = float("nan")  # the accuracies on the non-trivial positions only
    search_nontrivial: float = float("nan")


def plot_curve(log_path: Path, path: Path) -> Path:
    """The learning curve from ``log.csv``: losses and the measured accuracies per generation."""
    with open(log_path, newline="") as stream:
        rows = list(csv.DictReader(stream))
    generations = [int(r["generation"]) for r in rows]
    rated = [(g, r) for g, r in zip(generations, rows) if (r.get("elo") or "nan") != "nan"]
    plt = pyplot()
    # the Elo panel only where the ladder was played (6x7): elsewhere it would stay empty
    figure, panels = plt.subplots(1, 3 if rated else 2, figsize=(14, 3.6) if rated else (9.5, 3.6))
    losses, accuracy = panels[0], panels[1]
    losses.plot(generations, [float(r["policy_loss"]) for r in rows], label="policy (cross-entropy)")
    losses.plot(generations, [float(r["value_loss"]) for r in rows], label="value (squared error)")
    losses.set_xlabel("generation")
    losses.set_title("training losses")
    losses.legend()
    for key, label, style in (
        ("raw_accuracy", "raw policy", "-"),
        ("search_accuracy", "with search", "-"),
        ("raw_nontrivial", "raw policy, non-trivial positions", "--"),
        ("search_nontrivial", "with search, non-trivial positions", "--"),
    ):
        values = [float(r.get(key) or "nan") for r in rows]
        if any(v == v for v in values):  # logs of older versions have no non-trivial columns
            accuracy.plot(generations, [100 * v for v in values], style, marker=".", label=label)
    accuracy.set_xlabel("generation")
    accuracy.set_ylabel("% of moves keeping the best outcome")
    accuracy.set_title("against perfect play (solver-scored positions)")
    if accuracy.lines:  # nothing measured (eval_positions 0): an empty panel, without a legend
        accuracy.legend()
    if rated:
        elo = panels[2]
        points = [float(r["elo"]) for _, r in rated]
        lows = [points[i] - float(r["elo_low"]) for i, (_, r) in enumerate(rated)]
        highs = [float(r["elo_high"]) - points[i] for i, (_, r) in enumerate(rated)]
        elo.errorbar([g for g, _ in rated], points, yerr=[lows, highs], marker="o", capsize=3)
        elo.set_xlabel("generation")
        elo.set_title("Elo against the reference ladder (200 simulations)")
    figure.tight_layout()
    return save_figure(figure, path)


def _tensorboard(folder: Path) -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard (the train extra) missing: the CSV log remains
        return None
    return SummaryWriter(str(folder))
