"""Train an AlphaZero-style agent by self-play.

    connect4 train-alphazero --out runs/alphazero --generations 10
    connect4 train-alphazero --out runs/alphazero --generations 10 --resume   # go on from the last one
    connect4 train-alphazero --rows 4 --columns 5 --games 16 --simulations 25 --generations 2  # tiny

Each generation plays --games self-play games (--parallel of them searched together, --simulations per move),
adds their positions and mirror images to the replay buffer, and takes --steps training steps; then
out/model.zip (the model, loadable as alphazero:<path>), out/buffer.npz, out/state.json, a line of
out/log.csv, TensorBoard scalars (out/tensorboard) and the curve (out/curve.png) are written atomically, so Ctrl-C keeps the last finished generation (exit 130). After each
generation the model is measured on --eval-positions solver-scored positions of its board (6x7: 10 to 32
stones): the share of moves keeping the best outcome, raw policy and with --eval-simulations.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from connect4_agents._support.cli import check_output_dir
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents.alphazero.config import AlphaZeroTrainConfig
from connect4_agents.evaluation.backends import BACKENDS
from connect4_env.extras import require

if TYPE_CHECKING:
    from connect4_agents.alphazero.monitor import GenerationLog

__all__ = ["TrainAlphaZeroConfig", "build_parser", "run", "main"]


@dataclass
class TrainAlphaZeroConfig(AlphaZeroTrainConfig):
    """The options of ``connect4 train-alphazero``: the run's settings
    ([`AlphaZeroTrainConfig`][connect4_agents.alphazero.config.AlphaZeroTrainConfig]) and where it runs and
    writes.
    """

    out: str = "runs/alphazero"
    """Output folder."""
    resume: bool = False
    """Go on from the model and buffer in ``--out``."""
    backend: str = field(default="process", metadata=option(choices=BACKENDS))
    """Where self-play runs: processes here, or Ray."""
    address: str | None = None
    """A Ray cluster's address (with ``--backend ray``)."""
    no_progress: bool = False
    """No progress bar."""

    def __post_init__(self) -> None:
        """Check every setting (see `AlphaZeroTrainConfig.check`).

        Raises:
            TypeError: a setting of the wrong type.
            ValueError: a setting out of range.
        """
        self.check()

    def settings(self) -> AlphaZeroTrainConfig:
        """The run's settings alone, without where it runs and writes (what the workers are sent)."""
        base = dataclasses.fields(AlphaZeroTrainConfig)
        return AlphaZeroTrainConfig(**{item.name: getattr(self, item.name) for item in base})


CONFIG = TrainAlphaZeroConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `TrainAlphaZeroConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(TrainAlphaZeroConfig, __doc__, parser)


def run(config: TrainAlphaZeroConfig) -> int:
    """Train generation after generation, printing one line each.

    Raises:
        ValueError: an unwritable output folder, or files in ``--out`` that cannot resume.
        MissingExtraError: the ``train`` extra is not installed.
        KeyboardInterrupt: Ctrl-C, after saying where the last finished generation is.
    """
    # torch only here, so that --help (and a connect4 subcommand's parser) works on a core install; through
    # require, so that a core install gets the extra's name instead of a traceback
    torch = require("torch", "train", "train-alphazero")
    require("matplotlib", "train", "train-alphazero")  # the curve is drawn after each generation
    from connect4_agents.alphazero.train import check_resumable, train

    torch.set_num_threads(1)  # the work is in worker processes and small batches: one thread each
    check_resumable(config.out, config.resume)  # before the folder: a refused run leaves no folder behind
    out = check_output_dir(config.out)

    def report(log: GenerationLog) -> None:
        print(
            f"generation {log.generation}: {log.games} games ({log.games_per_hour:,.0f}/hour), "
            f"{log.positions} positions, buffer {log.buffer}, policy loss {log.policy_loss:.3f}, "
            f"value loss {log.value_loss:.3f}, training {log.train_seconds:.1f} s"
            + (
                f"; best outcome kept: raw policy {log.raw_accuracy:.1%} ({log.raw_nontrivial:.1%} non-trivial)"
                if log.raw_accuracy == log.raw_accuracy
                else ""
            )
            + (
                f", {config.eval_simulations} simulations {log.search_accuracy:.1%} "
                f"({log.search_nontrivial:.1%} non-trivial)"
                if log.search_accuracy == log.search_accuracy
                else ""
            )
            + (
                f"; Elo against the ladder {log.elo:.0f} ({log.elo_low:.0f}-{log.elo_high:.0f})"
                if log.elo == log.elo
                else ""
            ),
            flush=True,
        )

    try:
        path = train(
            config.settings(),
            out,
            resume=config.resume,
            on_generation=report,
            backend=config.backend,
            address=config.address,
            progress=not config.no_progress,
        )
    except KeyboardInterrupt:
        model = out / "model.zip"
        where = f"the last finished generation is in {model}" if model.exists() else "no generation finished"
        print(f"\ninterrupted: {where} (--resume goes on from it)", file=sys.stderr)
        raise
    print(f"model: {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, TrainAlphaZeroConfig, build_parser().parse_args(argv))
