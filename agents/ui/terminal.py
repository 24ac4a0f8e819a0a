"""Games in the terminal: a person types columns ([`TerminalHuman`][connect4_agents.ui.terminal.TerminalHuman])
and is told the agent's column after each of its moves, or two agents play and each move is shown; stones in
colour where the terminal takes it. A person is offered another game at the end of each, with the running score.

What a person reads and types uses the names of the play window and of `Connect4Text-v0`: ``X`` is the first
mover (red) and ``O`` the second (yellow) on the board, in the announcements and in the score, whichever seat
the person takes; columns are numbered from 1, as the window's keys are. End of input (Ctrl-D) quits.

What ``connect4 play --ui terminal`` runs (the window is
[`PlayWindow`][connect4_agents.ui.play_window.PlayWindow]).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from connect4_agents.base import check_mask_width, legal_columns, unpack
from connect4_agents.evaluation.arena import play_game
from connect4_agents.evaluation.records import GameLog, game_log
from connect4_agents.human import HumanAgent
from connect4_env.core import Board
from connect4_env.render import grid_text, render_ansi, terminal_has_colour
from connect4_env.rules import Rules
from connect4_env.validation import check_int

__all__ = [
    "TerminalHuman",
    "play_in_terminal",
    "play_terminal_session",
    "board_text",
    "outcome_line",
    "Score",
    "LETTERS",
]

LETTERS = "XO"  # the first mover's stones, then the second's
_YES = ("", "y", "yes")  # Enter alone means another game
_NO = ("n", "no", "q", "quit")
_ECHO = 40  # characters of a rejected answer repeated back (a pasted megabyte is not)


def board_text(board: Board, colour: bool = False) -> str:
    """The board as a person at the terminal sees it: ``X`` the first mover's stones, ``O`` the second's, the
    columns numbered from 1 under it (as in every view a person reads: the play window's keys,
    ``env.render()``, the replay, `Connect4Text-v0`), and a status line (``O to move``, ``X wins``,
    ``draw``): [`render_ansi`][connect4_env.render.render_ansi]'s text.

    Args:
        board: the position.
        colour: paint the stones red (``X``) and yellow (``O``) with ANSI escape codes.

    Returns:
        The text, without a final newline.

    Raises:
        TypeError: ``board`` is not a [`Board`][connect4_env.core.Board].
    """
    if not isinstance(board, Board):
        raise TypeError(f"board must be a connect4_env.Board, got {type(board).__name__}")
    return render_ansi(board, colour).removesuffix("\n")


class TerminalHuman(HumanAgent):
    """A person at the terminal playing seat ``seat`` (0 moves first): shows the board with ``X`` for the first
    mover's stones and ``O`` for the second's, and reads a column number from 1 until a legal one is typed.

    Args:
        seat: 0 if the person moves first (``X``), 1 if second (``O``).
        input_fn: reads a line (default ``input``); end of input (``EOFError``, Ctrl-D) ends the game.
        output_fn: prints (default ``print``).
        colour: paint the stones red and yellow with ANSI codes; None (default): when standard output is a
            terminal that takes colours.

    Raises:
        TypeError: ``seat`` is not an integer, ``input_fn`` or ``output_fn`` is not callable, or ``colour``
            is neither a bool nor None.
        ValueError: ``seat`` is an integer other than 0 and 1.
    """

    name = "human"

    def __init__(
        self,
        seat: int,
        *,
        input_fn: Callable[[str], str] = input,
        output_fn: Callable[[str], None] = print,
        colour: bool | None = None,
    ) -> None:
        self.seat = check_int("seat", seat, 0, 1)
        super().__init__(input_fn, output_fn=output_fn, colour=colour)

    def __repr__(self) -> str:
        return f"TerminalHuman({self.seat})"

    def act(self, observation: Any, action_mask: Any = None) -> int:
        """Show the position and read the person's column (typed from 1); returns it from 0.

        Raises:
            TypeError: the mask holds neither numbers nor booleans.
            ValueError: the mask's length is not the board's width, or it holds a value other than 0 and 1.
            NoLegalMoveError: the mask allows no column (a ValueError).
            EOFError: the input ended (Ctrl-D) before a legal column was typed.
        """
        planes, mask = unpack(observation, action_mask)
        planes = np.asarray(planes)
        check_mask_width(mask, planes.shape[1])
        legal = [int(column) + 1 for column in legal_columns(mask)]
        # the planes are the mover's view (plane 0: the stones of the seat to move, this person's)
        mine, theirs = planes[..., 0].astype(bool), planes[..., 1].astype(bool)
        rows, columns, other = planes.shape[0], planes.shape[1], 1 - self.seat
        cells = [
            [self.seat if mine[row, col] else other if theirs[row, col] else None for col in range(columns)]
            for row in range(rows)
        ]
        letter = LETTERS[self.seat]
        goal = f", {self.rules.win_length} in a row wins" if self.rules is not None else ""
        self.output_fn(f"{grid_text(cells, self.colour)}\n(you are {letter}{goal})")
        choices = " ".join(map(str, legal))
        while True:
            text = self.input_fn(f"your move as {letter} [{choices}]: ").strip()
            # ASCII digits only, and no more of them than the widest column number has ("٣" or a pasted
            # thousand digits is not a column)
            if text.isascii() and text.isdigit() and len(text) <= len(str(columns)) and int(text) in legal:
                return int(text) - 1
            self.output_fn(f"{text[:_ECHO]!r} is not a legal column; type one of {choices} (Ctrl-D quits)")


def outcome_line(game: GameLog, rules: Rules) -> str:
    """``"X (player0) wins after 7 moves: 4454647"`` (or ``draw after ...``): the moves as column numbers from
    1, one digit each on boards of at most 9 columns, else as a list.
    """
    outcome = (
        "draw"
        if game.winner is None
        else f"{LETTERS[game.winner]} ({['player0', 'player1'][game.winner]}) wins"
    )
    if game.forfeit is not None:
        loser = game.forfeit["player"]
        outcome += f", {LETTERS[loser]} forfeited ({game.forfeit['reason']}),"
    numbers = [column + 1 for column in game.moves]
    moves = "".join(map(str, numbers)) if rules.columns <= 9 else numbers
    return f"{outcome} after {len(game.moves)} moves: {moves}"


def play_in_terminal(
    players: Sequence[Any],
    specs: Sequence[str],
    rules: Rules,
    *,
    seed: int = 0,
    record_search: bool = False,
    stream: TextIO | None = None,
    index: int = 0,
) -> GameLog:
    """Play ``players[0]`` (``X``, moves first) against ``players[1]`` (``O``) and print the game to ``stream``.

    When no spec is ``"human"`` every move is printed with the board after it (a person playing sees the
    board from their [`TerminalHuman`][connect4_agents.ui.terminal.TerminalHuman] instead, and each agent move
    is announced as ``"O (mcts:1000) plays column 4"``); when one is, the final board. Then the
    [`outcome_line`][connect4_agents.ui.terminal.outcome_line]. Columns are numbered from 1 throughout.

    Args:
        players: the two agents (a person's seat is a TerminalHuman).
        specs: their specs, first mover first: the record's player names.
        rules: the board.
        seed: the run's seed, kept in the record.
        record_search: keep each agent's search numbers in the record (for game records files).
        stream: where to print (default: standard output at the time of the call).
        index: the game's number in the session, kept in the record.

    Returns:
        The game, labelled for a records file (`connect4_agents.evaluation.records.write_games`).

    Raises:
        IllegalMoveError: an agent chose an illegal column.
        ValueError: an agent cannot play ``rules``.
        EOFError: the person's input ended during the game.
    """
    out = sys.stdout if stream is None else stream
    colour = terminal_has_colour(out)
    watching = "human" not in specs

    def show(board: Board, player: int, column: int) -> None:
        if watching:
            print(f"{LETTERS[player]} plays column {column + 1}\n{board_text(board, colour)}", file=out)
        elif specs[player] != "human":  # the person sees the board at their turn, but not which stone is new
            print(f"{LETTERS[player]} ({specs[player]}) plays column {column + 1}", file=out)

    game = play_game(players, rules, on_move=show, record_search=record_search)
    if not watching:
        print(board_text(game.final_board, colour), file=out)
    print(outcome_line(game, rules), file=out)
    return game_log(game, specs, rules, seed=seed, game=index)


@dataclass
class Score:
    """The running score of a session: games won by each seat (first mover first) and draws."""

    wins: list[int]
    draws: int = 0

    def add(self, winner: int | None) -> None:
        """Count one game: ``winner`` is the seat that won (0 or 1), None for a draw."""
        if winner is None:
            self.draws += 1
        else:
            self.wins[winner] += 1

    def line(self, specs: Sequence[str]) -> str:
        """``"score: X (human) 1, O (mcts:1000) 0, draws 0"``."""
        sides = ", ".join(f"{LETTERS[seat]} ({specs[seat]}) {self.wins[seat]}" for seat in (0, 1))
        return f"score: {sides}, draws {self.draws}"


def play_terminal_session(
    players: Sequence[Any],
    specs: Sequence[str],
    rules: Rules,
    *,
    seed: int = 0,
    record_search: bool = False,
    on_game_end: Callable[[GameLog], None] | None = None,
    ask: Callable[[str], str] | None = None,
    stream: TextIO | None = None,
) -> Score:
    """Games of [`play_in_terminal`][connect4_agents.ui.terminal.play_in_terminal] until the person stops:
    after each, the score, then ``ask``.

    End of input (Ctrl-D, or the end of piped input) quits: during a game, the game is left unfinished (not
    counted, not passed to ``on_game_end``), a line says so and the score of the finished games follows; at
    the "Another game?" prompt, the session ends. Either way this returns normally, so the command exits 0.

    Args:
        players: as for [`play_in_terminal`][connect4_agents.ui.terminal.play_in_terminal].
        specs: as for [`play_in_terminal`][connect4_agents.ui.terminal.play_in_terminal].
        rules: as for [`play_in_terminal`][connect4_agents.ui.terminal.play_in_terminal].
        seed: as for [`play_in_terminal`][connect4_agents.ui.terminal.play_in_terminal].
        record_search: as for [`play_in_terminal`][connect4_agents.ui.terminal.play_in_terminal].
        on_game_end: called with each finished game's record (``--record`` appends it to a file).
        ask: reads the answer to "Another game?" (``input`` when a person plays at a terminal); None plays
            one game. Enter or ``y`` plays again, ``n`` or ``q`` stops, end of input stops.
        stream: as for [`play_in_terminal`][connect4_agents.ui.terminal.play_in_terminal].

    Returns:
        The score of the finished games.

    Raises:
        IllegalMoveError: an agent chose an illegal column.
        ValueError: an agent cannot play ``rules``.
    """
    out = sys.stdout if stream is None else stream
    score = Score([0, 0])
    index = 0
    while True:
        try:
            log = play_in_terminal(
                players, specs, rules, seed=seed, record_search=record_search, stream=out, index=index
            )
        except EOFError:  # Ctrl-D at a move: the person quits; the finished games are kept
            print(f"\nend of input (Ctrl-D): quit, game {index + 1} left unfinished", file=out)
            print(score.line(specs), file=out)
            return score
        if on_game_end is not None:
            on_game_end(log)
        score.add(log.winner)
        print(score.line(specs), file=out)
        if ask is None or not _another_game(ask, out):
            return score
        index += 1


def _another_game(ask: Callable[[str], str], out: TextIO) -> bool:
    while True:
        try:
            answer = ask("Another game? [Y/n] ").strip().lower()
        except EOFError:  # Ctrl-D or closed input: the session ends, the games are kept
            print(file=out)
            return False
        if answer in _YES:
            return True
        if answer in _NO:
            return False
        print(f"please answer y or n, not {answer[:_ECHO]!r}", file=out)
