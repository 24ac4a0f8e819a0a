"""What runs beside SB3's ``learn`` in a training run: the evaluations (with ``eval.csv`` and the checkpoints
they write), the learner's snapshots for self-play and leagues, the progress bar and the CPU budget.

[`train_baseline`][connect4_agents.sb3.train.train_baseline] builds a [`Run`][connect4_agents.sb3.callbacks.Run]
and hands SB3 its [`callbacks`][connect4_agents.sb3.callbacks.callbacks].
"""

from __future__ import annotations

import csv
import importlib.util
import io
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stable_baselines3.common.callbacks import BaseCallback

from connect4_agents._support.files import atomic_write
from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.arena import play_match
from connect4_agents.sb3.agent import SB3Agent
from connect4_agents.sb3.league import CHECKPOINT_FILE, League
from connect4_env.pool import OpponentPool
from connect4_env.rules import Rules

if TYPE_CHECKING:
    from connect4_agents.sb3.train import SB3TrainConfig

__all__ = ["Run", "SelfPlay", "Clock", "callbacks", "evaluate_policy_wdl", "read_evaluations", "budget_left"]


class SelfPlay:
    """The opponents of ``self``: a pool holding one frozen snapshot of the learner, replaced by a new one every
    ``snapshot_freq`` steps; each game keeps the snapshot it started against.
    """

    def __init__(self, seed: int) -> None:
        self.pool = OpponentPool(seed=seed)
        self.name: str | None = None

    def refresh(self, policy: Any, step: int) -> None:
        """A frozen copy of ``policy`` becomes the only snapshot new games draw."""
        name = f"self@{step}"
        if name == self.name:
            return
        self.pool.add(name, policy)  # the pool copies and freezes it
        if self.name is not None:
            self.pool.remove(self.name)
        self.name = name


@dataclass
class Clock:
    """This part's start, and the whole run's wall and CPU seconds before it (a resumed run's earlier parts)."""

    seconds_before: float = 0.0
    cpu_before: float = 0.0
    start: float = field(default_factory=time.perf_counter)
    cpu_start: float = field(default_factory=time.process_time)

    def part(self) -> tuple[float, float]:
        """Wall and CPU seconds of this part."""
        return time.perf_counter() - self.start, time.process_time() - self.cpu_start

    def total(self) -> tuple[float, float]:
        """Wall and CPU seconds of the whole run."""
        seconds, cpu_seconds = self.part()
        return self.seconds_before + seconds, self.cpu_before + cpu_seconds


def budget_left(config: SB3TrainConfig, cpu_seconds: float) -> bool:
    """Whether the whole run's CPU budget (``cpu_minutes``, 0: none) has time left after ``cpu_seconds``."""
    return not config.cpu_minutes or cpu_seconds < 60.0 * config.cpu_minutes


@dataclass
class Run:
    """What the callbacks share: the run's settings and files, its opponents, its clock and its rows so far."""

    config: SB3TrainConfig
    rules: Rules
    out: Path
    save: Callable[[Any, Path, int], Path]
    """``save(model, path, steps)`` writes a model file (with its sidecar)."""
    opponents: dict[str, Any]
    """The evaluation opponents by spec."""
    clock: Clock
    limit: int | None
    """The run's learner steps in all, or None when only its CPU budget ends it."""
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    self_play: SelfPlay | None = None
    league: League | None = None
    on_evaluation: Callable[[Any, list[dict[str, Any]]], None] | None = None


def evaluate_policy_wdl(
    policy: Any, opponents: dict[str, Any], games: int, rules: Rules
) -> list[dict[str, Any]]:
    """W/D/L of ``policy`` (an SB3 policy) against each opponent, alternating sides."""
    agent = SB3Agent(policy)
    rows = []
    for name, opponent in opponents.items():
        result = play_match(agent, opponent, games, rules)
        rows.append(
            {
                "opponent": name,
                "games": games,
                "wins": result.wins,
                "draws": result.draws,
                "losses": result.losses,
                "win_rate": result.wins / games,
                "score": result.score,
            }
        )
    return rows


class Evaluate(BaseCallback):
    """Every ``eval_freq`` steps: W/D/L against the evaluation opponents, appended to ``eval.csv``, then a
    checkpoint (a league's in step with ``league.json``).
    """

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run
        self.next_eval = run.config.eval_freq

    def _on_training_start(self) -> None:  # a resumed run goes on from its steps
        freq = self.run.config.eval_freq
        self.next_eval = (self.num_timesteps // freq + 1) * freq

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next_eval:
            self.next_eval += self.run.config.eval_freq
            self.evaluate()
        return True

    def evaluate(self) -> None:
        """Evaluate the learner now, write the rows and a checkpoint."""
        run = self.run
        seconds, cpu_seconds = run.clock.total()  # the whole run so far: training and earlier evaluations
        steps = self.model.num_timesteps
        times = {"timesteps": steps, "seconds": round(seconds, 1), "cpu_seconds": round(cpu_seconds, 1)}
        games = run.config.eval_games
        rows = [
            {**times, **row}
            for row in evaluate_policy_wdl(self.model.policy, run.opponents, games, run.rules)
        ]
        for row in rows:
            self.logger.record(f"eval/{row['opponent']}_win_rate", row["win_rate"])
        run.evaluations.extend(rows)
        _write_csv(run.out / "eval.csv", run.evaluations)
        if run.on_evaluation is not None:
            run.on_evaluation(self.model, rows)
        if run.league is None:
            run.save(self.model, run.out / CHECKPOINT_FILE, steps)
            return
        seconds, cpu_seconds = (
            run.clock.total()
        )  # the league as of this checkpoint: a resumed run starts from both
        run.league.save_checkpoint(
            lambda path: run.save(self.model, path, steps),
            steps,
            seconds=round(seconds, 1),
            cpu_seconds=round(cpu_seconds, 1),
        )


class Snapshot(BaseCallback):
    """The learner's snapshots: a league's when it is due, self-play's every ``snapshot_freq`` steps."""

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run
        self.next_snapshot = run.config.snapshot_freq

    def _on_training_start(self) -> None:
        freq = self.run.config.snapshot_freq
        self.next_snapshot = (self.num_timesteps // freq + 1) * freq

    def _on_step(self) -> bool:
        league, self_play = self.run.league, self.run.self_play
        if league is not None and league.due(self.num_timesteps):
            league.add_snapshot(self.model.policy, self.num_timesteps)
        if self_play is not None and self.num_timesteps >= self.next_snapshot:
            self.next_snapshot += self.run.config.snapshot_freq
            self_play.refresh(self.model.policy, self.num_timesteps)
        return True


class Progress(BaseCallback):
    """Steps against the step limit, or the share of the run done (per mille of its steps or of its CPU
    budget, whichever is further) when CPU-minutes may end it: a total, so tqdm shows an ETA.
    """

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run

    def _on_training_start(self) -> None:
        self.per_mille = bool(self.run.config.cpu_minutes)
        if self.per_mille:
            self.bar = progress_bar(1000, "training", unit="‰", initial=self.done())
        else:
            self.bar = progress_bar(self.run.limit, "steps", unit="step", initial=self.num_timesteps)

    def done(self) -> int:
        """The run's per mille done."""
        minutes, limit = self.run.config.cpu_minutes, self.run.limit
        share = self.run.clock.total()[1] / (60.0 * minutes) if minutes else 0.0
        if limit is not None:
            share = max(share, self.num_timesteps / limit)
        return min(1000, int(1000 * share))

    def _on_step(self) -> bool:
        self.bar.n = self.done() if self.per_mille else self.num_timesteps
        postfix = {"steps": f"{self.num_timesteps:,}"} if self.per_mille else {}
        latest = self.run.evaluations[-len(self.run.opponents) :] if self.run.evaluations else []
        postfix |= {row["opponent"]: f"{row['win_rate']:.2f}" for row in latest}
        self.bar.set_postfix(postfix, refresh=False)
        self.bar.update(0)
        return True

    def _on_training_end(self) -> None:
        self.bar.close()


class CPUBudget(BaseCallback):
    """Stops ``learn`` once the run's CPU budget is spent."""

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run

    def _on_step(self) -> bool:  # False stops SB3's learn
        return budget_left(self.run.config, self.run.clock.total()[1])


def callbacks(run: Run) -> list[BaseCallback]:
    """The run's callbacks, its `Evaluate` first (the run calls it once more at the end)."""
    chosen: list[BaseCallback] = [Evaluate(run), Snapshot(run), CPUBudget(run)]
    if run.config.progress and importlib.util.find_spec("tqdm") is not None:  # progress_bar needs tqdm
        chosen.append(Progress(run))
    return chosen


def read_evaluations(path: Path) -> list[dict[str, Any]]:
    """The rows of an ``eval.csv`` written by an earlier part of a resumed run (numbers as numbers)."""
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as stream:
        rows: list[dict[str, Any]] = list(csv.DictReader(stream))
    for row in rows:
        for key, value in row.items():
            for kind in (int, float):
                try:
                    row[key] = kind(value)
                    break
                except (TypeError, ValueError):
                    continue
    return rows


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    def write(stream: Any) -> None:
        text = io.TextIOWrapper(stream, newline="", encoding="utf-8")
        writer = csv.DictWriter(text, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        text.flush()
        text.detach()

    atomic_write(path, write)
