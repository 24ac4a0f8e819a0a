"""PPO self-play with RLlib: one shared, action-masked policy for both seats, then games against the ladder.

    make test-rllib                                   # builds .venv-rllib (ray[rllib] pins its own gymnasium)
    .venv-rllib/bin/connect4 train-rllib --iterations 50
    .venv-rllib/bin/connect4 train-rllib --address auto --env-runners 8    # on a running Ray cluster

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
from dataclasses import dataclass, field

from connect4_agents._support.cli import (
    check_output_dir,
    positive_int,
)
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents.evaluation.arena import MatchResult
from connect4_agents.rllib import train as rllib_train
from connect4_agents.rllib.train import NoEpisodesError, RLlibTrainConfig, train_rllib

__all__ = ["TrainRLlibConfig", "build_parser", "run", "main"]


@dataclass(frozen=True)
class TrainRLlibConfig(RLlibTrainConfig):
    """The options of ``connect4 train-rllib``: the board and PPO's settings
    ([`RLlibTrainConfig`][connect4_agents.rllib.train.RLlibTrainConfig]), the run's length, where it runs,
    and the games that measure it.
    """

    iterations: int = field(default=20, metadata=option(type=positive_int))
    """Training iterations."""
    address: str | None = None
    """A Ray cluster's address (default: a local Ray)."""
    num_cpus: int | None = field(default=None, metadata=option(type=positive_int))
    """CPUs for a local Ray (default: Ray's choice, every CPU)."""
    out: str = "runs/rllib"
    """Folder for the checkpoints."""
    checkpoint_every: int = field(default=10, metadata=option(type=positive_int))
    """Save a checkpoint every this many iterations (and at the end)."""
    eval_games: int = 40
    """Games against each evaluation opponent (0: none)."""
    eval_opponents: tuple[str, ...] = field(
        default=("random", "mcts:10", "mcts:100"), metadata=option(nargs="*")
    )
    """Agent specs the trained policy plays at the end."""

    def __post_init__(self) -> None:
        """Check the board and PPO's settings (see `RLlibTrainConfig.check`).

        Raises:
            TypeError: a setting of the wrong type.
            ValueError: a setting out of range.
        """
        self.check()


CONFIG = TrainRLlibConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `TrainRLlibConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(TrainRLlibConfig, __doc__, parser, agent_specs=True)


def run(config: TrainRLlibConfig) -> int:
    """Train, checkpoint and evaluate; returns 1 (after ``error: ...``) when an iteration played no episode.

    Raises:
        ValueError: a bad opponent spec or output folder.
        TypeError: an opponent spec of the wrong type.
        MissingExtraError: RLlib is not installed.
    """
    rllib_train.require_rllib()
    out = check_output_dir(config.out)

    def iteration_done(iteration: int, episodes: int, length: float) -> None:
        print(f"iteration {iteration}: {episodes} episodes, mean length {length:.1f} plies", flush=True)

    def match_done(spec: str, match: MatchResult) -> None:
        print(match.table("rllib", spec), flush=True)

    try:
        ratings = train_rllib(
            config,
            iterations=config.iterations,
            out=out,
            checkpoint_every=config.checkpoint_every,
            eval_games=config.eval_games,
            eval_opponents=config.eval_opponents,
            address=config.address,
            num_cpus=config.num_cpus,
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
    return run_config(run, TrainRLlibConfig, build_parser().parse_args(argv))
