"""A tournament between agents with Elo ratings: every pair plays N games, alternating who starts.

    connect4 tournament random mcts:100 solver --games 20
    connect4 tournament random mcts:10 mcts:100 mcts:1000 --games 100 --json ladder.json --plot ladder.png
    connect4 tournament --gauntlet sb3:runs/sb3/model.zip --games 40      # against the reference ladder
    connect4 tournament random mcts:100 --backend ray --address auto       # on a running Ray cluster
    connect4 tournament mcts:100 solver --games 4 --games-out games.jsonl  # records for connect4 replay

Prints each pairing's W/D/L (from the first-named agent's side) with a 95 % interval on its score, then
Bradley-Terry Elo ratings (draws count half a point) with 95 % bootstrap intervals, anchored at random = 0
(or at --anchor). The same --seed plays the same games on any backend and number of workers. Ctrl-C stops
the workers and still writes the finished games to --json and --games-out.

--gauntlet SPEC plays SPEC against each ladder agent only, and rates it against the ladder's fixed ratings:
the reference ladder shipped for 6x7 (random, mcts:10 ... mcts:10000, solver) when no agents are named, or
the ratings in --ladder PATH (a --json file of an earlier tournament). Those ratings set the scale, so
--anchor is refused with --gauntlet.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from connect4_agents._support.cli import (
    check_output_file,
    check_outputs_spare_inputs,
    positive_int,
    spec_files,
)
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents._support.figures import check_figure_path
from connect4_agents._support.progress import write_line
from connect4_agents.evaluation.backends import BACKENDS
from connect4_agents.evaluation.rated_tournament import gauntlet_ratings, run_rated_tournament
from connect4_agents.evaluation.tournament import pairing_line
from connect4_env import Rules
from connect4_env.extras import require

__all__ = ["TournamentConfig", "build_parser", "run", "main"]


@dataclass
class TournamentConfig:
    """The options of ``connect4 tournament``."""

    agents: tuple[str, ...] = field(default=(), metadata=option(positional=True, nargs="*"))
    """Agent specs: two or more; with ``--gauntlet``, the ladder it plays."""
    games: int = field(default=20, metadata=option(type=positive_int))
    """Games per pairing."""
    rows: int = 6
    """Board rows."""
    columns: int = 7
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    seed: int = 0
    """Seed of every game."""
    gauntlet: str | None = field(default=None, metadata=option(metavar="SPEC"))
    """Play SPEC against the ladder only, rated on the ladder's fixed ratings."""
    ladder: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Fixed ladder ratings for ``--gauntlet``: a ``--json`` file of an earlier tournament."""
    anchor: str | None = None
    """The agent rated 0 (default ``random``; not with ``--gauntlet``, whose ladder fixes the scale)."""
    bootstrap: int = 1000
    """Bootstrap samples of the rating intervals."""
    backend: str = field(default="process", metadata=option(choices=BACKENDS))
    """Where the games run: a process pool here, or Ray."""
    workers: int | None = field(default=None, metadata=option(type=positive_int))
    """Worker processes (default: one per CPU)."""
    address: str | None = None
    """A Ray cluster's address (with ``--backend ray``)."""
    json: str | None = field(default=None, metadata=option(metavar="PATH", hidden_flags=("--out",)))
    """Write the ratings, the pairings and the games here, as JSON."""
    games_out: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Game records, one JSON line per game with the search numbers (for ``connect4 replay``)."""
    plot: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Draw the ratings and the head-to-head scores in this picture."""
    no_progress: bool = False
    """No progress bar."""
    rules: Rules = field(init=False)
    """The board, from ``rows``, ``columns`` and ``win_length``."""

    def __post_init__(self) -> None:
        """Check the settings.

        Raises:
            ValueError: ``--anchor`` with ``--gauntlet``, fewer than two agents without ``--gauntlet``, a
                picture's name that names no picture format, two outputs that name one file, a bad board.
        """
        if self.gauntlet is not None and self.anchor is not None:
            # a gauntlet is rated on the ladder's fixed scale, so that its Elo compares with the ladder's
            raise ValueError(
                f"--anchor {self.anchor} does not apply to --gauntlet: its ratings are on the scale the "
                "ladder's fixed ratings set; leave --anchor out"
            )
        if self.gauntlet is None and len(self.agents) < 2:
            raise ValueError("give at least two agents (or --gauntlet SPEC)")
        if self.plot is not None:
            check_figure_path("--plot", Path(self.plot))
        named = [Path(path).resolve() for path in (self.json, self.plot, self.games_out) if path is not None]
        if len(set(named)) < len(named):  # one file would overwrite the other
            raise ValueError("--json, --games-out and --plot must name different files")
        self.rules = Rules(self.rows, self.columns, self.win_length)


CONFIG = TournamentConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `TournamentConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(TournamentConfig, __doc__, parser, agent_specs=True)


def run(config: TournamentConfig) -> int:
    """Play, print each pairing as it ends and the ratings, write the files asked for.

    Raises:
        ValueError: a bad spec or ladder, an output that is a folder or an input.
        TypeError: a spec of the wrong type.
        OSError: an unreadable ladder or an unwritable output path.
        MissingExtraError: the rating fit or ``--plot`` without the ``train`` extra, Ray without its extra.
    """
    out = check_output_file(config.json) if config.json is not None else None
    plot = check_output_file(config.plot) if config.plot is not None else None
    games_out = check_output_file(config.games_out) if config.games_out is not None else None
    check_outputs_spare_inputs(
        {"--json": out, "--plot": plot, "--games-out": games_out},
        [*spec_files([*config.agents, config.gauntlet or ""]), config.ladder],
    )
    # the optional steps' dependencies are checked before any game is played, so none is lost to them
    require("scipy", "train", "the tournament's rating fit")
    if plot is not None:
        require("matplotlib", "train", "--plot")
    if config.backend == "ray":
        require("ray", "distributed", "--backend ray")
    rules = config.rules
    fixed: dict[str, float] | None = None
    specs = list(config.agents)
    if config.gauntlet is not None:
        specs, fixed = gauntlet_ratings(specs, rules, config.ladder)
    try:
        ratings = run_rated_tournament(
            specs,
            config.games,
            rules,
            seed=config.seed,
            gauntlet=config.gauntlet,
            fixed=fixed,
            anchor="random" if config.anchor is None else config.anchor,
            bootstrap=config.bootstrap,
            backend=config.backend,
            workers=config.workers,
            address=config.address,
            progress=not config.no_progress,
            json_out=out,
            games_out=games_out,
            on_pairing=lambda a, b, match: write_line(pairing_line(a, b, match)),
        )
    except KeyboardInterrupt:
        for path in (out, games_out):
            if path is not None:
                print(f"\ninterrupted: the finished games are in {path}", file=sys.stderr)
        raise
    print("\n" + ratings.table())
    if games_out is not None:
        print(f"game records: {games_out} (connect4 replay {games_out} -o replay.html)")
    if plot is not None:
        ratings.plot(str(plot))
        print(f"plot: {plot}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, TournamentConfig, build_parser().parse_args(argv))
