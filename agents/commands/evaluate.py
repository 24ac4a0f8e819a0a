"""Accuracy against perfect play: each agent's move in every position of the test sets, scored by the solver.

    connect4 evaluate random mcts:1000                         # the six 6x7 sets
    connect4 evaluate mcts:0.1s --test-sets 6x7-begin-hard 6x7-end-easy --json acc.json --plot acc.png
    connect4 evaluate qlearning:runs/qlearning/qtable.npz --test-sets all   # the sets it can play
    connect4 evaluate mcts:10000 --backend ray                 # on a local Ray (or --address)
    connect4 evaluate mcts:1000 --plies 10-32 --sample 500     # 500 positions of 10 to 32 stones

Prints per set the share of moves that keep the best win/draw/loss outcome ("optimal class"), over all
positions and over the non-trivial ones (where some move loses the outcome: the figure that tells agents
apart), the share of moves with the best score ("exact"), with 95 % Wilson intervals, and the mean regret in
solver score points. The same
--seed gives the same moves on any backend and number of workers (time budgets, mcts:<seconds>s, excepted). A text
policy's moves played by its random fallback are counted apart and left out of every rate. --json is written again
as each agent's report is done, so a run stopped midway keeps the agents already evaluated.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from connect4_agents._support.cli import (
    check_output_file,
    check_outputs_spare_inputs,
    ply_range,
    positive_int,
    spec_files,
)
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents._support.figures import check_figure_path
from connect4_agents._support.files import atomic_write_json
from connect4_agents.evaluation.accuracy import evaluate_agents
from connect4_agents.evaluation.accuracy_report import AccuracyReport, plot_reports
from connect4_agents.evaluation.backends import BACKENDS
from connect4_agents.evaluation.test_sets import test_set_names
from connect4_env.extras import require

__all__ = ["EvaluateConfig", "build_parser", "run", "main"]


def _set_names() -> str:
    return ": " + ", ".join(test_set_names())


@dataclass
class EvaluateConfig:
    """The options of ``connect4 evaluate``."""

    agents: tuple[str, ...] = field(default=(), metadata=option(positional=True))
    """Agent specs: ``random``, ``mcts:1000``, ``mcts:0.1s``, ``solver``, ..."""
    test_sets: tuple[str, ...] = field(
        default=("6x7",), metadata=option(metavar="NAME", more_help=_set_names)
    )
    """``all``, ``6x7`` (the six 6x7 sets) or set names."""
    plies: tuple[int, int] | None = field(default=None, metadata=option(type=ply_range, metavar="MIN-MAX"))
    """Only the positions with MIN to MAX stones played (such as ``10-32``)."""
    sample: int | None = field(default=None, metadata=option(type=positive_int, metavar="N"))
    """Evaluate N of those positions, drawn with ``--seed``."""
    seed: int = 0
    """Seed of the agents and of the sample."""
    backend: str = field(default="process", metadata=option(choices=BACKENDS))
    """Where the positions are searched: a process pool here, or Ray."""
    workers: int | None = field(default=None, metadata=option(type=positive_int))
    """Worker processes (default: one per CPU)."""
    address: str | None = None
    """A Ray cluster's address (with ``--backend ray``)."""
    json: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Write the reports here, as JSON (again after each agent, so a stopped run keeps those done)."""
    plot: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Draw bars per set and agent in this picture."""
    no_progress: bool = False
    """No progress bar."""

    def __post_init__(self) -> None:
        """Check the picture's name.

        Raises:
            ValueError: a ``--plot`` name whose suffix names no picture format.
        """
        if self.plot:
            check_figure_path("--plot", Path(self.plot))


CONFIG = EvaluateConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `EvaluateConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(EvaluateConfig, __doc__, parser, agent_specs=True)


def run(config: EvaluateConfig) -> int:
    """Evaluate every agent, printing each table when done; then the JSON file and the plot.

    Raises:
        ValueError: an unknown set or spec, no position in the range, an unwritable output.
        TypeError: a spec of the wrong type.
        MissingExtraError: ``--plot`` without matplotlib, ``--backend ray`` without Ray.
    """
    out = check_output_file(config.json) if config.json else None
    plot = check_output_file(config.plot) if config.plot else None
    check_outputs_spare_inputs({"--json": out, "--plot": plot}, spec_files(config.agents))
    # checked before any position is searched, so no result is lost to a missing optional dependency
    if plot is not None:
        require("matplotlib", "train", "--plot")
    if config.backend == "ray":
        require("ray", "distributed", "--backend ray")
    done: list[dict[str, Any]] = []

    def report_done(report: AccuracyReport) -> None:
        print(report.table(), flush=True)
        if out is not None:  # written as each agent ends: a run stopped later keeps it
            done.append(report.to_dict())
            atomic_write_json(out, {"seed": config.seed, "reports": done})

    reports = evaluate_agents(
        config.agents,
        config.test_sets,
        plies=config.plies,
        sample=config.sample,
        seed=config.seed,
        backend=config.backend,
        workers=config.workers,
        address=config.address,
        progress=not config.no_progress,
        on_report=report_done,
    )
    if plot is not None:
        plot_reports(reports, str(plot))
        print(f"plot: {plot}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, EvaluateConfig, build_parser().parse_args(argv))
