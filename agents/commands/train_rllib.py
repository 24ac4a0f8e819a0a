"""PPO self-play with RLlib: one shared, action-masked policy for both seats, then games against the ladder.

    make test-rllib                                   # builds .venv-rllib (ray[rllib] pins its own gymnasium)
    .venv-rllib/bin/python scripts/train_rllib.py --iterations 50
    .venv-rllib/bin/python scripts/train_rllib.py --address auto --env-runners 8    # on a running Ray cluster

Uses connect4_env.integrations.rllib's multi-agent env (observations laid out for RLlib's ActionMaskingTorchRLModule) on
RLlib's new API stack. Saves an RLlib checkpoint per --checkpoint-every iterations and at the end under
--out (RLlib's own format: restore it with Algorithm.from_checkpoint, which unpickles, so only your own), prints
episodes and mean episode length per iteration, and plays the trained policy (greedy) against --eval-opponents, rating it against the reference ladder's fixed Elo
on 6x7.
Fails (exit 1) if an iteration played no episode: RLlib's env runners can crash while training goes on.
"""

from __future__ import annotations

import argparse
import sys

from connect4_agents._support.cli import check_output_dir, command_parser, positive_int, run_cli
from connect4_agents.evaluation.arena import MatchResult
from connect4_agents.rllib import train as rllib_train
from connect4_agents.rllib.train import NoEpisodesError, RLlibTrainConfig, train_rllib

__all__ = ["build_parser", "run", "main"]


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The command's options, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    parser = command_parser(parser, __doc__)
    parser.add_argument(
        "--iterations", type=positive_int, default=20, help="training iterations (default 20)"
    )
    parser.add_argument("--rows", type=int, default=6)
    parser.add_argument("--columns", type=int, default=7)
    parser.add_argument("--win-length", type=int, default=4)
    parser.add_argument("--env-runners", type=int, default=1, help="RLlib env runners (default 1)")
    parser.add_argument("--batch-size", type=positive_int, default=4000, help="env steps per iteration")
    parser.add_argument("--minibatch-size", type=positive_int, default=256)
    parser.add_argument("--epochs", type=positive_int, default=6, help="passes over each batch")
    parser.add_argument("--hidden", type=positive_int, nargs="+", default=[256, 256], help="MLP layer sizes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--address", default=None, help="a Ray cluster's address (default: a local Ray)")
    parser.add_argument("--num-cpus", type=positive_int, default=None, help="CPUs for a local Ray")
    parser.add_argument("--out", default="runs/rllib", help="folder for the checkpoints")
    parser.add_argument("--checkpoint-every", type=positive_int, default=10)
    parser.add_argument("--eval-games", type=int, default=40, help="games per ladder opponent (0: none)")
    parser.add_argument("--eval-opponents", nargs="*", default=["random", "mcts:10", "mcts:100"])
    return parser


def run(args: argparse.Namespace) -> int:
    """Train, checkpoint and evaluate; returns 1 (after ``error: ...``) when an iteration played no episode.

    Raises:
        ValueError: a bad board, opponent spec or output folder.
        TypeError: a bad board, opponent spec or output folder.
    """
    config = RLlibTrainConfig(
        rows=args.rows,
        columns=args.columns,
        win_length=args.win_length,
        env_runners=args.env_runners,
        batch_size=args.batch_size,
        minibatch_size=args.minibatch_size,
        epochs=args.epochs,
        hidden=tuple(args.hidden),
        seed=args.seed,
    ).check()
    rllib_train.require_rllib()
    out = check_output_dir(args.out)

    def iteration_done(iteration: int, episodes: int, length: float) -> None:
        print(f"iteration {iteration}: {episodes} episodes, mean length {length:.1f} plies", flush=True)

    def match_done(spec: str, match: MatchResult) -> None:
        print(match.table("rllib", spec), flush=True)

    try:
        ratings = train_rllib(
            config,
            iterations=args.iterations,
            out=out,
            checkpoint_every=args.checkpoint_every,
            eval_games=args.eval_games,
            eval_opponents=args.eval_opponents,
            address=args.address,
            num_cpus=args.num_cpus,
            on_iteration=iteration_done,
            on_checkpoint=lambda path: print(f"checkpoint: {path}", flush=True),
            on_match=match_done,
        )
    except NoEpisodesError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if ratings is not None:
        print(ratings.table(), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_cli(run, build_parser().parse_args(argv))
