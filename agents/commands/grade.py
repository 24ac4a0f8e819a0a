"""Grade a player by perfect play: its games against an opponent, move by move, and its moves on the test sets.

    connect4 grade mcts:10 --games 10                       # against mcts:100 on 6x7, the six 6x7 sets
    connect4 grade text:mypkg.llm:answer --games 20 --sample 300 --out runs/grade-llm
    connect4 grade random --rows 4 --columns 5 --opponent solver --games 10    # the 4x5 set
    connect4 grade mcts:10 --no-sets --no-plot                # the games only, no picture

Plays the player against the opponent with paired seats (it moves first in half of the games), and judges
every move it made with the exact solver: the share of moves that keep the best outcome (win, draw, loss),
over all judged moves and over the non-trivial positions (where some move loses the outcome), SPIN-Bench's
top-3 share beside it (moves ranked among the 3 best scores, ties sharing a rank), blunders (a win or a draw
given up), and for a text policy the illegal-answer rate (rejected tries over all tries), the
moves its fallback played (left out of every other figure: they are not the player's) and the forfeits per game;
then the share of non-trivial positions of each test set where its move keeps the best outcome. Every figure comes
with its 95 % Wilson interval. Writes, in --out, games.jsonl (the game records, a text policy's prompts and answers
included: connect4 replay shows them, connect4 audit says which the harness decided; each game appended and flushed as it ends, so a killed run keeps the games it
finished), report.json and report.png. Boards the solver cannot judge (6x7 without the book extra, more than 35 cells)
leave the moves unjudged and say so.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from connect4_agents._support.cli import (
    check_output_dir,
    check_outputs_spare_inputs,
    positive_int,
    spec_files,
)
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents.evaluation.arena import MatchResult
from connect4_agents.evaluation.grading import MAX_GAMES, grade_match
from connect4_agents.evaluation.verdicts import SOLVABLE_CELLS
from connect4_env import Rules
from connect4_env.extras import require

__all__ = ["GradeConfig", "build_parser", "run", "main"]


@dataclass
class GradeConfig:
    """The options of ``connect4 grade``."""

    spec: str = field(default="", metadata=option(positional=True))
    """The agent spec to grade: ``mcts:10``, ``text:mypkg.llm:answer``, ``random``, ..."""
    opponent: str = "mcts:100"
    """The agent spec it plays against."""
    games: int = field(default=20, metadata=option(type=positive_int))
    """Games to play, an even number (it moves first in half of them)."""
    rows: int = 6
    """Board rows."""
    columns: int = 7
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    sets: tuple[str, ...] | None = field(
        default=None, metadata=option(metavar="NAME", shown_default="the board's")
    )
    """Test sets to grade it on: ``all``, ``6x7`` (the six 6x7 sets) or set names; the default is the board's
    own (the six 6x7 sets on 6x7, the set named after a smaller board such as ``4x5``, none for a board
    without one)."""
    no_sets: bool = False
    """Grade the games only, on no test set."""
    sample: int | None = field(default=None, metadata=option(type=positive_int, metavar="N"))
    """Grade N test-set positions drawn with ``--seed`` from the sets (default: all of them)."""
    seed: int = 0
    """Seed of the player (the opponent's is one more) and of the test-set positions."""
    workers: int | None = field(default=None, metadata=option(type=positive_int))
    """Worker processes for the test sets (default: one per CPU)."""
    out: str = field(default="runs/grade", metadata=option(metavar="DIR"))
    """The folder of games.jsonl, report.json and report.png."""
    no_plot: bool = False
    """Write no picture (report.png needs the train extra's matplotlib)."""
    no_progress: bool = False
    """No progress bars."""
    rules: Rules = field(init=False)
    """The board, from ``rows``, ``columns`` and ``win_length``."""

    def __post_init__(self) -> None:
        """Check the settings.

        Raises:
            ValueError: an odd or too large ``--games``, ``--sets`` with ``--no-sets``, a negative seed, a bad
                board.
        """
        if self.games > MAX_GAMES or self.games % 2:
            raise ValueError(
                f"--games {self.games}: give an even number of games from 2 to {MAX_GAMES} (the player moves "
                "first in half of them)"
            )
        if self.no_sets and self.sets is not None:
            raise ValueError(f"--sets {' '.join(self.sets)} and --no-sets contradict each other: give one")
        if self.seed < 0:
            raise ValueError(f"--seed {self.seed} must be 0 or more")
        self.rules = Rules(self.rows, self.columns, self.win_length)


CONFIG = GradeConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `GradeConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(GradeConfig, __doc__, parser, agent_specs=True)


def run(config: GradeConfig) -> int:
    """Play, grade, write games.jsonl, report.json and report.png in ``--out``, and print the report.

    Raises:
        ValueError: an unknown spec or set, an unwritable ``--out``.
        TypeError: a spec of the wrong type.
        MissingExtraError: the picture without the ``train`` extra's matplotlib.
    """
    rules = config.rules
    out = check_output_dir(config.out)
    paths = {name: out / name for name in ("games.jsonl", "report.json", "report.png")}
    check_outputs_spare_inputs(
        {"--out games.jsonl": paths["games.jsonl"], "--out report.json": paths["report.json"]},
        spec_files([config.spec, config.opponent]),
    )
    if not config.no_plot:  # checked before any game is played, so none is lost to a missing extra
        require("matplotlib", "train", "the report's picture (or pass --no-plot)")

    def show_games(result: MatchResult) -> None:
        print(result.table(config.spec, config.opponent), flush=True)

    report = grade_match(
        config.spec,
        config.opponent,
        games=config.games,
        rules=rules,
        sets=() if config.no_sets else config.sets,
        sample=config.sample,
        seed=config.seed,
        workers=config.workers,
        progress=not config.no_progress,
        games_out=paths["games.jsonl"],
        on_games=show_games,
    )
    report.write(paths["report.json"])
    written = [paths["games.jsonl"], paths["report.json"]]
    if not config.no_plot:
        written.append(report.plot(paths["report.png"]))
    print("\n" + report.table())
    if report.games.moves and report.games.unjudged == report.games.moves:
        print(
            f"no move was judged: the solver judges 6x7 with the book extra and boards of at most "
            f"{SOLVABLE_CELLS} cells, not {rules.rows}x{rules.columns}"
        )
    print("wrote " + ", ".join(str(path) for path in written))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, GradeConfig, build_parser().parse_args(argv))
