"""Games in the terminal: a person types columns (:class:`~connect4_agents.human.HumanAgent`) and is told the
agent's column after each of its moves, or two agents play and each move is shown; stones in colour where the
terminal takes it. A person is offered another game at the end of each, with the running score.

What ``scripts/play.py --ui terminal`` runs (the window is :class:`~connect4_agents.ui.play_window.PlayWindow`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from connect4_agents.evaluation.arena import play_game
from connect4_agents.evaluation.records import GameLog, game_log
from connect4_env.core import Board, Rules
from connect4_env.render import render_ansi, terminal_has_colour

__all__ = ["play_in_terminal", "play_terminal_session", "outcome_line", "Score"]

_YES = ("", "y", "yes")  # Enter alone means another game
_NO = ("n", "no", "q", "quit")


def outcome_line(game: GameLog, rules: Rules) -> str:
    """``"X (player0) wins after 7 moves: 3343536"`` (or ``draw after ...``); the moves as one string of
    digits on boards of at most 10 columns, else as a list."""
    outcome = (
        "draw" if game.winner is None else f"{'XO'[game.winner]} ({['player0', 'player1'][game.winner]}) wins"
    )
    moves = "".join(str(c) for c in game.moves) if rules.columns <= 10 else game.moves
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
    """Play ``players[0]`` (X, moves first) against ``players[1]`` and print the game to ``stream``.

    When no spec is ``"human"`` every move is printed with the board after it (a person playing sees the
    board from :class:`~connect4_agents.human.HumanAgent` instead, and each agent move is announced as
    ``"O (mcts:1000) plays column 4"``); when one is, the final board. Then the :func:`outcome_line`.

    Args:
        players: the two agents (a HumanAgent reads a person's columns).
        specs: their specs, first mover first: the record's player names.
        rules: the board.
        seed: the run's seed, kept in the record.
        record_search: keep each agent's search numbers in the record (for game records files).
        stream: where to print (default: standard output at the time of the call).
        index: the game's number in the session, kept in the record.

    Returns:
        The game, labelled for a records file (:func:`~connect4_agents.evaluation.records.write_games`).

    Raises:
        IllegalMoveError: an agent chose an illegal column. ValueError: an agent cannot play ``rules``.
        EOFError: the person's input was closed.
    """
    out = sys.stdout if stream is None else stream
    colour = terminal_has_colour(out)
    watching = "human" not in specs

    def show(board: Board, player: int, column: int) -> None:
        if watching:
            print(f"{'XO'[player]} plays column {column}\n{render_ansi(board, colour=colour)}", file=out)
        elif specs[player] != "human":  # the person sees the board at their turn, but not which stone is new
            print(f"{'XO'[player]} ({specs[player]}) plays column {column}", file=out)

    game = play_game(players, rules, on_move=show, record_search=record_search)
    if not watching:
        print(render_ansi(game.final_board, colour=colour), file=out)
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
        sides = ", ".join(f"{'XO'[seat]} ({specs[seat]}) {self.wins[seat]}" for seat in (0, 1))
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
    """Games of :func:`play_in_terminal` until the person stops: after each, the score, then ``ask``.

    Args:
        players, specs, rules, seed, record_search, stream: as for :func:`play_in_terminal`.
        on_game_end: called with each finished game's record (``--record`` appends it to a file).
        ask: reads the answer to "Another game?" (``input`` when a person plays at a terminal); None plays
            one game. Enter or ``y`` plays again, ``n`` or ``q`` stops, end of input (Ctrl-D) stops.

    Returns:
        The score of the games played.

    Raises:
        As :func:`play_in_terminal` (EOFError when the person's input closes during a game).
    """
    out = sys.stdout if stream is None else stream
    score = Score([0, 0])
    index = 0
    while True:
        log = play_in_terminal(
            players, specs, rules, seed=seed, record_search=record_search, stream=out, index=index
        )
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
        print(f"please answer y or n, not {answer!r}", file=out)
