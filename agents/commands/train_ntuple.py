"""Train an n-tuple network by TD(lambda) self-play: the Q-learning family on the real board, no search.

    connect4 train-ntuple                                  # 60 CPU-minutes on 6x7, files in runs/ntuple
    connect4 train-ntuple --cpu-minutes 5 --out runs/nt5   # a short run
    connect4 train-ntuple --games 20000 --curve-games 0    # a fixed number of games, no solver games

Writes model.npz (the spec ntuple:runs/ntuple/model.npz), checkpoint.npz, curve.csv (a row per curve point, as
it is measured: the test sets' non-trivial errors and the wins as first player against perfect play),
curve.png, final.json and config.json under --out. A run started again on the same --out resumes from its
checkpoint (--fresh starts afresh); Ctrl-C keeps the last checkpoint.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from connect4_agents._support.cli import check_output_dir
from connect4_agents._support.config_cli import config_parser, run_config
from connect4_agents.ntuple.run import NTupleTrainConfig, train_ntuple

__all__ = ["TrainNTupleConfig", "build_parser", "run", "main"]


@dataclass
class TrainNTupleConfig(NTupleTrainConfig):
    """The options of ``connect4 train-ntuple``: the run's settings
    ([`NTupleTrainConfig`][connect4_agents.ntuple.run.NTupleTrainConfig]), checked when it is built.
    """

    def __post_init__(self) -> None:
        """Check every setting (see `NTupleTrainConfig.check`).

        Raises:
            TypeError: a setting of the wrong type.
            ValueError: a setting out of range.
        """
        self.check()


CONFIG = TrainNTupleConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `TrainNTupleConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(TrainNTupleConfig, __doc__, parser)


def run(config: TrainNTupleConfig) -> int:
    """Train, measure and save; prints where every file went and the final figures.

    Raises:
        ValueError: an unwritable output folder, or a checkpoint that cannot resume.
    """
    out = check_output_dir(config.out)
    model, points, final = train_ntuple(config)
    print(f"model: {model} (play it as ntuple:{model})")
    for name in ("checkpoint.npz", "curve.csv", "curve.png", "final.json", "config.json"):
        if (out / name).exists():
            print(f"  {out / name}")
    if final is not None:
        print(
            f"final: non-trivial errors {100 * final.errors:.1f} % on the 6x7 test sets; as first player against "
            f"perfect play {final.wins} W / {final.draws} D / {final.losses} L"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, TrainNTupleConfig, build_parser().parse_args(argv))
