"""Play Connect Four against an agent, or watch two agents: in a window or in the terminal.

    connect4 play                                   # you (X, red) against mcts:1000 in a window
    connect4 play --player0 solver --player1 human  # the solver moves first
    connect4 play --player0 random --player1 mcts:200 --ui terminal --rows 4 --columns 5
    connect4 play --player0 mcts:100 --player1 solver --exit-at-end --screenshot game.png --record games.jsonl

Window (pygame-ce, the render extra): click a column or press 1-9; N new game, U undo, S swap sides, Esc quit.
Under the board, the last agent's view of its move (MCTS playout shares and mean values, solver verdicts).
--ui terminal (the default when there is no display): type column numbers, from 1 as the window's keys; X is the
first mover and O the second on the board and in every message, whichever seat you take; the agent's column is
announced, another game is offered at the end with the running score; stones in colour on a terminal. End of
input (Ctrl-D) quits (exit code 0), leaving the game in progress unfinished and unrecorded.
A solver on 6x7 needs the opening book (the book extra) for its opening moves: without it, play refuses at once.
--record PATH appends every finished game to a records file (see connect4 replay).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any, Literal

from connect4_agents import policy_from_spec
from connect4_agents._support.cli import check_output_file
from connect4_agents._support.config_cli import config_parser, option, run_config
from connect4_agents.evaluation.records import GameLog, write_games
from connect4_agents.solver.agent import SolverAgent
from connect4_agents.ui.play_window import PlayWindow, display_available
from connect4_agents.ui.terminal import TerminalHuman, play_terminal_session
from connect4_env import Board, Rules
from connect4_env.extras import require
from connect4_env.validation import check_number

__all__ = ["PlayConfig", "build_parser", "run", "main"]


@dataclass
class PlayConfig:
    """The options of ``connect4 play``."""

    player0: str = "human"
    """Agent spec of the first player (X, red)."""
    player1: str = "mcts:1000"
    """Agent spec of the second player (O, yellow)."""
    rows: int = 6
    """Board rows."""
    columns: int = 7
    """Board columns."""
    win_length: int = 4
    """Stones in a line to win."""
    seed: int = 0
    """Seed of the first player's agent, where it takes one; the second player's is one more."""
    ui: Literal["window", "terminal"] | None = None
    """``window`` (pygame) or ``terminal``; by default the window where there is a display."""
    record: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Append each finished game to this records file."""
    screenshot: str | None = field(default=None, metadata=option(metavar="PATH"))
    """Window: save it as a PNG picture at the end."""
    exit_at_end: bool = False
    """Window: close it when the game ends."""
    delay: float = 0.5
    """Window: seconds before each agent's move."""
    rules: Rules = field(init=False)
    """The board, from ``rows``, ``columns`` and ``win_length``."""

    def __post_init__(self) -> None:
        """Check the settings: the board, the window's options, the delay.

        Raises:
            ValueError: a bad board or delay, or window-only options with ``--ui terminal``.
        """
        self.rules = Rules(self.rows, self.columns, self.win_length)
        if self.ui == "terminal" and (self.screenshot or self.exit_at_end):
            raise ValueError("--screenshot and --exit-at-end are for the window (--ui window)")
        check_number("--delay", self.delay, 0.0, 60.0)


CONFIG = PlayConfig  # the options (see connect4_agents.commands)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of `PlayConfig`, added to ``parser`` (a subcommand's) or to a new parser; returns it."""
    return config_parser(PlayConfig, __doc__, parser, agent_specs=True)


def run(config: PlayConfig) -> int:
    """One session in the window or in the terminal (as many games as the person plays; agents alone: one).

    Raises:
        ValueError: a bad spec or output path, or a window with no display to show it.
        MissingExtraError: a window without the ``render`` extra, or a 6x7 solver without the ``book`` extra.
    """
    rules = config.rules
    # --screenshot and --exit-at-end are the window's: asking for them picks it, also with no display
    # (pygame then draws off screen), so the README's screenshot command works on a headless machine
    window_only = bool(config.screenshot or config.exit_at_end)
    ui = config.ui or ("window" if window_only or display_available() else "terminal")
    record = check_output_file(config.record) if config.record else None
    screenshot = check_output_file(config.screenshot) if config.screenshot else None
    specs = (config.player0, config.player1)

    def keep(game: GameLog) -> None:
        if record is not None:
            write_games(record, [game], append=True)

    if ui == "window":
        # checked before the agents are built (an AlphaZero model takes a while to load)
        require("pygame", "render", "--ui window", hint="(or use --ui terminal)")
        if not window_only and not display_available():  # the window would wait, unseen, for clicks forever
            raise ValueError(
                "--ui window: there is no display here (no DISPLAY or WAYLAND_DISPLAY, or a headless "
                "SDL_VIDEODRIVER), so nobody could see the window; use --ui terminal, or --screenshot / "
                "--exit-at-end to draw it off screen"
            )
        # None seats are the person's: the window reads their clicks
        players = [
            None if spec == "human" else policy_from_spec(spec, seed=config.seed + seat, rules=rules)
            for seat, spec in enumerate(specs)
        ]
        _check_openings(players, rules)
        window = PlayWindow(players, specs, rules, seed=config.seed, delay=config.delay, on_game_end=keep)
        window.run(exit_at_end=config.exit_at_end, screenshot=screenshot)
        if screenshot is not None:
            print(f"screenshot: {screenshot}")
        return 0
    players = [
        TerminalHuman(seat)
        if spec == "human"
        else policy_from_spec(spec, seed=config.seed + seat, rules=rules)
        for seat, spec in enumerate(specs)
    ]
    _check_openings(players, rules)
    # another game is offered only to a person at a terminal: piped input plays one game, as before
    ask = input if "human" in specs and sys.stdin.isatty() else None
    play_terminal_session(
        players, specs, rules, seed=config.seed, record_search=record is not None, on_game_end=keep, ask=ask
    )
    return 0


def _check_openings(players: list[Any], rules: Rules) -> None:
    """Refuse, before the first move, a solver that could not play the game's opening (a 6x7 game without
    the opening book: see [`SolverAgent.check_book`][connect4_agents.solver.agent.SolverAgent.check_book]).

    Raises:
        MissingExtraError: a solver seat needs the `book` extra, which is not installed.
    """
    for player in players:
        if isinstance(player, SolverAgent):
            player.check_book(Board(rules))


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line) and run; returns the exit code."""
    return run_config(run, PlayConfig, build_parser().parse_args(argv))
