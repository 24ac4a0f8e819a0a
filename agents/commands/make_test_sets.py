"""Regenerate the shipped test sets: positions from random play with the exact score of every move.

    connect4 make-test-sets --seed 0                  # every set, into agents/data/test_sets
    connect4 make-test-sets --sets 4x5 5x4 --out sets # some sets, into another folder

The same --seed writes the same bytes (see connect4_agents.evaluation.test_sets). What each set costs to make is
on the commands page of the documentation.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from typing import Any

from connect4_agents._support.cli import check_output_dir
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.test_set_generation import generate_test_set, write_test_set
from connect4_agents.evaluation.test_sets import DATA_DIR, TEST_SET_SPECS

__all__ = ["MakeTestSetsConfig", "build_parser", "run", "main"]


@dataclass
class MakeTestSetsConfig:
    """The options of ``connect4 make-test-sets``."""

    seed: int = 0
    """Seed of the random play (0: the shipped sets)."""
    sets: tuple[str, ...] | None = field(default=None, metadata=option(choices=tuple(TEST_SET_SPECS)))
    """The sets to make (default: all)."""
    out: str | None = None
    """Folder for the files and ``manifest.json`` (default: the package's own, where the shipped sets are)."""


CONFIG = MakeTestSetsConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `MakeTestSetsConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(MakeTestSetsConfig, __doc__, parser)


def run(config: MakeTestSetsConfig) -> int:
    """Generate and write each set in turn (a finished set is kept if a later one is interrupted).

    Raises:
        ValueError: an unwritable output folder.
    """
    out = check_output_dir(DATA_DIR if config.out is None else config.out)
    for name in config.sets or list(TEST_SET_SPECS):
        spec = TEST_SET_SPECS[name]
        bar = progress_bar(spec.size, name, unit="pos")
        start = time.perf_counter()

        def advance(_: Any, bar: Any = bar) -> None:
            if bar is not None:
                bar.update(1)

        try:
            positions = generate_test_set(spec, config.seed, on_position=advance)
        finally:
            if bar is not None:
                bar.close()
        entry = write_test_set(spec, positions, config.seed, out)
        print(
            f"{name}: {entry['positions']} positions in {time.perf_counter() - start:.0f} s, sha256 {entry['sha256'][:16]}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, MakeTestSetsConfig, build_parser().parse_args(argv))
