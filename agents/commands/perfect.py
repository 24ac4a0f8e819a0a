"""Strength against perfect play: W/D/L as first player, and plies survived as second, against the solver.

    connect4 perfect alphazero:0 --games 50                    # the raw AlphaZero network on 6x7
    connect4 perfect shield:mcts:100 --games 20 --second-games 10 --out runs/perfect-mcts
    connect4 perfect random --rows 4 --columns 5 --games 20     # on 4x5 (perfect play draws there)

The standard measure of a 6x7 agent's strength (the protocol of Thill's n-tuple agent against BitBully): the
opponent is the exact solver choosing at random among the columns with the best score. As first player a
perfect agent wins every 6x7 game, so the W/D/L says how often the agent keeps the win; as second player every
agent loses on 6x7, and the mean length of its games says how long it holds out (a perfect player lasts 41
plies). Writes games.jsonl (each game as it ends; connect4 replay reads it) and report.json in --out. 6x7 needs
the book extra (the solver's opening book).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from connect4_agents._support.cli import (
    check_output_dir,
    check_outputs_spare_inputs,
    spec_files,
)
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents.evaluation.perfect_play import MAX_GAMES, play_against_perfect
from connect4_env import Rules

__all__ = ["PerfectConfig", "build_parser", "run", "main"]


def _games(text: str) -> int:
    """An argparse type: a number of games, 0 to `MAX_GAMES`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= value <= MAX_GAMES:
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_GAMES:,}, got {text[:40]}")
    return value


@dataclass
class PerfectConfig:
    """The options of ``connect4 perfect``."""

    spec: str = field(default="", metadata=option(positional=True))
    """The agent spec to measure: ``alphazero:0``, ``mcts:100``, ``shield:random``, ..."""
    games: int = field(default=50, metadata=option(type=_games))
    """Games with the agent moving first (0: none)."""
    second_games: int | None = field(default=None, metadata=option(type=_games, shown_default="--games"))
    """Games with the agent moving second (0: none)."""
    rows: int = 6
    """Board rows."""
    columns: int = 7
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    seed: int = 0
    """Seed of the agent and of the perfect player's tie-breaks (game i: seed + 2i and seed + 2i + 1)."""
    out: str = field(default="runs/perfect", metadata=option(metavar="DIR"))
    """The folder of games.jsonl and report.json."""
    no_progress: bool = False
    """No progress bar."""
    rules: Rules = field(init=False)
    """The board, from ``rows``, ``columns`` and ``win_length``."""

    def __post_init__(self) -> None:
        """Check the settings.

        Raises:
            ValueError: no game to play, a negative seed, a bad board.
        """
        if self.games + self.second_games_played == 0:
            raise ValueError("--games 0 and --second-games 0: there is no game to play")
        if self.seed < 0:
            raise ValueError(f"--seed {self.seed} must be 0 or more")
        self.rules = Rules(self.rows, self.columns, self.win_length)

    @property
    def second_games_played(self) -> int:
        """The games with the agent moving second: ``second_games``, or ``games`` where it is None."""
        return self.games if self.second_games is None else self.second_games


CONFIG = PerfectConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `PerfectConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(PerfectConfig, __doc__, parser, agent_specs=True)


def run(config: PerfectConfig) -> int:
    """Play the games, writing each to games.jsonl as it ends; then report.json, and print the report.

    Raises:
        ValueError: an unknown spec, an unwritable ``--out``.
        TypeError: a spec of the wrong type.
    """
    out = check_output_dir(config.out)
    games_path, report_path = out / "games.jsonl", out / "report.json"
    check_outputs_spare_inputs(
        {"--out games.jsonl": games_path, "--out report.json": report_path}, spec_files([config.spec])
    )
    report = play_against_perfect(
        config.spec,
        first_games=config.games,
        second_games=config.second_games_played,
        rules=config.rules,
        seed=config.seed,
        games_out=games_path,
        progress=not config.no_progress,
    )
    report.write(report_path)
    print(report.table())
    print(f"wrote {games_path}, {report_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, PerfectConfig, build_parser().parse_args(argv))
