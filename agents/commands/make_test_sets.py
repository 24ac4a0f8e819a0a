"""Regenerate the shipped test sets: positions from random play with the exact score of every move.

    python scripts/make_test_sets.py --seed 0                  # every set, into agents/data/test_sets
    python scripts/make_test_sets.py --sets 4x5 5x4 --out sets # some sets, into another folder

The same --seed writes the same bytes (see connect4_agents.evaluation.test_sets). The 6x7 sets take about ten minutes
each on one core here, the smaller boards' seconds.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from connect4_agents._support.cli import check_output_dir, command_parser, run_cli
from connect4_agents._support.progress import progress_bar
from connect4_agents.evaluation.test_sets import DATA_DIR, TEST_SET_SPECS, generate_test_set, write_test_set

__all__ = ["build_parser", "run", "main"]


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The command's options, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    parser = command_parser(parser, __doc__)
    parser.add_argument(
        "--seed", type=int, default=0, help="random play's seed (default 0, the shipped sets)"
    )
    parser.add_argument(
        "--sets", nargs="+", choices=list(TEST_SET_SPECS), default=None, help="sets to make (default all)"
    )
    parser.add_argument("--out", default=str(DATA_DIR), help="folder for the files and manifest.json")
    return parser


def run(args: argparse.Namespace) -> int:
    """Generate and write each set in turn (a finished set is kept if a later one is interrupted).

    Raises:
        ValueError: an unwritable output folder.
    """
    out = check_output_dir(args.out)
    for name in args.sets or list(TEST_SET_SPECS):
        spec = TEST_SET_SPECS[name]
        bar = progress_bar(spec.size, name, unit="pos")
        start = time.perf_counter()

        def advance(_: Any, bar: Any = bar) -> None:
            if bar is not None:
                bar.update(1)

        try:
            positions = generate_test_set(spec, args.seed, on_position=advance)
        finally:
            if bar is not None:
                bar.close()
        entry = write_test_set(spec, positions, args.seed, out)
        print(
            f"{name}: {entry['positions']} positions in {time.perf_counter() - start:.0f} s, sha256 {entry['sha256'][:16]}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_cli(run, build_parser().parse_args(argv))
