"""A self-contained HTML replay of recorded games: no network, inline CSS, JavaScript and SVG.

A game list, buttons, the arrow keys and a slider to step through the moves; ``#game=G&ply=N`` in the address
(both counted from 0) opens that position; columns are numbered from 1 at the left, under the board and in
every move's text, as in the terminal and the play window (the records keep the 0-based actions); the winning
line is ringed at the end; per move the recorded search numbers and, where the solver can judge the positions
([`can_judge`][connect4_agents.evaluation.verdicts.can_judge]), a verdict computed when the file is made:
``best`` (the move has the best score), ``keeps the result`` (not the best, but the same outcome: still a win,
a draw, a loss) or ``mistake`` (a worse outcome), with the scores in words. A language model's moves (a text
policy's records) show each prompt, answer, parsed column, rejection, time, reasoning and token counts; a
forfeit names who gave up and why, with the answers of the forfeited move.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from connect4_agents._support.files import atomic_write
from connect4_agents.evaluation.records import GameLog
from connect4_agents.evaluation.verdicts import VERDICT_NODES, can_judge, move_verdicts
from connect4_agents.solver.agent import SolverAgent
from connect4_env.rules import Rules

__all__ = ["replay_html", "write_replay"]


def _game_data(game: GameLog, verdicts: list[dict[str, Any] | None] | None) -> dict[str, Any]:
    end = game.board()
    if game.forfeit is not None:
        loser = game.forfeit["player"]
        result_text = (
            f"{'XO'[1 - loser]} ({game.players[1 - loser]}) wins: {'XO'[loser]} ({game.players[loser]}) "
            f"forfeited ({game.forfeit['reason']})."
        )
    elif game.winner is None:
        result_text = "The game is drawn."
    else:
        result_text = f"{'XO'[game.winner]} ({game.players[game.winner]}) wins."
    return {
        "rows": game.rows,
        "columns": game.columns,
        "win_length": game.win_length,
        "players": list(game.players),
        "moves": list(game.moves),
        "result": game.result,
        "result_text": result_text,
        "winning_cells": [list(cell) for cell in end.winning_cells()],
        "search": None if game.search is None else list(game.search),
        "forfeit": game.forfeit,
        "verdicts": verdicts,
    }


def replay_html(
    games: Sequence[GameLog],
    *,
    verdicts: bool = True,
    title: str = "Connect Four replays",
    on_game: Callable[[int], None] | None = None,
) -> str:
    """The replay page of ``games`` as one HTML string. ``verdicts``: judge the moves where `can_judge`
    says the solver can (one solver, its table shared by all games). ``on_game(index)`` after each game.

    Raises:
        TypeError: ``games`` holds something other than `GameLog`.
        ValueError: ``games`` is empty, or holds a game that is not a valid record (see
            `GameLog.from_dict`).
    """
    games = list(games)
    if not games:
        raise ValueError("there are no games to replay")
    for index, game in enumerate(games):
        if not isinstance(game, GameLog):
            raise TypeError(
                f"replay_html shows GameLog objects (connect4_agents.evaluation.records), got {type(game).__name__}"
            )
        try:
            GameLog.from_dict(game.to_dict())
        except ValueError as error:
            raise ValueError(f"game {index}: {error}") from None
    solvers: dict[Rules, SolverAgent] = {}
    data = []
    for index, game in enumerate(games):
        judged = None
        if verdicts and can_judge(game.rules):
            solver = solvers.setdefault(game.rules, SolverAgent(node_budget=VERDICT_NODES))
            judged = move_verdicts(game, solver)
        data.append(_game_data(game, judged))
        if on_game is not None:
            on_game(index)
    payload = json.dumps({"games": data}, separators=(",", ":"))
    # inside <script>, "</script>" would end the block: "<" written as its JSON escape cannot
    payload = payload.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    template = resources.files("connect4_agents").joinpath("data/replay.html").read_text(encoding="utf-8")
    return template.replace("__TITLE__", html.escape(title)).replace("__DATA__", payload)


def write_replay(path: str | os.PathLike[str], games: Sequence[GameLog], **options: Any) -> Path:
    """Write `replay_html` to ``path`` atomically; returns the path."""
    page = replay_html(games, **options).encode("utf-8")
    return atomic_write(path, lambda stream: stream.write(page))
