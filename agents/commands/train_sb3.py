"""Train a Stable-Baselines3 baseline on Connect Four with the batched env, evaluate it, save it.

    connect4 train-sb3                                   # MaskablePPO vs random, 300k steps
    connect4 train-sb3 --algo dqn --opponent mcts:50 --timesteps 500000
    connect4 train-sb3 --opponent self --out runs/sb3/selfplay
    connect4 train-sb3 --league --cpu-minutes 60 --out runs/league   # fixed members and snapshots

Writes model.zip (+ model.json), checkpoint.zip, eval.csv, curve.png and config.json under --out (a league
also league.json, league.png and snapshots/); Ctrl-C stops early and still saves the model. A league run started
again on the same --out resumes from its checkpoint (--timesteps and --cpu-minutes count the whole run; --fresh
starts afresh). A banner says what runs and where the files go; the end summary names every file written.
Reuse the model with connect4_agents.SB3Agent.load("runs/sb3/model.zip") or as an opponent:
gym.make("Connect4-v0", opponent="sb3:runs/sb3/model.zip").
"""

from __future__ import annotations

import argparse

from connect4_agents._support.cli import (
    EXIT_INTERRUPTED,
    check_output_dir,
)
from connect4_agents._support.config_cli import config_parser, run_config
from connect4_agents._support.progress import write_line
from connect4_agents.sb3.report import summary_lines
from connect4_agents.sb3.train import SB3TrainConfig, train_baseline
from connect4_env.extras import require

__all__ = ["build_parser", "run", "main"]


CONFIG = SB3TrainConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `SB3TrainConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(SB3TrainConfig, __doc__, parser, agent_specs=True)


def run(config: SB3TrainConfig) -> int:
    """Train, evaluate and save, saying what runs first and every file written at the end; returns 130 when
    Ctrl-C stopped the training (the model is saved).

    Raises:
        ValueError: a bad setting or opponent, an unwritable output folder, a league there that cannot resume.
        TypeError: a bad setting or opponent, an unwritable output folder.
        MissingExtraError: the ``train`` extra is not installed (checked before anything is built).
    """
    for module in ["torch", "stable_baselines3"] + (["sb3_contrib"] if config.algo == "maskable_ppo" else []):
        require(module, "train", "train-sb3")
    check_output_dir(config.out)
    result = train_baseline(config, say=write_line)
    for line in summary_lines(result, config):
        print(line)
    return EXIT_INTERRUPTED if result.interrupted else 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, SB3TrainConfig, build_parser().parse_args(argv))
