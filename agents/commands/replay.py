"""Turn game records into one self-contained HTML replay (no network needed to open it).

    connect4 tournament mcts:100 solver --games 4 --games-out games.jsonl
    connect4 replay games.jsonl -o replay.html      # then open replay.html#game=0&ply=10

Step with the buttons, the arrow keys or the slider; the address #game=G&ply=N opens a position. On 6x7 (with
the book extra) and on boards of at most 35 cells each move gets a verdict from the solver, computed here:
best / keeps the result / mistake, with the scores.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from connect4_agents._support.cli import (
    check_output_file,
    check_outputs_spare_inputs,
)
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.records import read_games
from connect4_agents.ui.replay import write_replay

__all__ = ["ReplayConfig", "build_parser", "run", "main"]


@dataclass
class ReplayConfig:
    """The options of ``connect4 replay``."""

    records: str = field(default="", metadata=option(positional=True))
    """A game records file (JSON lines, ``.gz`` allowed)."""
    out: str = field(default="replay.html", metadata=option(flags=("-o", "--out")))
    """The HTML file to write."""
    title: str | None = None
    """The page's title (default: the records file's name)."""
    no_verdicts: bool = False
    """Skip the solver's verdicts."""
    no_progress: bool = False
    """No progress bar."""


CONFIG = ReplayConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `ReplayConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(ReplayConfig, __doc__, parser)


def run(config: ReplayConfig) -> int:
    """Read the records and write the page.

    Raises:
        FileNotFoundError: there is no records file at the path given.
        ValueError: a malformed records file.
        OSError: an unreadable records file or an unwritable page.
    """
    if not Path(config.records).exists():  # before the page's folder is made
        raise FileNotFoundError(
            f"no game records file at {config.records} (connect4 tournament ... --games-out PATH, "
            "connect4 play --record PATH and connect4 match ... --games-out PATH write one)"
        )
    out = check_output_file(config.out)
    check_outputs_spare_inputs({"--out": out}, [config.records])
    games = read_games(config.records)
    bar = None if config.no_progress else progress_bar(len(games), "games", unit="game")
    try:
        write_replay(
            out,
            games,
            verdicts=not config.no_verdicts,
            title=config.title or f"Connect Four: {config.records}",
            on_game=None if bar is None else lambda _: bar.update(1),
        )
    finally:
        if bar is not None:
            bar.close()
    print(f"{len(games)} games: {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, ReplayConfig, build_parser().parse_args(argv))
