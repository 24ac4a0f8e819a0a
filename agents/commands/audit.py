"""Say which recorded games the harness decided rather than play: forfeits, rejected answers, fallback moves.

    connect4 grade text:mypkg.llm:answer --games 20 --out runs/grade-llm
    connect4 audit runs/grade-llm/games.jsonl
    connect4 audit a.jsonl b.jsonl.gz --json audit.json    # the counts and every flagged game as JSON
    connect4 audit runs/grade-llm/games.jsonl --json -     # JSON on standard output instead of the table

Reads game records (connect4 grade's games.jsonl, connect4 tournament --games-out, connect4 play --record) and
counts, per player (its agent spec: for a text policy, the model) and dialect, the games it forfeited (the
harness ended them), those with moves its fallback played (not the model's), those with rejected answers
(the model answered again), and the clean ones; then lists the games the harness touched.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from connect4_agents._support.cli import check_output_file, check_outputs_spare_inputs, positive_int
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents._support.files import atomic_write_json
from connect4_agents.evaluation.audit import audit_games
from connect4_agents.evaluation.records import GameLog, read_games

__all__ = ["AuditConfig", "build_parser", "run", "main"]


@dataclass
class AuditConfig:
    """The options of ``connect4 audit``."""

    records: tuple[str, ...] = field(default=(), metadata=option(positional=True))
    """Game records files (JSON lines, ``.gz`` allowed)."""
    json: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Write the audit here as JSON (``-``: on standard output, instead of the table)."""
    listed: int = field(default=20, metadata=option(type=positive_int, metavar="N"))
    """Games the table lists by name (the JSON lists them all)."""

    def __post_init__(self) -> None:
        """Check the settings.

        Raises:
            ValueError: no records file given.
        """
        if not self.records:
            raise ValueError("give at least one game records file")


CONFIG = AuditConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `AuditConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(AuditConfig, __doc__, parser)


def run(config: AuditConfig) -> int:
    """Read the records, audit them and print the table (or the JSON).

    Raises:
        FileNotFoundError: a records file is missing.
        IsADirectoryError: a records path is a folder (the message names its games.jsonl when it holds one).
        ValueError: a malformed records file, or one without games.
        OSError: an unreadable records file or an unwritable ``--json``.
    """
    out = None if config.json in (None, "-") else check_output_file(config.json)
    if out is not None:
        check_outputs_spare_inputs({"--json": out}, config.records)
    games: list[GameLog] = []
    labels: list[str] = []
    for path in config.records:
        if Path(path).is_dir():
            inside = Path(path) / "games.jsonl"
            hint = f": did you mean {inside}?" if inside.is_file() else " (give the records file in it)"
            raise IsADirectoryError(f"{path} is a folder, not a game records file{hint}")
        if not Path(path).is_file():
            raise FileNotFoundError(
                f"no game records file at {path} (connect4 grade --out DIR writes DIR/games.jsonl; "
                "connect4 tournament ... --games-out PATH and connect4 play --record PATH write one)"
            )
        read = read_games(path)
        if not read:
            raise ValueError(f"{path} holds no game records")
        games += read
        labels += [f"{path} #{index}" for index in range(len(read))]
    audit = audit_games(games, labels)
    if config.json == "-":
        json.dump(audit.to_dict(), sys.stdout, indent=1)
        print()
        return 0
    print(audit.table(config.listed))
    if out is not None:
        atomic_write_json(out, audit.to_dict())
        print(f"wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, AuditConfig, build_parser().parse_args(argv))
