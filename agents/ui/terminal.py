"""One game in the terminal: a person types columns (:class:`~connect4_agents.human.HumanAgent`), or two
agents play and each move is shown; stones in colour where the terminal takes it.

What ``scripts/play.py --ui terminal`` runs (the window is :class:`~connect4_agents.ui.play_window.PlayWindow`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

from connect4_agents.evaluation.arena import play_game
from connect4_agents.evaluation.records import GameLog, game_log
from connect4_env.core import Board, Rules
from connect4_env.render import render_ansi, terminal_has_colour

__all__ = ["play_in_terminal", "outcome_line"]


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
) -> GameLog:
    """Play ``players[0]`` (X, moves first) against ``players[1]`` and print the game to ``stream``.

    When no spec is ``"human"`` every move is printed with the board after it (a person playing sees the
    board from :class:`~connect4_agents.human.HumanAgent` instead); when one is, the final board. Then the
    :func:`outcome_line`.

    Args:
        players: the two agents (a HumanAgent reads a person's columns).
        specs: their specs, first mover first: the record's player names.
        rules: the board.
        seed: the run's seed, kept in the record.
        record_search: keep each agent's search numbers in the record (for game records files).
        stream: where to print (default: standard output at the time of the call).

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

    game = play_game(players, rules, on_move=show, record_search=record_search)
    if not watching:
        print(render_ansi(game.final_board, colour=colour), file=out)
    print(outcome_line(game, rules), file=out)
    return game_log(game, specs, rules, seed=seed, game=0)
