"""Train a Stable-Baselines3 baseline on Connect Four with the batched env, evaluate it, save it.

    python scripts/train_sb3.py                                   # MaskablePPO vs random, 300k steps
    python scripts/train_sb3.py --algo dqn --opponent mcts:50 --timesteps 500000
    python scripts/train_sb3.py --opponent self --out runs/sb3/selfplay

Writes model.zip (+ model.json), checkpoint.zip, eval.csv, curve.png and config.json under --out; Ctrl-C stops
early and still saves the model. Reuse the model with connect4_agents.SB3Agent.load("runs/sb3/model.zip") or as an
opponent: gym.make("Connect4-v0", opponent="sb3:runs/sb3/model.zip").
"""

from __future__ import annotations

import argparse

from connect4_agents._support.cli import (
    EXIT_INTERRUPTED,
    check_output_dir,
    command_parser,
    run_cli,
    with_agent_specs,
)
from connect4_agents._support.config_cli import add_options, from_args
from connect4_agents.sb3.train import SB3TrainConfig, train_baseline
from connect4_env.extras import require

__all__ = ["build_parser", "run", "main"]


CONFIG = SB3TrainConfig  # the dataclass the options are built from (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The command's options (one per [`SB3TrainConfig`][connect4_agents.sb3.train.SB3TrainConfig] field),
    added to ``parser`` (a subcommand's) or to a new parser; returns it.
    """
    return with_agent_specs(add_options(command_parser(parser, __doc__), SB3TrainConfig))


def run(args: argparse.Namespace) -> int:
    """Train, evaluate and save; returns 130 when Ctrl-C stopped the training (the model is saved).

    Raises:
        ValueError: a bad setting or opponent, an unwritable output folder.
        TypeError: a bad setting or opponent, an unwritable output folder.
        MissingExtraError: the ``train`` extra is not installed (checked before anything is built).
    """
    for module in ["torch", "stable_baselines3"] + (["sb3_contrib"] if args.algo == "maskable_ppo" else []):
        require(module, "train", "train-sb3")
    config = from_args(SB3TrainConfig, args)
    check_output_dir(config.out)
    result = train_baseline(config)
    state = "interrupted" if result.interrupted else "finished"
    print(
        f"{state} after {result.timesteps:,} steps in {result.seconds:.0f} s ({result.timesteps / max(result.seconds, 1e-9):,.0f} steps/s)"
    )
    for row in result.evaluations[-len(config.eval_opponents) :]:
        print(
            f"  vs {row['opponent']:>10}: {row['wins']} W / {row['draws']} D / {row['losses']} L of {row['games']}"
        )
    print(f"model saved to {result.model_path}")
    return EXIT_INTERRUPTED if result.interrupted else 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_cli(run, build_parser().parse_args(argv))
