"""Write a Kaggle ConnectX submission that plays one of our agents: a self-contained main.py or a tarball.

    connect4 kaggle-submission mcts -o main.py
    connect4 kaggle-submission alphazero -o submission.tar.gz
    connect4 kaggle-submission solver --move-seconds 1.0 -o main.py
    connect4 kaggle-submission ntuple -o main.py

The file carries our rules and agents (and the model an AlphaZero spec plays) and needs only numpy on Kaggle
(torch too for AlphaZero). Each move searches for Kaggle's actTimeout less a margin, or --move-seconds if
shorter; the solver falls back to a time-bounded MCTS where it would need longer, the exact solver plays the
other agents' endgames (--no-endgame: the agent plays every move), and no move is an illegal column. On a
fresh machine no move waits for numba's compilation or torch's import: they happen in the background while
plain-Python MCTS plays the first moves, for half their time. Its packages have names of their own, so several
submissions run in one process. Try it locally: kaggle_environments.make("connectx").run(["main.py", "negamax"]).

An n-tuple network (``ntuple``, ``ntuple:<model.npz>``) is written as numpy code and its tables alone, no package
of ours: it plays every move itself, without search, from the first (--move-seconds is refused).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from connect4_agents._support.cli import (
    check_output_file,
    shown_path,
)
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents.interop.kaggle_submission import write_kaggle_submission

__all__ = ["KaggleSubmissionConfig", "build_parser", "run", "main"]


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: seconds must be a finite number above 0")
    return value


@dataclass
class KaggleSubmissionConfig:
    """The options of ``connect4 kaggle-submission``."""

    spec: str = field(default="", metadata=option(positional=True))
    """The agent to submit: any agent spec but ``human`` and ``text:...``, which a submission can neither ask
    nor carry, such as ``mcts``, ``mcts:0.5s``, ``solver``, ``alphazero:<model.zip>`` or ``ntuple``."""
    out: str = field(default="main.py", metadata=option(flags=("-o", "--out")))
    """The file to write: ``main.py`` (any ``.py`` name) or a ``.tar.gz`` holding it."""
    move_seconds: float | None = field(default=None, metadata=option(type=_seconds))
    """The most seconds a move searches (default: Kaggle's actTimeout less 0.4)."""
    seed: int | None = None
    """Seed of the agent's searches (default: none)."""
    endgame: bool = field(default=True, metadata=option(flags=("--no-endgame",), negated=True))
    """The exact solver plays the positions it proves within a fifth of the move's time;
    ``--no-endgame``: the agent plays every move itself."""


CONFIG = KaggleSubmissionConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `KaggleSubmissionConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(KaggleSubmissionConfig, __doc__, parser, agent_specs=True)


def run(config: KaggleSubmissionConfig) -> int:
    """Write the submission and say where it is.

    Raises:
        ValueError: a bad spec or an output name that is neither .py nor .tar.gz.
        TypeError: a spec of the wrong type.
        OSError: an unwritable file.
    """
    out = check_output_file(config.out)
    path = write_kaggle_submission(
        config.spec, out, move_seconds=config.move_seconds, seed=config.seed, endgame=config.endgame
    )
    size = path.stat().st_size
    print(f"{config.spec}: {shown_path(path)} ({size / 1e6:.1f} MB); Kaggle plays its last function, agent()")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, KaggleSubmissionConfig, build_parser().parse_args(argv))
