"""One ``connect4 train-ntuple`` run: its settings, its files, its learning curve, and resuming it.

[`train_ntuple`][connect4_agents.ntuple.run.train_ntuple] trains a network from scratch (or goes on from
``out/checkpoint.npz``) and writes, under ``out``:

- ``checkpoint.npz``: the network and the trainer's whole state, at every curve point (atomically), so a
  killed run loses at most one interval; also a playable model (``ntuple:out/checkpoint.npz``).
- ``model.npz``: the final network, the spec ``ntuple:out/model.npz``.
- ``curve.csv``: one row per curve point, appended as it is measured: games, moves, training CPU seconds,
  the test sets' non-trivial errors (all and per set), and the wins / draws / losses as first player against
  perfect play (the solver choosing at random among its best moves).
- ``curve.png``: that curve, drawn at the end; ``config.json``: the settings.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from connect4_agents._support.cli import positive_int
from connect4_agents._support.config_cli import option
from connect4_agents._support.figures import pyplot, save_figure
from connect4_agents._support.files import atomic_write_json
from connect4_agents._support.progress import progress_bar, write_line
from connect4_agents.evaluation.perfect_play import PerfectPlayer, play_against_perfect
from connect4_agents.ntuple.agent import NTupleAgent
from connect4_agents.ntuple.network import NTupleNetwork, check_network_size
from connect4_agents.ntuple.train import LearnerSettings, NTupleTrainer, test_set_errors
from connect4_env.extras import MissingExtraError
from connect4_env.rules import Rules
from connect4_env.validation import check_number

__all__ = ["NTupleTrainConfig", "CurvePoint", "CSV_HEADER", "train_ntuple", "measure", "plot_curve"]

SETS_6X7 = (
    "6x7-begin-easy",
    "6x7-begin-medium",
    "6x7-begin-hard",
    "6x7-middle-easy",
    "6x7-middle-medium",
    "6x7-end-easy",
)


@dataclass
class NTupleTrainConfig:
    """The options of ``connect4 train-ntuple`` (each field is an option: ``--cpu-minutes``, ...)."""

    cpu_minutes: float | None = field(default=None, metadata=option(shown_default="60"))
    """Train for this many CPU-minutes (the training's own process time; the curve's measurements come on top).
    Default: 60, unless ``--games`` is given."""
    games: int | None = field(default=None, metadata=option(type=positive_int))
    """Train for this many self-play games instead (the same seed then gives the same network)."""
    out: str = "runs/ntuple"
    """Output folder (a run started again on it resumes from its checkpoint, unless ``--fresh``)."""
    fresh: bool = False
    """Start afresh even if ``out`` holds a checkpoint (it is overwritten)."""
    rows: int = 6
    """Board rows."""
    columns: int = 7
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    tuples: int = field(default=70, metadata=option(type=positive_int))
    """Number of n-tuples (random walks; each has a table per side)."""
    length: int = field(default=8, metadata=option(type=positive_int))
    """Cells per tuple (a table holds 4**length weights)."""
    alpha: float = 0.5
    """Step size at the start, for the value's sum (each weight moves by alpha / (2 * tuples))."""
    alpha_final: float = 0.05
    """Step size at the end (exponential decay)."""
    trace_decay: float = 0.5
    """Lambda of TD(lambda)."""
    epsilon: float = 0.1
    """Share of random moves in self-play at the start."""
    epsilon_final: float = 0.0
    """Share of random moves at the end (linear decay)."""
    seed: int = 0
    """Seed of the tuples and the self-play."""
    curve_points: int = field(default=12, metadata=option(type=positive_int))
    """Curve points (and checkpoints) over the run, evenly spaced."""
    curve_games: int = 20
    """Games as first player against perfect play at each curve point (0: none)."""
    final_games: int = 200
    """Games as first player against perfect play for the final model (0: none)."""
    progress: bool = field(default=True, metadata=option(flags=("--quiet",), negated=True))
    """A progress bar while training; ``--quiet`` turns it off."""

    def check(self) -> None:
        """Check every setting (the learner's through `LearnerSettings`).

        Raises:
            TypeError: a setting of the wrong type (named).
            ValueError: a setting out of range (named).
        """
        check_network_size(Rules(self.rows, self.columns, self.win_length), self.tuples, self.length)
        self.settings()
        if self.cpu_minutes is not None:
            check_number("cpu_minutes", self.cpu_minutes, 0.0, 1e6, above_minimum=True)
        for name in ("curve_games", "final_games"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be 0 or more, got {getattr(self, name)}")

    @property
    def rules(self) -> Rules:
        """The board."""
        return Rules(self.rows, self.columns, self.win_length)

    def settings(self) -> LearnerSettings:
        """The learner's hyper-parameters."""
        return LearnerSettings(
            self.alpha, self.alpha_final, self.trace_decay, self.epsilon, self.epsilon_final
        )

    def plan(self) -> dict[str, Any]:
        """The trainer's plan: ``{"games": n}`` or ``{"cpu_seconds": s}`` (60 CPU-minutes by default)."""
        if self.games is not None:
            return {"games": self.games}
        return {"cpu_seconds": 60.0 * (60.0 if self.cpu_minutes is None else self.cpu_minutes)}


@dataclass
class CurvePoint:
    """One point of the learning curve (a row of ``curve.csv``)."""

    games: int
    moves: int
    train_seconds: float
    errors: float
    per_set: dict[str, float]
    wins: int
    draws: int
    losses: int

    def row(self) -> list[Any]:
        """The CSV row (see `CSV_HEADER`)."""
        sets = [round(100 * self.per_set.get(name, float("nan")), 2) for name in SETS_6X7]
        return [
            self.games,
            self.moves,
            round(self.train_seconds, 1),
            round(100 * self.errors, 2),
            *sets,
            self.wins,
            self.draws,
            self.losses,
        ]


CSV_HEADER = ["games", "moves", "train_seconds", "errors_pct", *SETS_6X7, "wins", "draws", "losses"]


def measure(
    trainer: NTupleTrainer, games: int, seed: int, perfect: PerfectPlayer | None = None
) -> CurvePoint:
    """The curve point of the trainer's network now: its test-set errors (6x7) and ``games`` games as first
    player against ``perfect`` (a `PerfectPlayer` whose cache the curve's points share).
    """
    network = trainer.network
    is_6x7 = network.rules == Rules()
    if is_6x7:
        report = test_set_errors(network)
        errors = 1.0 - report.nontrivial_rate
        per_set = {name: 1.0 - acc.nontrivial_rate for name, acc in report.per_set.items()}
    else:
        errors, per_set = float("nan"), {}
    wins = draws = losses = 0
    if games and is_6x7:
        agent = NTupleAgent(network, seed=seed)
        games_report = play_against_perfect(
            agent, first_games=games, second_games=0, seed=seed, perfect=perfect
        )
        wins, draws, losses = games_report.as_first
    return CurvePoint(trainer.games, trainer.moves, trainer.seconds, errors, per_set, wins, draws, losses)


def train_ntuple(
    config: NTupleTrainConfig, say: Callable[[str], None] = write_line
) -> tuple[Path, list[CurvePoint], CurvePoint | None]:
    """Run ``config`` (see the module): train, measure the curve, write the files.

    Returns:
        The model's path, the curve points of this run, and the final model's point (None without final
        games or off 6x7).

    Raises:
        TypeError: a setting of the wrong type (named).
        ValueError: a setting out of range, or a checkpoint in ``out`` that cannot be resumed (named).
    """
    config.check()
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    checkpoint = out / "checkpoint.npz"
    plan = config.plan()
    if checkpoint.exists() and not config.fresh:
        trainer = NTupleTrainer.resume(checkpoint)
        trainer.planned_games = plan.get("games")
        trainer.planned_seconds = plan.get("cpu_seconds")
        say(
            f"resuming from {checkpoint}: {trainer.games:,} games, {trainer.seconds / 60:.1f} CPU-minutes "
            f"trained (--fresh starts afresh)"
        )
    else:
        network = NTupleNetwork.create(config.rules, config.tuples, config.length, seed=config.seed)
        trainer = NTupleTrainer(network, config.settings(), seed=config.seed, **plan)
        with open(out / "curve.csv", "w", newline="") as stream:
            csv.writer(stream).writerow(CSV_HEADER)
    atomic_write_json(out / "config.json", asdict(config))
    network = trainer.network
    budget = (
        f"{plan['games']:,} games"
        if "games" in plan
        else f"{plan['cpu_seconds'] / 60:g} CPU-minutes of training"
    )
    say(
        f"training an n-tuple network ({network.n_tuples} tuples of {network.length} cells, "
        f"{network.rules.rows}x{network.rules.columns}) by TD({trainer.settings.trace_decay:g}) self-play for "
        f"{budget}; files in {out}"
    )
    points: list[CurvePoint] = []
    perfect = PerfectPlayer(network.rules, seed=config.seed) if network.rules == Rules() else None
    next_point = (int(trainer.progress * config.curve_points) + 1) / config.curve_points
    chunk = 500
    bar = progress_bar(1000, "training", unit="‰") if config.progress else None
    shown = 0
    try:
        while not trainer.done:
            began = time.process_time()
            trainer.train(chunk)
            spent = time.process_time() - began
            chunk = max(50, min(20_000, int(chunk * 2.0 / max(spent, 1e-3))))  # about 2 CPU-seconds a chunk
            if bar is not None:
                now = int(1000 * trainer.progress)
                bar.update(now - shown)
                shown = now
                bar.set_postfix(games=f"{trainer.games:,}", refresh=False)
            if trainer.progress >= next_point or trainer.done:
                # fresh seeds at every point (one fixed sample of games would follow the whole curve around)
                point = measure(trainer, config.curve_games, config.seed + trainer.games, perfect)
                points.append(point)
                with open(out / "curve.csv", "a", newline="") as stream:
                    csv.writer(stream).writerow(point.row())
                trainer.save(checkpoint)
                say(
                    f"{point.games:,} games, {point.train_seconds / 60:.1f} CPU-min: non-trivial errors "
                    f"{100 * point.errors:.1f} %"
                    + (
                        f", against perfect play as first player {point.wins} W / {point.draws} D / "
                        f"{point.losses} L"
                        if config.curve_games
                        else ""
                    )
                )
                next_point = (int(trainer.progress * config.curve_points) + 1) / config.curve_points
    finally:
        if bar is not None:
            bar.close()
    model = trainer.save(out / "model.npz")
    final = None
    if config.final_games and network.rules == Rules():
        final = measure(trainer, config.final_games, config.seed, perfect)
        atomic_write_json(out / "final.json", asdict(final))
    plot_curve(out / "curve.csv", out / "curve.png")
    return model, points, final


def plot_curve(csv_path: Path, png_path: Path) -> Path | None:
    """Draw ``curve.csv`` (errors and first-player wins against training games) to ``png_path``.

    Returns:
        The path written; None when matplotlib (the ``train`` extra) is not installed or the curve is empty.
    """
    with open(csv_path, newline="") as stream:
        rows = list(csv.DictReader(stream))
    if not rows:
        return None
    try:
        plt = pyplot()
    except MissingExtraError:
        return None
    games = [int(r["games"]) for r in rows]
    figure, left = plt.subplots(figsize=(7, 4))
    left.plot(games, [float(r["errors_pct"]) for r in rows], color="tab:red", label="non-trivial errors (%)")
    left.set_xlabel("self-play games")
    left.set_ylabel("test-set errors on non-trivial positions (%)")
    right = left.twinx()
    played = [int(r["wins"]) + int(r["draws"]) + int(r["losses"]) for r in rows]
    right.plot(
        games,
        [100 * int(r["wins"]) / n if n else float("nan") for r, n in zip(rows, played)],
        color="tab:blue",
        label="wins as first player vs perfect play (%)",
    )
    right.set_ylabel("wins as first player against perfect play (%)")
    right.set_ylim(0, 100)
    figure.legend(loc="upper center", ncol=2, fontsize=8)
    left.set_title("n-tuple TD(λ) self-play")
    return save_figure(figure, png_path)
