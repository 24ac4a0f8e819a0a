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
    config_values,
    json_object,
    positive_int,
    run_cli,
)
from connect4_agents.sb3.files import ALGORITHMS
from connect4_agents.sb3.train import SB3TrainConfig, train_baseline
from connect4_env.extras import require

__all__ = ["build_parser", "run", "main"]


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The command's options, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    defaults = SB3TrainConfig()
    parser = command_parser(parser, __doc__)
    parser.add_argument(
        "--algo", choices=ALGORITHMS, default=defaults.algo, help=f"algorithm (default {defaults.algo})"
    )
    parser.add_argument(
        "--opponent",
        default=defaults.opponent,
        help="random, mcts:<playouts>, qlearning:<table>, solver, sb3:<model.zip> or self "
        f"(frozen snapshots of the learner); default {defaults.opponent}",
    )
    parser.add_argument("--rows", type=int, default=defaults.rows)
    parser.add_argument("--columns", type=int, default=defaults.columns)
    parser.add_argument("--win-length", type=int, default=defaults.win_length)
    parser.add_argument(
        "--timesteps",
        type=positive_int,
        default=defaults.timesteps,
        help=f"learner steps (default {defaults.timesteps:,})",
    )
    parser.add_argument(
        "--n-envs",
        type=positive_int,
        default=defaults.n_envs,
        help=f"parallel games (default {defaults.n_envs})",
    )
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--out", default=defaults.out, help=f"output folder (default {defaults.out})")
    parser.add_argument(
        "--eval-freq", type=positive_int, default=defaults.eval_freq, help="steps between evaluations"
    )
    parser.add_argument(
        "--eval-games", type=positive_int, default=defaults.eval_games, help="games per evaluation opponent"
    )
    parser.add_argument(
        "--eval-opponents",
        nargs="+",
        default=list(defaults.eval_opponents),
        help=f"agent specs to evaluate against (default {' '.join(defaults.eval_opponents)})",
    )
    parser.add_argument(
        "--snapshot-freq",
        type=positive_int,
        default=defaults.snapshot_freq,
        help="self-play: steps between snapshots",
    )
    parser.add_argument(
        "--features",
        choices=["mlp", "cnn"],
        default=defaults.features,
        help="mlp: SB3's MlpPolicy; cnn: two 3x3 convolutions over the board (default mlp)",
    )
    parser.add_argument(
        "--threads", type=positive_int, default=defaults.threads, help="torch threads (default 1)"
    )
    parser.add_argument(
        "--hyperparameters",
        type=json_object,
        default={},
        help="extra algorithm arguments as JSON, e.g. '{\"learning_rate\": 0.0001}'",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def run(args: argparse.Namespace) -> int:
    """Train, evaluate and save; returns 130 when Ctrl-C stopped the training (the model is saved).

    Raises:
        ValueError: a bad setting or opponent, an unwritable output folder.
        TypeError: a bad setting or opponent, an unwritable output folder.
        MissingExtraError: the ``train`` extra is not installed (checked before anything is built).
    """
    for module in ["torch", "stable_baselines3"] + (["sb3_contrib"] if args.algo == "maskable_ppo" else []):
        require(module, "train", "train-sb3")
    config = SB3TrainConfig(
        **{
            **config_values(SB3TrainConfig, args),
            "eval_opponents": tuple(args.eval_opponents),
            "progress": not args.quiet,
        }
    )
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
